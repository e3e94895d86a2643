//! Every query, on the digest as RedisBloom 2.8.2 would answer it: on the merged centroids of
//! the compressed digest (its view, made by the first read after a write), with `td_cdf`'s,
//! `td_quantiles`' and `td_trimmed_mean`'s interpolation and the command file's sentinels and
//! roundings.
//!
//! RedisBloom's arithmetic overflows when values reach the ends of the doubles (a weighted
//! sum of means, a difference of means). Scaling every value by a power of two changes no
//! bit of any answer unless it overflows or underflows, so each query first picks the
//! largest scale, at most 1, at which nothing it computes can overflow: 1, and RedisBloom's
//! very answer, for any digest of values below about `1e290` (and fewer than 10^16
//! observations).

use super::centroid::Centroid;
use super::digest::{try_vec, TDigest, View};
use crate::bytes::AllocationFailed;

/// What the rank commands answer for an empty digest.
const EMPTY_RANK: i64 = -2;

impl TDigest {
    /// The values at fractions `quantiles` of the observations (TDIGEST.QUANTILE), each in
    /// `[0, 1]` as the command checks (others answer NaN). As RedisBloom, a run of
    /// non-decreasing fractions is answered in one walk over the centroids; NaN for an empty
    /// digest, and for one of a single observation, which RedisBloom 2.8.2 never merges.
    pub fn quantiles(&self, quantiles: &[f64]) -> Result<Vec<f64>, AllocationFailed> {
        if quantiles.is_empty() {
            return Ok(Vec::new());
        }
        Centroids::new(self, self.view()?).quantiles(quantiles)
    }

    /// The fractions of the observations at or below each value, those equal counted half
    /// (TDIGEST.CDF): 0 below the minimum, 1 above the maximum, NaN when empty (or a single
    /// observation).
    pub fn cdfs(&self, values: &[f64]) -> Result<Vec<f64>, AllocationFailed> {
        if values.is_empty() {
            return Ok(Vec::new());
        }
        Centroids::new(self, self.view()?).cdfs(values)
    }

    /// The estimated ranks of `values` (TDIGEST.RANK): observations below, those equal
    /// counted half, rounded half down. -1 below the minimum, the observations above the
    /// maximum, -2 when empty; and, for a single observation, whose CDF RedisBloom 2.8.2 makes
    /// NaN, the `i64::MIN` its cast of NaN gives.
    pub fn ranks(&self, values: &[f64]) -> Result<Vec<i64>, AllocationFailed> {
        self.any_ranks(values, false)
    }

    /// The estimated reverse ranks of `values` (TDIGEST.REVRANK): observations above, those
    /// equal counted half, rounded half away from zero. The observations below the minimum,
    /// -1 above the maximum, -2 when empty, `i64::MIN` for a single observation.
    pub fn rev_ranks(&self, values: &[f64]) -> Result<Vec<i64>, AllocationFailed> {
        self.any_ranks(values, true)
    }

    fn any_ranks(&self, values: &[f64], reverse: bool) -> Result<Vec<i64>, AllocationFailed> {
        if values.is_empty() {
            return Ok(Vec::new());
        }
        Centroids::new(self, self.view()?).ranks(values, reverse, self.observations())
    }

    /// The values of estimated ranks `ranks` (TDIGEST.BYRANK): the minimum for 0, infinity
    /// from the observations on, NaN when empty.
    pub fn by_ranks(&self, ranks: &[u64]) -> Result<Vec<f64>, AllocationFailed> {
        self.any_by_ranks(ranks, false)
    }

    /// The values of estimated reverse ranks `ranks` (TDIGEST.BYREVRANK): the maximum for 0,
    /// minus infinity from the observations on, NaN when empty.
    pub fn by_rev_ranks(&self, ranks: &[u64]) -> Result<Vec<f64>, AllocationFailed> {
        self.any_by_ranks(ranks, true)
    }

    fn any_by_ranks(&self, ranks: &[u64], reverse: bool) -> Result<Vec<f64>, AllocationFailed> {
        if ranks.is_empty() {
            return Ok(Vec::new());
        }
        Centroids::new(self, self.view()?).by_ranks(ranks, reverse, self.observations())
    }

