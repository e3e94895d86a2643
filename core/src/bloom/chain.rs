//! The scalable Bloom filter: a chain of sub-filters, each larger and stricter than the last.
//!
//! Invariants, relied on by every method and checked by the decoder:
//! - there is at least one link;
//! - link `i + 1` has `expansion` times the capacity and half the error rate of link `i`;
//! - every link but the newest is full, and only the newest receives items;
//! - a non-scaling filter (expansion 0) has exactly one link.

use super::hash::ItemHash;
use super::params::{Layout, TIGHTENING_RATIO};
use super::sub_filter::{FirstBlockPattern, SubFilter};
use crate::bytes::AllocationFailed;

/// Why an item could not be added or a filter not created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterError {
    /// A non-scaling filter holds `capacity` items already.
    Full,
    /// The filter would exceed the memory budget, or its size does not fit in memory at all.
    TooLarge,
    /// The allocator had no memory for it.
    OutOfMemory,
}

impl From<AllocationFailed> for FilterError {
    fn from(_: AllocationFailed) -> FilterError {
        FilterError::OutOfMemory
    }
}

/// The longest chain. Each link halves the error rate, so this is far past any real need
/// (2^-128 of the requested rate); the limit keeps headers small and decoding bounded.
pub const MAX_LINKS: usize = 128;

/// A scalable Bloom filter in this module's blocked layout, kept to the invariants above.
pub struct BloomFilter {
    links: Vec<SubFilter>,
    /// Growth factor of the next link; 0 for a non-scaling filter.
    expansion: u32,
    /// The layout of the next link, once computed: when the budget refuses it, every later
    /// add would otherwise size it again.
    next_layout: Option<Layout>,
}

impl BloomFilter {
    /// A new filter with one empty link. Scaling filters start at half the requested error
    /// rate, so that the whole chain, however long, stays under it; a non-scaling filter uses
    /// the full rate. Parameters are assumed checked (see [`super::params`]); the memory
    /// budget `max_bytes` is checked here, before anything is allocated.
    pub fn try_new(
        capacity: u64,
        error_rate: f64,
        expansion: u32,
        max_bytes: usize,
    ) -> Result<BloomFilter, FilterError> {
        let first_rate = if expansion == 0 { error_rate } else { error_rate * TIGHTENING_RATIO };
        let layout = Layout::for_capacity(capacity, first_rate).ok_or(FilterError::TooLarge)?;
        BloomFilter::try_with_first_link(capacity, first_rate, layout, expansion, max_bytes)
    }

    /// A new filter whose first link has the rate and layout given, sized already: a caller
    /// that makes many filters alike sizes them once (the sizing is a search that costs as
    /// much as thousands of adds).
    pub(crate) fn try_with_first_link(
        capacity: u64,
        first_rate: f64,
        layout: Layout,
        expansion: u32,
        max_bytes: usize,
    ) -> Result<BloomFilter, FilterError> {
        check_budget(layout.bits() / 8, 0, max_bytes)?;
        let mut links = Vec::new();
        links.try_reserve_exact(1).map_err(|_| FilterError::OutOfMemory)?;
        links.push(SubFilter::try_new(capacity, first_rate, layout)?);
        Ok(BloomFilter { links, expansion, next_layout: None })
    }

    /// A filter from decoded links, which the decoder has checked against the invariants.
    pub(super) fn from_links(links: Vec<SubFilter>, expansion: u32) -> BloomFilter {
        BloomFilter { links, expansion, next_layout: None }
    }

    /// The filter split after its first link: that link alone, and the links after it, if
    /// any, as a filter of the same expansion (their invariants are the chain's). How a
    /// windowed generation's base link is taken from its record, and, in the first encoding,
    /// its overflow too.
    pub(super) fn split_first(self) -> Result<(SubFilter, Option<BloomFilter>), FilterError> {
        let mut links = self.links.into_iter();
        let first = links.next().ok_or(FilterError::TooLarge)?;
        let mut rest = Vec::new();
        rest.try_reserve_exact(links.len()).map_err(|_| FilterError::OutOfMemory)?;
        rest.extend(links);
        let rest = (!rest.is_empty()).then(|| BloomFilter::from_links(rest, self.expansion));
        Ok((first, rest))
    }

    /// A deep copy; only [`FilterError::OutOfMemory`] can refuse it.
    pub fn try_clone(&self) -> Result<BloomFilter, FilterError> {
        let mut links = Vec::new();
        links.try_reserve_exact(self.links.len()).map_err(|_| FilterError::OutOfMemory)?;
        for link in &self.links {
            links.push(link.try_clone()?);
        }
        Ok(BloomFilter { links, expansion: self.expansion, next_layout: self.next_layout })
    }

    /// Adds an item. `Ok(true)` when it was not (probably) present and is now counted,
    /// `Ok(false)` when it already tested present, in which case nothing changes.
    pub fn insert(&mut self, item: &[u8], max_bytes: usize) -> Result<bool, FilterError> {
        self.insert_hash(&ItemHash::of(item), || max_bytes)
    }

