//! What a user may ask of a windowed filter, and how that becomes generations: their span in
//! time, how many can be alive at once, and the capacity and error rate each is sized for.

use crate::bloom::params::{checked_error_rate, MAX_CAPACITY, MAX_EXPANSION, MIN_CAPACITY, TIGHTENING_RATIO};
use crate::window::{Schedule, ScheduleError};

/// Each generation is sized for this much more than its share of a window's capacity,
/// as a fraction `HEADROOM_NUMERATOR / HEADROOM_DENOMINATOR` of it. A steady stream does not
/// split evenly over spans (batches, scheduling, a client catching up): without headroom,
/// half of the generations would take a few items more than their share and grow a second
/// link of twice their size.
pub const HEADROOM_NUMERATOR: u64 = 1;
/// See [`HEADROOM_NUMERATOR`].
pub const HEADROOM_DENOMINATOR: u64 = 8;

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

    /// Items each generation is sized for: its span's share of the window's capacity, with
    /// the headroom above.
    pub fn generation_capacity(&self) -> u64 {
        let share = u128::from(self.capacity)
            * u128::from(self.span_ms())
            * u128::from(HEADROOM_DENOMINATOR + HEADROOM_NUMERATOR);
        let per_window = u128::from(self.window_ms()) * u128::from(HEADROOM_DENOMINATOR);
        // At most 9/8 of the capacity, so it fits.
        (share.div_ceil(per_window) as u64).max(1)
    }

    /// The error rate each generation is built with: a lookup asks every live generation, so
    /// each gets an equal share of the filter's rate. Equal shares are the cheapest split:
    /// every generation is, in turn, one of the live ones at their fullest.
    pub fn generation_error_rate(&self) -> f64 {
        self.error_rate / f64::from(self.max_live_generations())
    }

    /// The rate of a generation's first link, as the scalable filter derives it from
    /// [`generation_error_rate`](Self::generation_error_rate): half of it when the
    /// generation scales, so that all its links together stay under it.
    pub fn first_link_error_rate(&self) -> f64 {
        let rate = self.generation_error_rate();
        if self.expansion == 0 {
            rate
        } else {
            rate * TIGHTENING_RATIO
        }
    }
}
