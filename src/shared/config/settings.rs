//! The settings: every default and limit the module keeps, with its names, bounds and the
//! rules between them, and what commands read of them.

use redbloom_core::bloom::params::{self, MAX_CAPACITY, MAX_EXPANSION};
use redbloom_core::cuckoo::{self, MAX_BUCKET_SIZE, MAX_SUB_FILTERS};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicU8, Ordering};

/// What a Bloom filter created without a rate gets.
pub const DEFAULT_ERROR_RATE: f64 = 0.01;

/// A setting held as an integer: its names, default and bounds, stated once for its configs
/// and its load argument alike.
pub struct IntegerSetting {
    /// Its name after `bf.`, on every server.
    pub name: &'static str,
    /// Its name without a prefix, as Redis 8's Bloom module registers it.
    pub unprefixed: Option<&'static str>,
    value: AtomicI64,
    pub default: i64,
    pub min: i64,
    pub max: i64,
}

impl IntegerSetting {
    const fn new(
        name: &'static str,
        unprefixed: Option<&'static str>,
        default: i64,
        min: i64,
        max: i64,
    ) -> IntegerSetting {
        IntegerSetting { name, unprefixed, value: AtomicI64::new(default), default, min, max }
    }

    pub fn get(&self) -> i64 {
        self.value.load(Ordering::Relaxed)
    }

    pub(super) fn is_named(&self, name: &str) -> bool {
        self.name == name || self.unprefixed == Some(name)
    }

    /// Sets the value, refused outside its bounds. Whether it agrees with the others is
    /// [`settings_agree`]'s to say, once all of a change is set.
    pub(super) fn set(&self, value: i64) -> Result<(), String> {
        let (name, min, max) = (self.name, self.min, self.max);
        if !(min..=max).contains(&value) {
            return Err(format!("{name} must be an integer in the range [{min}, {max}], got {value}"));
        }
        self.value.store(value, Ordering::Relaxed);
        Ok(())
    }

    pub(super) fn set_text(&self, text: &str) -> Result<(), String> {
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
pub static CF_BUCKET_SIZE: IntegerSetting = IntegerSetting::new(
    "cf-bucket-size",
    Some("cf-bucket-size"),
    cuckoo::DEFAULT_BUCKET_SIZE as i64,
    1,
    MAX_BUCKET_SIZE as i64,
);
pub static CF_INITIAL_SIZE: IntegerSetting = IntegerSetting::new(
    "cf-initial-size",
    Some("cf-initial-size"),
    cuckoo::DEFAULT_CAPACITY as i64,
    4,
    1 << 30,
);

/// Whether the settings agree with each other: a cuckoo filter created with the defaults
/// holds two buckets at least (RedisBloom's rule: capacity at least twice the bucket size).
/// Asked once every value of a change is set (a CONFIG SET of several, redis.conf, the load
/// arguments), so that the order they come in does not matter.
pub fn settings_agree() -> Result<(), String> {
    let (bucket_size, initial_size) = (CF_BUCKET_SIZE.get(), CF_INITIAL_SIZE.get());
    (2 * bucket_size <= initial_size).then_some(()).ok_or(format!(
        "cf-bucket-size ({bucket_size}) must be at most half cf-initial-size ({initial_size})"
    ))
}
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
pub(super) const ERROR_RATE_NAME: &str = "error-rate";
pub(super) const ERROR_RATE_UNPREFIXED: &str = "bf-error-rate";
static ERROR_RATE: AtomicU64 = AtomicU64::new(DEFAULT_ERROR_RATE.to_bits());

/// Off by default: huge pages are faulted in 2 MiB at a time, so a fresh filter becomes
/// resident after a few hundred random adds instead of as it fills (and on kernels before
/// 5.8 a write during a fork copied the whole 2 MiB page).
pub(super) static HUGE_PAGES: AtomicBool = AtomicBool::new(false);
/// The format of filters created without `FORMAT`, by its place in [`FORMAT_NAMES`]: this
/// module's by default, for speed.
static FORMAT: AtomicU8 = AtomicU8::new(0);
/// The formats `bf.format` names, in the order it numbers them.
pub const FORMAT_NAMES: [&str; 2] = ["redbloom", "redisbloom"];

pub(super) fn set_format(index: usize) {
    FORMAT.store(index.min(FORMAT_NAMES.len() - 1) as u8, Ordering::Relaxed);
}

/// The place in [`FORMAT_NAMES`] of the name `word`, in any case.
pub(super) fn format_named(word: &str) -> Option<usize> {
    FORMAT_NAMES.iter().position(|name| word.eq_ignore_ascii_case(name))
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

/// The place in [`FORMAT_NAMES`] of `bf.format`.
pub fn format_index() -> usize {
    usize::from(FORMAT.load(Ordering::Relaxed))
}

// What a cuckoo filter that a command creates without being told gets.

pub fn cf_initial_size() -> u64 {
    CF_INITIAL_SIZE.get() as u64
}

pub fn cf_bucket_size() -> u16 {
    CF_BUCKET_SIZE.get() as u16
}

pub fn cf_max_iterations() -> u16 {
    CF_MAX_ITERATIONS.get() as u16
}

pub fn cf_expansion() -> u16 {
    CF_EXPANSION.get() as u16
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

pub(super) fn set_error_rate(text: &str) -> Result<(), String> {
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
