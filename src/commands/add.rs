//! BF.ADD, BF.MADD and BF.INSERT: add items, creating the filter when the key is missing.

use super::parse::{self, Creation};
use super::reserve::log_refusal;
use super::{BfError, Call};
use crate::config;
use crate::filter::{BloomFilter, ItemHash};
use std::cell::OnceCell;
use std::ffi::CStr;

/// How the answers are sent: one value (BF.ADD) or an array with one value per item.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Replies {
    Single,
    Array,
}

/// BF.ADD key item
pub fn add(call: &Call) -> Result<(), BfError> {
    add_items(call, 2, Some(config::defaults().into()), c"bf.add", Replies::Single)
}

/// BF.MADD key item [item ...]
pub fn madd(call: &Call) -> Result<(), BfError> {
    add_items(call, 2, Some(config::defaults().into()), c"bf.madd", Replies::Array)
}

/// BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS item ...
pub fn insert(call: &Call) -> Result<(), BfError> {
    let options = parse::insert_options(call, config::defaults())?;
    add_items(call, options.first_item, options.creation, c"bf.insert", Replies::Array)
}

/// Adds the items from argument `first_item` on, creating the filter from `creation` when
/// the key is missing (`None`: answer "not found" instead), and answers one value per item.
/// The first error ends the answers: the items after it are not processed. Notifies and
/// replicates what changed.
fn add_items(
    call: &Call,
    first_item: usize,
    creation: Option<Creation>,
    event: &CStr,
    replies: Replies,
) -> Result<(), BfError> {
    let budget = OnceCell::new();
    let budget = || *budget.get_or_init(|| call.max_filter_bytes());
    let mut key = call.open_key_for_writing();
    let created = match key.filter()? {
        Some(_) => None,
        None => {
            let creation = creation.ok_or(BfError::NotFound)?;
            let filter =
                BloomFilter::try_new(creation.capacity, creation.error_rate, creation.expansion, budget())
                    .inspect_err(|_| log_refusal(&creation))?;
            key.store(filter)?;
            Some(creation)
        }
    };
    let filter = key.filter_mut()?.ok_or(BfError::Internal)?;

    let mut added = false;
    if replies == Replies::Single {
        let result = filter.insert_hash(&ItemHash::of(call.arg(first_item)), budget);
        added = result == Ok(true);
        match result {
            Ok(answer) => call.reply_bool(answer),
            Err(error) => call.reply_error(error.into()),
        }
    } else {
        // Hash everything first and ask for the cache lines, so that the memory loads of a
        // batch overlap instead of queueing one after another.
        let hashes: Vec<ItemHash> = call.args_from(first_item).map(ItemHash::of).collect();
        for hash in &hashes {
            filter.prefetch(hash);
        }
        call.reply_array_postponed();
        let mut answered = 0;
        for hash in &hashes {
            answered += 1;
            match filter.insert_hash(hash, budget) {
                Ok(answer) => {
                    added |= answer;
                    call.reply_bool(answer);
                }
                Err(error) => {
                    call.reply_error(error.into());
                    break;
                }
            }
        }
        call.set_array_length(answered);
    }

    if let Some(creation) = created {
        call.notify(c"bf.reserve");
        replicate_with_parameters(call, &creation, first_item);
    } else if added {
        call.replicate_verbatim();
    }
    if added {
        call.notify(event);
    }
    Ok(())
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
