//! The windowed sketch: generations of buckets, each with its own heavy hitters, and one list
//! of the window's.

use super::super::buckets::{
    fingerprint, hashed_in_batches, row_index, rows_of, Buckets, ITEM_ROWS, PREFETCH_BUCKETS,
};
use super::super::decay::{Decay, Rng};
use super::super::heap::{Expelled, Heap, Listed};
use super::super::params::{Shape, SizeError};
use super::super::sketch::{list_bytes, REDISBLOOM_HEADER_BYTES};
use crate::bytes::AllocationFailed;
use crate::murmur::murmur64a;
use crate::window::{Generations, Rotation, Schedule};
use std::cmp::Reverse;

/// One span's counts: `HeavyKeeper`'s buckets, the generator of their decay and the span's
/// own list of heavy hitters.
pub struct Generation {
    pub(super) rng: Rng,
    pub(super) buckets: Buckets,
    /// The span's heaviest items by their counts in the span, as a plain sketch's list ranks
    /// them: offered at each add while the window's list leaves them out, and at their
    /// expulsion from it (by an add, or a rotation mid-span) or the span's close while it held
    /// them (so that the adds of listed items, most adds, touch one list, not two). While the window is this one generation,
    /// the window's list is the span's, and only the close fills this one.
    pub(super) heap: Heap,
}

impl Generation {
    /// What dropping it returns (the list's slots, not its item strings, as a plain sketch's
    /// MEMORY USAGE counts them).
    pub fn memory_bytes(&self) -> usize {
        self.buckets.len() + self.heap.bytes.len()
    }

