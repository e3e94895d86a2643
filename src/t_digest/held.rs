//! What a TDIGEST.* key holds, found with one lookup: a plain digest (`TDIS-TYPE`) or a
//! windowed one (`rbTDIGwnd`, [`super::window`]). Each handler matches on it once; a key of
//! any other type answers WRONGTYPE.

use super::error::TDigestError;
use crate::shared::call::Call;
use crate::shared::clock::{decides, now_ms};
use crate::shared::error::CommandError;
use crate::shared::keyspace::{Either, Key};
use redbloom_core::t_digest::{TDigest, WindowContents, WindowTDigest};

#[derive(Clone, Copy)]
pub enum Held<'a> {
    Plain(&'a TDigest),
    Windowed(&'a WindowTDigest),
}

pub enum HeldMut<'a> {
    Plain(&'a mut TDigest),
    Windowed(&'a mut WindowTDigest),
}

/// The digest in the key, `None` for a missing key.
pub fn held(key: &Key) -> Result<Option<Held<'_>>, CommandError> {
    Ok(key.get_either::<TDigest, WindowTDigest>()?.map(|value| match value {
        Either::First(digest) => Held::Plain(digest),
        Either::Second(digest) => Held::Windowed(digest),
    }))
}

pub fn held_mut(key: &mut Key) -> Result<Option<HeldMut<'_>>, CommandError> {
    Ok(key.get_either_mut::<TDigest, WindowTDigest>()?.map(|value| match value {
        Either::First(digest) => HeldMut::Plain(digest),
        Either::Second(digest) => HeldMut::Windowed(digest),
    }))
}

/// The time a read of a windowed digest counts from: a master's clock (skipping generations
/// expired since the last rotation), or none on a replica and in a replay, which read what
/// their master's rotations left.
pub fn read_time(call: &Call) -> Option<u64> {
    decides(call).then(now_ms)
}

/// The digest a read answers from: a plain digest itself, or a windowed one's window, of the
/// generations alive at `now_ms` (see [`read_time`]; `None`: every generation held).
pub fn read(held: Held<'_>, now_ms: Option<u64>) -> Result<WindowContents<'_>, CommandError> {
    match held {
        Held::Plain(digest) => Ok(WindowContents::Kept(digest)),
        Held::Windowed(digest) => digest.contents(now_ms).map_err(|_| TDigestError::AllocationFailed.into()),
    }
}
