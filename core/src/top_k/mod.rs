//! The Top-K sketch (TOPK.*): RedisBloom 2.8.2's `HeavyKeeper`, its layout, hashes and answers,
//! and its RDB record (`TopK-TYPE`, encoding version 0), with three changes:
//!
//! - **Deterministic decay.** RedisBloom decays buckets with libc's `rand()`, so a replica, or
//!   the same server after a restart, computes another list from the same commands. Here the
//!   draws come from a generator seeded when the sketch is made (the module derives the seed
//!   from the key's name, so that master and replica agree) and saved with it, so that a load
//!   continues the sequence where the save left it.
//! - **Decay after a load.** RedisBloom builds its table of `decay^i` when it creates a sketch,
//!   not when it loads one: a loaded sketch never decays again (a 1x1 sketch holding `a` keeps
//!   it through any number of adds of `b`). Here the powers are derived whenever a sketch is
//!   made or loaded.
//! - **TOPK.INCRBY in bounded time.** RedisBloom hits another item's bucket once per unit of
//!   increment; here the same law is drawn in a few dozen steps (see `decay`).
//!
//! Where RedisBloom's algorithm draws nothing (buckets that are empty or the item's own, a
//! decay of 1) the answers are its answers, tie for tie.
//!
//! # Where the generator's state lives
//!
//! The record must stay loadable by RedisBloom 2.8.2, which reads a fixed list of values (a
//! value more would desynchronise the RDB stream). It saves its heap as raw `HeapBucket`
//! structs, `{u32 fp, u32 itemlen, char *item, u32 count}` (24 bytes with padding), and its
//! loader overwrites every `item` pointer with the string it loads next, without reading it.
//! So slot 0's 8 pointer bytes hold the generator's state: this sketch keeps them there at all
//! times (heap moves swap the other fields and leave them), saves them as they are, and takes
//! them back on load. A record RedisBloom wrote holds a stale pointer there, which then seeds
//! the generator: master and replica load the same bytes, so they still agree.
//!
//! - `decay`: the generator and the decay's draws.
//! - `sketch`: the buckets, the heap and the operations ([`TopK`]).
//! - `encoding`: the RDB record (the [`crate::decode::Persistent`] implementation).

mod decay;
mod encoding;
mod sketch;
#[cfg(test)]
mod tests;

pub use sketch::{Expelled, Listed, TopK};

/// TOPK.RESERVE's width when only k is given.
pub const DEFAULT_WIDTH: u32 = 8;
/// TOPK.RESERVE's depth when only k is given.
pub const DEFAULT_DEPTH: u32 = 7;
/// TOPK.RESERVE's decay when only k is given.
pub const DEFAULT_DECAY: f64 = 0.9;
/// The largest increment TOPK.INCRBY takes (RedisBloom's bound; this sketch takes any `u32`).
pub const MAX_INCREMENT: u32 = 100_000;
/// RedisBloom's answer to an increment that is not an integer in 0..=[`MAX_INCREMENT`], its
/// line continuation's spaces included.
pub const INCREMENT_ERROR: &str = "TopK: increment must be an integer greater or equal to 0                            and smaller or equal to 100,000";

/// A parameter of TOPK.RESERVE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parameter {
    /// Items kept: 1 to `u32::MAX`.
    K,
    /// Counters in a row: 1 to `u32::MAX`.
    Width,
    /// Rows: 1 to `u32::MAX`.
    Depth,
    /// Greater than 0, at most 1.
    Decay,
}

impl Parameter {
    /// RedisBloom's error for a value out of range (or not a number).
    pub fn error(self) -> &'static str {
        match self {
            Parameter::K => "TopK: invalid k",
            Parameter::Width => "TopK: invalid width",
            Parameter::Depth => "TopK: invalid depth",
            Parameter::Decay => "TopK: invalid decay value. must be '<= 1' & '> 0'",
        }
    }
}

/// Why a sketch could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeError {
    /// A parameter out of RedisBloom's range.
    Invalid(Parameter),
    /// Beyond the memory budget (RedisBloom answers "ERR Insufficient memory to create topk
    /// data structure" when its allocation fails).
    TooLarge,
    /// The allocator had no memory for it.
    OutOfMemory,
}
