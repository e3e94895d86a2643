//! What a user asks for (capacity, error rate, expansion) and how that becomes a layout
//! (how many 512-bit blocks, how many bits set per item).
//!
//! The layout is cache-line blocked: every item lives in one 512-bit block, so a lookup
//! touches one cache line whatever `k` is. Items do not spread evenly over blocks (the load
//! of a block is Poisson distributed), which costs false positives compared with a classic
//! Bloom filter of the same size. The sizing below accounts for that exactly: it computes the
//! expected false-positive rate of a blocked filter and picks the smallest layout whose rate
//! is at most the one requested.

use super::bits::BLOCK_BITS;
use std::sync::Mutex;

/// Smallest capacity a user may reserve, in items.
pub const MIN_CAPACITY: u64 = 1;
/// Largest capacity a user may reserve, in items: 2^30.
pub const MAX_CAPACITY: u64 = 1 << 30;

/// Largest expansion factor; 0 means non-scaling.
pub const MAX_EXPANSION: u32 = 32768;

/// Error rates above this give filters that answer "maybe" to most probes; they are capped.
pub const MAX_USEFUL_ERROR_RATE: f64 = 0.25;

/// Each new sub-filter of a scaling chain gets this fraction of the previous one's error
/// rate, so that the sum over the whole chain stays below the requested rate.
pub const TIGHTENING_RATIO: f64 = 0.5;

/// Layouts are sized for this fraction of the requested rate. The sizing is an expectation:
/// without a margin, half of all filters (and half of all measurements) would come out a
/// little above the rate asked for. Five percent keeps them under it for about 1% more memory.
pub const SIZING_MARGIN: f64 = 0.95;

/// Rates below this are sized as this: a filter wrong once in 10^20 lookups is already past
/// anything a user can measure, while smaller rates would need more bits set per item than
/// the layout allows. Sizing and the decoder's plausibility check both apply it.
pub const SMALLEST_SIZED_RATE: f64 = 1e-20;

/// The rate the sizing aims at for a requested `error_rate`.
fn sized_rate(error_rate: f64) -> f64 {
    (error_rate * SIZING_MARGIN).max(SMALLEST_SIZED_RATE)
}

/// More bits per item than this never pays off: it is what a rate of 1e-18 would need.
pub const MAX_HASHES: u32 = 64;

/// The error rate to use (capped at [`MAX_USEFUL_ERROR_RATE`]), or `None` when `rate` lies
/// outside the open interval (0, 1).
pub fn checked_error_rate(rate: f64) -> Option<f64> {
    (rate > 0.0 && rate < 1.0).then(|| rate.min(MAX_USEFUL_ERROR_RATE))
}

/// Whether a capacity, as parsed from a command (so possibly negative), lies between
/// [`MIN_CAPACITY`] and [`MAX_CAPACITY`].
pub fn capacity_in_range(capacity: i64) -> bool {
    (MIN_CAPACITY as i64..=MAX_CAPACITY as i64).contains(&capacity)
}

/// Whether an expansion, as parsed from a command, lies between 0 (non-scaling) and
/// [`MAX_EXPANSION`].
pub fn expansion_in_range(expansion: i64) -> bool {
    (0..=i64::from(MAX_EXPANSION)).contains(&expansion)
}

/// The most blocks one item may touch. One is the rule; more are used only for rates so low
/// that a single block per item would waste memory (see [`Layout::for_capacity`]).
pub const MAX_BLOCKS_PER_ITEM: u32 = 8;

/// A layout within this factor of the memory of a classic filter with the same false-positive
/// rate is good enough: the first number of blocks per item that reaches it is used.
const GOOD_ENOUGH_MEMORY: f64 = 1.05;

/// The physical shape of one sub-filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Number of 512-bit blocks.
    pub blocks: u64,
    /// Bits set per item in each of its blocks.
    pub hashes: u32,
    /// Blocks each item touches: one cache line each.
    pub blocks_per_item: u32,
}