    /// As [`insert`](Self::insert), for a hash computed already. The memory budget is asked
    /// for only when the filter has to grow, which is rare.
    #[inline]
    pub fn insert_hash(
        &mut self,
        hash: &ItemHash,
        max_bytes: impl FnOnce() -> usize,
    ) -> Result<bool, FilterError> {
        let last = self.links.len() - 1;
        if self.links[..last].iter().any(|link| link.contains(hash)) {
            return Ok(false);
        }
        if self.links[last].is_full() {
            if self.links[last].contains(hash) {
                return Ok(false);
            }
            self.grow(max_bytes())?;
        }
        let newest = self.links.len() - 1;
        Ok(self.links[newest].insert(hash))
    }

    /// Whether the item (probably) was added: `false` is certain; for items never added,
    /// `true` comes at most about as often as the requested error rate.
    pub fn contains(&self, item: &[u8]) -> bool {
        self.contains_hash(&ItemHash::of(item))
    }

    /// Newest first: it is the largest link, so the likeliest to hold a recent item.
    #[inline]
    pub fn contains_hash(&self, hash: &ItemHash) -> bool {
        self.links.iter().rev().any(|link| link.contains(hash))
    }

    /// As [`contains_hash`](Self::contains_hash), with the item's first-block pattern
    /// shared with other filters ([`SubFilter::contains_patterned`]), inlined as it is.
    #[allow(clippy::inline_always, reason = "see SubFilter::contains_patterned")]
    #[inline(always)]
    pub fn contains_patterned(&self, hash: &ItemHash, pattern: &mut FirstBlockPattern) -> bool {
        // A plain loop: the iterator adapter's fold is not always inlined, and this runs for
        // every generation of a lookup.
        for link in self.links.iter().rev() {
            if link.contains_patterned(hash, pattern) {
                return true;
            }
        }
        false
    }

    /// Starts loading the cache lines an item will touch, so that a batch of lookups waits
    /// for memory once instead of once per item.
    #[inline]
    pub fn prefetch(&self, hash: &ItemHash) {
        for link in &self.links {
            link.prefetch(hash);
        }
    }

    /// As [`prefetch`](Self::prefetch), the first of the item's blocks only: all a lookup
    /// of an item never added needs, most of the time, where an item has several.
    #[inline]
    pub fn prefetch_first_blocks(&self, hash: &ItemHash) {
        for link in &self.links {
            link.prefetch_first_block(hash);
        }
    }

    fn grow(&mut self, max_bytes: usize) -> Result<(), FilterError> {
        if self.expansion == 0 {
            return Err(FilterError::Full);
        }
        if self.links.len() >= MAX_LINKS {
            return Err(FilterError::TooLarge);
        }
        let newest = self.newest();
        let capacity =
            newest.capacity().checked_mul(u64::from(self.expansion)).ok_or(FilterError::TooLarge)?;
        let error_rate = newest.error_rate() * TIGHTENING_RATIO;
        let layout = match self.next_layout {
            Some(layout) => layout,
            None => Layout::for_capacity(capacity, error_rate).ok_or(FilterError::TooLarge)?,
        };
        self.next_layout = Some(layout);
        check_budget(layout.bits() / 8, self.bits_bytes(), max_bytes)?;
        // Exact: the spare capacity would count in MEMORY USAGE and differ after a reload.
        self.links.try_reserve_exact(1).map_err(|_| FilterError::OutOfMemory)?;
        self.links.push(SubFilter::try_new(capacity, error_rate, layout)?);
        self.next_layout = None;
        Ok(())
    }

    fn newest(&self) -> &SubFilter {
        &self.links[self.links.len() - 1]
    }

    /// The links, oldest first.
    pub fn links(&self) -> &[SubFilter] {
        &self.links
    }

    /// The links, oldest first, writable: for loading a dump's bits into them.
    pub fn links_mut(&mut self) -> &mut [SubFilter] {
        &mut self.links
    }

    /// `None` for a non-scaling filter.
    pub fn expansion(&self) -> Option<u32> {
        (self.expansion > 0).then_some(self.expansion)
    }

    /// The expansion as stored: 0 for a non-scaling filter.
    pub fn expansion_factor(&self) -> u32 {
        self.expansion
    }

    /// Items added (adds that answered 1).
    pub fn items(&self) -> u64 {
        self.links.iter().map(SubFilter::items).sum()
    }

    /// Items the links were sized for, together.
    pub fn capacity(&self) -> u64 {
        self.links.iter().map(SubFilter::capacity).sum()
    }

    /// Bytes of bit arrays alone.
    pub fn bits_bytes(&self) -> usize {
        self.links.iter().map(SubFilter::byte_len).sum()
    }

    /// Everything this filter holds allocated: what MEMORY USAGE and BF.INFO report.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<BloomFilter>()
            + self.links.capacity() * std::mem::size_of::<SubFilter>()
            + self.bits_bytes()
    }
}

