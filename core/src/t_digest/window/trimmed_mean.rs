//! `TDIGEST.TRIMMED_MEAN` of a window of several generations, from the generations' own
//! centroids.
//!
//! The window's digest places its centroids where the generations' summed curve puts their
//! ranks ([`Curve::centroids`]), which serves quantiles; but a centroid there is the value at
//! its middle rank, not a mean of observations, and the curve itself spreads each
//! generation's centroid between its neighbours' means. A mean taken over those centroids
//! drifts from the values' own (measured in process on five generations of latencies: 1 to 2%
//! above the exact mean of the middle 80%, and of all of them, where a plain digest is within
//! 0.5%, and exact for all of them). Each generation's centroids hold the exact mean of their
//! observations, so the window's trimmed mean takes its ranks from the summed curve and its
//! values from the generations' centroids: the ranks `low` and `high` of the window's
//! observations (floored and ceiled, as RedisBloom's `td_trimmed_mean`) found on the summed
//! curve, at a value where each generation has a rank of its own, and each generation's
//! centroids between its two ranks averaged, weighted by how much of each lies there. Of the
//! whole window (`0` and `1`), that is the exact mean of its observations.

use super::super::digest::TDigest;
use super::curve::Curve;
use crate::bytes::AllocationFailed;

/// What a window's trimmed means are found from: each generation's curve and the weights of
/// its centroids summed, and the generations' curves summed. Kept with the value until its
/// next write or rotation, as the window's digest is, so that a read finds each generation's
/// centroids between its two ranks by binary search and sums those alone: making the curves at
/// every call cost a window of four generations of compression 100 several times a plain
/// digest's `TRIMMED_MEAN`. Only weights are summed ahead: a sum of weighted means over all the
/// centroids, taken apart for the ones between, loses the small values of the middle beside
/// large ones at either end (a trimmed range of values near 1 between outliers of ±1e18
/// averaged 0).
pub(super) struct Trimming {
    generations: Vec<Weights>,
    window: Curve,
}

/// A generation's curve, and the weights of its centroids summed before each centroid and
/// after the last.
struct Weights {
    curve: Curve,
    before: Vec<f64>,
}

impl Trimming {
    /// The curves and weights of `generations` (each digest's view).
    pub(super) fn of(generations: &[&TDigest]) -> Result<Trimming, AllocationFailed> {
        let mut weights = Vec::new();
        weights.try_reserve_exact(generations.len()).map_err(|_| AllocationFailed)?;
        for digest in generations {
            let centroids = &digest.view()?.nodes;
            let mut before = Vec::new();
            before.try_reserve_exact(centroids.len() + 1).map_err(|_| AllocationFailed)?;
            let mut sum = 0.0;
            before.push(sum);
            for centroid in centroids {
                sum += centroid.weight as f64;
                before.push(sum);
            }
            weights.push(Weights { curve: Curve::of_centroids(centroids, digest.min, digest.max)?, before });
        }
        let window = Curve::sum(&weights.iter().map(|weights| &weights.curve).collect::<Vec<&Curve>>())?;
        Ok(Trimming { generations: weights, window })
    }

    /// The mean of the observations of `generations` (those this was made of, in the same
    /// order) between fractions `low` and `high` of them (`0 <= low < high <= 1`, as the
    /// command checks): NaN when they hold none.
    pub(super) fn mean(
        &self,
        generations: &[&TDigest],
        low: f64,
        high: f64,
    ) -> Result<f64, AllocationFailed> {
        let total = self.window.total();
        let (from, to) = ((total * low).floor(), (total * high).ceil());
        let (from, to) = (self.window.position_of(from), self.window.position_of(to));
        let mut taken = Vec::new();
        taken.try_reserve_exact(generations.len()).map_err(|_| AllocationFailed)?;
        for (digest, weights) in generations.iter().zip(&self.generations) {
            let (lower, upper) = (weights.curve.rank_at(from), weights.curve.rank_at(to));
            taken.push((digest.view()?.nodes.as_slice(), weights.between(lower, upper), lower, upper));
        }
        // Summed as they are, as a plain digest's trimmed mean is; only where that overflows,
        // again in units of a power of two at least the largest mean (its inverse is exact).
        let sum = |inverse: f64| {
            let (mut weight, mut scaled, mut largest) = (0.0, 0.0, 0.0_f64);
            for &(centroids, ref range, lower, upper) in &taken {
                for (index, centroid) in centroids.iter().enumerate().take(range.end).skip(range.start) {
                    let (start, end) = (range.before[index], range.before[index + 1]);
                    let part = end.min(upper) - start.max(lower);
                    if part > 0.0 {
                        weight += part;
                        scaled += part * (centroid.mean * inverse);
                        largest = largest.max(centroid.mean.abs());
                    }
                }
            }
            (scaled / weight / inverse, largest)
        };
        let (mean, largest) = sum(1.0);
        // NaN with nothing taken, as of a window that holds nothing.
        if mean.is_finite() || (mean.is_nan() && largest == 0.0) {
            return Ok(mean);
        }
        Ok(sum(1.0 / power_of_two_above(largest)).0)
    }
}

/// The centroids of a generation between two of its ranks: from `start` to before `end`, with
/// the weights before each.
struct Range<'a> {
    start: usize,
    end: usize,
    before: &'a [f64],
}

impl Weights {
    /// The centroids that lie at least in part between ranks `lower` and `upper`.
    fn between(&self, lower: f64, upper: f64) -> Range<'_> {
        let before = &self.before;
        let centroids = before.len() - 1;
        // The first centroid ending above `lower`, and the one after the last starting below
        // `upper`.
        let start = before[1..].partition_point(|&weight| weight <= lower);
        let end = before[..centroids].partition_point(|&weight| weight < upper);
        Range { start, end: end.max(start), before }
    }
}

/// A power of two at least `magnitude` (finite, not negative), within `2^-1021..=2^1023`:
/// its inverse is exact, and scales every value of at most that magnitude to at most 2.
fn power_of_two_above(magnitude: f64) -> f64 {
    let exponent = ((magnitude.to_bits() >> 52) & 0x7ff) as i64 - 1022;
    f64::from_bits(((exponent.clamp(-1021, 1023) + 1023) as u64) << 52)
}
