//! What a user may ask of a windowed value: the window and the generations it is cut into,
//! checked, and the span and the most generations alive that follow from them.

/// The shortest window, in milliseconds.
pub const MIN_WINDOW_MS: u64 = 1;
/// The longest window, in milliseconds: 2^40, about 34 years. The bound keeps every sum of
/// times far from overflowing and refuses values that are surely a unit mistake.
pub const MAX_WINDOW_MS: u64 = 1 << 40;

/// The latest time a record may hold, in milliseconds since the epoch: 2^50, past the year
/// 37,000. Times beyond any clock would make sums of times saturate, and a generation opened at
/// one look expired at once.
pub const MAX_TIME_MS: u64 = 1 << 50;

/// Generations when `GENERATIONS` is not given. Four keeps the slack (how long after its
/// window a write may still count) at a quarter of the window and a read at five generations;
/// for the Bloom filter, memory within 5% of the best choice (see `bloom::window`).
pub const DEFAULT_GENERATIONS: u32 = 4;
/// The fewest generations.
pub const MIN_GENERATIONS: u32 = 1;
/// The most generations: room for a fine slack, far from what memory allows.
pub const MAX_GENERATIONS: u32 = 64;

/// Why a schedule was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScheduleError {
    /// The window lies outside [`MIN_WINDOW_MS`]..=[`MAX_WINDOW_MS`].
    Window,
    /// The generations lie outside [`MIN_GENERATIONS`]..=[`MAX_GENERATIONS`], or outnumber
    /// the window's milliseconds (a generation spans at least one millisecond).
    Generations,
}

/// Whether a window, as parsed from a command (so possibly negative), is in range.
pub fn window_in_range(window_ms: i64) -> bool {
    u64::try_from(window_ms).is_ok_and(|window| (MIN_WINDOW_MS..=MAX_WINDOW_MS).contains(&window))
}

/// Whether a number of generations, as parsed from a command, is in range (for any window;
/// [`Schedule::new`] also holds it to the window's milliseconds).
pub fn generations_in_range(generations: i64) -> bool {
    (i64::from(MIN_GENERATIONS)..=i64::from(MAX_GENERATIONS)).contains(&generations)
}

/// A window cut into generations, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    window_ms: u64,
    generations: u32,
    /// [`span_ms`](Self::span_ms), divided once: every windowed write and many reads ask for
    /// it, and a 64-bit division takes dozens of cycles.
    span_ms: u64,
    /// [`max_live_generations`](Self::max_live_generations), divided once too: a windowed
    /// filter's lookups ask for it.
    max_live_generations: u32,
}

impl Schedule {
    /// A window of `window_ms` cut into `generations` spans, if both are in range.
    pub fn new(window_ms: u64, generations: u32) -> Result<Schedule, ScheduleError> {
        if !(MIN_WINDOW_MS..=MAX_WINDOW_MS).contains(&window_ms) {
            return Err(ScheduleError::Window);
        }
        if !(MIN_GENERATIONS..=MAX_GENERATIONS).contains(&generations) || u64::from(generations) > window_ms {
            return Err(ScheduleError::Generations);
        }
        let span_ms = window_ms.div_ceil(u64::from(generations));
        // At most `generations`, so the cast is exact.
        let max_live_generations = window_ms.div_ceil(span_ms) as u32 + 1;
        Ok(Schedule { window_ms, generations, span_ms, max_live_generations })
    }

    /// The window, in milliseconds.
    pub fn window_ms(&self) -> u64 {
        self.window_ms
    }

    /// The generations asked for (`GENERATIONS`).
    pub fn generations(&self) -> u32 {
        self.generations
    }

    /// How long a generation takes writes: the window over the generations, rounded up.
    /// Rounding up never lets more than `generations + 1` generations be alive, and still
    /// forgets in time: a write is gone `window + span` after it, and with whole milliseconds
    /// that is never later than the first millisecond past `window * (1 + 1 / generations)`.
    pub fn span_ms(&self) -> u64 {
        self.span_ms
    }

    /// The most generations alive at once: every generation whose writes may be younger than
    /// the window, that is the spans in the window, plus the one being filled.
    pub fn max_live_generations(&self) -> u32 {
        self.max_live_generations
    }

    /// The start of the span holding `at_ms`.
    pub fn span_start(&self, at_ms: u64) -> u64 {
        at_ms - at_ms % self.span_ms()
    }

    /// When a generation that started at `start_ms` stops counting: once everything written
    /// to it is older than the window, one window after its span ends.
    pub fn expiry_ms(&self, start_ms: u64) -> u64 {
        start_ms.saturating_add(self.span_ms()).saturating_add(self.window_ms)
    }
}
