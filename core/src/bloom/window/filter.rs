//! The windowed filter: generations of Bloom filters on the shared grid of spans
//! ([`crate::window::Generations`]), rotated by the caller's clock.

use super::generation::{Generation, Layouts};
use super::params::WindowParams;
use super::pool;
use crate::bloom::chain::FilterError;
use crate::bloom::hash::ItemHash;
use crate::bloom::params::{SIZING_MARGIN, SMALLEST_SIZED_RATE};
use crate::bloom::sub_filter::{FirstBlockPattern, SubFilter};
use crate::window::{Generations, Rotation, Stamped};

/// Bit arrays up to this size likely sit in the core's caches (as Count-Min's counters do).
const CACHED_BYTES: u64 = 256 << 10;

/// A Bloom filter that forgets: items are kept in generations, one per span of
/// `window / generations` milliseconds, and a generation is dropped once everything in it is
/// older than the window. See the module documentation for the promises and the sizing.
///
/// The filter never reads a clock: [`rotate`](Self::rotate) takes the time, and adds go to the
/// span the last rotation set. The result of a rotation depends only on the filter and the
/// time given, so a replica that applies the master's rotations (with the master's times)
/// in the master's order holds the same filter, bit for bit.
pub struct WindowFilter {
    pub(super) params: WindowParams,
    pub(super) generations: Generations<Generation>,
    pub(super) layouts: Layouts,
    /// The generations' sums, kept as they open, grow, take adds and are dropped: every
    /// write asks for them twice (the module's metrics), and summing the generations each
    /// time cost about 200 instructions.
    totals: Totals,
    /// Whether lookups and batches ask for their cache lines ahead ([`prefetches`]; a single
    /// add always asks): decided when the filter is made or loaded and at each rotation, since
    /// asking costs a lookup of a small filter about 30 instructions. A filter loaded with no
    /// generation prefetches until its next rotation, its base links' size unknown until then:
    /// only speed depends on it.
    prefetch_pays: bool,
    /// Whether the live generations pool their error rates ([`pool`](super::pool)): set on
    /// the filters this version creates, and kept by their records (a flag of the header),
    /// so that a filter written by an earlier version places its items as that version did,
    /// on a replica of an older master too.
    pub(super) pooled: bool,
    /// Items the current base takes ([`pool::base_limit`]), worked out at the span's first
    /// add and kept until a rotation changes the live generations: it depends on nothing else.
    base_limit: Option<u64>,
}

/// What [`WindowFilter::totals`] is made of: bytes of bit arrays, what dropping the
/// generations would return (their bits and overflows, [`Generation::memory_bytes`]), latest
/// items, links.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Totals {
    bytes: usize,
    memory: usize,
    items: u64,
    links: usize,
}

impl Totals {
    /// The sums over `generations`, counted.
    fn of(generations: &Generations<Generation>) -> Totals {
        let mut totals = Totals::default();
        for generation in generations.iter() {
            totals.bytes += generation.value.bits_bytes();
            totals.memory += generation.value.memory_bytes();
            totals.items += generation.value.latest;
            totals.links += generation.value.link_count();
        }
        totals
    }
}

impl WindowFilter {
    /// A new, empty filter whose current span is the one holding `now_ms`. Refused when one
    /// window's worth of generations at their planned size (the memory of a steady stream)
    /// would not fit in `max_bytes`; nothing is allocated but the list of generations.
    pub fn try_new(params: WindowParams, now_ms: u64, max_bytes: usize) -> Result<WindowFilter, FilterError> {
        let mut layouts = Layouts::default();
        let layout = layouts.base(&params)?;
        let steady_bytes = usize::try_from(layout.bits() / 8)
            .ok()
            .and_then(|bytes| bytes.checked_mul(params.max_live_generations() as usize));
        if steady_bytes.is_none_or(|bytes| bytes > max_bytes) {
            return Err(FilterError::TooLarge);
        }
        let mut generations = Generations::new(*params.schedule());
        // No generation yet: this only sets the current span.
        generations.rotate(now_ms);
        // A base that cannot scale has nowhere to put what a short one would refuse; a rate
        // the sizing raises to its floor leaves bases above the rate they pool.
        let pooled =
            params.expansion() != 0 && params.base_error_rate() * SIZING_MARGIN >= SMALLEST_SIZED_RATE;
        Ok(WindowFilter::assembled(params, generations, layouts, pooled))
    }

