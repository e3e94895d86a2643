//! The sketch: RedisBloom 2.8.2's buckets and heap, byte for byte, and its add, query, count
//! and list, with the decay drawn as the `decay` module says.

use super::decay::{Decay, Decayed, Rng};
use super::params::{Parameter, SizeError};
use crate::bytes::{AllocationFailed, ByteArray};
use crate::murmur::murmur2;

/// RedisBloom's `Bucket`: fingerprint, then count, both `u32` little-endian.
pub(super) const BUCKET_BYTES: usize = 8;
/// RedisBloom's `HeapBucket` on x86-64 and ARM64: fingerprint (`u32`), item length (`u32`), item
/// pointer (8 bytes), count (`u32`), padding (4 bytes).
pub(super) const SLOT_BYTES: usize = 24;
const SLOT_FINGERPRINT: usize = 0;
const SLOT_LENGTH: usize = 4;
/// Slot 0's pointer bytes hold the generator's state (see the module `top_k`).
pub(super) const SLOT_POINTER: usize = 8;
const SLOT_COUNT: usize = 16;
/// The seed of an item's fingerprint (`GA` in RedisBloom); row `i` is hashed with seed `i`.
const FINGERPRINT_SEED: u32 = 1919;
/// Buckets a batch asks the CPU for ahead of its adds.
const PREFETCH_BUCKETS: usize = 64;
/// What RedisBloom's `sizeof(TopK)` adds to MEMORY USAGE: its fields and a table of 256 powers.
const REDISBLOOM_HEADER_BYTES: usize = 2088;

/// One item's result of an add: the item the heap expelled to make room for it, if any.
pub type Expelled = Result<Option<Vec<u8>>, AllocationFailed>;

/// TOPK.LIST's entries: each item (`None` where RedisBloom answers nil) and its count.
pub type Listed<'a> = Vec<(Option<&'a [u8]>, u64)>;

/// A Top-K sketch (`HeavyKeeper`), in RedisBloom's layout, whose decay is drawn from its own
/// generator, so that the same commands give the same sketch on every server.
pub struct TopK {
    pub(super) k: u32,
    pub(super) width: u32,
    pub(super) depth: u32,
    pub(super) decay: f64,
    pub(super) powers: Decay,
    /// `depth` rows of `width` buckets, RedisBloom's `Bucket`s.
    pub(super) buckets: ByteArray,
    /// `k` slots laid out as RedisBloom's `HeapBucket`s, a min-heap on the count (as far as
    /// RedisBloom keeps it one: an item whose count drops is only ever sifted down). The item
    /// strings live in `items`; slot 0's pointer bytes hold the generator's state, the other
    /// slots' pointer and padding bytes are zero.
    pub(super) heap: ByteArray,
    /// Each slot's item and a terminating NUL, as the RDB record holds it; `None` for a slot
    /// never filled (or whose item RedisBloom lost, see the encoding).
    pub(super) items: Vec<Option<Box<[u8]>>>,
}

/// Bytes of `width * depth` buckets and `k` slots (with their item handles), `None` past `u64`.
pub(super) fn required_bytes(k: u64, width: u64, depth: u64) -> Option<u64> {
    let buckets = width.checked_mul(depth)?.checked_mul(BUCKET_BYTES as u64)?;
    let slot = (SLOT_BYTES + std::mem::size_of::<Option<Box<[u8]>>>()) as u64;
    buckets.checked_add(k.checked_mul(slot)?)
}

/// An item's fingerprint.
fn fingerprint(item: &[u8]) -> u32 {
    murmur2(item, FINGERPRINT_SEED)
}

/// The index of the item's bucket in `row` (RedisBloom computes the row's offset in 32 bits,
/// which wraps only for sketches of more than 32 GiB; this never wraps).
fn bucket_index(item: &[u8], row: u32, width: u32) -> usize {
    row as usize * width as usize + (murmur2(item, row) % width) as usize
}

fn read_u32(bytes: &[u8], offset: usize) -> u32 {
    let mut word = [0; 4];
    word.copy_from_slice(&bytes[offset..offset + 4]);
    u32::from_le_bytes(word)
}

fn write_u32(bytes: &mut [u8], offset: usize, value: u32) {
    bytes[offset..offset + 4].copy_from_slice(&value.to_le_bytes());
}

