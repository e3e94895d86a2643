//! RedisBloom's own filter format, kept exactly: filters taken over from RedisBloom (its
//! RDB, AOF and SCANDUMP data) and filters created in its format answer, grow and dump as they
//! would under RedisBloom, so that they can be handed back to it at any time.
//!
//! - [`link`]: one classic sub-filter, its sizing and the checks of a stored description;
//! - [`chain`]: the scalable chain, grown as RedisBloom grows it;
//! - [`encoding`]: the dump header and the RDB record, read and written.

pub mod chain;
pub mod encoding;
pub mod link;

pub use chain::Chain;
