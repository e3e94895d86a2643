//! The Count-Min sketch (CMS.*) as Redis 8.12's RedisBloom has it: RedisBloom's hashing
//! (MurmurHash2 of the item, seeded with the row number), its sizing formula and its checked
//! weighted merge, as in 2.8.2; and 8.12's counters of 1, 2, 4 or 8 bytes (4 by default, 2.8's
//! only size), its negative increments, its refusal of an increment that would take a counter
//! or the total out of range (2.8 saturated the counters and wrapped the total), and its RDB
//! records. Nothing here knows about Redis.
//!
//! - [`dimensions`](mod@dimensions): CMS.INITBYDIM's and CMS.INITBYPROB's width and depth,
//!   and their refusals.
//! - `cell`: the cell sizes ([`CellSize`]), and the counters of each.
//! - `sketch`: the sketch and every operation on it ([`CountMinSketch`]).
//! - `encoding`: the RDB record, every version RedisBloom wrote (the [`Persistent`] impl).
//! - [`window`](mod@window): the windowed sketch (`rbCMSwind`, this module's own), which
//!   counts the last `window` milliseconds.
//!
//! [`Persistent`]: crate::decode::Persistent

mod cell;
pub mod dimensions;
mod encoding;
mod sketch;
#[cfg(test)]
mod tests;
pub mod window;

pub use cell::CellSize;
pub use dimensions::{dimensions, dimensions_for, InitError};
pub use sketch::{CountMinSketch, IncrementError, MergeError, MergeSource, SizeError};
