//! Registering the settings as configs with Redis, and the callbacks through which Redis
//! reads and sets them.

use super::settings::{
    error_rate, format_index, set_error_rate, set_format, settings_agree, IntegerSetting, DEFAULT_ERROR_RATE,
    ERROR_RATE_NAME, ERROR_RATE_UNPREFIXED, FORMAT_NAMES, HUGE_PAGES, INTEGER_SETTINGS,
};
use redis_module::{raw, Context, RedisString};
use std::ffi::{c_char, c_int, c_longlong, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

/// The first version whose module configs may go without the module's prefix.
const UNPREFIXED_SINCE: c_int = 0x0008_0000;

/// Registers every config (at module load), then has Redis apply what redis.conf and the
/// command line set. `loadmodule` arguments are applied after, by `apply_load_arguments`.
pub fn register(ctx: &Context) -> Result<(), String> {
    let unprefixed = unprefixed_names_supported(ctx.ctx);
    let mut unprefixed_refused = false;
    // One config per setting: where the server takes names without a prefix, named so with
    // the `bf.` name as its alias (two configs would each get their default applied at start,
    // the second undoing what redis.conf set for the first).
    let with_alias = |unprefixed_name: Option<&str>, name: &str| {
        unprefixed_name.filter(|_| unprefixed).map(|unprefixed_name| format!("{unprefixed_name}|bf.{name}"))
    };
    for setting in INTEGER_SETTINGS {
        let privdata = ptr::from_ref(setting).cast_mut().cast();
        let both = with_alias(setting.unprefixed, setting.name).is_some_and(|names| {
            let registered =
                register_numeric(ctx.ctx, &names, raw::REDISMODULE_CONFIG_UNPREFIXED, setting, privdata);
            unprefixed_refused |= !registered;
            registered
        });
        if !both && !register_numeric(ctx.ctx, setting.name, 0, setting, privdata) {
            return Err(format!("could not register the config bf.{}", setting.name));
        }
    }
    let both = with_alias(Some(ERROR_RATE_UNPREFIXED), ERROR_RATE_NAME).is_some_and(|names| {
        let registered = register_error_rate(ctx.ctx, &names, raw::REDISMODULE_CONFIG_UNPREFIXED);
        unprefixed_refused |= !registered;
        registered
    });
    if !both && !register_error_rate(ctx.ctx, ERROR_RATE_NAME, 0) {
        return Err(format!("could not register the config bf.{ERROR_RATE_NAME}"));
    }
    if unprefixed_refused {
        ctx.log_notice(
            "redbloom: this server refused config names without the bf. prefix; use the bf.* names",
        );
    }
    if !register_huge_pages(ctx.ctx) || !register_format(ctx.ctx) {
        return Err("could not register the configs bf.huge-pages and bf.format".to_string());
    }
    // SAFETY: module load, live context.
    let loaded =
        unsafe { raw::RedisModule_LoadConfigs.map_or(raw::REDISMODULE_OK as c_int, |load| load(ctx.ctx)) };
    if loaded == raw::REDISMODULE_OK as c_int {
        settings_agree()
    } else {
        Err("a config given at load (in redis.conf, on the command line or by MODULE LOADEX) was refused"
            .to_string())
    }
}

/// Redis 8.0 and later take config names without the module's prefix. Valkey reports its own
/// version (9 and up) and refuses them, with a warning each: it is not asked.
fn unprefixed_names_supported(ctx: *mut raw::RedisModuleCtx) -> bool {
    // SAFETY: module load; the function pointers were set by RedisModule_Init, and the server
    // info is freed with the context it was taken with.
    unsafe {
        let redis_8 = raw::RedisModule_GetServerVersion.is_some_and(|version| version() >= UNPREFIXED_SINCE);
        let (Some(get), Some(field), Some(free)) = (
            raw::RedisModule_GetServerInfo,
            raw::RedisModule_ServerInfoGetFieldC,
            raw::RedisModule_FreeServerInfo,
        ) else {
            return false;
        };
        let info = get(ctx, c"server".as_ptr());
        if info.is_null() {
            return false;
        }
        let valkey = !field(info, c"valkey_version".as_ptr()).is_null();
        free(ctx, info);
        redis_8 && !valkey
    }
}

fn register_numeric(
    ctx: *mut raw::RedisModuleCtx,
    name: &str,
    flags: u32,
    setting: &IntegerSetting,
    privdata: *mut c_void,
) -> bool {
    let Ok(name) = CString::new(name) else { return false };
    // SAFETY: module load, live context; the private data is a `&'static IntegerSetting`, and
    // Redis copies the name.
    let status = unsafe {
        raw::RedisModule_RegisterNumericConfig.map_or(raw::REDISMODULE_ERR as c_int, |register| {
            register(
                ctx,
                name.as_ptr(),
                setting.default,
                flags,
                setting.min,
                setting.max,
                Some(get_integer),
                Some(set_integer),
                Some(check_agreement),
                privdata,
            )
        })
    };
    status == raw::REDISMODULE_OK as c_int
}

fn register_error_rate(ctx: *mut raw::RedisModuleCtx, name: &str, flags: u32) -> bool {
    let (Ok(name), Ok(default)) = (CString::new(name), CString::new(DEFAULT_ERROR_RATE.to_string())) else {
        return false;
    };
    // SAFETY: as in `register_numeric`; no private data.
    let status = unsafe {
        raw::RedisModule_RegisterStringConfig.map_or(raw::REDISMODULE_ERR as c_int, |register| {
            register(
                ctx,
                name.as_ptr(),
                default.as_ptr(),
                flags,
                Some(get_error_rate),
                Some(set_error_rate_config),
                None,
                ptr::null_mut(),
            )
        })
    };
    status == raw::REDISMODULE_OK as c_int
}

/// Runs a config callback from Redis inside a panic guard.
fn guarded<T>(fallback: T, callback: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(callback)).unwrap_or(fallback)
}

