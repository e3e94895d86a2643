//! TOPK.ADD and TOPK.INCRBY: each item's reply is the item it expelled from the list, or nil.

use super::datatype::METRICS;
use super::error::TopKError;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::shared::parse;
use redbloom_core::top_k::{Expelled, TopK, MAX_INCREMENT};

/// TOPK.ADD key item [item ...].
pub fn add(call: &Call) -> Result<(), CommandError> {
    let items: Vec<(&[u8], u32)> = call.args_from(2).map(|item| (item, 1)).collect();
    add_all(call, &items, c"topk.add")
}

/// TOPK.INCRBY key item increment [item increment ...]: every increment is read before
/// anything changes, and a bad one is the command's error (RedisBloom applies the pairs
/// before it, then sends fewer replies than it announced, which desynchronises the client).
pub fn increment(call: &Call) -> Result<(), CommandError> {
    if !call.argc().is_multiple_of(2) {
        return Err(CommandError::WrongArity);
    }
    let mut items = Vec::with_capacity((call.argc() - 2) / 2);
    for index in (2..call.argc()).step_by(2) {
        let increment = parse::integer(call.arg(index + 1))
            .and_then(|value| u32::try_from(value).ok())
            .filter(|&value| value <= MAX_INCREMENT)
            .ok_or(TopKError::BadIncrement)?;
        items.push((call.arg(index), increment));
    }
    add_all(call, &items, c"topk.incrby")
}

fn add_all(call: &Call, items: &[(&[u8], u32)], event: &std::ffi::CStr) -> Result<(), CommandError> {
    let mut key = call.open_key_for_writing();
    let sketch = key.get_mut::<TopK>()?.ok_or(TopKError::KeyMissing)?;
    let mut expelled = Vec::with_capacity(items.len());
    // A batch pays for setting up its prefetching; one item does not need it.
    if let [(item, increment)] = items {
        expelled.push(sketch.add(item, *increment));
    } else {
        sketch.add_all(items.iter().copied(), |result: Expelled| expelled.push(result));
    }
    METRICS.count_adds(items.len());
    call.replicate_verbatim();
    call.notify(event);
    call.reply_array(expelled.len());
    for result in expelled {
        match result {
            Ok(Some(item)) => call.reply_bulk(&item),
            // An item whose copy found no memory was counted but not listed: it expelled nothing.
            Ok(None) | Err(_) => call.reply_null(),
        }
    }
    Ok(())
}
