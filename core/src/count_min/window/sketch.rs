//! The windowed sketch: a running total that writes and reads touch, and the closed
//! generations kept to be taken out of it when they expire.

use super::cells::{difference_into, query_less, subtract};
use crate::bytes::AllocationFailed;
use crate::count_min::{CellSize, CountMinSketch, IncrementError, SizeError};
use crate::decode::DecodeError;
use crate::window::{Generations, Rotation, Schedule, Stamped};

/// A span's counts.
pub enum Generation {
    /// A closed span's counts, kept to be taken out of the running total when they expire.
    Counted(CountMinSketch),
    /// The current span's: the running total less the closed generations, with no sketch of
    /// their own. Holds the buffer they are written to when the span closes, when no closed
    /// generation expires by then to lend its own ([`WindowedCountMin::reserve_needed`]).
    Open(Option<CountMinSketch>),
}

impl Generation {
    /// The sketch this generation holds, if any.
    fn buffer(&self) -> Option<&CountMinSketch> {
        match self {
            Generation::Counted(counts) => Some(counts),
            Generation::Open(reserve) => reserve.as_ref(),
        }
    }

    /// The closed span's counts, `None` for the open one.
    pub(super) fn counted(&self) -> Option<&CountMinSketch> {
        match self {
            Generation::Counted(counts) => Some(counts),
            Generation::Open(_) => None,
        }
    }
}

/// Why a write to a windowed sketch was refused, with nothing changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteError {
    /// A negative increment: a windowed count only grows, and expires (a decrement would have
    /// to be taken out of some earlier span's counts, which then expire at their own time).
    Negative,
    /// The span's first write had no memory for the buffer its counts are kept in.
    OutOfMemory,
}

impl From<AllocationFailed> for WriteError {
    fn from(_: AllocationFailed) -> WriteError {
        WriteError::OutOfMemory
    }
}

/// What a rotation changed, and the sketches it no longer needs, for the caller to free.
pub struct Rotated {
    /// Whether anything changed (what a master replicates).
    pub changed: bool,
    /// Expired generations' sketches.
    pub freed: Vec<CountMinSketch>,
}

/// A Count-Min sketch over a sliding window (`CMS.INITBYDIM key width depth WINDOW ms`): the
/// counts of the last `window` milliseconds, at most `window (1 + 1/g)`. See the module
/// documentation of [`count_min::window`](super) for the design and its costs.
pub struct WindowedCountMin {
    /// The sum of every live generation, counter by counter and in the total: what
    /// increments change and queries read, as a plain sketch's.
    pub(super) total: CountMinSketch,
    /// Every closed generation is [`Generation::Counted`]; the current one is
    /// [`Generation::Open`], its buffer there exactly when [`reserve_needed`] says so.
    ///
    /// [`reserve_needed`]: WindowedCountMin::reserve_needed
    pub(super) generations: Generations<Generation>,
}

impl WindowedCountMin {
    /// An empty windowed sketch of `width * depth` counters of `cell_size`, refused when the
    /// sketches it may come to hold (one per generation that can be alive) take more than
    /// `max_bytes`. Its current span is the epoch's: its creator rotates it to its clock.
    pub fn new(
        width: u64,
        depth: u64,
        cell_size: CellSize,
        schedule: Schedule,
        max_bytes: usize,
    ) -> Result<WindowedCountMin, SizeError> {
        let total = CountMinSketch::new(width, depth, cell_size, max_bytes)?;
        if !fits(&total, &schedule, max_bytes) {
            return Err(SizeError::TooLarge);
        }
        let generations = Generations::new(schedule);
        Ok(WindowedCountMin { total, generations })
    }

    /// Counters per row.
    pub fn width(&self) -> u64 {
        self.total.width()
    }

    /// Rows.
    pub fn depth(&self) -> u64 {
        self.total.depth()
    }

    /// Bytes per counter.
    pub fn cell_size(&self) -> CellSize {
        self.total.cell_size()
    }

    /// The window and its generations.
    pub fn schedule(&self) -> &Schedule {
        self.generations.schedule()
    }

    /// The generations, oldest first, with their span starts.
    pub fn generations(&self) -> &Generations<Generation> {
        &self.generations
    }

