//! The windowed filter: generations of scalable filters on a grid of spans, rotated by the
//! caller's clock.

use super::params::WindowParams;
use crate::bloom::chain::{BloomFilter, FilterError};
use crate::bloom::hash::ItemHash;
use crate::bloom::params::Layout;
use crate::bloom::sub_filter::SubFilter;

/// One span's items: an ordinary scalable filter of this crate, and when it started.
pub struct Generation {
    pub(super) start_ms: u64,
    pub(super) filter: BloomFilter,
    /// Items whose latest add landed here: adding an item that an older generation holds
    /// moves it here, and this count with it. Their sum is the window's cardinality.
    pub(super) latest: u64,
}

impl Generation {
    /// When its span starts, in milliseconds since the epoch: a multiple of the span.
    pub fn start_ms(&self) -> u64 {
        self.start_ms
    }

    /// Its scalable filter.
    pub fn filter(&self) -> &BloomFilter {
        &self.filter
    }

    /// Items whose latest add landed in this generation (approximately: a false positive
    /// can credit an older generation wrongly).
    pub fn latest_items(&self) -> u64 {
        self.latest
    }

    /// What dropping it returns: its filter's allocations.
    pub fn memory_bytes(&self) -> usize {
        self.filter.memory_bytes()
    }

    fn try_clone(&self) -> Result<Generation, FilterError> {
        Ok(Generation { start_ms: self.start_ms, filter: self.filter.try_clone()?, latest: self.latest })
    }
}

/// What [`WindowFilter::rotate`] changed.
pub struct Rotation {
    /// Whether the current span moved on (the current generation, if any, became an older
    /// one, and the next add opens a new one).
    pub advanced: bool,
    /// The generations that expired, oldest first, handed over so that the caller frees
    /// them where it cannot stall the server (a large one takes milliseconds to unmap).
    pub dropped: Vec<Generation>,
}

impl Rotation {
    /// Whether the filter changed at all: what a master must replicate (as "rotate at the
    /// time it was given") before any command that follows.
    pub fn changed(&self) -> bool {
        self.advanced || !self.dropped.is_empty()
    }
}

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
    /// Start of the span that adds go to: a multiple of the span, set by the last rotation.
    pub(super) current_start_ms: u64,
    /// The generation of the current span, opened by its first add: an idle span costs no
    /// memory, and rotating never allocates.
    pub(super) current: Option<Generation>,
    /// Generations of earlier spans, oldest first; each expires after the current start.
    pub(super) older: Vec<Generation>,
}

impl WindowFilter {
    /// A new, empty filter whose current span is the one holding `now_ms`. Refused when one
    /// window's worth of generations at their planned size (the memory of a steady stream)
    /// would not fit in `max_bytes`; nothing is allocated but the list of generations.
    pub fn try_new(params: WindowParams, now_ms: u64, max_bytes: usize) -> Result<WindowFilter, FilterError> {
        let layout = Layout::for_capacity(params.generation_capacity(), params.first_link_error_rate())
            .ok_or(FilterError::TooLarge)?;
        let steady_bytes = usize::try_from(layout.bits() / 8)
            .ok()
            .and_then(|bytes| bytes.checked_mul(params.max_live_generations() as usize));
        if steady_bytes.is_none_or(|bytes| bytes > max_bytes) {
            return Err(FilterError::TooLarge);
        }
        let older = Self::older_list(&params)?;
        let span = params.span_ms();
        Ok(WindowFilter { params, current_start_ms: now_ms - now_ms % span, current: None, older })
    }

    /// An empty list of older generations, with room for all there can be, so that a
    /// rotation never allocates.
    pub(super) fn older_list(params: &WindowParams) -> Result<Vec<Generation>, FilterError> {
        let mut older = Vec::new();
        older
            .try_reserve_exact(params.max_live_generations() as usize)
            .map_err(|_| FilterError::OutOfMemory)?;
        Ok(older)
    }

