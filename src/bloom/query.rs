//! BF.EXISTS, BF.MEXISTS and BF.CARD. A master asks a windowed filter by its own clock (the
//! generations it has expired answer nothing); a replica, what its master's rotations left.
//!
//! Lookups cannot fail (a missing key answers 0), but every handler has the command table's
//! signature.
#![allow(clippy::unnecessary_wraps)]

use super::datatype::METRICS;
use super::held::{held, Held};
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::window::rotation::read_time;

/// BF.EXISTS key item: 0 for a missing key or a key of another type, as RedisBloom answers.
pub fn exists(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let item = call.arg(2);
    let present = match held(&key) {
        Ok(Some(Held::Plain(filter))) => filter.contains(item),
        Ok(Some(Held::Windowed(filter))) => match read_time(call, filter) {
            Some(now) => filter.contains_at(item, now),
            None => filter.contains(item),
        },
        Ok(None) | Err(_) => false,
    };
    METRICS.count_lookups(1, usize::from(present));
    call.reply_bool(present);
    Ok(())
}

/// BF.MEXISTS key item [item ...]
pub fn mexists(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    call.reply_array(call.argc() - 2);
    let mut found = 0;
    let mut answer = |present: bool| {
        found += usize::from(present);
        call.reply_bool(present);
    };
    match held(&key) {
        Ok(Some(Held::Plain(filter))) => filter.contains_each(call.args_from(2), answer),
        Ok(Some(Held::Windowed(filter))) => {
            filter.contains_each(call.args_from(2), read_time(call, filter), answer);
        }
        Ok(None) | Err(_) => call.args_from(2).for_each(|_| answer(false)),
    }
    METRICS.count_lookups(call.argc() - 2, found);
    Ok(())
}

/// BF.CARD key: the adds that answered 1 (of a windowed filter, those of its live window, read
/// by the master's clock as its lookups are); 0 for a missing key.
pub fn card(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let items = match held(&key)? {
        Some(Held::Plain(filter)) => filter.items(),
        Some(Held::Windowed(filter)) => filter.items_at(read_time(call, filter)),
        None => 0,
    };
    call.reply_integer(items as i64);
    Ok(())
}
