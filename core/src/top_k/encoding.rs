//! The RDB record of `TopK-TYPE`, RedisBloom's only encoding (version 0, the same in every
//! release): k, width and depth (unsigned), the decay (double), the buckets and the heap (raw
//! structs, see [`super`]), then each slot's item as a C string, `"\0"` for none.
//!
//! RedisBloom checks nothing but the two buffers' sizes (with `assert`); here every value is
//! checked before it is kept, and nothing is allocated past the budget.

use super::sketch::{required_bytes, valid_decay, TopK, BUCKET_BYTES, SLOT_BYTES, SLOT_POINTER};
use crate::decode::{DecodeError, Persistent, RdbSink, RdbSource};
use crate::murmur::murmur2;

/// The fingerprint of the empty item: a slot whose string RedisBloom saved as `"\0"` with this
/// fingerprint and length 0 held the empty item (which RedisBloom's own load then loses).
fn empty_item_fingerprint() -> u32 {
    murmur2(b"", 1919)
}

impl Persistent for TopK {
    const ENCODING_VERSION: i32 = 0;

    fn load_rdb(
        encoding_version: i32,
        source: &mut impl RdbSource,
        max_bytes: usize,
    ) -> Result<TopK, DecodeError> {
        let malformed = DecodeError::Malformed;
        if encoding_version != Self::ENCODING_VERSION {
            return Err(malformed("a Top-K encoding version RedisBloom never wrote"));
        }
        let dimension = |value: u64| (1..=u64::from(u32::MAX)).contains(&value);
        let (k, width, depth) = (source.unsigned()?, source.unsigned()?, source.unsigned()?);
        if !(dimension(k) && dimension(width) && dimension(depth)) {
            return Err(malformed("k, width or depth out of range"));
        }
        let decay = source.double()?;
        if !valid_decay(decay) {
            return Err(malformed("a decay outside (0, 1]"));
        }
        let mut used = required_bytes(k, width, depth).ok_or(DecodeError::TooLarge)?;
        if used > max_bytes as u64 {
            return Err(DecodeError::TooLarge);
        }
        let buckets = source.bytes()?;
        if buckets.len() as u64 != width * depth * BUCKET_BYTES as u64 {
            return Err(malformed("buckets of another size than width x depth"));
        }
        let mut heap = source.bytes()?;
        if heap.len() as u64 != k * SLOT_BYTES as u64 {
            return Err(malformed("a heap of another size than k"));
        }
        let mut items = Vec::new();
        items.try_reserve_exact(k as usize).map_err(|_| DecodeError::OutOfMemory)?;
        for (index, slot) in heap.as_mut_slice().chunks_exact_mut(SLOT_BYTES).enumerate() {
            let string = source.bytes()?;
            used += string.len() as u64;
            if used > max_bytes as u64 {
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
            let kept = !item.is_empty() || (fingerprint == empty_item_fingerprint() && length == 0);
            items.push(if kept {
                let mut copy = Vec::new();
                copy.try_reserve_exact(string.len()).map_err(|_| DecodeError::OutOfMemory)?;
                copy.extend_from_slice(string.as_slice());
                Some(copy.into_boxed_slice())
            } else {
                None
            });
            // Slot 0's pointer is the generator's state; the other pointers and the padding
            // mean nothing, and are cleared so that equal sketches save equal records.
            let cleared = if index == 0 { SLOT_POINTER + 8 } else { SLOT_POINTER };
            slot[cleared..SLOT_POINTER + 8].fill(0);
            slot[SLOT_BYTES - 4..].fill(0);
        }
        Ok(TopK::from_parts(k, width, depth, decay, buckets, heap, items))
    }

    fn save_rdb(&self, sink: &mut impl RdbSink) {
        sink.unsigned(u64::from(self.k));
        sink.unsigned(u64::from(self.width));
        sink.unsigned(u64::from(self.depth));
        sink.double(self.decay);
        sink.bytes(self.buckets.as_slice());
        sink.bytes(self.heap.as_slice());
        for item in &self.items {
            sink.bytes(item.as_deref().unwrap_or(b"\0"));
        }
    }

    fn memory_bytes(&self) -> usize {
        TopK::memory_bytes(self)
    }

    fn try_clone(&self) -> Option<TopK> {
        TopK::try_clone(self)
    }
}