/// The bytes and a terminating NUL, allocated without aborting.
fn terminated(item: &[u8]) -> Result<Box<[u8]>, AllocationFailed> {
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

impl TopK {
    /// An empty sketch keeping the `k` heaviest items, in `depth` rows of `width` counters
    /// decaying at `decay`, whose decay draws start from `seed`; refused beyond `max_bytes`.
    ///
    /// The checks are RedisBloom's TOPK.RESERVE's (k, width and depth at least 1 and, for
    /// width and depth, at most `u32::MAX`; decay in (0, 1]), and k past `u32::MAX` too, which
    /// RedisBloom would truncate.
    pub fn new(
        k: u64,
        width: u64,
        depth: u64,
        decay: f64,
        seed: u64,
        max_bytes: usize,
    ) -> Result<TopK, SizeError> {
        let dimension = |value: u64| (1..=u64::from(u32::MAX)).contains(&value);
        if !dimension(k) {
            return Err(SizeError::Invalid(Parameter::K));
        }
        if !dimension(width) {
            return Err(SizeError::Invalid(Parameter::Width));
        }
        if !dimension(depth) {
            return Err(SizeError::Invalid(Parameter::Depth));
        }
        if !valid_decay(decay) {
            return Err(SizeError::Invalid(Parameter::Decay));
        }
        let bytes = required_bytes(k, width, depth).ok_or(SizeError::TooLarge)?;
        if bytes > max_bytes as u64 || bytes > isize::MAX as u64 {
            return Err(SizeError::TooLarge);
        }
        let buckets = ByteArray::try_zeroed(width * depth * BUCKET_BYTES as u64)?;
        let mut heap = ByteArray::try_zeroed(k * SLOT_BYTES as u64)?;
        heap.as_mut_slice()[SLOT_POINTER..SLOT_POINTER + 8].copy_from_slice(&seed.to_le_bytes());
        let mut items = Vec::new();
        items.try_reserve_exact(k as usize).map_err(|_| AllocationFailed)?;
        items.resize(k as usize, None);
        Ok(TopK::from_parts(k, width, depth, decay, buckets, heap, items))
    }

    /// A sketch of these dimensions, buckets, heap and items, checked by the caller (`new`, or
    /// a load). The decay's powers are derived here, whichever way the sketch came: RedisBloom
    /// builds its table only when it creates a sketch, so a sketch it loads never decays.
    pub(super) fn from_parts(
        k: u64,
        width: u64,
        depth: u64,
        decay: f64,
        buckets: ByteArray,
        heap: ByteArray,
        items: Vec<Option<Box<[u8]>>>,
    ) -> TopK {
        TopK {
            k: k as u32,
            width: width as u32,
            depth: depth as u32,
            decay,
            powers: Decay::new(decay),
            buckets,
            heap,
            items,
        }
    }

    /// Items kept.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Counters in a row.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Rows.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The probability base of a decrement: `decay^count`.
    pub fn decay(&self) -> f64 {
        self.decay
    }

    fn bucket(&self, index: usize) -> (u32, u32) {
        let bytes = self.buckets.as_slice();
        let offset = index * BUCKET_BYTES;
        (read_u32(bytes, offset), read_u32(bytes, offset + 4))
    }

    fn set_bucket(&mut self, index: usize, fingerprint: u32, count: u32) {
        let bytes = self.buckets.as_mut_slice();
        let offset = index * BUCKET_BYTES;
        write_u32(bytes, offset, fingerprint);
        write_u32(bytes, offset + 4, count);
    }

    fn slot_field(&self, slot: usize, field: usize) -> u32 {
        read_u32(self.heap.as_slice(), slot * SLOT_BYTES + field)
    }

    fn set_slot_field(&mut self, slot: usize, field: usize, value: u32) {
        write_u32(self.heap.as_mut_slice(), slot * SLOT_BYTES + field, value);
    }

    fn slot_count(&self, slot: usize) -> u32 {
        self.slot_field(slot, SLOT_COUNT)
    }

    /// Swaps two slots' entries, leaving pointer and padding bytes where they are: the
    /// generator's state stays in slot 0.
    fn swap_slots(&mut self, a: usize, b: usize) {
        for field in [SLOT_FINGERPRINT, SLOT_LENGTH, SLOT_COUNT] {
            let (first, second) = (self.slot_field(a, field), self.slot_field(b, field));
            self.set_slot_field(a, field, second);
            self.set_slot_field(b, field, first);
        }
        self.items.swap(a, b);
    }

    pub(super) fn rng(&self) -> Rng {
        let bytes = self.heap.as_slice();
        let mut state = [0; 8];
        state.copy_from_slice(&bytes[SLOT_POINTER..SLOT_POINTER + 8]);
        Rng(u64::from_le_bytes(state))
    }

    fn set_rng(&mut self, rng: Rng) {
        self.heap.as_mut_slice()[SLOT_POINTER..SLOT_POINTER + 8].copy_from_slice(&rng.0.to_le_bytes());
    }

    /// RedisBloom's heapify-down, tie for tie: the right child only when strictly smaller, and
    /// a parent equal to its smaller child still moves down.
    fn sift_down(&mut self, start: usize) {
        let len = self.k as usize;
        if len < 2 || (len - 2) / 2 < start {
            return;
        }
        let smaller_child = |this: &TopK, parent: usize| {
            let child = 2 * parent + 1;
            if child + 1 < len && this.slot_count(child) > this.slot_count(child + 1) {
                child + 1
            } else {
                child
            }
        };
        let mut child = smaller_child(self, start);
        if self.slot_count(child) > self.slot_count(start) {
            return;
        }
        let moving = self.slot_count(start);
        let mut position = start;
        loop {
            self.swap_slots(position, child);
            position = child;
            if (len - 2) / 2 < child {
                break;
            }
            child = smaller_child(self, child);
            if self.slot_count(child) >= moving {
                break;
            }
        }
    }

    /// The slot holding the item, searched from the last as RedisBloom does: same fingerprint,
    /// same recorded length, same bytes (a slot without item compares as empty).
    fn find(&self, item: &[u8], fingerprint: u32) -> Option<usize> {
        let slots = self.heap.as_slice().chunks_exact(SLOT_BYTES).enumerate().rev();
        slots
            .filter(|(_, slot)| read_u32(slot, SLOT_FINGERPRINT) == fingerprint)
            .find(|&(index, slot)| {
                u64::from(read_u32(slot, SLOT_LENGTH)) == item.len() as u64
                    && self.items.get(index).and_then(|item| item.as_deref()).map_or(&[][..], unterminated)
                        == item
            })
            .map(|(index, _)| index)
    }

    /// Counts the item `increment` times (TOPK.ADD adds 1, TOPK.INCRBY its increment) and
    /// answers the item the heap expelled for it, if it entered the heap. A bucket of the item
    /// grows by the increment (saturating where RedisBloom's `u32` would wrap); an empty one
    /// becomes the item's; one of another item decays as the `decay` module draws it. The heap
    /// then takes the item's largest bucket count when that reaches its minimum.
    ///
    /// Fails only when its copy of the item cannot be allocated: the buckets have counted the
    /// item then, the heap is as it was.
    pub fn add(&mut self, item: &[u8], increment: u32) -> Expelled {
        let width = self.width;
        self.add_hashed(item, increment, fingerprint(item), |row| bucket_index(item, row, width))
    }

    /// Adds every item in order, as [`TopK::add`] does (each result depends on the adds before
    /// it), handing each result to `each`; the buckets of a few items at a time are asked of
    /// the CPU before any of them is counted, so that their cache misses overlap.
    pub fn add_all<'a>(
        &mut self,
        items: impl IntoIterator<Item = (&'a [u8], u32)>,
        mut each: impl FnMut(Expelled),
    ) {
        let depth = self.depth as usize;
        if depth > PREFETCH_BUCKETS {
            for (item, increment) in items {
                each(self.add(item, increment));
            }
            return;
        }
        let per_batch = PREFETCH_BUCKETS / depth;
        let mut batch: [(&[u8], u32, u32); PREFETCH_BUCKETS] = [(&[], 0, 0); PREFETCH_BUCKETS];
        let mut indexes = [0usize; PREFETCH_BUCKETS];
        let mut items = items.into_iter();
        loop {
            let mut len = 0;
            for (item, increment) in items.by_ref().take(per_batch) {
                batch[len] = (item, increment, fingerprint(item));
                for row in 0..self.depth {
                    let index = bucket_index(item, row, self.width);
                    indexes[len * depth + row as usize] = index;
                    self.buckets.prefetch(index * BUCKET_BYTES);
                }
                len += 1;
            }
            if len == 0 {
                return;
            }
            for (position, &(item, increment, fingerprint)) in batch[..len].iter().enumerate() {
                let rows = &indexes[position * depth..(position + 1) * depth];
                each(self.add_hashed(item, increment, fingerprint, |row| rows[row as usize]));
            }
        }
    }

    fn add_hashed(
        &mut self,
        item: &[u8],
        increment: u32,
        fingerprint: u32,
        index_of: impl Fn(u32) -> usize,
    ) -> Expelled {
        let heap_min = self.slot_count(0);
        let mut max_count = 0;
        let mut rng = self.rng();
        for row in 0..self.depth {
            let index = index_of(row);
            let (owner, count) = self.bucket(index);
            let count = if count == 0 {
                increment
            } else if owner == fingerprint {
                count.saturating_add(increment)
            } else {
                match self.powers.hit(count, increment, &mut rng) {
                    Decayed::Kept(count) => {
                        self.set_bucket(index, owner, count);
                        continue;
                    }
                    Decayed::Taken(count) => count,
                }
            };
            self.set_bucket(index, fingerprint, count);
            max_count = max_count.max(count);
        }
        self.set_rng(rng);
        if max_count < heap_min {
            return Ok(None);
        }
        if let Some(slot) = self.find(item, fingerprint) {
            // Not the larger of the two: the buckets may have decayed.
            self.set_slot_field(slot, SLOT_COUNT, max_count);
            self.sift_down(slot);
            return Ok(None);
        }
        let copy = terminated(item)?;
        let expelled = self.items[0].replace(copy);
        self.set_slot_field(0, SLOT_FINGERPRINT, fingerprint);
        self.set_slot_field(0, SLOT_LENGTH, item.len() as u32);
        self.set_slot_field(0, SLOT_COUNT, max_count);
        self.sift_down(0);
        Ok(expelled.map(|item| {
            let mut item = item.into_vec();
            item.pop();
            item
        }))
    }

    /// Whether the item is in the heap (TOPK.QUERY).
    pub fn query(&self, item: &[u8]) -> bool {
        self.find(item, fingerprint(item)).is_some()
    }

    /// TOPK.COUNT's estimate: the largest count among the item's buckets that hold its
    /// fingerprint; for an item in the heap, only those at least the heap's minimum.
    pub fn count(&self, item: &[u8]) -> u64 {
        let fingerprint = fingerprint(item);
        let heap_min = self.slot_count(0);
        let in_heap = self.find(item, fingerprint).is_some();
        (0..self.depth)
            .map(|row| self.bucket(bucket_index(item, row, self.width)))
            .filter(|&(owner, count)| owner == fingerprint && (!in_heap || count >= heap_min))
            .map(|(_, count)| u64::from(count))
            .max()
            .unwrap_or(0)
    }

    /// TOPK.LIST: the heap's items of a count above zero, the largest count first, ties in
    /// heap order (RedisBloom sorts a copy with glibc's `qsort`, a stable merge sort). An item
    /// is `None` where RedisBloom answers nil: a slot whose item it lost on a reload.
    pub fn list(&self) -> Result<Listed<'_>, AllocationFailed> {
        let counted = (0..self.k as usize).filter(|&slot| self.slot_count(slot) != 0);
        let mut slots = Vec::new();
        slots.try_reserve_exact(counted.clone().count()).map_err(|_| AllocationFailed)?;
        slots.extend(counted);
        // Unstable but tie-broken by position: the stable order, without a sort buffer.
        slots.sort_unstable_by_key(|&slot| (std::cmp::Reverse(self.slot_count(slot)), slot));
        Ok(slots
            .into_iter()
            .map(|slot| (self.items[slot].as_deref().map(unterminated), u64::from(self.slot_count(slot))))
            .collect())
    }

    /// What MEMORY USAGE answers for it, RedisBloom's figure: its structure, the buckets and
    /// the heap's slots (not the item strings).
    pub fn memory_bytes(&self) -> usize {
        REDISBLOOM_HEADER_BYTES + self.buckets.len() + self.heap.len()
    }

    /// A copy, which continues the same decay draws; `None` when there is no memory for it.
    pub fn try_clone(&self) -> Option<TopK> {
        let mut items = Vec::new();
        items.try_reserve_exact(self.items.len()).ok()?;
        for item in &self.items {
            items.push(match item {
                Some(item) => Some(terminated(unterminated(item)).ok()?),
                None => None,
            });
        }
        Some(TopK {
            buckets: self.buckets.try_clone().ok()?,
            heap: self.heap.try_clone().ok()?,
            items,
            ..*self
        })
    }
}

/// RedisBloom's range for the decay: (0, 1], which NaN is not in.
pub(super) fn valid_decay(decay: f64) -> bool {
    decay > 0.0 && decay <= 1.0
}

impl From<AllocationFailed> for SizeError {
    fn from(_: AllocationFailed) -> SizeError {
        SizeError::OutOfMemory
    }
}
