//! CF.EXISTS, CF.MEXISTS and CF.COUNT.
//!
//! Lookups cannot fail (a missing key answers 0), but every handler has the command table's
//! signature.
#![allow(clippy::unnecessary_wraps)]

use super::datatype::METRICS;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use redbloom_core::cuckoo::CuckooFilter;

/// CF.EXISTS key item: 0 for a missing key, and for a key of another type, as RedisBloom.
pub fn exists(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let present = matches!(key.get::<CuckooFilter>(), Ok(Some(filter)) if filter.contains(filter.hash_and_prefetch(call.arg(2))));
    METRICS.count_lookups(1, usize::from(present));
    call.reply_bool(present);
    Ok(())
}

/// CF.MEXISTS key item [item ...]: hashes the whole batch and asks for its cache lines
/// before testing any item, so that the misses overlap.
pub fn mexists(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    call.reply_array(call.argc() - 2);
    let Ok(Some(filter)) = key.get::<CuckooFilter>() else {
        METRICS.count_lookups(call.argc() - 2, 0);
        (2..call.argc()).for_each(|_| call.reply_bool(false));
        return Ok(());
    };
    let items = filter.hash_and_prefetch_all(call.args_from(2));
    let mut found = 0;
    for item in items {
        let present = filter.contains(item);
        found += usize::from(present);
        call.reply_bool(present);
    }
    METRICS.count_lookups(call.argc() - 2, found);
    Ok(())
}

/// CF.COUNT key item: copies of the item's fingerprint in its buckets; 0 for a missing key or
/// one of another type.
pub fn count(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let count = match key.get::<CuckooFilter>() {
        Ok(Some(filter)) => filter.count(filter.hash_and_prefetch(call.arg(2))),
        _ => 0,
    };
    call.reply_integer(count as i64);
    Ok(())
}
