//! How COMMAND DOCS describes a command's arguments (names, types, tokens, optional and
//! multiple), so that redis-cli's hints and client generators know the module's commands as
//! they know Redis's own; each type's command table lists its own. Servers that take command
//! info (7.0 and later) copy it at load.

use redis_module::raw;
use std::ffi::CStr;

#[derive(Clone, Copy)]
pub enum Kind {
    Key,
    /// The source keys of a merge, after their count.
    SourceKey,
    Text,
    Integer,
    Double,
    /// A keyword on its own, such as NONSCALING.
    Token,
    /// Exactly one of these.
    OneOf(&'static [Argument]),
    /// These together, in order.
    Block(&'static [Argument]),
}

#[derive(Clone, Copy)]
pub struct Argument {
    pub name: &'static CStr,
    pub kind: Kind,
    /// The keyword before the value (`EXPANSION n`), or the keyword itself for a token.
    pub token: Option<&'static CStr>,
    pub optional: bool,
    pub multiple: bool,
}

pub const fn argument(name: &'static CStr, kind: Kind) -> Argument {
    Argument { name, kind, token: None, optional: false, multiple: false }
}

pub const fn keyword(name: &'static CStr, token: &'static CStr, kind: Kind) -> Argument {
    Argument { name, kind, token: Some(token), optional: true, multiple: false }
}

/// One of the words a [`Kind::OneOf`] takes.
pub const fn choice(name: &'static CStr, token: &'static CStr) -> Argument {
    Argument { name, kind: Kind::Token, token: Some(token), optional: false, multiple: false }
}

/// Arguments several commands share.
pub const KEY: Argument = argument(c"key", Kind::Key);
pub const ITEMS: Argument = Argument { multiple: true, ..argument(c"item", Kind::Text) };
pub const EXPANSION: Argument = keyword(c"expansion", c"EXPANSION", Kind::Integer);
pub const ERROR: Argument = keyword(c"error", c"ERROR", Kind::Double);
pub const CAPACITY: Argument = keyword(c"capacity", c"CAPACITY", Kind::Integer);
pub const NOCREATE: Argument = keyword(c"nocreate", c"NOCREATE", Kind::Token);
/// `WINDOW ms [GENERATIONS g]`, which every creating command takes (an extension): a value
/// that forgets what is older than the window.
pub const WINDOW: Argument = keyword(
    c"window",
    c"WINDOW",
    Kind::Block(&[argument(c"ms", Kind::Integer), keyword(c"generations", c"GENERATIONS", Kind::Integer)]),
);
/// Items each counted by an increment (`item increment [item increment ...]`).
pub const ITEM_INCREMENTS: Argument = Argument {
    multiple: true,
    ..argument(c"items", Kind::Block(&[argument(c"item", Kind::Text), argument(c"increment", Kind::Integer)]))
};
/// `ITEMS`, which ends the options: not optional where it stands.
pub const ITEMS_KEYWORD: Argument = Argument { optional: false, ..keyword(c"items", c"ITEMS", Kind::Token) };

/// Argument lists several commands share.
pub const KEY_ONLY: &[Argument] = &[KEY];
/// A windowed type's `ROTATE`, which masters send.
pub const ROTATE_AT: &[Argument] = &[KEY, argument(c"at_ms", Kind::Integer)];
pub const ONE_ITEM: &[Argument] = &[KEY, argument(c"item", Kind::Text)];
pub const MANY_ITEMS: &[Argument] = &[KEY, ITEMS];
pub const SCANDUMP: &[Argument] = &[KEY, argument(c"iterator", Kind::Integer)];
pub const LOADCHUNK: &[Argument] =
    &[KEY, argument(c"iterator", Kind::Integer), argument(c"data", Kind::Text)];

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
                Kind::Key | Kind::SourceKey => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY,
                Kind::Text => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
                Kind::Integer => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER,
                Kind::Double => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_DOUBLE,
                Kind::Token => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_PURE_TOKEN,
                Kind::OneOf(choices) => {
                    raw_argument.subargs = to_raw(choices, storage);
                    raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_ONEOF
                }
                Kind::Block(parts) => {
                    raw_argument.subargs = to_raw(parts, storage);
                    raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_BLOCK
                }
            };
            raw_argument.key_spec_index = match argument.kind {
                Kind::Key => 0,
                Kind::SourceKey => 1,
                _ => -1,
            };
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
    storage.last_mut().map_or(std::ptr::null_mut(), std::vec::Vec::as_mut_ptr)
}
