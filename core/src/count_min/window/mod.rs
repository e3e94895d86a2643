//! Count-Min sketches over a sliding window (`CMS.INITBYDIM key width depth WINDOW ms
//! [GENERATIONS g]`, and INITBYPROB): the counts of what was added in the last `window`
//! milliseconds, on the generations of [`crate::window`].
//!
//! # The promises
//! For any item, read by the master's clock (or on a replica, by its master's rotations):
//!
//! - **Never below the window's count**: what was added at most `window` ago is counted, so
//!   the answer is at least the item's true count of the last `window` milliseconds (more
//!   where other items share all its counters, as in any Count-Min sketch).
//! - **Nothing older than `window (1 + 1/g)`**: an increment is gone once its generation
//!   expires, at most `window + span` after it.
//! - **The plain sketch's accuracy**: the counters are the plain sketch's over what the live
//!   generations hold, so its error bound holds over at most `window (1 + 1/g)` of the stream.
//!
//! # Design
//! A running total `T`, a plain [`CountMinSketch`], is the sum of every live generation,
//! counter by counter and in its count. Increments and queries touch `T` alone, as they touch
//! a plain sketch: the same work, the same overflow rules (the window's counts stay within
//! the cell's range). Each closed span's counts are kept as a sketch of their own, only to be
//! taken out of `T` when they expire; the current span's are `T` less those, with no sketch
//! of their own until the span closes, when the rotation writes them into the buffer of a
//! generation that expires by then, or into a buffer the span's first write reserved when
//! none does (an allocation that can fail, refusing the write with nothing changed). So
//! rotations never allocate a sketch, and are deterministic: a replica applying its
//! master's `CMS.ROTATE` holds the same counters.
//!
//! A master's read between rotations (a read cannot rotate) takes the counters of the
//! generations already expired by its clock out of `T`'s, item by item: rare, and at most
//! `g + 1` reads more per counter.
//!
//! Increments must not be negative: a decrement would come out of whichever span holds the
//! count, and each of those expires at its own time ([`WriteError::Negative`]).
//!
//! # Costs
//! - **Writes and reads**: a plain sketch's, and a rotation check (a write rotates first).
//! - **Rotations**: once per span, taking an expired generation out of `T` (one pass over
//!   the counters) and writing the closed span's counts (one pass that reads `T` and every
//!   closed generation a cache-sized step at a time, writing each step once).
//! - **Memory**: `T` and the closed generations, at most `window / span + 1 <= g + 1`
//!   sketches of the plain one's size; fewer while the stream has not filled the window, and
//!   one (`T`) when the window holds nothing.
//!
//! - `sketch`: the sketch, its writes, reads and rotation;
//! - `cells`: the counter arithmetic between sketches;
//! - `merge`: CMS.MERGE of windowed sketches, span by span;
//! - `encoding`: the RDB record (the [`Persistent`](crate::decode::Persistent) impl).

mod cells;
mod encoding;
mod merge;
mod sketch;
#[cfg(test)]
mod tests;

pub use merge::{WindowMergeError, WindowSource};
pub use sketch::{Generation, Rotated, WindowedCountMin, WriteError};
