//! One span's items: a base link sized for the span's share of the window, and an overflow
//! chain that a burst past it opens.

use super::params::WindowParams;
use crate::bloom::chain::{BloomFilter, FilterError};
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
/// The base link is a non-scaling filter at [`WindowParams::base_error_rate`]: what a steady
/// stream fills. When it is full (a burst, or an unevenness past the headroom) and generations
/// scale, an overflow opens: an ordinary scalable filter of this crate at
/// [`WindowParams::overflow_error_rate`], starting at [`WindowParams::overflow_capacity`]. The
/// two rates add up to the generation's share of the filter's rate, whatever the overflow grows
/// to.
pub struct Generation {
    pub(super) base: BloomFilter,
    pub(super) overflow: Option<BloomFilter>,
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
        let base = BloomFilter::try_with_first_link(
            params.generation_capacity(),
            params.base_error_rate(),
            layouts.base(params)?,
            0,
            max_bytes,
        )?;
        Ok(Generation { base, overflow: None, latest: 0 })
    }

    /// Adds an item: `Ok(true)` when this generation did not hold it. `max_bytes` is what this
    /// generation may take in all, asked for only when the overflow opens or grows.
    #[inline]
    pub(super) fn insert_hash(
        &mut self,
        hash: &ItemHash,
        params: &WindowParams,
        layouts: &mut Layouts,
        max_bytes: impl FnOnce() -> usize,
    ) -> Result<bool, FilterError> {
        let Generation { base, overflow, .. } = self;
        let overflow = match overflow {
            Some(overflow) if base.contains_hash(hash) => return Ok(false),
            Some(overflow) => overflow,
            // A full base answers `Full` only for an item it does not hold.
            None => match base.insert_hash(hash, || 0) {
                Err(FilterError::Full) if params.expansion() > 0 => {
                    let budget = max_bytes().saturating_sub(base.bits_bytes());
                    let opened = BloomFilter::try_with_first_link(
                        params.overflow_capacity(),
                        params.overflow_first_link_error_rate(),
                        layouts.overflow(params)?,
                        params.expansion(),
                        budget,
                    )?;
                    return overflow.insert(opened).insert_hash(hash, || budget);
                }
                answer => return answer,
            },
        };
        overflow.insert_hash(hash, || max_bytes().saturating_sub(base.bits_bytes()))
    }

    /// Whether the generation (probably) holds the item, tested with its first-block pattern
    /// (made by the first link asked, shared by every generation).
    #[inline]
    pub(super) fn contains(&self, hash: &ItemHash, pattern: &mut FirstBlockPattern) -> bool {
        self.base.contains_patterned(hash, pattern)
            || self.overflow.as_ref().is_some_and(|overflow| overflow.contains_patterned(hash, pattern))
    }

    /// Starts loading the item's cache lines in every link: its first block only
    /// (`every_block` false) where one lookup waits on them at once, since a lookup of an item
    /// never added rarely gets past it; all of them where a batch's loads overlap.
    #[inline]
    pub(super) fn prefetch(&self, hash: &ItemHash, every_block: bool) {
        for filter in std::iter::once(&self.base).chain(&self.overflow) {
            if every_block {
                filter.prefetch(hash);
            } else {
                filter.prefetch_first_blocks(hash);
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
        self.base.items() + self.overflow.as_ref().map_or(0, BloomFilter::items)
    }

    /// The base link's filter.
    pub fn base(&self) -> &BloomFilter {
        &self.base
    }

    /// The overflow, once a burst opened it.
    pub fn overflow(&self) -> Option<&BloomFilter> {
        self.overflow.as_ref()
    }

    /// Its links: the base, then the overflow's, oldest first.
    pub fn links(&self) -> impl Iterator<Item = &SubFilter> {
        self.base.links().iter().chain(self.overflow.iter().flat_map(BloomFilter::links))
    }

    /// As [`links`](Self::links), writable: where a dump's chunks are loaded.
    pub(super) fn links_mut(&mut self) -> impl Iterator<Item = &mut SubFilter> {
        self.base.links_mut().iter_mut().chain(self.overflow.iter_mut().flat_map(BloomFilter::links_mut))
    }

    /// Links in all: the base, and the overflow's.
    pub fn link_count(&self) -> usize {
        self.base.links().len() + self.overflow.as_ref().map_or(0, |overflow| overflow.links().len())
    }

    /// Bytes of bit arrays alone.
    pub fn bits_bytes(&self) -> usize {
        self.base.bits_bytes() + self.overflow.as_ref().map_or(0, BloomFilter::bits_bytes)
    }

    /// What dropping it returns: its filters' allocations.
    pub fn memory_bytes(&self) -> usize {
        let held = |filter: &BloomFilter| filter.memory_bytes() - std::mem::size_of::<BloomFilter>();
        held(&self.base) + self.overflow.as_ref().map_or(0, held)
    }

    pub(super) fn try_clone(&self) -> Result<Generation, FilterError> {
        let overflow = self.overflow.as_ref().map(BloomFilter::try_clone).transpose()?;
        Ok(Generation { base: self.base.try_clone()?, overflow, latest: self.latest })
    }
}