    /// A filter of these parts, its sums counted.
    pub(super) fn assembled(
        params: WindowParams,
        generations: Generations<Generation>,
        layouts: Layouts,
        pooled: bool,
    ) -> WindowFilter {
        let totals = Totals::of(&generations);
        let prefetch_pays = prefetches(&params, &layouts, &generations);
        WindowFilter { params, generations, layouts, totals, prefetch_pays, pooled, base_limit: None }
    }

    /// A deep copy; only [`FilterError::OutOfMemory`] can refuse it.
    pub fn try_clone(&self) -> Result<WindowFilter, FilterError> {
        let generations = self.generations.try_map(Generation::try_clone)?;
        Ok(WindowFilter { generations, ..*self })
    }

    /// Its parameters.
    pub fn params(&self) -> &WindowParams {
        &self.params
    }

    /// Start of the span adds go to, in milliseconds since the epoch.
    pub fn current_start_ms(&self) -> u64 {
        self.generations.current_start_ms()
    }

    /// The generations, oldest first (the current one, if opened, last), each with the start
    /// of its span.
    pub fn generations(&self) -> impl DoubleEndedIterator<Item = &Stamped<Generation>> {
        self.generations.iter()
    }

    /// Moves the filter to the time `now_ms` ([`Generations::rotate`]): the span holding it
    /// becomes the current one, and every generation whose items are all older than the window
    /// is dropped and handed back, for the caller to free where it cannot stall the server.
    /// A time before the current span moves nothing back.
    ///
    /// Deterministic: the same filter rotated to the same time gives the same filter.
    pub fn rotate(&mut self, now_ms: u64) -> Rotation<Generation> {
        let rotation = self.generations.rotate(now_ms);
        if rotation.changed() {
            self.base_limit = None;
        }
        for dropped in &rotation.dropped {
            let totals = &mut self.totals;
            totals.bytes -= dropped.value.bits_bytes();
            totals.memory -= dropped.value.memory_bytes();
            totals.items -= dropped.value.latest;
            totals.links -= dropped.value.link_count();
        }
        self.prefetch_pays = prefetches(&self.params, &self.layouts, &self.generations);
        rotation
    }

    /// When [`rotate`](Self::rotate) will next change more than the current span's start
    /// ([`Generations::next_rotation_ms`]); `None` when the filter holds no generation.
    pub fn next_rotation_ms(&self) -> Option<u64> {
        self.generations.next_rotation_ms()
    }

    /// When the current span's generation closes, while no write has opened it
    /// ([`Generations::unopened_closes_ms`](crate::window::Generations::unopened_closes_ms)).
    pub fn unopened_closes_ms(&self) -> Option<u64> {
        self.generations.unopened_closes_ms()
    }

    /// Whether [`rotate`](Self::rotate) to `at_ms` would change anything: move the current
    /// span on, or drop a generation. Cheaper than a rotation's bookkeeping, which most writes
    /// need none of.
    pub fn rotates_at(&self, at_ms: u64) -> bool {
        self.generations.rotates_at(at_ms)
    }

    /// Whether some generation has expired at `at_ms` though no rotation dropped it yet: when
    /// none has, a read at that time answers as a read of every generation.
    pub fn holds_expired(&self, at_ms: u64) -> bool {
        self.generations.holds_expired(at_ms)
    }

