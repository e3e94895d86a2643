//! The digest and its writes: creation, TDIGEST.ADD, TDIGEST.RESET, TDIGEST.MERGE, and the
//! compression they run when the node array fills, each as RedisBloom 2.8.2's `td_*` functions
//! do it.

use std::borrow::Cow;
use std::f64::consts::PI;

use super::centroid::Centroid;
use super::sort::sort_after;
use crate::bytes::AllocationFailed;

/// The compression TDIGEST.CREATE gives a digest when none is asked for.
pub const DEFAULT_COMPRESSION: u64 = 100;

/// The largest compression: RedisBloom keeps the node capacity, `6 * compression + 10`, in a
/// C `int`, and a larger one wraps (2.8.2 makes a digest of a garbage capacity for
/// `COMPRESSION 1000000000`).
pub const MAX_COMPRESSION: u64 = (i32::MAX as u64 - CAPACITY_OFFSET) / CAPACITY_FACTOR;

const CAPACITY_FACTOR: u64 = 6;
const CAPACITY_OFFSET: u64 = 10;

/// A node is a mean and a weight, 8 bytes each, as in RedisBloom's two parallel arrays.
const NODE_BYTES: usize = 16;

/// What RedisBloom counts beside the nodes: the size of a pointer (its `sizeof(tdigest)`).
const HEADER_BYTES: usize = 8;

/// Why a digest could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeError {
    /// A compression of 0.
    Invalid,
    /// Beyond [`MAX_COMPRESSION`], or nodes beyond the memory budget.
    TooLarge,
    /// The allocator had no memory for the nodes.
    OutOfMemory,
}

/// Why TDIGEST.ADD changed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddError {
    /// A value is NaN or infinite (RedisBloom: "error parsing val parameter" for NaN, "val
    /// parameter needs to be a finite number" for an infinity).
    NotFinite,
    /// The observations would pass `i64::MAX`, or the node array stayed full after a
    /// compression (RedisBloom: "overflow detected").
    Overflow,
    /// The add had to run on a copy (see [`TDigest::add`]) and there was no memory for it.
    OutOfMemory,
}

/// Why TDIGEST.MERGE made no digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeError {
    /// The compression is 0 (RedisBloom: "allocation of destination digest failed").
    Invalid,
    /// The compression is beyond [`MAX_COMPRESSION`], or the nodes beyond the memory budget.
    TooLarge,
    /// The allocator had no memory for the digest, or for a compressed copy of a source.
    OutOfMemory,
    /// The observations would pass `i64::MAX` (RedisBloom: "overflow detected").
    Overflow,
}

impl From<SizeError> for MergeError {
    fn from(error: SizeError) -> MergeError {
        match error {
            SizeError::Invalid => MergeError::Invalid,
            SizeError::TooLarge => MergeError::TooLarge,
            SizeError::OutOfMemory => MergeError::OutOfMemory,
        }
    }
}

/// A node could not be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AddNodeError {
    Overflow,
    Full,
}

/// TDIGEST.INFO's fields, of the digest as stored. RedisBloom's INFO reports its digest as
/// the reads before it left it (they compress the buffer); this one's reads leave the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TDigestInfo {
    /// `Compression`.
    pub compression: u64,
    /// `Capacity`: nodes, `6 * compression + 10`.
    pub capacity: usize,
    /// `Merged nodes`: centroids.
    pub merged_nodes: usize,
    /// `Unmerged nodes`: values buffered since the last compression.
    pub unmerged_nodes: usize,
    /// `Merged weight`: observations in the centroids.
    pub merged_weight: i64,
    /// `Unmerged weight`: observations in the buffer.
    pub unmerged_weight: i64,
    /// `Observations`: both weights.
    pub observations: i64,
    /// `Total compressions`, since creation or the last RESET.
    pub total_compressions: i64,
    /// `Memory usage`, RedisBloom's figure: 16 bytes a node, and 8.
    pub memory_usage: usize,
}

/// A t-digest of RedisBloom 2.8.2's kind: a fixed array of `6 * compression + 10` nodes,
/// merged centroids (sorted by mean) in front and values buffered since the last
/// compression behind them. A compression sorts the whole array and merges neighbours while
/// the merged weight stays within the scale function's bound at both ends.
pub struct TDigest {
    pub(super) compression: u64,
    pub(super) capacity: usize,
    /// Of every value ever added (RedisBloom's `DBL_MAX` and `-DBL_MAX` when none was).
    pub(super) min: f64,
    pub(super) max: f64,
    /// The merged centroids, then the buffer. Never longer than `capacity`, for which room is
    /// reserved when the digest is made, so that a push never allocates.
    pub(super) nodes: Vec<Centroid>,
    pub(super) merged_nodes: usize,
    pub(super) merged_weight: i64,
    pub(super) unmerged_weight: i64,
    pub(super) total_compressions: i64,
}

