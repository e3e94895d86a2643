//! The data types saved as one RDB record through the core's [`Persistent`] trait (the
//! sketches, the windowed Bloom filter): one generic set of callbacks, and what makes such a
//! type a stored value. A type states its name, kind and metrics once, in its [`RecordType`]
//! impl; its `RedisType` is [`record_type`] of it.
//!
//! - RDB save and load go through the checked readers of `datatype`.
//! - The AOF gets `RESTORE key 0 payload`, the payload DUMP would give (or, for a value an
//!   older encoding version describes, that version's: `Persistent::save_portable`): what
//!   RedisBloom writes for its types, so an AOF of either module replays on the other.
//! - The digest covers the whole record, so two values digest alike exactly when a save
//!   would write the same bytes (RedisBloom answers one constant for every key).

use super::datatype::{
    describe, guarded, load_budget, loaded, stored_value_methods, with_unlink, RdbReader, StoredValue,
};
use super::metrics::{Footprint, Measured, Metrics};
use redbloom_core::decode::{Persistent, RdbSink, Record};
use redbloom_core::dump_payload::dump_payload;
use redis_module::native_types::RedisType;
use redis_module::raw;
use std::ffi::{c_int, c_void};
use std::ptr;

/// A type whose values Redis stores as one record each.
pub trait RecordType: Persistent {
    /// The data type's name: nine characters (RedisBloom's, for RedisBloom's types).
    const TYPE_NAME: &'static str;
    /// What the log calls a value.
    const KIND: &'static str;
    /// The type as registered: `record_type::<Self>()` in a static of the type's own.
    fn redis_type() -> &'static RedisType;
    /// The `INFO bf` fields its values count in.
    fn metrics() -> &'static Metrics;
    /// What a value contributes to the gauges: its bytes, unless it counts more.
    fn footprint(&self) -> Footprint {
        Footprint { bytes: self.memory_bytes() as i64, ..Footprint::default() }
    }
    /// Called once a value of this type was loaded from `rdb` (a restart, a full sync, a
    /// RESTORE): a value that changes with the clock notes its key for its timer.
    fn after_load(_rdb: *mut raw::RedisModuleIO) {}
    /// Called when a value of this type leaves its key (deleted, expired, evicted, replaced,
    /// renamed or moved away), with the key's name in `ctx`: a value that changes with the
    /// clock has its key forgotten by its timer.
    fn unlinked(_ctx: *mut raw::RedisModuleKeyOptCtx) {}
}

/// The data type of record type `V`, for its static.
pub const fn record_type<V: RecordType>() -> RedisType {
    RedisType::new(
        V::TYPE_NAME,
        V::ENCODING_VERSION,
        with_unlink(
            stored_value_methods::<V>(
                Some(rdb_load::<V>),
                Some(rdb_save::<V>),
                Some(aof_rewrite::<V>),
                Some(mem_usage::<V>),
                Some(digest::<V>),
            ),
            Some(unlinked::<V>),
        ),
    )
}

extern "C" fn unlinked<V: RecordType>(ctx: *mut raw::RedisModuleKeyOptCtx, _value: *const c_void) {
    guarded(format_args!("{} unlink", V::KIND), (), || V::unlinked(ctx));
}

impl<V: RecordType> Measured for V {
    fn metrics() -> &'static Metrics {
        V::metrics()
    }

    fn footprint(&self) -> Footprint {
        RecordType::footprint(self)
    }
}

impl<V: RecordType> StoredValue for V {
    const KIND: &'static str = V::KIND;

    fn data_types() -> impl Iterator<Item = &'static RedisType> {
        std::iter::once(V::redis_type())
    }

    fn data_type(&self) -> &'static RedisType {
        V::redis_type()
    }

    fn freed_bytes(&self) -> usize {
        self.memory_bytes()
    }

    fn try_copy(&self) -> Option<V> {
        self.try_clone()
    }
}

/// # Safety
/// `value` is a pointer this module stored for type `V`: a live `Box<V>`.
unsafe fn record_ref<'a, V>(value: *const c_void) -> &'a V {
    unsafe { &*value.cast::<V>() }
}

