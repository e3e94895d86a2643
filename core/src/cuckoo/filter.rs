//! The cuckoo filter: a chain of sub-filters, RedisBloom's insert, eviction, delete and
//! compaction, byte for byte, at any fingerprint width.

use super::fingerprint::{occurrences, position, replace, slot, with_slot, CuckooHash, Slot, Width};
use super::params::{CuckooError, CuckooParams, Inserted, Limits, MAX_BUCKETS};
use super::sub_filter::SubFilter;

/// The odd constant of the alternate bucket (MurmurHash's `m`).
const ALTERNATE_MULTIPLIER: u64 = 0x5bd1_e995;
/// Deletes beyond this share of the items trigger a compaction of a chain.
const COMPACTION_SHARE: f64 = 0.10;
/// The most items and deletes a filter counts: CF.INFO answers them as signed integers, and a
/// record holds no more ([`CuckooFilter::load_rdb`]).
pub(super) const MAX_COUNT: u64 = i64::MAX as u64;

/// `count` and one more, up to [`MAX_COUNT`].
fn counted(count: u64) -> u64 {
    count.saturating_add(1).min(MAX_COUNT)
}

impl CuckooHash {
    /// The item's two candidate buckets in a sub-filter of `buckets` buckets.
    fn buckets(self, buckets: u64) -> [u64; 2] {
        let mask = buckets - 1;
        [self.hash & mask, alternate(self.hash, self.fingerprint) & mask]
    }
}

/// The other bucket of `fingerprint` when it sits in `bucket` (an involution for a given
/// fingerprint, reduced by the caller's mask).
fn alternate(bucket: u64, fingerprint: u32) -> u64 {
    bucket ^ u64::from(fingerprint).wrapping_mul(ALTERNATE_MULTIPLIER)
}

/// A cuckoo filter: its sub-filters, oldest first, and the parameters they share.
pub struct CuckooFilter {
    pub(super) sub_filters: Vec<SubFilter>,
    pub(super) bucket_size: u16,
    pub(super) max_iterations: u16,
    pub(super) expansion: u16,
    pub(super) width: Width,
    /// Items stored (adds that succeeded, less deletes that did).
    pub(super) items: u64,
    /// Deletes since the last compaction.
    pub(super) deletes: u64,
}

/// `n` rounded up to a power of two; 0 stays 0. Saturates at 2^63.
fn next_power_of_two(n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        n.checked_next_power_of_two().unwrap_or(1 << 63)
    }
}

impl CuckooFilter {
    /// A filter of `next_pow2(capacity / bucket_size)` buckets (at least one), refused beyond
    /// `max_bytes`.
    pub fn try_new(params: CuckooParams, max_bytes: usize) -> Result<CuckooFilter, CuckooError> {
        // The parsers allow neither 0; the bound keeps `% bucket_size` safe whatever the caller.
        let bucket_size = params.bucket_size.max(1);
        let buckets = next_power_of_two(params.capacity / u64::from(bucket_size)).max(1);
        let expansion =
            if params.expansion == 0 { 0 } else { next_power_of_two(u64::from(params.expansion)) as u16 };
        let mut filter = CuckooFilter {
            sub_filters: Vec::new(),
            bucket_size,
            max_iterations: params.max_iterations.max(1),
            expansion,
            width: params.width,
            items: 0,
            deletes: 0,
        };
        filter.push_sub_filter(buckets, max_bytes)?;
        Ok(filter)
    }

    /// Appends an empty sub-filter, within the budget, and answers it.
    fn push_sub_filter(&mut self, buckets: u64, max_bytes: usize) -> Result<&mut SubFilter, CuckooError> {
        if !buckets.is_power_of_two() || buckets >= MAX_BUCKETS {
            return Err(CuckooError::TooLarge);
        }
        let bytes = buckets.checked_mul(self.bucket_bytes() as u64).ok_or(CuckooError::TooLarge)?;
        let total = (self.data_bytes() as u64).checked_add(bytes).ok_or(CuckooError::TooLarge)?;
        if total > max_bytes as u64 {
            return Err(CuckooError::TooLarge);
        }
        let sub_filter = SubFilter::try_new(buckets, self.bucket_bytes())?;
        // The list's own growth must not abort the server either.
        self.sub_filters.try_reserve(1).map_err(|_| CuckooError::OutOfMemory)?;
        let index = self.sub_filters.len();
        self.sub_filters.push(sub_filter);
        Ok(&mut self.sub_filters[index])
    }

