//! Opening a key and finding a value of this module in it, of the kind the command expects:
//! a key of any other type answers WRONGTYPE.

use super::datatype::StoredValue;
use super::error::CommandError;
use super::metrics;
use redis_module::raw;
use std::ffi::{c_int, c_void};

/// `mode` with the flags that leave a key's access time and (where the server has the flag)
/// its hit count as they were.
pub fn untouched(mode: c_int) -> c_int {
    // SAFETY: reading a function pointer Redis set at module load, and calling it.
    let supported = unsafe { raw::RedisModule_GetOpenKeyModesAll.map_or(0, |modes| modes()) };
    mode | raw::REDISMODULE_OPEN_KEY_NOTOUCH as c_int
        | (supported & raw::REDISMODULE_OPEN_KEY_NOEFFECTS as c_int)
}

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

    /// Opens a key for writing on the module's own account (a key timer's visit), leaving its
    /// access time alone and, where the server has the flag (Redis 7.2 and later), the
    /// keyspace hits: LRU and LFU eviction see an idle key as idle.
    pub fn open_write_untouched(ctx: *mut raw::RedisModuleCtx, name: *mut raw::RedisModuleString) -> Key {
        Key::open(ctx, name, untouched((raw::REDISMODULE_READ | raw::REDISMODULE_WRITE) as c_int))
    }

    /// Opens a key only to look at it on the module's own account (a key timer's visit),
    /// as [`open_write_untouched`](Self::open_write_untouched) leaves it, and without the
    /// effects of a write: closed, a key opened to write counts as modified (WATCH aborts,
    /// client tracking invalidates), and on Redis 7.0 a writable replica deletes it, and
    /// writes the DEL to its AOF, once its TTL has passed.
    pub fn open_read_untouched(ctx: *mut raw::RedisModuleCtx, name: *mut raw::RedisModuleString) -> Key {
        Key::open(ctx, name, untouched(raw::REDISMODULE_READ as c_int))
    }

    fn open(ctx: *mut raw::RedisModuleCtx, name: *mut raw::RedisModuleString, mode: c_int) -> Key {
        // SAFETY: live context and key name from the current command.
        let key =
            unsafe { raw::RedisModule_OpenKey.map_or(std::ptr::null_mut(), |f| f(ctx, name, mode)).cast() };
        Key { key }
    }

    /// The value in the key: `Ok(None)` for a missing key, `Err(WrongType)` for a key of
    /// another type.
    pub fn get<V: StoredValue>(&self) -> Result<Option<&V>, CommandError> {
        let Some(found) = self.typed_value()? else { return Ok(None) };
        let value = as_value::<V>(found)?;
        // SAFETY: see `typed_value`.
        Ok(value.map(|value| unsafe { &*value }))
    }

    pub fn get_mut<V: StoredValue>(&mut self) -> Result<Option<&mut V>, CommandError> {
        let Some(found) = self.typed_value()? else { return Ok(None) };
        let value = as_value::<V>(found)?;
        // SAFETY: see `typed_value`; `&mut self` keeps any other reference out.
        Ok(value.map(|value| unsafe { &mut *value }))
    }

    /// The value in a key that a family of two types serves (a plain and a windowed filter,
    /// say), found with one lookup: `Err(WrongType)` for a key of any other type.
    pub fn get_either<A: StoredValue, B: StoredValue>(&self) -> Result<Option<Either<&A, &B>>, CommandError> {
        let Some(found) = self.typed_value()? else { return Ok(None) };
        // SAFETY (both): see `typed_value`.
        if let Ok(value) = as_value::<A>(found) {
            return Ok(value.map(|value| Either::First(unsafe { &*value })));
        }
        let value = as_value::<B>(found)?;
        Ok(value.map(|value| Either::Second(unsafe { &*value })))
    }

    pub fn get_either_mut<A: StoredValue, B: StoredValue>(
        &mut self,
    ) -> Result<Option<Either<&mut A, &mut B>>, CommandError> {
        let Some(found) = self.typed_value()? else { return Ok(None) };
        // SAFETY (both): see `typed_value`; `&mut self` keeps any other reference out.
        if let Ok(value) = as_value::<A>(found) {
            return Ok(value.map(|value| Either::First(unsafe { &mut *value })));
        }
        let value = as_value::<B>(found)?;
        Ok(value.map(|value| Either::Second(unsafe { &mut *value })))
    }

    /// Whether the key holds nothing (a new value may be stored in it).
    pub fn is_empty(&self) -> bool {
        // SAFETY: an open key of the current context.
        self.key.is_null()
            || unsafe {
                raw::RedisModule_KeyType.map_or(raw::REDISMODULE_KEYTYPE_EMPTY as c_int, |f| f(self.key))
            } == raw::REDISMODULE_KEYTYPE_EMPTY as c_int
    }

    /// Whether both keys hold one and the same value (a merge naming its destination among
    /// its sources), found without making a reference to either: one of them may be borrowed
    /// mutably later.
    pub fn holds_same_value_as(&self, other: &Key) -> bool {
        let value_of = |key: *mut raw::RedisModuleKey| {
            if key.is_null() {
                return std::ptr::null_mut();
            }
            // SAFETY: an open key of the current context.
            unsafe { raw::RedisModule_ModuleTypeGetValue.map_or(std::ptr::null_mut(), |f| f(key)) }
        };
        let (mine, theirs) = (value_of(self.key), value_of(other.key));
        !mine.is_null() && mine == theirs
    }

    /// The module type and raw value in the key: `Ok(None)` for a missing key,
    /// `Err(WrongType)` for a key that holds no module value; the value may be null.
    ///
    /// SAFETY of the callers' dereference: a value of one of `V::data_types()` is always a
    /// `Box<V>`, stored by `store` (or a load or copy callback of those types), owned by Redis
    /// until its free callback runs, which cannot happen while this key is open.
    fn typed_value(&self) -> Result<Option<(*mut raw::RedisModuleType, *mut c_void)>, CommandError> {
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
            if key_type != raw::REDISMODULE_KEYTYPE_MODULE as c_int {
                return Err(CommandError::WrongType);
            }
            let value_type = raw::RedisModule_ModuleTypeGetType.map_or(std::ptr::null_mut(), |f| f(self.key));
            let value = raw::RedisModule_ModuleTypeGetValue.map_or(std::ptr::null_mut(), |f| f(self.key));
            Ok(Some((value_type, value)))
        }
    }

    /// Stores a new value in this (empty, writable) key, as the data type it asks for.
    pub fn store<V: StoredValue>(&mut self, value: V) -> Result<(), CommandError> {
        let data_type = value.data_type();
        let value = Box::into_raw(Box::new(value));
        // SAFETY: an open, writable key; ownership of `value` passes to Redis on success.
        let status = unsafe {
            raw::RedisModule_ModuleTypeSetValue.map_or(raw::REDISMODULE_ERR as c_int, |f| {
                f(self.key, *data_type.raw_type.borrow(), value.cast())
            })
        };
        if status == raw::REDISMODULE_OK as c_int {
            // SAFETY: Redis holds the value now, and this key keeps it alive for the call.
            metrics::held(unsafe { &*value });
            Ok(())
        } else {
            // SAFETY: Redis did not take the value, so this is the only owner.
            drop(unsafe { Box::from_raw(value) });
            Err(CommandError::Internal)
        }
    }
}

/// The module value a key holds as a `V`: `Err(WrongType)` unless it is of one of `V`'s
/// types, `Ok(None)` for a null value (none is ever stored, but the pointer is Redis's).
fn as_value<V: StoredValue>(
    (value_type, value): (*mut raw::RedisModuleType, *mut c_void),
) -> Result<Option<*mut V>, CommandError> {
    if V::data_types().any(|data_type| value_type == *data_type.raw_type.borrow()) {
        Ok((!value.is_null()).then(|| value.cast::<V>()))
    } else {
        Err(CommandError::WrongType)
    }
}

/// What a key of a two-type family holds.
pub enum Either<A, B> {
    First(A),
    Second(B),
}

impl Drop for Key {
    fn drop(&mut self) {
        if !self.key.is_null() {
            // SAFETY: opened by this struct and not closed before.
            unsafe { raw::RedisModule_CloseKey.map(|f| f(self.key)) };
        }
    }
}
