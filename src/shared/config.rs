//! Server-wide defaults and limits: module configs (lines in redis.conf, `CONFIG SET/GET`,
//! `CONFIG REWRITE`) and `loadmodule` arguments.
//!
//! Every setting has a name after `bf.` that every server knows (`bf.error-rate`,
//! `bf.cf-bucket-size`). The defaults RedisBloom's configs set also get the names the Bloom
//! module of Redis 8 registers without a prefix (`bf-error-rate`, `cf-bucket-size`), where the
//! server takes names without a prefix (Redis 8.0 and later): both names reach the same
//! setting, so a redis.conf written for either module starts the server. `loadmodule`
//! arguments take any of these names, and RedisBloom's (`ERROR_RATE`, `INITIAL_SIZE`,
//! `CF_MAX_EXPANSIONS`), in any case.

use redbloom_core::bloom::params::{self, MAX_CAPACITY, MAX_EXPANSION};
use redbloom_core::bloom::Format;
use redbloom_core::cuckoo::{self, CuckooParams, MAX_BUCKET_SIZE, MAX_SUB_FILTERS};
use redis_module::configuration::{
    register_bool_configuration, register_enum_configuration, ConfigurationContext, ConfigurationFlags,
    ConfigurationValue,
};
use redis_module::{enum_configuration, raw, Context, RedisError, RedisString};
use std::ffi::{c_char, c_int, c_longlong, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU64, AtomicU8, Ordering};

/// What a Bloom filter created without a rate gets.
pub const DEFAULT_ERROR_RATE: f64 = 0.01;
/// The first version whose module configs may go without the module's prefix.
const UNPREFIXED_SINCE: c_int = 0x0008_0000;

/// A setting held as an integer: its names, default and bounds, stated once for its configs
/// and its load argument alike.
pub struct IntegerSetting {
    /// Its name after `bf.`, on every server.
    pub name: &'static str,
    /// Its name without a prefix, as Redis 8's Bloom module registers it.
    pub unprefixed: Option<&'static str>,
    value: AtomicI64,
    default: i64,
    min: i64,
    max: i64,
    /// What a value must also meet, given the other settings.
    agrees: fn(i64) -> Result<(), String>,
}

impl IntegerSetting {
    const fn new(
        name: &'static str,
        unprefixed: Option<&'static str>,
        default: i64,
        min: i64,
        max: i64,
    ) -> IntegerSetting {
        IntegerSetting {
            name,
            unprefixed,
            value: AtomicI64::new(default),
            default,
            min,
            max,
            agrees: |_| Ok(()),
        }
    }

    const fn agreeing(self, agrees: fn(i64) -> Result<(), String>) -> IntegerSetting {
        IntegerSetting { agrees, ..self }
    }

    pub fn get(&self) -> i64 {
        self.value.load(Ordering::Relaxed)
    }

    fn is_named(&self, name: &str) -> bool {
        self.name == name || self.unprefixed == Some(name)
    }

    /// Sets the value, refused outside its bounds or where it disagrees with another setting.
    fn set(&self, value: i64) -> Result<(), String> {
        let (name, min, max) = (self.name, self.min, self.max);
        if !(min..=max).contains(&value) {
            return Err(format!("{name} must be an integer in the range [{min}, {max}], got {value}"));
        }
        (self.agrees)(value)?;
        self.value.store(value, Ordering::Relaxed);
        Ok(())
    }

    fn set_text(&self, text: &str) -> Result<(), String> {
        let value = text
            .trim()
            .parse::<i64>()
            .map_err(|_| format!("{} must be an integer, got '{text}'", self.name))?;
        self.set(value)
    }
}

pub static INITIAL_SIZE: IntegerSetting =
    IntegerSetting::new("initial-size", Some("bf-initial-size"), 100, 1, MAX_CAPACITY as i64);
pub static EXPANSION: IntegerSetting =
    IntegerSetting::new("expansion-factor", Some("bf-expansion-factor"), 2, 0, MAX_EXPANSION as i64);
/// The memory budget of one filter. 4 GiB by default: a billion items at 0.1% (1.9 to 2.2 GB)
/// still fits, while a typo such as a rate of 1e-7 on a billion items (about 6.8 GB) is
/// refused before it can take the machine's memory. Smaller than 4 KiB no filter of the
/// minimum capacity fits.
pub static MAX_FILTER_BYTES: IntegerSetting =
    IntegerSetting::new("max-filter-bytes", None, 4 << 30, 1 << 12, i64::MAX);
