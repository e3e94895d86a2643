//! RedisBloom's scalable filter: a chain of classic links, grown and hashed exactly as
//! RedisBloom grows and hashes them, so that a filter taken over from it stays, command for
//! command, the filter RedisBloom would hold.
//!
//! Invariants, checked by [`ChainFields::check_link`] when decoding and kept by `insert`:
//! - at least one link, at most [`MAX_LINKS`];
//! - link `i + 1` has half the error rate of link `i` and (at least, when rounded) `growth`
//!   times its capacity; every link but the newest is full;
//! - a non-scaling chain has one link;
//! - `items` is the sum of the links' items.

use super::link::{Link, LinkFields, OPTION_FORCE_64, OPTION_NO_ROUND, OPTION_NO_SCALING};
use crate::bloom::chain::{check_budget, FilterError};
use crate::murmur::HashPair;

/// Longest chain accepted. Each link halves the error rate, so about 1075 links take any
/// rate RedisBloom accepts down to the smallest f64; a longer chain cannot exist.
pub const MAX_LINKS: usize = 1100;

/// The growth stored with a non-scaling filter: RedisBloom keeps its default there.
pub const NON_SCALING_GROWTH: u32 = 2;
/// The probes a batch asks the cache lines of, per item: every link of a chain grown a few
/// times at any rate (seven hashes at 1%, fourteen at 0.01%).
const PREFETCHED_PROBES: u32 = 64;

/// The chain's stored description, without its links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainFields {
    /// Items added over all links (adds that answered 1): the sum of the links' items.
    pub items: u64,
    /// Option bits: [`OPTION_NO_ROUND`], [`OPTION_FORCE_64`], [`OPTION_NO_SCALING`].
    pub options: u32,
    /// Capacity factor from each link to the next; [`NON_SCALING_GROWTH`] when not scaling.
    pub growth: u32,
}

impl ChainFields {
    /// Whether the chain may grow: [`OPTION_NO_SCALING`] is clear.
    pub fn is_scaling(&self) -> bool {
        self.options & OPTION_NO_SCALING == 0
    }

    /// Checks the fields themselves and the number of links they come with. Any growth is
    /// taken: RedisBloom bounds it only from below (a 64-bit `EXPANSION` is even stored
    /// truncated, so a growth of 0 exists), and a growth that cannot make a next link makes
    /// an add that would need one answer an error.
    pub fn check(&self, link_count: u64) -> Result<(), &'static str> {
        if self.options & !super::link::KNOWN_OPTIONS != 0 {
            return Err("unknown options");
        }
        if link_count == 0 || link_count > MAX_LINKS as u64 || (!self.is_scaling() && link_count != 1) {
            return Err("impossible number of links");
        }
        Ok(())
    }

    /// Checks a link description, and how it follows the one before it.
    pub fn check_link(&self, link: &LinkFields, previous: Option<&LinkFields>) -> Result<(), &'static str> {
        link.check()?;
        let Some(previous) = previous else { return Ok(()) };
        let grown = previous.entries.checked_mul(u64::from(self.growth));
        let capacity_follows = match grown {
            Some(grown) if self.options & OPTION_NO_ROUND != 0 => link.entries == grown,
            Some(grown) => link.entries >= grown,
            None => false,
        };
        if !capacity_follows || link.error != previous.error * 0.5 || previous.items != previous.entries {
            return Err("links do not form a chain");
        }
        Ok(())
    }
}

/// A scalable Bloom filter in RedisBloom's format: its stored fields and its links, oldest
/// first, kept to the invariants above.
pub struct Chain {
    fields: ChainFields,
    links: Vec<Link>,
}

impl Chain {
    /// A new filter as RedisBloom's BF.RESERVE makes it: 64-bit hashes, sizes not rounded, a
    /// first link at half the rate when scaling. Parameters are assumed checked; the memory
    /// budget is checked here, before anything is allocated.
    pub fn try_new(
        capacity: u64,
        error_rate: f64,
        expansion: u32,
        max_bytes: usize,
    ) -> Result<Chain, FilterError> {
        let scaling = expansion > 0;
        let mut options = OPTION_NO_ROUND | OPTION_FORCE_64;
        if !scaling {
            options |= OPTION_NO_SCALING;
        }
        let growth = if scaling { expansion } else { NON_SCALING_GROWTH };
        let first_rate = if scaling { error_rate * 0.5 } else { error_rate };
        let link = LinkFields::sized(capacity, first_rate, options).ok_or(FilterError::TooLarge)?;
        check_budget(link.bytes, 0, max_bytes)?;
        let mut links = Vec::new();
        links.try_reserve_exact(1).map_err(|_| FilterError::OutOfMemory)?;
        links.push(Link::try_new(link)?);
        Ok(Chain { fields: ChainFields { items: 0, options, growth }, links })
    }

    /// A chain from decoded links, which the decoder has checked against the invariants.
    pub(super) fn from_links(fields: ChainFields, links: Vec<Link>) -> Chain {
        Chain { fields, links }
    }

    /// A deep copy; only [`FilterError::OutOfMemory`] can refuse it.
    pub fn try_clone(&self) -> Result<Chain, FilterError> {
        let mut links = Vec::new();
        links.try_reserve_exact(self.links.len()).map_err(|_| FilterError::OutOfMemory)?;
        for link in &self.links {
            links.push(link.try_clone()?);
        }
        Ok(Chain { fields: self.fields, links })
    }