/// The digest as RedisBloom holds it after `td_compress`: what its reads answer from, what
/// its save writes, and what its merge takes from a source.
pub(super) struct Compressed<'a> {
    /// Merged centroids first, then whatever stayed in the buffer (when the digest holds one
    /// observation or less, RedisBloom sorts the array and merges nothing).
    pub(super) nodes: Cow<'a, [Centroid]>,
    pub(super) merged_nodes: usize,
    pub(super) merged_weight: i64,
    pub(super) unmerged_weight: i64,
    pub(super) total_compressions: i64,
}

impl Compressed<'_> {
    pub(super) fn merged(&self) -> &[Centroid] {
        self.nodes.get(..self.merged_nodes).unwrap_or_default()
    }
}

/// The node capacity of a compression, or `None` beyond [`MAX_COMPRESSION`].
pub(super) fn capacity_for(compression: u64) -> Option<usize> {
    if compression > MAX_COMPRESSION {
        return None;
    }
    usize::try_from(compression * CAPACITY_FACTOR + CAPACITY_OFFSET).ok()
}

/// RedisBloom's `Memory usage` and MEMORY USAGE for a capacity.
pub(super) fn memory_for(capacity: usize) -> usize {
    capacity.saturating_mul(NODE_BYTES).saturating_add(HEADER_BYTES)
}

/// An empty vector with room for `len` elements, or an error instead of an abort.
pub(super) fn try_vec<T>(len: usize) -> Result<Vec<T>, AllocationFailed> {
    let mut vec = Vec::new();
    vec.try_reserve_exact(len).map_err(|_| AllocationFailed)?;
    Ok(vec)
}

impl TDigest {
    /// An empty digest (TDIGEST.CREATE), its nodes allocated at once as RedisBloom's are, if
    /// they fit `max_bytes`.
    pub fn new(compression: u64, max_bytes: usize) -> Result<TDigest, SizeError> {
        if compression == 0 {
            return Err(SizeError::Invalid);
        }
        let capacity = capacity_for(compression).ok_or(SizeError::TooLarge)?;
        if memory_for(capacity) > max_bytes {
            return Err(SizeError::TooLarge);
        }
        let nodes = try_vec(capacity).map_err(|_| SizeError::OutOfMemory)?;
        let mut digest = TDigest {
            compression,
            capacity,
            min: 0.0,
            max: 0.0,
            nodes,
            merged_nodes: 0,
            merged_weight: 0,
            unmerged_weight: 0,
            total_compressions: 0,
        };
        digest.reset();
        Ok(digest)
    }

    /// Empties the digest (TDIGEST.RESET); the compression and capacity stay.
    pub fn reset(&mut self) {
        self.min = f64::MAX;
        self.max = -f64::MAX;
        self.nodes.clear();
        self.merged_nodes = 0;
        self.merged_weight = 0;
        self.unmerged_weight = 0;
        self.total_compressions = 0;
    }

    /// Adds each value once (TDIGEST.ADD), in order, compressing whenever the node array
    /// fills, as RedisBloom does; or, when a value is not finite or the observations would
    /// overflow, changes nothing.
    ///
    /// RedisBloom can also fail in the middle, with the values before kept: when a
    /// compression leaves the array full. No digest it or this crate builds gets there, but a
    /// stored one may claim to, so an add that will compress runs on a copy, put in place
    /// when every value went in.
    pub fn add(&mut self, values: &[f64]) -> Result<(), AddError> {
        if !values.iter().all(|value| value.is_finite()) {
            return Err(AddError::NotFinite);
        }
        let count = i64::try_from(values.len()).map_err(|_| AddError::Overflow)?;
        self.observations().checked_add(count).ok_or(AddError::Overflow)?;
        if self.nodes.len() + values.len() < self.capacity {
            // Every value lands in the buffer without a compression: nothing can fail.
            return self.add_all(values);
        }
        let mut copy = self.try_copy().map_err(|_| AddError::OutOfMemory)?;
        copy.add_all(values)?;
        *self = copy;
        Ok(())
    }

    fn add_all(&mut self, values: &[f64]) -> Result<(), AddError> {
        for &value in values {
            self.add_node(value, 1).map_err(|_| AddError::Overflow)?;
        }
        Ok(())
    }

