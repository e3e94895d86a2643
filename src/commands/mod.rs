//! The BF.* and CF.* commands: a table of what Redis is told about each, the one entry point
//! every call goes through (arity, panic guard, error replies), and one file per command
//! family.

mod add;
mod cuckoo;
mod docs;
mod dump;
mod error;
mod info;
mod parse;
mod query;
mod reserve;

use crate::keyspace::Key;
pub use error::BfError;
pub use parse::{format_named, Creation};
use redis_module::raw;
use std::ffi::{c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

type Handler = fn(&Call) -> Result<(), BfError>;
type EntryPoint = extern "C" fn(*mut raw::RedisModuleCtx, *mut *mut raw::RedisModuleString, c_int) -> c_int;

pub struct Command {
    pub name: &'static CStr,
    pub flags: &'static CStr,
    /// Redis's convention: `n` exactly n arguments, `-n` at least n, the name included.
    pub arity: c_int,
    /// How the command uses its key (REDISMODULE_CMD_KEY_*), for ACL key permissions.
    pub key_flags: u32,
    pub summary: &'static CStr,
    pub entry: EntryPoint,
}

/// Gives every command its own `extern "C"` entry point, which checks the arity and runs the
/// handler inside the panic guard.
macro_rules! commands {
    ($($name:literal, $handler:path, $arity:literal, $flags:literal, $keys:expr, $summary:literal;)*) => {
        pub const COMMANDS: &[Command] = &[$(Command {
            name: $name,
            flags: $flags,
            arity: $arity,
            key_flags: $keys,
            summary: $summary,
            entry: {
                extern "C" fn entry(
                    ctx: *mut raw::RedisModuleCtx,
                    argv: *mut *mut raw::RedisModuleString,
                    argc: c_int,
                ) -> c_int {
                    run(ctx, argv, argc, $arity, $handler)
                }
                entry
            },
        }),*];
    };
}

const READS: u32 = raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS;
const DESCRIBES: u32 = raw::REDISMODULE_CMD_KEY_RO;
const ADDS: u32 =
    raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_ACCESS | raw::REDISMODULE_CMD_KEY_INSERT;
const CREATES: u32 = raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_INSERT;
const OVERWRITES: u32 = raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_UPDATE;
const DELETES: u32 =
    raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_ACCESS | raw::REDISMODULE_CMD_KEY_DELETE;

commands! {
    c"bf.reserve", reserve::reserve, -4, c"write deny-oom", CREATES, c"Creates an empty Bloom filter";
    c"bf.add", add::add, 3, c"write deny-oom", ADDS, c"Adds an item to a Bloom filter";
    c"bf.madd", add::madd, -3, c"write deny-oom", ADDS, c"Adds items to a Bloom filter";
    c"bf.insert", add::insert, -4, c"write deny-oom", ADDS, c"Adds items, creating the filter with given parameters";
    c"bf.exists", query::exists, 3, c"readonly fast", READS, c"Tests whether an item may be in a Bloom filter";
    c"bf.mexists", query::mexists, -3, c"readonly fast", READS, c"Tests whether items may be in a Bloom filter";
    c"bf.card", query::card, 2, c"readonly fast", DESCRIBES, c"Returns the number of items added to a Bloom filter";
    c"bf.info", info::info, -2, c"readonly fast", DESCRIBES, c"Returns information about a Bloom filter";
    c"bf.debug", info::debug, 2, c"readonly", DESCRIBES, c"Describes every sub-filter of a Bloom filter";
    c"bf.scandump", dump::scandump, 3, c"readonly", READS, c"Returns the next chunk of a Bloom filter's dump";
    c"bf.loadchunk", dump::loadchunk, 4, c"write deny-oom", OVERWRITES, c"Restores a Bloom filter from SCANDUMP chunks";
    // CF.RESERVE takes an odd number of arguments, which it checks itself.
    c"cf.reserve", cuckoo::reserve, -3, c"write deny-oom", CREATES, c"Creates an empty cuckoo filter";
    c"cf.add", cuckoo::add, 3, c"write deny-oom", ADDS, c"Adds an item to a cuckoo filter";
    c"cf.addnx", cuckoo::addnx, 3, c"write deny-oom", ADDS, c"Adds an item to a cuckoo filter unless it tests present";
    c"cf.insert", cuckoo::insert, -4, c"write deny-oom", ADDS, c"Adds items, creating the filter with a given capacity";
    c"cf.insertnx", cuckoo::insertnx, -4, c"write deny-oom", ADDS, c"Adds the items that do not test present";
    c"cf.exists", cuckoo::exists, 3, c"readonly fast", READS, c"Tests whether an item may be in a cuckoo filter";
    c"cf.mexists", cuckoo::mexists, -3, c"readonly fast", READS, c"Tests whether items may be in a cuckoo filter";
    c"cf.count", cuckoo::count, 3, c"readonly fast", READS, c"Returns how many times an item may have been added";
    c"cf.del", cuckoo::del, 3, c"write fast", DELETES, c"Deletes one copy of an item from a cuckoo filter";
    // RedisBloom flags it readonly and fast, though it moves items across the whole filter;
    // a replica must not run it.
    c"cf.compact", cuckoo::compact, 2, c"write", OVERWRITES, c"Moves items out of the newest sub-filters";
    c"cf.info", cuckoo::info, 2, c"readonly fast", DESCRIBES, c"Returns information about a cuckoo filter";
    c"cf.debug", cuckoo::debug, 2, c"readonly fast", DESCRIBES, c"Describes a cuckoo filter on one line";
    c"cf.scandump", cuckoo::scandump, 3, c"readonly", READS, c"Returns the next chunk of a cuckoo filter's dump";
    c"cf.loadchunk", cuckoo::loadchunk, 4, c"write deny-oom", OVERWRITES, c"Restores a cuckoo filter from SCANDUMP chunks";
}

fn run(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
    arity: c_int,
    handler: Handler,
) -> c_int {
    let argv = match usize::try_from(argc) {
        // SAFETY: Redis passes `argc` valid strings in `argv` for the duration of the call.
        Ok(len) if !argv.is_null() => unsafe { std::slice::from_raw_parts(argv, len) },
        _ => &[],
    };
    let call = Call { ctx, argv };
    let arity_holds =
        if arity >= 0 { argv.len() == arity as usize } else { argv.len() >= arity.unsigned_abs() as usize };
    let outcome = if arity_holds {
        catch_unwind(AssertUnwindSafe(|| handler(&call))).unwrap_or_else(|_| {
            redis_module::logging::log_warning("redbloom: a command panicked; it answered an error");
            Err(BfError::Internal)
        })
    } else {
        Err(BfError::WrongArity)
    };
    if let Err(error) = outcome {
        call.reply_error(error);
    }
    raw::Status::Ok as c_int
}

/// One command invocation: its context and arguments, and the replies, replication and
/// notifications it sends.
pub struct Call<'a> {
    ctx: *mut raw::RedisModuleCtx,
    argv: &'a [*mut raw::RedisModuleString],
}

