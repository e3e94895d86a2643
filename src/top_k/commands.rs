//! The TOPK.* commands as Redis is told of them: name, handler, arity, flags, key use,
//! arguments, complexity and summary. The contract they keep is `docs/topk-commands.md`.

use super::{add, query, reserve};
use crate::shared::command::{command_table, Command, ADDS, CREATES, DESCRIBES, OVERWRITES, READS};
use crate::shared::docs::{
    argument, keyword, Argument, Kind, ITEM_INCREMENTS, KEY, KEY_ONLY, MANY_ITEMS, ROTATE_AT, WINDOW,
};
use crate::window::rotation::rotate_command;
use redbloom_core::top_k::window::WindowTopK;

const PARAMS: &[Argument] =
    &[argument(c"width", Kind::Integer), argument(c"depth", Kind::Integer), argument(c"decay", Kind::Double)];
const RESERVE: &[Argument] = &[
    KEY,
    argument(c"topk", Kind::Integer),
    Argument { optional: true, ..argument(c"params", Kind::Block(PARAMS)) },
    WINDOW,
];
const INCREMENT: &[Argument] = &[KEY, ITEM_INCREMENTS];
const LIST: &[Argument] = &[KEY, keyword(c"withcount", c"WITHCOUNT", Kind::Token)];

pub const COMMANDS: &[Command] = command_table! {
    category: c"topk";
    c"topk.reserve" => reserve::reserve {
        arity: -3, flags: c"write deny-oom", keys: CREATES, arguments: RESERVE,
        complexity: c"O(1)",
        summary: c"Creates a Top-K list of k items, of the whole stream or of a window",
    }
    c"topk.add" => add::add {
        arity: -3, flags: c"write deny-oom", keys: ADDS, arguments: MANY_ITEMS,
        complexity: c"O(n * d), where n is the number of items and d the depth",
        summary: c"Counts items, answering those they expelled from the list",
    }
    c"topk.incrby" => add::increment {
        arity: -4, flags: c"write deny-oom", keys: ADDS, arguments: INCREMENT,
        complexity: c"O(n * d), where n is the number of items and d the depth",
        summary: c"Counts items by increments, answering those they expelled from the list",
    }
    c"topk.query" => query::query {
        arity: -3, flags: c"readonly fast", keys: READS, arguments: MANY_ITEMS,
        complexity: c"O(n * k), where n is the number of items and k the list's size",
        summary: c"Tests whether items are in the list",
    }
    // RedisBloom flags it a write; it changes nothing, and a read-only replica should answer it.
    c"topk.count" => query::count {
        arity: -3, flags: c"readonly fast", keys: READS, arguments: MANY_ITEMS,
        complexity: c"O(n * d), where n is the number of items and d the depth",
        summary: c"Returns the estimated counts of items",
    }
    c"topk.list" => query::list {
        arity: -2, flags: c"readonly", keys: READS, arguments: LIST,
        complexity: c"O(k log k), where k is the list's size",
        summary: c"Returns the list, highest count first",
    }
    c"topk.info" => query::info {
        arity: 2, flags: c"readonly fast", keys: DESCRIBES, arguments: KEY_ONLY,
        complexity: c"O(1)",
        summary: c"Returns k, width, depth and decay of a list (and the window of a windowed one)",
    }
    // Sent by a master to its replicas and the AOF, never by a client: refused otherwise.
    c"topk.rotate" => rotate_command::<WindowTopK> {
        arity: 3, flags: c"write", keys: OVERWRITES, arguments: ROTATE_AT,
        complexity: c"O(k * g * d), where g is the number of generations and d the depth",
        summary: c"Applies a master's rotation of a windowed Top-K list (replication only)",
    }
};