impl Layout {
    /// The layout for `capacity` items at `error_rate`: the fewest blocks per item (cache
    /// lines per lookup) whose memory is within `GOOD_ENOUGH_MEMORY` of a classic filter
    /// with the rate the layout really has, or, where none is, the one with the least memory;
    /// between layouts of the same memory, the one with fewer blocks per item.
    /// One block per item down to about 0.5%, two around 0.1% and 0.01%, three at 10⁻⁵ and
    /// 10⁻⁶, more below.
    ///
    /// The comparison is at the layout's own expected rate, which is what a user measures:
    /// sizing for 95% of the request and whole numbers of blocks and hashes leave every layout
    /// somewhat under the requested rate, and a classic filter at that lower rate needs more.
    ///
    /// Why more than one block: the load of a block is uneven (Poisson), and the rare block
    /// that received many items dominates the false positives once the rate is small. An
    /// item spread over `g` blocks is a false positive only if all `g` are, which evens that
    /// out: each block then needs only the `g`-th root of the rate.
    ///
    /// `None` only for parameters no caller can produce (zero capacity, a rate outside (0, 1)).
    ///
    /// The search takes 10 to 100 µs, as much as thousands of adds; a server makes most of its
    /// filters with a few parameters (one filter per user, a chain's next link), so the last
    /// few layouts found are kept and answered again.
    pub fn for_capacity(capacity: u64, error_rate: f64) -> Option<Layout> {
        let asked = (capacity, error_rate.to_bits());
        if let Some(found) = RECENT_LAYOUTS.lock().ok().and_then(|recent| recent.find(asked)) {
            return Some(found);
        }
        let found = Layout::searched(capacity, error_rate)?;
        if let Ok(mut recent) = RECENT_LAYOUTS.lock() {
            recent.keep(asked, found);
        }
        Some(found)
    }

    /// What [`for_capacity`](Self::for_capacity) answers, searched for.
    fn searched(capacity: u64, error_rate: f64) -> Option<Layout> {
        if capacity == 0 || !(error_rate > 0.0 && error_rate < 1.0) {
            return None;
        }
        let error_rate = sized_rate(error_rate);
        // See `smallest_block_count` for the correction of the item count.
        let items = capacity as f64 * (1.0 + error_rate / 2.0);
        // The fewest blocks so far, with the fewest blocks per item among equals: where blocks
        // are few (small filters) several layouts round to the same count, and a larger `g`
        // then only lowers the rate, not the memory, for more work per lookup.
        let mut fewest_blocks: Option<Layout> = None;
        for blocks_per_item in 1..=MAX_BLOCKS_PER_ITEM {
            let Some(layout) = Layout::with_blocks_per_item(items, error_rate, blocks_per_item) else {
                continue;
            };
            let same_memory = fewest_blocks.filter(|fewest| fewest.blocks == layout.blocks);
            if fewest_blocks.is_none_or(|fewest| layout.blocks < fewest.blocks) {
                fewest_blocks = Some(layout);
            }
            if layout.memory_against_classic(capacity) <= GOOD_ENOUGH_MEMORY {
                return same_memory.or(Some(layout));
            }
        }
        fewest_blocks
    }

    /// The false-positive rate this layout is expected to have with `capacity` items.
    pub fn expected_rate(&self, capacity: u64) -> f64 {
        let g = f64::from(self.blocks_per_item);
        let draws_per_block = capacity as f64 * g / self.blocks as f64;
        blocked_false_positive_rate(draws_per_block, self.hashes).powf(g)
    }

    /// This layout's bits against those of a classic filter of its expected rate.
    pub fn memory_against_classic(&self, capacity: u64) -> f64 {
        self.bits() as f64 / (capacity as f64 * classic_bits_per_item(self.expected_rate(capacity)))
    }

    /// The smallest layout with `blocks_per_item` blocks per item. Ties go to fewer hashes.
    fn with_blocks_per_item(items: f64, error_rate: f64, blocks_per_item: u32) -> Option<Layout> {
        let rate_per_block = error_rate.powf(1.0 / f64::from(blocks_per_item));
        let draws = items * f64::from(blocks_per_item);
        // A classic filter sets -log2(p) bits per item; the blocked optimum is near it.
        let classic_hashes = (-rate_per_block.log2()).ceil().clamp(1.0, f64::from(MAX_HASHES)) as u32;
        let first = classic_hashes.saturating_sub(2).max(1);
        let last = (classic_hashes + 4).min(MAX_HASHES);
        (first..=last)
            .filter_map(|hashes| {
                smallest_block_count(draws, rate_per_block, hashes).map(|blocks| Layout {
                    blocks,
                    hashes,
                    blocks_per_item,
                })
            })
            .min_by_key(|layout| (layout.blocks, layout.hashes))
    }

    /// Saturates rather than overflows: a hostile header may claim any block count.
    pub fn bits(&self) -> u64 {
        self.blocks.saturating_mul(u64::from(BLOCK_BITS))
    }