/// An error reply for a refused CONFIG SET, which Redis frees.
fn report(err: *mut *mut raw::RedisModuleString, message: &str) -> c_int {
    // SAFETY: `err` is Redis's out-parameter for this call; a string without a context is
    // owned by whoever frees it, here Redis.
    unsafe {
        if let Some(create) = raw::RedisModule_CreateString {
            if !err.is_null() {
                *err = create(ptr::null_mut(), message.as_ptr().cast(), message.len());
            }
        }
    }
    raw::REDISMODULE_ERR as c_int
}

extern "C" fn get_integer(_name: *const c_char, privdata: *mut c_void) -> c_longlong {
    // SAFETY: registered with a `&'static IntegerSetting` as its private data.
    guarded(0, || unsafe { &*privdata.cast::<IntegerSetting>() }.get())
}

extern "C" fn set_integer(
    _name: *const c_char,
    value: c_longlong,
    privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    // SAFETY: as in `get_integer`.
    let outcome = guarded(Err("internal error".to_string()), || {
        unsafe { &*privdata.cast::<IntegerSetting>() }.set(value)
    });
    match outcome {
        Ok(()) => raw::REDISMODULE_OK as c_int,
        Err(message) => report(err, &message),
    }
}

/// Redis's apply callback of the integer configs, once a CONFIG SET has set all it names:
/// refused, Redis sets back every value it changed.
extern "C" fn check_agreement(
    _ctx: *mut raw::RedisModuleCtx,
    _privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    match guarded(Err("internal error".to_string()), settings_agree) {
        Ok(()) => raw::REDISMODULE_OK as c_int,
        Err(message) => report(err, &message),
    }
}

/// The text the last CONFIG GET of the error rate was given: Redis copies it before asking
/// again, so it is freed on the next call.
static ERROR_RATE_TEXT: AtomicPtr<raw::RedisModuleString> = AtomicPtr::new(ptr::null_mut());

