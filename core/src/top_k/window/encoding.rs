//! The windowed sketch's RDB record (see the module documentation for its layout): checked
//! field by field, each generation's buckets held to what is left of the budget before they
//! are read.

use super::super::buckets::{fingerprint, Buckets};
use super::super::decay::{Decay, Rng};
use super::super::encoding::{load_shape, save_shape, Kept};
use super::super::heap::Heap;
use super::super::sketch::list_bytes;
use super::sketch::{fits, generation_bytes, Generation, WindowTopK};
use crate::decode::{DecodeError, Persistent, RdbSink, RdbSource};
use crate::window::Generations;
use std::collections::HashSet;

/// The first version's record: the list alone beside the generations' buckets.
const FIRST_VERSION: i32 = 1;
/// The second version's record: the list and its candidates (k more slots, which a load reads
/// and drops) beside the generations' buckets. Generations of either load with empty lists of
/// their own: until their spans expire, a rotation lists again only what the window's list
/// holds.
const CANDIDATES_VERSION: i32 = 2;

/// What adds and rotations keep and lookups rely on: each slot's fingerprint and length its
/// item's, and no item twice in one list. A record holding otherwise would let a later add
/// list an item twice, and its next save be one that no load takes back.
fn check_heap(heap: &Heap) -> Result<(), DecodeError> {
    if !heap.slots_match_items(fingerprint) {
        return Err(DecodeError::Malformed("a slot whose fields are not its item's"));
    }
    let mut seen = HashSet::new();
    seen.try_reserve(heap.k()).map_err(|_| DecodeError::OutOfMemory)?;
    for item in (0..heap.k()).filter_map(|slot| heap.item(slot)) {
        if !seen.insert(item) {
            return Err(DecodeError::Malformed("an item held twice"));
        }
    }
    Ok(())
}

impl Persistent for WindowTopK {
    const ENCODING_VERSION: i32 = 3;

    fn load_rdb(
        encoding_version: i32,
        source: &mut impl RdbSource,
        max_bytes: usize,
    ) -> Result<WindowTopK, DecodeError> {
        if !(FIRST_VERSION..=Self::ENCODING_VERSION).contains(&encoding_version) {
            return Err(DecodeError::Malformed("unknown encoding version"));
        }
        let shape = load_shape(source)?;
        let seed = source.unsigned()?;
        let k = u64::from(shape.k());
        let mut used = list_bytes(k).ok_or(DecodeError::TooLarge)?;
        if used > max_bytes as u64 {
            return Err(DecodeError::TooLarge);
        }
        let list = Heap::load(source, k, Kept::Spare, &mut used, max_bytes)?;
        check_heap(&list)?;
        if encoding_version == CANDIDATES_VERSION {
            used = used.saturating_add(list_bytes(k).ok_or(DecodeError::TooLarge)?);
            if used > max_bytes as u64 {
                return Err(DecodeError::TooLarge);
            }
            check_heap(&Heap::load(source, k, Kept::Spare, &mut used, max_bytes)?)?;
        }
        let generation_bytes = generation_bytes(&shape).ok_or(DecodeError::TooLarge)?;
        let generations = Generations::load(source, |source| {
            used = used.saturating_add(generation_bytes);
            if used > max_bytes as u64 {
                return Err(DecodeError::TooLarge);
            }
            let rng = Rng(source.unsigned()?);
            let buckets = Buckets::load(source, &shape)?;
            let heap = if encoding_version == Self::ENCODING_VERSION {
                let heap = Heap::load(source, k, Kept::Nothing, &mut used, max_bytes)?;
                check_heap(&heap)?;
                heap
            } else {
                Heap::try_new(k, 0).map_err(|_| DecodeError::OutOfMemory)?
            };
            Ok(Generation { rng, buckets, heap })
        })?;
        // Held to what a creation is: its later adds open generations of this shape.
        if !fits(&shape, generations.schedule(), max_bytes) {
            return Err(DecodeError::TooLarge);
        }
        Ok(WindowTopK { shape, powers: Decay::new(shape.decay()), seed, list, generations })
    }

    fn save_rdb(&self, sink: &mut impl RdbSink) {
        save_shape(sink, &self.shape);
        sink.unsigned(self.seed);
        self.list.save(sink);
        self.generations.save(sink, |generation, sink| {
            sink.unsigned(generation.rng.0);
            sink.bytes(generation.buckets.0.as_slice());
            generation.heap.save(sink);
        });
    }

    fn memory_bytes(&self) -> usize {
        WindowTopK::memory_bytes(self)
    }

    fn try_clone(&self) -> Option<WindowTopK> {
        WindowTopK::try_clone(self)
    }
}