    /// The item's hash pair: MurmurHash64A under [`OPTION_FORCE_64`], else the 32-bit
    /// MurmurHash2.
    #[inline]
    pub fn hash(&self, item: &[u8]) -> HashPair {
        if self.fields.options & OPTION_FORCE_64 != 0 {
            HashPair::wide(item)
        } else {
            HashPair::narrow(item)
        }
    }

    /// Whether any link, newest first, says the item is present.
    #[inline]
    pub fn contains_hash(&self, hash: &HashPair) -> bool {
        self.links.iter().rev().any(|link| link.contains(hash))
    }

    /// Asks the CPU to start loading the cache lines of the item's probes, newest link first
    /// (where a lookup starts), up to [`PREFETCHED_PROBES`] in all. A lookup leaves a link at
    /// its first clear bit, and a long chain of links with hundreds of hashes each (one grown
    /// a thousand times, its rate halving each time) spent a millisecond an item asking for
    /// lines no lookup read: 13 s for a BF.MEXISTS of 10,000 items.
    #[inline]
    pub fn prefetch(&self, hash: &HashPair) {
        let mut left = PREFETCHED_PROBES;
        for link in self.links.iter().rev() {
            let Some(after) = left.checked_sub(link.fields().hashes) else { break };
            left = after;
            link.prefetch(hash);
        }
    }

    /// Adds an item as RedisBloom does: `Ok(false)` when any link says it is present;
    /// otherwise into the newest link, after adding a link when that one is full.
    pub fn insert_hash(
        &mut self,
        hash: &HashPair,
        max_bytes: impl FnOnce() -> usize,
    ) -> Result<bool, FilterError> {
        if self.contains_hash(hash) {
            return Ok(false);
        }
        if self.newest().is_full() {
            self.grow(max_bytes())?;
        }
        if let Some(newest) = self.links.last_mut() {
            newest.insert(hash);
            self.fields.items += 1;
        }
        Ok(true)
    }

    fn grow(&mut self, max_bytes: usize) -> Result<(), FilterError> {
        if !self.fields.is_scaling() {
            return Err(FilterError::Full);
        }
        if self.links.len() >= MAX_LINKS {
            return Err(FilterError::TooLarge);
        }
        let newest = self.newest().fields();
        let capacity =
            newest.entries.checked_mul(u64::from(self.fields.growth)).ok_or(FilterError::TooLarge)?;
        // `sized` refuses a capacity of 0 (a growth of 0).
        let link = LinkFields::sized(capacity, newest.error * 0.5, self.fields.options)
            .ok_or(FilterError::TooLarge)?;
        check_budget(link.bytes, self.bits_bytes(), max_bytes)?;
        self.links.try_reserve_exact(1).map_err(|_| FilterError::OutOfMemory)?;
        self.links.push(Link::try_new(link)?);
        Ok(())
    }

    fn newest(&self) -> &Link {
        &self.links[self.links.len() - 1]
    }

    /// 64 or 32: the MurmurHash width, as BF.DEBUG reports it.
    pub fn hash_width(&self) -> u32 {
        if self.fields.options & OPTION_FORCE_64 != 0 {
            64
        } else {
            32
        }
    }

    /// The stored fields, as the dump header carries them.
    pub fn fields(&self) -> &ChainFields {
        &self.fields
    }

    /// The links, oldest first.
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// The links, oldest first, writable: for loading a dump's bits into them.
    pub fn links_mut(&mut self) -> &mut [Link] {
        &mut self.links
    }

    /// The number of items, as RedisBloom counts them (adds that answered 1).
    pub fn items(&self) -> u64 {
        self.fields.items
    }

    /// Items the links were sized for, together; saturates rather than overflows.
    pub fn capacity(&self) -> u64 {
        self.links.iter().map(|link| link.fields().entries).fold(0, u64::saturating_add)
    }

    /// Records `growth` in a non-scaling chain's fields, where RedisBloom's BF.INSERT keeps
    /// the EXPANSION it was given beside NONSCALING (its header and record carry it; the chain
    /// never grows). A scaling chain keeps its own.
    pub fn record_growth(&mut self, growth: u32) {
        if !self.fields.is_scaling() {
            self.fields.growth = growth;
        }
    }

    /// `None` for a non-scaling filter.
    pub fn expansion(&self) -> Option<u32> {
        self.fields.is_scaling().then_some(self.fields.growth)
    }

    /// Bytes of bit arrays alone.
    pub fn bits_bytes(&self) -> usize {
        self.links.iter().map(|link| link.bytes().len()).sum()
    }

    /// What RedisBloom reports as a filter's `Size`: its chain and link structures (32 and 64
    /// bytes on 64-bit servers) and the bit arrays.
    pub fn reported_size(&self) -> u64 {
        32 + 64 * self.links.len() as u64 + self.bits_bytes() as u64
    }

    /// Everything this filter holds allocated: what MEMORY USAGE reports.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Chain>() + self.links.capacity() * std::mem::size_of::<Link>() + self.bits_bytes()
    }
}
