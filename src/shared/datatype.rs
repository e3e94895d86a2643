//! What every data type's callbacks share: the methods struct Redis reads, the panic guard,
//! checked RDB reads, the memory budget of a load, AOF emission, digests, and the free,
//! `free_effort` and copy callbacks of any stored value. Each type's own `datatype.rs` holds
//! what differs: its encodings.

use super::config;
use super::metrics::{self, Measured};
use redbloom_core::bytes::ByteArray;
use redbloom_core::decode::{DecodeError, RdbSource};
use redis_module::native_types::RedisType;
use redis_module::raw;
use std::ffi::{c_int, c_void, CStr};
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};

/// Free a filter in the background when it holds more than this many bytes per unit of
/// effort reported; Redis frees lazily above an effort of 64, that is above 256 KiB.
const BYTES_PER_FREE_EFFORT: usize = 4096;

/// A type's callbacks as Redis reads them. Method version 3 is the first with `free_effort`
/// and copy (Redis 6.2); the later fields stay unset.
#[allow(clippy::too_many_arguments)]
pub const fn type_methods(
    rdb_load: raw::RedisModuleTypeLoadFunc,
    rdb_save: raw::RedisModuleTypeSaveFunc,
    aof_rewrite: raw::RedisModuleTypeRewriteFunc,
    mem_usage: raw::RedisModuleTypeMemUsageFunc,
    digest: raw::RedisModuleTypeDigestFunc,
    free: raw::RedisModuleTypeFreeFunc,
    free_effort: raw::RedisModuleTypeFreeEffortFunc,
    copy: raw::RedisModuleTypeCopyFunc,
) -> raw::RedisModuleTypeMethods {
    raw::RedisModuleTypeMethods {
        version: 3,
        rdb_load,
        rdb_save,
        aof_rewrite,
        mem_usage,
        digest,
        free,
        aux_load: None,
        aux_save: None,
        aux_save_triggers: 0,
        free_effort,
        unlink: None,
        copy,
        defrag: None,
        mem_usage2: None,
        free_effort2: None,
        unlink2: None,
        copy2: None,
        aux_save2: None,
    }
}

/// `methods` with a callback for a value leaving its key (`unlink2`, method version 4: Redis
/// 7.0), which gives the key's name.
pub const fn with_unlink(
    mut methods: raw::RedisModuleTypeMethods,
    unlink2: raw::RedisModuleTypeUnlinkFunc2,
) -> raw::RedisModuleTypeMethods {
    methods.version = 4;
    methods.unlink2 = unlink2;
    methods
}

/// The callbacks of a type whose values are `V`: its own for the encodings, and the shared
/// `free`, `free_effort` and `copy`.
pub const fn stored_value_methods<V: StoredValue>(
    rdb_load: raw::RedisModuleTypeLoadFunc,
    rdb_save: raw::RedisModuleTypeSaveFunc,
    aof_rewrite: raw::RedisModuleTypeRewriteFunc,
    mem_usage: raw::RedisModuleTypeMemUsageFunc,
    digest: raw::RedisModuleTypeDigestFunc,
) -> raw::RedisModuleTypeMethods {
    type_methods(
        rdb_load,
        rdb_save,
        aof_rewrite,
        mem_usage,
        digest,
        Some(free::<V>),
        Some(free_effort::<V>),
        Some(copy::<V>),
    )
}

/// Runs a callback, turning a panic into `fallback` and a log line instead of an abort.
pub fn guarded<T>(what: impl std::fmt::Display, fallback: T, callback: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(callback)).unwrap_or_else(|_| {
        redis_module::logging::log_warning(format!("redbloom: {what} panicked; refused"));
        fallback
    })
}

pub fn describe(error: DecodeError, source: &str) -> String {
    match error {
        DecodeError::Malformed(why) => format!("{source}: {why}"),
        DecodeError::TooLarge => format!("{source}: larger than bf.max-filter-bytes allows"),
        DecodeError::OutOfMemory => format!("{source}: out of memory"),
    }
}

/// The value Redis keeps for a record loaded, or null (and a log line) for one refused.
pub fn loaded<V: StoredValue>(value: Result<V, String>) -> *mut c_void {
    match value {
        Ok(value) => {
            metrics::held(&value);
            Box::into_raw(Box::new(value)).cast()
        }
        Err(reason) => {
            redis_module::logging::log_warning(format!("redbloom: refusing a stored filter: {reason}"));
            ptr::null_mut()
        }
    }
}