    /// The sub-filters, oldest first.
    pub fn sub_filters(&self) -> &[SubFilter] {
        &self.sub_filters
    }

    /// Slots per bucket.
    pub fn bucket_size(&self) -> u16 {
        self.bucket_size
    }

    fn bucket_bytes(&self) -> usize {
        usize::from(self.bucket_size) * self.width.bytes()
    }

    /// Eviction steps an insert takes before it grows the filter or gives up.
    pub fn max_iterations(&self) -> u16 {
        self.max_iterations
    }

    /// Growth factor of each next sub-filter's buckets, a power of two; 0 for a filter that
    /// never grows.
    pub fn expansion(&self) -> u16 {
        self.expansion
    }

    /// Bits of a fingerprint, and of a slot.
    pub fn width(&self) -> Width {
        self.width
    }

    /// Items stored: adds that succeeded, less deletes that did.
    pub fn items(&self) -> u64 {
        self.items
    }

    /// Deletes since the last compaction.
    pub fn deletes(&self) -> u64 {
        self.deletes
    }

    /// The item as this filter stores it.
    pub fn hash(&self, item: &[u8]) -> CuckooHash {
        CuckooHash::of(item, self.width)
    }

    /// The item as this filter stores it, its buckets already asked of the CPU: a single
    /// item's two cache misses then overlap instead of following each other.
    pub fn hash_and_prefetch(&self, item: &[u8]) -> CuckooHash {
        let hash = self.hash(item);
        self.prefetch(hash);
        hash
    }

