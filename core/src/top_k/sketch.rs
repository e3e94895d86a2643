//! The sketch: RedisBloom 2.8.2's buckets and heap, byte for byte, and its add, query, count
//! and list, with the decay drawn as the `decay` module says.

use super::buckets::{bucket_index, fingerprint, hashed_in_batches, row_index, rows_of, Buckets, ITEM_ROWS};
use super::decay::Decay;
use super::heap::{Expelled, Heap, Listed, SLOT_BYTES};
use super::params::{Shape, SizeError};
use crate::bytes::AllocationFailed;

/// What RedisBloom's `sizeof(TopK)` adds to MEMORY USAGE: its fields and a table of 256 powers.
pub(super) const REDISBLOOM_HEADER_BYTES: usize = 2088;

/// A Top-K sketch (`HeavyKeeper`), in RedisBloom's layout, whose decay is drawn from its own
/// generator, so that the same commands give the same sketch on every server.
pub struct TopK {
    pub(super) shape: Shape,
    pub(super) powers: Decay,
    /// `depth` rows of `width` buckets, RedisBloom's `Bucket`s.
    pub(super) buckets: Buckets,
    /// The list: `k` slots laid out as RedisBloom's `HeapBucket`s, a min-heap on the count.
    /// Slot 0's pointer bytes hold the generator's state, the other slots' pointer and padding
    /// bytes are zero.
    pub(super) heap: Heap,
}

/// Bytes of `width * depth` buckets and `k` slots (with their item handles), `None` past `u64`.
pub(super) fn required_bytes(shape: &Shape) -> Option<u64> {
    Buckets::bytes_for(shape)?.checked_add(list_bytes(u64::from(shape.k))?)
}

/// Bytes of a list of `k` slots with their item handles.
pub(super) fn list_bytes(k: u64) -> Option<u64> {
    k.checked_mul((SLOT_BYTES + std::mem::size_of::<Option<Box<[u8]>>>()) as u64)
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
        let shape = Shape::checked(k, width, depth, decay).map_err(SizeError::Invalid)?;
        let bytes = required_bytes(&shape).ok_or(SizeError::TooLarge)?;
        if bytes > max_bytes as u64 || bytes > isize::MAX as u64 {
            return Err(SizeError::TooLarge);
        }
        let buckets = Buckets::try_zeroed(&shape)?;
        let heap = Heap::try_new(k, seed)?;
        Ok(TopK::from_parts(shape, buckets, heap))
    }

    /// A sketch of this shape, buckets and heap, checked by the caller (`new`, or a load). The
    /// decay's powers are derived here, whichever way the sketch came: RedisBloom builds its
    /// table only when it creates a sketch, so a sketch it loads never decays.
    pub(super) fn from_parts(shape: Shape, buckets: Buckets, heap: Heap) -> TopK {
        TopK { shape, powers: Decay::new(shape.decay), buckets, heap }
    }

    /// Its k, width, depth and decay.
    pub fn shape(&self) -> Shape {
        self.shape
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
        let width = self.shape.width;
        let mut buffer = [0; ITEM_ROWS];
        let (fingerprint, rows) = rows_of(item, (width, self.shape.depth), &mut buffer);
        self.add_hashed(item, increment, fingerprint, |row| row_index(rows, item, row, width))
    }

    /// Adds every item in order, as [`TopK::add`] does (each result depends on the adds before
    /// it), handing each result to `each`; the buckets of a few items at a time are asked of
    /// the CPU before any of them is counted, so that their cache misses overlap.
    pub fn add_all<'a>(
        &mut self,
        items: impl IntoIterator<Item = (&'a [u8], u32)>,
        mut each: impl FnMut(Expelled),
    ) {
        let shape = (self.shape.width, self.shape.depth);
        let prefetch = |sketch: &TopK, index| sketch.buckets.prefetch(index);
        hashed_in_batches(self, items, shape, prefetch, |sketch, item, increment, fingerprint, rows| {
            let width = sketch.shape.width;
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
            self.buckets.count(&self.powers, &mut rng, (fingerprint, increment), self.shape.depth, index_of);
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
        let width = self.shape.width;
        self.buckets
            .counts_of(fingerprint, self.shape.depth, |row| bucket_index(item, row, width))
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

impl From<AllocationFailed> for SizeError {
    fn from(_: AllocationFailed) -> SizeError {
        SizeError::OutOfMemory
    }
}
