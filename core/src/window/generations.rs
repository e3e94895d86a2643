//! The generations of a windowed value on its schedule's grid: which are alive, their
//! rotation by the caller's clock, and their part of the value's RDB record.

use super::schedule::{Schedule, MAX_TIME_MS};
use crate::bytes::AllocationFailed;
use crate::decode::{DecodeError, RdbSink, RdbSource};

/// A generation's payload and the start of its span, in milliseconds since the epoch (a
/// multiple of the span).
#[derive(Debug, Clone, PartialEq)]
pub struct Stamped<T> {
    /// When its span starts.
    pub start_ms: u64,
    /// What the generation holds.
    pub value: T,
}

/// What [`Generations::rotate`] changed.
pub struct Rotation<T> {
    /// Whether the current span moved on (the current generation, if any, became an older
    /// one, and the next write opens a new one).
    pub advanced: bool,
    /// The generations that expired, oldest first, handed over so that the caller frees
    /// them (or reuses them) where it cannot stall the server.
    pub dropped: Vec<Stamped<T>>,
}

impl<T> Rotation<T> {
    /// Whether anything changed: what a master must replicate, as "rotate at the time it was
    /// given", before any command that follows.
    pub fn changed(&self) -> bool {
        self.advanced || !self.dropped.is_empty()
    }
}

/// The generations of a windowed value: the current span's (opened by its first write) and
/// the older ones still alive, oldest first. See the module documentation of
/// [`window`](crate::window) for the promises.
#[derive(Debug)]
pub struct Generations<T> {
    schedule: Schedule,
    /// Start of the span that writes go to, set by the last rotation.
    current_start_ms: u64,
    current: Option<Stamped<T>>,
    /// Each expires after `current_start_ms`. While any generation is held, room for all
    /// there can be is reserved, so that a rotation never allocates; while none is (a new
    /// value, or an idle one whose generations all expired) there is no room, so that the
    /// many idle keys of a windowed type cost only their fixed parts.
    older: Vec<Stamped<T>>,
}

impl<T> Generations<T> {
    /// No generation, the current span at the epoch: a new value's, which its creator rotates
    /// to its clock (a master, replicating the rotation, so that every copy starts alike).
    pub fn new(schedule: Schedule) -> Generations<T> {
        Generations { schedule, current_start_ms: 0, current: None, older: Vec::new() }
    }

    /// The window and its generations.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// Start of the span writes go to, in milliseconds since the epoch.
    pub fn current_start_ms(&self) -> u64 {
        self.current_start_ms
    }

    /// The current span's generation, if a write opened it.
    pub fn current(&self) -> Option<&Stamped<T>> {
        self.current.as_ref()
    }

    /// As [`current`](Self::current), writable.
    pub fn current_mut(&mut self) -> Option<&mut Stamped<T>> {
        self.current.as_mut()
    }

    /// The current span's generation, opened with `open` when this is the span's first write
    /// (and the room for older generations reserved with it, if none was). When `open` or the
    /// room fails nothing changes.
    pub fn current_or_open<E: From<AllocationFailed>>(
        &mut self,
        open: impl FnOnce() -> Result<T, E>,
    ) -> Result<&mut T, E> {
        let stamped = match &mut self.current {
            Some(stamped) => stamped,
            slot @ None => {
                let value = open()?;
                reserve_room(&mut self.older, &self.schedule)?;
                slot.insert(Stamped { start_ms: self.current_start_ms, value })
            }
        };
        Ok(&mut stamped.value)
    }

    /// The bytes of the room kept for older generations, filled or not.
    pub fn room_bytes(&self) -> usize {
        self.older.capacity() * std::mem::size_of::<Stamped<T>>()
    }

    /// The generations of earlier spans still alive, oldest first.
    pub fn older(&self) -> &[Stamped<T>] {
        &self.older
    }

    /// As [`older`](Self::older), writable.
    pub fn older_mut(&mut self) -> &mut [Stamped<T>] {
        &mut self.older
    }

    /// Every generation, oldest first (the current one, if opened, last).
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Stamped<T>> {
        self.older.iter().chain(&self.current)
    }

    /// As [`iter`](Self::iter), writable.
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Stamped<T>> {
        self.older.iter_mut().chain(&mut self.current)
    }

    /// The generations a read counts, newest first: all of them (`now_ms` `None`, what a
    /// replica reads, holding its master's rotations), or those not yet expired at `now_ms`
    /// (what a master reads without rotating: a read needs no write and forgets on time even
    /// when no rotation ran lately).
    pub fn live(&self, now_ms: Option<u64>) -> impl Iterator<Item = &Stamped<T>> {
        let (older, current) = self.live_parts(now_ms);
        current.into_iter().chain(older.iter().rev())
    }

