//! The RDB record of `CMSk-TYPE`, RedisBloom's: width, depth and total count as unsigned
//! values, then the counters as one string, row after row, 32 bits little-endian each. This
//! is encoding version 0, the only one RedisBloom wrote up to 2.8 and the one this saves.
//!
//! Redis 8.12's RedisBloom added version 1 (a cell size of 1, 2, 4 or 8 bytes after the
//! count, the string holding counters of that size) and then version 2 (a hash
//! configuration, a version and a seed, after the string). Both load here when their
//! counters fit in 32 bits and their hash is the legacy one (version and seed 0), which is
//! all a sketch here can answer for; they are saved back as version 0.
//!
//! RedisBloom 2.8 checks nothing of what it loads; this checks everything before it
//! allocates: non-zero dimensions, the counters' bytes within the budget, then the string's
//! length against them.

use super::sketch::{bytes_for, CountMinSketch, COUNTER_BYTES};
use crate::bytes::ByteArray;
use crate::decode::{DecodeError, Persistent, RdbSink, RdbSource};

/// Version 1 (Redis 8.12) added the cell size.
const CELL_SIZE_VERSION: i32 = 1;
/// Version 2 added the hash configuration.
const HASH_CONFIG_VERSION: i32 = 2;

impl Persistent for CountMinSketch {
    const ENCODING_VERSION: i32 = 0;

    fn load_rdb(
        encoding_version: i32,
        source: &mut impl RdbSource,
        max_bytes: usize,
    ) -> Result<Self, DecodeError> {
        if !(0..=HASH_CONFIG_VERSION).contains(&encoding_version) {
            return Err(DecodeError::Malformed("an encoding version RedisBloom never wrote"));
        }
        let width = source.unsigned()?;
        let depth = source.unsigned()?;
        let count = source.unsigned()?;
        let cell_size = if encoding_version >= CELL_SIZE_VERSION { source.unsigned()? } else { 4 };
        let cell_size = match cell_size {
            1 | 2 | 4 | 8 => cell_size as usize,
            _ => return Err(DecodeError::Malformed("a cell size other than 1, 2, 4 or 8 bytes")),
        };
        if width == 0 || depth == 0 {
            return Err(DecodeError::Malformed("a sketch without counters"));
        }
        let stored_bytes = bytes_for(width, depth, cell_size)
            .ok_or(DecodeError::Malformed("more counters than memory holds"))?;
        let kept_bytes = bytes_for(width, depth, COUNTER_BYTES)
            .ok_or(DecodeError::Malformed("more counters than memory holds"))?;
        if stored_bytes.max(kept_bytes) > max_bytes {
            return Err(DecodeError::TooLarge);
        }
        let stored = source.bytes()?;
        if stored.len() != stored_bytes {
            return Err(DecodeError::Malformed("counters of another length than width * depth"));
        }
        let counters =
            if cell_size == COUNTER_BYTES { stored } else { widen(&stored, cell_size, kept_bytes)? };
        if encoding_version >= HASH_CONFIG_VERSION {
            let (hash_version, seed) = (source.unsigned()?, source.unsigned()?);
            if (hash_version, seed) != (0, 0) {
                return Err(DecodeError::Malformed("a seeded hash, which this module does not compute"));
            }
        }
        Ok(CountMinSketch::from_parts(width as usize, depth as usize, count, counters))
    }

    fn save_rdb(&self, sink: &mut impl RdbSink) {
        sink.unsigned(self.width());
        sink.unsigned(self.depth());
        sink.unsigned(self.count());
        sink.bytes(self.counter_bytes());
    }

    fn memory_bytes(&self) -> usize {
        CountMinSketch::memory_bytes(self)
    }

    fn try_clone(&self) -> Option<Self> {
        CountMinSketch::try_clone(self)
    }
}

/// Counters of `cell_size` bytes (1, 2 or 8) as 32-bit ones, in an array of `kept_bytes`;
/// refused when one is beyond 32 bits.
fn widen(stored: &ByteArray, cell_size: usize, kept_bytes: usize) -> Result<ByteArray, DecodeError> {
    let mut kept = ByteArray::try_zeroed(kept_bytes as u64).map_err(|_| DecodeError::OutOfMemory)?;
    for (from, to) in
        stored.as_slice().chunks_exact(cell_size).zip(kept.as_mut_slice().chunks_exact_mut(COUNTER_BYTES))
    {
        let mut wide = [0; 8];
        wide[..cell_size].copy_from_slice(from);
        let counter = u32::try_from(u64::from_le_bytes(wide))
            .map_err(|_| DecodeError::Malformed("a counter beyond 32 bits, which this module cannot hold"))?;
        to.copy_from_slice(&counter.to_le_bytes());
    }
    Ok(kept)
}
