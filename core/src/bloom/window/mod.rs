//! Time-windowed Bloom filters (`BF.RESERVE key rate capacity WINDOW ms [GENERATIONS g]`):
//! filters that forget items not added for longer than a window.
//!
//! # Design
//! Time is cut into spans of `span = ceil(window / g)` milliseconds, on a grid that starts at
//! the epoch (so every server, and every restart, agrees on it), the generations kept as every
//! windowed type keeps them ([`crate::window::Generations`]). Each span that receives items
//! has a *generation*, opened by the span's first add: a base link of this crate's filters
//! ([`SubFilter`]) and, past it, an overflow (a scalable [`BloomFilter`]) that only a burst
//! opens. An item goes to the generation of the current span; a
//! lookup asks every live generation, newest first. A generation is dropped once its span
//! ended a whole window ago (at `start + span + window`), when everything in it is older
//! than the window.
//!
//! - **No false negative within the window**: an item added at `t` sits in a generation
//!   whose span ends after `t`, so it is kept until after `t + window`. Adding an item that
//!   an older generation holds still adds it to the current one, which starts its window
//!   again; the add answers 1 only when no live generation held it.
//! - **It forgets**: that generation started at or before `t`, so it is gone at
//!   `t + window + span`: an item not added for more than `window * (1 + 1/g)` (in whole
//!   milliseconds) answers as one never added.
//! - **The error rate holds**: at most `window / span + 1 <= g + 1` generations are alive,
//!   so each is sized for `error_rate / (g + 1)`. Its base link, sized for its share of the
//!   window's capacity, takes nine tenths of that; a generation that receives more than its
//!   base holds opens an overflow, a scalable filter at the remaining tenth (its links' rates
//!   halve, so that all of them stay under it), and a non-scaling one answers
//!   [`FilterError::Full`] instead (its base takes the whole share). Where generations scale,
//!   the live generations pool their shares (`pool`): a base may take up to a sixteenth past
//!   its capacity where others leave room, the sum of their rates within the filter's.
//! - **The clock is the caller's**: [`WindowFilter::rotate`] takes the time, and its result
//!   depends on nothing else, so a replica that applies the master's rotations with the
//!   master's times holds the same bits. Adds and lookups read no clock.
//! - **Nothing stalls**: rotating opens no generation (the next one is opened by its span's
//!   first add, from zeroed pages that the allocator does not write), and the generations
//!   it drops are handed back in [`Rotation::dropped`](crate::window::Rotation::dropped) for the caller to free in the
//!   background.
//!
//! # Memory
//! A steady stream of `capacity` items per window keeps `g + 1` generations, each a base link
//! sized for `capacity / g` items plus a sixteenth of headroom ([`HEADROOM_NUMERATOR`] /
//! [`HEADROOM_DENOMINATOR`]) at `0.9 error_rate / (g + 1)` ([`BASE_SHARE_OF_RATE`]). Against
//! a plain filter of this crate holding one window's items at the same rate (scaling: one link
//! at `error_rate / 2`), peak bits per item of the window over a third window of a steady
//! stream of 100,000 items per window, and the false-positive rate measured at the worst
//! instant (the last millisecond of a span, every live generation full), printed by
//! `cargo test -p redbloom-core --release window::tests::capacity_and_memory::memory_table --
//! --ignored --nocapture`:
//!
//! | rate | g | bits/item | × plain scaling | × plain non-scaling | measured rate |
//! |------|---|-----------|-----------------|---------------------|---------------|
//! | 1%   | 1 | 25.3 | 2.17 | 2.51 | 0.64% |
//! | 1%   | 2 | 19.7 | 1.69 | 1.96 | 0.60% |
//! | 1%   | 3 | 18.4 | 1.58 | 1.83 | 0.62% |
//! | 1%   | **4** | **17.9** | **1.54** | 1.78 | 0.58% |
//! | 1%   | 6 | 17.6 | 1.51 | 1.75 | 0.57% |
//! | 1%   | 8 | 17.6 | 1.51 | 1.75 | 0.59% |
//! | 1%   | 16 | 18.3 | 1.57 | 1.82 | 0.59% |
//! | 0.1% | 1 | 35.1 | 2.16 | 2.39 | 0.062% |
//! | 0.1% | 2 | 27.7 | 1.70 | 1.88 | 0.057% |
//! | 0.1% | 3 | 25.6 | 1.57 | 1.74 | 0.052% |
//! | 0.1% | **4** | **24.6** | **1.51** | 1.67 | 0.052% |
//! | 0.1% | 6 | 24.0 | 1.47 | 1.63 | 0.045% |
//! | 0.1% | 8 | 23.8 | 1.46 | 1.62 | 0.052% |
//! | 0.1% | 16 | 24.1 | 1.48 | 1.64 | 0.051% |
//!
//! (the plain filter: 11.7 bits per item at 1%, 10.1 non-scaling; 16.3 and 14.7 at 0.1%).
//! Three costs make the ratio, in the classic model where a filter needs `-ln p / ln² 2`
//! bits per item: the slack (`1 + 1/g` windows of items are kept: 1.25 at the default), the
//! split of the rate over `g + 1` generations (`ln((g + 1) / 0.9) / ln² 2` more bits per item
//! than a classic filter at the full rate, against the plain filter's `ln 2 / ln² 2` for its
//! first link's half), and the headroom (17/16). Until version 2 of the encoding a generation
//! was a scalable filter whose first link took half its share, with an eighth of headroom:
//! 1.78 times the plain filter at 1%. The overflow keeps bursts at the rate without that
//! half: its first link holds a share (at a twentieth of the generation's rate, about 1.4
//! times a base link's bits), then each next one `expansion` times more, so a burst of any
//! size grows the generation as a scalable filter grows, with fewer bits than the first
//! version's second link of two shares at a quarter of the rate. The smallest filters pay
//! whole blocks: a generation has at least one 512-bit block, so below a few hundred items per
//! span the ratio follows the rounding. They also pay the fixed parts, 648 bytes at the
//! default (the filter, its current generation's slot and one for each older generation that
//! can be alive, each holding a base link's description; a plain filter's are 120; the older
//! slots are given back while no generation is held, so an idle filter takes 296): peak
//! memory against a plain filter, fixed parts included, at 1% is 1.54 at 100,000 items per
//! window and more, 1.56 at 15,000, 1.60 at 5,000, 1.62 at 3,000 and 1.81 at 1,000 (in
//! process; a test holds 15,000 items within 1.58 and 3,000 within 1.7).
//!
//! Measured through the server as a new user runs it, by `make bench BENCH_ARGS='--only-window'`
//! (a steady stream of `BF.RESERVE w 0.01 15000 WINDOW 3000`, and of 1,000,000 items per 4 s,
//! against a plain filter of the same capacity holding one window's items): peak MEMORY USAGE
//! 1.56 and 1.54 times the plain filter's, the fixed parts included.
//!
//! The measured rate at steady state is about three fifths of the requested one: the rest
//! is held for bursts and for the headroom. At ten times the capacity every generation has
//! grown its overflow and the rate measured at the worst instant is still under the
//! requested one (a test checks it).
//!
//! For comparison, an Age-Partitioned Bloom Filter (Shtul, Baquero, Almeida 2020) with the
//! same slack (`l = 4` generations in the window, a quarter more kept) needs, by that
//! paper's false-positive recurrence and its slices of `1.44 k` bits per item of a
//! generation, 27.8 bits per item of its window at 1% (`k = 7`) and 42.2 at 0.1% (`k = 9`):
//! 1.55 and 1.7 times this filter. It also counts a window in items, not time, and does not
//! scale.
//!
//! - [`params`](mod@params): the limits and the sizing of generations;
//! - `filter`: the filter on [`Generations`](crate::window::Generations), its lookups and adds;
//! - `generation`: a generation's base link and overflow;
//! - `pool`: how many items the current base takes, the live bases' rates pooled;
//! - `encoding`: the header, chunks and RDB record.
//!
//! [`BloomFilter`]: crate::bloom::BloomFilter
//! [`SubFilter`]: crate::bloom::sub_filter::SubFilter
//! [`FilterError::Full`]: crate::bloom::FilterError::Full

mod encoding;
mod filter;
mod generation;
pub mod params;
mod pool;
#[cfg(test)]
mod tests;

pub use encoding::{is_window_header, MAGIC};
pub use filter::WindowFilter;
pub use generation::Generation;
pub use params::{ParamError, WindowParams, BASE_SHARE_OF_RATE, HEADROOM_DENOMINATOR, HEADROOM_NUMERATOR};
