//! BF.EXISTS, BF.MEXISTS and BF.CARD.
//!
//! Lookups cannot fail (a missing key answers 0), but every handler has the command table's
//! signature.
#![allow(clippy::unnecessary_wraps)]

use super::datatype::METRICS;
use super::window;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use redbloom_core::bloom::Filter;

/// BF.EXISTS key item: 0 for a missing key or a key of another type, as RedisBloom answers.
pub fn exists(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let present = if window::holds(&key) {
        window::exists(call, &key)?
    } else {
        match key.get::<Filter>() {
            Ok(Some(filter)) => filter.contains(call.arg(2)),
            _ => false,
        }
    };
    METRICS.count_lookups(1, usize::from(present));
    call.reply_bool(present);
    Ok(())
}

/// BF.MEXISTS key item [item ...]
pub fn mexists(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    call.reply_array(call.argc() - 2);
    if window::holds(&key) {
        let mut found = 0;
        window::exists_each(call, &key, |present| {
            found += usize::from(present);
            call.reply_bool(present);
        })?;
        METRICS.count_lookups(call.argc() - 2, found);
        return Ok(());
    }
    let Ok(Some(filter)) = key.get::<Filter>() else {
        (2..call.argc()).for_each(|_| call.reply_bool(false));
        METRICS.count_lookups(call.argc() - 2, 0);
        return Ok(());
    };
    let mut found = 0;
    filter.contains_each(call.args_from(2), |present| {
        found += usize::from(present);
        call.reply_bool(present);
    });
    METRICS.count_lookups(call.argc() - 2, found);
    Ok(())
}

/// BF.CARD key: the adds that answered 1; 0 for a missing key.
pub fn card(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let items = if window::holds(&key) { window::card(&key)? } else { key.get::<Filter>()?.map_or(0, Filter::items) };
    call.reply_integer(items as i64);
    Ok(())
}
