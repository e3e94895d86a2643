//! A sketch's width and depth, as CMS.INITBYDIM takes them or CMS.INITBYPROB derives them,
//! refused where RedisBloom 2.8.2 refuses them. Whether the memory is there is
//! [`CountMinSketch::new`](super::CountMinSketch::new)'s question, asked after these.

/// Why a width and depth were refused before any memory was asked for. Each is one of
/// RedisBloom's replies, in the order it checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitError {
    /// CMS.INITBYDIM's width below 1: RedisBloom answers `CMS: invalid width` (also for a
    /// width that is not an integer).
    Width,
    /// CMS.INITBYDIM's depth below 1: `CMS: invalid depth` (also for one that is not an
    /// integer).
    Depth,
    /// CMS.INITBYPROB's error outside (0, 1): `CMS: invalid overestimation value` (also for
    /// one that is not a number).
    Overestimation,
    /// CMS.INITBYPROB's probability outside (0, 1): `CMS: invalid prob value` (also for one
    /// that is not a number).
    Probability,
    /// Dimensions whose product passes `i64::MAX`, or that INITBYPROB's formula takes to 0 or
    /// past `i64::MAX`: `CMS: invalid init arguments`.
    Dimensions,
}

/// `log10f(0.5)` as RedisBloom's compiler folded it: the nearest `f32` (bits `0xbe9a209b`,
/// read off the 2.8.2 binary).
pub(super) const LOG10_HALF: f32 = -std::f32::consts::LOG10_2;
/// 2^63: doubles from here on have no `i64`, and RedisBloom's conversion makes them negative
/// or 0, which its check refuses.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// CMS.INITBYDIM's width and depth, checked as RedisBloom checks them.
pub fn dimensions(width: i64, depth: i64) -> Result<(u64, u64), InitError> {
    if width < 1 {
        return Err(InitError::Width);
    }
    if depth < 1 {
        return Err(InitError::Depth);
    }
    product_fits(width, depth)
}

/// CMS.INITBYPROB's width and depth for an overestimation `error` (a share of the total
/// count) and the `probability` of exceeding it: `ceil(2 / error)` computed in doubles, and
/// `ceil(log10f(probability) / log10f(0.5))` computed in floats, as RedisBloom computes them.
/// The float matters: a probability that rounds to 1 or to 0 as a float gives a depth of 0
/// or infinity, which RedisBloom refuses (0.99999999 and 1e-50 do; 1e-44 gives 147 rows).
pub fn dimensions_for(error: f64, probability: f64) -> Result<(u64, u64), InitError> {
    // Negated comparisons so that NaN is refused as well.
    if !(error > 0.0 && error < 1.0) {
        return Err(InitError::Overestimation);
    }
    if !(probability > 0.0 && probability < 1.0) {
        return Err(InitError::Probability);
    }
    let width = (2.0 / error).ceil();
    let depth = f64::from(((probability as f32).log10() / LOG10_HALF).ceil());
    let in_range = |value: f64| (1.0..TWO_POW_63).contains(&value);
    if !in_range(width) || !in_range(depth) {
        return Err(InitError::Dimensions);
    }
    product_fits(width as i64, depth as i64)
}

/// RedisBloom's last check, on positive dimensions: their product stays within `i64`.
fn product_fits(width: i64, depth: i64) -> Result<(u64, u64), InitError> {
    if width > i64::MAX / depth {
        return Err(InitError::Dimensions);
    }
    Ok((width as u64, depth as u64))
}