// A cuckoo filter created with the defaults holds two buckets at least (RedisBloom's rule:
// capacity at least twice the bucket size), whichever of the two is set last.
pub static CF_BUCKET_SIZE: IntegerSetting = IntegerSetting::new(
    "cf-bucket-size",
    Some("cf-bucket-size"),
    cuckoo::DEFAULT_BUCKET_SIZE as i64,
    1,
    MAX_BUCKET_SIZE as i64,
)
.agreeing(|bucket_size| {
    let initial_size = CF_INITIAL_SIZE.get();
    (2 * bucket_size <= initial_size).then_some(()).ok_or(format!(
        "cf-bucket-size must be at most half cf-initial-size ({initial_size}), got {bucket_size}"
    ))
});
pub static CF_INITIAL_SIZE: IntegerSetting = IntegerSetting::new(
    "cf-initial-size",
    Some("cf-initial-size"),
    cuckoo::DEFAULT_CAPACITY as i64,
    4,
    1 << 30,
)
.agreeing(|initial_size| {
    let bucket_size = CF_BUCKET_SIZE.get();
    (initial_size >= 2 * bucket_size).then_some(()).ok_or(format!(
        "cf-initial-size must be at least twice cf-bucket-size ({bucket_size}), got {initial_size}"
    ))
});
pub static CF_MAX_ITERATIONS: IntegerSetting = IntegerSetting::new(
    "cf-max-iterations",
    Some("cf-max-iterations"),
    cuckoo::DEFAULT_MAX_ITERATIONS as i64,
    1,
    u16::MAX as i64,
);
pub static CF_EXPANSION: IntegerSetting = IntegerSetting::new(
    "cf-expansion-factor",
    Some("cf-expansion-factor"),
    cuckoo::DEFAULT_EXPANSION as i64,
    0,
    cuckoo::MAX_EXPANSION as i64,
);
/// RedisBloom's `CF_MAX_EXPANSIONS`: the sub-filters a cuckoo filter may grow to. Redis 8
/// takes up to 65536; a stored filter has at most [`MAX_SUB_FILTERS`] here (see
/// `cf_max_expansions`), so larger values act as that.
pub static CF_MAX_EXPANSIONS: IntegerSetting = IntegerSetting::new(
    "cf-max-expansions",
    Some("cf-max-expansions"),
    cuckoo::DEFAULT_MAX_SUB_FILTERS as i64,
    1,
    65536,
);
/// Every integer setting, for registration and load arguments alike.
pub static INTEGER_SETTINGS: [&IntegerSetting; 8] = [
    &INITIAL_SIZE,
    &EXPANSION,
    &MAX_FILTER_BYTES,
    &CF_BUCKET_SIZE,
    &CF_INITIAL_SIZE,
    &CF_MAX_ITERATIONS,
    &CF_EXPANSION,
    &CF_MAX_EXPANSIONS,
];

/// The error rate's names; a string config, as Redis has no floating-point module configs.
const ERROR_RATE_NAME: &str = "error-rate";
const ERROR_RATE_UNPREFIXED: &str = "bf-error-rate";
static ERROR_RATE: AtomicU64 = AtomicU64::new(DEFAULT_ERROR_RATE.to_bits());

/// Off by default: huge pages are faulted in 2 MiB at a time, so a fresh filter becomes
/// resident after a few hundred random adds instead of as it fills (and on kernels before
/// 5.8 a write during a fork copied the whole 2 MiB page).
static HUGE_PAGES: AtomicBool = AtomicBool::new(false);
/// The format of filters created without `FORMAT`: this module's by default, for speed.
static FORMAT: FormatConfig = FormatConfig(AtomicU8::new(FormatSetting::redbloom as u8));

enum_configuration! {
    /// The values of `bf.format`, spelt as CONFIG GET shows them.
    #[allow(non_camel_case_types)]
    pub enum FormatSetting {
        redbloom = 0,
        redisbloom = 1,
    }
}

impl From<Format> for FormatSetting {
    fn from(format: Format) -> FormatSetting {
        match format {
            Format::Redbloom => FormatSetting::redbloom,
            Format::RedisBloom => FormatSetting::redisbloom,
        }
    }
}

struct FormatConfig(AtomicU8);

impl FormatConfig {
    fn value(&self) -> Format {
        if self.0.load(Ordering::Relaxed) == FormatSetting::redisbloom as u8 {
            Format::RedisBloom
        } else {
            Format::Redbloom
        }
    }

    fn store(&self, setting: FormatSetting) {
        self.0.store(setting as u8, Ordering::Relaxed);
    }
}

impl ConfigurationValue<FormatSetting> for FormatConfig {
    fn get(&self, _ctx: &ConfigurationContext) -> FormatSetting {
        self.value().into()
    }

    fn set(&self, _ctx: &ConfigurationContext, value: FormatSetting) -> Result<(), RedisError> {
        self.store(value);
        Ok(())
    }
}

// What a filter that a command creates without being told gets.

pub fn error_rate() -> f64 {
    f64::from_bits(ERROR_RATE.load(Ordering::Relaxed))
}

pub fn initial_size() -> u64 {
    INITIAL_SIZE.get() as u64
}

