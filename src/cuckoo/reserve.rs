//! CF.RESERVE, and what every command that creates or grows a filter shares: making it
//! within the memory budget, and the limits of its growth.

use super::datatype::METRICS;
use super::parse;
use crate::shared::call::Call;
use crate::shared::config;
use crate::shared::error::CommandError;
use crate::shared::keyspace::Key;
use redbloom_core::cuckoo::{CuckooFilter, CuckooParams, Limits, MAX_SUB_FILTERS};

/// CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e] [ERROR rate]
pub fn reserve(call: &Call) -> Result<(), CommandError> {
    let params = parse::reserve(&call.args())?;
    let mut key = call.open_key_for_writing();
    if key.get::<CuckooFilter>()?.is_some() {
        return Err(CommandError::ItemExists);
    }
    key.store(created(params, call)?)?;
    call.replicate_verbatim();
    call.notify(c"cf.reserve");
    call.reply_ok();
    Ok(())
}

/// The filter in `key`, created with `params` when the key is missing; `None` when missing
/// and `create` is false.
pub fn filter_or_create<'k>(
    call: &Call,
    key: &'k mut Key,
    params: CuckooParams,
    create: bool,
) -> Result<Option<&'k mut CuckooFilter>, CommandError> {
    if key.get::<CuckooFilter>()?.is_none() {
        if !create {
            return Ok(None);
        }
        key.store(created(params, call)?)?;
        call.notify(c"cf.reserve");
    }
    key.get_mut::<CuckooFilter>()
}

/// A new filter, or the memory error (counted in INFO).
pub fn created(params: CuckooParams, call: &Call) -> Result<CuckooFilter, CommandError> {
    CuckooFilter::try_new(params, call.max_filter_bytes()).map_err(|error| {
        METRICS.count_refused_creation();
        CommandError::from(error)
    })
}

/// How far a filter may grow in this call: the memory budget, and the sub-filter limit
/// (`bf.cf-max-expansions`); commands replayed from the master or the AOF meet neither.
pub fn limits(call: &Call) -> Limits {
    let max_sub_filters = if call.replayed() { MAX_SUB_FILTERS } else { config::cf_max_expansions() };
    Limits { max_bytes: call.max_filter_bytes(), max_sub_filters }
}
