//! The cuckoo filter, in RedisBloom's layout and hashing, so that every filter RedisBloom
//! wrote keeps answering, counting and deleting its items here, byte for byte (the contract is
//! `docs/cf-commands.md`); and the same filter with wider fingerprints, for lower rates.
//! Nothing here knows about Redis.
//!
//! A filter is a chain of sub-filters. Each is `buckets` buckets (a power of two) of
//! `bucket_size` slots; a slot holds an item's fingerprint, or 0 when empty. An item may live
//! in either of two buckets of any sub-filter, so a lookup reads two buckets per sub-filter:
//! with one sub-filter, two cache lines at most when buckets of 1, 2, 4 or 8 slots (of any
//! width) do not straddle lines, as in the arrays this module allocates, which start on one.
//!
//! - [`fingerprint`]: the widths, an item's hash and fingerprint, and slots.
//! - [`encoding`]: the SCANDUMP header and chunks, and the RDB record.
//! - `params`: parameters, defaults and bounds ([`CuckooParams`], [`Limits`]).
//! - `sub_filter`: one array of buckets ([`SubFilter`]).
//! - `filter`: the chain, and every operation on it ([`CuckooFilter`]).

pub mod encoding;
mod filter;
pub mod fingerprint;
mod params;
mod sub_filter;
#[cfg(test)]
mod tests;

pub use filter::CuckooFilter;
pub use fingerprint::{CuckooHash, Width};
pub use params::{
    CuckooError, CuckooParams, Inserted, Limits, DEFAULT_BUCKET_SIZE, DEFAULT_CAPACITY, DEFAULT_EXPANSION,
    DEFAULT_MAX_ITERATIONS, DEFAULT_MAX_SUB_FILTERS, MAX_BUCKET_SIZE, MAX_EXPANSION, MAX_SUB_FILTERS,
};
pub use sub_filter::SubFilter;
