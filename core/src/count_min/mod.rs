//! The Count-Min sketch (CMS.*), RedisBloom 2.8.2's, answer for answer and byte for byte:
//! its hashing (MurmurHash2 of the item, seeded with the row number), its 32-bit counters
//! that saturate, its total that wraps, its checked weighted merge, its sizing formula and
//! its RDB record. Nothing here knows about Redis.
//!
//! - [`dimensions`](mod@dimensions): CMS.INITBYDIM's and CMS.INITBYPROB's width and depth,
//!   and their refusals.
//! - `sketch`: the sketch and every operation on it ([`CountMinSketch`]).
//! - `encoding`: the RDB record, every version RedisBloom wrote (the [`Persistent`] impl).
//!
//! [`Persistent`]: crate::decode::Persistent

pub mod dimensions;
mod encoding;
mod sketch;
#[cfg(test)]
mod tests;

pub use dimensions::{dimensions, dimensions_for, InitError};
pub use sketch::{CountMinSketch, MergeError, MergeSource, SizeError, SATURATED};
