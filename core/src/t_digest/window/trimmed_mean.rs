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

/// What a window's trimmed means are found from: each generation's curve and the sums of its
/// centroids, and the generations' curves summed. Kept with the value until its next write or
/// rotation, as the window's digest is. Each read then costs a few binary searches per
/// generation: making these, or walking every centroid of every generation, cost a window of
/// four generations of compression 100 several times a plain digest's `TRIMMED_MEAN`.
pub(super) struct Trimming {
    generations: Vec<Sums>,
    window: Curve,
    /// A power of two at least the largest magnitude of a centroid's mean, which the sums of
    /// weighted means are taken in units of: no magnitude of the values overflows them.
    scale: f64,
}

/// A generation's curve, and the sums of its centroids' weights and weighted means (in units
/// of [`Trimming::scale`]) before each centroid and after the last.
struct Sums {
    curve: Curve,
    before: Vec<Sum>,
}

#[derive(Clone, Copy, Default)]
struct Sum {
    weight: f64,
    scaled: f64,
}

impl Trimming {
    /// The curves and sums of `generations` (each digest's view).
    pub(super) fn of(generations: &[&TDigest]) -> Result<Trimming, AllocationFailed> {
        let mut largest: f64 = 0.0;
        for digest in generations {
            largest = digest
                .view()?
                .nodes
                .iter()
                .fold(largest, |largest, centroid| largest.max(centroid.mean.abs()));
        }
        let scale = power_of_two_above(largest);
        let inverse = 1.0 / scale;
        let mut sums = Vec::new();
        sums.try_reserve_exact(generations.len()).map_err(|_| AllocationFailed)?;
        for digest in generations {
            let centroids = &digest.view()?.nodes;
            let mut before = Vec::new();
            before.try_reserve_exact(centroids.len() + 1).map_err(|_| AllocationFailed)?;
            let mut sum = Sum::default();
            before.push(sum);
            for centroid in centroids {
                let weight = centroid.weight as f64;
                sum = Sum {
                    weight: sum.weight + weight,
                    scaled: sum.scaled + weight * (centroid.mean * inverse),
                };
                before.push(sum);
            }
            sums.push(Sums { curve: Curve::of_centroids(centroids, digest.min, digest.max)?, before });
        }
        let window = Curve::sum(&sums.iter().map(|sums| &sums.curve).collect::<Vec<&Curve>>())?;
        Ok(Trimming { generations: sums, window, scale })
    }

    /// The mean of the observations between fractions `low` and `high` of the generations'
    /// (`0 <= low < high <= 1`, as the command checks): NaN when they hold none.
    pub(super) fn mean(&self, low: f64, high: f64) -> f64 {
        let total = self.window.total();
        let (from, to) = ((total * low).floor(), (total * high).ceil());
        let (from, to) = (self.window.position_of(from), self.window.position_of(to));
        let (mut weight, mut scaled) = (0.0, 0.0);
        for generation in &self.generations {
            let taken = generation.between(generation.curve.rank_at(from), generation.curve.rank_at(to));
            weight += taken.weight;
            scaled += taken.scaled;
        }
        scaled / weight * self.scale
    }
}

impl Sums {
    /// The weight and weighted means of the centroids between ranks `lower` and `upper`, a
    /// centroid partly between them counted for the part that is.
    fn between(&self, lower: f64, upper: f64) -> Sum {
        let before = &self.before;
        let centroids = before.len() - 1;
        // The first centroid ending above `lower`, and the one after the last starting below
        // `upper`.
        let first = before[1..].partition_point(|sum| sum.weight <= lower);
        let end = before[..centroids].partition_point(|sum| sum.weight < upper);
        if first >= end {
            return Sum::default();
        }
        let part = |index: usize, from: f64, to: f64| {
            let (start, finish) = (before[index], before[index + 1]);
            let whole = finish.weight - start.weight;
            let taken = finish.weight.min(to) - start.weight.max(from);
            let mean_scaled = if whole > 0.0 { (finish.scaled - start.scaled) / whole } else { 0.0 };
            Sum { weight: taken, scaled: taken * mean_scaled }
        };
        if end - first == 1 {
            return part(first, lower, upper);
        }
        let (head, tail) = (part(first, lower, upper), part(end - 1, lower, upper));
        let (inner_start, inner_end) = (before[first + 1], before[end - 1]);
        Sum {
            weight: head.weight + (inner_end.weight - inner_start.weight) + tail.weight,
            scaled: head.scaled + (inner_end.scaled - inner_start.scaled) + tail.scaled,
        }
    }
}

/// A power of two at least `magnitude` (finite, not negative), within `2^-1021..=2^1023`:
/// its inverse is exact, and scales every value of at most that magnitude to at most 2.
fn power_of_two_above(magnitude: f64) -> f64 {
    let exponent = ((magnitude.to_bits() >> 52) & 0x7ff) as i64 - 1022;
    f64::from_bits(((exponent.clamp(-1021, 1023) + 1023) as u64) << 52)
}
