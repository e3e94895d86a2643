//! BF.RESERVE, and what every command that creates a Bloom filter shares: the defaults, the
//! creation of either kind of filter, its replication, and the log line of a refused one.

use super::datatype::METRICS;
use super::held::held;
use super::parse::{self, Creation};
use crate::shared::call::{Call, Replicated};
use crate::shared::clock::now_ms;
use crate::shared::config;
use crate::shared::error::CommandError;
use crate::shared::keyspace::Key;
use redbloom_core::bloom::window::{WindowFilter, WindowParams};
use redbloom_core::bloom::Format;

/// The formats in the order of `bf.format`'s names (`config::FORMAT_NAMES`).
const FORMATS: [Format; 2] = [Format::Redbloom, Format::RedisBloom];

/// Parameters of a filter that a command creates without being told them.
pub fn defaults() -> Creation {
    Creation::plain(
        config::initial_size(),
        config::error_rate(),
        config::expansion(),
        FORMATS.get(config::format_index()).copied().unwrap_or(Format::Redbloom),
    )
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
    if held(&key)?.is_some() {
        return Err(CommandError::ItemExists);
    }
    let header = create(call, &mut key, &creation)?;
    call.reply_ok();
    call.notify(c"bf.reserve");
    replicate_creation(call, &header, 0..0);
    Ok(())
}

/// A new filter in the (empty) key, plain or windowed as `creation` says, a windowed one noted
/// for its timer; answers its header, which replicates it.
pub fn create(call: &Call, key: &mut Key, creation: &Creation) -> Result<Vec<u8>, CommandError> {
    let Some(window) = creation.window else {
        let filter = creation.try_build(call.max_filter_bytes()).inspect_err(|_| log_refusal(creation))?;
        let header = filter.encode_header();
        key.store(filter)?;
        return Ok(header);
    };
    let params = WindowParams::new(
        window.window_ms(),
        window.generations(),
        creation.capacity,
        creation.error_rate,
        creation.expansion,
    )?;
    let filter = WindowFilter::try_new(params, now_ms(), call.max_filter_bytes()).inspect_err(|_| {
        METRICS.count_refused_creation();
    })?;
    let header = filter.encode_header();
    key.store(filter)?;
    Ok(header)
}

/// A new filter is replicated, and written to the AOF, as the BF.LOADCHUNK of its header,
/// then a BF.MADD of the items the command added (Redis wraps the two in MULTI/EXEC). The
/// header names every parameter, the format and the layout, so a replica or a replay builds
/// the very same filter whatever its own defaults, format or sizing; and RedisBloom replays
/// both commands for a filter in its format.
pub fn replicate_creation(call: &Call, header: &[u8], items: std::ops::Range<usize>) {
    call.replicate(
        c"BF.LOADCHUNK",
        &[Replicated::Argument(1), Replicated::Bytes(b"1"), Replicated::Bytes(header)],
    );
    replicate_items(call, items);
}

/// The items from `items` replicated as one BF.MADD (none for an empty range): what a command
/// that stopped at an error had processed.
pub fn replicate_items(call: &Call, items: std::ops::Range<usize>) {
    if !items.is_empty() {
        let mut args = vec![Replicated::Argument(1)];
        args.extend(items.map(Replicated::Argument));
        call.replicate(c"BF.MADD", &args);
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

#[cfg(test)]
mod tests {
    use super::FORMATS;
    use crate::shared::config::FORMAT_NAMES;

    /// `bf.format` numbers its names; the formats must stand in the same order.
    #[test]
    fn the_formats_stand_in_the_order_of_their_names() {
        let names: Vec<String> = FORMATS.iter().map(|format| format.name().to_ascii_lowercase()).collect();
        assert_eq!(names, FORMAT_NAMES);
    }
}
