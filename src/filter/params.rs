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

/// Smallest and largest capacity a user may reserve.
pub const MIN_CAPACITY: u64 = 1;
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

/// More bits per item than this never pays off: it is what a rate of 1e-18 would need.
pub const MAX_HASHES: u32 = 64;

/// The error rate to use (capped at [`MAX_USEFUL_ERROR_RATE`]), or `None` when `rate` lies
/// outside the open interval (0, 1).
pub fn checked_error_rate(rate: f64) -> Option<f64> {
    (rate > 0.0 && rate < 1.0).then(|| rate.min(MAX_USEFUL_ERROR_RATE))
}

pub fn capacity_in_range(capacity: i64) -> bool {
    (MIN_CAPACITY as i64..=MAX_CAPACITY as i64).contains(&capacity)
}

pub fn expansion_in_range(expansion: i64) -> bool {
    (0..=MAX_EXPANSION as i64).contains(&expansion)
}

/// The physical shape of one sub-filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Number of 512-bit blocks.
    pub blocks: u64,
    /// Bits set per item, all inside the item's block.
    pub hashes: u32,
}

impl Layout {
    /// The smallest layout whose expected false-positive rate, once `capacity` items are in,
    /// is at most `error_rate`. Ties go to fewer hashes (less work per item).
    ///
    /// `None` only for parameters no caller can produce (zero capacity, a rate outside (0, 1)).
    pub fn for_capacity(capacity: u64, error_rate: f64) -> Option<Layout> {
        if capacity == 0 || !(error_rate > 0.0 && error_rate < 1.0) {
            return None;
        }
        let error_rate = error_rate * SIZING_MARGIN;
        // A classic Bloom filter needs -ln(p)/ln(2)^2 bits per item with k = -log2(p) hashes;
        // the blocked optimum lies a little above both, so only a few k need trying.
        let classic_hashes = (-error_rate.log2()).ceil().max(1.0) as u32;
        let first = classic_hashes.saturating_sub(2).max(1);
        let last = (classic_hashes + 4).min(MAX_HASHES);
        (first..=last)
            .filter_map(|hashes| {
                smallest_block_count(capacity, error_rate, hashes).map(|blocks| Layout { blocks, hashes })
            })
            .min_by_key(|layout| (layout.blocks, layout.hashes))
    }

    pub fn bits(&self) -> u64 {
        self.blocks * BLOCK_BITS as u64
    }

    /// Whether a stored layout is one this version of the sizing could have produced for
    /// these parameters, allowing for the last-bit differences of floating point between
    /// machines. Decoders use it to refuse headers that do not describe a real filter.
    pub fn is_plausible_for(&self, capacity: u64, error_rate: f64) -> bool {
        let Some(expected) = Layout::for_capacity(capacity, error_rate) else {
            return false;
        };
        let slack = expected.blocks / 64 + 1;
        self.hashes.abs_diff(expected.hashes) <= 1
            && self.hashes >= 1
            && self.hashes <= MAX_HASHES
            && self.blocks.abs_diff(expected.blocks) <= slack
            && self.blocks >= 1
    }
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
    let bit_stays_clear = 1.0 - 1.0 / BLOCK_BITS as f64;
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
        rate += probability_of_load * (1.0 - all_clear).powi(hashes as i32);
    }
    rate
}

/// Binary search for the fewest blocks that keep `capacity` items under `error_rate`.
///
/// A filter counts only the adds that answered 1, and an item that already tests present sets
/// no bit but is not counted: by the time `capacity` adds are counted, somewhat more distinct
/// items went through. The false-positive rate climbs from 0 to `error_rate` during the fill,
/// so the uncounted share is below `error_rate / 2`; the sizing assumes that many more items.
fn smallest_block_count(capacity: u64, error_rate: f64, hashes: u32) -> Option<u64> {
    let items = capacity as f64 * (1.0 + error_rate / 2.0);
    let meets = |blocks: u64| blocked_false_positive_rate(items / blocks as f64, hashes) <= error_rate;
    // 2^k bits per item is far past any optimum: a safe upper bound that always meets.
    let mut high =
        (capacity as u128 * (1u128 << hashes.min(20)) / BLOCK_BITS as u128 + 1).min(u64::MAX as u128) as u64;
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

    fn classic_bits_per_item(error_rate: f64) -> f64 {
        -error_rate.ln() / std::f64::consts::LN_2.powi(2)
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
        for &(capacity, rate) in &[(100u64, 0.01), (1_000_000, 0.001), (12_345, 0.2), (7, 1e-6)] {
            let layout = Layout::for_capacity(capacity, rate).unwrap();
            let per_block =
                |blocks: u64| capacity as f64 * (1.0 + rate * SIZING_MARGIN / 2.0) / blocks as f64;
            let target = rate * SIZING_MARGIN;
            assert!(blocked_false_positive_rate(per_block(layout.blocks), layout.hashes) <= target);
            if layout.blocks > 1 {
                let fewer = per_block(layout.blocks - 1);
                assert!(blocked_false_positive_rate(fewer, layout.hashes) > target);
            }
        }
    }

    #[test]
    fn the_model_is_never_better_than_a_classic_filter_and_close_to_it() {
        // Uneven block loads only cost: a blocked filter is never better than a classic one
        // of the same size, and at ordinary loads it is within a modest factor.
        for &(items_per_block, hashes) in &[(51.2f64, 7u32), (35.0, 10), (80.0, 4)] {
            let m = BLOCK_BITS as f64;
            let exponent = -(hashes as f64) * items_per_block / m;
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
    fn nonsense_parameters_have_no_layout() {
        assert_eq!(Layout::for_capacity(0, 0.01), None);
        assert_eq!(Layout::for_capacity(10, 0.0), None);
        assert_eq!(Layout::for_capacity(10, 1.0), None);
        assert_eq!(Layout::for_capacity(10, f64::NAN), None);
    }

    #[test]
    fn plausibility_accepts_the_real_layout_and_refuses_others() {
        let layout = Layout::for_capacity(1000, 0.01).unwrap();
        assert!(layout.is_plausible_for(1000, 0.01));
        let doubled = Layout { blocks: layout.blocks * 2, ..layout };
        assert!(!doubled.is_plausible_for(1000, 0.01));
        let more_hashes = Layout { hashes: layout.hashes + 5, ..layout };
        assert!(!more_hashes.is_plausible_for(1000, 0.01));
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
