//! BF.SCANDUMP and BF.LOADCHUNK: a filter moved in pieces, through the same encoding as RDB
//! and AOF. Filters in RedisBloom's format dump exactly as RedisBloom dumps them, and a
//! header of either format is loaded.
//!
//! Iterators: 0 asks for the header, answered with iterator 1; any other iterator `i` asks
//! for the chunk at byte `i - 1` of the bit arrays, answered with `i + chunk length`, so
//! that LOADCHUNK finds the chunk's start as `iterator - 1 - length`. The end is `[0, ""]`.
//! A windowed filter's iterators also carry a mark of the generations it held
//! ([`WindowFilter::marked_iterator`]): a dump or a load that a rotation dropping one
//! overtook is refused, where its chunks would have landed on other generations' bits.

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
        let (header, next) = match filter {
            Held::Plain(filter) => (filter.encode_header(), HEADER_ITERATOR),
            Held::Windowed(filter) => (filter.encode_header(), marked(filter, HEADER_ITERATOR as u64)),
        };
        reply_chunk(call, next, &header);
        return Ok(());
    }
    // A negative iterator, like one past the end, is the end, as RedisBloom answers.
    let Ok(iterator) = u64::try_from(iterator) else {
        reply_chunk(call, 0, &[]);
        return Ok(());
    };
    let (next, data) = match filter {
        Held::Plain(filter) => match filter.chunk_at(iterator - 1) {
            Some(chunk) => ((iterator as i64).saturating_add(chunk.len() as i64), chunk),
            None => (0, &[][..]),
        },
        Held::Windowed(filter) => {
            let position = filter.position_of(iterator).ok_or(BfError::DumpRotated)?;
            match position.checked_sub(1).and_then(|offset| filter.chunk_at(offset)) {
                Some(chunk) => (marked(filter, position + chunk.len() as u64), chunk),
                None => (0, &[][..]),
            }
        }
    };
    reply_chunk(call, next, data);
    Ok(())
}

/// A windowed filter's iterator for `position`, as the reply's integer.
fn marked(filter: &WindowFilter, position: u64) -> i64 {
    i64::try_from(filter.marked_iterator(position)).unwrap_or(0)
}

/// A SCANDUMP reply: the next iterator and a piece (the header, a chunk, or nothing at the end).
fn reply_chunk(call: &Call, next: i64, data: &[u8]) {
    call.reply_array(2);
    call.reply_integer(next);
    call.reply_bulk(data);
}

/// BF.LOADCHUNK key iterator data
pub fn loadchunk(call: &Call) -> Result<(), CommandError> {
    let iterator = parse::integer(call.arg(2)).ok_or(BfError::LoadChunkIteratorNotNumeric)?;
    let data = call.arg(3);
    let mut key = call.open_key_for_writing();
    let windowed_header =
        is_window_header(data) && u64::try_from(iterator).is_ok_and(WindowFilter::is_header_iterator);
    if iterator == HEADER_ITERATOR || windowed_header {
        if held(&key)?.is_some() {
            return Err(CommandError::ItemExists);
        }
        if windowed_header {
            let filter = WindowFilter::decode_header(data, call.max_filter_bytes())?;
            // A header's iterator carries the mark of the generations it describes.
            if filter.position_of(iterator as u64) != Some(HEADER_ITERATOR as u64) {
                return Err(CommandError::BadData);
            }
            key.store(filter)?;
            TIMER.note_call_key(call);
        } else {
            key.store(Filter::decode_header(data, call.max_filter_bytes())?)?;
        }
        call.notify(c"bf.reserve");
    } else {
        let filter = held_mut(&mut key)?.ok_or(CommandError::NotFound)?;
        // An iterator that cannot follow a chunk of this length is bad data, not an offset;
        // one equal to the length names the byte before the first, which RedisBloom looks for
        // and finds in no link.
        let iterator = u64::try_from(iterator).map_err(|_| CommandError::BadData)?;
        let offset = |position: u64| match position.checked_sub(data.len() as u64) {
            Some(0) => Err(CommandError::from(BfError::NoLink)),
            Some(after) => Ok(after - 1),
            None => Err(CommandError::BadData),
        };
        match filter {
            HeldMut::Plain(filter) => filter.write_chunk(offset(iterator)?, data)?,
            HeldMut::Windowed(filter) => {
                let position = filter.position_of(iterator).ok_or(BfError::LoadRotated)?;
                filter.write_chunk(offset(position)?, data)?;
            }
        }
        call.notify(c"bf.loadchunk");
    }
    call.reply_ok();
    call.replicate_verbatim();
    Ok(())
}
