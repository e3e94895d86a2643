//! The RDB record of `TDIS-TYPE`, RedisBloom's, encoding version 0 (the only one it has
//! written, from its first t-digest to 2.8 and since): compression, minimum and maximum as
//! doubles; capacity, merged nodes, unmerged nodes and total compressions as signed values;
//! merged and unmerged weight as doubles; then the merged centroids' means, then their
//! weights, as doubles. RedisBloom compresses before it saves, so the buffer is not written:
//! only its count and weight, which its loader keeps beside zeroed nodes.
//!
//! This module saves every node it holds, centroids and buffered values alike, sorted, as
//! merged centroids (no buffer, the merged weight all the observations): the set of nodes, which
//! is the whole of the digest, so that it loads back as the digest saved. RedisBloom loads the
//! same record and answers from the nodes as they are until its next add, whose read
//! compresses them all (at its own, coarser scale); until then its interpolation takes a
//! buffered value beside a centroid for the centroid's edge, and its quantiles are off by
//! several percent of rank (docs/redisbloom-compatibility.md gives the measure and the
//! one-command remedy).
//!
//! RedisBloom 2.8 checks nothing it loads (it trusts the capacity and the node counts to
//! index its arrays); this checks every field before it allocates or trusts it:
//!
//! - the compression an integer from 1 to [`MAX_COMPRESSION`], the capacity its
//!   `6 * compression + 10`, the nodes within the budget and the capacity;
//! - bounds and means finite (but a node of no weight whose mean RedisBloom made NaN,
//!   `0 * 0 / 0`, merging two values lost to reloads: loaded as the lost value, of mean 0);
//! - weights integers from 0 (RedisBloom before 2.4 kept fractional weights, which 2.8
//!   truncates on load, as this does) below 2^63, the centroids' weights adding up to no more
//!   than the merged weight (but for the roundings of weights past 2^53), and both weights to
//!   no more than `i64::MAX`. Less is no corruption: what the truncations lost stays in the
//!   merged weight, and no bound on it would hold for long (a compression keeps the shortfall
//!   with fewer centroids, a merge adds the sources');
//! - in a digest that holds observations, the minimum at most the maximum and every mean
//!   between them (but for a rounding: a merged mean is a weighted average of values there),
//!   unless its weight is 0 (RedisBloom's lost value, of mean 0, merged into a digest);
//! - a buffer only where RedisBloom leaves one, in a digest of one observation or less, and
//!   of at most [`MAX_BUFFERED_NODES`]: RedisBloom's loader keeps the count and zeroes the
//!   nodes, and a record naming millions of them (an 82-byte payload once made a server hold a
//!   gigabyte of zeroed nodes, and the digest, full, refuse every add) is no digest it writes.
//!
//! [`MAX_COMPRESSION`]: super::MAX_COMPRESSION

use super::centroid::Centroid;
use super::digest::{capacity_for, memory_for, TDigest, MAX_COMPRESSION};
use super::nodes::Nodes;
use crate::decode::{DecodeError, Persistent, RdbSink, RdbSource};

/// 2^63: weights and counts are below it.
const WEIGHT_LIMIT: f64 = 9_223_372_036_854_775_808.0;
/// The most buffered nodes a record may name. RedisBloom leaves them only in a digest of one
/// observation or less, where its compression merges nothing: its single value, and a node
/// of no weight for each source of a TDIGEST.MERGE that had lost its value to a reload
/// (`TDIGEST.MERGE m 3 one one one` buffers three). Its loader zeroes as many as a record
/// names, which cost nothing in the record: a record of 82 bytes naming sixty million made a
/// server hold a gigabyte. A thousand merged sources of lost values is past any use.
const MAX_BUFFERED_NODES: usize = 1024;
/// The largest double below [`WEIGHT_LIMIT`].
const LARGEST_WEIGHT: f64 = 9_223_372_036_854_774_784.0;
/// How far past its bounds, relative to their magnitude, a merged mean may lie: a rounding
/// is 2^-53, and roundings do not pile up outward (each merge averages values within the
/// bounds); this leaves room for thousands and none for another value. Among subnormal
/// values, where a rounding is absolute, up to the smallest normal double.
const BOUNDS_SLACK: f64 = 1.0 / (1u64 << 32) as f64;

