//! The RDB record of `CMSk-TYPE`, RedisBloom's: width, depth and total count as unsigned
//! values, then the counters as one string, row after row, little-endian. Encoding version 0
//! (every RedisBloom up to 2.8) has 4-byte counters; version 1 (Redis 8.12's RedisBloom, which
//! registers it) adds the cell size, 1, 2, 4 or 8, after the count, the string holding
//! counters of that size.
//!
//! Redis stamps the version a type registers on every value it saves, in the RDB and in DUMP
//! payloads alike, and passes a loader the version it finds. This module registers version 0,
//! so that an RDB of sketches of 4-byte cells (every sketch RedisBloom before 8.12 made, and
//! the default) goes back to every RedisBloom. A sketch of another cell size has no version 0
//! form: its record is the mark of one (width, depth and count 0 and no counters) followed by
//! its version 1 fields. Every RedisBloom refuses it rather than misreading it: its loader of
//! version 0 reads the mark's four fields (or refuses a sketch without counters), and Redis
//! then finds the rest where the value's end should be. The AOF rewrite builds its RESTORE
//! payloads itself, with the version of each: 0 for 4-byte cells, 1 (8.12's) for the others.
//!
//! A later version 2 (a hash configuration, a version and a seed, after the string: a pull
//! request to RedisBloom, not in 8.12) loads too, when its hash is the legacy one (version and
//! seed 0), the only one a sketch here computes.
//!
//! RedisBloom 2.8 checks nothing of what it loads; this checks everything before it
//! allocates: non-zero dimensions, the cell size, a total within `i64::MAX`, the counters'
//! bytes within the budget, then the string's length against them; and after, as RedisBloom
//! 8.12 does, that no 8-byte counter is past `i64::MAX` (narrower ones cannot be past their
//! maximum).

use super::cell::{Cell, CellSize};
use super::sketch::{bytes_for, CountMinSketch};
use crate::decode::{DecodeError, Persistent, RdbSink, RdbSource};

/// Version 1 (Redis 8.12) added the cell size.
const CELL_SIZE_VERSION: i32 = 1;
/// Version 2 added the hash configuration.
const HASH_CONFIG_VERSION: i32 = 2;
/// Width, depth and count of a version 0 record that holds a sketch of another cell size
/// (its version 1 fields follow an empty counters string): no sketch has a zero dimension.
const OTHER_CELL_SIZE_MARK: [u64; 3] = [0, 0, 0];

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
        let head = [source.unsigned()?, source.unsigned()?, source.unsigned()?];
        if encoding_version == 0 && head == OTHER_CELL_SIZE_MARK {
            if !source.bytes()?.is_empty() {
                return Err(DecodeError::Malformed("counters after the mark of another cell size"));
            }
            let head = [source.unsigned()?, source.unsigned()?, source.unsigned()?];
            return CountMinSketch::load_fields(CELL_SIZE_VERSION, head, source, max_bytes);
        }
        CountMinSketch::load_fields(encoding_version, head, source, max_bytes)
    }

    /// Version 0, which every RedisBloom reads, for 4-byte cells; for others, the mark of
    /// another cell size and version 1's fields, which no RedisBloom misreads.
    fn save_rdb(&self, sink: &mut impl RdbSink) {
        if self.cell_size() != CellSize::DEFAULT {
            for field in OTHER_CELL_SIZE_MARK {
                sink.unsigned(field);
            }
            sink.bytes(&[]);
        }
        self.save_fields(sink, self.cell_size() != CellSize::DEFAULT);
    }

    fn save_portable(&self, sink: &mut impl RdbSink) -> i32 {
        let with_cell_size = self.cell_size() != CellSize::DEFAULT;
        self.save_fields(sink, with_cell_size);
        if with_cell_size {
            CELL_SIZE_VERSION
        } else {
            0
        }
    }

    fn memory_bytes(&self) -> usize {
        CountMinSketch::memory_bytes(self)
    }

    fn try_clone(&self) -> Option<Self> {
        CountMinSketch::try_clone(self)
    }
}

impl CountMinSketch {
    /// The record of version 1, or of version 0 (no cell size) when `with_cell_size` is off.
    fn save_fields(&self, sink: &mut impl RdbSink, with_cell_size: bool) {
        sink.unsigned(self.width());
        sink.unsigned(self.depth());
        sink.unsigned(self.count());
        if with_cell_size {
            sink.unsigned(self.cell_size().bytes() as u64);
        }
        sink.bytes(self.counter_bytes());
    }

    /// Version 1's record, which a windowed sketch's holds for its total and generations.
    pub(super) fn save_with_cell_size(&self, sink: &mut impl RdbSink) {
        self.save_fields(sink, true);
    }

    /// The rest of a record of `encoding_version` whose width, depth and count are `head`.
    fn load_fields(
        encoding_version: i32,
        [width, depth, count]: [u64; 3],
        source: &mut impl RdbSource,
        max_bytes: usize,
    ) -> Result<CountMinSketch, DecodeError> {
        let cell_size = if encoding_version >= CELL_SIZE_VERSION {
            CellSize::from_bytes(source.unsigned()?)
                .ok_or(DecodeError::Malformed("a cell size other than 1, 2, 4 or 8 bytes"))?
        } else {
            CellSize::DEFAULT
        };
        if width == 0 || depth == 0 {
            return Err(DecodeError::Malformed("a sketch without counters"));
        }
        if count > i64::MAX as u64 {
            return Err(DecodeError::Malformed("a total count past i64::MAX, which no increment makes"));
        }
        let bytes = bytes_for(width, depth, cell_size)
            .ok_or(DecodeError::Malformed("more counters than memory holds"))?;
        if bytes > max_bytes {
            return Err(DecodeError::TooLarge);
        }
        let counters = source.bytes()?;
        if counters.len() != bytes {
            return Err(DecodeError::Malformed("counters of another length than width * depth cells"));
        }
        if cell_size == CellSize::Eight
            && (0..counters.len() / 8)
                .any(|cell| <u64 as Cell>::get(counters.as_slice(), cell) > <u64 as Cell>::MAX)
        {
            return Err(DecodeError::Malformed("an 8-byte counter past i64::MAX, which no increment makes"));
        }
        if encoding_version >= HASH_CONFIG_VERSION {
            let (hash_version, seed) = (source.unsigned()?, source.unsigned()?);
            if (hash_version, seed) != (0, 0) {
                return Err(DecodeError::Malformed("a seeded hash, which this module does not compute"));
            }
        }
        Ok(CountMinSketch::from_parts(width as usize, depth as usize, cell_size, count, counters))
    }
}
