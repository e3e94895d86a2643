//! `loadmodule` arguments: the same settings, by any of their names.

use super::settings::{
    format_named, set_error_rate, set_format, settings_agree, ERROR_RATE_NAME, ERROR_RATE_UNPREFIXED,
    HUGE_PAGES, INTEGER_SETTINGS,
};
use redis_module::RedisString;
use std::sync::atomic::Ordering;

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
            "format" => set_format(
                format_named(&value)
                    .ok_or_else(|| format!("format must be redbloom or redisbloom, got '{value}'"))?,
            ),
            _ => return Err(format!("unknown module argument '{}'", pair[0].to_string_lossy())),
        }
    }
    settings_agree()
}

fn yes_or_no(text: &str) -> Result<bool, String> {
    match text.to_ascii_lowercase().as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err(format!("huge-pages must be yes or no, got '{text}'")),
    }
}
