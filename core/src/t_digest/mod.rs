//! The t-digest (TDIGEST.*), RedisBloom 2.8.2's merging t-digest: the same node array
//! (centroids and a buffer of values, compressed when the array is full), the same merge of
//! sorted nodes, the same interpolation in every query, and RedisBloom's RDB record format.
//! Nothing here knows about Redis.
//!
//! Deliberate differences from RedisBloom:
//!
//! - Centroids are merged finer: as RedisBloom merges them at twice the compression
//!   (`digest::MERGE_SCALE`), in the same node array. The quantiles' mean rank
//!   error falls to about a third at the default compression, for a few more compressions;
//!   a digest whose values never merged answers as RedisBloom's, to the bit.
//! - Reads change nothing. RedisBloom's queries (and its RDB save, and TDIGEST.MERGE on its
//!   sources) compress the buffer into the merged centroids of the stored digest, so that the
//!   same writes give different digests on a server that was read and on one that was not.
//!   Here a query answers from a compression of every node (the view, kept until the next
//!   write), the digest RedisBloom answers from when nothing read it since its last
//!   compression, but for the finer merge; the stored digest changes only on writes.
//! - The stored digest is its set of nodes. RedisBloom's record has no room for buffered
//!   values, so this module saves every node as a centroid and sorts by a total order
//!   (`nodes::canonical`), under which a compression depends only on which nodes there are:
//!   a digest loaded from its record, on a replica or after a restart, compresses and answers
//!   as the one saved. Where RedisBloom's quicksort orders equal means of different weights
//!   otherwise, answers differ within the t-digest's accuracy.
//! - The node array grows as it fills (fallibly), rather than being allocated whole.
//! - Values stay finite. RedisBloom accepts any finite value, and then overflows: merging
//!   `1e308` into a centroid at `-1e308` makes an infinite mean, the next merge a NaN, and
//!   from then on quantiles answer NaN. Here the arithmetic that would overflow is redone in
//!   a form that cannot (weighted means as convex combinations, queries on values scaled by a
//!   power of two), to the bit what RedisBloom's arithmetic gives wherever it stays finite.
//!
//! - `nodes`: the node array, its order and its growth.
//! - `digest`: the digest, its writes (ADD, RESET, MERGE), its compression and its view
//!   ([`TDigest`]).
//! - `reads`: every query, on the view's centroids.
//! - `encoding`: the RDB record (the [`Persistent`] impl).
//! - `window`: the windowed digest (`WINDOW ms`), whose generations are plain
//!   digests of this module, and its own record.
//!
//! [`Persistent`]: crate::decode::Persistent

mod centroid;
mod digest;
mod encoding;
mod nodes;
#[cfg(test)]
mod rank_error;
mod reads;
#[cfg(test)]
mod tests;
mod window;

pub use digest::{
    AddError, MergeError, SizeError, TDigest, TDigestInfo, DEFAULT_COMPRESSION, MAX_COMPRESSION,
};
pub use window::merge::WindowMergeError;
pub use window::{WindowContents, WindowTDigest};