impl<'a> Call<'a> {
    pub fn argc(&self) -> usize {
        self.argv.len()
    }

    /// Argument `index` as bytes; the command name is argument 0.
    pub fn arg(&self, index: usize) -> &'a [u8] {
        let Some(&string) = self.argv.get(index) else {
            return &[];
        };
        let mut len = 0usize;
        // SAFETY: `string` is a live argument of this call; the returned buffer lives as
        // long as the argument, which outlives `'a`.
        unsafe {
            let pointer = raw::RedisModule_StringPtrLen.map_or(std::ptr::null(), |f| f(string, &mut len));
            if pointer.is_null() {
                return &[];
            }
            std::slice::from_raw_parts(pointer.cast::<u8>(), len)
        }
    }

    /// Every argument, the command name first, for the parsers.
    pub fn args(&self) -> Vec<&'a [u8]> {
        self.args_from(0).collect()
    }

    pub fn args_from(&self, first: usize) -> impl ExactSizeIterator<Item = &'a [u8]> + '_ {
        (first..self.argc()).map(move |index| self.arg(index))
    }

    /// The key every BF.* command names at position 1.
    pub fn key_name(&self) -> *mut raw::RedisModuleString {
        self.argv[1]
    }

    pub fn open_key(&self) -> Key {
        Key::open_read(self.ctx, self.key_name())
    }

    pub fn open_key_for_writing(&self) -> Key {
        Key::open_write(self.ctx, self.key_name())
    }

    fn context_flags(&self) -> c_int {
        // SAFETY: a live command context.
        unsafe { raw::RedisModule_GetContextFlags.map_or(0, |f| f(self.ctx)) }
    }

    pub fn is_resp3(&self) -> bool {
        self.context_flags() & raw::REDISMODULE_CTX_FLAGS_RESP3 as c_int != 0
    }

    /// The memory budget for a filter this call creates or grows. Commands from the master
    /// or the AOF replay what was already accepted once: refusing them would make this
    /// server diverge, so they have no budget.
    pub fn max_filter_bytes(&self) -> usize {
        if self.replayed() {
            usize::MAX
        } else {
            crate::config::max_filter_bytes()
        }
    }

    /// How far a cuckoo filter may grow in this call: the budget as above, and the
    /// sub-filter limit (`bf.cf-max-expansions`), which replayed commands do not meet either.
    pub fn cuckoo_limits(&self) -> crate::filter::cuckoo::Limits {
        let max_sub_filters = if self.replayed() {
            crate::filter::cuckoo::MAX_SUB_FILTERS
        } else {
            crate::config::cf_max_expansions()
        };
        crate::filter::cuckoo::Limits { max_bytes: self.max_filter_bytes(), max_sub_filters }
    }

    /// Sent by the master, or replayed from the AOF.
    fn replayed(&self) -> bool {
        let replayed = (raw::REDISMODULE_CTX_FLAGS_REPLICATED | raw::REDISMODULE_CTX_FLAGS_LOADING) as c_int;
        self.context_flags() & replayed != 0
    }

    pub fn replicate_verbatim(&self) {
        raw::replicate_verbatim(self.ctx);
    }

    pub fn replicate(&self, command: &str, args: &[&[u8]]) {
        raw::replicate(self.ctx, command, args);
    }

    /// A keyspace notification of class "generic" on the call's key.
    pub fn notify(&self, event: &CStr) {
        // SAFETY: live context and key name.
        unsafe {
            if let Some(notify) = raw::RedisModule_NotifyKeyspaceEvent {
                notify(self.ctx, raw::REDISMODULE_NOTIFY_GENERIC as c_int, event.as_ptr(), self.key_name());
            }
        }
    }

    // Replies. Each is one call into Redis; the `if let` only guards an API the server lacks.
    // SAFETY (all of them): the context is live for the whole call.

    pub fn reply_bool(&self, value: bool) {
        unsafe {
            if let Some(f) = raw::RedisModule_ReplyWithBool {
                f(self.ctx, value as c_int);
            }
        }
    }

    pub fn reply_integer(&self, value: i64) {
        unsafe {
            if let Some(f) = raw::RedisModule_ReplyWithLongLong {
                f(self.ctx, value);
            }
        }
    }

    pub fn reply_simple(&self, text: &CStr) {
        unsafe {
            if let Some(f) = raw::RedisModule_ReplyWithSimpleString {
                f(self.ctx, text.as_ptr());
            }
        }
    }

    pub fn reply_ok(&self) {
        self.reply_simple(c"OK");
    }

    pub fn reply_double(&self, value: f64) {
        unsafe {
            if let Some(f) = raw::RedisModule_ReplyWithDouble {
                f(self.ctx, value);
            }
        }
    }

    pub fn reply_bulk(&self, bytes: &[u8]) {
        unsafe {
            if let Some(f) = raw::RedisModule_ReplyWithStringBuffer {
                f(self.ctx, bytes.as_ptr().cast(), bytes.len());
            }
        }
    }

    pub fn reply_null(&self) {
        unsafe {
            if let Some(f) = raw::RedisModule_ReplyWithNull {
                f(self.ctx);
            }
        }
    }

    pub fn reply_array(&self, len: usize) {
        unsafe {
            if let Some(f) = raw::RedisModule_ReplyWithArray {
                f(self.ctx, len as i64);
            }
        }
    }

    /// An array whose length is given by [`set_array_length`](Self::set_array_length) once
    /// its elements are sent.
    pub fn reply_array_postponed(&self) {
        unsafe {
            if let Some(f) = raw::RedisModule_ReplyWithArray {
                f(self.ctx, raw::REDISMODULE_POSTPONED_LEN as i64);
            }
        }
    }

    pub fn set_array_length(&self, len: usize) {
        unsafe {
            if let Some(f) = raw::RedisModule_ReplySetArrayLength {
                f(self.ctx, len as i64);
            }
        }
    }

    /// A map under RESP3; a flat array of `2 * len` elements under RESP2.
    pub fn reply_map(&self, len: usize) {
        unsafe {
            if let Some(f) = raw::RedisModule_ReplyWithMap {
                f(self.ctx, len as i64);
            }
        }
    }

    pub fn reply_error(&self, error: BfError) {
        unsafe {
            match (error, raw::RedisModule_WrongArity, raw::RedisModule_ReplyWithError) {
                (BfError::WrongArity, Some(wrong_arity), _) => {
                    wrong_arity(self.ctx);
                }
                (_, _, Some(reply_error)) => {
                    reply_error(self.ctx, error.message().as_ptr());
                }
                _ => {}
            }
        }
    }
}

