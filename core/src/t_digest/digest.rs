//! The digest and its writes: creation, TDIGEST.ADD, TDIGEST.RESET, TDIGEST.MERGE, and the
//! compression they run when the node array fills, each as RedisBloom 2.8.2's `td_*` functions
//! do it but for a finer merge ([`MERGE_SCALE`]); and the compressed view every read answers
//! from.

use std::cell::OnceCell;
use std::f64::consts::PI;

use super::centroid::Centroid;
use super::nodes::{room_for, Nodes};
use crate::bytes::AllocationFailed;

/// The compression TDIGEST.CREATE gives a digest when none is asked for.
pub const DEFAULT_COMPRESSION: u64 = 100;

/// The largest compression: RedisBloom keeps the node capacity, `6 * compression + 10`, in a
/// C `int`, and a larger one wraps (2.8.2 makes a digest of a garbage capacity for
/// `COMPRESSION 1000000000`).
pub const MAX_COMPRESSION: u64 = (i32::MAX as u64 - CAPACITY_OFFSET) / CAPACITY_FACTOR;

const CAPACITY_FACTOR: u64 = 6;
const CAPACITY_OFFSET: u64 = 10;

/// Centroids are merged as RedisBloom merges them at this many times the digest's compression:
/// smaller, so more of them, within the same node array (`6 * compression + 10`). The mean rank
/// error of the quantiles 0.001 to 0.999 falls to a third for the default compression, as
/// measured in process on streams of 100,000 values fed one at a time (normal values, five
/// streams each), for about one compression in twelve more:
///
/// | compression | scale 1 (RedisBloom) | scale 1.5 | scale 2 | merged centroids (1 / 2) |
/// |---|---|---|---|---|
/// | 10 | 0.0146 | 0.0119 | 0.0097 | 17 / 23 of 70 |
/// | 50 | 0.0037 | 0.0019 | 0.0014 | 39 / 60 of 310 |
/// | 100 | 0.00107 | 0.00049 | 0.00035 | 60 / 102 of 610 |
/// | 500 | 0.00017 | 0.00013 | 0.00011 | 207 / 381 of 3010 |
///
/// Reads answer as RedisBloom's would from the same centroids, and a record loads there as a
/// digest RedisBloom merged less; only which values share a centroid differs from RedisBloom.
pub(super) const MERGE_SCALE: f64 = 2.0;

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
    /// The node array had to grow, or the add to run on a copy (see [`TDigest::add`]), and
    /// there was no memory for it.
    OutOfMemory,
}

impl From<AllocationFailed> for AddError {
    fn from(_: AllocationFailed) -> AddError {
        AddError::OutOfMemory
    }
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
    OutOfMemory,
}

/// TDIGEST.INFO's fields, of the digest as a read sees it: the view's centroids (RedisBloom's
/// INFO after a read), the compressions of the stored digest, and the memory of its nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TDigestInfo {
    /// `Compression`.
    pub compression: u64,
    /// `Capacity`: nodes, `6 * compression + 10`.
    pub capacity: usize,
    /// `Merged nodes`: the view's centroids.
    pub merged_nodes: usize,
    /// `Unmerged nodes`: none, but for a digest of one observation or less, which RedisBloom
    /// never merges.
    pub unmerged_nodes: usize,
    /// `Merged weight`: observations in the view's centroids.
    pub merged_weight: i64,
    /// `Unmerged weight`: observations outside them (one observation or less).
    pub unmerged_weight: i64,
    /// `Observations`: both weights.
    pub observations: i64,
    /// `Total compressions` of the stored digest (when its node array filled, and in a
    /// merge), since creation or the last RESET; reads compress nothing.
    pub total_compressions: i64,
    /// `Memory usage`: 16 bytes a node of the array's room, and 8.
    pub memory_usage: usize,
}

/// A t-digest of RedisBloom 2.8.2's kind: an array of up to `6 * compression + 10` nodes,
/// centroids and the values buffered since the last compression alike, compressed when it is
/// full: sorted, and neighbours merged while the merged weight stays within the scale
/// function's bound at both ends.
///
/// The stored digest is the set of nodes and the totals, nothing else: reads answer from its
/// compression (the view, kept until the next write), and a save writes the set, so that the
/// digest a record loads as is the one saved, and a compression of it the same.
pub struct TDigest {
    pub(super) compression: u64,
    pub(super) capacity: usize,
    /// Of every value ever added (RedisBloom's `DBL_MAX` and `-DBL_MAX` when none was).
    pub(super) min: f64,
    pub(super) max: f64,
    /// Never more than `capacity`.
    pub(super) nodes: Nodes,
    /// Every node's weight (but for a RedisBloom record's lost value), within i64.
    pub(super) observations: i64,
    pub(super) total_compressions: i64,
    /// The compressed digest reads answer from, made by the first read after a write. Not
    /// counted in the digest's memory: it is not part of the value (a replica, never read,
    /// holds none), and it is at most as large as the nodes.
    view: OnceCell<View>,
}

