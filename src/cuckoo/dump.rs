//! CF.SCANDUMP and CF.LOADCHUNK: a filter moved in pieces, RedisBloom's header and chunks.

use super::error::CfError;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::shared::parse;
use redbloom_core::cuckoo::CuckooFilter;

/// CF.SCANDUMP key iterator: `[1, header]` from 0, then `[next, chunk]`, and `[0, nil]` at
/// the end. A filter holding no items dumps nothing, as in RedisBloom.
pub fn scandump(call: &Call) -> Result<(), CommandError> {
    let iterator =
        parse::integer(call.arg(2)).filter(|&iterator| iterator >= 0).ok_or(CfError::InvalidPosition)?;
    let key = call.open_key();
    let filter = key.get::<CuckooFilter>()?.ok_or(CommandError::NotFound)?;
    let header = filter.header();
    let piece = match iterator as u64 {
        _ if filter.items() == 0 => None,
        0 => Some((1, header.as_bytes())),
        iterator => filter.chunk(iterator),
    };
    call.reply_array(2);
    if let Some((next, bytes)) = piece {
        call.reply_integer(next as i64);
        call.reply_bulk(bytes);
    } else {
        call.reply_integer(0);
        call.reply_null();
    }
    Ok(())
}

/// CF.LOADCHUNK key iterator data: iterator 1 creates the filter from a header (RedisBloom's,
/// or the longer one of a wide filter), any other writes a chunk where SCANDUMP found it.
/// Unlike RedisBloom, the chunks are replicated too, so that a replica gets the filter and not
/// only its empty shape.
pub fn loadchunk(call: &Call) -> Result<(), CommandError> {
    let iterator =
        parse::integer(call.arg(2)).filter(|&iterator| iterator != 0).ok_or(CfError::InvalidPosition)?;
    let data = call.arg(3);
    let mut key = call.open_key_for_writing();
    if iterator == 1 {
        if key.get::<CuckooFilter>()?.is_some() {
            return Err(CommandError::ItemExists);
        }
        if CuckooFilter::header_width(data).is_none() {
            return Err(CfError::InvalidHeader.into());
        }
        let filter =
            CuckooFilter::from_header(data, call.max_filter_bytes()).map_err(|_| CfError::CannotCreate)?;
        key.store(filter)?;
        // A header creates the filter, as BF.LOADCHUNK's does.
        call.notify(c"cf.reserve");
    } else {
        let filter = key.get_mut::<CuckooFilter>()?.ok_or(CommandError::NotFound)?;
        let written = u64::try_from(iterator).is_ok_and(|iterator| filter.load_chunk(iterator, data));
        if !written {
            return Err(CfError::CannotLoadChunk.into());
        }
        call.notify(c"cf.loadchunk");
    }
    call.replicate_verbatim();
    call.reply_ok();
    Ok(())
}