    /// Bits set per item, over all its blocks.
    pub fn bits_per_item_set(&self) -> u32 {
        self.hashes * self.blocks_per_item
    }

    /// Whether a stored layout fits its parameters: between 0.9 and 4 times the bits a
    /// classic filter needs for them (plus two blocks per item for tiny filters), and sane
    /// numbers of hashes and blocks per item. Decoders use it to refuse headers that describe
    /// no real filter of that capacity. It does not ask for the exact layout of today's
    /// sizing, so that data saved before a change of the sizing (or on a machine whose floating
    /// point differs in the last bit) still loads; it costs no sizing search either.
    pub fn is_plausible_for(&self, capacity: u64, error_rate: f64) -> bool {
        let classic_bits = capacity as f64 * classic_bits_per_item(sized_rate(error_rate) / SIZING_MARGIN);
        let bits = self.bits() as f64;
        let slack = 2.0 * f64::from(self.blocks_per_item) * f64::from(BLOCK_BITS);
        (1..=MAX_HASHES).contains(&self.hashes)
            && (1..=MAX_BLOCKS_PER_ITEM).contains(&self.blocks_per_item)
            && self.blocks >= 1
            && bits >= classic_bits * 0.9
            && bits <= classic_bits * 4.0 + slack
    }
}

/// A capacity and the bits of an error rate.
type Asked = (u64, u64);

/// Layouts [`Layout::for_capacity`] found lately, by what was asked, replaced in turn.
struct RecentLayouts {
    kept: [Option<(Asked, Layout)>; RECENT_LAYOUT_COUNT],
    next: usize,
}

const RECENT_LAYOUT_COUNT: usize = 16;

static RECENT_LAYOUTS: Mutex<RecentLayouts> =
    Mutex::new(RecentLayouts { kept: [None; RECENT_LAYOUT_COUNT], next: 0 });

impl RecentLayouts {
    fn find(&self, asked: Asked) -> Option<Layout> {
        self.kept.iter().flatten().find(|(kept, _)| *kept == asked).map(|&(_, layout)| layout)
    }

    fn keep(&mut self, asked: Asked, layout: Layout) {
        if let Some(slot) = self.kept.get_mut(self.next) {
            *slot = Some((asked, layout));
        }
        self.next = (self.next + 1) % RECENT_LAYOUT_COUNT;
    }
}

/// What a classic (unblocked) Bloom filter needs at its optimum: -ln(p) / ln(2)^2.
pub fn classic_bits_per_item(error_rate: f64) -> f64 {
    -error_rate.ln() / std::f64::consts::LN_2.powi(2)
}

/// Expected false-positive rate of a blocked filter holding `items_per_block` items per block
/// on average, `hashes` bits per item.
///
/// The load of a block is Poisson(`items_per_block`); a block holding `j` items has each bit
/// set with probability `1 - (1 - 1/512)^(k j)`, and a probe is a false positive when all of
/// its `k` bits are set.
pub fn blocked_false_positive_rate(items_per_block: f64, hashes: u32) -> f64 {
    // Past this load every bit of a block is set with probability above 2/3 whatever `k`:
    // no filter anyone asks for is that loose, and the Poisson sum would be long.
    if items_per_block.is_nan() || items_per_block > 600.0 {
        return 1.0;
    }
    let bit_stays_clear = 1.0 - 1.0 / f64::from(BLOCK_BITS);
    let clear_per_item = bit_stays_clear.powi(hashes as i32);
    let last_load = (items_per_block + 12.0 * items_per_block.sqrt() + 24.0).ceil() as u64;
    let mut probability_of_load = (-items_per_block).exp();
    let mut all_clear = 1.0;
    let mut rate = 0.0;
    for load in 0..=last_load {
        if load > 0 {
            probability_of_load *= items_per_block / load as f64;
            all_clear *= clear_per_item;
        }
        rate += probability_of_load * power(1.0 - all_clear, hashes);
    }
    rate
}

/// `base` to the `exponent`, by the squarings `powi` makes (the same products, so the same
/// result), inlined: `powi` of a variable exponent is a call, once per term of the sum above,
/// and took a quarter of a filter's creation.
#[inline]
fn power(mut base: f64, mut exponent: u32) -> f64 {
    let mut result = 1.0;
    loop {
        if exponent & 1 == 1 {
            result *= base;
        }
        exponent >>= 1;
        if exponent == 0 {
            return result;
        }
        base *= base;
    }
}

