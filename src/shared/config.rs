//! Server-wide defaults and limits: module configs (`CONFIG GET/SET bf.*`, or lines in
//! redis.conf) and `loadmodule` arguments, including RedisBloom's `ERROR_RATE` and
//! `INITIAL_SIZE`.

use redbloom_core::bloom::params::{self, MAX_CAPACITY, MAX_EXPANSION};
use redbloom_core::bloom::Format;
use redbloom_core::cuckoo::{DEFAULT_MAX_SUB_FILTERS, MAX_SUB_FILTERS};
use redis_module::configuration::{ConfigurationContext, ConfigurationValue};
use redis_module::{enum_configuration, RedisError, RedisString};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicU8, Ordering};

/// What a Bloom filter created without a rate gets.
pub const DEFAULT_ERROR_RATE: f64 = 0.01;

/// A setting held as an integer: its name (after `bf.`), which its config and its load
/// argument share, its default and its bounds, stated once for both.
pub struct IntegerSetting {
    pub name: &'static str,
    pub value: AtomicI64,
    pub default: i64,
    pub min: i64,
    pub max: i64,
}

impl IntegerSetting {
    const fn new(name: &'static str, default: i64, min: i64, max: i64) -> IntegerSetting {
        IntegerSetting { name, value: AtomicI64::new(default), default, min, max }
    }

    pub fn get(&self) -> i64 {
        self.value.load(Ordering::Relaxed)
    }

    fn store_text(&self, text: &str) -> Result<(), String> {
        let (name, min, max) = (self.name, self.min, self.max);
        match text.trim().parse::<i64>() {
            Ok(value) if (min..=max).contains(&value) => {
                self.value.store(value, Ordering::Relaxed);
                Ok(())
            }
            _ => Err(format!("{name} must be an integer in the range [{min}, {max}], got '{text}'")),
        }
    }
}

pub static ERROR_RATE: ErrorRateConfig = ErrorRateConfig(AtomicU64::new(DEFAULT_ERROR_RATE.to_bits()));
pub static INITIAL_SIZE: IntegerSetting = IntegerSetting::new("initial-size", 100, 1, MAX_CAPACITY as i64);
pub static EXPANSION: IntegerSetting = IntegerSetting::new("expansion-factor", 2, 0, MAX_EXPANSION as i64);
/// The memory budget of one filter. 4 GiB by default: a billion items at 0.1% (1.9 to 2.2 GB)
/// still fits, while a typo such as a rate of 1e-7 on a billion items (about 6.8 GB) is
/// refused before it can take the machine's memory. Smaller than 4 KiB no filter of the
/// minimum capacity fits.
pub static MAX_FILTER_BYTES: IntegerSetting =
    IntegerSetting::new("max-filter-bytes", 4 << 30, 1 << 12, i64::MAX);
/// RedisBloom's `CF_MAX_EXPANSIONS`: the sub-filters a cuckoo filter may grow to.
pub static CF_MAX_EXPANSIONS: IntegerSetting =
    IntegerSetting::new("cf-max-expansions", DEFAULT_MAX_SUB_FILTERS as i64, 1, MAX_SUB_FILTERS as i64);
/// Every integer setting, for registration and load arguments alike.
pub static INTEGER_SETTINGS: [&IntegerSetting; 4] =
    [&INITIAL_SIZE, &EXPANSION, &MAX_FILTER_BYTES, &CF_MAX_EXPANSIONS];
/// Off by default: huge pages are faulted in 2 MiB at a time, so a fresh filter becomes
/// resident after a few hundred random adds instead of as it fills (and on kernels before
/// 5.8 a write during a fork copied the whole 2 MiB page).
pub static HUGE_PAGES: AtomicBool = AtomicBool::new(false);
/// The format of filters created without `FORMAT`: this module's by default, for speed.
pub static FORMAT: FormatConfig = FormatConfig(AtomicU8::new(FormatSetting::redbloom as u8));

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

pub struct FormatConfig(AtomicU8);

impl FormatConfig {
    pub fn value(&self) -> Format {
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

// What a Bloom filter that a command creates without being told gets.

pub fn error_rate() -> f64 {
    ERROR_RATE.value()
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

pub fn max_filter_bytes() -> usize {
    MAX_FILTER_BYTES.get() as usize
}

pub fn cf_max_expansions() -> usize {
    CF_MAX_EXPANSIONS.get() as usize
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

/// The error rate is a string config: Redis has no floating-point module configs.
pub struct ErrorRateConfig(AtomicU64);

impl ErrorRateConfig {
    pub fn value(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Relaxed))
    }

    fn store_text(&self, text: &str) -> Result<(), String> {
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
        self.0.store(rate.to_bits(), Ordering::Relaxed);
        Ok(())
    }
}

impl ConfigurationValue<RedisString> for ErrorRateConfig {
    fn get(&self, _ctx: &ConfigurationContext) -> RedisString {
        RedisString::create(None, self.value().to_string().as_str())
    }

    fn set(&self, _ctx: &ConfigurationContext, value: RedisString) -> Result<(), RedisError> {
        let text = value.try_as_str()?;
        self.store_text(text).map_err(RedisError::String)
    }
}

/// Applies `loadmodule` arguments, given as name/value pairs. Names are case-insensitive and
/// may be RedisBloom's (`ERROR_RATE`, `INITIAL_SIZE`, `CF_MAX_EXPANSIONS`) or this module's
/// config names.
pub fn apply_load_arguments(args: &[RedisString]) -> Result<(), String> {
    if !args.len().is_multiple_of(2) {
        return Err("module arguments come in name/value pairs".to_string());
    }
    for pair in args.chunks(2) {
        let name = pair[0].to_string_lossy().to_ascii_lowercase();
        let value = pair[1].to_string_lossy();
        let name = name.strip_prefix("bf.").unwrap_or(&name).replace('_', "-");
        // RedisBloom's name for the expansion factor.
        let name = if name == "expansion" { "expansion-factor" } else { name.as_str() };
        if let Some(setting) = INTEGER_SETTINGS.iter().find(|setting| setting.name == name) {
            setting.store_text(&value)?;
            continue;
        }
        match name {
            "error-rate" => ERROR_RATE.store_text(&value)?,
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
