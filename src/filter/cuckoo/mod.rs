//! The cuckoo filter, in RedisBloom's layout and hashing, so that every filter RedisBloom
//! wrote keeps answering, counting and deleting its items here, byte for byte (the contract is
//! `docs/cf-commands.md`); and the same filter with wider fingerprints, for lower rates.
//! Nothing here knows about Redis.
//!
//! A filter is a chain of sub-filters. Each is `buckets` buckets (a power of two) of
//! `bucket_size` slots; a slot holds an item's fingerprint, or 0 when empty. An item may live
//! in either of two buckets of any sub-filter, so a lookup reads two buckets per sub-filter:
//! with one sub-filter, two cache lines at most when buckets of 1, 2, 4 or 8 slots (of any
//! width) do not straddle lines, as in the arrays this module allocates, which start on one.
//!
//! - [`fingerprint`]: the widths, an item's hash and fingerprint, and slots.
//! - [`encoding`]: the SCANDUMP header and chunks, and the RDB record.

pub mod encoding;
pub mod fingerprint;

use crate::filter::bits::ByteArray;
use fingerprint::{occurrences, position, replace, slot, with_slot, Slot};
pub use fingerprint::{CuckooHash, Width};

/// Created by CF.ADD, CF.ADDNX, CF.INSERT and CF.INSERTNX when the key is missing.
pub const DEFAULT_CAPACITY: u64 = 1024;
pub const DEFAULT_BUCKET_SIZE: u16 = 2;
pub const DEFAULT_MAX_ITERATIONS: u16 = 20;
pub const DEFAULT_EXPANSION: u16 = 1;
pub const MAX_BUCKET_SIZE: u16 = 255;
pub const MAX_EXPANSION: u16 = 32768;
/// RedisBloom's default `CF_MAX_EXPANSIONS`: a filter with this many sub-filters takes no
/// more items.
pub const DEFAULT_MAX_SUB_FILTERS: usize = 32;
/// The most sub-filters a stored filter (a header, an RDB record) may have, and the highest
/// limit a server may set. Commands never make more than the limit; a crafted header with
/// tens of thousands of tiny sub-filters would make every lookup read them all and every
/// compaction take seconds.
pub const MAX_SUB_FILTERS: usize = 1024;
/// Where RedisBloom stops asking for memory: bucket counts from 2^56 up are refused.
const MAX_BUCKETS: u64 = 1 << 56;
/// The odd constant of the alternate bucket (MurmurHash's `m`).
const ALTERNATE_MULTIPLIER: u64 = 0x5bd1_e995;
/// Deletes beyond this share of the items trigger a compaction of a chain.
const COMPACTION_SHARE: f64 = 0.10;

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

/// Why a filter could not be made or grown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CuckooError {
    /// Larger than the memory budget, or than RedisBloom would ever allocate.
    TooLarge,
    /// The allocator had no memory for it.
    OutOfMemory,
}

/// What an insert may grow the filter to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of slots, over all sub-filters.
    pub max_bytes: usize,
    pub max_sub_filters: usize,
}

/// What an insert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    Added,
    /// No room, and the filter may not grow (expansion 0, the sub-filter limit, or the memory
    /// budget): nothing changed.
    NoRoom,
}

/// One sub-filter: `buckets` buckets of the filter's bucket size and width.
pub struct SubFilter {
    buckets: u64,
    slots: ByteArray,
}

impl SubFilter {
    fn try_new(buckets: u64, bucket_bytes: usize) -> Result<SubFilter, CuckooError> {
        let bytes = buckets.checked_mul(bucket_bytes as u64).ok_or(CuckooError::TooLarge)?;
        let slots = ByteArray::try_zeroed(bytes).map_err(|_| CuckooError::OutOfMemory)?;
        Ok(SubFilter { buckets, slots })
    }

    pub fn buckets(&self) -> u64 {
        self.buckets
    }

