//! The list of heavy hitters: `k` slots laid out as RedisBloom's `HeapBucket`s, a min-heap on
//! the count as far as RedisBloom keeps it one (an entry whose count changes is only ever
//! sifted down), with each slot's item string beside it. The plain sketch keeps its list here
//! (slot 0's pointer bytes holding its generator's state, see the module `top_k`); the
//! windowed sketch keeps the window's list here too, with each item's count in the older
//! generations in the slot's padding, and each generation's own list.

use super::decay::Rng;
use crate::bytes::{AllocationFailed, ByteArray};

/// RedisBloom's `HeapBucket` on x86-64 and ARM64: fingerprint (`u32`), item length (`u32`), item
/// pointer (8 bytes), count (`u32`), padding (4 bytes).
pub(super) const SLOT_BYTES: usize = 24;
const SLOT_FINGERPRINT: usize = 0;
const SLOT_LENGTH: usize = 4;
/// Slot 0's pointer bytes hold the plain sketch's generator state (see the module `top_k`).
pub(super) const SLOT_POINTER: usize = 8;
const SLOT_COUNT: usize = 16;
/// The padding: zero in a plain sketch (RedisBloom's record holds garbage there, which a load
/// clears); the window's list keeps an item's count in the older generations in it.
pub(super) const SLOT_SPARE: usize = 20;

/// One item's result of an add: the item the heap expelled to make room for it, if any.
pub type Expelled = Result<Option<Vec<u8>>, AllocationFailed>;

/// TOPK.LIST's entries: each item (`None` where RedisBloom answers nil) and its count.
pub type Listed<'a> = Vec<(Option<&'a [u8]>, u64)>;

fn read_u32(bytes: &[u8], offset: usize) -> u32 {
    let mut word = [0; 4];
    word.copy_from_slice(&bytes[offset..offset + 4]);
    u32::from_le_bytes(word)
}

fn write_u32(bytes: &mut [u8], offset: usize, value: u32) {
    bytes[offset..offset + 4].copy_from_slice(&value.to_le_bytes());
}

/// The bytes and a terminating NUL, allocated without aborting.
pub(super) fn terminated(item: &[u8]) -> Result<Box<[u8]>, AllocationFailed> {
    let mut copy = Vec::new();
    copy.try_reserve_exact(item.len() + 1).map_err(|_| AllocationFailed)?;
    copy.extend_from_slice(item);
    copy.push(0);
    Ok(copy.into_boxed_slice())
}

/// An item without its NUL.
fn unterminated(item: &[u8]) -> &[u8] {
    item.split_last().map_or(item, |(_, bytes)| bytes)
}

/// `k` slots and their items.
pub(super) struct Heap {
    /// The slots, RedisBloom's `HeapBucket`s.
    pub(super) bytes: ByteArray,
    /// Each slot's item and a terminating NUL, as the RDB record holds it; `None` for a slot
    /// never filled (or whose item RedisBloom lost, see the encoding).
    pub(super) items: Vec<Option<Box<[u8]>>>,
    /// Each slot's fingerprint, as in `bytes`, side by side: every query and most adds look
    /// an item up among all `k`, and compared eight at a time from one line they cost a
    /// fraction of a walk over the 24-byte slots. Written wherever `bytes`' are.
    fingerprints: Vec<u32>,
}

/// Fingerprints [`Heap::find`] compares at once (two SSE2 compares).
const LANES: usize = 8;

/// Bit `i` set where `group[i]` is `fingerprint`. The compiler does not turn the portable
/// loop into vector compares (it compared lane by lane, 27 instructions a group of eight): on
/// x86-64 two SSE2 compares and their sign masks do it in about eight.
#[inline]
pub(super) fn lanes_equal(group: &[u32; LANES], fingerprint: u32) -> u32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use std::arch::x86_64::{
            _mm_castsi128_ps, _mm_cmpeq_epi32, _mm_movemask_ps, _mm_set1_epi32, _mm_set_epi32,
        };
        let half = |&[a, b, c, d]: &[u32; 4]| {
            // SAFETY: SSE2, which these need, is part of x86-64; they read only their operands.
            unsafe {
                let lanes = _mm_set_epi32(d as i32, c as i32, b as i32, a as i32);
                let equal = _mm_cmpeq_epi32(lanes, _mm_set1_epi32(fingerprint as i32));
                _mm_movemask_ps(_mm_castsi128_ps(equal)) as u32
            }
        };
        let (halves, _) = group.as_chunks::<4>();
        halves.iter().enumerate().fold(0, |mask, (at, lanes)| mask | (half(lanes) << (4 * at)))
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    lanes_equal_portable(group, fingerprint)
}

