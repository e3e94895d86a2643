//! How many items the current generation's base link takes before its overflow opens, when
//! the live generations pool their error rates.
//!
//! A client that sends its stream in batches, at an interval that does not divide the span,
//! gives some spans a batch more than their share and the next ones a batch less. With each
//! base held to its own capacity, every span past the headroom opened an overflow (a first
//! link of a whole share): 15,000 items per 3 s sent every 100 ms peaked at 2.94 times a plain
//! filter's memory. What a lookup pays is the sum of the live links' rates, not any one's, so a
//! base may take what the others leave.
//!
//! **The rule.** Count each live generation at its base's expected rate at its item count
//! ([`Layout::expected_rate`]), plus its overflow's share of the rate
//! ([`WindowParams::overflow_error_rate`]) if it opened one or is the current generation (which
//! still may); an older one that never opened its overflow, at its base's rate but at least
//! that share. Count each generation still to come in the window at a base's rate at its
//! capacity plus that share. The current base takes an item while that sum stays within
//! `g + 1` generations at the rates their layouts aim at (the rates with the sizing's margin,
//! [`SIZING_MARGIN`]), and never past [`WindowParams::base_item_limit`]:
//!
//! - A base at its capacity is about at its aimed rate already, so what one takes past it,
//!   another generation left: a base a batch short, or an older generation that never opened
//!   its overflow (its share of the rate is unused for good, until it is dropped).
//! - The sum is the promise's, whatever comes: the overflows' shares are counted before they
//!   open. Where generations that borrowed are still alive when one that lent is dropped, the
//!   base that takes its place opens its overflow short of its capacity instead; a dropped
//!   generation frees at least an overflow's share, so that one can always open.
//! - Counting the generations still to come at their capacity (in the first window, and after
//!   idle spans) is what keeps a stream steadily above the capacity, from a first span that is
//!   full, from holding any base short: each takes its capacity and the rounding of its
//!   layout, and the one that replaces it finds the same room; its peak memory is then no more
//!   than with bases kept to their capacity. From a light first span (a filter made late in a
//!   span), that span's room is lent and then recurs each window: one base per window is held
//!   short. Its overflow's first link takes the shortfall on top of a share
//!   ([`Generation`]'s add), so that it holds as much before a second link: peak memory at
//!   most 1.07 times that of bases kept to their capacity (1.23 with an overflow of one share).
//!   Lending less would give batched streams at their capacity less room.
//!
//! The limit depends only on the live generations (their links and item counts) and the
//! parameters, so a replica, a restarted server and the master agree on it; the filter keeps
//! it until the next rotation or load changes the live generations. The model is close at and
//! below a base's capacity and underestimates far past it: hence the cap of a sixteenth. It
//! calls the platform's `exp` and `pow`: a master and a replica on different C libraries
//! could, at a sum within a rounding of the bound, place an item differently; a load allows a
//! larger slack than an add, so that such a record still loads.

use super::generation::Generation;
use super::params::WindowParams;
use crate::bloom::params::{Layout, SIZING_MARGIN};
use crate::bloom::sub_filter::SubFilter;
use crate::window::{Generations, Stamped};

/// The relative slack of the bound an add keeps: generations at exactly their aimed rates sum
/// to it, and the floating-point sum rounds either way.
const ADD_SLACK: f64 = 1e-9;
/// The relative slack of the bound a load checks: larger than an add's, so that a record whose
/// sum another platform's `exp` rounded otherwise (or summed in another grouping) still loads.
const LOAD_SLACK: f64 = 1e-6;

/// The rates a generation's base and its overflow aim at.
struct AimedRates {
    base: f64,
    overflow: f64,
}

impl AimedRates {
    fn of(params: &WindowParams) -> AimedRates {
        AimedRates {
            base: params.base_error_rate() * SIZING_MARGIN,
            overflow: params.overflow_error_rate() * SIZING_MARGIN,
        }
    }

    /// What every generation that can be alive sums to at the aimed rates, with `slack`.
    fn bound(&self, params: &WindowParams, slack: f64) -> f64 {
        f64::from(params.max_live_generations()) * (self.base + self.overflow) * (1.0 + slack)
    }
}

/// A base link's expected rate at its item count.
fn expected_rate(base: &SubFilter) -> f64 {
    base.layout().expected_rate(base.items())
}

/// The older live generations' part of the sum, oldest first: a load sums them in the same
/// order, then adds the current base's rate and the current overflow's share in the same
/// grouping, so that a filter's own record is not refused by a rounding (and a sum over fewer
/// generations is never larger).
fn older_sum(older: &[Stamped<Generation>], aimed: &AimedRates) -> f64 {
    older
        .iter()
        .map(|generation| {
            let base = expected_rate(&generation.value.base);
            if generation.value.overflow.is_some() {
                base + aimed.overflow
            } else {
                // What it lends is never more than its base takes: were it dropped while those
                // that borrowed its share live on, the base that takes its place could not
                // keep an overflow's share even empty.
                base.max(aimed.overflow)
            }
        })
        .sum()
}

/// Generations still to come in the window besides the `older` ones and the current span's.
fn to_come(params: &WindowParams, older: &[Stamped<Generation>]) -> u32 {
    let live = u32::try_from(older.len()).map_or(u32::MAX, |older| older.saturating_add(1));
    params.max_live_generations().saturating_sub(live)
}

/// Whether the live generations' sum is within what every add of a pooling filter keeps (what
/// a load checks): the current span's generation counted as an overflow's share until it opens,
/// and each generation still to come as one too. An add keeps more (those to come at a full
/// base), but a drop frees only what the dropped generation counted, at least an overflow's
/// share: this is what holds between adds, and what lets the next add, even of a base that
/// may take nothing, keep it.
pub(super) fn holds_within_bound(params: &WindowParams, generations: &Generations<Generation>) -> bool {
    let aimed = AimedRates::of(params);
    let older = generations.older();
    let current = generations.current().map_or(0.0, |current| expected_rate(&current.value.base));
    older_sum(older, &aimed) + current + aimed.overflow + f64::from(to_come(params, older)) * aimed.overflow
        <= aimed.bound(params, LOAD_SLACK)
}

/// Items the current base takes before its overflow opens: `older` are the other live
/// generations, the current base is of `layout`, sized for `capacity` items.
pub(super) fn base_limit(
    params: &WindowParams,
    older: &[Stamped<Generation>],
    layout: Layout,
    capacity: u64,
) -> u64 {
    let aimed = AimedRates::of(params);
    let bound = aimed.bound(params, ADD_SLACK);
    let room_to_come = f64::from(to_come(params, older)) * (layout.expected_rate(capacity) + aimed.overflow);
    let older = older_sum(older, &aimed);
    let fits = |items: u64| older + layout.expected_rate(items) + aimed.overflow + room_to_come <= bound;
    let most = params.base_item_limit(capacity);
    if fits(most) {
        // The common case once a span's base fills: no search.
        return most;
    }
    most_that_fit(most, fits)
}

/// The most items below `high` that `fit`, given that `high` do not: a binary search, the
/// rate rising with the items. 0 when none do (a base that may take nothing).
fn most_that_fit(high: u64, fit: impl Fn(u64) -> bool) -> u64 {
    let (mut low, mut high) = (0, high);
    if !fit(low) {
        return low;
    }
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if fit(middle) {
            low = middle;
        } else {
            high = middle;
        }
    }
    low
}
