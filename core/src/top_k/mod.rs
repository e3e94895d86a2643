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
//! - **TOPK.INCRBY in fewer steps.** RedisBloom hits another item's bucket once per unit of
//!   increment; here the same law is drawn in steps that each settle many units (see `decay`):
//!   a few dozen, except for a decay close to 1 (docs/sketches.md).
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
//! - `buckets`: `HeavyKeeper`'s counters, and the counting of an item in them.
//! - `heap`: the list of heavy hitters, RedisBloom's heap.
//! - `sketch`: the sketch and its operations ([`TopK`]).
//! - [`window`]: the windowed sketch (`WINDOW`), over the same buckets and heap.
//! - `encoding`: the RDB record (the [`crate::decode::Persistent`] implementation).

mod buckets;
mod decay;
mod encoding;
mod heap;
mod params;
mod sketch;
#[cfg(test)]
mod tests;
pub mod window;

pub use heap::{Expelled, Listed};
pub use params::{
    Parameter, Shape, SizeError, DEFAULT_DECAY, DEFAULT_DEPTH, DEFAULT_WIDTH, INCREMENT_ERROR, MAX_INCREMENT,
};
pub use sketch::TopK;
