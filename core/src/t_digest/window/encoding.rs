//! The RDB record of `rbTDIGwnd`, the windowed t-digest, encoding version 0 (this module's
//! own: RedisBloom has no windows, and refuses the type's name rather than misread it):
//!
//! ```text
//! compression (unsigned)
//! the generations (`window::Generations::save`): window ms | generations | current span
//!   start ms | generation count, then per generation, oldest first: start ms | its digest,
//!   as the t-digest's own record (`TDIS-TYPE`'s, every node as a centroid)
//! ```
//!
//! Times are absolute, so a digest loaded after a downtime longer than its window forgets, at
//! its first rotation, what expired meanwhile. Every field is checked before it is trusted:
//! the window's (by `Generations::load`), each generation's digest (by the t-digest's own
//! load, within what is left of the budget, of the window's compression), the window's
//! observations within `i64`, and `g + 1` full generations within the budget, as at creation.

use super::{checked_capacity, WindowTDigest};
use crate::decode::{DecodeError, Persistent, RdbSink, RdbSource};
use crate::t_digest::digest::{SizeError, TDigest};
use crate::window::Generations;

impl Persistent for WindowTDigest {
    const ENCODING_VERSION: i32 = 0;

    fn load_rdb(
        encoding_version: i32,
        source: &mut impl RdbSource,
        max_bytes: usize,
    ) -> Result<Self, DecodeError> {
        if encoding_version != Self::ENCODING_VERSION {
            return Err(DecodeError::Malformed("an encoding version this module never wrote"));
        }
        let compression = source.unsigned()?;
        let mut budget = max_bytes;
        let generations = Generations::load(source, |source| {
            let digest = TDigest::load_rdb(TDigest::ENCODING_VERSION, source, budget)?;
            if digest.compression() != compression {
                return Err(DecodeError::Malformed("a generation of another compression than the window's"));
            }
            budget = budget.saturating_sub(digest.node_bytes());
            Ok(digest)
        })?;
        checked_capacity(compression, generations.schedule(), max_bytes).map_err(|error| match error {
            SizeError::Invalid => DecodeError::Malformed("a compression of 0"),
            SizeError::TooLarge => DecodeError::TooLarge,
            SizeError::OutOfMemory => DecodeError::OutOfMemory,
        })?;
        if WindowTDigest::total_observations(&generations).is_none() {
            return Err(DecodeError::Malformed("more observations in the window than a 64-bit count holds"));
        }
        Ok(WindowTDigest::from_generations(compression, generations))
    }

    fn save_rdb(&self, sink: &mut impl RdbSink) {
        sink.unsigned(self.compression);
        self.generations.save(sink, Persistent::save_rdb);
    }

    fn memory_bytes(&self) -> usize {
        WindowTDigest::memory_bytes(self)
    }

    fn try_clone(&self) -> Option<Self> {
        self.try_copy()
    }
}