extern "C" fn get_error_rate(_name: *const c_char, _privdata: *mut c_void) -> *mut raw::RedisModuleString {
    // A getter must answer a string: after a panic, the one it gave last time.
    guarded(ERROR_RATE_TEXT.load(Ordering::Relaxed), || {
        let rate = error_rate();
        // Rust spells a double without an exponent: 1e-300 would take 302 characters.
        let text = if rate < 1e-4 { format!("{rate:e}") } else { rate.to_string() };
        // SAFETY: a string without a context, which this module frees on the next call.
        unsafe {
            let (Some(create), Some(free)) = (raw::RedisModule_CreateString, raw::RedisModule_FreeString)
            else {
                return ptr::null_mut();
            };
            let string = create(ptr::null_mut(), text.as_ptr().cast(), text.len());
            let previous = ERROR_RATE_TEXT.swap(string, Ordering::Relaxed);
            if !previous.is_null() {
                free(ptr::null_mut(), previous);
            }
            string
        }
    })
}

extern "C" fn set_error_rate_config(
    _name: *const c_char,
    value: *mut raw::RedisModuleString,
    _privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    let outcome = guarded(Err("internal error".to_string()), || {
        let text = RedisString::new(None, value);
        let text = text.try_as_str().map_err(|_| "error rate must be a number".to_string())?;
        set_error_rate(text)
    });
    match outcome {
        Ok(()) => raw::REDISMODULE_OK as c_int,
        Err(message) => report(err, &message),
    }
}

fn register_huge_pages(ctx: *mut raw::RedisModuleCtx) -> bool {
    // SAFETY: module load, live context; the name is a literal, no private data.
    let status = unsafe {
        raw::RedisModule_RegisterBoolConfig.map_or(raw::REDISMODULE_ERR as c_int, |register| {
            register(
                ctx,
                c"huge-pages".as_ptr(),
                0,
                0,
                Some(get_huge_pages),
                Some(set_huge_pages),
                None,
                ptr::null_mut(),
            )
        })
    };
    status == raw::REDISMODULE_OK as c_int
}

extern "C" fn get_huge_pages(_name: *const c_char, _privdata: *mut c_void) -> c_int {
    guarded(0, || c_int::from(HUGE_PAGES.load(Ordering::Relaxed)))
}

extern "C" fn set_huge_pages(
    _name: *const c_char,
    value: c_int,
    _privdata: *mut c_void,
    _err: *mut *mut raw::RedisModuleString,
) -> c_int {
    guarded(raw::REDISMODULE_ERR as c_int, || {
        HUGE_PAGES.store(value != 0, Ordering::Relaxed);
        raw::REDISMODULE_OK as c_int
    })
}

/// `bf.format` names the formats in lower case, numbered in the order of [`FORMAT_NAMES`].
fn register_format(ctx: *mut raw::RedisModuleCtx) -> bool {
    let mut names = [c"redbloom".as_ptr(), c"redisbloom".as_ptr()];
    let numbers: [c_int; 2] = [0, 1];
    // SAFETY: module load, live context; Redis copies the names and numbers.
    let status = unsafe {
        raw::RedisModule_RegisterEnumConfig.map_or(raw::REDISMODULE_ERR as c_int, |register| {
            register(
                ctx,
                c"format".as_ptr(),
                0,
                0,
                names.as_mut_ptr(),
                numbers.as_ptr(),
                numbers.len() as c_int,
                Some(get_format),
                Some(set_format_config),
                None,
                ptr::null_mut(),
            )
        })
    };
    status == raw::REDISMODULE_OK as c_int
}

extern "C" fn get_format(_name: *const c_char, _privdata: *mut c_void) -> c_int {
    guarded(0, || format_index() as c_int)
}

extern "C" fn set_format_config(
    _name: *const c_char,
    value: c_int,
    _privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    let chosen = usize::try_from(value).ok().filter(|&index| index < FORMAT_NAMES.len());
    match chosen {
        Some(chosen) => guarded(raw::REDISMODULE_ERR as c_int, || {
            set_format(chosen);
            raw::REDISMODULE_OK as c_int
        }),
        None => report(err, "format must be redbloom or redisbloom"),
    }
}
