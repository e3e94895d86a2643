//! What Redis is told about a command, and the one entry point every call goes through:
//! arity, panic guard, error reply. Each data type lists its commands in a table made with
//! [`command_table!`]; `lib.rs` registers the tables.

use super::call::Call;
use super::docs::{self, Argument};
use super::error::CommandError;
use redis_module::raw;
use std::ffi::{c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

/// A command's work, on a call whose arity was checked; an `Err` becomes its error reply.
pub type Handler = fn(&Call) -> Result<(), CommandError>;
type EntryPoint = extern "C" fn(*mut raw::RedisModuleCtx, *mut *mut raw::RedisModuleString, c_int) -> c_int;

pub struct Command {
    /// In lower case, as Redis registers it.
    pub name: &'static CStr,
    pub flags: &'static CStr,
    /// Redis's convention: `n` exactly n arguments, `-n` at least n, the name included.
    pub arity: c_int,
    /// Where its keys are and how it uses them, for key specs (cluster routing, ACL key
    /// permissions).
    pub keys: Keys,
    /// The arguments after the command name, for COMMAND DOCS.
    pub arguments: &'static [Argument],
    /// The ACL category of its data type (`bloom`, `cms`, ...), where the server has them.
    pub category: &'static CStr,
    pub complexity: &'static CStr,
    pub summary: &'static CStr,
    pub entry: EntryPoint,
}

/// A table of commands of one category. Each gets its own `extern "C"` entry point, which
/// checks the arity and runs the handler inside the panic guard ([`run`]).
macro_rules! command_table {
    (category: $category:expr; $($name:literal => $handler:path {
        arity: $arity:literal,
        flags: $flags:literal,
        keys: $keys:expr,
        arguments: $arguments:expr,
        complexity: $complexity:literal,
        summary: $summary:literal $(,)?
    })*) => {
        &[$($crate::shared::command::Command {
            name: $name,
            flags: $flags,
            arity: $arity,
            keys: $keys,
            arguments: $arguments,
            category: $category,
            complexity: $complexity,
            summary: $summary,
            entry: {
                extern "C" fn entry(
                    ctx: *mut redis_module::raw::RedisModuleCtx,
                    argv: *mut *mut redis_module::raw::RedisModuleString,
                    argc: std::ffi::c_int,
                ) -> std::ffi::c_int {
                    $crate::shared::command::run(ctx, argv, argc, $arity, $keys, $handler)
                }
                entry
            },
        }),*]
    };
}
pub(crate) use command_table;

/// Where a command's keys are, with how it uses them (`REDISMODULE_CMD_KEY_*` flags).
#[derive(Clone, Copy)]
pub enum Keys {
    /// One key, at position 1.
    One(u32),
    /// A destination at position 1, then the number of sources and the source keys: what
    /// CMS.MERGE and TDIGEST.MERGE take. Declared twice, so that a cluster refuses sources in
    /// other slots (CROSSSLOT) instead of the command not finding them: as key specs (COMMAND
    /// GETKEYS, ACLs), and through the `getkeys-api` flag, since Redis 7.0's cluster finds a
    /// module command's keys by that API or the first-last-step range, not by key specs.
    /// Registration adds the flag.
    DestinationAndSources(u32),
}

// How commands use their key, as key specs say it.
pub const READS: Keys = Keys::One(raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS);
pub const DESCRIBES: Keys = Keys::One(raw::REDISMODULE_CMD_KEY_RO);
pub const ADDS: Keys = Keys::One(
    raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_ACCESS | raw::REDISMODULE_CMD_KEY_INSERT,
);
pub const CREATES: Keys = Keys::One(raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_INSERT);
pub const OVERWRITES: Keys = Keys::One(OVERWRITES_FLAGS);
pub const DELETES: Keys = Keys::One(
    raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_ACCESS | raw::REDISMODULE_CMD_KEY_DELETE,
);
/// A merge's: it replaces its destination with what it reads from the sources.
pub const MERGES: Keys = Keys::DestinationAndSources(OVERWRITES_FLAGS);
const OVERWRITES_FLAGS: u32 = raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_UPDATE;

/// Every call of every command: the arity check, then the handler inside the panic guard,
/// then the error reply if it failed. Always answers OK to Redis: errors are replies.
pub fn run(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
    arity: c_int,
    keys: Keys,
    handler: Handler,
) -> c_int {
    let argv = match usize::try_from(argc) {
        // SAFETY: Redis passes `argc` valid strings in `argv` for the duration of the call.
        Ok(len) if !argv.is_null() => unsafe { std::slice::from_raw_parts(argv, len) },
        _ => &[],
    };
    if let Keys::DestinationAndSources(_) = keys {
        // SAFETY: a live context of this call.
        if unsafe { raw::RedisModule_IsKeysPositionRequest.is_some_and(|f| f(ctx) != 0) } {
            report_merge_keys(ctx, argv);
            return raw::Status::Ok as c_int;
        }
    }
    let call = Call::new(ctx, argv);
    let arity_holds =
        if arity >= 0 { argv.len() == arity as usize } else { argv.len() >= arity.unsigned_abs() as usize };
    let outcome = if arity_holds {
        catch_unwind(AssertUnwindSafe(|| handler(&call))).unwrap_or_else(|_| {
            redis_module::logging::log_warning("redbloom: a command panicked; it answered an error");
            Err(CommandError::Internal)
        })
    } else {
        Err(CommandError::WrongArity)
    };
    if let Err(error) = outcome {
        call.reply_error(error);
    }
    raw::Status::Ok as c_int
}

/// Tells Redis where a merge's keys are: the destination, then as many sources as the count
/// says, of those present (a count the arguments cannot hold is the command's own error).
fn report_merge_keys(ctx: *mut raw::RedisModuleCtx, argv: &[*mut raw::RedisModuleString]) {
    let mut count = 0i64;
    // SAFETY: live argument strings of this call; `count` is written by the API.
    let counted = argv.get(2).is_some_and(|&text| unsafe {
        raw::RedisModule_StringToLongLong
            .is_some_and(|f| f(text, &raw mut count) == raw::REDISMODULE_OK as c_int)
    });
    let sources = if counted { usize::try_from(count).unwrap_or(0) } else { 0 };
    let last = argv.len().min(3usize.saturating_add(sources));
    // SAFETY: a key-position request's context; positions are within the arguments.
    unsafe {
        if let Some(key_at) = raw::RedisModule_KeyAtPos {
            key_at(ctx, 1);
            for position in 3..last {
                key_at(ctx, position as c_int);
            }
        }
    }
}

static CATEGORIES_ADDED: AtomicBool = AtomicBool::new(false);

/// Adds the types' ACL categories (`@bloom`, `@cms`, ...) where the server can (Redis 7.4 and
/// later). Called once at load, before the commands are described.
pub fn add_acl_categories(ctx: *mut raw::RedisModuleCtx, categories: &[&CStr]) {
    // SAFETY: module load, live context.
    unsafe {
        if let Some(add_category) = raw::RedisModule_AddACLCategory {
            let added = categories
                .iter()
                .all(|category| add_category(ctx, category.as_ptr()) == raw::REDISMODULE_OK as c_int);
            CATEGORIES_ADDED.store(added, Ordering::Relaxed);
        }
    }
}

/// Creates the command and tells Redis what it is; `false` if the server refused it.
pub fn register(ctx: *mut raw::RedisModuleCtx, command: &Command) -> bool {
    // SAFETY: module load, live context; the name and flags are NUL-terminated strings that
    // outlive the call.
    let flags = match command.keys {
        Keys::One(_) => std::borrow::Cow::Borrowed(command.flags),
        Keys::DestinationAndSources(_) => {
            let mut flags = command.flags.to_bytes().to_vec();
            flags.extend_from_slice(b" getkeys-api");
            match std::ffi::CString::new(flags) {
                Ok(flags) => std::borrow::Cow::Owned(flags),
                Err(_) => return false,
            }
        }
    };
    let status = unsafe {
        raw::RedisModule_CreateCommand.map_or(raw::REDISMODULE_ERR as c_int, |create| {
            create(ctx, command.name.as_ptr(), Some(command.entry), flags.as_ptr(), 1, 1, 1)
        })
    };
    if status != raw::REDISMODULE_OK as c_int {
        return false;
    }
    describe(ctx, command);
    true
}

/// Tells Redis the arity of the command, how it uses its key, its complexity and its
/// arguments, on servers that take command info (7.0 and later): arity errors then come
/// from Redis itself, COMMAND INFO and DOCS are accurate, and ACL read/write key permissions
/// (`%R~`, `%W~`) apply to the module's commands as to Redis's own.
fn describe(ctx: *mut raw::RedisModuleCtx, command: &Command) {
    // SAFETY: called during module load with a live context; the info structs only need to
    // live for the duration of the call (Redis copies them).
    unsafe {
        let (Some(get_command), Some(set_info)) =
            (raw::RedisModule_GetCommand, raw::RedisModule_SetCommandInfo)
        else {
            return;
        };
        let handle = get_command(ctx, command.name.as_ptr());
        if handle.is_null() {
            return;
        }
        // Redis 7.2 and later: ACL categories for module commands. Setting them replaces the
        // ones Redis would derive from the flags, so all are named: @read or @write, @fast or
        // @slow, and the type's own where the server can add categories (7.4 and later).
        if let Some(set_categories) = raw::RedisModule_SetCommandACLCategories {
            let flags = command.flags.to_bytes();
            let has = |flag: &[u8]| flags.split(|&b| b == b' ').any(|word| word == flag);
            let mut categories = vec![if has(b"write") { "write" } else { "read" }];
            categories.push(if has(b"fast") { "fast" } else { "slow" });
            if CATEGORIES_ADDED.load(Ordering::Relaxed) {
                categories.push(command.category.to_str().unwrap_or_default());
            }
            if let Ok(categories) = std::ffi::CString::new(categories.join(" ")) {
                set_categories(handle, categories.as_ptr());
            }
        }
        let version = raw::RedisModuleCommandInfoVersion {
            version: 1,
            sizeof_historyentry: std::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
            sizeof_keyspec: std::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
            sizeof_arg: std::mem::size_of::<raw::RedisModuleCommandArg>(),
        };
        // The key at position 1, then a merge's sources; the array ends with an all-zero spec.
        let mut key_specs: [raw::RedisModuleCommandKeySpec; 3] = std::mem::zeroed();
        let first_key_flags = match command.keys {
            Keys::One(flags) | Keys::DestinationAndSources(flags) => flags,
        };
        key_specs[0].flags = u64::from(first_key_flags);
        key_specs[0].begin_search_type = raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX;
        key_specs[0].bs.index.pos = 1;
        key_specs[0].find_keys_type = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE;
        key_specs[0].fk.range =
            raw::RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_1 { lastkey: 0, keystep: 1, limit: 0 };
        if let Keys::DestinationAndSources(_) = command.keys {
            key_specs[1].flags = u64::from(raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS);
            key_specs[1].begin_search_type =
                raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX;
            key_specs[1].bs.index.pos = 2;
            // The count at position 2 (offset 0), the keys right after it.
            key_specs[1].find_keys_type = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_KEYNUM;
            key_specs[1].fk.keynum = raw::RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_2 {
                keynumidx: 0,
                firstkey: 1,
                keystep: 1,
            };
        }
        let mut storage = Vec::new();
        let args = docs::to_raw(command.arguments, &mut storage);
        let info = raw::RedisModuleCommandInfo {
            version: &raw const version,
            summary: command.summary.as_ptr(),
            complexity: command.complexity.as_ptr(),
            since: c"1.0.0".as_ptr(),
            history: std::ptr::null_mut(),
            tips: std::ptr::null(),
            arity: command.arity,
            key_specs: key_specs.as_mut_ptr(),
            args,
        };
        set_info(handle, &raw const info);
    }
}
