//! The windowed sketch: generations of buckets, one list of the window's heavy hitters and
//! its candidates.

use super::super::buckets::{fingerprint, hashed_in_batches, row_index, rows_of, Buckets, PREFETCH_BUCKETS};
use super::super::decay::{Decay, Rng};
use super::super::heap::{Expelled, Heap, Listed};
use super::super::params::{Shape, SizeError};
use super::super::sketch::{list_bytes, REDISBLOOM_HEADER_BYTES};
use crate::bytes::AllocationFailed;
use crate::murmur::murmur64a;
use crate::window::{Generations, Rotation, Schedule};

/// One span's counts: `HeavyKeeper`'s buckets and the generator of their decay.
pub struct Generation {
    pub(super) rng: Rng,
    pub(super) buckets: Buckets,
}

impl Generation {
    /// What dropping it returns.
    pub fn memory_bytes(&self) -> usize {
        self.buckets.len()
    }

    fn try_clone(&self) -> Result<Generation, AllocationFailed> {
        Ok(Generation { rng: self.rng, buckets: self.buckets.try_clone()? })
    }
}

/// The generator of the generation of the span starting at `start_ms`: the same on every
/// server that opens it there.
pub(super) fn generation_seed(seed: u64, start_ms: u64) -> u64 {
    murmur64a(&start_ms.to_le_bytes(), seed)
}

/// A Top-K sketch of the last window. See the module documentation.
pub struct WindowTopK {
    pub(super) shape: Shape,
    pub(super) powers: Decay,
    /// Seeds each generation's generator, with the generation's start.
    pub(super) seed: u64,
    /// The window's heavy hitters: each slot's count is the item's window count (saturating
    /// at `u32::MAX`, as a bucket does), its padding the item's count in the older
    /// generations.
    pub(super) list: Heap,
    /// The items a rotation may list in place of those whose counts expired: the heaviest of
    /// the items an add left out of the list or expelled from it, each with the window count
    /// and older count it was noted with (at an add that left it out above the smallest
    /// candidate, its expulsion, or a rotation). A min-heap; no item is in both.
    pub(super) candidates: Heap,
    pub(super) generations: Generations<Generation>,
}

impl WindowTopK {
    /// An empty sketch keeping the window's `k` heaviest items, each generation `depth` rows
    /// of `width` counters decaying at `decay`. Its parameters are checked as the plain
    /// sketch's; refused when the list and as many generations as can be alive would not fit
    /// in `max_bytes`. Only the list, the candidates and the room for the generations are
    /// allocated.
    pub fn new(
        (k, width, depth, decay): (u64, u64, u64, f64),
        schedule: Schedule,
        seed: u64,
        max_bytes: usize,
    ) -> Result<WindowTopK, SizeError> {
        let shape = Shape::checked(k, width, depth, decay).map_err(SizeError::Invalid)?;
        if !fits(&shape, &schedule, max_bytes) {
            return Err(SizeError::TooLarge);
        }
        Ok(WindowTopK {
            shape,
            powers: Decay::new(decay),
            seed,
            list: Heap::try_new(k, 0)?,
            candidates: Heap::try_new(k, 0)?,
            generations: Generations::new(schedule),
        })
    }

    /// Its k, width, depth and decay (of each generation).
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The window and its generations.
    pub fn schedule(&self) -> &Schedule {
        self.generations.schedule()
    }

    /// Start of the span that adds go to, in milliseconds since the epoch.
    pub fn current_start_ms(&self) -> u64 {
        self.generations.current_start_ms()
    }

    /// Whether a rotation to `at_ms` would change anything (see
    /// [`Generations::rotates_at`](crate::window::Generations::rotates_at)): most writes
    /// rotate nothing, and need not pay a rotation's bookkeeping to learn it.
    pub fn rotates_at(&self, at_ms: u64) -> bool {
        self.generations.rotates_at(at_ms)
    }

    /// Whether some generation has expired at `now_ms` though no rotation dropped it yet:
    /// only then does a read by that clock answer otherwise than a read of every generation.
    pub fn holds_expired(&self, now_ms: u64) -> bool {
        self.generations.holds_expired(now_ms)
    }

    /// The generations alive (not yet dropped by a rotation).
    pub fn generation_count(&self) -> usize {
        self.generations.iter().count()
    }

    /// Counts the item `increment` times in the current span's generation (opened by the
    /// span's first add), and answers the item the window's list expelled for it. Fails,
    /// changing nothing, when the generation cannot be allocated; fails when the copy of the
    /// item cannot be, the item counted but not listed.
    pub fn add(&mut self, item: &[u8], increment: u32) -> Expelled {
        let mut buffer = [0; PREFETCH_BUCKETS];
        let (fingerprint, rows) = rows_of(item, (self.shape.width, self.shape.depth), &mut buffer);
        self.add_hashed(item, increment, fingerprint, rows)
    }