/// Whether a new link of `bytes` fits in what is left of the budget.
pub(crate) fn check_budget(bytes: u64, bytes_in_use: usize, max_bytes: usize) -> Result<(), FilterError> {
    let fits = usize::try_from(bytes)
        .ok()
        .and_then(|bytes| bytes.checked_add(bytes_in_use))
        .is_some_and(|total| total <= max_bytes);
    if fits {
        Ok(())
    } else {
        Err(FilterError::TooLarge)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNLIMITED: usize = usize::MAX;

    fn item(n: u64) -> [u8; 8] {
        n.to_le_bytes()
    }

    #[test]
    fn a_new_item_is_added_once() {
        let mut filter = BloomFilter::try_new(100, 0.01, 2, UNLIMITED).unwrap();
        assert_eq!(filter.insert(b"a", UNLIMITED), Ok(true));
        assert_eq!(filter.insert(b"a", UNLIMITED), Ok(false));
        assert!(filter.contains(b"a"));
        assert_eq!(filter.items(), 1);
    }

    #[test]
    fn scaling_filters_grow_by_the_expansion_and_tighten_the_rate() {
        let mut filter = BloomFilter::try_new(10, 0.01, 3, UNLIMITED).unwrap();
        for n in 0..1000 {
            filter.insert(&item(n), UNLIMITED).unwrap();
        }
        let links = filter.links();
        assert!(links.len() >= 4);
        for pair in links.windows(2) {
            assert_eq!(pair[1].capacity(), pair[0].capacity() * 3);
            assert_eq!(pair[1].error_rate(), pair[0].error_rate() / 2.0);
            assert!(pair[0].is_full());
        }
        assert_eq!(links[0].error_rate(), 0.005);
        assert_eq!(filter.capacity(), links.iter().map(SubFilter::capacity).sum::<u64>());
    }

    #[test]
    fn a_full_non_scaling_filter_refuses_new_items_but_still_answers() {
        let mut filter = BloomFilter::try_new(5, 0.01, 0, UNLIMITED).unwrap();
        assert_eq!(filter.links()[0].error_rate(), 0.01);
        let mut added = 0;
        let mut n = 0;
        while added < 5 {
            if filter.insert(&item(n), UNLIMITED).unwrap() {
                added += 1;
            }
            n += 1;
        }
        let fresh = (n..n + 1000).find(|&m| !filter.contains(&item(m))).unwrap();
        assert_eq!(filter.insert(&item(fresh), UNLIMITED), Err(FilterError::Full));
        assert_eq!(filter.items(), 5);
        assert_eq!(filter.insert(&item(0), UNLIMITED), Ok(false), "a present item is no error");
    }

    #[test]
    fn the_budget_is_checked_before_allocating() {
        assert_eq!(BloomFilter::try_new(1 << 30, 1e-7, 2, 1 << 30).err(), Some(FilterError::TooLarge));
        let mut filter = BloomFilter::try_new(100, 0.01, 2, 4096).unwrap();
        let mut refused = None;
        for n in 0..10_000 {
            if let Err(error) = filter.insert(&item(n), 4096) {
                refused = Some(error);
                break;
            }
        }
        assert_eq!(refused, Some(FilterError::TooLarge));
        assert!(filter.bits_bytes() <= 4096);
    }

    #[test]
    fn expansion_one_grows_link_after_link_up_to_the_limit() {
        let mut filter = BloomFilter::try_new(1, 0.01, 1, UNLIMITED).unwrap();
        let mut n = 0;
        while filter.links().len() < MAX_LINKS {
            assert!(filter.insert(&item(n), UNLIMITED).is_ok(), "link {}", filter.links().len());
            n += 1;
        }
        let refused = (n..n + 1000).map(|m| filter.insert(&item(m), UNLIMITED)).find(Result::is_err);
        assert_eq!(refused, Some(Err(FilterError::TooLarge)));
    }

    #[test]
    fn memory_is_the_same_after_a_clone() {
        let mut filter = BloomFilter::try_new(10, 0.01, 2, UNLIMITED).unwrap();
        for n in 0..100 {
            filter.insert(&item(n), UNLIMITED).unwrap();
        }
        assert_eq!(filter.try_clone().unwrap().memory_bytes(), filter.memory_bytes());
    }

    #[test]
    fn clones_answer_the_same() {
        let mut filter = BloomFilter::try_new(50, 0.01, 2, UNLIMITED).unwrap();
        for n in 0..200 {
            filter.insert(&item(n), UNLIMITED).unwrap();
        }
        let copy = filter.try_clone().unwrap();
        assert_eq!(copy.items(), filter.items());
        assert!((0..200).all(|n| copy.contains(&item(n))));
        assert_eq!(copy.links().len(), filter.links().len());
    }

    #[test]
    fn memory_counts_the_bits() {
        let filter = BloomFilter::try_new(1_000_000, 0.01, 2, UNLIMITED).unwrap();
        assert!(filter.memory_bytes() > filter.bits_bytes());
        assert!(filter.memory_bytes() < filter.bits_bytes() + 1024);
    }
}