    /// The mean of the observations between fractions `low` and `high` of them
    /// (`TDIGEST.TRIMMED_MEAN`), both in `[0, 1]` as the command checks (else NaN): NaN when
    /// empty or a single observation.
    pub fn trimmed_mean(&self, low: f64, high: f64) -> Result<f64, AllocationFailed> {
        let digest = self.view()?;
        Ok(Centroids::new(self, digest).trimmed_mean(low, high))
    }
}

/// RedisBloom's `_halfRoundDown`: to the nearest integer, halves toward zero.
fn round_half_down(value: f64) -> f64 {
    let whole = value.trunc();
    if (value - whole).abs() <= 0.5 {
        whole
    } else if whole >= 0.0 {
        whole + 1.0
    } else {
        whole - 1.0
    }
}

/// C's `(long long)` of a double on x86-64: NaN and values out of range give `i64::MIN`,
/// where Rust's cast gives 0 or saturates.
fn c_long_long(value: f64) -> i64 {
    // 2^63, the first double beyond i64.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if value.is_nan() || !(-LIMIT..LIMIT).contains(&value) {
        i64::MIN
    } else {
        value as i64
    }
}

/// C's `__td_max` and `__td_min`, which differ from `f64::max` and `f64::min` on signed zeros.
fn c_max(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

fn c_min(a: f64, b: f64) -> f64 {
    if a < b {
        a
    } else {
        b
    }
}

/// RedisBloom's `weighted_average`: the weighted mean of two values, kept between them.
fn weighted_average(x1: f64, w1: f64, x2: f64, w2: f64) -> f64 {
    let (x1, w1, x2, w2) = if x1 <= x2 { (x1, w1, x2, w2) } else { (x2, w2, x1, w1) };
    let x = (x1 * w1 + x2 * w2) / (w1 + w2);
    c_max(x1, c_min(x, x2))
}

/// The largest power of two, at most 1, by which values of up to `magnitude` can be
/// multiplied so that no query overflows: the largest product a query forms is a difference
/// of two values (twice the largest) times a weight (at most twice the total), summed over
/// two terms, or a sum over the centroids of a value times its weight.
fn scale(magnitude: f64, merged_weight: f64) -> f64 {
    let limit = f64::MAX / (8.0 * (merged_weight.max(0.0) + 2.0));
    let mut scale = 1.0;
    while magnitude * scale > limit {
        scale *= 0.5;
    }
    scale
}

/// The merged centroids a read walks, sorted by mean: a compressed digest's, in a slice, or a
/// window's cut, made only where a read looks (`window::curve`).
pub(super) trait Merged {
    fn len(&self) -> usize;
    /// Centroid `index`'s mean, NaN past the last.
    fn mean(&self, index: usize) -> f64;
    /// Centroid `index`'s weight, NaN past the last.
    fn weight(&self, index: usize) -> f64;
    /// From where `walk` stands, the first pair of neighbours whose middles (the walk's
    /// `weight_so_far` plus half of both weights) pass `index`, the walk moved to it; `None`,
    /// the walk moved past every pair, where none does.
    fn pair_passing(&self, index: f64, walk: &mut Walk) -> Option<[Centroid; 2]>;
    /// Where `value` lies among the means multiplied by `scale` (`td_cdf`'s walk), at or
    /// above the first and at or below the last.
    fn around(&self, value: f64, scale: f64) -> Around;
}

/// Where a value lies among sorted centroids, `before` the weight of those below.
pub(super) enum Around {
    /// At the mean of some, of `equal` weight together, not the last alone.
    Equal { before: f64, equal: f64 },
    /// At or above the mean of `left`, below that of `right`, its next.
    Between { before: f64, left: Centroid, right: Centroid },
    /// At the last mean, which no other centroid shares.
    Past,
}

impl Merged for [Centroid] {
    fn len(&self) -> usize {
        <[Centroid]>::len(self)
    }

    fn mean(&self, index: usize) -> f64 {
        self.get(index).map_or(f64::NAN, |node| node.mean)
    }

    fn weight(&self, index: usize) -> f64 {
        self.get(index).map_or(f64::NAN, |node| node.weight as f64)
    }

    fn pair_passing(&self, index: f64, walk: &mut Walk) -> Option<[Centroid; 2]> {
        for pair in self.get(walk.position..).unwrap_or_default().windows(2) {
            let &[left, right] = pair else { break };
            #[allow(clippy::manual_midpoint, reason = "RedisBloom's arithmetic, to the bit")]
            let half_both = (left.weight as f64 + right.weight as f64) / 2.0;
            if walk.weight_so_far + half_both > index {
                return Some([left, right]);
            }
            walk.weight_so_far += half_both;
            walk.position += 1;
        }
        None
    }

    fn around(&self, value: f64, scale: f64) -> Around {
        let mean = |index: usize| Merged::mean(self, index) * scale;
        let n = self.len();
        let mut before = 0.0;
        let mut it = 0;
        while it + 1 < n {
            if mean(it) == value {
                let mut equal = 0.0;
                while it < n && mean(it) == value {
                    equal += Merged::weight(self, it);
                    it += 1;
                }
                return Around::Equal { before, equal };
            }
            if mean(it) <= value && value < mean(it + 1) {
                return Around::Between { before, left: self[it], right: self[it + 1] };
            }
            before += Merged::weight(self, it);
            it += 1;
        }
        Around::Past
    }
}

/// Merged centroids with the stored minimum and maximum: what every query reads.
pub(super) struct Centroids<'a, M: Merged + ?Sized> {
    nodes: &'a M,
    merged_weight: i64,
    min: f64,
    max: f64,
    /// The largest power of two, at most 1, by which every mean and bound can be multiplied
    /// without any query overflowing.
    scale: f64,
}