    /// Adds every item in order, as [`WindowTopK::add`] does, handing each result to `each`;
    /// the current generation's buckets of a few items at a time are asked of the CPU before
    /// any of them is counted, as the plain sketch's batches do (once the current generation
    /// is open: see [`open_current`](Self::open_current)).
    pub fn add_all<'a>(
        &mut self,
        items: impl IntoIterator<Item = (&'a [u8], u32)>,
        mut each: impl FnMut(Expelled),
    ) {
        let prefetch = |sketch: &WindowTopK, index| {
            if let Some(current) = sketch.generations.current() {
                current.value.buckets.prefetch(index);
            }
        };
        let shape = (self.shape.width, self.shape.depth);
        hashed_in_batches(self, items, shape, prefetch, |sketch, item, increment, fingerprint, rows| {
            each(sketch.add_hashed(item, increment, fingerprint, rows));
        });
    }

    /// An add, given the item's fingerprint and its bucket indexes where they were computed
    /// (see [`row_index`]).
    fn add_hashed(&mut self, item: &[u8], increment: u32, fingerprint: u32, rows: &[usize]) -> Expelled {
        let (width, depth) = (self.shape.width, self.shape.depth);
        // An item not listed is counted in the older generations too: their buckets are asked
        // for first, and arrive while the current one counts it and the list is searched (a
        // tenth of an add of a window of 20,000 × 7 × 5 generations). Not past a batch's
        // worth of lines, where asking would crowd out what a listed item's add reads.
        let older = self.generations.older();
        if older.len() * rows.len() <= PREFETCH_BUCKETS {
            for generation in older {
                for &index in rows {
                    generation.value.buckets.prefetch(index);
                }
            }
        }
        let current = open_current(&mut self.generations, &self.shape, self.seed)?;
        let index_of = |row| row_index(rows, item, row, width);
        let count =
            current.buckets.count(&self.powers, &mut current.rng, (fingerprint, increment), depth, index_of);
        if self.generations.older().is_empty() {
            // The window is this generation: the plain sketch's admission (`Heap::offer`), the
            // items it leaves out noted as candidates.
            if count < self.list.min() {
                if count > self.candidates.min() && self.list.find(item, fingerprint).is_none() {
                    note_candidate(&mut self.candidates, item, fingerprint, count, 0);
                }
                return Ok(None);
            }
            if let Some(slot) = self.list.find(item, fingerprint) {
                self.list.update(slot, count);
                return Ok(None);
            }
            return self.enter(item, fingerprint, count, 0);
        }
        if let Some(slot) = self.list.find(item, fingerprint) {
            let older = self.list.spare(slot);
            self.list.update(slot, count.saturating_add(older));
            return Ok(None);
        }
        let older = saturated(self.older_estimates(fingerprint, index_of));
        let window = count.saturating_add(older);
        if window < self.list.min() {
            note_candidate(&mut self.candidates, item, fingerprint, window, older);
            return Ok(None);
        }
        self.enter(item, fingerprint, window, older)
    }

    /// Lists the item (not listed) in place of the smallest listed one, which becomes a
    /// candidate, and answers it; the item is no candidate any more.
    fn enter(&mut self, item: &[u8], fingerprint: u32, window: u32, older: u32) -> Expelled {
        let Some(slot) = self.candidates.find(item, fingerprint) else {
            let smallest = (self.list.fingerprint(0), self.list.min(), self.list.spare(0));
            let expelled = self.list.replace_min(item, fingerprint, window, older)?;
            if let Some(expelled) = &expelled {
                let (fingerprint, window, older) = smallest;
                note_new_candidate(&mut self.candidates, expelled, fingerprint, window, older);
            }
            return Ok(expelled);
        };
        // A candidate enters: it and the smallest listed entry change places, strings and all.
        let expelled = match self.list.item(0) {
            Some(smallest) => Some(copied(smallest)?),
            None => None,
        };
        self.list.exchange(0, &mut self.candidates, slot);
        self.list.set_count(0, window);
        self.list.set_spare(0, older);
        self.list.sift_down(0);
        self.candidates.resift(slot);
        Ok(expelled)
    }

    /// Opens the current span's generation, with nothing counted, if no add did yet: what a
    /// command does before it answers anything, so that a failure changes nothing.
    pub fn open_current(&mut self) -> Result<(), AllocationFailed> {
        open_current(&mut self.generations, &self.shape, self.seed).map(|_| ())
    }