    /// Adds an item to the current span, which the caller has rotated to its clock.
    /// `Ok(true)` when no live generation held it; `Ok(false)` when one did, in which case it
    /// is still added to the current generation (unless that one holds it already) so that its
    /// window starts again. The budget `max_bytes` covers the whole filter and is asked for
    /// only when a generation is opened or grows.
    pub fn insert(&mut self, item: &[u8], max_bytes: impl FnMut() -> usize) -> Result<bool, FilterError> {
        self.insert_hash(&ItemHash::of(item), max_bytes)
    }

    /// As [`insert`](Self::insert), for a hash computed already: one hash serves every
    /// generation.
    pub fn insert_hash(
        &mut self,
        hash: &ItemHash,
        max_bytes: impl FnMut() -> usize,
    ) -> Result<bool, FilterError> {
        // An add asks for its lines whatever the filter's size, where a lookup asks only when
        // it pays: it writes the current generation's blocks and then reads every older one's,
        // and asking first overlapped those loads. A 15,000-item window (34 KB) through the
        // server, six runs each, BF.ADD against a plain filter's: 1.34-1.41 -> 1.17-1.31,
        // sent in bursts every 100 ms 1.41-1.61 -> 1.21-1.33; lookups measured the same
        // either way, and keep their choice.
        self.ask_for_lines(hash, None, false);
        self.insert_prefetched(hash, max_bytes)
    }

    fn insert_prefetched(
        &mut self,
        hash: &ItemHash,
        max_bytes: impl FnMut() -> usize,
    ) -> Result<bool, FilterError> {
        let base_limit = if let Some(limit) = self.base_limit {
            limit
        } else {
            let limit = self.current_base_limit()?;
            *self.base_limit.insert(limit)
        };
        // Made by the current generation's add, and asked of the older ones after it.
        let mut pattern = FirstBlockPattern::default();
        let added = match self.generations.current_mut() {
            // Most adds: the span's base, open and not full, takes the item, and no size
            // changes (a tenth of a windowed add went to keeping the sums otherwise).
            Some(current) if current.value.overflow.is_none() && current.value.base.items() < base_limit => {
                current.value.base.insert_patterned(hash, &mut pattern)
            }
            _ => self.insert_resizing(hash, &mut pattern, base_limit, max_bytes)?,
        };
        if !added {
            return Ok(false);
        }
        let WindowFilter { generations, totals, .. } = self;
        if let Some(current) = generations.current_mut() {
            current.value.latest += 1;
            totals.items += 1;
        }
        // Newest first: the generation of its previous add is the newest that holds it.
        match generations.older_mut().iter_mut().rev().find(|older| older.value.contains(hash, &mut pattern))
        {
            Some(previous) => {
                if previous.value.latest > 0 {
                    previous.value.latest -= 1;
                    totals.items -= 1;
                }
                Ok(false)
            }
            None => Ok(true),
        }
    }

    /// An add that may open the current generation, or open or grow its overflow: the sums of
    /// bytes and links follow, even where the add then fails.
    fn insert_resizing(
        &mut self,
        hash: &ItemHash,
        pattern: &mut FirstBlockPattern,
        base_limit: u64,
        mut max_bytes: impl FnMut() -> usize,
    ) -> Result<bool, FilterError> {
        let WindowFilter { params, generations, layouts, totals, .. } = self;
        let sizes = |generation: &Generation| {
            (generation.bits_bytes(), generation.memory_bytes(), generation.link_count())
        };
        let (bytes_before, memory_before, links_before) =
            generations.current().map_or((0, 0, 0), |current| sizes(&current.value));
        // What the current generation may take is what the others leave of the budget.
        let older_bytes = totals.bytes - bytes_before;
        let current = generations
            .current_or_open(|| Generation::open(params, layouts, max_bytes().saturating_sub(older_bytes)))?;
        let added = current.insert_hash(hash, pattern, base_limit, params, layouts, || {
            max_bytes().saturating_sub(older_bytes)
        });
        let (bytes_after, memory_after, links_after) = sizes(current);
        totals.bytes = totals.bytes - bytes_before + bytes_after;
        totals.memory = totals.memory - memory_before + memory_after;
        totals.links = totals.links - links_before + links_after;
        added
    }

