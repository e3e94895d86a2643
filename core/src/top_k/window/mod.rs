//! Windowed Top-K (`TOPK.RESERVE key k [width depth decay] WINDOW ms [GENERATIONS g]`): the
//! heavy hitters of the last window, not of the whole stream.
//!
//! # Design
//! The window is cut into generations on `crate::window`'s grid of spans (see its promises):
//! each span that receives adds has a generation, `HeavyKeeper`'s counters of this crate (the
//! plain sketch's `buckets`, with the sketch's width, depth and decay, and a
//! generator of its own); a generation is dropped once everything counted in it is older than
//! the window. The window's top k is one list, the plain sketch's heap
//! (`heap`), of (item, window count), where an item's window count is the sum of
//! its estimates (largest bucket count) in the live generations:
//!
//! - **ADD/INCRBY** count the item in the current generation, as the plain sketch does. A
//!   listed item's window count is then its count there plus its count in the older
//!   generations, which stays in its slot's padding (older generations take no adds, so it
//!   cannot change before a rotation). Another item enters the list, replacing the smallest,
//!   when its window count reaches the smallest; the reply is the item it expelled, as the plain
//!   command answers. While the window has a single generation, this is the plain sketch's add,
//!   slot for slot.
//! - **Candidates**: an item an add leaves out of the list, or expels from it, is kept in a
//!   second heap of `k` (`candidates`), the heaviest such items by the window count they were
//!   noted with (at that add, or at their expulsion); no item is in both. A read by a master
//!   between an expiry and its rotation leaves them out: they are listed by the rotation.
//! - **A rotation** that closes or drops a generation counts every listed item and candidate
//!   again in the generations left, clears the items left with nothing, restores the heaps,
//!   and lets each candidate heavier than the smallest listed count take its place: the list
//!   holds the heaviest `k` of both. `2k` times the generations' depth reads, once a span, and
//!   no allocation.
//! - **QUERY and LIST** answer from the list, as the plain sketch does; **COUNT** sums the
//!   item's estimates over the live generations. A master reading between an expiry and the
//!   rotation its timer or next write makes recounts the listed items without the expired
//!   generations, so nothing older than `window (1 + 1/g)` is ever counted.
//!
//! Why one list and its candidates rather than a heap per generation merged at every
//! rotation: a generation needs no list of its own when the window's list is kept up to date
//! at each add, so a generation costs only its buckets (the window stays within `g + 1` plain
//! sketches even when every span of the window took adds), an add touches the window's heaps
//! only, and a rotation recounts `2k` items instead of merging `(g + 1) k`. What a list alone would give
//! up, the candidates keep: an item that was heavy in one generation while the list was full
//! of heavier items is listed when those expire, without another add (a plain sketch fed only
//! the window's items lists it; without candidates, in phases of heavy hitters shorter than the
//! window, the list held 8.5 of the ten heaviest where a plain sketch held 10).
//!
//! # Decay and replicas
//! Each generation decays as the plain sketch does, with its own generator seeded from the
//! sketch's seed (the plain sketch's, from the key's name) and its span's start: a replica,
//! and an AOF replay, open the same generation at the same span from the master's rotations,
//! so they draw the same decrements.
//!
//! # Record
//! Its own RDB record (type `rbTOPKwnd`, which RedisBloom does not know and refuses):
//!
//! ```text
//! k | width | depth | decay (double) | seed
//! | the list: k slots as RedisBloom's heap | each slot's item as a C string
//! | the candidates, laid out as the list
//! | the generations (crate::window::Generations::save), each: generator state | buckets
//! ```
//!
//! all integers unsigned (encoding version 2; version 1, without the candidates, loads with
//! none). Everything is checked on load, and held to the memory budget before it is allocated.

mod encoding;
mod sketch;
#[cfg(test)]
mod tests;

pub use sketch::{Generation, WindowTopK};
