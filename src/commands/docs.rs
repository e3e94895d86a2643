//! What COMMAND DOCS says of each command's arguments (names, types, tokens, optional and
//! multiple), so that redis-cli's hints and client generators know BF.* and CF.* as they know
//! Redis's own commands. Servers that take command info (7.0 and later) copy it at load.

use redis_module::raw;
use std::ffi::CStr;

#[derive(Clone, Copy)]
pub enum Kind {
    Key,
    Text,
    Integer,
    Double,
    /// A keyword on its own, such as NONSCALING.
    Token,
    /// Exactly one of these.
    OneOf(&'static [Argument]),
}

#[derive(Clone, Copy)]
pub struct Argument {
    name: &'static CStr,
    kind: Kind,
    /// The keyword before the value (`EXPANSION n`), or the keyword itself for a token.
    token: Option<&'static CStr>,
    optional: bool,
    multiple: bool,
}

const fn argument(name: &'static CStr, kind: Kind) -> Argument {
    Argument { name, kind, token: None, optional: false, multiple: false }
}

const fn keyword(name: &'static CStr, token: &'static CStr, kind: Kind) -> Argument {
    Argument { name, kind, token: Some(token), optional: true, multiple: false }
}

/// One of the words a [`Kind::OneOf`] takes.
const fn choice(name: &'static CStr, token: &'static CStr) -> Argument {
    Argument { name, kind: Kind::Token, token: Some(token), optional: false, multiple: false }
}

const KEY: Argument = argument(c"key", Kind::Key);
const ITEM: Argument = argument(c"item", Kind::Text);
const FORMATS: &[Argument] = &[choice(c"redbloom", c"REDBLOOM"), choice(c"redisbloom", c"REDISBLOOM")];
const FORMAT: Argument = keyword(c"format", c"FORMAT", Kind::OneOf(FORMATS));
const EXPANSION: Argument = keyword(c"expansion", c"EXPANSION", Kind::Integer);
const ERROR: Argument = keyword(c"error", c"ERROR", Kind::Double);
const NONSCALING: Argument = keyword(c"nonscaling", c"NONSCALING", Kind::Token);
const INFO_FIELDS: &[Argument] = &[
    choice(c"capacity", c"CAPACITY"),
    choice(c"size", c"SIZE"),
    choice(c"filters", c"FILTERS"),
    choice(c"items", c"ITEMS"),
    choice(c"expansion", c"EXPANSION"),
    choice(c"error", c"ERROR"),
];

const ITEMS: Argument = Argument { multiple: true, ..argument(c"item", Kind::Text) };
const RESERVE: &[Argument] = &[
    KEY,
    argument(c"error_rate", Kind::Double),
    argument(c"capacity", Kind::Integer),
    EXPANSION,
    NONSCALING,
    FORMAT,
];
const INSERT: &[Argument] = &[
    KEY,
    keyword(c"capacity", c"CAPACITY", Kind::Integer),
    ERROR,
    EXPANSION,
    keyword(c"nocreate", c"NOCREATE", Kind::Token),
    NONSCALING,
    FORMAT,
    Argument { optional: false, ..keyword(c"items", c"ITEMS", Kind::Token) },
    ITEMS,
];
const ONE_ITEM: &[Argument] = &[KEY, ITEM];
const MANY_ITEMS: &[Argument] = &[KEY, ITEMS];
const INFO: &[Argument] =
    &[KEY, Argument { token: None, ..keyword(c"single_value", c"", Kind::OneOf(INFO_FIELDS)) }];
const SCANDUMP: &[Argument] = &[KEY, argument(c"iterator", Kind::Integer)];
const LOADCHUNK: &[Argument] = &[KEY, argument(c"iterator", Kind::Integer), argument(c"data", Kind::Text)];
const KEY_ONLY: &[Argument] = &[KEY];
const CF_RESERVE: &[Argument] = &[
    KEY,
    argument(c"capacity", Kind::Integer),
    keyword(c"bucketsize", c"BUCKETSIZE", Kind::Integer),
    keyword(c"maxiterations", c"MAXITERATIONS", Kind::Integer),
    EXPANSION,
    ERROR,
];
const CF_INSERT: &[Argument] = &[
    KEY,
    keyword(c"capacity", c"CAPACITY", Kind::Integer),
    keyword(c"nocreate", c"NOCREATE", Kind::Token),
    ERROR,
    Argument { optional: false, ..keyword(c"items", c"ITEMS", Kind::Token) },
    ITEMS,
];

/// The arguments of `command` (its name in lower case), after the command name.
pub fn arguments(command: &CStr) -> &'static [Argument] {
    match command.to_bytes() {
        b"bf.reserve" => RESERVE,
        b"bf.add" | b"bf.exists" => ONE_ITEM,
        b"bf.madd" | b"bf.mexists" => MANY_ITEMS,
        b"bf.insert" => INSERT,
        b"bf.info" => INFO,
        b"bf.scandump" | b"cf.scandump" => SCANDUMP,
        b"bf.loadchunk" | b"cf.loadchunk" => LOADCHUNK,
        b"cf.reserve" => CF_RESERVE,
        b"cf.add" | b"cf.addnx" | b"cf.exists" | b"cf.count" | b"cf.del" => ONE_ITEM,
        b"cf.mexists" => MANY_ITEMS,
        b"cf.insert" | b"cf.insertnx" => CF_INSERT,
        _ => KEY_ONLY,
    }
}

/// The arguments in Redis's form: each array ends with an all-zero element, and `storage`
/// keeps the nested arrays alive while Redis reads them.
pub fn to_raw(
    arguments: &[Argument],
    storage: &mut Vec<Vec<raw::RedisModuleCommandArg>>,
) -> *mut raw::RedisModuleCommandArg {
    let mut raw_arguments: Vec<raw::RedisModuleCommandArg> = arguments
        .iter()
        .map(|argument| {
            // SAFETY: all-zero is a valid value of this plain C struct (null pointers, 0s).
            let mut raw_argument: raw::RedisModuleCommandArg = unsafe { std::mem::zeroed() };
            raw_argument.name = argument.name.as_ptr();
            raw_argument.token = argument.token.map_or(std::ptr::null(), CStr::as_ptr);
            raw_argument.type_ = match argument.kind {
                Kind::Key => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY,
                Kind::Text => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
                Kind::Integer => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER,
                Kind::Double => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_DOUBLE,
                Kind::Token => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_PURE_TOKEN,
                Kind::OneOf(choices) => {
                    raw_argument.subargs = to_raw(choices, storage);
                    raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_ONEOF
                }
            };
            if matches!(argument.kind, Kind::Key) {
                raw_argument.key_spec_index = 0;
            } else {
                raw_argument.key_spec_index = -1;
            }
            let mut flags = raw::REDISMODULE_CMD_ARG_NONE;
            if argument.optional {
                flags |= raw::REDISMODULE_CMD_ARG_OPTIONAL;
            }
            if argument.multiple {
                flags |= raw::REDISMODULE_CMD_ARG_MULTIPLE;
            }
            raw_argument.flags = flags as i32;
            raw_argument
        })
        .collect();
    // SAFETY: as above; the all-zero element ends the array.
    raw_arguments.push(unsafe { std::mem::zeroed() });
    storage.push(raw_arguments);
    storage.last_mut().map_or(std::ptr::null_mut(), |last| last.as_mut_ptr())
}