    /// A batch of items as this filter stores them, with all their buckets asked of the CPU
    /// before any is tested, so that the batch's cache misses overlap.
    pub fn hash_and_prefetch_all<'a>(&self, items: impl Iterator<Item = &'a [u8]>) -> Vec<CuckooHash> {
        let hashes: Vec<CuckooHash> = items.map(|item| self.hash(item)).collect();
        for &hash in &hashes {
            self.prefetch(hash);
        }
        hashes
    }

    /// Buckets of the first sub-filter: what CF.INFO calls the number of buckets.
    pub fn first_buckets(&self) -> u64 {
        self.sub_filters.first().map_or(0, SubFilter::buckets)
    }

    /// Whether a limit of `max_sub_filters` stops every insert.
    pub fn at_sub_filter_limit(&self, max_sub_filters: usize) -> bool {
        self.sub_filters.len() >= max_sub_filters
    }

    /// Bytes of all the sub-filters' slots.
    pub fn data_bytes(&self) -> usize {
        self.sub_filters.iter().map(|sub_filter| sub_filter.slots.len()).sum()
    }

    /// What CF.INFO reports as the size: RedisBloom's own structures and the slots.
    pub fn size(&self) -> u64 {
        40 + 16 * self.sub_filters.len() as u64 + self.data_bytes() as u64
    }

    /// Whether the item's fingerprint is in one of its two buckets in any sub-filter: `false`
    /// is certain.
    pub fn contains(&self, item: CuckooHash) -> bool {
        with_slot!(self.width, S => self.contains_as::<S>(item))
    }

    fn contains_as<S: Slot>(&self, item: CuckooHash) -> bool {
        let bucket_bytes = self.bucket_bytes();
        let fingerprint = S::of(item.fingerprint);
        self.sub_filters.iter().any(|sub_filter| {
            item.buckets(sub_filter.buckets)
                .iter()
                .any(|&bucket| position(sub_filter.bucket(bucket, bucket_bytes), fingerprint).is_some())
        })
    }

    /// Asks the CPU for the cache lines `contains(item)` will read, so that a batch's misses
    /// overlap.
    pub fn prefetch(&self, item: CuckooHash) {
        let bucket_bytes = self.bucket_bytes();
        for sub_filter in &self.sub_filters {
            for bucket in item.buckets(sub_filter.buckets) {
                sub_filter.slots.prefetch(bucket as usize * bucket_bytes);
            }
        }
    }

    /// Slots holding the item's fingerprint in its two buckets, over all sub-filters (a bucket
    /// that is both of them counts twice, as in RedisBloom).
    pub fn count(&self, item: CuckooHash) -> u64 {
        with_slot!(self.width, S => self.count_as::<S>(item))
    }

    fn count_as<S: Slot>(&self, item: CuckooHash) -> u64 {
        let bucket_bytes = self.bucket_bytes();
        let fingerprint = S::of(item.fingerprint);
        let mut count = 0;
        for sub_filter in &self.sub_filters {
            for bucket in item.buckets(sub_filter.buckets) {
                count += occurrences(sub_filter.bucket(bucket, bucket_bytes), fingerprint);
            }
        }
        count
    }

    /// Stores the item, again if it is already there. Tries every sub-filter from the newest,
    /// then evicts in the newest, then grows by a sub-filter `expansion` times the last one,
    /// within `max_bytes` and `max_sub_filters`.
    pub fn insert(&mut self, item: CuckooHash, limits: Limits) -> Inserted {
        with_slot!(self.width, S => self.insert_as::<S>(item, limits))
    }

    fn insert_as<S: Slot>(&mut self, item: CuckooHash, limits: Limits) -> Inserted {
        let bucket_bytes = self.bucket_bytes();
        let fingerprint = S::of(item.fingerprint);
        for sub_filter in self.sub_filters.iter_mut().rev() {
            if sub_filter.store(item.buckets(sub_filter.buckets), fingerprint, bucket_bytes) {
                self.items = counted(self.items);
                return Inserted::Added;
            }
        }
        if self.evict_into_newest::<S>(item) {
            self.items = counted(self.items);
            return Inserted::Added;
        }
        if self.expansion == 0 || self.at_sub_filter_limit(limits.max_sub_filters) {
            return Inserted::NoRoom;
        }
        let buckets = self.first_buckets().checked_mul(
            u64::from(self.expansion).checked_pow(self.sub_filters.len() as u32).unwrap_or(u64::MAX),
        );
        let Some(Ok(newest)) = buckets.map(|buckets| self.push_sub_filter(buckets, limits.max_bytes)) else {
            return Inserted::NoRoom;
        };
        // An empty sub-filter has room in the item's bucket.
        newest.store(item.buckets(newest.buckets), fingerprint, bucket_bytes);
        self.items = counted(self.items);
        Inserted::Added
    }

    /// Adds the item unless it tests present: `None` when it did.
    pub fn insert_new(&mut self, item: CuckooHash, limits: Limits) -> Option<Inserted> {
        if self.contains(item) {
            None
        } else {
            Some(self.insert(item, limits))
        }
    }

    /// The cuckoo walk: from the item's first bucket, swap the carried fingerprint with a
    /// slot (the next one each step) and carry the evicted one to its other bucket, until one
    /// has room. After `max_iterations` failed steps every swap is undone, in reverse, so a
    /// failed insert changes nothing.
    fn evict_into_newest<S: Slot>(&mut self, item: CuckooHash) -> bool {
        let bucket_bytes = self.bucket_bytes();
        let bucket_size = usize::from(self.bucket_size);
        let max_iterations = usize::from(self.max_iterations);
        let Some(newest) = self.sub_filters.last_mut() else { return false };
        let mask = newest.buckets - 1;
        let mut carried = S::of(item.fingerprint);
        let mut bucket = item.hash & mask;
        let mut victim = 0;
        for _ in 0..max_iterations {
            carried = replace(newest.bucket_mut(bucket, bucket_bytes), victim, carried);
            bucket = alternate(bucket, carried.fingerprint()) & mask;
            let target = newest.bucket_mut(bucket, bucket_bytes);
            if let Some(empty) = position(target, S::EMPTY) {
                replace(target, empty, carried);
                return true;
            }
            victim = (victim + 1) % bucket_size;
        }
        // The walk back needs no record of it: the alternate bucket of the fingerprint carried
        // is the bucket it was swapped out of.
        for _ in 0..max_iterations {
            victim = (victim + bucket_size - 1) % bucket_size;
            bucket = alternate(bucket, carried.fingerprint()) & mask;
            carried = replace(newest.bucket_mut(bucket, bucket_bytes), victim, carried);
        }
        false
    }

    /// Clears one copy of the item's fingerprint, newest sub-filter first; false when there
    /// was none. A chain whose deletes pass a tenth of its items is compacted.
    pub fn delete(&mut self, item: CuckooHash) -> bool {
        if !with_slot!(self.width, S => self.clear_one::<S>(item)) {
            return false;
        }
        self.items = self.items.saturating_sub(1);
        self.deletes = counted(self.deletes);
        if self.sub_filters.len() > 1 && self.deletes as f64 > self.items as f64 * COMPACTION_SHARE {
            self.compact(false);
        }
        true
    }

    fn clear_one<S: Slot>(&mut self, item: CuckooHash) -> bool {
        let bucket_bytes = self.bucket_bytes();
        let fingerprint = S::of(item.fingerprint);
        for sub_filter in self.sub_filters.iter_mut().rev() {
            for bucket in item.buckets(sub_filter.buckets) {
                let bucket = sub_filter.bucket_mut(bucket, bucket_bytes);
                if let Some(found) = position(bucket, fingerprint) {
                    replace(bucket, found, S::EMPTY);
                    return true;
                }
            }
        }
        false
    }

    /// Moves fingerprints from the newest sub-filters into room in older ones, and drops a
    /// newest sub-filter left empty. `keep_going`: go on past a sub-filter that could not be
    /// emptied (CF.COMPACT) rather than stop there (the compaction after deletes).
    pub fn compact(&mut self, keep_going: bool) {
        for index in (1..self.sub_filters.len()).rev() {
            if !with_slot!(self.width, S => self.empty_into_older::<S>(index)) && !keep_going {
                break;
            }
        }
        self.deletes = 0;
    }

    /// Moves every fingerprint of sub-filter `index` to the oldest sub-filter with room in
    /// one of its buckets there; true when all moved, and then it is dropped if it is the
    /// newest.
    fn empty_into_older<S: Slot>(&mut self, index: usize) -> bool {
        let bucket_bytes = self.bucket_bytes();
        let bucket_size = usize::from(self.bucket_size);
        let (older, rest) = self.sub_filters.split_at_mut(index);
        let source = &mut rest[0];
        let mut all_moved = true;
        for bucket in 0..source.buckets {
            for slot_index in 0..bucket_size {
                let fingerprint: S = slot(source.bucket(bucket, bucket_bytes), slot_index);
                if fingerprint == S::EMPTY {
                    continue;
                }
                let moved = older.iter_mut().any(|target| {
                    let mask = target.buckets - 1;
                    let candidates = [bucket & mask, alternate(bucket, fingerprint.fingerprint()) & mask];
                    target.store(candidates, fingerprint, bucket_bytes)
                });
                if moved {
                    replace(source.bucket_mut(bucket, bucket_bytes), slot_index, S::EMPTY);
                } else {
                    all_moved = false;
                }
            }
        }
        if all_moved && index == self.sub_filters.len() - 1 {
            self.sub_filters.pop();
        }
        all_moved
    }

    /// A deep copy, or `None` when there is no memory for it.
    pub fn try_clone(&self) -> Option<CuckooFilter> {
        let mut sub_filters = Vec::new();
        sub_filters.try_reserve_exact(self.sub_filters.len()).ok()?;
        for sub_filter in &self.sub_filters {
            sub_filters
                .push(SubFilter { buckets: sub_filter.buckets, slots: sub_filter.slots.try_clone().ok()? });
        }
        Some(CuckooFilter { sub_filters, ..*self })
    }
}
