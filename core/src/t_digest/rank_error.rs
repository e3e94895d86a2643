//! What the tests of plain and windowed digests measure with: values they can replay, and the
//! rank error of quantile estimates against the exact, sorted values.

use super::digest::TDigest;

/// xorshift64*: values the tests can replay.
pub(super) struct Random(pub(super) u64);

impl Random {
    pub(super) fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The rank error of a quantile estimate: how far the fraction of `sorted` at or below it
/// (ties counted half) is from the fraction asked for.
pub(super) fn rank_error(sorted: &[f64], quantile: f64, estimate: f64) -> f64 {
    let below = sorted.partition_point(|&value| value < estimate);
    let at_or_below = sorted.partition_point(|&value| value <= estimate);
    let rank = (below + at_or_below) as f64 / 2.0 / sorted.len() as f64;
    (rank - quantile).abs()
}

/// Mean and largest rank error of `digest`'s quantiles over a grid of fractions.
pub(super) fn rank_errors(digest: &TDigest, sorted: &[f64]) -> (f64, f64) {
    let quantiles: Vec<f64> = (1..1000).map(|i| f64::from(i) / 1000.0).collect();
    let estimates = digest.quantiles(&quantiles).unwrap();
    let errors: Vec<f64> =
        quantiles.iter().zip(&estimates).map(|(&q, &estimate)| rank_error(sorted, q, estimate)).collect();
    (errors.iter().sum::<f64>() / errors.len() as f64, errors.iter().copied().fold(0.0, f64::max))
}
