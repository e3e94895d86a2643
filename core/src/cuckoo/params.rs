//! What a cuckoo filter is made with and may grow to: its parameters, their defaults and
//! bounds (RedisBloom's), and the outcomes of making and growing one.

use super::fingerprint::Width;

/// Created by CF.ADD, CF.ADDNX, CF.INSERT and CF.INSERTNX when the key is missing.
pub const DEFAULT_CAPACITY: u64 = 1024;
/// Slots per bucket when `BUCKETSIZE` is not given.
pub const DEFAULT_BUCKET_SIZE: u16 = 2;
/// Eviction steps an insert takes before it grows the filter or gives up, when
/// `MAXITERATIONS` is not given.
pub const DEFAULT_MAX_ITERATIONS: u16 = 20;
/// Growth factor of each next sub-filter's buckets when `EXPANSION` is not given.
pub const DEFAULT_EXPANSION: u16 = 1;
/// Largest `BUCKETSIZE`.
pub const MAX_BUCKET_SIZE: u16 = 255;
/// Largest `EXPANSION`, itself a power of two.
pub const MAX_EXPANSION: u16 = 32768;
/// RedisBloom's default `CF_MAX_EXPANSIONS`: a filter with this many sub-filters takes no
/// more items.
pub const DEFAULT_MAX_SUB_FILTERS: usize = 32;
/// The most sub-filters a stored filter (a header, an RDB record) may have, and the highest
/// limit a server may set. Commands never make more than the limit; a crafted header with
/// tens of thousands of tiny sub-filters would make every lookup read them all and every
/// compaction take seconds.
pub const MAX_SUB_FILTERS: usize = 1024;
/// Where RedisBloom stops asking for memory: bucket counts from 2^56 up are refused.
pub(super) const MAX_BUCKETS: u64 = 1 << 56;

/// Why a filter could not be made or grown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CuckooError {
    /// Larger than the memory budget, or than RedisBloom would ever allocate.
    TooLarge,
    /// The allocator had no memory for it.
    OutOfMemory,
}

/// What an insert may grow the filter to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of slots, over all sub-filters.
    pub max_bytes: usize,
    /// Number of sub-filters, the first one included.
    pub max_sub_filters: usize,
}

/// What an insert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    /// The fingerprint is stored, and counted.
    Added,
    /// No room, and the filter may not grow (expansion 0, the sub-filter limit, or the memory
    /// budget): nothing changed.
    NoRoom,
}

/// The parameters a filter is created with, as validated by the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooParams {
    /// Items the first sub-filter is for: it gets `capacity / bucket_size` buckets, rounded
    /// up to a power of two (at least one).
    pub capacity: u64,
    /// Slots per bucket, 1 to [`MAX_BUCKET_SIZE`].
    pub bucket_size: u16,
    /// Eviction steps an insert takes before it grows the filter or gives up.
    pub max_iterations: u16,
    /// As asked for: rounded up to a power of two on creation.
    pub expansion: u16,
    /// Bits of a fingerprint, and of a slot.
    pub width: Width,
}

impl Default for CuckooParams {
    fn default() -> CuckooParams {
        CuckooParams {
            capacity: DEFAULT_CAPACITY,
            bucket_size: DEFAULT_BUCKET_SIZE,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            expansion: DEFAULT_EXPANSION,
            width: Width::Eight,
        }
    }
}
