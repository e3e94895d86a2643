//! What a user may ask of a windowed filter, and how that becomes generations: their span in
//! time, how many can be alive at once, and the capacity and error rate each is sized for.

use crate::bloom::params::{checked_error_rate, MAX_CAPACITY, MAX_EXPANSION, MIN_CAPACITY, TIGHTENING_RATIO};
use crate::window::{Schedule, ScheduleError};

/// Each generation's base link is sized for this much more than its share of a window's
/// capacity, as a fraction `HEADROOM_NUMERATOR / HEADROOM_DENOMINATOR` of it. A steady stream
/// does not split evenly over spans (batches, scheduling); a sixteenth absorbs that
/// unevenness. What goes past it, the live generations' pooled rates may take (up to another
/// sixteenth, [`WindowParams::base_item_limit`]); past that, the generation's overflow opens.
pub const HEADROOM_NUMERATOR: u64 = 1;
/// See [`HEADROOM_NUMERATOR`].
pub const HEADROOM_DENOMINATOR: u64 = 16;

/// The part of a scaling generation's error rate its base link takes; its overflow chain,
/// opened only by a burst, keeps the rest. Bursts are rare, so the base takes nearly all: the
/// base link's memory is what every span pays (a plain scalable filter's first link takes
/// half, and so needs `ln 2 / ln² 2` = 1.44 more bits per item than this one's at 0.9).
pub const BASE_SHARE_OF_RATE: f64 = 0.9;

/// Why parameters were refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamError {
    /// The window is out of range ([`ScheduleError::Window`]).
    Window,
    /// The generations are out of range ([`ScheduleError::Generations`]).
    Generations,
    /// The capacity lies outside the range a plain filter accepts.
    Capacity,
    /// The error rate lies outside the open interval (0, 1).
    ErrorRate,
    /// The expansion lies above what a plain filter accepts.
    Expansion,
}

/// The parameters of a windowed filter, checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowParams {
    schedule: Schedule,
    capacity: u64,
    error_rate: f64,
    expansion: u32,
}

impl WindowParams {
    /// Checks and keeps the parameters: a window of `window_ms`, cut into `generations`
    /// spans, for `capacity` items per window at `error_rate` (capped as a plain filter's
    /// is), each generation scaling by `expansion` (0: non-scaling).
    pub fn new(
        window_ms: u64,
        generations: u32,
        capacity: u64,
        error_rate: f64,
        expansion: u32,
    ) -> Result<WindowParams, ParamError> {
        let schedule = Schedule::new(window_ms, generations).map_err(|error| match error {
            ScheduleError::Window => ParamError::Window,
            ScheduleError::Generations => ParamError::Generations,
        })?;
        if !(MIN_CAPACITY..=MAX_CAPACITY).contains(&capacity) {
            return Err(ParamError::Capacity);
        }
        let error_rate = checked_error_rate(error_rate).ok_or(ParamError::ErrorRate)?;
        if expansion > MAX_EXPANSION {
            return Err(ParamError::Expansion);
        }
        Ok(WindowParams { schedule, capacity, error_rate, expansion })
    }

    /// The window and its generations.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// The window, in milliseconds.
    pub fn window_ms(&self) -> u64 {
        self.schedule.window_ms()
    }

    /// The generations asked for (`GENERATIONS`).
    pub fn generations(&self) -> u32 {
        self.schedule.generations()
    }

    /// Items expected per window.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The error rate the whole filter keeps, capped like a plain filter's.
    pub fn error_rate(&self) -> f64 {
        self.error_rate
    }

    /// Growth factor of each generation; 0 for non-scaling generations.
    pub fn expansion(&self) -> u32 {
        self.expansion
    }

    /// How long a generation takes items ([`Schedule::span_ms`]).
    pub fn span_ms(&self) -> u64 {
        self.schedule.span_ms()
    }

    /// The most generations alive at once ([`Schedule::max_live_generations`]).
    pub fn max_live_generations(&self) -> u32 {
        self.schedule.max_live_generations()
    }

    /// Items each generation's base link is sized for: its span's share of the window's
    /// capacity, with the headroom above.
    pub fn generation_capacity(&self) -> u64 {
        let share = u128::from(self.capacity)
            * u128::from(self.span_ms())
            * u128::from(HEADROOM_DENOMINATOR + HEADROOM_NUMERATOR);
        let per_window = u128::from(self.window_ms()) * u128::from(HEADROOM_DENOMINATOR);
        // At most 17/16 of the capacity, so it fits.
        (share.div_ceil(per_window) as u64).max(1)
    }

    /// The most items a base link sized for `capacity` takes when the live bases' rates leave
    /// it room (the window's `pool`): another headroom past it. Further, the model of a
    /// link's rate underestimates it, and a base that took the room of several would hold
    /// their part of the promise on a model that no longer fits.
    pub fn base_item_limit(&self, capacity: u64) -> u64 {
        let past = u128::from(capacity) * u128::from(HEADROOM_NUMERATOR) / u128::from(HEADROOM_DENOMINATOR);
        // At most twice `capacity` while the headroom is at most a whole one.
        capacity.saturating_add(u64::try_from(past).unwrap_or(u64::MAX))
    }

    /// The error rate each generation is sized for, all its links together: a lookup asks
    /// every live generation, so each gets an equal share of the filter's rate. Equal shares
    /// are the cheapest split: every generation is, in turn, one of the live ones at their
    /// fullest. Where generations scale, they pool their shares (the window's `pool`).
    pub fn generation_error_rate(&self) -> f64 {
        self.error_rate / f64::from(self.max_live_generations())
    }

    /// The rate of a generation's base link: [`BASE_SHARE_OF_RATE`] of the generation's when
    /// generations scale, all of it when they cannot.
    pub fn base_error_rate(&self) -> f64 {
        let rate = self.generation_error_rate();
        if self.expansion == 0 {
            rate
        } else {
            rate * BASE_SHARE_OF_RATE
        }
    }

    /// The rate a generation's overflow chain keeps, all its links together (its first link
    /// half of it, each next one half the previous one's): what the base link leaves.
    pub fn overflow_error_rate(&self) -> f64 {
        self.generation_error_rate() - self.base_error_rate()
    }

    /// The rate of the first link of a generation's overflow, as the scalable filter derives
    /// it from [`overflow_error_rate`](Self::overflow_error_rate).
    pub fn overflow_first_link_error_rate(&self) -> f64 {
        self.overflow_error_rate() * TIGHTENING_RATIO
    }

    /// Items the first link of a generation's overflow is sized for: as many as its base,
    /// then each link `expansion` times the last. A link of an eighth was tried: cheaper for
    /// an unevenness a little past the headroom, but a burst of twice a share then took four
    /// links, each asked by every lookup, where this takes one.
    pub fn overflow_capacity(&self) -> u64 {
        self.generation_capacity()
    }
}
