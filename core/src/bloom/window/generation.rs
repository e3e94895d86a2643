//! One span's items: a base link sized for the span's share of the window, and an overflow
//! chain that a burst past it opens.

use super::params::WindowParams;
use crate::bloom::chain::{check_budget, BloomFilter, FilterError};
use crate::bloom::hash::ItemHash;
use crate::bloom::params::Layout;
use crate::bloom::sub_filter::{FirstBlockPattern, SubFilter};

/// The layouts of a generation's base link and of its overflow's first link, each sized once
/// when first needed: they are the same for every generation, and the sizing is a search that
/// costs as much as thousands of adds.
#[derive(Clone, Copy, Default)]
pub struct Layouts {
    base: Option<Layout>,
    overflow: Option<Layout>,
}

impl Layouts {
    pub(super) fn base(&mut self, params: &WindowParams) -> Result<Layout, FilterError> {
        sized(&mut self.base, params.generation_capacity(), params.base_error_rate())
    }

    /// Bytes of a base link, once sized.
    pub(super) fn base_bytes(&self) -> Option<u64> {
        self.base.map(|layout| layout.bits() / 8)
    }

    fn overflow(&mut self, params: &WindowParams) -> Result<Layout, FilterError> {
        sized(&mut self.overflow, params.overflow_capacity(), params.overflow_first_link_error_rate())
    }
}

fn sized(layout: &mut Option<Layout>, capacity: u64, error_rate: f64) -> Result<Layout, FilterError> {
    match *layout {
        Some(layout) => Ok(layout),
        None => Ok(*layout.insert(Layout::for_capacity(capacity, error_rate).ok_or(FilterError::TooLarge)?)),
    }
}

/// A generation's filters and its count of latest adds.
///
/// The base link is a fixed-size link at [`WindowParams::base_error_rate`]: what a steady
/// stream fills. It is held bare, not as a filter of one link, so that a lookup reaches its
/// bits in one step fewer and each of the window's slots for a generation is smaller. When it
/// is full (a burst, or an unevenness past what the pooled rates allow) and generations
/// scale, an overflow opens: an ordinary scalable filter of this crate at
/// [`WindowParams::overflow_error_rate`], starting at [`WindowParams::overflow_capacity`] (and
/// what the base was held short of, where pooled rates held it short of its capacity). The
/// two rates add up to the generation's share of the filter's rate, whatever the overflow
/// grows to; how many items the base takes, the live generations' pooled shares decide.
pub struct Generation {
    pub(super) base: SubFilter,
    /// Boxed: most generations never open one, and each of the window's slots for a
    /// generation (reserved whether filled or not) would otherwise hold its room.
    pub(super) overflow: Option<Box<BloomFilter>>,
    /// Items whose latest add landed here: adding an item that an older generation holds
    /// moves it here, and this count with it. Their sum is the window's cardinality.
    pub(super) latest: u64,
}

impl Generation {
    /// An empty generation within `max_bytes`.
    pub(super) fn open(
        params: &WindowParams,
        layouts: &mut Layouts,
        max_bytes: usize,
    ) -> Result<Generation, FilterError> {
        let layout = layouts.base(params)?;
        check_budget(layout.bits() / 8, 0, max_bytes)?;
        let base = SubFilter::try_new(params.generation_capacity(), params.base_error_rate(), layout)?;
        Ok(Generation { base, overflow: None, latest: 0 })
    }

