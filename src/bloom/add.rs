//! BF.ADD, BF.MADD and BF.INSERT: add items, creating the filter when the key is missing.

use super::datatype::METRICS;
use super::parse::{self, Creation};
use super::reserve::{defaults, log_refusal, replicate_creation};
use super::window;
use crate::shared::call::Call;
use crate::shared::config;
use crate::shared::error::CommandError;
use crate::shared::metrics::{self, Measured};
use redbloom_core::bloom::{Filter, FilterError};
use std::cell::OnceCell;
use std::ffi::CStr;

/// How the answers are sent: one value (BF.ADD) or an array with one value per item.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Replies {
    Single,
    Array,
}

/// BF.ADD key item
pub fn add(call: &Call) -> Result<(), CommandError> {
    add_items(call, 2, Some(defaults()), c"bf.add", Replies::Single)
}

/// BF.MADD key item [item ...]
pub fn madd(call: &Call) -> Result<(), CommandError> {
    add_items(call, 2, Some(defaults()), c"bf.madd", Replies::Array)
}

/// `BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] [FORMAT f]
/// ITEMS item ...`
pub fn insert(call: &Call) -> Result<(), CommandError> {
    let parsed = parse::insert(&call.args(), defaults())?;
    if let Some(asked) = parsed.capped_rate {
        config::log_capped(asked);
    }
    add_items(call, parsed.first_item, parsed.creation, c"bf.insert", Replies::Array)
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
) -> Result<(), CommandError> {
    let budget = OnceCell::new();
    let budget = || *budget.get_or_init(|| call.max_filter_bytes());
    let mut key = call.open_key_for_writing();
    if window::holds(&key) {
        return add_to_window(call, &mut key, first_item, None, event, replies);
    }
    if let Some(window) = creation.and_then(|creation| creation.window) {
        if key.get::<Filter>()?.is_none() {
            let creation = creation.ok_or(CommandError::Internal)?;
            let header = window::create(call, &mut key, &creation, window)?;
            return add_to_window(call, &mut key, first_item, Some(header), event, replies);
        }
    }
    let created = if key.get::<Filter>()?.is_some() {
        None
    } else {
        let creation = creation.ok_or(CommandError::NotFound)?;
        let filter = creation.try_build(budget()).inspect_err(|_| log_refusal(&creation))?;
        let header = filter.encode_header();
        key.store(filter)?;
        Some(header)
    };
    let filter = key.get_mut::<Filter>()?.ok_or(CommandError::Internal)?;
    let before = filter.footprint();
    let count_error = |error: FilterError| {
        if error == FilterError::Full {
            METRICS.count_full_errors(1);
        }
    };

    let mut added = false;
    // Items processed without error; an error ends the command there.
    let mut succeeded = 0;
    if replies == Replies::Single {
        match filter.insert(call.arg(first_item), budget) {
            Ok(answer) => {
                added = answer;
                succeeded = 1;
                call.reply_bool(answer);
            }
            Err(error) => {
                count_error(error);
                call.reply_error(error.into());
            }
        }
    } else {
        let mut answered = 0;
        filter.insert_each(call.args_from(first_item), budget, |result| {
            // Started with the first answer, once the batch is hashed and its cache lines are
            // on their way: the reply's own work then overlaps the loads.
            if answered == 0 {
                call.reply_array_postponed();
            }
            answered += 1;
            match result {
                Ok(answer) => {
                    added |= answer;
                    succeeded += 1;
                    call.reply_bool(answer);
                }
                Err(error) => {
                    count_error(error);
                    call.reply_error(error.into());
                }
            }
        });
        call.set_array_length(answered);
    }
    METRICS.count_adds(succeeded);
    metrics::changed(before, filter);

    // Replicas and the AOF replay without a memory budget: if this server stopped at an
    // error, they must get only the items it processed, or they would add the rest.
    let items = first_item..first_item + succeeded;
    let stopped_early = items.end < call.argc();
    if let Some(header) = created {
        call.notify(c"bf.reserve");
        replicate_creation(call, &header, items);
    } else if added && stopped_early {
        let mut args = vec![call.arg(1)];
        args.extend(items.map(|index| call.arg(index)));
        call.replicate("BF.MADD", &args);
    } else if added {
        call.replicate_verbatim();
    }
    if added {
        call.notify(event);
    }
    Ok(())
}

/// The same for a windowed filter. Every item processed changed it (an item already present
/// has its window restarted), so the command is replicated whatever it answered.
fn add_to_window(
    call: &Call,
    key: &mut crate::shared::keyspace::Key,
    first_item: usize,
    created: Option<Vec<u8>>,
    event: &CStr,
    replies: Replies,
) -> Result<(), CommandError> {
    let processed = window::add_items(call, key, first_item, replies == Replies::Single)?;
    let items = first_item..first_item + processed;
    if let Some(header) = created {
        call.notify(c"bf.reserve");
        replicate_creation(call, &header, items);
    } else if items.end < call.argc() {
        if !items.is_empty() {
            let mut args = vec![call.arg(1)];
            args.extend(items.map(|index| call.arg(index)));
            call.replicate("BF.MADD", &args);
        }
    } else {
        call.replicate_verbatim();
    }
    if processed > 0 {
        call.notify(event);
    }
    Ok(())
}
