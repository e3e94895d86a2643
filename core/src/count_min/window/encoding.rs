//! The RDB record of `rbCMSwind`, this module's own (RedisBloom has no windowed sketch):
//!
//! ```text
//! the running total, as a plain sketch's record of version 1:
//!     width | depth | total count | cell size | counters
//! the generations (crate::window::Generations::save):
//!     window ms | generations | current span start ms | generation count
//!     then per generation, oldest first: start ms | kind
//!         kind 0: the open generation, whose counts the total holds
//!         kind 1: a closed one, then its counts as a plain sketch's record of version 1
//! ```
//!
//! Times are absolute, so a sketch loaded after a downtime longer than its window forgets, at
//! its first rotation, what expired meanwhile. The open generation's reserved buffer is not
//! saved: whether it is needed follows from the rest, and the load allocates it then.
//!
//! Decoding trusts nothing: each sketch is read with the plain record's checks and held to
//! what is left of the memory budget before its counters are read; every generation must
//! have the total's shape; only the current span's generation may be open, and every older
//! one is closed; the sketches the schedule may come to hold must fit the budget; the total
//! must be at least the sum of the closed generations in every counter and in its count, and
//! equal to it when no generation is open.

use super::cells::compare_with_sum;
use super::sketch::{fits, Generation, WindowedCountMin};
use crate::count_min::CountMinSketch;
use crate::decode::{DecodeError, Persistent, RdbSink, RdbSource};
use crate::window::Generations;

/// The plain record's version that holds the cell size, which every sketch here is saved in.
const SKETCH_VERSION: i32 = 1;
const OPEN: u64 = 0;
const COUNTED: u64 = 1;

impl Persistent for WindowedCountMin {
    const ENCODING_VERSION: i32 = 1;

    fn load_rdb(
        encoding_version: i32,
        source: &mut impl RdbSource,
        max_bytes: usize,
    ) -> Result<WindowedCountMin, DecodeError> {
        if encoding_version != Self::ENCODING_VERSION {
            return Err(DecodeError::Malformed("unknown encoding version"));
        }
        let total = CountMinSketch::load_rdb(SKETCH_VERSION, source, max_bytes)?;
        let mut left = max_bytes.saturating_sub(total.memory_bytes());
        let generations = Generations::load(source, |source| match source.unsigned()? {
            OPEN => Ok(Generation::Open(None)),
            COUNTED => {
                let counts = CountMinSketch::load_rdb(SKETCH_VERSION, source, left)?;
                if !counts.same_dimensions(&total) || counts.cell_size() != total.cell_size() {
                    return Err(DecodeError::Malformed("a generation of another shape than the total"));
                }
                left = left.saturating_sub(counts.memory_bytes());
                Ok(Generation::Counted(counts))
            }
            _ => Err(DecodeError::Malformed("a generation of an unknown kind")),
        })?;
        if !fits(&total, generations.schedule(), max_bytes) {
            return Err(DecodeError::TooLarge);
        }
        if generations.older().iter().any(|generation| generation.value.counted().is_none())
            || generations.current().is_some_and(|current| current.value.counted().is_some())
        {
            return Err(DecodeError::Malformed("a closed generation open, or the current one closed"));
        }
        let counted: Vec<&CountMinSketch> =
            generations.older().iter().filter_map(|generation| generation.value.counted()).collect();
        match compare_with_sum(&total, &counted) {
            None => return Err(DecodeError::Malformed("a total below the sum of its generations")),
            Some(false) if generations.current().is_none() => {
                return Err(DecodeError::Malformed("a total above its generations, none of them open"))
            }
            Some(_) => {}
        }
        drop(counted);
        let mut loaded = WindowedCountMin { total, generations };
        if loaded.reserve_needed() {
            let reserve = loaded.total.try_empty_like().ok_or(DecodeError::OutOfMemory)?;
            if let Some(current) = loaded.generations.current_mut() {
                current.value = Generation::Open(Some(reserve));
            }
        }
        Ok(loaded)
    }

    fn save_rdb(&self, sink: &mut impl RdbSink) {
        self.total.save_with_cell_size(sink);
        self.generations.save(sink, |generation, sink| match generation {
            Generation::Open(_) => sink.unsigned(OPEN),
            Generation::Counted(counts) => {
                sink.unsigned(COUNTED);
                counts.save_with_cell_size(sink);
            }
        });
    }

    fn memory_bytes(&self) -> usize {
        WindowedCountMin::memory_bytes(self)
    }

    fn try_clone(&self) -> Option<WindowedCountMin> {
        WindowedCountMin::try_clone(self)
    }
}