    /// The generations of [`live`](Self::live) as the live older ones, oldest first, and the
    /// current one if it is live: expiries follow the starts, so the expired are the oldest.
    /// For a lookup's loops, which walk a slice in fewer instructions than the chained
    /// iterator.
    #[inline]
    pub fn live_parts(&self, now_ms: Option<u64>) -> (&[Stamped<T>], Option<&Stamped<T>>) {
        let now_ms = now_ms.map(latest);
        let live = |generation: &Stamped<T>| {
            now_ms.is_none_or(|now| self.schedule.expiry_ms(generation.start_ms) > now)
        };
        let expired = self.older.iter().take_while(|generation| !live(generation)).count();
        (&self.older[expired..], self.current.as_ref().filter(|current| live(current)))
    }

    /// Whether [`rotate`](Self::rotate) to `at_ms` would change anything: move the current
    /// span on, or drop a generation. Without a division: the current span starts on the
    /// grid (a load refuses any other start), so a later span starts at its end or after.
    pub fn rotates_at(&self, at_ms: u64) -> bool {
        let at_ms = latest(at_ms);
        at_ms >= self.current_start_ms.saturating_add(self.schedule.span_ms()) || self.holds_expired(at_ms)
    }

    /// Whether some generation has expired at `now_ms` though no rotation dropped it yet.
    pub fn holds_expired(&self, now_ms: u64) -> bool {
        self.iter().next().is_some_and(|oldest| self.schedule.expiry_ms(oldest.start_ms) <= latest(now_ms))
    }

    /// Moves to the time `now_ms`: the span holding it becomes the current one (spans with no
    /// writes in between never had a generation), and every generation whose writes are all
    /// older than the window is handed back. A time before the current span (a clock set
    /// back, a failover to a server whose clock is behind) moves nothing back: writes then go
    /// to the current span and are kept a little longer.
    ///
    /// A time past [`MAX_TIME_MS`] moves no further than that ([`latest`]).
    ///
    /// Deterministic, and allocates nothing.
    pub fn rotate(&mut self, now_ms: u64) -> Rotation<T> {
        let now_ms = latest(now_ms);
        let schedule = self.schedule;
        let span_start = schedule.span_start(now_ms);
        let advanced = span_start > self.current_start_ms;
        let expired = self
            .older
            .iter()
            .take_while(|generation| schedule.expiry_ms(generation.start_ms) <= now_ms)
            .count();
        let mut dropped: Vec<Stamped<T>> = self.older.drain(..expired).collect();
        if advanced {
            if let Some(closed) = self.current.take() {
                // After a long idle time the closed generation can be expired already.
                if schedule.expiry_ms(closed.start_ms) <= now_ms {
                    dropped.push(closed);
                } else {
                    // Within the room reserved: the generations left all expire after the
                    // new span starts, and at most `max_live - 1` spans before it do.
                    debug_assert!(
                        self.older.len() < self.older.capacity(),
                        "room for every older generation"
                    );
                    self.older.push(closed);
                }
            }
            self.current_start_ms = span_start;
        }
        self.release_room_when_empty();
        Rotation { advanced, dropped }
    }

    /// Gives the room for older generations back once no generation is held.
    fn release_room_when_empty(&mut self) {
        if self.current.is_none() && self.older.is_empty() {
            self.older = Vec::new();
        }
    }

    /// When [`rotate`](Self::rotate) will next change more than the current span's start: the
    /// end of the current generation's span, or the expiry of the oldest generation. `None`
    /// when there is no generation, which is when an idle key needs no more rotations (and so
    /// no more replication): the next write rotates it anyway.
    pub fn next_rotation_ms(&self) -> Option<u64> {
        let closes =
            self.current.as_ref().map(|current| current.start_ms.saturating_add(self.schedule.span_ms()));
        let expires = self.iter().next().map(|oldest| self.schedule.expiry_ms(oldest.start_ms));
        match (closes, expires) {
            (Some(closes), Some(expires)) => Some(closes.min(expires)),
            (closes, expires) => closes.or(expires),
        }
    }

    /// When the current span's generation closes, while no write has opened it: the rotation
    /// a write that opens it makes due. `None` once it is open.
    pub fn unopened_closes_ms(&self) -> Option<u64> {
        self.current.is_none().then(|| self.current_start_ms.saturating_add(self.schedule.span_ms()))
    }

    /// Whether a rotation to `now_ms` would close or drop a generation: what a timer asks to
    /// return the memory of expired writes on keys that receive no commands.
    pub fn needs_rotation(&self, now_ms: u64) -> bool {
        self.next_rotation_ms().is_some_and(|next| latest(now_ms) >= next)
    }

    /// Drops every generation (a RESET); the schedule and the current span stay.
    pub fn clear(&mut self) -> Vec<Stamped<T>> {
        let mut dropped: Vec<Stamped<T>> = self.older.drain(..).collect();
        dropped.extend(self.current.take());
        self.release_room_when_empty();
        dropped
    }

