//! CF.ADD, CF.ADDNX, CF.INSERT and CF.INSERTNX: add items, creating the filter when the key is
//! missing. The filter is deterministic, so replicas and the AOF build the same bytes from
//! the same writes: a new filter reaches them as its header (`reserve.rs`), CF.ADD and
//! CF.ADDNX as sent, CF.INSERT and CF.INSERTNX as sent when they had no option and found room
//! for every item, else as a plain CF.INSERT of the items they added.

use super::datatype::METRICS;
use super::error::CfError;
use super::parse::{self, CuckooInsert};
use super::reserve::{defaults, filter_or_create, limits};
use crate::shared::call::{Call, Replicated};
use crate::shared::error::CommandError;
use crate::shared::metrics::{self, Measured};
use redbloom_core::cuckoo::Inserted;
use std::ffi::CStr;

/// CF.ADD key item: stores the item (again, if it is there already).
pub fn add(call: &Call) -> Result<(), CommandError> {
    add_one(call, false, c"cf.add")
}

/// CF.ADDNX key item: 0 when the item tests present.
pub fn addnx(call: &Call) -> Result<(), CommandError> {
    add_one(call, true, c"cf.addnx")
}

fn add_one(call: &Call, only_new: bool, event: &CStr) -> Result<(), CommandError> {
    let mut key = call.open_key_for_writing();
    let filter = filter_or_create(call, &mut key, defaults(), true)?.ok_or(CommandError::Internal)?;
    let limits = limits(call);
    if filter.at_sub_filter_limit(limits.max_sub_filters) {
        METRICS.count_full_errors(1);
        return Err(CfError::MaxExpansions.into());
    }
    let item = filter.hash_and_prefetch(call.arg(2));
    if only_new && filter.contains(item) {
        call.replicate_verbatim();
        call.reply_bool(false);
        return Ok(());
    }
    let before = filter.footprint();
    match filter.insert(item, limits) {
        Inserted::Added => {
            METRICS.count_adds(1);
            metrics::changed(before, &*filter);
            call.replicate_verbatim();
            call.notify(event);
            call.reply_bool(true);
            Ok(())
        }
        Inserted::NoRoom => {
            METRICS.count_full_errors(1);
            Err(CfError::Full.into())
        }
    }
}

/// `CF.INSERT key [CAPACITY c] [NOCREATE] [ERROR rate] ITEMS item [item ...]`: per item 1, or
/// -1 for no room (false under RESP3).
pub fn insert(call: &Call) -> Result<(), CommandError> {
    insert_items(call, false, c"cf.insert")
}

/// CF.INSERTNX: per item 1, 0 when it tests present, -1 for no room, integers under both
/// protocols.
pub fn insertnx(call: &Call) -> Result<(), CommandError> {
    insert_items(call, true, c"cf.insertnx")
}

/// Where the items start in `CF.INSERT key ITEMS item ...`, a command with no option.
const ITEMS_WITHOUT_OPTIONS: usize = 3;

fn insert_items(call: &Call, only_new: bool, event: &CStr) -> Result<(), CommandError> {
    let CuckooInsert { params, no_create, first_item } = parse::insert(&call.args(), defaults())?;
    let mut key = call.open_key_for_writing();
    let filter = filter_or_create(call, &mut key, params, !no_create)?.ok_or(CommandError::NotFound)?;
    let limits = limits(call);
    if filter.at_sub_filter_limit(limits.max_sub_filters) {
        METRICS.count_full_errors(call.argc() - first_item);
        return Err(CfError::MaxExpansions.into());
    }
    let before = filter.footprint();
    let items = filter.hash_and_prefetch_all(call.args_from(first_item));
    let resp3 = call.is_resp3();
    let mut added = Vec::new();
    // Items the filter had no room for.
    let mut refused = 0;
    call.reply_array(items.len());
    for (index, item) in items.into_iter().enumerate() {
        let outcome =
            if only_new { filter.insert_new(item, limits) } else { Some(filter.insert(item, limits)) };
        let answer = match outcome {
            Some(Inserted::Added) => {
                added.push(call.arg(first_item + index));
                1
            }
            Some(Inserted::NoRoom) => {
                refused += 1;
                -1
            }
            None => 0,
        };
        // RedisBloom answers CF.INSERT with booleans under RESP3, CF.INSERTNX with integers.
        if resp3 && !only_new {
            call.reply_bool(answer == 1);
        } else {
            call.reply_integer(answer);
        }
    }
    METRICS.count_adds(added.len());
    METRICS.count_full_errors(refused);
    metrics::changed(before, &*filter);
    // Replicas get the items that were added, as a plain CF.INSERT, which lands each where it
    // landed here: not the others, for no room here may be room there (replicas have no
    // budget), nor the options, which only shaped a new filter (replicated as its header) and
    // which a replica would check against its own defaults. A command without options that
    // found room for everything is that already, and goes as it came: rebuilding it costs a
    // string per item.
    if added.is_empty() {
        return Ok(());
    }
    if refused == 0 && first_item == ITEMS_WITHOUT_OPTIONS {
        call.replicate_verbatim();
    } else {
        let mut args = vec![Replicated::Argument(1), Replicated::Bytes(b"ITEMS")];
        args.extend(added.iter().map(|&item| Replicated::Bytes(item)));
        call.replicate(c"CF.INSERT", &args);
    }
    call.notify(event);
    Ok(())
}
