//! redbloom's data types in plain Rust, with nothing of Redis: their sizing, hashing, layout,
//! operations and encodings. The module (the `redbloom` crate) only translates commands and
//! callbacks into calls on these types; a Rust program can also build a filter here and hand it
//! to a server with `BF.LOADCHUNK` or `CF.LOADCHUNK`, the chunks SCANDUMP produces.
//!
//! - [`bloom`]: the Bloom filter (BF.*), in this module's blocked layout or RedisBloom's, and
//!   in [`bloom::window`] the windowed filter that forgets (`WINDOW`, type `rbBF-wind`), whose
//!   generations are such filters;
//! - [`cuckoo`]: the cuckoo filter (CF.*), in RedisBloom's layout, and with wider fingerprints;
//! - [`count_min`], [`top_k`], [`t_digest`]: RedisBloom's three sketches (CMS.*, TOPK.*,
//!   TDIGEST.*), answer for answer, with the RDB records RedisBloom writes, and in
//!   [`top_k::window`] the windowed Top-K (`WINDOW`, type `rbTOPKwnd`), the heavy hitters of the
//!   last window;
//! - [`bytes`]: the fallibly allocated arrays that filters, Count-Min and Top-K keep their
//!   bits, slots and counters in, and the allocation failure every type answers;
//! - [`decode`]: what every decoder shares: its error, readers that check every field, and the
//!   [`Persistent`](decode::Persistent) trait of the types saved as one RDB record (the
//!   sketches and the windowed filter);
//! - [`dump_payload`](mod@dump_payload): such a record as the DUMP payload RESTORE takes, which
//!   the AOF rewrite of those types writes;
//! - [`murmur`]: RedisBloom's hashes (MurmurHash2 and MurmurHash64A), which its Bloom format,
//!   cuckoo filters, Count-Min and Top-K use.

pub mod bloom;
pub mod bytes;
pub mod count_min;
pub mod cuckoo;
pub mod decode;
pub mod dump_payload;
pub mod murmur;
pub mod t_digest;
pub mod top_k;
pub mod window;
