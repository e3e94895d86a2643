//! The Bloom filter, in this module's layout (cache-line blocks) or RedisBloom's, kept byte
//! for byte.
//!
//! - [`params`]: limits of what users may ask for, and sizing into a layout;
//! - [`hash`]: one xxh3-128 per item, turned into a block and bit positions;
//! - [`bits`]: the cache-line-blocked bit array;
//! - [`sub_filter`]: one fixed-size filter;
//! - [`chain`]: the scalable filter, a chain of sub-filters;
//! - [`encoding`]: the binary form used by RDB, AOF and SCANDUMP/LOADCHUNK;
//! - [`redisbloom`]: RedisBloom's own format, kept byte for byte;
//! - [`format`](mod@format): a filter in either format, and the dump protocol they share.

pub mod bits;
pub mod chain;
pub mod encoding;
pub mod format;
pub mod hash;
pub mod params;
pub mod redisbloom;
pub mod sub_filter;
pub mod window;

#[cfg(test)]
mod properties;

pub use chain::{BloomFilter, FilterError};
pub use format::{Filter, Format};
pub use hash::ItemHash;
