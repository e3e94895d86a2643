//! The `MBbloom--` data type: how Redis saves, loads, rewrites, digests, measures, copies and
//! frees a filter. Every callback runs inside a panic guard, and every read is checked: a
//! corrupt RDB file or RESTORE payload is refused, never trusted.
//!
//! Values of RedisBloom's encoding versions (0 to 4) are read as RedisBloom wrote them and
//! kept in its format; every value is saved in this module's version, a header and the bit
//! arrays in either format (see `filter::format`).

use crate::filter::bits::ByteArray;
use crate::filter::encoding::DecodeError;
use crate::filter::redisbloom::encoding::{self as redisbloom_encoding, RdbSource, NEWEST_RDB_VERSION};
use crate::filter::Filter;
use crate::metrics::Measured;
use redis_module::native_types::RedisType;
use redis_module::raw;
use std::ffi::{c_int, c_void, CStr};
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};

/// RedisBloom's encoding versions are 0 to 4, and this module reads them all. Ours are
/// higher, so that RedisBloom refuses what this module saved instead of misreading it:
/// - 101 (written): the header, then each link's bits as one string, kept as read on load;
/// - 100 (read): the header, then the bits in chunks of at most 16 MiB, copied on load.
pub const ENCODING_VERSION: i32 = 101;
const CHUNKED_ENCODING_VERSION: i32 = 100;

/// Free a filter in the background when it holds more than this many bytes per unit of
/// effort reported; Redis frees lazily above an effort of 64, that is above 256 KiB.
const BYTES_PER_FREE_EFFORT: usize = 4096;

pub static BLOOM_TYPE: RedisType = RedisType::new(
    "MBbloom--",
    ENCODING_VERSION,
    type_methods(
        Some(rdb_load),
        Some(rdb_save),
        Some(aof_rewrite),
        Some(mem_usage),
        Some(digest),
        Some(free::<Filter>),
        Some(free_effort::<Filter>),
        Some(copy::<Filter>),
    ),
);

/// A type's callbacks as Redis reads them. Method version 3 is the first with free_effort
/// and copy (Redis 6.2); the later fields stay unset.
#[allow(clippy::too_many_arguments)]
pub(crate) const fn type_methods(
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

/// Runs a callback, turning a panic into `fallback` and a log line instead of an abort.
pub(crate) fn guarded<T>(what: impl std::fmt::Display, fallback: T, callback: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(callback)).unwrap_or_else(|_| {
        redis_module::logging::log_warning(format!("redbloom: {what} panicked; refused"));
        fallback
    })
}

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
    })
}

extern "C" fn rdb_load(rdb: *mut raw::RedisModuleIO, encoding_version: c_int) -> *mut c_void {
    guarded("rdb_load", ptr::null_mut(), || {
        let loaded = if encoding_version == ENCODING_VERSION {
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
        match loaded {
            Ok(filter) => {
                crate::metrics::held(&filter);
                Box::into_raw(Box::new(filter)).cast()
            }
            Err(reason) => {
                redis_module::logging::log_warning(format!("redbloom: refusing a stored filter: {reason}"));
                ptr::null_mut()
            }
        }
    })
}

pub(crate) fn describe(error: DecodeError, source: &str) -> String {
    match error {
        DecodeError::Malformed(why) => format!("{source}: {why}"),
        DecodeError::TooLarge => format!("{source}: larger than bf.max-filter-bytes allows"),
        DecodeError::OutOfMemory => format!("{source}: out of memory"),
    }
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

/// RedisBloom's values, read through the checked RDB calls.
pub(crate) struct RdbReader(pub(crate) *mut raw::RedisModuleIO);

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
pub(crate) fn load_budget(rdb: *mut raw::RedisModuleIO) -> usize {
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
        crate::config::max_filter_bytes()
    }
}

/// A string read from an RDB, freed with Redis's allocator.
struct RdbBuffer {
    pointer: *mut u8,
    len: usize,
}

impl RdbBuffer {
    fn load(rdb: *mut raw::RedisModuleIO) -> Result<RdbBuffer, String> {
        let mut len = 0usize;
        // SAFETY: a live IO handle; the API returns null or a buffer of `len` bytes.
        let pointer =
            unsafe { raw::RedisModule_LoadStringBuffer.map_or(ptr::null_mut(), |f| f(rdb, &mut len)) };
        let buffer = RdbBuffer { pointer: pointer.cast(), len };
        let io_error = unsafe { raw::RedisModule_IsIOError.is_some_and(|f| f(rdb) != 0) };
        if io_error || buffer.pointer.is_null() {
            return Err("short read".to_string());
        }
        Ok(buffer)
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: checked non-null in `load`; `len` bytes owned by this buffer.
        unsafe { std::slice::from_raw_parts(self.pointer, self.len) }
    }

    /// The buffer as a filter's bits, taken over rather than copied: a RedisBloom link is
    /// one string in the RDB, often half the filter, and a copy would need that much memory
    /// again while loading. `None` only where the server lacks RedisModule_Free.
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
    })
}

/// Writes `command key iterator data` to the AOF for every piece.
pub(crate) fn emit_loadchunks<'a>(
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
    })
}

/// Adds the pieces to the digest as one value.
pub(crate) fn digest_pieces<'a>(md: *mut raw::RedisModuleDigest, pieces: impl Iterator<Item = &'a [u8]>) {
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

/// What the callbacks both filter kinds share (free, free_effort, copy) need of a value.
pub(crate) trait StoredValue: Measured + Sized {
    /// What the log calls it.
    const KIND: &'static str;
    /// The bytes a free gives back, which set its effort.
    fn freed_bytes(&self) -> usize;
    /// A deep copy, or `None` when there is no memory for it.
    fn try_copy(&self) -> Option<Self>;
}

impl StoredValue for Filter {
    const KIND: &'static str = "Bloom filter";

    fn freed_bytes(&self) -> usize {
        self.bits_bytes()
    }

    fn try_copy(&self) -> Option<Filter> {
        self.try_clone().ok()
    }
}

pub(crate) extern "C" fn free<V: StoredValue>(value: *mut c_void) {
    guarded(format_args!("{} free", V::KIND), (), || {
        if !value.is_null() {
            // SAFETY: Redis gives up its value, which this module stored as a Box<V> of the
            // value's own type (the callbacks are registered per type).
            let filter = unsafe { Box::from_raw(value.cast::<V>()) };
            crate::metrics::freed(&*filter);
            drop(filter);
        }
    })
}

pub(crate) extern "C" fn free_effort<V: StoredValue>(
    _key: *mut raw::RedisModuleString,
    value: *const c_void,
) -> usize {
    // SAFETY: a live value of this callback's type.
    guarded(format_args!("{} free_effort", V::KIND), 1, || {
        unsafe { &*value.cast::<V>() }.freed_bytes() / BYTES_PER_FREE_EFFORT + 1
    })
}

pub(crate) extern "C" fn copy<V: StoredValue>(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    guarded(format_args!("{} copy", V::KIND), ptr::null_mut(), || {
        // SAFETY: a live value of this callback's type.
        match unsafe { &*value.cast::<V>() }.try_copy() {
            Some(copy) => {
                crate::metrics::held(&copy);
                Box::into_raw(Box::new(copy)).cast()
            }
            None => ptr::null_mut(),
        }
    })
}