    /// Merges digests into a new one (TDIGEST.MERGE): `destination`, when it exists and
    /// `OVERRIDE` was not given, then each source in turn, each as RedisBloom's `td_merge`
    /// does: the digest so far is compressed, then every centroid of the compressed source
    /// is added as one weighted node. A source listed twice (or the destination listed as a
    /// source) is merged twice, as in RedisBloom.
    ///
    /// `compression` is `COMPRESSION`'s; without it, RedisBloom takes the destination's when
    /// it is merged, else the largest of the sources'.
    ///
    /// Sources are read, not changed (RedisBloom compresses each in place).
    pub fn merge(
        destination: Option<&TDigest>,
        sources: &[&TDigest],
        compression: Option<u64>,
        max_bytes: usize,
    ) -> Result<TDigest, MergeError> {
        let compression = compression
            .or(destination.map(|digest| digest.compression))
            .unwrap_or_else(|| sources.iter().map(|source| source.compression).max().unwrap_or(0));
        let mut merged = TDigest::new(compression, max_bytes)?;
        for source in destination.into_iter().chain(sources.iter().copied()) {
            merged.compress();
            let source = source.compressed().map_err(|_| MergeError::OutOfMemory)?;
            for node in source.nodes.iter() {
                merged.add_node(node.mean, node.weight).map_err(|_| MergeError::Overflow)?;
            }
        }
        Ok(merged)
    }

    /// RedisBloom's `td_add`: compress when the array is one short of full, then buffer the
    /// node.
    pub(super) fn add_node(&mut self, mean: f64, weight: i64) -> Result<(), AddNodeError> {
        if self.nodes.len() + 1 >= self.capacity {
            self.compress();
        }
        if self.nodes.len() >= self.capacity {
            return Err(AddNodeError::Full);
        }
        let unmerged_weight = self.unmerged_weight.checked_add(weight).ok_or(AddNodeError::Overflow)?;
        unmerged_weight.checked_add(self.merged_weight).ok_or(AddNodeError::Overflow)?;
        if mean < self.min {
            self.min = mean;
        }
        if mean > self.max {
            self.max = mean;
        }
        self.nodes.push(Centroid { mean, weight });
        self.unmerged_weight = unmerged_weight;
        Ok(())
    }

    /// Merges the buffer into the centroids, as RedisBloom's queries, saves and merges do to
    /// the digest they read. Nothing in this crate compresses but writes; this is for a
    /// caller that wants the stored digest to be what RedisBloom's would be after a read.
    pub fn compress(&mut self) {
        if self.nodes.len() == self.merged_nodes {
            return;
        }
        let total = self.merged_weight as f64 + self.unmerged_weight as f64;
        if let Some((merged_nodes, merged_weight)) =
            compress_nodes(&mut self.nodes, self.merged_nodes, total, self.compression)
        {
            self.nodes.truncate(merged_nodes);
            self.merged_nodes = merged_nodes;
            self.merged_weight = merged_weight;
            self.unmerged_weight = 0;
            self.total_compressions = self.total_compressions.saturating_add(1);
        }
    }