/// [`lanes_equal`] lane by lane: without SSE2, and what its tests compare with.
#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
pub(super) fn lanes_equal_portable(group: &[u32; LANES], fingerprint: u32) -> u32 {
    group.iter().enumerate().fold(0, |mask, (lane, &other)| mask | (u32::from(other == fingerprint) << lane))
}

impl Heap {
    /// `k` empty slots (zero counts, no items), slot 0's pointer bytes holding `seed`.
    pub(super) fn try_new(k: u64, seed: u64) -> Result<Heap, AllocationFailed> {
        let mut bytes = ByteArray::try_zeroed(k * SLOT_BYTES as u64)?;
        bytes.as_mut_slice()[SLOT_POINTER..SLOT_POINTER + 8].copy_from_slice(&seed.to_le_bytes());
        let mut items = Vec::new();
        items.try_reserve_exact(k as usize).map_err(|_| AllocationFailed)?;
        items.resize(k as usize, None);
        Heap::from_parts(bytes, items)
    }

    /// The heap of these slots and items (as many of each), its fingerprints read from the
    /// slots.
    pub(super) fn from_parts(
        bytes: ByteArray,
        items: Vec<Option<Box<[u8]>>>,
    ) -> Result<Heap, AllocationFailed> {
        let slots = bytes.as_slice().chunks_exact(SLOT_BYTES);
        let mut fingerprints = Vec::new();
        fingerprints.try_reserve_exact(slots.len()).map_err(|_| AllocationFailed)?;
        fingerprints.extend(slots.map(|slot| read_u32(slot, SLOT_FINGERPRINT)));
        Ok(Heap { bytes, items, fingerprints })
    }

    /// The number of slots.
    pub(super) fn k(&self) -> usize {
        self.items.len()
    }

    fn field(&self, slot: usize, field: usize) -> u32 {
        read_u32(self.bytes.as_slice(), slot * SLOT_BYTES + field)
    }

    fn set_field(&mut self, slot: usize, field: usize, value: u32) {
        write_u32(self.bytes.as_mut_slice(), slot * SLOT_BYTES + field, value);
        if field == SLOT_FINGERPRINT {
            self.fingerprints[slot] = value;
        }
    }

    pub(super) fn count(&self, slot: usize) -> u32 {
        self.field(slot, SLOT_COUNT)
    }

    /// The smallest count: slot 0's.
    pub(super) fn min(&self) -> u32 {
        self.count(0)
    }

    /// What the slot keeps in its padding (see [`SLOT_SPARE`]).
    pub(super) fn spare(&self, slot: usize) -> u32 {
        self.field(slot, SLOT_SPARE)
    }

    pub(super) fn set_spare(&mut self, slot: usize, value: u32) {
        self.set_field(slot, SLOT_SPARE, value);
    }

    /// The slot's fingerprint.
    pub(super) fn fingerprint(&self, slot: usize) -> u32 {
        self.fingerprints[slot]
    }

    /// The slot's item, without its NUL.
    pub(super) fn item(&self, slot: usize) -> Option<&[u8]> {
        self.items.get(slot).and_then(|item| item.as_deref()).map(unterminated)
    }

    /// The generator state in slot 0's pointer bytes.
    pub(super) fn rng(&self) -> Rng {
        let mut state = [0; 8];
        state.copy_from_slice(&self.bytes.as_slice()[SLOT_POINTER..SLOT_POINTER + 8]);
        Rng(u64::from_le_bytes(state))
    }

