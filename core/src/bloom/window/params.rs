//! What a user may ask of a windowed filter, and how that becomes generations: their span in
//! time, how many can be alive at once, and the capacity and error rate each is sized for.

use crate::bloom::params::{checked_error_rate, MAX_CAPACITY, MAX_EXPANSION, MIN_CAPACITY, TIGHTENING_RATIO};

/// The shortest window, in milliseconds.
pub const MIN_WINDOW_MS: u64 = 1;
/// The longest window, in milliseconds: 2^40, about 34 years. The bound keeps every sum of
/// times far from overflowing and refuses values that are surely a unit mistake.
pub const MAX_WINDOW_MS: u64 = 1 << 40;

/// Generations when `GENERATIONS` is not given. Four keeps the slack (how long after its
/// window an item may still answer 1) at a quarter of the window and a lookup at five
/// generations, with memory within 5% of the best choice for this design (see the module
/// documentation's table).
pub const DEFAULT_GENERATIONS: u32 = 4;
/// The fewest generations.
pub const MIN_GENERATIONS: u32 = 1;
/// The most generations. Past about 8 more generations cost memory again (each lookup ORs
/// more of them, so each needs a lower error rate); 64 leaves room for a fine slack.
pub const MAX_GENERATIONS: u32 = 64;

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
    /// The window lies outside [`MIN_WINDOW_MS`]..=[`MAX_WINDOW_MS`].
    Window,
    /// The generations lie outside [`MIN_GENERATIONS`]..=[`MAX_GENERATIONS`], or outnumber
    /// the window's milliseconds (a generation spans at least one millisecond).
    Generations,
    /// The capacity lies outside the range a plain filter accepts.
    Capacity,
    /// The error rate lies outside the open interval (0, 1).
    ErrorRate,
    /// The expansion lies above what a plain filter accepts.
    Expansion,
}

/// Whether a window, as parsed from a command (so possibly negative), is in range.
pub fn window_in_range(window_ms: i64) -> bool {
    u64::try_from(window_ms).is_ok_and(|window| (MIN_WINDOW_MS..=MAX_WINDOW_MS).contains(&window))
}

/// Whether a number of generations, as parsed from a command, is in range (for any window;
/// [`WindowParams::new`] also holds it to the window's milliseconds).
pub fn generations_in_range(generations: i64) -> bool {
    (i64::from(MIN_GENERATIONS)..=i64::from(MAX_GENERATIONS)).contains(&generations)
}

/// The parameters of a windowed filter, checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowParams {
    window_ms: u64,
    generations: u32,
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
        if !(MIN_WINDOW_MS..=MAX_WINDOW_MS).contains(&window_ms) {
            return Err(ParamError::Window);
        }
        if !(MIN_GENERATIONS..=MAX_GENERATIONS).contains(&generations) || u64::from(generations) > window_ms {
            return Err(ParamError::Generations);
        }
        if !(MIN_CAPACITY..=MAX_CAPACITY).contains(&capacity) {
            return Err(ParamError::Capacity);
        }
        let error_rate = checked_error_rate(error_rate).ok_or(ParamError::ErrorRate)?;
        if expansion > MAX_EXPANSION {
            return Err(ParamError::Expansion);
        }
        Ok(WindowParams { window_ms, generations, capacity, error_rate, expansion })
    }

    /// The window, in milliseconds.
    pub fn window_ms(&self) -> u64 {
        self.window_ms
    }

    /// The generations asked for (`GENERATIONS`).
    pub fn generations(&self) -> u32 {
        self.generations
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

    /// How long a generation takes items: the window over the generations, rounded up.
    /// Rounding up never lets more than `generations + 1` generations be alive, and still
    /// forgets in time: an item is gone `window + span` after its latest add, and with
    /// whole milliseconds that is never later than the first millisecond past
    /// `window * (1 + 1 / generations)`.
    pub fn span_ms(&self) -> u64 {
        self.window_ms.div_ceil(u64::from(self.generations))
    }

    /// The most generations alive at once: every generation whose items may be younger than
    /// the window, that is the spans in the window, plus the one being filled.
    pub fn max_live_generations(&self) -> u32 {
        // At most `generations`, so the cast is exact.
        self.window_ms.div_ceil(self.span_ms()) as u32 + 1
    }

    /// Items each generation is sized for: its span's share of the window's capacity, with
    /// the headroom above.
    pub fn generation_capacity(&self) -> u64 {
        let share = u128::from(self.capacity)
            * u128::from(self.span_ms())
            * u128::from(HEADROOM_DENOMINATOR + HEADROOM_NUMERATOR);
        let per_window = u128::from(self.window_ms) * u128::from(HEADROOM_DENOMINATOR);
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
