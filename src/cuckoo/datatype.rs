//! The cuckoo filter data types: how Redis saves, loads, rewrites, digests, measures, copies
//! and frees a cuckoo filter. As for `MBbloom--`, every callback runs inside a panic guard and
//! every read is checked.
//!
//! Filters of 8-bit fingerprints are RedisBloom's `MBbloomCF`, and their RDB record is
//! RedisBloom's too, written in its encoding version 4: an RDB holding them loads into
//! RedisBloom as into this module. Wider filters, which RedisBloom cannot hold, are a type of
//! their own, `rbCF-wide`: RedisBloom meeting one in an RDB or a RESTORE refuses it by its type
//! name ("no matching module type") instead of misreading it. Both types share every callback
//! but the RDB load.

use crate::shared::datatype::{
    describe, digest_pieces, emit_loadchunks, guarded, load_budget, loaded, stored_value_methods, RdbReader,
    StoredValue,
};
use crate::shared::metrics::{Footprint, Measured, Metrics, Names};
use redbloom_core::cuckoo::encoding::{NEWEST_REDISBLOOM_VERSION, WIDE_VERSION};
use redbloom_core::cuckoo::{CuckooFilter, SubFilter};
use redis_module::native_types::RedisType;
use redis_module::raw;
use std::ffi::{c_int, c_void};
use std::ptr;

pub static CUCKOO_TYPE: RedisType = RedisType::new("MBbloomCF", NEWEST_REDISBLOOM_VERSION, methods(rdb_load));

pub static WIDE_CUCKOO_TYPE: RedisType = RedisType::new("rbCF-wide", WIDE_VERSION, methods(wide_rdb_load));

/// Both types' callbacks, which differ in the RDB load only.
const fn methods(
    rdb_load: unsafe extern "C" fn(*mut raw::RedisModuleIO, c_int) -> *mut c_void,
) -> raw::RedisModuleTypeMethods {
    stored_value_methods::<CuckooFilter>(
        Some(rdb_load),
        Some(rdb_save),
        Some(aof_rewrite),
        Some(mem_usage),
        Some(digest),
    )
}

/// # Safety
/// `value` is a pointer this module stored: a live `Box<CuckooFilter>`.
unsafe fn cuckoo_ref<'a>(value: *const c_void) -> &'a CuckooFilter {
    unsafe { &*value.cast::<CuckooFilter>() }
}

extern "C" fn rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    guarded("cuckoo rdb_save", (), || {
        // SAFETY: Redis hands back a value of this type and a live IO handle.
        let filter = unsafe { cuckoo_ref(value) };
        let (Some(save_unsigned), Some(save_bytes)) =
            (unsafe { raw::RedisModule_SaveUnsigned }, unsafe { raw::RedisModule_SaveStringBuffer })
        else {
            return;
        };
        filter.save_rdb(
            |value| unsafe { save_unsigned(rdb, value) },
            |bytes| unsafe { save_bytes(rdb, bytes.as_ptr().cast(), bytes.len()) },
        );
    });
}

extern "C" fn rdb_load(rdb: *mut raw::RedisModuleIO, encoding_version: c_int) -> *mut c_void {
    guarded("cuckoo rdb_load", ptr::null_mut(), || {
        let filter = CuckooFilter::load_rdb(encoding_version, &mut RdbReader(rdb), load_budget(rdb));
        loaded(
            filter.map_err(|error| {
                describe(error, &format!("cuckoo filter, encoding version {encoding_version}"))
            }),
        )
    })
}

extern "C" fn wide_rdb_load(rdb: *mut raw::RedisModuleIO, encoding_version: c_int) -> *mut c_void {
    guarded("wide cuckoo rdb_load", ptr::null_mut(), || {
        let filter = CuckooFilter::load_wide_rdb(encoding_version, &mut RdbReader(rdb), load_budget(rdb));
        loaded(filter.map_err(|error| {
            describe(error, &format!("wide cuckoo filter, encoding version {encoding_version}"))
        }))
    })
}

/// The AOF gets CF.LOADCHUNK of the header, then one per SCANDUMP chunk (at most 16 MiB):
/// the commands RedisBloom writes, which it replays. Unlike SCANDUMP, this also carries an
/// empty filter.
extern "C" fn aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    guarded("cuckoo aof_rewrite", (), || {
        // SAFETY: as in rdb_save.
        let filter = unsafe { cuckoo_ref(value) };
        let header = filter.header();
        let chunks = std::iter::successors(filter.chunk(1), |&(next, _)| filter.chunk(next));
        emit_loadchunks(aof, key, c"CF.LOADCHUNK", std::iter::once((1, header.as_bytes())).chain(chunks));
    });
}

extern "C" fn mem_usage(value: *const c_void) -> usize {
    // SAFETY: as in rdb_save.
    guarded("cuckoo mem_usage", 0, || unsafe { cuckoo_ref(value) }.size() as usize)
}

extern "C" fn digest(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    guarded("cuckoo digest", (), || {
        // SAFETY: as in rdb_save.
        let filter = unsafe { cuckoo_ref(value) };
        let header = filter.header();
        digest_pieces(
            md,
            std::iter::once(header.as_bytes()).chain(filter.sub_filters().iter().map(SubFilter::bytes)),
        );
    });
}

/// The `INFO bf` fields of cuckoo filters.
pub static METRICS: Metrics = Metrics::new(Names {
    values: c"cf_filters",
    bytes: c"cf_bytes",
    items: Some(c"cf_items"),
    sub_filters: Some(c"cf_sub_filters"),
    timed_keys: None,
    adds: c"cf_adds",
    deletes: Some(c"cf_deletes"),
    lookups: c"cf_lookups",
    lookups_found: Some(c"cf_lookups_found"),
    full_errors: Some(c"cf_full_filter_errors"),
    refused_creations: c"cf_refused_creations",
});

impl Measured for CuckooFilter {
    fn metrics() -> &'static Metrics {
        &METRICS
    }

    fn footprint(&self) -> Footprint {
        Footprint {
            bytes: self.size() as i64,
            items: self.items() as i64,
            sub_filters: self.sub_filters().len() as i64,
        }
    }
}

impl StoredValue for CuckooFilter {
    const KIND: &'static str = "cuckoo filter";

    /// Both types hold a `CuckooFilter`; which one a filter gets depends on its width alone.
    fn data_types() -> impl Iterator<Item = &'static RedisType> {
        [&CUCKOO_TYPE, &WIDE_CUCKOO_TYPE].into_iter()
    }

    /// RedisBloom's type when RedisBloom can hold the filter.
    fn data_type(&self) -> &'static RedisType {
        if self.width().is_redisbloom() {
            &CUCKOO_TYPE
        } else {
            &WIDE_CUCKOO_TYPE
        }
    }

    fn freed_bytes(&self) -> usize {
        self.data_bytes()
    }

    fn try_copy(&self) -> Option<CuckooFilter> {
        self.try_clone()
    }
}
