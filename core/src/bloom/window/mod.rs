//! Time-windowed Bloom filters (`BF.RESERVE key rate capacity WINDOW ms [GENERATIONS g]`):
//! filters that forget items not added for longer than a window.
//!
//! # Design
//! Time is cut into spans of `span = ceil(window / g)` milliseconds, on a grid that starts at
//! the epoch (so every server, and every restart, agrees on it). Each span that receives
//! items has a *generation*: an ordinary scalable filter of this crate ([`BloomFilter`]),
//! opened by the span's first add. An item goes to the generation of the current span; a
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
//!   so each is built for `error_rate / (g + 1)`. A generation that receives more than its
//!   share scales like any scalable filter (its links' rates halve, so that all of them stay
//!   under its share), and a non-scaling one answers [`FilterError::Full`] instead.
//! - **The clock is the caller's**: [`WindowFilter::rotate`] takes the time, and its result
//!   depends on nothing else, so a replica that applies the master's rotations with the
//!   master's times holds the same bits. Adds and lookups read no clock.
//! - **Nothing stalls**: rotating opens no generation (the next one is opened by its span's
//!   first add, from zeroed pages that the allocator does not write), and the generations
//!   it drops are handed back in [`Rotation::dropped`] for the caller to free in the
//!   background.
//!
//! # Memory
//! A steady stream of `capacity` items per window keeps `g + 1` generations, each sized for
//! `capacity / g` items plus an eighth of headroom ([`HEADROOM_NUMERATOR`] /
//! [`HEADROOM_DENOMINATOR`]), with a first link at `error_rate / (2 (g + 1))`. Against a plain
//! filter of this crate holding one window's items at the same rate (scaling: one link at
//! `error_rate / 2`), peak bits per item of the window over a third window of a steady
//! stream of 100,000 items per window, and the false-positive rate measured at the worst
//! instant (the last millisecond of a span, every live generation full), printed by
//! `cargo test -p redbloom-core --release window::tests::memory_table -- --ignored --nocapture`:
//!
//! | rate | g | bits/item | × plain scaling | × plain non-scaling | measured rate |
//! |------|---|-----------|-----------------|---------------------|---------------|
//! | 1%   | 1 | 28.7 | 2.46 | 2.85 | 0.24% |
//! | 1%   | 2 | 23.0 | 1.97 | 2.29 | 0.20% |
//! | 1%   | 3 | 21.4 | 1.83 | 2.12 | 0.20% |
//! | 1%   | **4** | **20.7** | **1.78** | 2.06 | 0.21% |
//! | 1%   | 6 | 20.3 | 1.74 | 2.02 | 0.21% |
//! | 1%   | 8 | 20.3 | 1.74 | 2.02 | 0.20% |
//! | 1%   | 16 | 20.9 | 1.79 | 2.08 | 0.17% |
//! | 0.1% | 1 | 40.1 | 2.46 | 2.72 | 0.022% |
//! | 0.1% | 2 | 31.6 | 1.94 | 2.15 | 0.020% |
//! | 0.1% | 3 | 29.1 | 1.79 | 1.98 | 0.020% |
//! | 0.1% | **4** | **28.0** | **1.72** | 1.90 | 0.015% |
//! | 0.1% | 6 | 27.1 | 1.67 | 1.84 | 0.023% |
//! | 0.1% | 8 | 26.9 | 1.65 | 1.83 | 0.017% |
//! | 0.1% | 16 | 27.2 | 1.67 | 1.85 | 0.015% |
//!
//! (the plain filter: 11.7 bits per item at 1%, 10.1 non-scaling; 16.3 and 14.7 at 0.1%).
//! Three costs make the ratio, in the classic model where a filter needs `-ln p / ln² 2`
//! bits per item: the slack (`1 + 1/g` windows of items are kept), the split of the rate
//! over `g + 1` generations (`ln(g + 1) / ln² 2` more bits per item), and the headroom
//! (9/8). Fewer generations cost more slack, more generations more splitting: the optimum is
//! near 6 to 8, within 5% of 4, which answers a lookup with five generations instead of
//! seven or nine. Without the headroom the ratio would be 1.58 at 1% and 1.53 at 0.1%, but a
//! generation that takes a few items more than its share grows a link of twice its size,
//! and a stream that is steady on average but uneven over spans would then cost about three
//! times as much; the headroom absorbs an unevenness of an eighth.
//!
//! The measured rate at steady state is a fifth of the requested one: the rest is held for
//! bursts, as in any scalable filter (each link's rate halves, so the first link starts at
//! half). At ten times the capacity every generation has grown three links and the rate
//! measured at the worst instant is still under the requested one (a test checks it).
//!
//! For comparison, an Age-Partitioned Bloom Filter (Shtul, Baquero, Almeida 2020) with the
//! same slack (`l = 4` generations in the window, a quarter more kept) needs, by that
//! paper's false-positive recurrence and its slices of `1.44 k` bits per item of a
//! generation, 27.8 bits per item of its window at 1% (`k = 7`) and 42.2 at 0.1% (`k = 9`):
//! 1.3 and 1.5 times this filter. It also counts a window in items, not time, and does not
//! scale.
//!
//! - [`params`](mod@params): the limits and the sizing of generations;
//! - `filter`: the filter, its generations and its rotation;
//! - `encoding`: the header, chunks and RDB record.
//!
//! [`BloomFilter`]: crate::bloom::BloomFilter
//! [`FilterError::Full`]: crate::bloom::FilterError::Full

mod encoding;
mod filter;
mod generation;
pub mod params;
#[cfg(test)]
mod tests;

pub use encoding::{is_window_header, MAGIC};
pub use filter::WindowFilter;
pub use generation::Generation;
pub use params::{
    ParamError, WindowParams, BASE_SHARE_OF_RATE, HEADROOM_DENOMINATOR, HEADROOM_NUMERATOR, OVERFLOW_DIVISOR,
};
