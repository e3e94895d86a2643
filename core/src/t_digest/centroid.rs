//! The node of a t-digest, which every part of it reads and writes.

/// One centroid: the mean of the values it holds, and how many (RedisBloom's `long long`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Centroid {
    pub(super) mean: f64,
    pub(super) weight: i64,
}