    /// The item's estimates in the older generations, summed.
    fn older_estimates(&self, fingerprint: u32, index_of: impl Fn(u32) -> usize + Copy) -> u64 {
        let older = self.generations.older().iter().map(|older| &older.value.buckets);
        Buckets::summed_estimate(older, fingerprint, self.shape.depth, index_of)
    }

    /// Moves to the time `now_ms` (see [`Generations::rotate`]); when a generation closed or
    /// expired, every listed item and candidate is counted again over the generations left,
    /// and the heaviest of them listed. Allocates nothing; the expired generations are handed
    /// back for the caller to free.
    pub fn rotate(&mut self, now_ms: u64) -> Rotation<Generation> {
        let rotation = self.generations.rotate(now_ms);
        if rotation.changed() {
            self.recount();
        }
        rotation
    }

    /// Each listed item's and candidate's window count and older count from the generations,
    /// items left with nothing cleared; then, in one pass over the candidates, each above the
    /// smallest listed count takes its place. The smallest listed count only rises in the pass,
    /// so every candidate left is at most it: the list holds the heaviest `k` of both.
    fn recount(&mut self) {
        for slot in 0..self.list.k() {
            // Slots without an item are empty already (loads check it): nothing to write.
            if let Some(counts) = self.list.item(slot).map(|item| self.counts_of(item)) {
                recount_slot(&mut self.list, slot, counts);
            }
            if let Some(counts) = self.candidates.item(slot).map(|item| self.counts_of(item)) {
                recount_slot(&mut self.candidates, slot, counts);
            }
        }
        self.list.heapify();
        for slot in 0..self.candidates.k() {
            if self.candidates.count(slot) > self.list.min() {
                self.list.exchange(0, &mut self.candidates, slot);
                self.list.sift_down(0);
            }
        }
        self.candidates.heapify();
    }

    /// The item's estimate in the current generation and its estimates in the older ones,
    /// summed.
    fn counts_of(&self, item: &[u8]) -> (u32, u32) {
        let width = self.shape.width;
        let mut buffer = [0; PREFETCH_BUCKETS];
        let (fingerprint, rows) = rows_of(item, (width, self.shape.depth), &mut buffer);
        let index_of = |row| row_index(rows, item, row, width);
        let current = self
            .generations
            .current()
            .map_or(0, |current| current.value.buckets.estimate(fingerprint, self.shape.depth, index_of));
        (current, saturated(self.older_estimates(fingerprint, index_of)))
    }

    /// When a rotation will next close or drop a generation; `None` when there is no
    /// generation ([`Generations::next_rotation_ms`](crate::window::Generations::next_rotation_ms)).
    pub fn next_rotation_ms(&self) -> Option<u64> {
        self.generations.next_rotation_ms()
    }

    /// When the current span's generation closes, while no write has opened it
    /// ([`Generations::unopened_closes_ms`](crate::window::Generations::unopened_closes_ms)).
    pub fn unopened_closes_ms(&self) -> Option<u64> {
        self.generations.unopened_closes_ms()
    }

    /// The item's window count: its estimates summed over the generations live at `now_ms`
    /// (all of them for `None`, what a replica reads).
    fn window_estimate(&self, item: &[u8], now_ms: Option<u64>) -> u64 {
        let width = self.shape.width;
        let mut buffer = [0; PREFETCH_BUCKETS];
        let (fingerprint, rows) = rows_of(item, (width, self.shape.depth), &mut buffer);
        let index_of = |row| row_index(rows, item, row, width);
        let live = self.generations.live(now_ms).map(|generation| &generation.value.buckets);
        Buckets::summed_estimate(live, fingerprint, self.shape.depth, index_of)
    }

    /// Whether the list is out of date at `now_ms`: a generation expired that no rotation
    /// dropped yet (a master reading before its timer or a write rotates).
    fn stale(&self, now_ms: Option<u64>) -> bool {
        now_ms.is_some_and(|now| self.generations.holds_expired(now))
    }

    /// Whether the item is among the window's heavy hitters (TOPK.QUERY), read at `now_ms`.
    pub fn query(&self, item: &[u8], now_ms: Option<u64>) -> bool {
        let listed = self.list.find(item, fingerprint(item)).is_some();
        listed && (!self.stale(now_ms) || self.window_estimate(item, now_ms) > 0)
    }

    /// TOPK.COUNT: the item's estimates summed over the generations live at `now_ms`.
    pub fn count(&self, item: &[u8], now_ms: Option<u64>) -> u64 {
        self.window_estimate(item, now_ms)
    }