/// Binary search for the fewest blocks that keep the rate of each block under `error_rate`
/// when `draws` block choices (items times blocks per item) land on them.
///
/// The callers count more items than the capacity: a filter counts only the adds that
/// answered 1, and an item that already tests present sets no bit but is not counted, so by
/// the time `capacity` adds are counted somewhat more distinct items went through. The rate
/// climbs from 0 to the target during the fill, so the uncounted share is below half of it.
fn smallest_block_count(draws: f64, error_rate: f64, hashes: u32) -> Option<u64> {
    let meets = |blocks: u64| blocked_false_positive_rate(draws / blocks as f64, hashes) <= error_rate;
    // 2^k bits per draw is far past any optimum: a safe upper bound that always meets.
    let mut high = (draws as u128 * (1u128 << hashes.min(20)) / u128::from(BLOCK_BITS) + 1)
        .min(u128::from(u64::MAX)) as u64;
    if !meets(high) {
        return None;
    }
    let mut low = 0u64; // never meets: zero blocks hold nothing
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if meets(middle) {
            high = middle;
        } else {
            low = middle;
        }
    }
    Some(high)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layouts kept are answered for their own parameters only: asked in turn for more
    /// parameters than are kept, again and again, every answer is the search's.
    #[test]
    fn layouts_found_lately_are_the_searchs() {
        let asked: Vec<(u64, f64)> = (0..40u64)
            .map(|n| (1 + n * 997 % 5000, [0.01, 0.005, 0.001, 1e-5][n as usize % 4]))
            .chain([(0, 0.01), (100, 0.0), (100, 1.0)])
            .collect();
        for round in 0..3 {
            for (n, &(capacity, rate)) in asked.iter().enumerate() {
                // Some twice in a row, so that the second is answered from what was kept.
                for _ in 0..=(n + round) % 2 {
                    assert_eq!(Layout::for_capacity(capacity, rate), Layout::searched(capacity, rate));
                }
            }
        }
    }

    #[test]
    fn one_percent_costs_little_more_than_a_classic_filter() {
        let layout = Layout::for_capacity(10_000_000, 0.01).unwrap();
        let bits_per_item = layout.bits() as f64 / 1e7;
        let ratio = bits_per_item / classic_bits_per_item(0.01 * SIZING_MARGIN);
        assert!(ratio > 1.0 && ratio < 1.05, "ratio {ratio}");
        assert!((5..=8).contains(&layout.hashes), "{layout:?}");
    }

    #[test]
    fn the_chosen_layout_meets_the_rate_and_one_block_less_does_not() {
        for &(capacity, rate) in &[(100u64, 0.01), (1_000_000, 0.001), (12_345, 0.2), (7, 1e-6), (5000, 1e-9)]
        {
            let layout = Layout::for_capacity(capacity, rate).unwrap();
            let g = f64::from(layout.blocks_per_item);
            let draws_per_block =
                |blocks: u64| capacity as f64 * (1.0 + rate * SIZING_MARGIN / 2.0) * g / blocks as f64;
            let rate_of =
                |blocks| blocked_false_positive_rate(draws_per_block(blocks), layout.hashes).powf(g);
            let target = rate * SIZING_MARGIN;
            assert!(rate_of(layout.blocks) <= target * (1.0 + 1e-9), "{layout:?}");
            if layout.blocks > 1 {
                assert!(rate_of(layout.blocks - 1) > target * (1.0 - 1e-9), "{layout:?}");
            }
        }
    }

    #[test]
    fn the_model_is_never_better_than_a_classic_filter_and_close_to_it() {
        // Uneven block loads only cost: a blocked filter is never better than a classic one
        // of the same size, and at ordinary loads it is within a modest factor.
        for &(items_per_block, hashes) in &[(51.2f64, 7u32), (35.0, 10), (80.0, 4)] {
            let m = f64::from(BLOCK_BITS);
            let exponent = -f64::from(hashes) * items_per_block / m;
            let classic = (1.0 - exponent.exp()).powi(hashes as i32);
            let blocked = blocked_false_positive_rate(items_per_block, hashes);
            assert!(blocked >= classic && blocked < classic * 2.0, "{blocked} vs {classic}");
        }
    }

    #[test]
    fn the_largest_reservation_is_sized_without_overflow() {
        let layout = Layout::for_capacity(MAX_CAPACITY, 1e-9).unwrap();
        assert!(layout.bits() > MAX_CAPACITY * 40);
    }

    #[test]
    fn one_block_per_item_down_to_half_a_percent_then_more() {
        let blocks_per_item = |rate| Layout::for_capacity(1_000_000, rate).unwrap().blocks_per_item;
        for rate in [0.25, 0.1, 0.05, 0.01, 0.005] {
            assert_eq!(blocks_per_item(rate), 1, "{rate}");
        }
        assert_eq!(blocks_per_item(0.001), 2);
        assert!((2..=3).contains(&blocks_per_item(1e-6)));
    }

    #[test]
    fn memory_is_within_five_percent_of_a_classic_filter_from_a_tenth_to_a_millionth() {
        let mut rate: f64 = 0.1;
        while rate >= 1e-6 {
            for capacity in [10_000u64, 1_000_000, 100_000_000] {
                let layout = Layout::for_capacity(capacity, rate).unwrap();
                let memory = layout.memory_against_classic(capacity);
                assert!(memory <= GOOD_ENOUGH_MEMORY, "{capacity} at {rate:e}: {layout:?} costs {memory}");
                assert!(layout.expected_rate(capacity) <= rate, "{capacity} at {rate:e}: {layout:?}");
            }
            rate *= 0.7;
        }
    }

    #[test]
    fn small_filters_touch_no_more_blocks_than_their_memory_needs() {
        for capacity in [1u64, 2, 10, 50, 100, 1000] {
            for rate in [0.1, 0.01, 0.005, 0.0025, 0.001, 1e-6] {
                let chosen = Layout::for_capacity(capacity, rate).unwrap();
                let items = capacity as f64 * (1.0 + sized_rate(rate) / 2.0);
                for fewer in 1..chosen.blocks_per_item {
                    if let Some(other) = Layout::with_blocks_per_item(items, sized_rate(rate), fewer) {
                        assert!(other.blocks != chosen.blocks, "{capacity} at {rate}: {chosen:?}, {other:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn memory_stays_near_a_classic_filter_at_any_rate() {
        for rate in [0.25, 1e-9, 1e-12, 1e-20] {
            let layout = Layout::for_capacity(1_000_000, rate).unwrap();
            let memory = layout.memory_against_classic(1_000_000);
            assert!(memory < 1.1, "{rate}: {layout:?} costs {memory}");
        }
    }

    #[test]
    fn every_layout_the_sizing_makes_is_plausible() {
        let mut rate = 0.25;
        while rate > 0.0 {
            for capacity in [1u64, 7, 100, 10_000, 1_000_000_000] {
                let layout = Layout::for_capacity(capacity, rate).unwrap();
                assert!(layout.is_plausible_for(capacity, rate), "{capacity} at {rate:e}: {layout:?}");
            }
            rate /= 1000.0;
        }
        let smallest = f64::from_bits(1);
        assert!(Layout::for_capacity(10, smallest).unwrap().is_plausible_for(10, smallest));
    }

    #[test]
    fn nonsense_parameters_have_no_layout() {
        assert_eq!(Layout::for_capacity(0, 0.01), None);
        assert_eq!(Layout::for_capacity(10, 0.0), None);
        assert_eq!(Layout::for_capacity(10, 1.0), None);
        assert_eq!(Layout::for_capacity(10, f64::NAN), None);
    }

    #[test]
    fn plausibility_accepts_the_real_layout_and_refuses_others() {
        for &(capacity, rate) in &[(1u64, 0.25), (1000, 0.01), (1 << 30, 1e-9), (50, 1e-30)] {
            let layout = Layout::for_capacity(capacity, rate).unwrap();
            assert!(layout.is_plausible_for(capacity, rate), "{capacity} {rate} {layout:?}");
        }
        let layout = Layout::for_capacity(100_000, 0.01).unwrap();
        let five_times = Layout { blocks: layout.blocks * 5, ..layout };
        assert!(!five_times.is_plausible_for(100_000, 0.01));
        let half = Layout { blocks: layout.blocks / 2, ..layout };
        assert!(!half.is_plausible_for(100_000, 0.01));
        assert!(!Layout { hashes: 0, ..layout }.is_plausible_for(100_000, 0.01));
        assert!(!Layout { hashes: MAX_HASHES + 1, ..layout }.is_plausible_for(100_000, 0.01));
    }

    #[test]
    fn error_rates_are_checked_and_capped() {
        assert_eq!(checked_error_rate(0.01), Some(0.01));
        assert_eq!(checked_error_rate(0.9), Some(MAX_USEFUL_ERROR_RATE));
        assert_eq!(checked_error_rate(0.0), None);
        assert_eq!(checked_error_rate(1.0), None);
        assert_eq!(checked_error_rate(f64::NAN), None);
    }
}
