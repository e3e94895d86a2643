//! RedisBloom's other data types (count-min sketch, top-k, t-digest), which
//! this module does not implement. They are registered under their names only so that an
//! RDB holding one fails to load with a log line that says what it is and what to do, rather
//! than Redis's bare "no matching module type". No command creates such a value, and every
//! load is refused, so no value of these types ever exists.

use crate::shared::datatype::type_methods;
use redis_module::native_types::RedisType;
use redis_module::raw;
use std::ffi::{c_int, c_void};
use std::ptr;

/// Type names as RedisBloom registers them, and what they hold.
const KINDS: [(&str, &str); 3] = [
    ("CMSk-TYPE", "count-min sketch (CMS.*)"),
    ("TopK-TYPE", "top-k (TOPK.*)"),
    ("TDIS-TYPE", "t-digest (TDIGEST.*)"),
];

/// Called by Redis for a value of kind `KIND`: never loads it, and says why.
extern "C" fn refuse<const KIND: usize>(
    _rdb: *mut raw::RedisModuleIO,
    encoding_version: c_int,
) -> *mut c_void {
    let (name, what) = KINDS[KIND];
    // A panic here would abort the server; formatting and logging do not panic.
    redis_module::logging::log_warning(format!(
        "redbloom: this data holds a RedisBloom {what} (type {name}, encoding version {encoding_version}), \
         which redbloom does not implement, so Redis cannot load it. To switch to redbloom, keep \
         RedisBloom loaded until such keys are deleted or moved to another server, then save and \
         restart with redbloom; or keep RedisBloom. See the README, 'Switching from RedisBloom'."
    ));
    ptr::null_mut()
}

extern "C" fn never_saved(_rdb: *mut raw::RedisModuleIO, _value: *mut c_void) {}

extern "C" fn never_held(_value: *mut c_void) {}

const fn placeholder<const KIND: usize>() -> RedisType {
    // As for MBbloom--: the first method version every supported server reads.
    RedisType::new(
        KINDS[KIND].0,
        0,
        type_methods(Some(refuse::<KIND>), Some(never_saved), None, None, None, Some(never_held), None, None),
    )
}

pub static COUNT_MIN_TYPE: RedisType = placeholder::<0>();
pub static TOP_K_TYPE: RedisType = placeholder::<1>();
pub static T_DIGEST_TYPE: RedisType = placeholder::<2>();