    fn try_clone(&self) -> Result<Generation, AllocationFailed> {
        let heap = self.heap.try_clone().ok_or(AllocationFailed)?;
        Ok(Generation { rng: self.rng, buckets: self.buckets.try_clone()?, heap })
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
    pub(super) generations: Generations<Generation>,
}

impl WindowTopK {
    /// An empty sketch keeping the window's `k` heaviest items, each generation `depth` rows
    /// of `width` counters decaying at `decay`. Its parameters are checked as the plain
    /// sketch's; refused when the list and as many generations as can be alive would not fit
    /// in `max_bytes`. Only the list is allocated.
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
        let mut buffer = [0; ITEM_ROWS];
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
            // The window is this generation: the plain sketch's admission. The window's list
            // is then the span's own, which the span's close copies to it.
            return self.list.offer(item, fingerprint, count);
        }
        if let Some(slot) = self.list.find(item, fingerprint) {
            let older = self.list.spare(slot);
            self.list.update(slot, count.saturating_add(older));
            return Ok(None);
        }
        offer_to_current(&mut self.generations, item, fingerprint, count);
        let older = saturated(older_estimate(&self.generations, &self.shape, (fingerprint, item), rows));
        let window = count.saturating_add(older);
        if window < self.list.min() {
            return Ok(None);
        }
        let smallest = self.smallest();
        let expelled = self.list.replace_min(item, fingerprint, window, older)?;
        self.expelled_to_current(expelled.as_deref(), smallest);
        Ok(expelled)
    }

    /// The fingerprint, window count and older count of the smallest listed item.
    fn smallest(&self) -> (u32, u32, u32) {
        (self.list.fingerprint(0), self.list.min(), self.list.spare(0))
    }

    /// Offers an item the window's list expelled (its `smallest` entry) to the current span's
    /// list, at its count in the span: it was not offered there while listed.
    fn expelled_to_current(
        &mut self,
        expelled: Option<&[u8]>,
        (fingerprint, window, older): (u32, u32, u32),
    ) {
        let in_span = window.saturating_sub(older);
        if let Some(item) = expelled.filter(|_| in_span > 0) {
            offer_to_current(&mut self.generations, item, fingerprint, in_span);
        }
    }

    /// Opens the current span's generation, with nothing counted, if no add did yet: what a
    /// command does before it answers anything, so that a failure changes nothing.
    pub fn open_current(&mut self) -> Result<(), AllocationFailed> {
        open_current(&mut self.generations, &self.shape, self.seed).map(|_| ())
    }

    /// Moves to the time `now_ms` (see [`Generations::rotate`]); when a generation closed or
    /// expired, the list is made again from what the generations left hold (see
    /// [`relist`](Self::relist)). The expired generations are handed back for the caller to
    /// free.
    pub fn rotate(&mut self, now_ms: u64) -> Rotation<Generation> {
        let closing_start_ms = self.generations.current().map(|current| current.start_ms);
        let rotation = self.generations.rotate(now_ms);
        if rotation.advanced {
            self.close(closing_start_ms);
        }
        if rotation.changed() {
            self.relist();
        }
        rotation
    }

    /// Offers each listed item to the list of the span that closed (starting at
    /// `closing_start_ms`, unless it expired at once), at its count in that span: adds offer
    /// an item to their span's list only while the window's list leaves it out.
    fn close(&mut self, closing_start_ms: Option<u64>) {
        let Some(closed) = self.generations.older_mut().last_mut() else { return };
        if Some(closed.start_ms) != closing_start_ms {
            return;
        }
        for slot in 0..self.list.k() {
            let Some(item) = self.list.item(slot) else { continue };
            let in_span = self.list.count(slot).saturating_sub(self.list.spare(slot));
            if in_span > 0 {
                let _ = closed.value.heap.offer(item, self.list.fingerprint(slot), in_span);
            }
        }
    }

    /// Counts each listed item again over the generations left (its window count and older
    /// count), clearing those left with nothing; then offers other items of the generations'
    /// own lists ([`heaviest_entries`]), each counted over the window, in place of the
    /// smallest listed one when heavier. The window's heaviest items are in those lists: an
    /// item heavy in one span is in that span's list even when heavier ones kept it out of the
    /// window's. An item this pushes out is offered to the current span's list, as an add's
    /// expulsion is, where a generation expired mid-span. Items are copied only as they
    /// enter; one whose copy fails, or all of them when the entries cannot be gathered for
    /// want of memory, are left out.
    fn relist(&mut self) {
        let (generations, shape) = (&self.generations, &self.shape);
        for slot in 0..self.list.k() {
            // Slots without an item are empty already (loads check it): nothing to write.
            if let Some(counts) = self.list.item(slot).map(|item| counts_of(generations, shape, item)) {
                recount_slot(&mut self.list, slot, counts);
            }
        }
        self.list.heapify();
        let most = most_counted(self.list.k(), generations.iter().count(), shape.depth);
        let Some((entries, smallest_sum)) = heaviest_entries(generations, self.list.k(), most) else {
            return;
        };
        let mut pushed_out = Vec::new();
        let mut counted = 0;
        for (fingerprint, item, above) in entries {
            let bound = smallest_sum + above;
            if counted == most || bound <= u64::from(self.list.min()) {
                break;
            }
            if self.list.find(item, fingerprint).is_some() {
                continue;
            }
            counted += 1;
            let (current, older) = counts_of(generations, shape, item);
            let window = current.saturating_add(older);
            if window > self.list.min() {
                let smallest = self.smallest();
                if let Ok(Some(expelled)) = self.list.replace_min(item, fingerprint, window, older) {
                    // Not offered when there is no memory to note it: it only narrows what
                    // later rotations may list.
                    if generations.current().is_some() && pushed_out.try_reserve(1).is_ok() {
                        pushed_out.push((expelled, smallest));
                    }
                }
            }
        }
        for (item, smallest) in pushed_out {
            self.expelled_to_current(Some(&item), smallest);
        }
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
        let mut buffer = [0; ITEM_ROWS];
        let (fingerprint, rows) = rows_of(item, (width, self.shape.depth), &mut buffer);
        let live = self.generations.live(now_ms).map(|generation| &generation.value.buckets);
        Buckets::summed_estimate(live, (fingerprint, item), (width, self.shape.depth), rows)
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
    /// list's slots, each live generation's buckets and list slots, and the room kept for
    /// generations (not the item strings).
    pub fn memory_bytes(&self) -> usize {
        let room = self.generations.room_bytes();
        let generations: usize =
            self.generations.iter().map(|generation| generation.value.memory_bytes()).sum();
        REDISBLOOM_HEADER_BYTES + self.list.bytes.len() + room + generations
    }

    /// A copy, which continues the same decay draws; `None` when there is no memory for it.
    pub fn try_clone(&self) -> Option<WindowTopK> {
        Some(WindowTopK {
            list: self.list.try_clone()?,
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
        Ok(Generation {
            rng: Rng(generation_seed(seed, start_ms)),
            buckets: Buckets::try_zeroed(shape)?,
            heap: Heap::try_new(u64::from(shape.k()), 0)?,
        })
    })
}

/// Offers the item to the current span's list at its count there. An item whose copy fails is
/// left out: it only narrows what later rotations may list.
fn offer_to_current(generations: &mut Generations<Generation>, item: &[u8], fingerprint: u32, count: u32) {
    if let Some(current) = generations.current_mut() {
        let _ = current.value.heap.offer(item, fingerprint, count);
    }
}

/// The item's estimates in the older generations, summed.
fn older_estimate(
    generations: &Generations<Generation>,
    shape: &Shape,
    (fingerprint, item): (u32, &[u8]),
    rows: &[usize],
) -> u64 {
    let older = generations.older().iter().map(|older| &older.value.buckets);
    Buckets::summed_estimate(older, (fingerprint, item), (shape.width, shape.depth), rows)
}

/// The item's estimate in the current generation and its estimates in the older ones,
/// summed.
fn counts_of(generations: &Generations<Generation>, shape: &Shape, item: &[u8]) -> (u32, u32) {
    let width = shape.width;
    let mut buffer = [0; ITEM_ROWS];
    let (fingerprint, rows) = rows_of(item, (width, shape.depth), &mut buffer);
    let index_of = |row| row_index(rows, item, row, width);
    let current = generations
        .current()
        .map_or(0, |current| current.value.buckets.estimate(fingerprint, shape.depth, index_of));
    (current, saturated(older_estimate(generations, shape, (fingerprint, item), rows)))
}

/// An item of a generation's list as a rotation considers it: its fingerprint, the item and
/// its count there above the list's smallest (summed over the lists once sorted).
type Entry<'a> = (u32, &'a [u8], u64);

