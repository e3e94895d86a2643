//! TOPK.ADD and TOPK.INCRBY: each item's reply is the item it expelled from the list, or nil.
//! Each is answered as it is counted: TOPK.ADD collects nothing, so one item costs no
//! allocation unless it expels another. A windowed list is rotated to the master's clock
//! first, and answers what its window's list expelled.

use super::datatype::METRICS;
use super::error::TopKError;
use super::held::{held_mut, HeldMut};
use super::query::as_redisbloom_replies;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::shared::metrics::{self, Measured};
use crate::shared::parse;
use crate::window::rotation::rotate_for_write;
use redbloom_core::top_k::{Expelled, MAX_INCREMENT};

/// TOPK.ADD key item [item ...].
pub fn add(call: &Call) -> Result<(), CommandError> {
    add_all(call, || Ok(call.args_from(2).map(|item| (item, 1))), c"topk.add")
}

/// TOPK.INCRBY key item increment [item increment ...]: the key is checked first, as RedisBloom
/// checks it; then every increment is read before anything changes, and a bad one is the
/// command's error (RedisBloom applies the pairs before it, then sends fewer replies than it
/// announced, which desynchronises the client).
pub fn increment(call: &Call) -> Result<(), CommandError> {
    if !call.argc().is_multiple_of(2) {
        return Err(CommandError::WrongArity);
    }
    let pairs = || {
        let pairs: Vec<(&[u8], u32)> = call
            .pairs_from(2)
            .map(|(item, increment)| Some((item, increment_of(increment)?)))
            .collect::<Option<_>>()
            .ok_or(TopKError::BadIncrement)?;
        Ok(pairs.into_iter())
    };
    add_all(call, pairs, c"topk.incrby")
}

/// An increment as TOPK.INCRBY takes it: an integer from 0 to [`MAX_INCREMENT`].
fn increment_of(text: &[u8]) -> Option<u32> {
    parse::integer(text).and_then(|value| u32::try_from(value).ok()).filter(|&value| value <= MAX_INCREMENT)
}

/// The items that `items_of` reads, once the key is found to hold a list.
fn add_all<'a, I: ExactSizeIterator<Item = (&'a [u8], u32)>>(
    call: &Call,
    items_of: impl FnOnce() -> Result<I, CommandError>,
    event: &std::ffi::CStr,
) -> Result<(), CommandError> {
    let mut key = call.open_key_for_writing();
    let reply = |result: Expelled| match result {
        Ok(Some(item)) => call.reply_bulk(as_redisbloom_replies(&item)),
        // An item whose copy found no memory was counted but not listed: it expelled nothing.
        Ok(None) | Err(_) => call.reply_null(),
    };
    let sketch = held_mut(&mut key)?.ok_or(TopKError::KeyMissing)?;
    let mut items = items_of()?;
    let count = items.len();
    match sketch {
        HeldMut::Plain(sketch) => {
            call.reply_array(count);
            // A batch pays for setting up its prefetching; one item does not need it.
            match (count, items.next()) {
                (1, Some((item, increment))) => reply(sketch.add(item, increment)),
                (_, first) => sketch.add_all(first.into_iter().chain(items), reply),
            }
        }
        HeldMut::Windowed(sketch) => {
            rotate_for_write(call, sketch);
            let before = sketch.footprint();
            // The span's generation is opened before any reply: without memory for it, the
            // command answers an error and counts nothing.
            sketch.open_current().map_err(|_| TopKError::InsufficientMemory)?;
            call.reply_array(count);
            match (count, items.next()) {
                (1, Some((item, increment))) => reply(sketch.add(item, increment)),
                (_, first) => sketch.add_all(first.into_iter().chain(items), reply),
            }
            metrics::changed(before, sketch);
        }
    }
    METRICS.count_adds(count);
    call.replicate_verbatim();
    call.notify(event);
    Ok(())
}