impl Persistent for TDigest {
    const ENCODING_VERSION: i32 = 0;

    fn load_rdb(
        encoding_version: i32,
        source: &mut impl RdbSource,
        max_bytes: usize,
    ) -> Result<Self, DecodeError> {
        if encoding_version != Self::ENCODING_VERSION {
            return Err(DecodeError::Malformed("an encoding version RedisBloom never wrote"));
        }
        let compression = source.double()?;
        if !(compression >= 1.0 && compression.fract() == 0.0) {
            return Err(DecodeError::Malformed("a compression that is not a positive integer"));
        }
        if compression > MAX_COMPRESSION as f64 {
            return Err(DecodeError::TooLarge);
        }
        let compression = compression as u64;
        let capacity = capacity_for(compression).ok_or(DecodeError::TooLarge)?;
        if memory_for(capacity) > max_bytes {
            return Err(DecodeError::TooLarge);
        }
        let (min, max) = (source.double()?, source.double()?);
        if !(min.is_finite() && max.is_finite()) {
            return Err(DecodeError::Malformed("a minimum or maximum that is not finite"));
        }
        if usize::try_from(source.signed()?).ok() != Some(capacity) {
            return Err(DecodeError::Malformed("a capacity other than 6 * compression + 10"));
        }
        let merged_nodes = count(source.signed()?)?;
        let unmerged_nodes = count(source.signed()?)?;
        if merged_nodes.checked_add(unmerged_nodes).is_none_or(|nodes| nodes > capacity) {
            return Err(DecodeError::Malformed("more nodes than the capacity"));
        }
        let total_compressions = source.signed()?;
        if total_compressions < 0 {
            return Err(DecodeError::Malformed("a negative count of compressions"));
        }
        let merged_weight = weight(source.double()?)?;
        let unmerged_weight = weight(source.double()?)?;
        let observations = merged_weight
            .checked_add(unmerged_weight)
            .ok_or(DecodeError::Malformed("more observations than a 64-bit count holds"))?;
        if unmerged_nodes > 0 && observations > 1 {
            return Err(DecodeError::Malformed("a buffer in a digest RedisBloom would have compressed"));
        }
        if unmerged_nodes > MAX_BUFFERED_NODES {
            return Err(DecodeError::Malformed("more buffered nodes than RedisBloom leaves"));
        }
        if observations > 0 && min > max {
            return Err(DecodeError::Malformed("a minimum above the maximum"));
        }
        // A merged mean may stray past the bounds by its rounding, never further.
        let stray = min.abs().max(max.abs()) * BOUNDS_SLACK + f64::MIN_POSITIVE;
        let within_bounds = |mean: f64| observations == 0 || (min - stray <= mean && mean <= max + stray);
        if unmerged_nodes == 0 && unmerged_weight > 0 {
            return Err(DecodeError::Malformed("an unmerged weight without unmerged nodes"));
        }
        // Room for the nodes there are, on the schedule (not the capacity): one node more for
        // RedisBloom's lost observation below.
        let mut nodes = Nodes::with_room_for(merged_nodes + unmerged_nodes, capacity)
            .map_err(|_| DecodeError::OutOfMemory)?;
        let mut means = Vec::new();
        means.try_reserve_exact(merged_nodes).map_err(|_| DecodeError::OutOfMemory)?;
        for _ in 0..merged_nodes {
            means.push(source.double()?);
        }
        // Summed wide: a saturating sum stops at `i64::MAX`, within the roundings' allowance of
        // a merged weight near it, however heavy the centroids.
        let mut centroids_weight: i128 = 0;
        for mean in means {
            let weight = weight(source.double()?)?;
            let mean = match (weight, mean.is_finite()) {
                // A node of no weight is RedisBloom's lost value, of mean 0, merged in: no
                // bound; and where its compression merged two of them, `0 * 0 / 0`, NaN.
                (0, true) => mean,
                (0, false) => 0.0,
                (_, false) => return Err(DecodeError::Malformed("a centroid's mean that is not finite")),
                (_, true) if !within_bounds(mean) => {
                    return Err(DecodeError::Malformed("a centroid's mean outside the minimum and maximum"));
                }
                (_, true) => mean,
            };
            centroids_weight += i128::from(weight);
            // Room for every node was made above.
            nodes.push(Centroid { mean, weight }, capacity).map_err(|_| DecodeError::OutOfMemory)?;
        }
        // Weights are saved as doubles, exact to 2^53 only: past it, each is rounded, and the
        // centroids' sum may pass the merged weight by the roundings, which is no corruption.
        let rounding = (merged_weight as f64 * f64::EPSILON * (merged_nodes as f64 + 1.0)) as i128;
        if centroids_weight - i128::from(merged_weight) > rounding {
            return Err(DecodeError::Malformed("centroids weighing more than the merged weight"));
        }
        let lost = if unmerged_nodes == 1 && unmerged_weight == 1 && min == max {
            // RedisBloom saves a single observation as a count and a weight, and loads it as a
            // node of mean 0 and weight 0: the value is lost there. The bounds still hold it.
            Centroid { mean: min, weight: 1 }
        } else {
            Centroid { mean: 0.0, weight: 0 }
        };
        for _ in 0..unmerged_nodes {
            nodes.push(lost, capacity).map_err(|_| DecodeError::OutOfMemory)?;
        }
        Ok(TDigest::from_parts(compression, capacity, min, max, nodes, observations, total_compressions))
    }