    pub fn bytes(&self) -> &[u8] {
        self.slots.as_slice()
    }

    fn bucket(&self, bucket: u64, bucket_bytes: usize) -> &[u8] {
        let start = bucket as usize * bucket_bytes;
        &self.slots.as_slice()[start..start + bucket_bytes]
    }

    fn bucket_mut(&mut self, bucket: u64, bucket_bytes: usize) -> &mut [u8] {
        let start = bucket as usize * bucket_bytes;
        &mut self.slots.as_mut_slice()[start..start + bucket_bytes]
    }

    /// Stores `fingerprint` in the first empty slot of either bucket.
    fn store<S: Slot>(&mut self, candidates: [u64; 2], fingerprint: S, bucket_bytes: usize) -> bool {
        for bucket in candidates {
            let bucket = self.bucket_mut(bucket, bucket_bytes);
            if let Some(empty) = position(bucket, S::EMPTY) {
                replace(bucket, empty, fingerprint);
                return true;
            }
        }
        false
    }
}

/// The parameters a filter is created with, as validated by the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooParams {
    pub capacity: u64,
    pub bucket_size: u16,
    pub max_iterations: u16,
    /// As asked for: rounded up to a power of two on creation.
    pub expansion: u16,
    pub width: Width,
}

impl Default for CuckooParams {
    fn default() -> CuckooParams {
        CuckooParams {
            capacity: DEFAULT_CAPACITY,
            bucket_size: DEFAULT_BUCKET_SIZE,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            expansion: DEFAULT_EXPANSION,
            width: Width::Eight,
        }
    }
}