pub fn expansion() -> u32 {
    EXPANSION.get() as u32
}

pub fn format() -> Format {
    FORMAT.value()
}

/// A cuckoo filter's parameters, all from the `cf-*` settings.
pub fn cuckoo_defaults() -> CuckooParams {
    CuckooParams {
        capacity: CF_INITIAL_SIZE.get() as u64,
        bucket_size: CF_BUCKET_SIZE.get() as u16,
        max_iterations: CF_MAX_ITERATIONS.get() as u16,
        expansion: CF_EXPANSION.get() as u16,
        ..CuckooParams::default()
    }
}

pub fn max_filter_bytes() -> usize {
    MAX_FILTER_BYTES.get() as usize
}

pub fn cf_max_expansions() -> usize {
    (CF_MAX_EXPANSIONS.get() as usize).min(MAX_SUB_FILTERS)
}

#[cfg(not(test))]
pub fn huge_pages() -> bool {
    HUGE_PAGES.load(Ordering::Relaxed)
}

/// A capped error rate is worth a line in the log: whoever asked for it gets no warning.
pub fn log_capped(asked: f64) {
    redis_module::logging::log_notice(format!(
        "redbloom: error rate {asked} capped to {}: higher rates make a filter useless",
        params::MAX_USEFUL_ERROR_RATE
    ));
}

fn set_error_rate(text: &str) -> Result<(), String> {
    let rate = text
        .trim()
        .parse::<f64>()
        .ok()
        .and_then(|rate| params::checked_error_rate(rate).map(|checked| (rate, checked)));
    let Some((asked, rate)) = rate else {
        return Err(format!("error rate must be a number in the range (0, 1), got '{text}'"));
    };
    if rate != asked {
        log_capped(asked);
    }
    ERROR_RATE.store(rate.to_bits(), Ordering::Relaxed);
    Ok(())
}

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
    register_bool_configuration(ctx, "huge-pages", &HUGE_PAGES, false, ConfigurationFlags::DEFAULT, None);
    register_enum_configuration(
        ctx,
        "format",
        &FORMAT,
        FormatSetting::redbloom,
        ConfigurationFlags::DEFAULT,
        None,
    );
    // SAFETY: module load, live context.
    let loaded =
        unsafe { raw::RedisModule_LoadConfigs.map_or(raw::REDISMODULE_OK as c_int, |load| load(ctx.ctx)) };
    if loaded == raw::REDISMODULE_OK as c_int {
        Ok(())
    } else {
        Err("a config in redis.conf or on the command line was refused".to_string())
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
                None,
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

/// The text the last CONFIG GET of the error rate was given: Redis copies it before asking
/// again, so it is freed on the next call.
static ERROR_RATE_TEXT: AtomicPtr<raw::RedisModuleString> = AtomicPtr::new(ptr::null_mut());

extern "C" fn get_error_rate(_name: *const c_char, _privdata: *mut c_void) -> *mut raw::RedisModuleString {
    guarded(ptr::null_mut(), || {
        let text = error_rate().to_string();
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

/// Applies `loadmodule` arguments, given as name/value pairs. Names are case-insensitive and
/// may be any config's name, with or without `bf.`, Redis 8's, or RedisBloom's
/// (`ERROR_RATE`, `INITIAL_SIZE`, `CF_MAX_EXPANSIONS`).
pub fn apply_load_arguments(args: &[RedisString]) -> Result<(), String> {
    if !args.len().is_multiple_of(2) {
        return Err("module arguments come in name/value pairs".to_string());
    }
    for pair in args.chunks(2) {
        let name = pair[0].to_string_lossy().to_ascii_lowercase().replace('_', "-");
        let value = pair[1].to_string_lossy();
        let name = name.strip_prefix("bf.").unwrap_or(&name);
        // RedisBloom's name for the expansion factor.
        let name = if name == "expansion" { "expansion-factor" } else { name };
        if let Some(setting) = INTEGER_SETTINGS.iter().find(|setting| setting.is_named(name)) {
            setting.set_text(&value)?;
            continue;
        }
        match name {
            ERROR_RATE_NAME | ERROR_RATE_UNPREFIXED => set_error_rate(&value)?,
            "huge-pages" => HUGE_PAGES.store(yes_or_no(&value)?, Ordering::Relaxed),
            "format" => FORMAT.store(
                Format::named(value.as_bytes())
                    .ok_or_else(|| format!("format must be redbloom or redisbloom, got '{value}'"))?
                    .into(),
            ),
            _ => return Err(format!("unknown module argument '{}'", pair[0].to_string_lossy())),
        }
    }
    Ok(())
}

fn yes_or_no(text: &str) -> Result<bool, String> {
    match text.to_ascii_lowercase().as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err(format!("huge-pages must be yes or no, got '{text}'")),
    }
}