/// The digest as RedisBloom holds it after `td_compress` (merged finer): what a read answers
/// from, and what a merge takes from a source.
pub(super) struct View {
    /// Merged centroids first, then whatever stayed out of them (when the digest holds one
    /// observation or less, RedisBloom sorts the array and merges nothing).
    pub(super) nodes: Vec<Centroid>,
    pub(super) merged_nodes: usize,
    pub(super) merged_weight: i64,
    pub(super) unmerged_weight: i64,
    /// The largest magnitude of a merged centroid's mean, which every read's overflow scale
    /// needs: found once here rather than by every read.
    pub(super) magnitude: f64,
}

impl View {
    fn new(nodes: Vec<Centroid>, merged_nodes: usize, merged_weight: i64, unmerged_weight: i64) -> View {
        let merged = nodes.get(..merged_nodes).unwrap_or_default();
        let magnitude = merged.iter().fold(0.0, |magnitude: f64, node| magnitude.max(node.mean.abs()));
        View { nodes, merged_nodes, merged_weight, unmerged_weight, magnitude }
    }

    /// The view of `nodes`, sorted, holding `observations`: RedisBloom's `td_compress`, merging
    /// finer ([`MERGE_SCALE`]).
    fn compressing(mut nodes: Vec<Centroid>, observations: i64, compression: u64) -> View {
        match merge_neighbours(&mut nodes, observations, compression, MERGE_SCALE) {
            Some(merged_weight) => {
                let merged_nodes = nodes.len();
                View::new(nodes, merged_nodes, merged_weight, 0)
            }
            None => View::new(nodes, 0, 0, observations),
        }
    }

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

/// `Memory usage` and MEMORY USAGE for room for `nodes`.
pub(super) fn memory_for(nodes: usize) -> usize {
    nodes.saturating_mul(NODE_BYTES).saturating_add(HEADER_BYTES)
}

/// An empty vector with room for `len` elements, or an error instead of an abort.
pub(super) fn try_vec<T>(len: usize) -> Result<Vec<T>, AllocationFailed> {
    let mut vec = Vec::new();
    vec.try_reserve_exact(len).map_err(|_| AllocationFailed)?;
    Ok(vec)
}

impl TDigest {
    /// An empty digest (TDIGEST.CREATE), if its full node array would fit `max_bytes`. Nothing
    /// is allocated yet: the array grows as values come.
    pub fn new(compression: u64, max_bytes: usize) -> Result<TDigest, SizeError> {
        if compression == 0 {
            return Err(SizeError::Invalid);
        }
        let capacity = capacity_for(compression).ok_or(SizeError::TooLarge)?;
        if memory_for(capacity) > max_bytes {
            return Err(SizeError::TooLarge);
        }
        Ok(TDigest::from_parts(compression, capacity, f64::MAX, -f64::MAX, Nodes::new(), 0, 0))
    }

    pub(super) fn from_parts(
        compression: u64,
        capacity: usize,
        min: f64,
        max: f64,
        nodes: Nodes,
        observations: i64,
        total_compressions: i64,
    ) -> TDigest {
        TDigest {
            compression,
            capacity,
            min,
            max,
            nodes,
            observations,
            total_compressions,
            view: OnceCell::new(),
        }
    }

    /// Empties the digest (TDIGEST.RESET); the compression and capacity stay, the node array
    /// goes.
    pub fn reset(&mut self) {
        *self = TDigest::from_parts(self.compression, self.capacity, f64::MAX, -f64::MAX, Nodes::new(), 0, 0);
    }

    /// Adds each value once (TDIGEST.ADD), in order, compressing whenever the node array
    /// fills, as RedisBloom does; or, when a value is not finite, the observations would
    /// overflow, or there is no memory, changes nothing.
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
        self.observations.checked_add(count).ok_or(AddError::Overflow)?;
        let len = self.nodes.len() + values.len();
        if len < self.capacity {
            // Every value lands in the array without a compression, in room made first:
            // nothing can fail after this.
            self.nodes.reserve_for(len, self.capacity).map_err(|_| AddError::OutOfMemory)?;
            return self.add_all(values);
        }
        let mut copy = self.try_copy().map_err(|_| AddError::OutOfMemory)?;
        copy.add_all(values)?;
        *self = copy;
        Ok(())
    }

    fn add_all(&mut self, values: &[f64]) -> Result<(), AddError> {
        for &value in values {
            self.add_node(value, 1).map_err(|error| match error {
                AddNodeError::OutOfMemory => AddError::OutOfMemory,
                AddNodeError::Overflow | AddNodeError::Full => AddError::Overflow,
            })?;
        }
        Ok(())
    }