    /// A deep copy; only [`FilterError::OutOfMemory`] can refuse it.
    pub fn try_clone(&self) -> Result<WindowFilter, FilterError> {
        let mut older = Self::older_list(&self.params)?;
        for generation in &self.older {
            older.push(generation.try_clone()?);
        }
        let current = self.current.as_ref().map(Generation::try_clone).transpose()?;
        Ok(WindowFilter { params: self.params, current_start_ms: self.current_start_ms, current, older })
    }

    /// Its parameters.
    pub fn params(&self) -> &WindowParams {
        &self.params
    }

    /// Start of the span adds go to, in milliseconds since the epoch.
    pub fn current_start_ms(&self) -> u64 {
        self.current_start_ms
    }

    /// The generations, oldest first (the current one, if opened, last).
    pub fn generations(&self) -> impl DoubleEndedIterator<Item = &Generation> {
        self.older.iter().chain(&self.current)
    }

    /// When a generation stops answering: once everything added to it is older than the
    /// window, that is one window after its span ends.
    pub(super) fn expiry_ms(&self, generation: &Generation) -> u64 {
        generation.start_ms.saturating_add(self.params.span_ms()).saturating_add(self.params.window_ms())
    }

    /// Moves the filter to the time `now_ms`: the span holding it becomes the current one
    /// (spans with no adds in between simply never had a generation), and every generation
    /// whose items are all older than the window is dropped and handed back. A time before
    /// the current span (a clock set back, a failover to a server whose clock is behind)
    /// moves nothing back: items then go to the current span and are kept a little longer.
    ///
    /// Deterministic: the same filter rotated to the same time gives the same filter.
    pub fn rotate(&mut self, now_ms: u64) -> Rotation {
        let span = self.params.span_ms();
        let span_start = now_ms - now_ms % span;
        let advanced = span_start > self.current_start_ms;
        let expired = self.older.iter().take_while(|generation| self.expiry_ms(generation) <= now_ms).count();
        let mut dropped: Vec<Generation> = self.older.drain(..expired).collect();
        if advanced {
            if let Some(closed) = self.current.take() {
                // After a long idle time the closed generation can be expired already.
                if self.expiry_ms(&closed) <= now_ms {
                    dropped.push(closed);
                } else {
                    // Within the capacity reserved: the generations left all expire after
                    // the new span starts, and there are at most `max_live - 1` such spans
                    // before it.
                    self.older.push(closed);
                }
            }
            self.current_start_ms = span_start;
        }
        Rotation { advanced, dropped }
    }

    /// When [`rotate`](Self::rotate) will next change more than the current span's start: the
    /// end of the current generation's span, or the expiry of the oldest generation. `None`
    /// when the filter holds no generation, which is when an idle key needs no more
    /// rotations (and so no more replication): the next add rotates it anyway.
    pub fn next_rotation_ms(&self) -> Option<u64> {
        let closes =
            self.current.as_ref().map(|current| current.start_ms.saturating_add(self.params.span_ms()));
        let expires = self.generations().next().map(|oldest| self.expiry_ms(oldest));
        match (closes, expires) {
            (Some(closes), Some(expires)) => Some(closes.min(expires)),
            (closes, expires) => closes.or(expires),
        }
    }

    /// Whether a rotation to `now_ms` would close or drop a generation: what a timer asks to
    /// return the memory of expired items on keys that receive no commands.
    pub fn needs_rotation(&self, now_ms: u64) -> bool {
        self.next_rotation_ms().is_some_and(|next| now_ms >= next)
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
        self.prefetch(hash, None);
        self.insert_prefetched(hash, max_bytes)
    }