    /// Whether `other` has this sketch's width, depth, cell size and schedule.
    pub fn same_shape(&self, other: &WindowedCountMin) -> bool {
        self.total.same_dimensions(&other.total)
            && self.cell_size() == other.cell_size()
            && self.schedule() == other.schedule()
    }

    /// The sum of the increments of the live window (CMS.INFO's `count`): every generation's
    /// (`now_ms` `None`, a replica's read), or those not expired at `now_ms` (a master's).
    pub fn count(&self, now_ms: Option<u64>) -> u64 {
        match self.expired(now_ms) {
            Expired::None => self.total.count(),
            Expired::All => 0,
            Expired::Older(expired) => {
                let less: u64 = expired
                    .iter()
                    .filter_map(|generation| generation.value.counted())
                    .map(CountMinSketch::count)
                    .sum();
                self.total.count().saturating_sub(less)
            }
        }
    }

    /// Adds `by` to the item's counters in the current span, answering its windowed count
    /// after it; refused whole, per item, as a plain sketch refuses one. The span's first
    /// write opens its generation, which can fail (no memory), and a negative `by` is refused.
    pub fn increment(&mut self, item: &[u8], by: i64) -> Result<Result<u64, IncrementError>, WriteError> {
        self.prepare_write(std::iter::once(by))?;
        Ok(self.total.increment(item, by))
    }

    /// CMS.INCRBY's items, as [`CountMinSketch::increment_all`] does them; every increment
    /// is checked before any is applied.
    pub fn increment_all(
        &mut self,
        items: &[(&[u8], i64)],
        counted: impl FnMut(Result<u64, IncrementError>),
    ) -> Result<(), WriteError> {
        self.prepare_write(items.iter().map(|&(_, by)| by))?;
        self.total.increment_all(items, counted);
        Ok(())
    }

    /// What every write does first, and a caller may do before it answers anything: refuses
    /// negative increments, then opens the current span's generation. Nothing changes on an
    /// error.
    pub fn prepare_write(&mut self, mut increments: impl Iterator<Item = i64>) -> Result<(), WriteError> {
        if increments.any(|by| by < 0) {
            return Err(WriteError::Negative);
        }
        if self.generations.current().is_none() {
            let reserve = if self.reserve_needed_at_open() {
                Some(self.total.try_empty_like().ok_or(WriteError::OutOfMemory)?)
            } else {
                None
            };
            self.generations.current_or_open(|| Ok::<_, WriteError>(Generation::Open(reserve)))?;
        }
        Ok(())
    }