    /// Items the current span's base takes before its overflow opens: its capacity, or what
    /// the pooled rates leave it. Worked out before the span's first add opens the base, from
    /// the base it will be.
    fn current_base_limit(&mut self) -> Result<u64, FilterError> {
        let (layout, capacity) = match self.generations.current() {
            Some(current) => (current.value.base.layout(), current.value.base.capacity()),
            None => (self.layouts.base(&self.params)?, self.params.generation_capacity()),
        };
        Ok(if self.pooled {
            pool::base_limit(&self.params, self.generations.older(), layout, capacity)
        } else {
            capacity
        })
    }

    /// Adds each item in order, answering for each, and stops after the first error.
    pub fn insert_each<'a>(
        &mut self,
        items: impl Iterator<Item = &'a [u8]>,
        mut max_bytes: impl FnMut() -> usize,
        mut answer: impl FnMut(Result<bool, FilterError>),
    ) {
        for hash in &self.hash_batch(items, None) {
            let result = self.insert_prefetched(hash, &mut max_bytes);
            let stop = result.is_err();
            answer(result);
            if stop {
                break;
            }
        }
    }

    /// Whether the item (probably) was added to a generation the filter holds: `false` is
    /// certain. What a replica answers, holding its master's rotations.
    pub fn contains(&self, item: &[u8]) -> bool {
        self.contains_hash(&ItemHash::of(item), None)
    }

    /// As [`contains`](Self::contains), ignoring the generations already expired at `now_ms`
    /// (those the next rotation will drop): what a master answers without rotating, so that a
    /// read needs no write and forgets on time even when no rotation ran lately.
    pub fn contains_at(&self, item: &[u8], now_ms: u64) -> bool {
        self.contains_hash(&ItemHash::of(item), Some(now_ms))
    }

    /// As [`contains`](Self::contains) (`now_ms` `None`) or [`contains_at`](Self::contains_at),
    /// for a hash computed already. The cache lines of every generation are asked for first,
    /// so that a miss costs one memory latency, not one per generation.
    #[inline]
    pub fn contains_hash(&self, hash: &ItemHash, now_ms: Option<u64>) -> bool {
        self.prefetch(hash, now_ms, false);
        self.probe(hash, now_ms)
    }

    /// Answers for each item, in order, as [`contains_hash`](Self::contains_hash) does.
    pub fn contains_each<'a>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        now_ms: Option<u64>,
        mut answer: impl FnMut(bool),
    ) {
        for hash in &self.hash_batch(items, now_ms) {
            answer(self.probe(hash, now_ms));
        }
    }

    /// Whether a live generation holds the item, newest first: the newest is the likeliest to
    /// hold a recent item. The generations are walked as a slice, each one's test inlined:
    /// a visit closure called per generation, and then a chained iterator, cost an item never
    /// added about 200 and then 100 instructions of a lookup (of 1,750 through the server, and
    /// of 640 in process).
    #[inline]
    fn probe(&self, hash: &ItemHash, now_ms: Option<u64>) -> bool {
        let (older, current) = self.generations.live_parts(now_ms);
        let mut pattern = FirstBlockPattern::default();
        current.is_some_and(|current| current.value.contains(hash, &mut pattern))
            || older.iter().rev().any(|older| older.value.contains(hash, &mut pattern))
    }

    /// Asks for the item's cache lines in every live generation, where they are likely out
    /// of the core's caches.
    #[inline]
    fn prefetch(&self, hash: &ItemHash, now_ms: Option<u64>, every_block: bool) {
        if self.prefetch_pays {
            self.ask_for_lines(hash, now_ms, every_block);
        }
    }

    /// The item's cache lines in every live generation, asked for.
    #[inline]
    fn ask_for_lines(&self, hash: &ItemHash, now_ms: Option<u64>, every_block: bool) {
        let (older, current) = self.generations.live_parts(now_ms);
        for generation in current.into_iter().chain(older) {
            generation.value.prefetch(hash, every_block);
        }
    }

    /// Hashes the whole batch and asks for the cache lines of every live generation first,
    /// so that the memory loads of a batch overlap instead of queueing.
    fn hash_batch<'a>(&self, items: impl Iterator<Item = &'a [u8]>, now_ms: Option<u64>) -> Vec<ItemHash> {
        let hashes: Vec<ItemHash> = items.map(ItemHash::of).collect();
        for hash in &hashes {
            self.prefetch(hash, now_ms, true);
        }
        hashes
    }

    /// About how many distinct items were added within the generations held (what a replica's
    /// BF.CARD answers): each item counts in the generation of its latest add only, until
    /// that one is dropped.
    pub fn items(&self) -> u64 {
        self.totals.items
    }

    /// As [`items`](Self::items), leaving out the generations expired at `now_ms` though no
    /// rotation dropped them yet (`None`: every generation held): what a master answers by its
    /// clock, as its lookups do.
    pub fn items_at(&self, now_ms: Option<u64>) -> u64 {
        if now_ms.is_none() {
            return self.totals.items;
        }
        let (older, current) = self.generations.live_parts(now_ms);
        current.into_iter().chain(older).map(|generation| generation.value.latest).sum()
    }

    /// The adds its generations' links took (each answered 1 there): what an add changes
    /// exactly when it changes the filter. An add of an item that an older generation holds
    /// answers 0 and is taken by the current one; one of an item the current generation holds
    /// already changes nothing, and need not be replicated.
    pub fn links_took(&self) -> u64 {
        self.generations().map(|generation| generation.value.items()).sum()
    }

    /// Items per window the filter was sized for, as reserved.
    pub fn capacity(&self) -> u64 {
        self.params.capacity()
    }

    /// Links in all generations together.
    pub fn link_count(&self) -> usize {
        self.totals.links
    }

    /// Bytes as [`memory_bytes`](Self::memory_bytes) counts them, items
    /// ([`items`](Self::items)) and links, as kept: what the module's metrics follow around
    /// every write.
    pub fn totals(&self) -> (usize, u64, usize) {
        (self.memory_bytes(), self.totals.items, self.totals.links)
    }

    /// Whether the kept sums are the generations' (the tests' check on the bookkeeping).
    #[cfg(test)]
    pub(super) fn totals_hold(&self) -> bool {
        self.totals == Totals::of(&self.generations)
    }

    /// Bytes of bit arrays alone.
    pub fn bits_bytes(&self) -> usize {
        self.totals.bytes
    }

    /// Everything this filter holds allocated: what MEMORY USAGE and BF.INFO report (the
    /// generations' part kept as they change).
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<WindowFilter>() + self.generations.room_bytes() + self.totals.memory
    }

    /// Each link's bits, in order: generations oldest first, each one's links in order.
    pub fn link_bytes(&self) -> impl Iterator<Item = &[u8]> {
        self.generations().flat_map(|generation| generation.value.links().map(SubFilter::bytes))
    }

    /// As [`link_bytes`](Self::link_bytes), writable: where a dump's chunks are loaded.
    pub(super) fn link_bytes_mut(&mut self) -> impl Iterator<Item = &mut [u8]> {
        self.generations
            .iter_mut()
            .flat_map(|generation| generation.value.links_mut().map(SubFilter::bytes_mut))
    }
}

/// Whether a window of base links takes more than [`CACHED_BYTES`] (known from the sizing, or
/// from the oldest generation of a filter just loaded): below, the lines asked for are in the
/// caches already and asking costs a sixth of a small filter's lookup.
fn prefetches(params: &WindowParams, layouts: &Layouts, generations: &Generations<Generation>) -> bool {
    let base_bytes = layouts
        .base_bytes()
        .or_else(|| generations.iter().next().map(|generation| generation.value.base.byte_len() as u64));
    base_bytes
        .is_none_or(|bytes| bytes.saturating_mul(u64::from(params.max_live_generations())) > CACHED_BYTES)
}
