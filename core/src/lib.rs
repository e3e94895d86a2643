//! redbloom's filters in plain Rust: sizing, hashing, layout and encoding, with nothing of
//! Redis. The module (the `redbloom` crate) only translates commands and callbacks into calls
//! on these types; a Rust program can also build a filter here and hand it to a server with
//! `BF.LOADCHUNK` or `CF.LOADCHUNK`, the chunks SCANDUMP produces.
//!
//! - [`bloom`]: the Bloom filter (BF.*), in this module's blocked layout or RedisBloom's;
//! - [`cuckoo`]: the cuckoo filter (CF.*), in RedisBloom's layout;
//! - [`bytes`]: the fallibly allocated arrays every filter keeps its bits in;
//! - [`decode`]: what every decoder shares: its error, and readers that check every field;
//! - [`murmur`]: RedisBloom's hashes, which both of its formats use.

pub mod bloom;
pub mod bytes;
pub mod count_min;
pub mod cuckoo;
pub mod decode;
pub mod dump_payload;
pub mod murmur;
pub mod t_digest;
pub mod top_k;