    /// The items' windowed counts, in order: every generation's (`now_ms` `None`), or those
    /// not expired at `now_ms` (a master's read between rotations, which takes the expired
    /// ones' counters out of the total's, item by item).
    pub fn query_all<'a>(
        &self,
        items: impl IntoIterator<Item = &'a [u8]>,
        now_ms: Option<u64>,
        mut answer: impl FnMut(u64),
    ) {
        match self.expired(now_ms) {
            Expired::None => self.total.query_all(items, answer),
            Expired::All => items.into_iter().for_each(|_| answer(0)),
            Expired::Older(expired) => {
                let parts = expired.iter().filter_map(|generation| generation.value.counted());
                for item in items {
                    answer(query_less(&self.total, &parts, item));
                }
            }
        }
    }

    /// The generations expired at `now_ms` that no rotation dropped yet.
    fn expired(&self, now_ms: Option<u64>) -> Expired<'_> {
        let Some(now) = now_ms.filter(|&now| self.generations.holds_expired(now)) else {
            return Expired::None;
        };
        // The older generations a read at `now` skips: those before the live ones, as
        // `Generations` tells them (times past the latest a record may hold included).
        let (live_older, live_current) = self.generations.live_parts(Some(now));
        if live_older.is_empty() && live_current.is_none() {
            return Expired::All;
        }
        let older = self.generations.older();
        Expired::Older(older.get(..older.len().saturating_sub(live_older.len())).unwrap_or_default())
    }

    /// Moves to `now_ms` (see [`Generations::rotate`]): expired generations leave the total;
    /// a closed span's counts are written to the buffer its generation reserved or to one an
    /// expired generation left. Deterministic, and allocates no sketch.
    pub fn rotate(&mut self, now_ms: u64) -> Rotated {
        let Rotation { advanced, dropped } = self.generations.rotate(now_ms);
        let changed = advanced || !dropped.is_empty();
        let mut freed = Vec::with_capacity(dropped.len());
        let mut all_expired = false;
        for generation in dropped {
            match generation.value {
                Generation::Counted(counts) => {
                    subtract(&mut self.total, &counts);
                    freed.push(counts);
                }
                // The open generation expired: so did every older one, and nothing is left.
                Generation::Open(reserve) => {
                    all_expired = true;
                    freed.extend(reserve);
                }
            }
        }
        if all_expired {
            self.total.clear();
        } else if advanced {
            self.close_span(&mut freed);
        }
        if self.reserve_needed() {
            if let Some(Stamped { value: Generation::Open(reserve @ None), .. }) =
                self.generations.current_mut()
            {
                *reserve = freed.pop();
            }
        }
        Rotated { changed, freed }
    }

    /// The generation a rotation just closed (the newest older one, if it is still open):
    /// its counts written to its reserved buffer, or to a freed one.
    fn close_span(&mut self, freed: &mut Vec<CountMinSketch>) {
        let Some((closed, counted)) = self.generations.older_mut().split_last_mut() else { return };
        let Generation::Open(reserve) = &mut closed.value else { return };
        // Never short: a generation opens with a reserve unless an older one expires (and
        // frees its buffer) by the end of its span. Were that broken, a buffer is allocated
        // rather than the counts lost.
        let Some(mut counts) = reserve.take().or_else(|| freed.pop()).or_else(|| self.total.try_empty_like())
        else {
            return;
        };
        difference_into(
            &mut counts,
            &self.total,
            &counted.iter().filter_map(|generation| generation.value.counted()),
        );
        closed.value = Generation::Counted(counts);
    }

    /// Whether the open generation needs a buffer of its own for its counts when its span
    /// closes: no closed generation expires by then to lend one.
    pub(super) fn reserve_needed(&self) -> bool {
        self.generations.current().is_some() && self.reserve_needed_at_open()
    }

    /// As [`reserve_needed`](Self::reserve_needed), for a generation the current span opens.
    fn reserve_needed_at_open(&self) -> bool {
        let schedule = self.schedule();
        let closes = self.generations.current_start_ms().saturating_add(schedule.span_ms());
        self.generations.older().first().is_none_or(|oldest| schedule.expiry_ms(oldest.start_ms) > closes)
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

    /// The sketches held: the total, and every generation's.
    pub fn sketch_count(&self) -> usize {
        1 + self.generations.iter().filter(|generation| generation.value.buffer().is_some()).count()
    }

    /// The memory held: the struct, the total's counters and every generation's.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<WindowedCountMin>()
            + self.total.memory_bytes()
            + self
                .generations
                .iter()
                .filter_map(|generation| generation.value.buffer())
                .map(CountMinSketch::memory_bytes)
                .sum::<usize>()
    }

    /// A copy, or `None` when there is no memory for it.
    pub fn try_clone(&self) -> Option<WindowedCountMin> {
        let copy = |generation: &Generation| match generation {
            Generation::Counted(counts) => {
                counts.try_clone().map(Generation::Counted).ok_or(DecodeError::OutOfMemory)
            }
            Generation::Open(None) => Ok(Generation::Open(None)),
            Generation::Open(Some(reserve)) => reserve
                .try_empty_like()
                .map(|reserve| Generation::Open(Some(reserve)))
                .ok_or(DecodeError::OutOfMemory),
        };
        let generations = self.generations.try_map(copy).ok()?;
        Some(WindowedCountMin { total: self.total.try_clone()?, generations })
    }
}

/// What a master's read leaves out.
enum Expired<'a> {
    None,
    /// Every generation: the read answers 0.
    All,
    /// These oldest ones.
    Older(&'a [Stamped<Generation>]),
}

/// Whether the sketches a windowed sketch of this shape and schedule may hold (the total, and
/// the generations that can be alive but one, whose counts the total holds) fit `max_bytes`.
pub(super) fn fits(total: &CountMinSketch, schedule: &Schedule, max_bytes: usize) -> bool {
    let sketches = schedule.max_live_generations() as usize;
    total.counter_bytes().len().checked_mul(sketches).is_some_and(|bytes| bytes <= max_bytes)
}
