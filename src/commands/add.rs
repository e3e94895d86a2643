//! BF.ADD, BF.MADD and BF.INSERT: add items, creating the filter when the key is missing.

use super::parse::{self, Creation};
use super::reserve::log_refusal;
use super::{BfError, Call};
use crate::config;
use crate::filter::{BloomFilter, FilterError, ItemHash};
use std::ffi::CStr;

/// BF.ADD key item
pub fn add(call: &Call) -> Result<(), BfError> {
    let outcome = add_items(call, 2, Some(config::defaults().into()), c"bf.add")?;
    match outcome.first() {
        Some(Ok(added)) => call.reply_bool(*added),
        Some(Err(error)) => call.reply_error((*error).into()),
        None => return Err(BfError::Internal),
    }
    Ok(())
}

/// BF.MADD key item [item ...]
pub fn madd(call: &Call) -> Result<(), BfError> {
    let outcome = add_items(call, 2, Some(config::defaults().into()), c"bf.madd")?;
    reply_each(call, &outcome);
    Ok(())
}

/// BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS item ...
pub fn insert(call: &Call) -> Result<(), BfError> {
    let options = parse::insert_options(call, config::defaults())?;
    let outcome = add_items(call, options.first_item, options.creation, c"bf.insert")?;
    reply_each(call, &outcome);
    Ok(())
}

/// One answer per item; the first error ends the array, and the items after it were not
/// processed.
fn reply_each(call: &Call, outcome: &[Result<bool, FilterError>]) {
    call.reply_array(outcome.len());
    for result in outcome {
        match result {
            Ok(added) => call.reply_bool(*added),
            Err(error) => call.reply_error((*error).into()),
        }
    }
}

/// Adds the items from argument `first_item` on, creating the filter from `creation` when
/// the key is missing (`None`: answer "not found" instead). Answers one result per item
/// processed; processing stops after the first error. Notifies and replicates what changed.
fn add_items(
    call: &Call,
    first_item: usize,
    creation: Option<Creation>,
    event: &CStr,
) -> Result<Vec<Result<bool, FilterError>>, BfError> {
    let max_bytes = call.max_filter_bytes();
    let mut key = call.open_key_for_writing();
    let created = match key.filter()? {
        Some(_) => None,
        None => {
            let creation = creation.ok_or(BfError::NotFound)?;
            let filter =
                BloomFilter::try_new(creation.capacity, creation.error_rate, creation.expansion, max_bytes)
                    .inspect_err(|_| log_refusal(&creation))?;
            key.store(filter)?;
            Some(creation)
        }
    };
    let filter = key.filter_mut()?.ok_or(BfError::Internal)?;

    // Hash everything first and ask for the cache lines, so that the memory loads of a
    // batch overlap instead of queueing one after another.
    let hashes: Vec<ItemHash> = call.args_from(first_item).map(ItemHash::of).collect();
    for hash in &hashes {
        filter.prefetch(hash);
    }
    let mut outcome = Vec::with_capacity(hashes.len());
    for hash in &hashes {
        let result = filter.insert_hash(hash, max_bytes);
        outcome.push(result);
        if result.is_err() {
            break;
        }
    }

    let added = outcome.contains(&Ok(true));
    if let Some(creation) = created {
        call.notify(c"bf.reserve");
        replicate_with_parameters(call, &creation, first_item);
    } else if added {
        call.replicate_verbatim();
    }
    if added {
        call.notify(event);
    }
    Ok(outcome)
}

/// A filter made from this server's defaults is replicated as a BF.INSERT that names every
/// parameter, so that a replica with other defaults builds the very same filter.
fn replicate_with_parameters(call: &Call, creation: &Creation, first_item: usize) {
    let options = creation.explicit_options();
    let mut args: Vec<&[u8]> = Vec::with_capacity(options.len() + 2 + call.argc() - first_item);
    args.push(call.arg(1));
    args.extend(options.iter().map(Vec::as_slice));
    args.push(b"ITEMS");
    args.extend(call.args_from(first_item));
    call.replicate("BF.INSERT", &args);
}
