//! BF.RESERVE, and what every command that creates a Bloom filter shares: the defaults,
//! the replication of a new filter, and the log line of a refused one.

use super::datatype::METRICS;
use super::parse::{self, Creation};
use super::window;
use crate::shared::call::Call;
use crate::shared::config;
use crate::shared::error::CommandError;
use redbloom_core::bloom::Filter;

/// Parameters of a filter that a command creates without being told them.
pub fn defaults() -> Creation {
    Creation {
        error_rate: config::error_rate(),
        capacity: config::initial_size(),
        expansion: config::expansion(),
        format: config::format(),
        window: None,
    }
}

/// `BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING] [FORMAT f] [WINDOW ms
/// [GENERATIONS g]]`
pub fn reserve(call: &Call) -> Result<(), CommandError> {
    let parsed = parse::reserve(&call.args(), defaults())?;
    let creation = parsed.creation.ok_or(CommandError::Internal)?;
    if let Some(asked) = parsed.capped_rate {
        config::log_capped(asked);
    }
    let mut key = call.open_key_for_writing();
    if window::holds(&key) || key.get::<Filter>()?.is_some() {
        return Err(CommandError::ItemExists);
    }
    let header = if let Some(window) = creation.window {
        window::create(call, &mut key, &creation, window)?
    } else {
        let filter = creation.try_build(call.max_filter_bytes()).inspect_err(|_| log_refusal(&creation))?;
        let header = filter.encode_header();
        key.store(filter)?;
        header
    };
    call.reply_ok();
    call.notify(c"bf.reserve");
    replicate_creation(call, &header, 0..0);
    Ok(())
}

/// A new filter is replicated, and written to the AOF, as the BF.LOADCHUNK of its header,
/// then a BF.MADD of the items the command added (Redis wraps the two in MULTI/EXEC). The
/// header names every parameter, the format and the layout, so a replica or a replay builds
/// the very same filter whatever its own defaults, format or sizing; and RedisBloom replays
/// both commands for a filter in its format.
pub fn replicate_creation(call: &Call, header: &[u8], items: std::ops::Range<usize>) {
    call.replicate("BF.LOADCHUNK", &[call.arg(1), b"1", header]);
    if !items.is_empty() {
        let mut args = vec![call.arg(1)];
        args.extend(items.map(|index| call.arg(index)));
        call.replicate("BF.MADD", &args);
    }
}

/// A refused creation is worth a line in the log, and a count in INFO: the client only sees
/// "insufficient memory".
pub fn log_refusal(creation: &Creation) {
    METRICS.count_refused_creation();
    redis_module::logging::log_notice(format!(
        "redbloom: refused a filter of capacity {} at error rate {}: it exceeds bf.max-filter-bytes ({}) or available memory",
        creation.capacity,
        creation.error_rate,
        config::max_filter_bytes()
    ));
}
