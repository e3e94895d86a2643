//! The t-digest (TDIGEST.*), RedisBloom 2.8.2's merging t-digest, answer for answer: the same
//! node array (merged centroids in front, a buffer of unmerged ones behind, compressed when the
//! array is full), the same sort and merge of the buffer, the same scale function, the same
//! interpolation in every query, and the same RDB record. Nothing here knows about Redis.
//!
//! Two deliberate differences from RedisBloom:
//!
//! - Reads change nothing. RedisBloom's queries (and its RDB save, and TDIGEST.MERGE on its
//!   sources) compress the buffer into the merged centroids of the stored digest, so that the
//!   same writes give different digests on a server that was read and on one that was not.
//!   Here a query computes on a compressed copy when the buffer is not empty, which is exactly
//!   the digest RedisBloom would have answered from; the stored digest changes only on writes.
//! - Values stay finite. RedisBloom accepts any finite value, and then overflows: merging
//!   `1e308` into a centroid at `-1e308` makes an infinite mean, the next merge a NaN, and
//!   from then on quantiles answer NaN. Here the arithmetic that would overflow is redone in
//!   a form that cannot (weighted means as convex combinations, queries on values scaled by a
//!   power of two), so answers are RedisBloom's to the bit whenever RedisBloom's are finite.
//!
//! - `sort`: RedisBloom's quicksort, whose order among equal means decides which centroids
//!   merge.
//! - `digest`: the digest, its writes (ADD, RESET, MERGE) and its compression ([`TDigest`]).
//! - `reads`: every query, on the merged centroids.
//! - `encoding`: the RDB record (the [`Persistent`] impl).
//!
//! [`Persistent`]: crate::decode::Persistent

mod centroid;
mod digest;
mod encoding;
mod reads;
mod sort;
#[cfg(test)]
mod tests;

pub use digest::{
    AddError, MergeError, SizeError, TDigest, TDigestInfo, DEFAULT_COMPRESSION, MAX_COMPRESSION,
};