/// RedisBloom's values, read through the checked RDB calls.
pub struct RdbReader(pub *mut raw::RedisModuleIO);

impl RdbReader {
    fn checked<T>(&self, value: T) -> Result<T, DecodeError> {
        // SAFETY: a live IO handle.
        let io_error = unsafe { raw::RedisModule_IsIOError.is_some_and(|f| f(self.0) != 0) };
        if io_error {
            Err(DecodeError::Malformed("short read"))
        } else {
            Ok(value)
        }
    }
}

impl RdbSource for RdbReader {
    fn unsigned(&mut self) -> Result<u64, DecodeError> {
        // SAFETY: a live IO handle; errors are reported through IsIOError.
        let value = unsafe { raw::RedisModule_LoadUnsigned.map_or(0, |f| f(self.0)) };
        self.checked(value)
    }

    fn signed(&mut self) -> Result<i64, DecodeError> {
        // SAFETY: as in `unsigned`.
        let value = unsafe { raw::RedisModule_LoadSigned.map_or(0, |f| f(self.0)) };
        self.checked(value)
    }

    fn double(&mut self) -> Result<f64, DecodeError> {
        // SAFETY: as in `unsigned`.
        let value = unsafe { raw::RedisModule_LoadDouble.map_or(0.0, |f| f(self.0)) };
        self.checked(value)
    }

    fn bytes(&mut self) -> Result<ByteArray, DecodeError> {
        let buffer = RdbBuffer::load(self.0).map_err(|_| DecodeError::Malformed("short read"))?;
        buffer.into_byte_array().ok_or(DecodeError::Malformed("short read"))
    }
}

/// The memory budget of a filter being loaded. What the server itself saved (an RDB at
/// startup, a full sync, DEBUG RELOAD) must load whatever its size: no budget, allocation
/// stays fallible. A RESTORE payload sent to a master comes from a client: it gets the same
/// budget as a command, so that a few bytes claiming a huge filter cannot make the server
/// allocate it.
pub fn load_budget(rdb: *mut raw::RedisModuleIO) -> usize {
    let loading = (raw::REDISMODULE_CTX_FLAGS_LOADING | raw::REDISMODULE_CTX_FLAGS_ASYNC_LOADING) as c_int;
    // What the master sends (a RESTORE that MIGRATE propagated, say) must not be refused
    // either: the replica would lack a key its master has. The context an IO handle gives has
    // no client to say where a RESTORE came from, but a read-only replica takes writes only
    // from its master.
    let read_only_replica = (raw::REDISMODULE_CTX_FLAGS_SLAVE | raw::REDISMODULE_CTX_FLAGS_READONLY) as c_int;
    // SAFETY: a live IO handle; the context it gives lives as long as it.
    let flags = unsafe {
        match (raw::RedisModule_GetContextFromIO, raw::RedisModule_GetContextFlags) {
            (Some(context_of), Some(flags_of)) => flags_of(context_of(rdb)),
            _ => loading,
        }
    };
    if flags & loading != 0 || flags & read_only_replica == read_only_replica {
        usize::MAX
    } else {
        config::max_filter_bytes()
    }
}

/// A string read from an RDB, freed with Redis's allocator.
pub struct RdbBuffer {
    pointer: *mut u8,
    len: usize,
}

impl RdbBuffer {
    pub fn load(rdb: *mut raw::RedisModuleIO) -> Result<RdbBuffer, String> {
        let mut len = 0usize;
        // SAFETY: a live IO handle; the API returns null or a buffer of `len` bytes.
        let pointer =
            unsafe { raw::RedisModule_LoadStringBuffer.map_or(ptr::null_mut(), |f| f(rdb, &raw mut len)) };
        let buffer = RdbBuffer { pointer: pointer.cast(), len };
        let io_error = unsafe { raw::RedisModule_IsIOError.is_some_and(|f| f(rdb) != 0) };
        if io_error || buffer.pointer.is_null() {
            return Err("short read".to_string());
        }
        Ok(buffer)
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: checked non-null in `load`; `len` bytes owned by this buffer.
        unsafe { std::slice::from_raw_parts(self.pointer, self.len) }
    }