    /// The digest compressed, in a copy when the buffer holds anything.
    pub(super) fn compressed(&self) -> Result<Compressed<'_>, AllocationFailed> {
        let same = Compressed {
            nodes: Cow::Borrowed(&self.nodes),
            merged_nodes: self.merged_nodes,
            merged_weight: self.merged_weight,
            unmerged_weight: self.unmerged_weight,
            total_compressions: self.total_compressions,
        };
        if self.nodes.len() == self.merged_nodes {
            return Ok(same);
        }
        let mut nodes = try_vec(self.nodes.len())?;
        nodes.extend_from_slice(&self.nodes);
        let total = self.merged_weight as f64 + self.unmerged_weight as f64;
        Ok(match compress_nodes(&mut nodes, self.merged_nodes, total, self.compression) {
            Some((merged_nodes, merged_weight)) => {
                nodes.truncate(merged_nodes);
                Compressed {
                    nodes: Cow::Owned(nodes),
                    merged_nodes,
                    merged_weight,
                    unmerged_weight: 0,
                    total_compressions: self.total_compressions.saturating_add(1),
                }
            }
            None => Compressed { nodes: Cow::Owned(nodes), ..same },
        })
    }

    /// A copy, with the same room for nodes.
    pub(super) fn try_copy(&self) -> Result<TDigest, AllocationFailed> {
        let mut nodes = try_vec(self.capacity)?;
        nodes.extend_from_slice(&self.nodes);
        Ok(TDigest {
            nodes,
            compression: self.compression,
            capacity: self.capacity,
            min: self.min,
            max: self.max,
            merged_nodes: self.merged_nodes,
            merged_weight: self.merged_weight,
            unmerged_weight: self.unmerged_weight,
            total_compressions: self.total_compressions,
        })
    }

    /// The compression it was created with.
    pub fn compression(&self) -> u64 {
        self.compression
    }

    /// Observations added (RedisBloom's `td_size`).
    pub fn observations(&self) -> i64 {
        // Adds and merges keep the sum within i64; a loaded record is checked for it.
        self.merged_weight.saturating_add(self.unmerged_weight)
    }

    /// The smallest value added (TDIGEST.MIN), NaN when there is none.
    pub fn min(&self) -> f64 {
        if self.observations() > 0 {
            self.min
        } else {
            f64::NAN
        }
    }

    /// The largest value added (TDIGEST.MAX), NaN when there is none.
    pub fn max(&self) -> f64 {
        if self.observations() > 0 {
            self.max
        } else {
            f64::NAN
        }
    }

    /// TDIGEST.INFO's fields.
    pub fn info(&self) -> TDigestInfo {
        TDigestInfo {
            compression: self.compression,
            capacity: self.capacity,
            merged_nodes: self.merged_nodes,
            unmerged_nodes: self.nodes.len() - self.merged_nodes,
            merged_weight: self.merged_weight,
            unmerged_weight: self.unmerged_weight,
            observations: self.observations(),
            total_compressions: self.total_compressions,
            memory_usage: memory_for(self.capacity),
        }
    }
}

impl std::fmt::Debug for TDigest {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("TDigest").field("info", &self.info()).finish_non_exhaustive()
    }
}

/// RedisBloom's `td_compress` on a node array holding `total` observations: sorts it, then,
/// unless `total` is 1 or less (where RedisBloom stops after the sort), merges neighbours and
/// answers how many centroids that left and their weight.
fn compress_nodes(
    nodes: &mut [Centroid],
    merged: usize,
    total: f64,
    compression: u64,
) -> Option<(usize, i64)> {
    sort_after(nodes, merged);
    // RedisBloom also checks here for weights that overflow a double, which i64 weights
    // cannot, and for an infinite normalizer, which a total above 1 rules out.
    if total <= 1.0 {
        return None;
    }
    let normalizer = compression as f64 / (2.0 * PI * total * total.ln());
    let mut current = 0;
    let mut weight_so_far = 0.0;
    for next in 1..nodes.len() {
        let (Some(&into), Some(&node)) = (nodes.get(current), nodes.get(next)) else { break };
        let proposed = into.weight as f64 + node.weight as f64;
        let z = proposed * normalizer;
        let q0 = weight_so_far / total;
        let q2 = (weight_so_far + proposed) / total;
        if z <= q0 * (1.0 - q0) && z <= q2 * (1.0 - q2) {
            // Within the array's total, which adds and loads keep within i64.
            let weight = into.weight.saturating_add(node.weight);
            nodes[current] = Centroid { mean: merged_mean(into, node, weight), weight };
        } else {
            weight_so_far += into.weight as f64;
            current += 1;
            nodes[current] = node;
        }
    }
    // `total` is a double, exact to 2^53 only; the centroids' own sum keeps the record whole
    // past it (a save must load back).
    let centroids_weight =
        nodes.iter().take(current + 1).fold(0i64, |sum, node| sum.saturating_add(node.weight));
    Some((current + 1, (total as i64).max(centroids_weight)))
}

/// The mean of `into` once `node` is merged into it, `weight` the two weights' sum:
/// RedisBloom's `mean + (node.mean - mean) * node.weight / weight`, unless that overflows
/// (means far apart at the ends of the doubles), where the same mean is taken as a convex
/// combination, which cannot. Two nodes of no weight keep the first one's mean (RedisBloom
/// makes it NaN).
fn merged_mean(into: Centroid, node: Centroid, weight: i64) -> f64 {
    let mean = into.mean + (node.mean - into.mean) * node.weight as f64 / weight as f64;
    if mean.is_finite() {
        return mean;
    }
    if weight == 0 {
        return into.mean;
    }
    let share = node.weight as f64 / weight as f64;
    let mean = into.mean * (1.0 - share) + node.mean * share;
    mean.clamp(into.mean.min(node.mean), into.mean.max(node.mean))
}