/// Where a run of ascending quantiles is in the centroids: RedisBloom's `weightSoFar` and
/// `node_pos`, kept from one quantile of the run to the next.
pub(super) struct Walk {
    pub(super) weight_so_far: f64,
    pub(super) position: usize,
}

impl<'a> Centroids<'a, [Centroid]> {
    fn new(digest: &TDigest, compressed: &'a View) -> Centroids<'a, [Centroid]> {
        Centroids::of(
            compressed.merged(),
            compressed.merged_weight,
            [digest.min, digest.max],
            compressed.magnitude,
        )
    }

    /// `td_trimmed_mean`.
    fn trimmed_mean(&self, low: f64, high: f64) -> f64 {
        let n = self.nodes.len();
        if n == 0 || !(0.0..=1.0).contains(&low) || !(0.0..=1.0).contains(&high) {
            return f64::NAN;
        }
        if n == 1 {
            return self.mean(0, 1.0);
        }
        let merged_weight = self.merged_weight as f64;
        let (from, to) = ((merged_weight * low).floor(), (merged_weight * high).ceil());
        let scale = self.scale;
        let (mut done, mut sum, mut count) = (0.0, 0.0, 0.0);
        for (i, node) in self.nodes.iter().enumerate() {
            let weight = node.weight as f64;
            let mut taken = weight;
            taken -= c_min(c_max(0.0, from - done), taken);
            taken = c_min(c_max(0.0, to - done), taken);
            done += weight;
            sum += self.mean(i, scale) * taken;
            count += taken;
            if done >= to {
                break;
            }
        }
        sum / count / scale
    }
}

impl<'a, M: Merged + ?Sized> Centroids<'a, M> {
    /// `nodes`, holding `merged_weight`, between `min` and `max`; `magnitude` the largest of
    /// their means' magnitudes.
    pub(super) fn of(
        nodes: &'a M,
        merged_weight: i64,
        [min, max]: [f64; 2],
        magnitude: f64,
    ) -> Centroids<'a, M> {
        let bounds = min.abs().max(max.abs());
        Centroids {
            nodes,
            merged_weight,
            min,
            max,
            scale: scale(magnitude.max(bounds), merged_weight as f64),
        }
    }

    /// Whether the queries read every value as it is, none near the doubles' ends.
    pub(super) fn unscaled(&self) -> bool {
        self.scale == 1.0
    }

    fn mean(&self, index: usize, scale: f64) -> f64 {
        self.nodes.mean(index) * scale
    }

    fn weight(&self, index: usize) -> f64 {
        self.nodes.weight(index)
    }

    fn walk(&self) -> Walk {
        Walk { weight_so_far: self.weight(0) / 2.0, position: 0 }
    }

