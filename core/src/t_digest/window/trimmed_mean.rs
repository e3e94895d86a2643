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

use super::super::centroid::Centroid;
use super::super::digest::TDigest;
use super::curve::Curve;
use crate::bytes::AllocationFailed;

/// A generation's centroids and its curve.
struct Generation<'a> {
    centroids: &'a [Centroid],
    curve: Curve,
}

/// The mean of the observations of `generations` between fractions `low` and `high` of them
/// (`0 <= low < high <= 1`, as the command checks): NaN when they hold none.
pub(super) fn trimmed_mean(generations: &[&TDigest], low: f64, high: f64) -> Result<f64, AllocationFailed> {
    let mut parts = Vec::new();
    parts.try_reserve_exact(generations.len()).map_err(|_| AllocationFailed)?;
    for digest in generations {
        let centroids = digest.view()?.nodes.as_slice();
        parts.push(Generation { centroids, curve: Curve::of_centroids(centroids, digest.min, digest.max)? });
    }
    let curves: Vec<&Curve> = parts.iter().map(|part| &part.curve).collect();
    let window = Curve::sum(&curves)?;
    let total = window.total();
    let (from, to) = ((total * low).floor(), (total * high).ceil());
    let (from, to) = (window.position_of(from), window.position_of(to));
    let mut mean = Mean::default();
    for part in &parts {
        let lower = part.curve.rank_at(from);
        let upper = part.curve.rank_at(to);
        let mut below = 0.0;
        for centroid in part.centroids {
            let weight = centroid.weight as f64;
            let taken = (below + weight).min(upper) - below.max(lower);
            if taken > 0.0 {
                mean.add(centroid.mean, taken);
            }
            below += weight;
        }
    }
    Ok(mean.value)
}

/// A weighted mean kept as a convex combination, which no magnitude of the values overflows.
struct Mean {
    value: f64,
    weight: f64,
}

impl Default for Mean {
    fn default() -> Mean {
        Mean { value: f64::NAN, weight: 0.0 }
    }
}

impl Mean {
    fn add(&mut self, value: f64, weight: f64) {
        self.weight += weight;
        if self.value.is_nan() {
            self.value = value;
            return;
        }
        let share = weight / self.weight;
        let mixed = self.value * (1.0 - share) + value * share;
        self.value = mixed.clamp(self.value.min(value), self.value.max(value));
    }
}
