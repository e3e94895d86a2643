//! The `MBbloom--` data type: how Redis saves, loads, rewrites, digests, measures, copies and
//! frees a filter. Every callback runs inside a panic guard, and every read is checked: a
//! corrupt RDB file or RESTORE payload is refused, never trusted.
//!
//! Values of RedisBloom's encoding versions (0 to 4) are read as RedisBloom wrote them and
//! kept in its format; every value is saved in this module's version, a header and the bit
//! arrays in either format (see `redbloom_core::bloom::format`).

use crate::shared::datatype::{
    describe, digest_pieces, emit_loadchunks, guarded, load_budget, loaded, stored_value_methods, RdbBuffer,
    RdbReader, StoredValue,
};
use crate::shared::metrics::{Footprint, Measured, Metrics, Names};
use redbloom_core::bloom::redisbloom::encoding::{self as redisbloom_encoding, NEWEST_RDB_VERSION};
use redbloom_core::bloom::Filter;
use redbloom_core::decode::{DecodeError, RdbSource};
use redis_module::native_types::RedisType;
use redis_module::raw;
use std::ffi::{c_int, c_void};
use std::ptr;

/// RedisBloom's encoding versions are 0 to 4, and this module reads them all. Ours are
/// higher, so that RedisBloom refuses what this module saved instead of misreading it:
/// - 101 (written): the header, then each link's bits as one string, kept as read on load;
/// - 100 (read): the header, then the bits in chunks of at most 16 MiB, copied on load.
pub const ENCODING_VERSION: i32 = 101;
const CHUNKED_ENCODING_VERSION: i32 = 100;

pub static BLOOM_TYPE: RedisType = RedisType::new(
    "MBbloom--",
    ENCODING_VERSION,
    stored_value_methods::<Filter>(
        Some(rdb_load),
        Some(rdb_save),
        Some(aof_rewrite),
        Some(mem_usage),
        Some(digest),
    ),
);

/// # Safety
/// `value` is a pointer this module stored: a live `Box<Filter>`.
unsafe fn filter_ref<'a>(value: *const c_void) -> &'a Filter {
    unsafe { &*value.cast::<Filter>() }
}

extern "C" fn rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    guarded("rdb_save", (), || {
        // SAFETY: Redis hands back a value of this type and a live IO handle.
        let filter = unsafe { filter_ref(value) };
        let Some(save) = (unsafe { raw::RedisModule_SaveStringBuffer }) else {
            return;
        };
        let header = filter.encode_header();
        unsafe { save(rdb, header.as_ptr().cast(), header.len()) };
        for link in filter.link_bytes() {
            unsafe { save(rdb, link.as_ptr().cast(), link.len()) };
        }
    });
}

extern "C" fn rdb_load(rdb: *mut raw::RedisModuleIO, encoding_version: c_int) -> *mut c_void {
    guarded("rdb_load", ptr::null_mut(), || {
        let filter = if encoding_version == ENCODING_VERSION {
            load_filter(rdb)
        } else if encoding_version == CHUNKED_ENCODING_VERSION {
            load_chunked_filter(rdb)
        } else if (0..=NEWEST_RDB_VERSION).contains(&encoding_version) {
            redisbloom_encoding::load_rdb(encoding_version, &mut RdbReader(rdb), load_budget(rdb))
                .map(Filter::RedisBloom)
                .map_err(|error| {
                    describe(error, &format!("RedisBloom's encoding version {encoding_version}"))
                })
        } else {
            Err(format!(
                "encoding version {encoding_version} is neither this module's ({ENCODING_VERSION}) nor RedisBloom's \
                 (0 to {NEWEST_RDB_VERSION}): was it saved by a newer module?"
            ))
        };
        loaded(filter)
    })
}

/// A header, then each link's bits as one string, which becomes the link's bits as read.
fn load_filter(rdb: *mut raw::RedisModuleIO) -> Result<Filter, String> {
    let header = RdbBuffer::load(rdb)?;
    let mut reader = RdbReader(rdb);
    let bits = |len: u64| {
        let bytes = reader.bytes()?;
        if bytes.len() as u64 != len {
            return Err(DecodeError::Malformed("a link's length does not match its header"));
        }
        Ok(bytes)
    };
    Filter::decode_header_with(header.bytes(), load_budget(rdb), bits)
        .map_err(|error| describe(error, "header"))
}

fn load_chunked_filter(rdb: *mut raw::RedisModuleIO) -> Result<Filter, String> {
    let header = RdbBuffer::load(rdb)?;
    let mut filter =
        Filter::decode_header(header.bytes(), load_budget(rdb)).map_err(|error| describe(error, "header"))?;
    for chunk in filter.chunks_mut() {
        let buffer = RdbBuffer::load(rdb)?;
        if buffer.bytes().len() != chunk.len() {
            return Err("a chunk's length does not match its header".to_string());
        }
        chunk.copy_from_slice(buffer.bytes());
    }
    Ok(filter)
}

/// The AOF gets a BF.LOADCHUNK per piece: the header, then chunks of at most 16 MiB, so no
/// command approaches proto-max-bulk-len whatever the filter's size. For a filter in
/// RedisBloom's format these are exactly the commands RedisBloom writes, which it replays.
extern "C" fn aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    guarded("aof_rewrite", (), || {
        // SAFETY: as in rdb_save.
        let filter = unsafe { filter_ref(value) };
        let header = filter.encode_header();
        let chunks = filter.chunks().map(|(end, chunk)| (end + 1, chunk));
        emit_loadchunks(aof, key, c"BF.LOADCHUNK", std::iter::once((1, &header[..])).chain(chunks));
    });
}

extern "C" fn mem_usage(value: *const c_void) -> usize {
    // SAFETY: as in rdb_save.
    guarded("mem_usage", 0, || unsafe { filter_ref(value) }.memory_bytes())
}

extern "C" fn digest(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    guarded("digest", (), || {
        // SAFETY: as in rdb_save.
        let filter = unsafe { filter_ref(value) };
        let header = filter.encode_header();
        digest_pieces(md, std::iter::once(&header[..]).chain(filter.chunks().map(|(_, chunk)| chunk)));
    });
}

/// The `INFO bf` fields of Bloom filters.
pub static METRICS: Metrics = Metrics::new(Names {
    values: c"filters",
    bytes: c"bytes",
    items: Some(c"items"),
    sub_filters: Some(c"sub_filters"),
    timed_keys: Some(c"window_timer_keys"),
    adds: c"adds",
    deletes: None,
    lookups: c"lookups",
    lookups_found: Some(c"lookups_found"),
    full_errors: Some(c"full_filter_errors"),
    refused_creations: c"refused_creations",
});

impl Measured for Filter {
    fn metrics() -> &'static Metrics {
        &METRICS
    }

    fn footprint(&self) -> Footprint {
        Footprint {
            bytes: self.memory_bytes() as i64,
            items: self.items() as i64,
            sub_filters: self.link_count() as i64,
        }
    }
}

impl StoredValue for Filter {
    const KIND: &'static str = "Bloom filter";

    fn data_types() -> impl Iterator<Item = &'static RedisType> {
        std::iter::once(&BLOOM_TYPE)
    }

    fn data_type(&self) -> &'static RedisType {
        &BLOOM_TYPE
    }

    fn freed_bytes(&self) -> usize {
        self.bits_bytes()
    }

    fn try_copy(&self) -> Option<Filter> {
        self.try_clone().ok()
    }
}
