//! The BF.* commands as Redis is told of them: name, handler, arity, flags, key use,
//! arguments, complexity and summary. The contract they keep is `docs/bf-commands.md`.

use super::{add, dump, info, query, reserve};
use crate::shared::command::{command_table, Command, ADDS, CREATES, DESCRIBES, OVERWRITES, READS};
use crate::shared::docs::{
    argument, choice, keyword, Argument, Kind, CAPACITY, ERROR, EXPANSION, ITEMS, ITEMS_KEYWORD, KEY,
    KEY_ONLY, LOADCHUNK, MANY_ITEMS, NOCREATE, ONE_ITEM, ROTATE_AT, SCANDUMP, WINDOW,
};
use crate::window::rotation::rotate_command;
use redbloom_core::bloom::window::WindowFilter;

const FORMATS: &[Argument] = &[choice(c"redbloom", c"REDBLOOM"), choice(c"redisbloom", c"REDISBLOOM")];
const FORMAT: Argument = keyword(c"format", c"FORMAT", Kind::OneOf(FORMATS));
const NONSCALING: Argument = keyword(c"nonscaling", c"NONSCALING", Kind::Token);
const INFO_FIELDS: &[Argument] = &[
    choice(c"capacity", c"CAPACITY"),
    choice(c"size", c"SIZE"),
    choice(c"filters", c"FILTERS"),
    choice(c"items", c"ITEMS"),
    choice(c"expansion", c"EXPANSION"),
    choice(c"error", c"ERROR"),
];

const RESERVE: &[Argument] = &[
    KEY,
    argument(c"error_rate", Kind::Double),
    argument(c"capacity", Kind::Integer),
    EXPANSION,
    NONSCALING,
    FORMAT,
    WINDOW,
];
const INSERT: &[Argument] =
    &[KEY, CAPACITY, ERROR, EXPANSION, NOCREATE, NONSCALING, FORMAT, WINDOW, ITEMS_KEYWORD, ITEMS];
const INFO: &[Argument] =
    &[KEY, Argument { token: None, ..keyword(c"single_value", c"", Kind::OneOf(INFO_FIELDS)) }];

pub const COMMANDS: &[Command] = command_table! {
    category: c"bloom";
    c"bf.reserve" => reserve::reserve {
        arity: -4, flags: c"write deny-oom", keys: CREATES, arguments: RESERVE,
        complexity: c"O(1)",
        summary: c"Creates an empty Bloom filter",
    }
    c"bf.add" => add::add {
        arity: 3, flags: c"write deny-oom", keys: ADDS, arguments: ONE_ITEM,
        complexity: c"O(s), where s is the number of sub-filters: one cache line each (k bits each in RedisBloom's format)",
        summary: c"Adds an item to a Bloom filter",
    }
    c"bf.madd" => add::madd {
        arity: -3, flags: c"write deny-oom", keys: ADDS, arguments: MANY_ITEMS,
        complexity: c"O(n * s), where n is the number of items and s the number of sub-filters",
        summary: c"Adds items to a Bloom filter",
    }
    c"bf.insert" => add::insert {
        arity: -4, flags: c"write deny-oom", keys: ADDS, arguments: INSERT,
        complexity: c"O(n * s), where n is the number of items and s the number of sub-filters",
        summary: c"Adds items, creating the filter with given parameters",
    }
    c"bf.exists" => query::exists {
        arity: 3, flags: c"readonly fast", keys: READS, arguments: ONE_ITEM,
        complexity: c"O(s), where s is the number of sub-filters: one cache line each (k bits each in RedisBloom's format)",
        summary: c"Tests whether an item may be in a Bloom filter",
    }
    c"bf.mexists" => query::mexists {
        arity: -3, flags: c"readonly fast", keys: READS, arguments: MANY_ITEMS,
        complexity: c"O(n * s), where n is the number of items and s the number of sub-filters",
        summary: c"Tests whether items may be in a Bloom filter",
    }
    c"bf.card" => query::card {
        arity: 2, flags: c"readonly fast", keys: DESCRIBES, arguments: KEY_ONLY,
        complexity: c"O(1)",
        summary: c"Returns the number of items added to a Bloom filter",
    }
    c"bf.info" => info::info {
        arity: -2, flags: c"readonly fast", keys: DESCRIBES, arguments: INFO,
        complexity: c"O(1)",
        summary: c"Returns information about a Bloom filter",
    }
    c"bf.debug" => info::debug {
        arity: 2, flags: c"readonly", keys: DESCRIBES, arguments: KEY_ONLY,
        complexity: c"O(s), where s is the number of sub-filters",
        summary: c"Describes every sub-filter of a Bloom filter",
    }
    c"bf.scandump" => dump::scandump {
        arity: 3, flags: c"readonly", keys: READS, arguments: SCANDUMP,
        complexity: c"O(n), where n is the size of the chunk returned (at most 16 MiB)",
        summary: c"Returns the next chunk of a Bloom filter's dump",
    }
    c"bf.loadchunk" => dump::loadchunk {
        arity: 4, flags: c"write deny-oom", keys: OVERWRITES, arguments: LOADCHUNK,
        complexity: c"O(n), where n is the size of the chunk, or of the filter for the header",
        summary: c"Restores a Bloom filter from SCANDUMP chunks",
    }
    // Sent by a master to its replicas and the AOF, never by a client: refused otherwise.
    c"bf.rotate" => rotate_command::<WindowFilter> {
        arity: 3, flags: c"write", keys: OVERWRITES, arguments: ROTATE_AT,
        complexity: c"O(g), where g is the number of generations",
        summary: c"Applies a master's rotation of a windowed filter (replication only)",
    }
};