    pub(super) fn set_rng(&mut self, rng: Rng) {
        self.bytes.as_mut_slice()[SLOT_POINTER..SLOT_POINTER + 8].copy_from_slice(&rng.0.to_le_bytes());
    }

    /// Swaps two slots' entries, leaving pointer bytes where they are: a generator's state
    /// stays in slot 0.
    fn swap_slots(&mut self, a: usize, b: usize) {
        for field in [SLOT_FINGERPRINT, SLOT_LENGTH, SLOT_COUNT, SLOT_SPARE] {
            let (first, second) = (self.field(a, field), self.field(b, field));
            self.set_field(a, field, second);
            self.set_field(b, field, first);
        }
        self.items.swap(a, b);
    }

    /// RedisBloom's heapify-down, tie for tie: the right child only when strictly smaller, and
    /// a parent equal to its smaller child still moves down.
    pub(super) fn sift_down(&mut self, start: usize) {
        let len = self.k();
        if len < 2 || (len - 2) / 2 < start {
            return;
        }
        let smaller_child = |this: &Heap, parent: usize| {
            let child = 2 * parent + 1;
            if child + 1 < len && this.count(child) > this.count(child + 1) {
                child + 1
            } else {
                child
            }
        };
        let mut child = smaller_child(self, start);
        if self.count(child) > self.count(start) {
            return;
        }
        let moving = self.count(start);
        let mut position = start;
        loop {
            self.swap_slots(position, child);
            position = child;
            if (len - 2) / 2 < child {
                break;
            }
            child = smaller_child(self, child);
            if self.count(child) >= moving {
                break;
            }
        }
    }

    /// Makes the whole array a min-heap again, after counts changed in any direction (the
    /// windowed list's recount). An entry moves below a child only when the child is strictly
    /// smaller: RedisBloom's sift-down also moves a parent past an equal child, which over the
    /// empty slots of a large, mostly empty list walked every run of zeros to the bottom.
    pub(super) fn heapify(&mut self) {
        let len = self.k();
        for start in (0..len / 2).rev() {
            let mut parent = start;
            loop {
                let child = 2 * parent + 1;
                if child >= len {
                    break;
                }
                let smaller = if child + 1 < len && self.count(child + 1) < self.count(child) {
                    child + 1
                } else {
                    child
                };
                if self.count(smaller) >= self.count(parent) {
                    break;
                }
                self.swap_slots(parent, smaller);
                parent = smaller;
            }
        }
    }

    /// The slot holding the item, searched from the last as RedisBloom does: same fingerprint,
    /// same recorded length, same bytes (a slot without item compares as empty).
    pub(super) fn find(&self, item: &[u8], fingerprint: u32) -> Option<usize> {
        let holds = |slot: usize| {
            u64::from(self.field(slot, SLOT_LENGTH)) == item.len() as u64
                && self.item(slot).unwrap_or(&[]) == item
        };
        // From the last slot: whole groups of `LANES`, each compared at once into a bit mask
        // whose highest set bit is the next slot to look at; then the first `k % LANES`.
        let (first, groups) = self.fingerprints.as_rchunks::<LANES>();
        let mut group_start = self.fingerprints.len();
        for group in groups.iter().rev() {
            group_start -= LANES;
            let mut mask = lanes_equal(group, fingerprint);
            while mask != 0 {
                let lane = (u32::BITS - 1 - mask.leading_zeros()) as usize;
                if holds(group_start + lane) {
                    return Some(group_start + lane);
                }
                mask &= !(1 << lane);
            }
        }
        (0..first.len()).rev().find(|&slot| first[slot] == fingerprint && holds(slot))
    }

    /// Whether every slot holding an item has that item's fingerprint (by `fingerprint_of`) and
    /// length, and every other slot is empty: what the windowed list's heaps always hold, so
    /// that [`find`](Self::find) finds every item they hold.
    pub(super) fn slots_match_items(&self, fingerprint_of: impl Fn(&[u8]) -> u32) -> bool {
        (0..self.k()).all(|slot| match self.item(slot) {
            Some(item) => {
                self.fingerprints[slot] == fingerprint_of(item)
                    && u64::from(self.field(slot, SLOT_LENGTH)) == item.len() as u64
            }
            None => [SLOT_FINGERPRINT, SLOT_LENGTH, SLOT_COUNT, SLOT_SPARE]
                .iter()
                .all(|&field| self.field(slot, field) == 0),
        })
    }

