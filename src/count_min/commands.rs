//! The CMS.* commands as Redis is told of them: name, handler, arity, flags, key use,
//! arguments, complexity and summary. The contract they keep is `docs/cms-commands.md`.

use super::{create, query, update};
use crate::shared::command::{command_table, Command, ADDS, CREATES, DESCRIBES, MERGES, OVERWRITES, READS};
use crate::shared::docs::{
    argument, keyword, Argument, Kind, ITEM_INCREMENTS, KEY, KEY_ONLY, MANY_ITEMS, ROTATE_AT, WINDOW,
};
use crate::window::rotation::rotate_command;
use redbloom_core::count_min::window::WindowedCountMin;

const CELL_SIZE: Argument = keyword(c"cell_size", c"CELL_SIZE", Kind::Integer);
const BY_DIMENSIONS: &[Argument] =
    &[KEY, argument(c"width", Kind::Integer), argument(c"depth", Kind::Integer), CELL_SIZE, WINDOW];
const BY_PROBABILITY: &[Argument] =
    &[KEY, argument(c"error", Kind::Double), argument(c"probability", Kind::Double), CELL_SIZE, WINDOW];
const INCREMENT: &[Argument] = &[KEY, ITEM_INCREMENTS];
const MERGE: &[Argument] = &[
    argument(c"destination", Kind::Key),
    argument(c"numKeys", Kind::Integer),
    Argument { multiple: true, ..argument(c"source", Kind::SourceKey) },
    Argument { multiple: true, ..keyword(c"weight", c"WEIGHTS", Kind::Integer) },
];

pub const COMMANDS: &[Command] = command_table! {
    category: c"cms";
    c"cms.initbydim" => create::by_dimensions {
        arity: -4, flags: c"write deny-oom", keys: CREATES, arguments: BY_DIMENSIONS,
        complexity: c"O(1)",
        summary: c"Creates a Count-Min sketch of the given width and depth",
    }
    c"cms.initbyprob" => create::by_probability {
        arity: -4, flags: c"write deny-oom", keys: CREATES, arguments: BY_PROBABILITY,
        complexity: c"O(1)",
        summary: c"Creates a Count-Min sketch sized for an error and a probability",
    }
    c"cms.incrby" => update::increment {
        arity: -4, flags: c"write deny-oom", keys: ADDS, arguments: INCREMENT,
        complexity: c"O(n * d), where n is the number of items and d the depth",
        summary: c"Increases (or decreases) the counts of items",
    }
    c"cms.query" => query::query {
        arity: -3, flags: c"readonly fast", keys: READS, arguments: MANY_ITEMS,
        complexity: c"O(n * d), where n is the number of items and d the depth",
        summary: c"Returns the counts of items",
    }
    c"cms.merge" => update::merge {
        arity: -4, flags: c"write deny-oom", keys: MERGES, arguments: MERGE,
        complexity: c"O(k * w * d), where k is the number of sketches, w the width and d the depth",
        summary: c"Merges sketches into one, with weights",
    }
    c"cms.info" => query::info {
        arity: 2, flags: c"readonly fast", keys: DESCRIBES, arguments: KEY_ONLY,
        complexity: c"O(1)",
        summary: c"Returns width, depth, total count and cell size of a sketch",
    }
    c"cms.rotate" => rotate_command::<WindowedCountMin> {
        arity: 3, flags: c"write", keys: OVERWRITES, arguments: ROTATE_AT,
        complexity: c"O(g * w * d), where g is the number of generations, w the width and d the depth",
        summary: c"Applies a master's rotation of a windowed sketch (replication only)",
    }
};