    /// Adds an item: `Ok(true)` when this generation did not hold it. The base takes items
    /// until it holds `base_limit` (its capacity, or what the pooled rates allow); the overflow
    /// takes them after. `max_bytes` is what this generation may take in all, asked for only
    /// when the overflow opens or grows. The item's first-block pattern is made here, or taken
    /// from `pattern`, and left there for the lookups of the older generations that follow.
    #[inline]
    pub(super) fn insert_hash(
        &mut self,
        hash: &ItemHash,
        pattern: &mut FirstBlockPattern,
        base_limit: u64,
        params: &WindowParams,
        layouts: &mut Layouts,
        max_bytes: impl FnOnce() -> usize,
    ) -> Result<bool, FilterError> {
        let Generation { base, overflow, .. } = self;
        if let Some(overflow) = overflow {
            if base.contains_patterned(hash, pattern) {
                return Ok(false);
            }
            return overflow.insert_hash(hash, || max_bytes().saturating_sub(base.byte_len()));
        }
        if base.items() < base_limit {
            return Ok(base.insert_patterned(hash, pattern));
        }
        // A full base refuses only an item it does not hold.
        if base.contains_patterned(hash, pattern) {
            return Ok(false);
        }
        if params.expansion() == 0 {
            return Err(FilterError::Full);
        }
        let budget = max_bytes().saturating_sub(base.byte_len());
        // A base held short of its capacity (by generations that borrowed) leaves its overflow
        // what it did not take, so that the generation holds as much before a second link.
        let shortfall = base.capacity().saturating_sub(base.items());
        let (capacity, rate) = (params.overflow_capacity(), params.overflow_first_link_error_rate());
        let (capacity, layout) = if shortfall == 0 {
            (capacity, layouts.overflow(params)?)
        } else {
            let capacity = capacity.saturating_add(shortfall);
            (capacity, Layout::for_capacity(capacity, rate).ok_or(FilterError::TooLarge)?)
        };
        let opened = BloomFilter::try_with_first_link(capacity, rate, layout, params.expansion(), budget)?;
        overflow.insert(Box::new(opened)).insert_hash(hash, || budget)
    }

    /// Whether the generation (probably) holds the item, tested with its first-block pattern
    /// (made by the first link asked, shared by every generation).
    #[inline]
    pub(super) fn contains(&self, hash: &ItemHash, pattern: &mut FirstBlockPattern) -> bool {
        self.base.contains_patterned(hash, pattern)
            || self.overflow.as_deref().is_some_and(|overflow| overflow.contains_patterned(hash, pattern))
    }

    /// Starts loading the item's cache lines in every link: its first block only
    /// (`every_block` false) where one lookup waits on them at once, since a lookup of an item
    /// never added rarely gets past it; all of them where a batch's loads overlap.
    #[inline]
    pub(super) fn prefetch(&self, hash: &ItemHash, every_block: bool) {
        if every_block {
            self.base.prefetch(hash);
        } else {
            self.base.prefetch_first_block(hash);
        }
        if let Some(overflow) = self.overflow.as_deref() {
            if every_block {
                overflow.prefetch(hash);
            } else {
                overflow.prefetch_first_blocks(hash);
            }
        }
    }

    /// Items whose latest add landed in this generation (approximately: a false positive
    /// can credit an older generation wrongly).
    pub fn latest_items(&self) -> u64 {
        self.latest
    }

    /// Items its links took (adds that answered 1 here).
    pub fn items(&self) -> u64 {
        self.base.items() + self.overflow.as_deref().map_or(0, BloomFilter::items)
    }

    /// The base link.
    pub fn base(&self) -> &SubFilter {
        &self.base
    }

    /// The overflow, once a burst opened it.
    pub fn overflow(&self) -> Option<&BloomFilter> {
        self.overflow.as_deref()
    }

    /// Its links: the base, then the overflow's, oldest first.
    pub fn links(&self) -> impl Iterator<Item = &SubFilter> {
        std::iter::once(&self.base).chain(self.overflow.as_deref().into_iter().flat_map(BloomFilter::links))
    }

    /// As [`links`](Self::links), writable: where a dump's chunks are loaded.
    pub(super) fn links_mut(&mut self) -> impl Iterator<Item = &mut SubFilter> {
        std::iter::once(&mut self.base)
            .chain(self.overflow.as_deref_mut().into_iter().flat_map(BloomFilter::links_mut))
    }

    /// Links in all: the base, and the overflow's.
    pub fn link_count(&self) -> usize {
        1 + self.overflow.as_deref().map_or(0, |overflow| overflow.links().len())
    }

    /// Bytes of bit arrays alone.
    pub fn bits_bytes(&self) -> usize {
        self.base.byte_len() + self.overflow.as_deref().map_or(0, BloomFilter::bits_bytes)
    }

    /// What dropping it returns: its filters' allocations.
    pub fn memory_bytes(&self) -> usize {
        // The base link's struct is in the window's slot for the generation (counted there);
        // its bits, and the whole boxed overflow, are counted here.
        self.base.byte_len() + self.overflow.as_deref().map_or(0, BloomFilter::memory_bytes)
    }

    pub(super) fn try_clone(&self) -> Result<Generation, FilterError> {
        let overflow = self.overflow.as_deref().map(BloomFilter::try_clone).transpose()?.map(Box::new);
        Ok(Generation { base: self.base.try_clone()?, overflow, latest: self.latest })
    }
}
