//! The sketch: RedisBloom 2.8.2's buckets and heap, byte for byte, and its add, query, count
//! and list, with the decay drawn as the `decay` module says.

use super::buckets::{bucket_index, fingerprint, hashed_in_batches, row_index, Buckets, BUCKET_BYTES};
use super::decay::Decay;
use super::heap::{Expelled, Heap, Listed, SLOT_BYTES};
use super::params::{Parameter, SizeError};
use crate::bytes::AllocationFailed;

/// What RedisBloom's `sizeof(TopK)` adds to MEMORY USAGE: its fields and a table of 256 powers.
pub(super) const REDISBLOOM_HEADER_BYTES: usize = 2088;

/// A Top-K sketch (`HeavyKeeper`), in RedisBloom's layout, whose decay is drawn from its own
/// generator, so that the same commands give the same sketch on every server.
pub struct TopK {
    pub(super) k: u32,
    pub(super) width: u32,
    pub(super) depth: u32,
    pub(super) decay: f64,
    pub(super) powers: Decay,
    /// `depth` rows of `width` buckets, RedisBloom's `Bucket`s.
    pub(super) buckets: Buckets,
    /// The list: `k` slots laid out as RedisBloom's `HeapBucket`s, a min-heap on the count.
    /// Slot 0's pointer bytes hold the generator's state, the other slots' pointer and padding
    /// bytes are zero.
    pub(super) heap: Heap,
}

/// Bytes of `width * depth` buckets and `k` slots (with their item handles), `None` past `u64`.
pub(super) fn required_bytes(k: u64, width: u64, depth: u64) -> Option<u64> {
    let buckets = width.checked_mul(depth)?.checked_mul(BUCKET_BYTES as u64)?;
    buckets.checked_add(list_bytes(k)?)
}

/// Bytes of a list of `k` slots with their item handles.
pub(super) fn list_bytes(k: u64) -> Option<u64> {
    k.checked_mul((SLOT_BYTES + std::mem::size_of::<Option<Box<[u8]>>>()) as u64)
}

/// RedisBloom's checks of TOPK.RESERVE's parameters (k, width and depth at least 1 and at most
/// `u32::MAX`; decay in (0, 1]).
pub(super) fn check_parameters(k: u64, width: u64, depth: u64, decay: f64) -> Result<(), SizeError> {
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
    Ok(())
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
        check_parameters(k, width, depth, decay)?;
        let bytes = required_bytes(k, width, depth).ok_or(SizeError::TooLarge)?;
        if bytes > max_bytes as u64 || bytes > isize::MAX as u64 {
            return Err(SizeError::TooLarge);
        }
        let buckets = Buckets::try_zeroed(width, depth)?;
        let heap = Heap::try_new(k, seed)?;
        Ok(TopK::from_parts(k, width, depth, decay, buckets, heap))
    }

    /// A sketch of these dimensions, buckets and heap, checked by the caller (`new`, or a
    /// load). The decay's powers are derived here, whichever way the sketch came: RedisBloom
    /// builds its table only when it creates a sketch, so a sketch it loads never decays.
    pub(super) fn from_parts(
        k: u64,
        width: u64,
        depth: u64,
        decay: f64,
        buckets: Buckets,
        heap: Heap,
    ) -> TopK {
        TopK {
            k: k as u32,
            width: width as u32,
            depth: depth as u32,
            decay,
            powers: Decay::new(decay),
            buckets,
            heap,
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

    #[cfg(test)]
    pub(super) fn rng(&self) -> super::decay::Rng {
        self.heap.rng()
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
        let shape = (self.width, self.depth);
        let prefetch = |sketch: &TopK, index| sketch.buckets.prefetch(index);
        hashed_in_batches(self, items, shape, prefetch, |sketch, item, increment, fingerprint, rows| {
            let width = sketch.width;
            each(sketch.add_hashed(item, increment, fingerprint, |row| row_index(rows, item, row, width)));
        });
    }

    fn add_hashed(
        &mut self,
        item: &[u8],
        increment: u32,
        fingerprint: u32,
        index_of: impl Fn(u32) -> usize,
    ) -> Expelled {
        let mut rng = self.heap.rng();
        let max_count =
            self.buckets.count(&self.powers, &mut rng, (fingerprint, increment), self.depth, index_of);
        self.heap.set_rng(rng);
        self.heap.offer(item, fingerprint, max_count)
    }

    /// Whether the item is in the heap (TOPK.QUERY).
    pub fn query(&self, item: &[u8]) -> bool {
        self.heap.find(item, fingerprint(item)).is_some()
    }

    /// TOPK.COUNT's estimate: the largest count among the item's buckets that hold its
    /// fingerprint; for an item in the heap, only those at least the heap's minimum.
    pub fn count(&self, item: &[u8]) -> u64 {
        let fingerprint = fingerprint(item);
        let heap_min = self.heap.min();
        let in_heap = self.heap.find(item, fingerprint).is_some();
        let width = self.width;
        self.buckets
            .counts_of(fingerprint, self.depth, |row| bucket_index(item, row, width))
            .filter(|&count| !in_heap || count >= heap_min)
            .map(u64::from)
            .max()
            .unwrap_or(0)
    }

    /// TOPK.LIST: the heap's items of a count above zero, the largest count first, ties in
    /// heap order. An item is `None` where RedisBloom answers nil: a slot whose item it lost
    /// on a reload.
    pub fn list(&self) -> Result<Listed<'_>, AllocationFailed> {
        self.heap.list()
    }

    /// What MEMORY USAGE answers for it, RedisBloom's figure: its structure, the buckets and
    /// the heap's slots (not the item strings).
    pub fn memory_bytes(&self) -> usize {
        REDISBLOOM_HEADER_BYTES + self.buckets.len() + self.heap.bytes.len()
    }

    /// A copy, which continues the same decay draws; `None` when there is no memory for it.
    pub fn try_clone(&self) -> Option<TopK> {
        Some(TopK { buckets: self.buckets.try_clone().ok()?, heap: self.heap.try_clone()?, ..*self })
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