/// Items a rotation counts over the window at most, for each of the `k` listed, and the
/// bucket reads their counting may take past `k` items: bounds on its cost where the window's
/// lists are long and many (see [`heaviest_entries`]).
const COUNTED_PER_SLOT: usize = 4;
const COUNTING_READS: usize = 1 << 20;

/// How many items a rotation counts over the window at most: `COUNTED_PER_SLOT × k`, fewer
/// where that would read more than `COUNTING_READS` buckets, never fewer than `k`.
fn most_counted(k: usize, generations: usize, depth: u32) -> usize {
    let per_item = generations.max(1).saturating_mul(depth as usize);
    k.saturating_mul(COUNTED_PER_SLOT).min(COUNTING_READS / per_item).max(k)
}

/// The items of the generations' lists a rotation considers listing, those that could be
/// heaviest first, and the sum of the lists' smallest counts; `None` when there is no memory
/// to gather them.
///
/// An item's count in a generation whose list does not hold it is at most that list's
/// smallest count (it was offered below it, or expelled at it), so its window count is at
/// most the sum of the lists' smallest counts and of what its entries hold above their lists'
/// smallest: [`WindowTopK::relist`] counts the items by that bound, the largest first, until
/// none left can enter. Nearly: a list's smallest count can fall later (a listed item's
/// decayed count only sifts down, as RedisBloom's list does, and a later replacement can
/// bring it to the top), and counts saturate, so an item a few counts above the smallest
/// listed can be left out until its next add. An item stays in many generations' lists while it stays heavy, so the
/// entries are sorted to sum each item's. Where many lists have small smallest counts (long
/// lists over many spans) nearly every entry can pass the bound, so the items counted are
/// held to [`most_counted`]: with k = 1000 and 64 generations, counting every entry took
/// 0.2 s a rotation. An item past that is listed at its next add, not by the rotation.
fn heaviest_entries(
    generations: &Generations<Generation>,
    k: usize,
    most: usize,
) -> Option<(Vec<Entry<'_>>, u64)> {
    let heaps = || generations.iter().map(|generation| &generation.value.heap);
    let filled = |heap: &Heap| (0..heap.k()).filter(|&slot| heap.item(slot).is_some()).count();
    let mut entries: Vec<Entry> = Vec::new();
    entries.try_reserve_exact(heaps().map(filled).sum()).ok()?;
    let smallest_sum = heaps().map(|heap| u64::from(heap.min())).sum();
    for heap in heaps() {
        for slot in 0..heap.k() {
            if let Some(item) = heap.item(slot) {
                let above = heap.count(slot).saturating_sub(heap.min());
                entries.push((heap.fingerprint(slot), item, u64::from(above)));
            }
        }
    }
    entries.sort_unstable();
    // Each item once, with the sum of what its entries hold above their lists' smallest.
    entries.dedup_by(|later, kept| {
        let same = (later.0, later.1) == (kept.0, kept.1);
        if same {
            kept.2 += later.2;
        }
        same
    });
    // The items counted and the `k` at most that are listed, which are passed over.
    let considered = most.saturating_add(k).min(entries.len());
    if considered < entries.len() {
        entries.select_nth_unstable_by_key(considered, heaviest_first);
        entries.truncate(considered);
    }
    entries.sort_unstable_by_key(heaviest_first);
    Some((entries, smallest_sum))
}

/// The order in which a rotation considers the items of the generations' lists (fingerprint,
/// item, what its entries hold above their lists' smallest): the largest bound first, ties in
/// a fixed order.
fn heaviest_first<'a>(&(fingerprint, item, above): &Entry<'a>) -> (Reverse<u64>, u32, &'a [u8]) {
    (Reverse(above), fingerprint, item)
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

/// Bytes of a generation of this shape: its buckets and its list.
pub(super) fn generation_bytes(shape: &Shape) -> Option<u64> {
    Buckets::bytes_for(shape)?.checked_add(list_bytes(u64::from(shape.k()))?)
}

/// Whether the list and as many generations of this shape as the schedule keeps alive fit in
/// `max_bytes`: what a creation and a load are held to, so that later adds, which open
/// generations, never take a sketch past the budget.
pub(super) fn fits(shape: &Shape, schedule: &Schedule, max_bytes: usize) -> bool {
    let generations = generation_bytes(shape)
        .and_then(|bytes| bytes.checked_mul(u64::from(schedule.max_live_generations())));
    let bytes = generations
        .zip(list_bytes(u64::from(shape.k())))
        .and_then(|(generations, list)| generations.checked_add(list));
    bytes.is_some_and(|bytes| bytes <= max_bytes as u64 && isize::try_from(bytes).is_ok())
}

/// A count as a slot holds it: saturating at `u32::MAX`, as buckets do.
fn saturated(count: u64) -> u32 {
    u32::try_from(count).unwrap_or(u32::MAX)
}
