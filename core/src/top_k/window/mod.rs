//! Windowed Top-K (`TOPK.RESERVE key k [width depth decay] WINDOW ms [GENERATIONS g]`): the
//! heavy hitters of the last window, not of the whole stream.
//!
//! # Design
//! The window is cut into generations on `crate::window`'s grid of spans (see its promises):
//! each span that receives adds has a generation, a plain sketch of the span's adds
//! (`HeavyKeeper`'s counters of this crate, the plain sketch's `buckets`, with the sketch's
//! width, depth and decay and a generator of its own, and the plain sketch's list, `heap`, of
//! the span's `k` heaviest items); a generation is dropped once everything counted in it is
//! older than the window. The window's top k is one more list, of (item, window count), where
//! an item's window count is the sum of its estimates (largest bucket count) in the live
//! generations:
//!
//! - **ADD/INCRBY** count the item in the current generation. A listed item's window count is
//!   then its count there plus its count in the older generations, which stays in its slot's
//!   padding (older generations take no adds, so it cannot change before a rotation). Another
//!   item enters the window's list, replacing the smallest, when its window count reaches the
//!   smallest; the reply is the item it expelled, as the plain command answers. While the
//!   window has a single generation, this is the plain sketch's add, slot for slot.
//! - **The generation's list** ranks items by their counts in its span, as a plain sketch's
//!   list would: an add offers the item to it while the window's list leaves the item out;
//!   an item the window's list holds is offered when expelled (by an add, or by a rotation
//!   that drops a generation mid-span), or when the span closes, at its count in the span
//!   (the list's count less the older count). So an add of a listed item, most adds, updates
//!   one list, not two. While the window is one generation, its list is the span's, and the
//!   span's close copies it.
//! - **A rotation** that closes or drops a generation counts every listed item again in the
//!   generations left, clears the items left with nothing, and then offers the items of the
//!   generations' own lists that could enter, counted over the window, in place of the
//!   smallest listed one.
//!   An item heavy in the window is heavy in some span (or in the list already, from its
//!   adds), so it is listed by the rotation that drops heavier items even when they kept it
//!   out of the window's list at every add: an item heavy in a span when the list was full of
//!   heavier ones from earlier spans, say.
//! - **QUERY and LIST** answer from the list, as the plain sketch does; **COUNT** sums the
//!   item's estimates over the live generations. A master reading between an expiry and the
//!   rotation its timer or next write makes recounts the listed items without the expired
//!   generations, so nothing older than `window (1 + 1/g)` is ever counted.
//!
//! Why each generation keeps its own list: a list of the window alone, kept at each add,
//! forgets what it left out. An earlier version kept `k` candidates beside it, the items it
//! left out ranked by their window counts when left out; those counts included generations
//! about to expire, so an item heavy in a later span was never noted, and once the heavier
//! items expired the list was empty of it until its next add (recall 0.84 of a plain sketch
//! fed only the window's items, on heavy hitters changing every span). A generation's list
//! ranks by the span's own counts, which never expire before the generation does. It costs `k`
//! slots and their items per generation, and a rotation a sort of the generations' entries
//! and at most `4k` items counted over the window besides the listed ones (the candidates
//! were `k`).
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
//! | the generations (crate::window::Generations::save), each: generator state | buckets
//!   | its list, laid out as the window's
//! ```
//!
//! all integers unsigned (encoding version 3; versions 1 and 2, whose generations have no
//! lists of their own, load with empty ones, version 2's candidates read and dropped).
//! Everything is checked on load, and held to the memory budget before it is allocated.

mod encoding;
mod sketch;
#[cfg(test)]
mod tests;

pub use sketch::{Generation, WindowTopK};