    /// `td_quantiles`: a run of non-decreasing fractions answered in one walk over the
    /// centroids.
    pub(super) fn quantiles(&self, quantiles: &[f64]) -> Result<Vec<f64>, AllocationFailed> {
        let mut values = try_vec(quantiles.len())?;
        let mut rest = quantiles;
        while !rest.is_empty() {
            let run = 1 + rest.windows(2).take_while(|pair| pair[0] <= pair[1]).count();
            let (ascending, after) = rest.split_at(run);
            let mut walk = self.walk();
            values.extend(ascending.iter().map(|&q| self.quantile_in_run(q, &mut walk)));
            rest = after;
        }
        Ok(values)
    }

    /// The values of (reverse) ranks `ranks` of `size` observations: the minimum (maximum)
    /// for 0, infinity (minus infinity) from the observations on, NaN when empty.
    pub(super) fn by_ranks(
        &self,
        ranks: &[u64],
        reverse: bool,
        size: i64,
    ) -> Result<Vec<f64>, AllocationFailed> {
        let mut values = try_vec(ranks.len())?;
        let size = size as f64;
        values.extend(ranks.iter().map(|&rank| {
            let rank = rank as f64;
            if size == 0.0 {
                f64::NAN
            } else if rank == 0.0 {
                if reverse {
                    self.max
                } else {
                    self.min
                }
            } else if rank >= size {
                if reverse {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            } else {
                let rank = if reverse { size - rank - 1.0 } else { rank };
                self.quantile(rank / size)
            }
        }));
        Ok(values)
    }

    /// `td_cdf` of each value.
    pub(super) fn cdfs(&self, values: &[f64]) -> Result<Vec<f64>, AllocationFailed> {
        let mut fractions = try_vec(values.len())?;
        fractions.extend(values.iter().map(|&value| self.cdf(value)));
        Ok(fractions)
    }

    /// The estimated (reverse) ranks of `values` among `size` observations, as
    /// [`TDigest::ranks`] and [`TDigest::rev_ranks`] answer.
    pub(super) fn ranks(
        &self,
        values: &[f64],
        reverse: bool,
        size: i64,
    ) -> Result<Vec<i64>, AllocationFailed> {
        let mut ranks = try_vec(values.len())?;
        let size = size as f64;
        ranks.extend(values.iter().map(|&value| {
            let rank = if size == 0.0 {
                return EMPTY_RANK;
            } else if value < self.min {
                if reverse {
                    size
                } else {
                    -1.0
                }
            } else if value > self.max {
                if reverse {
                    -1.0
                } else {
                    size
                }
            } else {
                let below = self.cdf(value) * size;
                if reverse {
                    (size - below.round()).round()
                } else {
                    round_half_down(below)
                }
            };
            c_long_long(rank)
        }));
        Ok(ranks)
    }

    /// `td_cdf`.
    fn cdf(&self, value: f64) -> f64 {
        let n = self.nodes.len();
        if n == 0 {
            return f64::NAN;
        }
        if value < self.min {
            return 0.0;
        }
        if value > self.max {
            return 1.0;
        }
        let scale = self.scale;
        let (value, min, max) = (value * scale, self.min * scale, self.max * scale);
        if n == 1 {
            let width = max - min;
            return if value - min <= width { 0.5 } else { (value - min) / width };
        }
        let merged_weight = self.merged_weight as f64;
        let (left_mean, left_weight) = (self.mean(0, scale), self.weight(0));
        if value < left_mean {
            let width = left_mean - min;
            return if width > 0.0 {
                if value == min {
                    0.5 / merged_weight
                } else {
                    (1.0 + (value - min) / width * (left_weight / 2.0 - 1.0)) / merged_weight
                }
            } else {
                0.0
            };
        }
        let (right_mean, right_weight) = (self.mean(n - 1, scale), self.weight(n - 1));
        if value > right_mean {
            let width = max - right_mean;
            return if width > 0.0 {
                if value == max {
                    1.0 - 0.5 / merged_weight
                } else {
                    1.0 - (1.0 + (max - value) / width * (right_weight / 2.0 - 1.0)) / merged_weight
                }
            } else {
                1.0
            };
        }
        match self.nodes.around(value, scale) {
            Around::Equal { before, equal } => (before + equal / 2.0) / merged_weight,
            Around::Between { before, left, right } => {
                let (mean, next_mean) = (left.mean * scale, right.mean * scale);
                let (weight, next_weight) = (left.weight as f64, right.weight as f64);
                #[allow(clippy::manual_midpoint, reason = "RedisBloom's arithmetic, to the bit")]
                let half_both = (weight + next_weight) / 2.0;
                if next_mean - mean > 0.0 {
                    // A singleton's whole weight is at its mean: none of it is spread.
                    let (mut left_excluded, mut right_excluded) = (0.0, 0.0);
                    if weight == 1.0 {
                        if next_weight == 1.0 {
                            return (before + 1.0) / merged_weight;
                        }
                        left_excluded = 0.5;
                    } else if next_weight == 1.0 {
                        right_excluded = 0.5;
                    }
                    let spread = half_both - left_excluded - right_excluded;
                    let base = before + weight / 2.0 + left_excluded;
                    return (base + spread * (value - mean) / (next_mean - mean)) / merged_weight;
                }
                (before + half_both) / merged_weight
            }
            Around::Past => 1.0 - 0.5 / merged_weight,
        }
    }

    /// `td_quantile`: one fraction, with a walk of its own, and the minimum below an index
    /// of 1.
    fn quantile(&self, q: f64) -> f64 {
        let n = self.nodes.len();
        if !(0.0..=1.0).contains(&q) || n == 0 {
            return f64::NAN;
        }
        if n == 1 {
            return self.mean(0, 1.0);
        }
        let index = q * self.merged_weight as f64;
        if index < 1.0 {
            return self.min;
        }
        self.value_at(index, &mut self.walk(), self.scale) / self.scale
    }

    /// One fraction of a run of `td_quantiles`, which has no special case for small indexes.
    fn quantile_in_run(&self, q: f64, walk: &mut Walk) -> f64 {
        let n = self.nodes.len();
        if !(0.0..=1.0).contains(&q) || n == 0 {
            return f64::NAN;
        }
        if n == 1 {
            return self.mean(0, 1.0);
        }
        self.value_at(q * self.merged_weight as f64, walk, self.scale) / self.scale
    }

    /// `td_internal_iterate_centroids_to_index`, on at least two centroids, every value
    /// multiplied by `scale`.
    fn value_at(&self, index: f64, walk: &mut Walk, scale: f64) -> f64 {
        let n = self.nodes.len();
        let (min, max) = (self.min * scale, self.max * scale);
        let left_weight = self.weight(0);
        if left_weight > 1.0 && index < left_weight / 2.0 {
            // One observation sits at the minimum: interpolate over the rest.
            return min + (index - 1.0) / (left_weight / 2.0 - 1.0) * (self.mean(0, scale) - min);
        }
        if index > (self.merged_weight - 1) as f64 {
            return max;
        }
        let merged_weight = self.merged_weight as f64;
        // The last centroid's mean only where it is read: a window's cut makes each mean it
        // is asked for.
        let right_weight = self.weight(n - 1);
        if right_weight > 1.0 && merged_weight - index <= right_weight / 2.0 {
            let right_mean = self.mean(n - 1, scale);
            return max - (merged_weight - index - 1.0) / (right_weight / 2.0 - 1.0) * (max - right_mean);
        }
        // The pair of neighbours from where the walk stands; a run of quantiles goes on from
        // there, and reads the means only of the pair it stops in.
        let Some([left, right]) = self.nodes.pair_passing(index, walk) else {
            let z1 = index - merged_weight - right_weight / 2.0;
            let z2 = right_weight / 2.0 - z1;
            return weighted_average(self.mean(n - 1, scale), z1, max, z2);
        };
        let (weight, next_weight) = (left.weight as f64, right.weight as f64);
        #[allow(clippy::manual_midpoint, reason = "RedisBloom's arithmetic, to the bit")]
        let half_both = (weight + next_weight) / 2.0;
        let (mean, next_mean) = (left.mean * scale, right.mean * scale);
        let mut left_unit = 0.0;
        if weight == 1.0 {
            if index - walk.weight_so_far < 0.5 {
                return mean;
            }
            left_unit = 0.5;
        }
        let mut right_unit = 0.0;
        if next_weight == 1.0 {
            if walk.weight_so_far + half_both - index <= 0.5 {
                return next_mean;
            }
            right_unit = 0.5;
        }
        let z1 = index - walk.weight_so_far - left_unit;
        let z2 = walk.weight_so_far + half_both - index - right_unit;
        weighted_average(mean, z2, next_mean, z1)
    }
}