    /// Merges digests into a new one (TDIGEST.MERGE): `destination`, when it exists and
    /// `OVERRIDE` was not given, then each source in turn, each as RedisBloom's `td_merge`
    /// does: the digest so far is compressed, then every node of the source's view is added
    /// as one weighted node. A source listed twice (or the destination listed as a source) is
    /// merged twice, as in RedisBloom.
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
        // RedisBloom's `td_compress` does nothing when nothing was added since the last one.
        let mut added = false;
        for source in destination.into_iter().chain(sources.iter().copied()) {
            if added {
                merged.compress();
            }
            let view = source.view().map_err(|_| MergeError::OutOfMemory)?;
            for node in &view.nodes {
                merged.add_node(node.mean, node.weight).map_err(|error| match error {
                    AddNodeError::OutOfMemory => MergeError::OutOfMemory,
                    AddNodeError::Overflow | AddNodeError::Full => MergeError::Overflow,
                })?;
                added = true;
            }
        }
        Ok(merged)
    }

    /// RedisBloom's `td_add`: compress when the array is one short of full, then add the
    /// node.
    pub(super) fn add_node(&mut self, mean: f64, weight: i64) -> Result<(), AddNodeError> {
        if self.nodes.len() + 1 >= self.capacity {
            self.compress();
        }
        if self.nodes.len() >= self.capacity {
            return Err(AddNodeError::Full);
        }
        let observations = self.observations.checked_add(weight).ok_or(AddNodeError::Overflow)?;
        self.nodes.push(Centroid { mean, weight }, self.capacity).map_err(|_| AddNodeError::OutOfMemory)?;
        self.view.take();
        if mean < self.min {
            self.min = mean;
        }
        if mean > self.max {
            self.max = mean;
        }
        self.observations = observations;
        Ok(())
    }

    /// Merges the nodes into centroids, as RedisBloom's `td_compress` does when its array
    /// fills but finer ([`MERGE_SCALE`]): a write, which every digest holding the same nodes
    /// does alike. Reads never run it; a caller may, as a read of RedisBloom's would.
    ///
    /// Where the finer merge leaves the array without room for the next node (a compression of
    /// 1 or 2 holding billions of observations), the centroids are merged again at
    /// RedisBloom's scale, so that the digest takes as many observations as RedisBloom's before
    /// its array is full for good.
    pub fn compress(&mut self) {
        if self.nodes.len() == 0 {
            return;
        }
        self.view.take();
        let (observations, compression, capacity) = (self.observations, self.compression, self.capacity);
        let merged = self.nodes.rewrite_sorted(|nodes| {
            let merged = merge_neighbours(nodes, observations, compression, MERGE_SCALE).is_some();
            if merged && nodes.len() + 1 >= capacity {
                merge_neighbours(nodes, observations, compression, 1.0);
            }
            merged
        });
        if merged {
            self.total_compressions = self.total_compressions.saturating_add(1);
        }
        self.nodes.fit(self.capacity);
    }

    /// The digest compressed, as every read sees it: made from the nodes on the first read
    /// after a write, then kept.
    pub(super) fn view(&self) -> Result<&View, AllocationFailed> {
        if let Some(view) = self.view.get() {
            return Ok(view);
        }
        let sorted = self.nodes.sorted();
        let mut nodes = try_vec(sorted.len())?;
        nodes.extend_from_slice(&sorted);
        drop(sorted);
        let view = View::compressing(nodes, self.observations, self.compression);
        Ok(self.view.get_or_init(|| view))
    }

    /// A digest for reads only, of `centroids` (sorted by mean, a compression already: no two
    /// neighbours would merge) holding `observations` between `min` and `max`: they are its
    /// view, and it keeps no nodes of its own (what a windowed digest's reads answer from,
    /// cut from its generations). Of one observation or none, its view is what a compression
    /// makes of them, as for any digest.
    pub(super) fn read_only(
        compression: u64,
        capacity: usize,
        [min, max]: [f64; 2],
        centroids: Vec<Centroid>,
        observations: i64,
        total_compressions: i64,
    ) -> TDigest {
        let digest = TDigest::from_parts(
            compression,
            capacity,
            min,
            max,
            Nodes::new(),
            observations,
            total_compressions,
        );
        let view = if observations > 1 {
            // As a compression reports it: the centroids' own sum where the total lost some.
            let centroids_weight = centroids.iter().fold(0i64, |sum, node| sum.saturating_add(node.weight));
            let merged_nodes = centroids.len();
            View::new(centroids, merged_nodes, observations.max(centroids_weight), 0)
        } else {
            View::compressing(centroids, observations, compression)
        };
        let _ = digest.view.set(view);
        digest
    }

    /// A copy, with the schedule's room for its nodes.
    pub(super) fn try_copy(&self) -> Result<TDigest, AllocationFailed> {
        Ok(TDigest::from_parts(
            self.compression,
            self.capacity,
            self.min,
            self.max,
            self.nodes.try_copy(self.capacity)?,
            self.observations,
            self.total_compressions,
        ))
    }

    /// The compression it was created with.
    pub fn compression(&self) -> u64 {
        self.compression
    }

    /// Observations added (RedisBloom's `td_size`).
    pub fn observations(&self) -> i64 {
        self.observations
    }

    /// The smallest value added (TDIGEST.MIN), NaN when there is none.
    pub fn min(&self) -> f64 {
        if self.observations > 0 {
            self.min
        } else {
            f64::NAN
        }
    }

    /// The largest value added (TDIGEST.MAX), NaN when there is none.
    pub fn max(&self) -> f64 {
        if self.observations > 0 {
            self.max
        } else {
            f64::NAN
        }
    }

    /// The bytes of the node array: its room on the schedule, a function of its length, so
    /// that master, replica and a restart report the same.
    pub(super) fn node_bytes(&self) -> usize {
        memory_for(room_for(self.nodes.len(), self.capacity))
    }

    /// TDIGEST.INFO's fields; the view's, which a read may have to make first.
    pub fn info(&self) -> Result<TDigestInfo, AllocationFailed> {
        let view = self.view()?;
        Ok(TDigestInfo {
            compression: self.compression,
            capacity: self.capacity,
            merged_nodes: view.merged_nodes,
            unmerged_nodes: view.nodes.len() - view.merged_nodes,
            merged_weight: view.merged_weight,
            unmerged_weight: view.unmerged_weight,
            observations: self.observations,
            total_compressions: self.total_compressions,
            memory_usage: self.node_bytes(),
        })
    }
}