    fn insert_prefetched(
        &mut self,
        hash: &ItemHash,
        mut max_bytes: impl FnMut() -> usize,
    ) -> Result<bool, FilterError> {
        let WindowFilter { params, current_start_ms, current, older } = self;
        let older_bytes =
            |older: &[Generation]| older.iter().map(|generation| generation.filter.bits_bytes()).sum();
        let current = if let Some(current) = current {
            current
        } else {
            let budget = max_bytes().saturating_sub(older_bytes(older));
            let filter = BloomFilter::try_new(
                params.generation_capacity(),
                params.generation_error_rate(),
                params.expansion(),
                budget,
            )?;
            current.insert(Generation { start_ms: *current_start_ms, filter, latest: 0 })
        };
        if !current.filter.insert_hash(hash, || max_bytes().saturating_sub(older_bytes(older)))? {
            return Ok(false);
        }
        current.latest += 1;
        // Newest first: the generation of its previous add is the newest that holds it.
        match older.iter_mut().rev().find(|generation| generation.filter.contains_hash(hash)) {
            Some(previous) => {
                previous.latest = previous.latest.saturating_sub(1);
                Ok(false)
            }
            None => Ok(true),
        }
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
        self.prefetch(hash, now_ms);
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

    #[inline]
    fn probe(&self, hash: &ItemHash, now_ms: Option<u64>) -> bool {
        self.live(now_ms).any(|generation| generation.filter.contains_hash(hash))
    }

    #[inline]
    fn prefetch(&self, hash: &ItemHash, now_ms: Option<u64>) {
        for generation in self.live(now_ms) {
            generation.filter.prefetch(hash);
        }
    }

    /// The generations a lookup asks, newest first: the newest is the likeliest to hold a
    /// recent item, and the generations expired at `now_ms` are the oldest.
    fn live(&self, now_ms: Option<u64>) -> impl Iterator<Item = &Generation> {
        self.generations()
            .rev()
            .take_while(move |generation| now_ms.is_none_or(|now| self.expiry_ms(generation) > now))
    }

    /// Hashes the whole batch and asks for the cache lines of every live generation first,
    /// so that the memory loads of a batch overlap instead of queueing.
    fn hash_batch<'a>(&self, items: impl Iterator<Item = &'a [u8]>, now_ms: Option<u64>) -> Vec<ItemHash> {
        let hashes: Vec<ItemHash> = items.map(ItemHash::of).collect();
        for hash in &hashes {
            self.prefetch(hash, now_ms);
        }
        hashes
    }

    /// About how many distinct items were added within the window (BF.CARD): each item
    /// counts in the generation of its latest add only, until that one is dropped.
    pub fn items(&self) -> u64 {
        self.generations().map(|generation| generation.latest).sum()
    }

    /// Items per window the filter was sized for, as reserved.
    pub fn capacity(&self) -> u64 {
        self.params.capacity()
    }

    /// Sub-filters (links) in all generations together.
    pub fn link_count(&self) -> usize {
        self.generations().map(|generation| generation.filter.links().len()).sum()
    }

    /// Bytes of bit arrays alone.
    pub fn bits_bytes(&self) -> usize {
        self.generations().map(|generation| generation.filter.bits_bytes()).sum()
    }

    /// Everything this filter holds allocated: what MEMORY USAGE and BF.INFO report.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<WindowFilter>()
            + self.older.capacity() * std::mem::size_of::<Generation>()
            + self
                .generations()
                .map(|generation| generation.filter.memory_bytes() - std::mem::size_of::<BloomFilter>())
                .sum::<usize>()
    }

    /// Each link's bits, in order: generations oldest first, each one's links oldest first.
    pub fn link_bytes(&self) -> impl Iterator<Item = &[u8]> {
        self.generations().flat_map(|generation| generation.filter.links().iter().map(SubFilter::bytes))
    }

    /// As [`link_bytes`](Self::link_bytes), writable: where a dump's chunks are loaded.
    pub(super) fn link_bytes_mut(&mut self) -> impl Iterator<Item = &mut [u8]> {
        self.older
            .iter_mut()
            .chain(&mut self.current)
            .flat_map(|generation| generation.filter.links_mut().iter_mut().map(SubFilter::bytes_mut))
    }
}