    /// A copy, each payload copied by `copy`.
    pub fn try_map<U, E>(&self, mut copy: impl FnMut(&T) -> Result<U, E>) -> Result<Generations<U>, E>
    where
        E: From<AllocationFailed>,
    {
        let mut older = Vec::new();
        if self.current.is_some() || !self.older.is_empty() {
            reserve_room(&mut older, &self.schedule)?;
        }
        for generation in &self.older {
            older.push(Stamped { start_ms: generation.start_ms, value: copy(&generation.value)? });
        }
        let current = match &self.current {
            Some(current) => Some(Stamped { start_ms: current.start_ms, value: copy(&current.value)? }),
            None => None,
        };
        Ok(Generations { schedule: self.schedule, current_start_ms: self.current_start_ms, current, older })
    }

    /// Writes the schedule and the times, each generation's start followed by what `save`
    /// writes of its payload:
    ///
    /// ```text
    /// window ms | generations | current span start ms | generation count
    /// then per generation, oldest first: start ms | payload
    /// ```
    ///
    /// all unsigned. Times are absolute, so that a value loaded after a downtime longer than
    /// its window forgets, at its first rotation, what expired meanwhile.
    pub fn save<S: RdbSink>(&self, sink: &mut S, mut save: impl FnMut(&T, &mut S)) {
        sink.unsigned(self.schedule.window_ms());
        sink.unsigned(u64::from(self.schedule.generations()));
        sink.unsigned(self.current_start_ms);
        sink.unsigned(self.iter().count() as u64);
        for generation in self.iter() {
            sink.unsigned(generation.start_ms);
            save(&generation.value, sink);
        }
    }

    /// Reads what [`save`](Self::save) wrote, each payload with `load`, trusting nothing: the
    /// schedule must be one [`Schedule::new`] accepts, the current span's start must be no later
    /// than [`MAX_TIME_MS`], the span starts must lie on its grid,
    /// rise strictly, end at or before the current span, and belong to generations a rotation
    /// to the current span would have kept.
    pub fn load<S: RdbSource>(
        source: &mut S,
        mut load: impl FnMut(&mut S) -> Result<T, DecodeError>,
    ) -> Result<Generations<T>, DecodeError> {
        let window_ms = source.unsigned()?;
        let generations =
            u32::try_from(source.unsigned()?).map_err(|_| malformed("generations out of range"))?;
        let schedule = Schedule::new(window_ms, generations).map_err(|_| malformed("window out of range"))?;
        let current_start_ms = source.unsigned()?;
        if current_start_ms != schedule.span_start(current_start_ms) {
            return Err(malformed("current span is off the span grid"));
        }
        if current_start_ms > MAX_TIME_MS {
            return Err(malformed("current span beyond any clock"));
        }
        let count = source.unsigned()?;
        if count > u64::from(schedule.max_live_generations()) {
            return Err(malformed("more generations than can be alive"));
        }
        let mut loaded = Generations::new(schedule);
        loaded.current_start_ms = current_start_ms;
        if count > 0 {
            reserve_room(&mut loaded.older, &schedule)?;
        }
        let mut previous: Option<u64> = None;
        for _ in 0..count {
            let start_ms = source.unsigned()?;
            if start_ms != schedule.span_start(start_ms)
                || previous.is_some_and(|previous| start_ms <= previous)
                || start_ms > current_start_ms
                || (start_ms < current_start_ms && schedule.expiry_ms(start_ms) <= current_start_ms)
            {
                return Err(malformed("a generation's span is off the grid, out of order or expired"));
            }
            previous = Some(start_ms);
            let generation = Stamped { start_ms, value: load(source)? };
            if start_ms == current_start_ms {
                loaded.current = Some(generation);
            } else {
                debug_assert!(
                    loaded.older.len() < loaded.older.capacity(),
                    "room for every older generation"
                );
                loaded.older.push(generation);
            }
        }
        Ok(loaded)
    }
}

/// The time `now_ms` is taken as: at most [`MAX_TIME_MS`]. No clock gets there, but a hostile
/// AOF's or master's `ROTATE` can name any time; a value rotated past it would save a current
/// span its own load refuses, and reads by such a time would stop counting what the latest
/// span holds.
#[inline]
fn latest(now_ms: u64) -> u64 {
    now_ms.min(MAX_TIME_MS)
}

fn malformed(what: &'static str) -> DecodeError {
    DecodeError::Malformed(what)
}

/// Reserves room in the list of older generations for all there can be: every generation
/// that can be alive but the current one (a rotation pushes the closed current generation only
/// once those expired by then are dropped, and a load refuses any older one a rotation to its
/// current span would have dropped).
fn reserve_room<T>(older: &mut Vec<Stamped<T>>, schedule: &Schedule) -> Result<(), AllocationFailed> {
    let room = schedule.max_live_generations() as usize - 1;
    older.try_reserve_exact(room.saturating_sub(older.len())).map_err(|_| AllocationFailed)
}