impl std::fmt::Debug for TDigest {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("TDigest")
            .field("compression", &self.compression)
            .field("nodes", &self.nodes.len())
            .field("observations", &self.observations)
            .field("total_compressions", &self.total_compressions)
            .finish_non_exhaustive()
    }
}

/// RedisBloom's `td_compress` after its sort, on sorted nodes holding `total` observations,
/// at `scale` times the compression ([`MERGE_SCALE`], or 1 for RedisBloom's own merge): unless
/// `total` is 1 or less (where RedisBloom stops after the sort), merges neighbours, leaves the
/// centroids, and answers their weight.
fn merge_neighbours(nodes: &mut Vec<Centroid>, total: i64, compression: u64, scale: f64) -> Option<i64> {
    // RedisBloom also checks here for weights that overflow a double, which i64 weights
    // cannot, and for an infinite normalizer, which a total above 1 rules out.
    let total = total as f64;
    if total <= 1.0 {
        return None;
    }
    let normalizer = scale * compression as f64 / (2.0 * PI * total * total.ln());
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
    nodes.truncate(current + 1);
    // `total` is a double, exact to 2^53 only; the centroids' own sum keeps the record whole
    // past it (a save must load back).
    let centroids_weight = nodes.iter().fold(0i64, |sum, node| sum.saturating_add(node.weight));
    Some((total as i64).max(centroids_weight))
}

/// The mean of `into` once `node` is merged into it, `weight` the two weights' sum:
/// RedisBloom's `mean + (node.mean - mean) * node.weight / weight`, kept between the two
/// means, unless that overflows (means far apart at the ends of the doubles), where the same
/// mean is taken as a convex combination, which cannot. Two nodes of no weight keep the first
/// one's mean (RedisBloom makes it NaN); a node of some weight merged into one of none keeps
/// its own. So a weighted mean never leaves the weighted means it came from: RedisBloom's form
/// may round past `node.mean` by a unit in the last place (into a node of no weight, whose
/// mean may lie anywhere), and a mean that left its digest's bounds so could make a record
/// that its own load refuses.
fn merged_mean(into: Centroid, node: Centroid, weight: i64) -> f64 {
    if into.weight == 0 && node.weight > 0 {
        return node.mean;
    }
    let (low, high) = (into.mean.min(node.mean), into.mean.max(node.mean));
    let mean = into.mean + (node.mean - into.mean) * node.weight as f64 / weight as f64;
    if mean.is_finite() {
        return if mean < low {
            low
        } else if mean > high {
            high
        } else {
            mean
        };
    }
    if weight == 0 {
        return into.mean;
    }
    let share = node.weight as f64 / weight as f64;
    let mean = into.mean * (1.0 - share) + node.mean * share;
    mean.clamp(into.mean.min(node.mean), into.mean.max(node.mean))
}