pub struct CuckooFilter {
    sub_filters: Vec<SubFilter>,
    bucket_size: u16,
    max_iterations: u16,
    expansion: u16,
    width: Width,
    /// Items stored (adds that succeeded, less deletes that did).
    items: u64,
    /// Deletes since the last compaction.
    deletes: u64,
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
        let index = self.sub_filters.len();
        self.sub_filters.push(SubFilter::try_new(buckets, self.bucket_bytes())?);
        Ok(&mut self.sub_filters[index])
    }

    pub fn sub_filters(&self) -> &[SubFilter] {
        &self.sub_filters
    }

    pub fn bucket_size(&self) -> u16 {
        self.bucket_size
    }

    fn bucket_bytes(&self) -> usize {
        usize::from(self.bucket_size) * self.width.bytes()
    }

    pub fn max_iterations(&self) -> u16 {
        self.max_iterations
    }

    pub fn expansion(&self) -> u16 {
        self.expansion
    }

    pub fn width(&self) -> Width {
        self.width
    }

    pub fn items(&self) -> u64 {
        self.items
    }

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
                self.items = self.items.saturating_add(1);
                return Inserted::Added;
            }
        }
        if self.evict_into_newest::<S>(item) {
            self.items = self.items.saturating_add(1);
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
        self.items = self.items.saturating_add(1);
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
        self.deletes = self.deletes.saturating_add(1);
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
        let sub_filters = self
            .sub_filters
            .iter()
            .map(|sub_filter| {
                Some(SubFilter { buckets: sub_filter.buckets, slots: sub_filter.slots.try_clone().ok()? })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(CuckooFilter { sub_filters, ..*self })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: usize = 1 << 30;
    const LIMITS: Limits = Limits { max_bytes: BUDGET, max_sub_filters: DEFAULT_MAX_SUB_FILTERS };

    fn filter(capacity: u64, bucket_size: u16, max_iterations: u16, expansion: u16) -> CuckooFilter {
        CuckooFilter::try_new(
            CuckooParams { capacity, bucket_size, max_iterations, expansion, ..CuckooParams::default() },
            BUDGET,
        )
        .unwrap()
    }

    fn item(text: &str) -> CuckooHash {
        CuckooHash::of(text.as_bytes(), Width::Eight)
    }

    #[test]
    fn buckets_are_the_next_power_of_two_of_capacity_over_bucket_size() {
        for (capacity, bucket_size, buckets) in
            [(4, 2, 2), (7, 2, 4), (100, 2, 64), (1025, 2, 512), (10, 3, 4), (10, 1, 16), (510, 255, 2)]
        {
            assert_eq!(
                filter(capacity, bucket_size, 20, 1).first_buckets(),
                buckets,
                "{capacity}/{bucket_size}"
            );
        }
        assert_eq!(filter(1024, 2, 20, 1).size(), 1080);
        assert_eq!(filter(8, 2, 20, 3).expansion(), 4);
    }

    #[test]
    fn an_item_fits_twice_the_bucket_size_then_the_filter_grows() {
        let mut fixed = filter(1024, 2, 20, 0);
        let same = item("x");
        for _ in 0..4 {
            assert_eq!(fixed.insert(same, LIMITS), Inserted::Added);
        }
        assert_eq!(fixed.insert(same, LIMITS), Inserted::NoRoom);
        assert_eq!((fixed.items(), fixed.count(same)), (4, 4));

        let mut growing = filter(1024, 2, 20, 2);
        for _ in 0..5 {
            assert_eq!(growing.insert(same, LIMITS), Inserted::Added);
        }
        assert_eq!(growing.sub_filters().len(), 2);
        assert_eq!(growing.sub_filters()[1].buckets(), 1024);
    }

    const WIDTHS: [Width; 3] = Width::NARROWEST_FIRST;

    fn of_width(width: Width, capacity: u64, bucket_size: u16, expansion: u16) -> CuckooFilter {
        CuckooFilter::try_new(
            CuckooParams { capacity, bucket_size, max_iterations: DEFAULT_MAX_ITERATIONS, expansion, width },
            BUDGET,
        )
        .unwrap()
    }

    /// Adds `prefix0`, `prefix1`, ... until the filter has no room; answers how many it took.
    fn fill(filter: &mut CuckooFilter, prefix: &str) -> usize {
        let mut added = 0;
        while filter.insert(filter.hash(format!("{prefix}{added}").as_bytes()), LIMITS) == Inserted::Added {
            added += 1;
        }
        added
    }

    #[test]
    fn a_failed_eviction_changes_nothing() {
        for width in WIDTHS {
            let mut full = of_width(width, 64, 2, 0);
            let mut added = 0;
            loop {
                let before: Vec<u8> = full.sub_filters()[0].bytes().to_vec();
                if full.insert(full.hash(format!("item{added}").as_bytes()), LIMITS) == Inserted::NoRoom {
                    assert_eq!(full.sub_filters()[0].bytes(), &before[..], "{width:?}");
                    break;
                }
                added += 1;
            }
            for index in 0..added {
                assert!(full.contains(full.hash(format!("item{index}").as_bytes())), "{width:?} item{index}");
            }
        }
    }

    #[test]
    fn wide_filters_store_whole_slots_and_delete_through_a_compaction() {
        for width in WIDTHS {
            let mut chain = of_width(width, 4, 1, 1);
            let items: Vec<CuckooHash> = (0..40).map(|n| chain.hash(format!("i{n}").as_bytes())).collect();
            for &each in &items {
                assert_eq!(chain.insert(each, LIMITS), Inserted::Added);
            }
            assert_eq!(chain.sub_filters()[0].bytes().len(), 4 * width.bytes());
            let occupied =
                chain.sub_filters()[0].bytes().chunks(width.bytes()).filter(|s| s.iter().any(|&b| b != 0));
            assert_eq!(occupied.count(), 4, "{width:?}: every slot holds one fingerprint");
            let filters_before = chain.sub_filters().len();
            for &each in &items[..6] {
                assert!(chain.delete(each));
            }
            assert!(chain.sub_filters().len() < filters_before, "{width:?}: compacted");
            assert_eq!(chain.items(), 34);
            assert!(items[6..].iter().all(|&each| chain.contains(each) && chain.count(each) >= 1));
            assert!(!chain.delete(chain.hash(b"never added")));
        }
    }

    #[test]
    fn the_sub_filter_limit_and_the_budget_stop_growth() {
        for width in WIDTHS {
            let budget = 64 * width.bytes();
            let params = CuckooParams { capacity: 4, bucket_size: 1, max_iterations: 1, expansion: 4, width };
            let mut small_budget = CuckooFilter::try_new(params, budget).unwrap();
            let same = small_budget.hash(b"same");
            let mut added = 0;
            while small_budget.insert(same, Limits { max_bytes: budget, ..LIMITS }) == Inserted::Added {
                added += 1;
            }
            assert!(small_budget.data_bytes() <= budget && added > 0, "{width:?}");
            assert_eq!(
                small_budget.sub_filters().len(),
                2,
                "{width:?}: 4 buckets, then 16; 64 more would pass"
            );
            let mut limited = CuckooFilter::try_new(params, BUDGET).unwrap();
            while limited.insert(same, Limits { max_sub_filters: 3, ..LIMITS }) == Inserted::Added {}
            assert_eq!(limited.sub_filters().len(), 3, "{width:?}");
            let huge = CuckooParams { capacity: u64::MAX, width, ..CuckooParams::default() };
            assert!(CuckooFilter::try_new(huge, usize::MAX).is_err(), "{width:?}");
        }
    }

    /// The bound that `ERROR` promises, measured: per sub-filter, however full. A filter
    /// filled until it refuses an item, then a growing one with several sub-filters, probed
    /// with items never added.
    #[test]
    fn filters_of_the_width_chosen_for_a_rate_stay_within_it_per_sub_filter() {
        let measure = |filter: &CuckooFilter, probes: usize| {
            let hits =
                (0..probes).filter(|n| filter.contains(filter.hash(format!("absent{n}").as_bytes()))).count();
            hits as f64 / probes as f64
        };
        for rate in [0.05, 0.01, 1e-3, 1e-4, 1e-6] {
            let (width, bucket_size) = Width::for_error_rate(rate, None, 1 << 12).unwrap();
            let probes = (200.0 / rate).clamp(200_000.0, 2_000_000.0) as usize;
            let mut full = of_width(width, 1 << 14, bucket_size, 0);
            let added = fill(&mut full, "member");
            let measured = measure(&full, probes);
            eprintln!(
                "rate {rate}: {width:?} x {bucket_size}, refused at {added} items, measured {measured:.2e}"
            );
            assert!(measured <= rate, "rate {rate}: measured {measured}");

            let mut chain = of_width(width, 1 << 12, bucket_size, 1);
            for n in 0..3 << 12 {
                assert_eq!(
                    chain.insert(chain.hash(format!("member{n}").as_bytes()), LIMITS),
                    Inserted::Added
                );
            }
            let sub_filters = chain.sub_filters().len();
            let measured = measure(&chain, probes);
            eprintln!("   {sub_filters} sub-filters: measured {measured:.2e}");
            assert!(sub_filters >= 3 && measured <= rate * sub_filters as f64, "rate {rate}: {measured}");
        }
    }

    /// The loads `ERROR` weighs bucket sizes by, against a filter of 2^20 slots.
    #[test]
    fn sub_filters_fill_at_least_as_far_as_the_choice_assumes() {
        for (bucket_size, load) in fingerprint::LOAD_AT_FIRST_REFUSAL {
            for prefix in ["a", "b", "c"] {
                let mut filter = of_width(Width::Eight, 1 << 20, bucket_size, 0);
                let refused_at = fill(&mut filter, prefix) as f64 / (1 << 20) as f64;
                eprintln!("bucket size {bucket_size}, items {prefix}: {refused_at:.3}");
                assert!(refused_at >= load, "bucket size {bucket_size}: {refused_at} < {load}");
            }
        }
    }
}