static CATEGORIES_ADDED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Adds the `@bloom` and `@cuckoo` ACL categories where the server can (Redis 7.4 and later).
/// Called once at load, before the commands are described.
pub fn add_acl_category(ctx: *mut raw::RedisModuleCtx) {
    // SAFETY: module load, live context.
    unsafe {
        if let Some(add_category) = raw::RedisModule_AddACLCategory {
            let added = [c"bloom", c"cuckoo"]
                .iter()
                .all(|category| add_category(ctx, category.as_ptr()) == raw::REDISMODULE_OK as c_int);
            CATEGORIES_ADDED.store(added, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// Tells Redis the arity of every command and how it uses its key, on servers that take
/// command info (7.0 and later): arity errors then come from Redis itself, COMMAND INFO is
/// accurate, and ACL read/write key permissions (`%R~`, `%W~`) apply to BF.* as to Redis's
/// own commands.
pub fn describe(ctx: *mut raw::RedisModuleCtx, command: &Command) {
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
        // @slow, and @bloom or @cuckoo where the server can add categories (7.4 and later).
        if let Some(set_categories) = raw::RedisModule_SetCommandACLCategories {
            let flags = command.flags.to_bytes();
            let has = |flag: &[u8]| flags.split(|&b| b == b' ').any(|word| word == flag);
            let mut categories = vec![if has(b"write") { "write" } else { "read" }];
            categories.push(if has(b"fast") { "fast" } else { "slow" });
            if CATEGORIES_ADDED.load(std::sync::atomic::Ordering::Relaxed) {
                categories.push(if command.name.to_bytes().starts_with(b"cf.") { "cuckoo" } else { "bloom" });
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
        // One key at position 1; the array ends with an all-zero spec.
        let mut key_specs: [raw::RedisModuleCommandKeySpec; 2] = std::mem::zeroed();
        key_specs[0].flags = u64::from(command.key_flags);
        key_specs[0].begin_search_type = raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX;
        key_specs[0].bs.index.pos = 1;
        key_specs[0].find_keys_type = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE;
        key_specs[0].fk.range =
            raw::RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_1 { lastkey: 0, keystep: 1, limit: 0 };
        let mut storage = Vec::new();
        let args = docs::to_raw(docs::arguments(command.name), &mut storage);
        let info = raw::RedisModuleCommandInfo {
            version: &version,
            summary: command.summary.as_ptr(),
            complexity: std::ptr::null(),
            since: c"1.0.0".as_ptr(),
            history: std::ptr::null_mut(),
            tips: std::ptr::null(),
            arity: command.arity,
            key_specs: key_specs.as_mut_ptr(),
            args,
        };
        set_info(handle, &info);
    }
}
