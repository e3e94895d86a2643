//! BF.SCANDUMP and BF.LOADCHUNK: a filter moved in pieces, through the same encoding as RDB
//! and AOF. Filters in RedisBloom's format dump exactly as RedisBloom dumps them, and a
//! header of either format is loaded.
//!
//! Iterators: 0 asks for the header, answered with iterator 1; any other iterator `i` asks
//! for the chunk at byte `i - 1` of the bit arrays, answered with `i + chunk length`, so
//! that LOADCHUNK finds the chunk's start as `iterator - 1 - length`. The end is `[0, ""]`.

use super::window;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::shared::parse;
use redbloom_core::bloom::window::is_window_header;
use redbloom_core::bloom::Filter;

const HEADER_ITERATOR: i64 = 1;

/// BF.SCANDUMP key iterator
pub fn scandump(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    if window::holds(&key) {
        let iterator = parse::integer(call.arg(2)).ok_or(CommandError::ScanDumpIteratorNotNumeric)?;
        return window::scandump(call, &key, iterator, HEADER_ITERATOR);
    }
    let filter = key.get::<Filter>()?.ok_or(CommandError::NotFound)?;
    let iterator = parse::integer(call.arg(2)).ok_or(CommandError::ScanDumpIteratorNotNumeric)?;
    if iterator == 0 {
        let header = filter.encode_header();
        call.reply_array(2);
        call.reply_integer(HEADER_ITERATOR);
        call.reply_bulk(&header);
        return Ok(());
    }
    // A negative iterator, like one past the end, is the end, as RedisBloom answers.
    let chunk = iterator
        .checked_sub(1)
        .and_then(|offset| u64::try_from(offset).ok())
        .and_then(|offset| filter.chunk_at(offset));
    let (next, data) = match chunk {
        Some(chunk) => (iterator.saturating_add(chunk.len() as i64), chunk),
        None => (0, &[][..]),
    };
    call.reply_array(2);
    call.reply_integer(next);
    call.reply_bulk(data);
    Ok(())
}

/// BF.LOADCHUNK key iterator data
pub fn loadchunk(call: &Call) -> Result<(), CommandError> {
    let iterator = parse::integer(call.arg(2)).ok_or(CommandError::LoadChunkIteratorNotNumeric)?;
    let data = call.arg(3);
    let mut key = call.open_key_for_writing();
    if iterator == HEADER_ITERATOR {
        if window::holds(&key) || key.get::<Filter>()?.is_some() {
            return Err(CommandError::ItemExists);
        }
        if is_window_header(data) {
            window::load_header(call, &mut key, data)?;
        } else {
            let filter = Filter::decode_header(data, call.max_filter_bytes())?;
            key.store(filter)?;
        }
        call.notify(c"bf.reserve");
    } else if window::holds(&key) {
        let offset = iterator
            .checked_sub(1 + data.len() as i64)
            .and_then(|offset| u64::try_from(offset).ok())
            .ok_or(CommandError::BadData)?;
        window::load_chunk(&mut key, offset, data)?;
        call.notify(c"bf.loadchunk");
    } else {
        let filter = key.get_mut::<Filter>()?.ok_or(CommandError::NotFound)?;
        // An iterator that cannot follow a chunk of this length is bad data, not an offset.
        let offset = iterator
            .checked_sub(1 + data.len() as i64)
            .and_then(|offset| u64::try_from(offset).ok())
            .ok_or(CommandError::BadData)?;
        filter.write_chunk(offset, data)?;
        call.notify(c"bf.loadchunk");
    }
    call.reply_ok();
    call.replicate_verbatim();
    Ok(())
}
