//! Opening a key and finding the filter in it: a Bloom filter (`MBbloom--`) or a cuckoo
//! filter (`MBbloomCF`, or `rbCF-wide` for wider fingerprints).

use crate::commands::BfError;
use crate::cuckoo_datatype::{self, CUCKOO_TYPE, WIDE_CUCKOO_TYPE};
use crate::datatype::BLOOM_TYPE;
use crate::filter::cuckoo::CuckooFilter;
use crate::filter::Filter;
use redis_module::native_types::RedisType;
use redis_module::raw;
use std::ffi::{c_int, c_void};

/// Both types hold a `CuckooFilter`; which one a filter gets depends on its width alone.
static CUCKOO_TYPES: [&RedisType; 2] = [&CUCKOO_TYPE, &WIDE_CUCKOO_TYPE];

/// An open key, closed when dropped.
pub struct Key {
    key: *mut raw::RedisModuleKey,
}

impl Key {
    pub fn open_read(ctx: *mut raw::RedisModuleCtx, name: *mut raw::RedisModuleString) -> Key {
        Key::open(ctx, name, raw::REDISMODULE_READ as c_int)
    }

    pub fn open_write(ctx: *mut raw::RedisModuleCtx, name: *mut raw::RedisModuleString) -> Key {
        Key::open(ctx, name, (raw::REDISMODULE_READ | raw::REDISMODULE_WRITE) as c_int)
    }

    fn open(ctx: *mut raw::RedisModuleCtx, name: *mut raw::RedisModuleString, mode: c_int) -> Key {
        // SAFETY: live context and key name from the current command.
        let key =
            unsafe { raw::RedisModule_OpenKey.map_or(std::ptr::null_mut(), |f| f(ctx, name, mode)).cast() };
        Key { key }
    }

    /// `Ok(None)` for a missing key, `Err(WrongType)` for a key of another type.
    pub fn filter(&self) -> Result<Option<&Filter>, BfError> {
        // SAFETY: see `value`.
        self.value(&[&BLOOM_TYPE]).map(|value| value.map(|pointer| unsafe { &*pointer.cast::<Filter>() }))
    }

    pub fn filter_mut(&mut self) -> Result<Option<&mut Filter>, BfError> {
        // SAFETY: see `value`.
        self.value(&[&BLOOM_TYPE]).map(|value| value.map(|pointer| unsafe { &mut *pointer.cast::<Filter>() }))
    }

    /// As [`filter`](Self::filter), for a cuckoo filter.
    pub fn cuckoo(&self) -> Result<Option<&CuckooFilter>, BfError> {
        // SAFETY: see `value`.
        self.value(&CUCKOO_TYPES)
            .map(|value| value.map(|pointer| unsafe { &*pointer.cast::<CuckooFilter>() }))
    }

    pub fn cuckoo_mut(&mut self) -> Result<Option<&mut CuckooFilter>, BfError> {
        // SAFETY: see `value`.
        self.value(&CUCKOO_TYPES)
            .map(|value| value.map(|pointer| unsafe { &mut *pointer.cast::<CuckooFilter>() }))
    }

    /// The raw value pointer, after checking that the key holds one of the `expected` types.
    ///
    /// SAFETY of the callers' dereference: a value of BLOOM_TYPE is always a `Box<Filter>`,
    /// and one of the CUCKOO_TYPES a `Box<CuckooFilter>`, stored by `store`/`store_cuckoo`,
    /// owned by Redis until its free callback runs, which cannot happen while this key is open.
    fn value(&self, expected: &[&RedisType]) -> Result<Option<*mut c_void>, BfError> {
        if self.key.is_null() {
            return Ok(None);
        }
        // SAFETY: an open key of the current context.
        unsafe {
            let key_type =
                raw::RedisModule_KeyType.map_or(raw::REDISMODULE_KEYTYPE_EMPTY as c_int, |f| f(self.key));
            if key_type == raw::REDISMODULE_KEYTYPE_EMPTY as c_int {
                return Ok(None);
            }
            let value_type = raw::RedisModule_ModuleTypeGetType.map_or(std::ptr::null_mut(), |f| f(self.key));
            if key_type != raw::REDISMODULE_KEYTYPE_MODULE as c_int
                || !expected.iter().any(|expected| value_type == *expected.raw_type.borrow())
            {
                return Err(BfError::WrongType);
            }
            let value = raw::RedisModule_ModuleTypeGetValue.map_or(std::ptr::null_mut(), |f| f(self.key));
            Ok((!value.is_null()).then_some(value))
        }
    }

    /// Stores a new filter in this (empty, writable) key.
    pub fn store(&mut self, filter: Filter) -> Result<(), BfError> {
        let value = Box::into_raw(Box::new(filter));
        if self.set_value(&BLOOM_TYPE, value.cast()) {
            // SAFETY: Redis holds the value now, and this key keeps it alive for the call.
            crate::metrics::held(unsafe { &*value });
            Ok(())
        } else {
            // SAFETY: Redis did not take the value, so this is the only owner.
            drop(unsafe { Box::from_raw(value) });
            Err(BfError::Internal)
        }
    }

    /// Stores a new cuckoo filter in this (empty, writable) key.
    pub fn store_cuckoo(&mut self, filter: CuckooFilter) -> Result<(), BfError> {
        let value_type = cuckoo_datatype::type_of(&filter);
        let value = Box::into_raw(Box::new(filter));
        if self.set_value(value_type, value.cast()) {
            // SAFETY: Redis holds the value now, and this key keeps it alive for the call.
            crate::metrics::held(unsafe { &*value });
            Ok(())
        } else {
            // SAFETY: Redis did not take the value, so this is the only owner.
            drop(unsafe { Box::from_raw(value) });
            Err(BfError::Internal)
        }
    }

    /// Hands `value` to Redis as this key's value of type `value_type`; false if it refused.
    fn set_value(&mut self, value_type: &RedisType, value: *mut c_void) -> bool {
        // SAFETY: an open, writable key; ownership of `value` passes to Redis on success.
        let status = unsafe {
            raw::RedisModule_ModuleTypeSetValue
                .map_or(raw::REDISMODULE_ERR as c_int, |f| f(self.key, *value_type.raw_type.borrow(), value))
        };
        status == raw::REDISMODULE_OK as c_int
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        if !self.key.is_null() {
            // SAFETY: opened by this struct and not closed before.
            unsafe { raw::RedisModule_CloseKey.map(|f| f(self.key)) };
        }
    }
}