extern "C" fn rdb_load<V: RecordType>(rdb: *mut raw::RedisModuleIO, encoding_version: c_int) -> *mut c_void {
    guarded(format_args!("{} rdb_load", V::KIND), ptr::null_mut(), || {
        let value = V::load_rdb(encoding_version, &mut RdbReader(rdb), load_budget(rdb));
        if value.is_ok() {
            V::after_load(rdb);
        }
        loaded(
            value.map_err(|error| {
                describe(error, &format!("{}, encoding version {encoding_version}", V::KIND))
            }),
        )
    })
}

/// Writes each value of a record with the RDB calls.
struct RdbWriter(*mut raw::RedisModuleIO);

// SAFETY (all four): a live IO handle for the callback; the functions were set at load.
impl RdbSink for RdbWriter {
    fn unsigned(&mut self, value: u64) {
        unsafe { raw::RedisModule_SaveUnsigned.map(|f| f(self.0, value)) };
    }
    fn signed(&mut self, value: i64) {
        unsafe { raw::RedisModule_SaveSigned.map(|f| f(self.0, value)) };
    }
    fn double(&mut self, value: f64) {
        unsafe { raw::RedisModule_SaveDouble.map(|f| f(self.0, value)) };
    }
    fn bytes(&mut self, value: &[u8]) {
        unsafe { raw::RedisModule_SaveStringBuffer.map(|f| f(self.0, value.as_ptr().cast(), value.len())) };
    }
}

extern "C" fn rdb_save<V: RecordType>(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    guarded(format_args!("{} rdb_save", V::KIND), (), || {
        // SAFETY: Redis hands back a value of this type.
        unsafe { record_ref::<V>(value) }.save_rdb(&mut RdbWriter(rdb));
    });
}

extern "C" fn aof_rewrite<V: RecordType>(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    guarded(format_args!("{} aof_rewrite", V::KIND), (), || {
        let mut record = Record::default();
        // SAFETY: as in rdb_save.
        let version = unsafe { record_ref::<V>(value) }.save_portable(&mut record);
        let Some(payload) = dump_payload(V::TYPE_NAME, version, &record) else {
            return;
        };
        // SAFETY: a live AOF handle and key for the rewrite callback; "slb" takes the key, an
        // integer (no TTL: the rewrite writes a key's expiry after it) and a buffer.
        unsafe {
            if let Some(emit) = raw::RedisModule_EmitAOF {
                emit(aof, c"RESTORE".as_ptr(), c"slb".as_ptr(), key, 0i64, payload.as_ptr(), payload.len());
            }
        }
    });
}

extern "C" fn mem_usage<V: RecordType>(value: *const c_void) -> usize {
    // SAFETY: as in rdb_save.
    guarded(format_args!("{} mem_usage", V::KIND), 0, || unsafe { record_ref::<V>(value) }.memory_bytes())
}

/// Feeds each value of a record to a digest, tagged by kind so that no two records of
/// different values digest alike.
struct DigestWriter(*mut raw::RedisModuleDigest);

impl DigestWriter {
    fn add(&mut self, tag: u8, bytes: &[u8]) {
        // SAFETY: a live digest handle for the callback.
        unsafe {
            if let Some(add) = raw::RedisModule_DigestAddStringBuffer {
                add(self.0, [tag].as_ptr().cast_mut().cast(), 1);
                add(self.0, bytes.as_ptr().cast_mut().cast(), bytes.len());
            }
        }
    }
}

impl RdbSink for DigestWriter {
    fn unsigned(&mut self, value: u64) {
        self.add(b'u', &value.to_le_bytes());
    }
    fn signed(&mut self, value: i64) {
        self.add(b's', &value.to_le_bytes());
    }
    fn double(&mut self, value: f64) {
        self.add(b'd', &value.to_le_bytes());
    }
    fn bytes(&mut self, value: &[u8]) {
        self.add(b'b', value);
    }
}

extern "C" fn digest<V: RecordType>(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    guarded(format_args!("{} digest", V::KIND), (), || {
        // SAFETY: as in rdb_save.
        unsafe { record_ref::<V>(value) }.save_rdb(&mut DigestWriter(md));
        // SAFETY: a live digest handle.
        unsafe { raw::RedisModule_DigestEndSequence.map(|end| end(md)) };
    });
}