    /// TOPK.LIST at `now_ms`: the window's heavy hitters, the largest window count first.
    pub fn list(&self, now_ms: Option<u64>) -> Result<Listed<'_>, AllocationFailed> {
        if !self.stale(now_ms) {
            return self.list.list();
        }
        self.list.list_by(|slot| {
            let estimate = self.list.item(slot).map_or(0, |item| self.window_estimate(item, now_ms));
            saturated(estimate)
        })
    }

    /// What MEMORY USAGE answers, counted as the plain sketch's figure: one header, the
    /// list's and the candidates' slots, each live generation's buckets, and the room kept for
    /// generations (not the item strings).
    pub fn memory_bytes(&self) -> usize {
        let room = self.generations.room_bytes();
        let buckets: usize = self.generations.iter().map(|generation| generation.value.memory_bytes()).sum();
        REDISBLOOM_HEADER_BYTES + self.list.bytes.len() + self.candidates.bytes.len() + room + buckets
    }

    /// A copy, which continues the same decay draws; `None` when there is no memory for it.
    pub fn try_clone(&self) -> Option<WindowTopK> {
        Some(WindowTopK {
            list: self.list.try_clone()?,
            candidates: self.candidates.try_clone()?,
            generations: self.generations.try_map(Generation::try_clone).ok()?,
            ..*self
        })
    }
}

/// The current span's generation, opened if no add did yet, its generator seeded from the
/// sketch's seed and the span.
fn open_current<'g>(
    generations: &'g mut Generations<Generation>,
    shape: &Shape,
    seed: u64,
) -> Result<&'g mut Generation, AllocationFailed> {
    let start_ms = generations.current_start_ms();
    generations.current_or_open(|| {
        Ok(Generation { rng: Rng(generation_seed(seed, start_ms)), buckets: Buckets::try_zeroed(shape)? })
    })
}

/// Notes an item that is not listed as a candidate at its `window` count, when that is above
/// the smallest candidate's: updated where it is one, else in place of the smallest.
fn note_candidate(candidates: &mut Heap, item: &[u8], fingerprint: u32, window: u32, older: u32) {
    if window <= candidates.min() {
        return;
    }
    match candidates.find(item, fingerprint) {
        Some(slot) => {
            candidates.set_count(slot, window);
            candidates.set_spare(slot, older);
            candidates.resift(slot);
        }
        None => note_new_candidate(candidates, item, fingerprint, window, older),
    }
}

/// Notes an item that is no candidate (nor listed) in place of the smallest candidate, when
/// heavier. A candidate whose copy cannot be allocated is left out: it only narrows what a
/// later rotation may list.
fn note_new_candidate(candidates: &mut Heap, item: &[u8], fingerprint: u32, window: u32, older: u32) {
    if window > candidates.min() {
        let _ = candidates.replace_min(item, fingerprint, window, older);
    }
}

/// An owned copy of an item, allocated without aborting.
fn copied(item: &[u8]) -> Result<Vec<u8>, AllocationFailed> {
    let mut copy = Vec::new();
    copy.try_reserve_exact(item.len()).map_err(|_| AllocationFailed)?;
    copy.extend_from_slice(item);
    Ok(copy)
}

/// Sets a slot's recounted (current, older) counts, or clears it when the item has none left.
fn recount_slot(heap: &mut Heap, slot: usize, (current, older): (u32, u32)) {
    if current > 0 || older > 0 {
        heap.set_count(slot, current.saturating_add(older));
        heap.set_spare(slot, older);
    } else {
        heap.clear(slot);
    }
}

/// The bytes of the list and the candidates, `k` slots each.
pub(super) fn lists_bytes(k: u64) -> Option<u64> {
    list_bytes(k).and_then(|bytes| bytes.checked_mul(2))
}

/// Whether the list, the candidates and as many generations of this shape as the schedule
/// keeps alive fit
/// in `max_bytes`: what a creation and a load are held to, so that later adds, which open
/// generations, never take a sketch past the budget.
pub(super) fn fits(shape: &Shape, schedule: &Schedule, max_bytes: usize) -> bool {
    let generations = Buckets::bytes_for(shape)
        .and_then(|bytes| bytes.checked_mul(u64::from(schedule.max_live_generations())));
    let bytes = generations
        .zip(lists_bytes(u64::from(shape.k())))
        .and_then(|(generations, list)| generations.checked_add(list));
    bytes.is_some_and(|bytes| bytes <= max_bytes as u64 && isize::try_from(bytes).is_ok())
}

/// A count as a slot holds it: saturating at `u32::MAX`, as buckets do.
fn saturated(count: u64) -> u32 {
    u32::try_from(count).unwrap_or(u32::MAX)
}