    /// The buffer as a filter's bits, taken over rather than copied: a RedisBloom link is
    /// one string in the RDB, often half the filter, and a copy would need that much memory
    /// again while loading. `None` only where the server lacks `RedisModule_Free`.
    fn into_byte_array(self) -> Option<ByteArray> {
        // SAFETY: reading a function pointer Redis set at module load.
        let free = unsafe { raw::RedisModule_Free }?;
        let buffer = ManuallyDrop::new(self);
        // SAFETY: `load` checked the pointer; Redis allocated these `len` bytes for us alone,
        // and RedisModule_Free is how it says to free them.
        NonNull::new(buffer.pointer).map(|pointer| unsafe { ByteArray::take_over(pointer, buffer.len, free) })
    }
}

impl Drop for RdbBuffer {
    fn drop(&mut self) {
        if !self.pointer.is_null() {
            // SAFETY: allocated by Redis for us.
            unsafe { raw::RedisModule_Free.map(|f| f(self.pointer.cast())) };
        }
    }
}

/// Writes `command key iterator data` to the AOF for every piece.
pub fn emit_loadchunks<'a>(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    command: &CStr,
    pieces: impl Iterator<Item = (u64, &'a [u8])>,
) {
    // SAFETY: reading a function pointer Redis set at module load.
    let Some(emit) = (unsafe { raw::RedisModule_EmitAOF }) else {
        return;
    };
    for (iterator, bytes) in pieces {
        // SAFETY: a live AOF handle and key for the rewrite callback; the format "slb" takes
        // the key, an integer, and a buffer with its length.
        unsafe {
            emit(aof, command.as_ptr(), c"slb".as_ptr(), key, iterator as i64, bytes.as_ptr(), bytes.len());
        }
    }
}

/// Adds the pieces to the digest as one value.
pub fn digest_pieces<'a>(md: *mut raw::RedisModuleDigest, pieces: impl Iterator<Item = &'a [u8]>) {
    // SAFETY: reading function pointers Redis set at module load.
    let (Some(add), Some(end)) =
        (unsafe { raw::RedisModule_DigestAddStringBuffer }, unsafe { raw::RedisModule_DigestEndSequence })
    else {
        return;
    };
    for piece in pieces {
        // SAFETY: the digest handle is live for the callback; the piece is `len` bytes.
        unsafe { add(md, piece.as_ptr().cast(), piece.len()) };
    }
    // SAFETY: as above.
    unsafe { end(md) };
}

/// A value this module stores in a key: what the shared callbacks (free, `free_effort`, copy)
/// and the keyspace helpers need of it.
pub trait StoredValue: Measured + Sized {
    /// What the log calls it.
    const KIND: &'static str;
    /// Every data type a value of this kind may be stored as.
    fn data_types() -> impl Iterator<Item = &'static RedisType>;
    /// The data type this value is stored as: one of `data_types`.
    fn data_type(&self) -> &'static RedisType;
    /// The bytes a free gives back, which set its effort.
    fn freed_bytes(&self) -> usize;
    /// A deep copy, or `None` when there is no memory for it.
    fn try_copy(&self) -> Option<Self>;
}

pub extern "C" fn free<V: StoredValue>(value: *mut c_void) {
    guarded(format_args!("{} free", V::KIND), (), || {
        if !value.is_null() {
            // SAFETY: Redis gives up its value, which this module stored as a Box<V> of the
            // value's own type (the callbacks are registered per type).
            let filter = unsafe { Box::from_raw(value.cast::<V>()) };
            metrics::freed(&*filter);
            drop(filter);
        }
    });
}

pub extern "C" fn free_effort<V: StoredValue>(
    _key: *mut raw::RedisModuleString,
    value: *const c_void,
) -> usize {
    // SAFETY: a live value of this callback's type.
    guarded(format_args!("{} free_effort", V::KIND), 1, || {
        unsafe { &*value.cast::<V>() }.freed_bytes() / BYTES_PER_FREE_EFFORT + 1
    })
}

pub extern "C" fn copy<V: StoredValue>(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    guarded(format_args!("{} copy", V::KIND), ptr::null_mut(), || {
        // SAFETY: a live value of this callback's type.
        match unsafe { &*value.cast::<V>() }.try_copy() {
            Some(copy) => {
                metrics::held(&copy);
                Box::into_raw(Box::new(copy)).cast()
            }
            None => ptr::null_mut(),
        }
    })
}