    /// Sets a slot's count, leaving the heap order to the caller.
    pub(super) fn set_count(&mut self, slot: usize, count: u32) {
        self.set_field(slot, SLOT_COUNT, count);
    }

    /// Sets a slot's count and sifts it down (RedisBloom's way, whichever way the count went).
    pub(super) fn update(&mut self, slot: usize, count: u32) {
        self.set_count(slot, count);
        self.sift_down(slot);
    }

    /// Puts the item in slot 0, the smallest, with `count` and `spare`, answering the item it
    /// expelled. When the copy of the item cannot be allocated nothing changes.
    pub(super) fn replace_min(&mut self, item: &[u8], fingerprint: u32, count: u32, spare: u32) -> Expelled {
        let copy = terminated(item)?;
        let expelled = self.items[0].replace(copy);
        self.set_field(0, SLOT_FINGERPRINT, fingerprint);
        self.set_field(0, SLOT_LENGTH, item.len() as u32);
        self.set_field(0, SLOT_COUNT, count);
        self.set_field(0, SLOT_SPARE, spare);
        self.sift_down(0);
        Ok(expelled.map(|item| {
            let mut item = item.into_vec();
            item.pop();
            item
        }))
    }

    /// The plain sketch's admission, after an add left the item's largest bucket at `count`:
    /// nothing below the smallest count; an item listed takes the count (not the larger of the
    /// two: its buckets may have decayed); another replaces the smallest.
    pub(super) fn offer(&mut self, item: &[u8], fingerprint: u32, count: u32) -> Expelled {
        if count < self.min() {
            return Ok(None);
        }
        if let Some(slot) = self.find(item, fingerprint) {
            self.update(slot, count);
            return Ok(None);
        }
        self.replace_min(item, fingerprint, count, 0)
    }

    /// Empties a slot (the window's list, for an item whose counts all expired); the caller
    /// restores the heap order.
    pub(super) fn clear(&mut self, slot: usize) {
        for field in [SLOT_FINGERPRINT, SLOT_LENGTH, SLOT_COUNT, SLOT_SPARE] {
            self.set_field(slot, field, 0);
        }
        self.items[slot] = None;
    }

    /// The items of a count above zero, the largest count first, ties in heap order (RedisBloom
    /// sorts a copy with glibc's `qsort`, a stable merge sort). An item is `None` where
    /// RedisBloom answers nil: a slot whose item it lost on a reload.
    pub(super) fn list(&self) -> Result<Listed<'_>, AllocationFailed> {
        self.list_by(|slot| self.count(slot))
    }

    /// As [`list`](Self::list), each slot's count given by `count_of`.
    pub(super) fn list_by(&self, count_of: impl Fn(usize) -> u32) -> Result<Listed<'_>, AllocationFailed> {
        let counted = (0..self.k()).map(|slot| (slot, count_of(slot))).filter(|&(_, count)| count != 0);
        let mut slots = Vec::new();
        slots.try_reserve_exact(counted.clone().count()).map_err(|_| AllocationFailed)?;
        slots.extend(counted);
        // Unstable but tie-broken by position: the stable order, without a sort buffer.
        slots.sort_unstable_by_key(|&(slot, count)| (std::cmp::Reverse(count), slot));
        Ok(slots.into_iter().map(|(slot, count)| (self.item(slot), u64::from(count))).collect())
    }

    /// A copy; `None` when there is no memory for it.
    pub(super) fn try_clone(&self) -> Option<Heap> {
        let mut items = Vec::new();
        items.try_reserve_exact(self.items.len()).ok()?;
        for item in &self.items {
            items.push(match item {
                Some(item) => Some(terminated(unterminated(item)).ok()?),
                None => None,
            });
        }
        Heap::from_parts(self.bytes.try_clone().ok()?, items).ok()
    }
}
