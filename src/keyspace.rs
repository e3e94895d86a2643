//! Opening a key and finding the filter in it.

use crate::commands::BfError;
use crate::datatype::BLOOM_TYPE;
use crate::filter::Filter;
use redis_module::raw;
use std::ffi::c_int;

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
        self.value().map(|value| value.map(|pointer| unsafe { &*pointer }))
    }

    pub fn filter_mut(&mut self) -> Result<Option<&mut Filter>, BfError> {
        self.value().map(|value| value.map(|pointer| unsafe { &mut *pointer }))
    }

    /// The raw value pointer, after checking the key's type.
    ///
    /// SAFETY of the callers' dereference: a value of BLOOM_TYPE is always a
    /// `Box<Filter>` stored by `store`, owned by Redis until its free callback runs,
    /// which cannot happen while this key is open.
    fn value(&self) -> Result<Option<*mut Filter>, BfError> {
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
                || value_type != *BLOOM_TYPE.raw_type.borrow()
            {
                return Err(BfError::WrongType);
            }
            let value = raw::RedisModule_ModuleTypeGetValue.map_or(std::ptr::null_mut(), |f| f(self.key));
            Ok((!value.is_null()).then_some(value.cast::<Filter>()))
        }
    }

    /// Stores a new filter in this (empty, writable) key.
    pub fn store(&mut self, filter: Filter) -> Result<(), BfError> {
        let value = Box::into_raw(Box::new(filter));
        // SAFETY: ownership of `value` passes to Redis on success; on failure it is still ours.
        let status = unsafe {
            raw::RedisModule_ModuleTypeSetValue.map_or(raw::REDISMODULE_ERR as c_int, |f| {
                f(self.key, *BLOOM_TYPE.raw_type.borrow(), value.cast())
            })
        };
        if status == raw::REDISMODULE_OK as c_int {
            // SAFETY: Redis holds the value now, and this key keeps it alive for the call.
            crate::metrics::held(unsafe { &*value });
            Ok(())
        } else {
            // SAFETY: Redis did not take the value, so this is the only owner.
            drop(unsafe { Box::from_raw(value) });
            Err(BfError::Internal)
        }
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