    /// Every node, sorted (in place: the order is not part of the digest, and a save has no
    /// memory of its own to count on), as merged centroids of all the observations.
    fn save_rdb(&self, sink: &mut impl RdbSink) {
        let nodes = self.nodes.sorted();
        sink.double(self.compression as f64);
        sink.double(self.min);
        sink.double(self.max);
        sink.signed(self.capacity as i64);
        sink.signed(nodes.len() as i64);
        sink.signed(0);
        sink.signed(self.total_compressions);
        sink.double(saved_total(self.observations, &nodes));
        sink.double(0.0);
        for node in nodes.iter() {
            sink.double(node.mean);
        }
        for node in nodes.iter() {
            sink.double(saved_weight(node.weight));
        }
    }

    fn memory_bytes(&self) -> usize {
        self.node_bytes()
    }

    fn try_clone(&self) -> Option<Self> {
        self.try_copy().ok()
    }
}

/// A weight as the record's double: exact to 2^53, past it the nearest double (RedisBloom's
/// cast), but never 2^63, which no loader takes.
fn saved_weight(weight: i64) -> f64 {
    (weight as f64).min(LARGEST_WEIGHT)
}

/// The record's merged weight: the smallest double at or above both the observations and the
/// weights its centroids load back as. Past 2^53 the roundings of the weights may add up above
/// the observations' double; were that saved, the load's excess would stay in the digest, pile
/// up over saves and loads, and one day pass what a load accepts (the record of a digest that
/// merged into itself some 53 times, refused at a restart). Saved so, a record loads with no
/// excess and saves again the same; below 2^53 it is the observations, exactly.
fn saved_total(observations: i64, nodes: &[Centroid]) -> f64 {
    let weights = nodes.iter().fold(0i64, |sum, node| sum.saturating_add(saved_weight(node.weight) as i64));
    let total = observations.max(weights);
    let double = total as f64;
    let at_least = if (double as i64) < total { double.next_up() } else { double };
    at_least.min(LARGEST_WEIGHT)
}

fn count(value: i64) -> Result<usize, DecodeError> {
    usize::try_from(value).map_err(|_| DecodeError::Malformed("a negative count of nodes"))
}

/// A weight as RedisBloom 2.8 loads it: a double cast to `long long`, which truncates.
fn weight(value: f64) -> Result<i64, DecodeError> {
    if (0.0..WEIGHT_LIMIT).contains(&value) {
        Ok(value as i64)
    } else {
        Err(DecodeError::Malformed("a weight that is negative, not finite, or beyond 2^63"))
    }
}
