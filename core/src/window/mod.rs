//! What every windowed type shares (`WINDOW ms [GENERATIONS g]`): the grid of spans time is cut
//! into, and the generations, one per span that received writes, that a value keeps on it.
//!
//! # The promises, for any payload
//! Time is cut into spans of `span = ceil(window / g)` milliseconds on a grid that starts at
//! the epoch, so that every server and every restart agrees on it. A write goes to the
//! generation of the current span, opened by the span's first write; a generation is dropped
//! once its span ended a whole window ago (at `start + span + window`).
//!
//! - **Kept within the window**: what was written at `t` sits in a generation whose span ends
//!   after `t`, so it is kept until after `t + window`.
//! - **Forgotten after `window (1 + 1/g)`**: that generation started at or before `t`, so it is
//!   gone at `t + window + span`, never later than the first millisecond past
//!   `window (1 + 1/g)` after `t`.
//! - **At most `g + 1` generations alive** ([`Schedule::max_live_generations`]): the spans in
//!   the window and the one being filled.
//! - **The clock is the caller's**: [`Generations::rotate`] takes the time and depends on
//!   nothing else, so a replica that applies its master's rotations, with the master's times,
//!   holds the same generations. Writes and reads read no clock.
//! - **Rotations never allocate**: a new generation is opened by a write (which can fail and
//!   change nothing), and the expired ones are handed back for the caller to free.
//!
//! - [`schedule`](mod@schedule): the window, the generations asked for, and the span;
//! - [`generations`](mod@generations): the generations on the grid, their rotation and their
//!   record.

pub mod generations;
pub mod schedule;
#[cfg(test)]
mod tests;

pub use generations::{Generations, Rotation, Stamped};
pub use schedule::{
    generations_in_range, window_in_range, Schedule, ScheduleError, DEFAULT_GENERATIONS, MAX_GENERATIONS,
    MAX_TIME_MS, MAX_WINDOW_MS, MIN_GENERATIONS, MIN_WINDOW_MS,
};
