//! What a TDIGEST.* key holds: a plain digest (`TDIS-TYPE`) or a windowed one (`rbTDIGwnd`,
//! [`super::window`]), found with one lookup (`window::held`); and what a read answers from.

use super::error::TDigestError;
use crate::shared::error::CommandError;
use crate::shared::keyspace::Key;
use crate::window::held as either;
use redbloom_core::t_digest::{TDigest, WindowContents, WindowTDigest};

pub type Held<'a> = either::Held<&'a TDigest, &'a WindowTDigest>;
pub type HeldMut<'a> = either::Held<&'a mut TDigest, &'a mut WindowTDigest>;

pub fn held(key: &Key) -> Result<Option<Held<'_>>, CommandError> {
    either::held(key)
}

pub fn held_mut(key: &mut Key) -> Result<Option<HeldMut<'_>>, CommandError> {
    either::held_mut(key)
}

/// The digest a read answers from: a plain digest itself, or a windowed one's window, of the
/// generations alive at `now_ms` (`window::rotation::read_time`; `None`: every generation held).
pub fn read(held: Held<'_>, now_ms: Option<u64>) -> Result<WindowContents<'_>, CommandError> {
    match held {
        Held::Plain(digest) => Ok(WindowContents::plain(digest)),
        Held::Windowed(digest) => digest.contents(now_ms).map_err(|_| TDigestError::AllocationFailed.into()),
    }
}
