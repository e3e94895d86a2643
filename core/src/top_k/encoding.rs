//! The RDB record of `TopK-TYPE`, RedisBloom's only encoding (version 0, the same in every
//! release): k, width and depth (unsigned), the decay (double), the buckets and the heap (raw
//! structs, see [`super`]), then each slot's item as a C string, `"\0"` for none.
//!
//! RedisBloom checks nothing but the two buffers' sizes (with `assert`); here every value is
//! checked before it is kept, and nothing is allocated past the budget.

use super::buckets::Buckets;
use super::heap::{Heap, SLOT_BYTES, SLOT_POINTER, SLOT_SPARE};
use super::params::Shape;
use super::sketch::{required_bytes, TopK};
use crate::decode::{DecodeError, Persistent, RdbSink, RdbSource};
use crate::murmur::murmur2;

/// The fingerprint of the empty item: a slot whose string RedisBloom saved as `"\0"` with this
/// fingerprint and length 0 held the empty item (which RedisBloom's own load then loses).
fn empty_item_fingerprint() -> u32 {
    murmur2(b"", 1919)
}

/// The fields of a record before its arrays: k, width and depth, and the decay, checked.
pub(super) fn load_shape(source: &mut impl RdbSource) -> Result<Shape, DecodeError> {
    let (k, width, depth) = (source.unsigned()?, source.unsigned()?, source.unsigned()?);
    let decay = source.double()?;
    Shape::checked(k, width, depth, decay)
        .map_err(|_| DecodeError::Malformed("k, width, depth or decay out of range"))
}

pub(super) fn save_shape(sink: &mut impl RdbSink, shape: &Shape) {
    sink.unsigned(u64::from(shape.k));
    sink.unsigned(u64::from(shape.width));
    sink.unsigned(u64::from(shape.depth));
    sink.double(shape.decay);
}

impl Buckets {
    /// `width * depth` buckets, as one string; any content is a valid one.
    pub(super) fn load(source: &mut impl RdbSource, shape: &Shape) -> Result<Buckets, DecodeError> {
        let buckets = source.bytes()?;
        if Some(buckets.len() as u64) != Buckets::bytes_for(shape) {
            return Err(DecodeError::Malformed("buckets of another size than width x depth"));
        }
        Ok(Buckets(buckets))
    }
}

/// What a heap keeps of the bytes RedisBloom's record holds garbage in.
#[derive(Clone, Copy)]
pub(super) enum Kept {
    /// A plain sketch: slot 0's pointer bytes, its generator's state.
    Generator,
    /// The window's list: each slot's padding, the item's count in older generations.
    Spare,
    /// A windowed sketch's generation's list: neither.
    Nothing,
}

impl Heap {
    /// `k` slots as one string, then each slot's item as a C string, every item's bytes added
    /// to `used` and held to `max_bytes`. The pointer bytes and the padding mean nothing
    /// but what `kept` says, and are cleared so that equal sketches save equal records.
    pub(super) fn load(
        source: &mut impl RdbSource,
        k: u64,
        kept: Kept,
        used: &mut u64,
        max_bytes: usize,
    ) -> Result<Heap, DecodeError> {
        let malformed = DecodeError::Malformed;
        let mut heap = source.bytes()?;
        if heap.len() as u64 != k * SLOT_BYTES as u64 {
            return Err(malformed("a heap of another size than k"));
        }
        let mut items = Vec::new();
        items.try_reserve_exact(k as usize).map_err(|_| DecodeError::OutOfMemory)?;
        for (index, slot) in heap.as_mut_slice().chunks_exact_mut(SLOT_BYTES).enumerate() {
            let string = source.bytes()?;
            *used += string.len() as u64;
            if *used > max_bytes as u64 {
                return Err(DecodeError::TooLarge);
            }
            let Some((&0, item)) = string.as_slice().split_last() else {
                return Err(malformed("an item that is not a C string"));
            };
            let fingerprint = u32::from_le_bytes([slot[0], slot[1], slot[2], slot[3]]);
            let length = u32::from_le_bytes([slot[4], slot[5], slot[6], slot[7]]);
            // RedisBloom saves an item up to its first NUL, never more than its length.
            if item.len() as u64 > u64::from(length) {
                return Err(malformed("an item longer than its slot says"));
            }
            let listed = !item.is_empty() || (fingerprint == empty_item_fingerprint() && length == 0);
            items.push(if listed {
                let mut copy = Vec::new();
                copy.try_reserve_exact(string.len()).map_err(|_| DecodeError::OutOfMemory)?;
                copy.extend_from_slice(string.as_slice());
                Some(copy.into_boxed_slice())
            } else {
                None
            });
            let generator = matches!(kept, Kept::Generator) && index == 0;
            let cleared = if generator { SLOT_POINTER + 8 } else { SLOT_POINTER };
            slot[cleared..SLOT_POINTER + 8].fill(0);
            if !matches!(kept, Kept::Spare) {
                slot[SLOT_SPARE..].fill(0);
            }
        }
        Heap::from_parts(heap, items).map_err(|_| DecodeError::OutOfMemory)
    }

    /// The slots as one string, then each item as a C string, `"\0"` for none.
    pub(super) fn save(&self, sink: &mut impl RdbSink) {
        sink.bytes(self.bytes.as_slice());
        for item in &self.items {
            sink.bytes(item.as_deref().unwrap_or(b"\0"));
        }
    }
}

impl Persistent for TopK {
    const ENCODING_VERSION: i32 = 0;

    fn load_rdb(
        encoding_version: i32,
        source: &mut impl RdbSource,
        max_bytes: usize,
    ) -> Result<TopK, DecodeError> {
        if encoding_version != Self::ENCODING_VERSION {
            return Err(DecodeError::Malformed("a Top-K encoding version RedisBloom never wrote"));
        }
        let shape = load_shape(source)?;
        let mut used = required_bytes(&shape).ok_or(DecodeError::TooLarge)?;
        if used > max_bytes as u64 {
            return Err(DecodeError::TooLarge);
        }
        let buckets = Buckets::load(source, &shape)?;
        let heap = Heap::load(source, u64::from(shape.k), Kept::Generator, &mut used, max_bytes)?;
        Ok(TopK::from_parts(shape, buckets, heap))
    }

    fn save_rdb(&self, sink: &mut impl RdbSink) {
        save_shape(sink, &self.shape);
        sink.bytes(self.buckets.0.as_slice());
        self.heap.save(sink);
    }

    fn memory_bytes(&self) -> usize {
        TopK::memory_bytes(self)
    }

    fn try_clone(&self) -> Option<TopK> {
        TopK::try_clone(self)
    }
}
