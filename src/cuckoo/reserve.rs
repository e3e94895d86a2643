//! CF.RESERVE, and what every command that creates or grows a filter shares: making it
//! within the memory budget from the `cf-*` defaults, replicating it, and the limits of its
//! growth.

use super::datatype::METRICS;
use super::parse;
use crate::shared::call::{Call, Replicated};
use crate::shared::config;
use crate::shared::error::CommandError;
use crate::shared::keyspace::Key;
use redbloom_core::cuckoo::{CuckooFilter, CuckooParams, Limits, MAX_SUB_FILTERS};

/// CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e] [ERROR rate]
pub fn reserve(call: &Call) -> Result<(), CommandError> {
    let params = parse::reserve(&call.args(), defaults())?;
    let mut key = call.open_key_for_writing();
    if key.get::<CuckooFilter>()?.is_some() {
        return Err(CommandError::ItemExists);
    }
    store_created(call, &mut key, params)?;
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
    if key.is_empty() {
        if !create {
            return Ok(None);
        }
        store_created(call, key, params)?;
    }
    key.get_mut::<CuckooFilter>()
}

/// Creates a filter with `params` in the (empty) key, or answers the memory error (counted in
/// INFO). The new filter is replicated, and written to the AOF, as the CF.LOADCHUNK of its
/// header, before anything the command adds: the header names every parameter, so a replica
/// or a replay builds the very same filter whatever its own `cf-*` defaults (RedisBloom
/// replays it too, for a filter of its width).
fn store_created(call: &Call, key: &mut Key, params: CuckooParams) -> Result<(), CommandError> {
    let filter = CuckooFilter::try_new(params, call.max_filter_bytes()).map_err(|error| {
        METRICS.count_refused_creation();
        CommandError::from(error)
    })?;
    let header = filter.header();
    key.store(filter)?;
    call.replicate(
        c"CF.LOADCHUNK",
        &[Replicated::Argument(1), Replicated::Bytes(b"1"), Replicated::Bytes(header.as_bytes())],
    );
    call.notify(c"cf.reserve");
    Ok(())
}

/// What a filter this call creates gets where the command names nothing: the `cf-*` settings,
/// as for Bloom filters. This module replicates a new filter as its header, so only a stream
/// another writer made creates filters from defaults on replay: Redis 8's module, whose
/// settings a switching user keeps, or RedisBloom 2 and earlier versions of this module,
/// whose defaults the settings have unless changed.
pub fn defaults() -> CuckooParams {
    CuckooParams {
        capacity: config::cf_initial_size(),
        bucket_size: config::cf_bucket_size(),
        max_iterations: config::cf_max_iterations(),
        expansion: config::cf_expansion(),
        ..CuckooParams::default()
    }
}

/// How far a filter may grow in this call: the memory budget, and the sub-filter limit
/// (`bf.cf-max-expansions`); commands replayed from the master or the AOF meet neither.
pub fn limits(call: &Call) -> Limits {
    let max_sub_filters = if call.replayed() { MAX_SUB_FILTERS } else { config::cf_max_expansions() };
    Limits { max_bytes: call.max_filter_bytes(), max_sub_filters }
}
