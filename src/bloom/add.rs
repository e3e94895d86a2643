//! BF.ADD, BF.MADD and BF.INSERT: add items, creating the filter when the key is missing.

use super::datatype::METRICS;
use super::held::{held_mut, HeldMut};
use super::parse::{self, Creation};
use super::reserve::{create, defaults, replicate_creation, replicate_items};
use crate::shared::call::Call;
use crate::shared::config;
use crate::shared::error::CommandError;
use crate::shared::metrics::{self, Measured};
use crate::window::rotation::{note_if_opening, rotate_for_write};
use redbloom_core::bloom::window::WindowFilter;
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
/// [WINDOW ms [GENERATIONS g]] ITEMS item ...`
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
    let created = if key.is_empty() {
        let creation = creation.ok_or(CommandError::NotFound)?;
        Some(create(call, &mut key, &creation)?)
    } else {
        None
    };
    let added = match held_mut(&mut key)?.ok_or(CommandError::Internal)? {
        HeldMut::Plain(filter) => add_to(call, filter, first_item, replies, budget),
        HeldMut::Windowed(filter) => {
            // A filter this call created starts at the clock's reading already: a second
            // reading could fall in the next span and replicate a rotation ahead of the
            // filter's creation, which the replica would then create a span earlier.
            if created.is_none() {
                rotate_for_write(call, filter);
            } else {
                note_if_opening(call, filter);
            }
            add_to(call, filter, first_item, replies, budget)
        }
    };

    // Replicas and the AOF replay without a memory budget: if this server stopped at an
    // error, they must get only the items it processed, or they would add the rest.
    let items = first_item..first_item + added.processed;
    let stopped_early = items.end < call.argc();
    if let Some(header) = created {
        call.notify(c"bf.reserve");
        replicate_creation(call, &header, items);
    } else if added.changed && stopped_early {
        replicate_items(call, items);
    } else if added.changed {
        call.replicate_verbatim();
    }
    if added.changed {
        call.notify(event);
    }
    Ok(())
}

/// What an add did.
struct Added {
    /// Items processed without error; an error ends the command there.
    processed: usize,
    /// Whether the filter changed.
    changed: bool,
}

/// Adds the items and answers each, to either kind of filter.
fn add_to<F: Adds>(
    call: &Call,
    filter: &mut F,
    first_item: usize,
    replies: Replies,
    budget: impl Fn() -> usize + Copy,
) -> Added {
    let before = filter.footprint();
    let took_before = filter.links_took();
    let mut any_new = false;
    let mut processed = 0;
    let mut answer = |result: Result<bool, FilterError>| match result {
        Ok(new) => {
            any_new |= new;
            processed += 1;
            call.reply_bool(new);
        }
        Err(error) => {
            if error == FilterError::Full {
                METRICS.count_full_errors(1);
            }
            call.reply_error(error.into());
        }
    };
    if replies == Replies::Single {
        answer(filter.add(call.arg(first_item), budget));
    } else {
        let mut answered = 0;
        filter.add_each(call.args_from(first_item), budget, |result| {
            // Started with the first answer, once the batch is hashed and its cache lines are
            // on their way: the reply's own work then overlaps the loads.
            if answered == 0 {
                call.reply_array_postponed();
            }
            answered += 1;
            answer(result);
        });
        call.set_array_length(answered);
    }
    METRICS.count_adds(processed);
    metrics::changed(before, filter);
    Added { processed, changed: any_new || filter.links_took() != took_before }
}

/// What an add needs of either kind of filter.
trait Adds: Measured {
    /// The adds its links took: what changes when an add changes the filter, also one that
    /// answers 0 (a windowed filter restarts the window of an item an older generation holds).
    fn links_took(&self) -> u64;
    /// Adds one item: whether it was new, or why it could not be added.
    fn add(&mut self, item: &[u8], budget: impl Fn() -> usize) -> Result<bool, FilterError>;
    /// Adds a batch, hashed together, each answer to `answer`; the first error ends it.
    fn add_each<'a>(
        &mut self,
        items: impl Iterator<Item = &'a [u8]>,
        budget: impl Fn() -> usize,
        answer: impl FnMut(Result<bool, FilterError>),
    );
}

/// Both kinds of filter add through inherent methods of the same names and shapes.
macro_rules! adds {
    ($filter:ty, links_took: $links_took:path) => {
        impl Adds for $filter {
            fn links_took(&self) -> u64 {
                $links_took(self)
            }

            fn add(&mut self, item: &[u8], budget: impl Fn() -> usize) -> Result<bool, FilterError> {
                self.insert(item, budget)
            }

            fn add_each<'a>(
                &mut self,
                items: impl Iterator<Item = &'a [u8]>,
                budget: impl Fn() -> usize,
                answer: impl FnMut(Result<bool, FilterError>),
            ) {
                self.insert_each(items, budget, answer);
            }
        }
    };
}

adds!(Filter, links_took: Filter::items);
adds!(WindowFilter, links_took: WindowFilter::links_took);
