//! BF.SCANDUMP and BF.LOADCHUNK: a filter moved in pieces, through the same encoding as RDB
//! and AOF. Filters in RedisBloom's format dump exactly as RedisBloom dumps them, and a
//! header of either format is loaded.
//!
//! Iterators: 0 asks for the header, answered with iterator 1; any other iterator `i` asks
//! for the chunk at byte `i - 1` of the bit arrays, answered with `i + chunk length`, so
//! that LOADCHUNK finds the chunk's start as `iterator - 1 - length`. The end is `[0, ""]`.

use super::error::BfError;
use super::held::{held, held_mut, Held, HeldMut};
use super::window::datatype::TIMER;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::shared::parse;
use redbloom_core::bloom::window::{is_window_header, WindowFilter};
use redbloom_core::bloom::Filter;

const HEADER_ITERATOR: i64 = 1;

/// BF.SCANDUMP key iterator; a windowed filter's chunk is sent from its bits, not copied.
pub fn scandump(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let filter = held(&key)?.ok_or(CommandError::NotFound)?;
    let iterator = parse::integer(call.arg(2)).ok_or(BfError::ScanDumpIteratorNotNumeric)?;
    if iterator == 0 {
        let header = match filter {
            Held::Plain(filter) => filter.encode_header(),
            Held::Windowed(filter) => filter.encode_header(),
        };
        call.reply_array(2);
        call.reply_integer(HEADER_ITERATOR);
        call.reply_bulk(&header);
        return Ok(());
    }
    // A negative iterator, like one past the end, is the end, as RedisBloom answers.
    let chunk =
        iterator.checked_sub(1).and_then(|offset| u64::try_from(offset).ok()).and_then(
            |offset| match filter {
                Held::Plain(filter) => filter.chunk_at(offset),
                Held::Windowed(filter) => filter.chunk_at(offset),
            },
        );
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
    let iterator = parse::integer(call.arg(2)).ok_or(BfError::LoadChunkIteratorNotNumeric)?;
    let data = call.arg(3);
    let mut key = call.open_key_for_writing();
    if iterator == HEADER_ITERATOR {
        if held(&key)?.is_some() {
            return Err(CommandError::ItemExists);
        }
        if is_window_header(data) {
            key.store(WindowFilter::decode_header(data, call.max_filter_bytes())?)?;
            TIMER.note_call_key(call);
        } else {
            key.store(Filter::decode_header(data, call.max_filter_bytes())?)?;
        }
        call.notify(c"bf.reserve");
    } else {
        let filter = held_mut(&mut key)?.ok_or(CommandError::NotFound)?;
        // An iterator that cannot follow a chunk of this length is bad data, not an offset.
        let offset = iterator
            .checked_sub(1 + data.len() as i64)
            .and_then(|offset| u64::try_from(offset).ok())
            .ok_or(CommandError::BadData)?;
        match filter {
            HeldMut::Plain(filter) => filter.write_chunk(offset, data)?,
            HeldMut::Windowed(filter) => filter.write_chunk(offset, data)?,
        }
        call.notify(c"bf.loadchunk");
    }
    call.reply_ok();
    call.replicate_verbatim();
    Ok(())
}
