//! The CF.* commands as Redis is told of them: name, handler, arity, flags, key use,
//! arguments, complexity and summary. The contract they keep is `docs/cf-commands.md`.

use super::{add, delete, dump, info, query, reserve};
use crate::shared::command::{command_table, Command, ADDS, CREATES, DELETES, DESCRIBES, OVERWRITES, READS};
use crate::shared::docs::{
    argument, keyword, Argument, Kind, CAPACITY, ERROR, EXPANSION, ITEMS, ITEMS_KEYWORD, KEY, KEY_ONLY,
    LOADCHUNK, MANY_ITEMS, NOCREATE, ONE_ITEM, SCANDUMP,
};

const RESERVE: &[Argument] = &[
    KEY,
    argument(c"capacity", Kind::Integer),
    keyword(c"bucketsize", c"BUCKETSIZE", Kind::Integer),
    keyword(c"maxiterations", c"MAXITERATIONS", Kind::Integer),
    EXPANSION,
    ERROR,
];
const INSERT: &[Argument] = &[KEY, CAPACITY, NOCREATE, ERROR, ITEMS_KEYWORD, ITEMS];

pub const COMMANDS: &[Command] = command_table! {
    category: c"cuckoo";
    // CF.RESERVE takes an odd number of arguments, which it checks itself.
    c"cf.reserve" => reserve::reserve {
        arity: -3, flags: c"write deny-oom", keys: CREATES, arguments: RESERVE,
        complexity: c"O(1)",
        summary: c"Creates an empty cuckoo filter",
    }
    c"cf.add" => add::add {
        arity: 3, flags: c"write deny-oom", keys: ADDS, arguments: ONE_ITEM,
        complexity: c"O(s + i), where s is the number of sub-filters and i the maximum number of iterations",
        summary: c"Adds an item to a cuckoo filter",
    }
    c"cf.addnx" => add::addnx {
        arity: 3, flags: c"write deny-oom", keys: ADDS, arguments: ONE_ITEM,
        complexity: c"O(s + i), where s is the number of sub-filters and i the maximum number of iterations",
        summary: c"Adds an item to a cuckoo filter unless it tests present",
    }
    c"cf.insert" => add::insert {
        arity: -4, flags: c"write deny-oom", keys: ADDS, arguments: INSERT,
        complexity: c"O(n * (s + i)), where n is the number of items, s the number of sub-filters and i the maximum number of iterations",
        summary: c"Adds items, creating the filter with a given capacity",
    }
    c"cf.insertnx" => add::insertnx {
        arity: -4, flags: c"write deny-oom", keys: ADDS, arguments: INSERT,
        complexity: c"O(n * (s + i)), where n is the number of items, s the number of sub-filters and i the maximum number of iterations",
        summary: c"Adds the items that do not test present",
    }
    c"cf.exists" => query::exists {
        arity: 3, flags: c"readonly fast", keys: READS, arguments: ONE_ITEM,
        complexity: c"O(s), where s is the number of sub-filters",
        summary: c"Tests whether an item may be in a cuckoo filter",
    }
    c"cf.mexists" => query::mexists {
        arity: -3, flags: c"readonly fast", keys: READS, arguments: MANY_ITEMS,
        complexity: c"O(n * s), where n is the number of items and s the number of sub-filters",
        summary: c"Tests whether items may be in a cuckoo filter",
    }
    c"cf.count" => query::count {
        arity: 3, flags: c"readonly fast", keys: READS, arguments: ONE_ITEM,
        complexity: c"O(s), where s is the number of sub-filters",
        summary: c"Returns how many times an item may have been added",
    }
    c"cf.del" => delete::del {
        arity: 3, flags: c"write fast", keys: DELETES, arguments: ONE_ITEM,
        complexity: c"O(s), where s is the number of sub-filters",
        summary: c"Deletes one copy of an item from a cuckoo filter",
    }
    // RedisBloom flags it readonly and fast, though it moves items across the whole filter;
    // a replica must not run it.
    c"cf.compact" => delete::compact {
        arity: 2, flags: c"write", keys: OVERWRITES, arguments: KEY_ONLY,
        complexity: c"O(n * s), where n is the number of slots and s the number of sub-filters",
        summary: c"Moves items out of the newest sub-filters",
    }
    c"cf.info" => info::info {
        arity: 2, flags: c"readonly fast", keys: DESCRIBES, arguments: KEY_ONLY,
        complexity: c"O(1)",
        summary: c"Returns information about a cuckoo filter",
    }
    c"cf.debug" => info::debug {
        arity: 2, flags: c"readonly fast", keys: DESCRIBES, arguments: KEY_ONLY,
        complexity: c"O(1)",
        summary: c"Describes a cuckoo filter on one line",
    }
    c"cf.scandump" => dump::scandump {
        arity: 3, flags: c"readonly", keys: READS, arguments: SCANDUMP,
        complexity: c"O(n), where n is the size of the chunk returned (at most 16 MiB)",
        summary: c"Returns the next chunk of a cuckoo filter's dump",
    }
    c"cf.loadchunk" => dump::loadchunk {
        arity: 4, flags: c"write deny-oom", keys: OVERWRITES, arguments: LOADCHUNK,
        complexity: c"O(n), where n is the size of the chunk, or of the filter for the header",
        summary: c"Restores a cuckoo filter from SCANDUMP chunks",
    }
};
