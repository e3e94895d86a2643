//! One command call as the handlers see it: its arguments, its key, its replies, and the
//! replication and keyspace notifications it sends. Every reply is one call into Redis.

use super::config;
use super::double_text::DoubleText;
use super::error::CommandError;
use super::keyspace::Key;
use redis_module::raw;
use std::cell::Cell;
use std::ffi::{c_int, CStr};
use std::sync::OnceLock;

/// An argument of a replicated command ([`Call::replicate`]).
pub enum Replicated<'b> {
    /// The call's own argument at this index, sent as it came.
    Argument(usize),
    /// Bytes made by the command.
    Bytes(&'b [u8]),
}

/// One command invocation: its context and arguments, and the replies, replication and
/// notifications it sends.
pub struct Call<'a> {
    ctx: *mut raw::RedisModuleCtx,
    argv: &'a [*mut raw::RedisModuleString],
    /// The context's flags, asked of Redis once: it computes a dozen of them for each ask
    /// (about 130 instructions), and a write asks two or three times.
    flags: Cell<Option<c_int>>,
}

/// An argument's bytes.
///
/// # Safety
/// `string` is an argument of a live call, which outlives `'a`: Redis keeps the buffer as
/// long as the argument.
unsafe fn bytes_of<'a>(string: *mut raw::RedisModuleString) -> &'a [u8] {
    let mut len = 0usize;
    unsafe {
        let pointer = raw::RedisModule_StringPtrLen.map_or(std::ptr::null(), |f| f(string, &raw mut len));
        if pointer.is_null() {
            return &[];
        }
        std::slice::from_raw_parts(pointer.cast::<u8>(), len)
    }
}

impl<'a> Call<'a> {
    pub(super) fn new(ctx: *mut raw::RedisModuleCtx, argv: &'a [*mut raw::RedisModuleString]) -> Call<'a> {
        Call { ctx, argv, flags: Cell::new(None) }
    }

    pub fn argc(&self) -> usize {
        self.argv.len()
    }

    /// Argument `index` as bytes; the command name is argument 0.
    pub fn arg(&self, index: usize) -> &'a [u8] {
        // SAFETY: one of this call's arguments, which live for `'a`.
        self.argv.get(index).map_or(&[], |&string| unsafe { bytes_of(string) })
    }

    /// Every argument, the command name first, for the parsers.
    pub fn args(&self) -> Vec<&'a [u8]> {
        self.args_from(0).collect()
    }

    pub fn args_from(&self, first: usize) -> impl ExactSizeIterator<Item = &'a [u8]> + '_ {
        (first..self.argc()).map(move |index| self.arg(index))
    }

    /// The arguments from `first` on, two at a time (a trailing odd one left out): the
    /// (item, increment) pairs of CMS.INCRBY and TOPK.INCRBY.
    pub fn pairs_from(&self, first: usize) -> impl ExactSizeIterator<Item = (&'a [u8], &'a [u8])> {
        let pairs = self.argv.get(first..).unwrap_or_default().chunks_exact(2);
        // SAFETY: this call's arguments, which live for `'a`.
        pairs.map(|pair| unsafe { (bytes_of(pair[0]), bytes_of(pair[1])) })
    }

    /// The call's context, for the module API calls that take one.
    pub fn context(&self) -> *mut raw::RedisModuleCtx {
        self.ctx
    }

    /// The key every command names at position 1.
    pub fn key_name(&self) -> *mut raw::RedisModuleString {
        self.argv[1]
    }

    pub fn open_key(&self) -> Key {
        Key::open_read(self.ctx, self.key_name())
    }

    /// The key named by argument `index` (a merge's sources), opened for reading; `None`
    /// past the last argument.
    pub fn open_key_at(&self, index: usize) -> Option<Key> {
        self.argv.get(index).map(|&name| Key::open_read(self.ctx, name))
    }

    pub fn open_key_for_writing(&self) -> Key {
        Key::open_write(self.ctx, self.key_name())
    }

    fn context_flags(&self) -> c_int {
        if let Some(flags) = self.flags.get() {
            return flags;
        }
        // SAFETY: a live command context.
        let flags = unsafe { raw::RedisModule_GetContextFlags.map_or(0, |f| f(self.ctx)) };
        self.flags.set(Some(flags));
        flags
    }

    /// The database the call works in.
    pub fn selected_db(&self) -> c_int {
        // SAFETY: a live command context.
        unsafe { raw::RedisModule_GetSelectedDb.map_or(0, |f| f(self.ctx)) }
    }

    /// A replica, which applies what its master sends and decides nothing by its own clock.
    pub fn is_replica(&self) -> bool {
        self.context_flags() & raw::REDISMODULE_CTX_FLAGS_SLAVE as c_int != 0
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
            config::max_filter_bytes()
        }
    }

    /// Sent by the master, or replayed from the AOF: what was accepted once, which no limit
    /// of this server may refuse.
    pub fn replayed(&self) -> bool {
        let replayed = (raw::REDISMODULE_CTX_FLAGS_REPLICATED | raw::REDISMODULE_CTX_FLAGS_LOADING) as c_int;
        self.context_flags() & replayed != 0
    }

    pub fn replicate_verbatim(&self) {
        raw::replicate_verbatim(self.ctx);
    }

    /// Sends `command` with `args` to replicas and the AOF. The call's own arguments go as
    /// they are; only bytes made here become new strings (freed once Redis holds its
    /// references): copying every argument, as the binding's helper does, cost about a
    /// third of a replicated creation's 5,000 instructions (callgrind, BF.RESERVE).
    pub fn replicate(&self, command: &CStr, args: &[Replicated]) {
        let pointers: Vec<*mut raw::RedisModuleString> = args
            .iter()
            .map(|arg| match *arg {
                Replicated::Argument(index) => {
                    debug_assert!(index < self.argv.len(), "argument {index} of {}", self.argv.len());
                    self.argv.get(index).copied().unwrap_or(std::ptr::null_mut())
                }
                // SAFETY: a new string of bytes we hold, with no context: ours to free below.
                Replicated::Bytes(bytes) => unsafe {
                    raw::RedisModule_CreateString.map_or(std::ptr::null_mut(), |create| {
                        create(std::ptr::null_mut(), bytes.as_ptr().cast(), bytes.len())
                    })
                },
            })
            .collect();
        // SAFETY: live context; every string is live (an argument of this call, or made
        // above) and Redis takes its own references before returning.
        unsafe {
            if !pointers.contains(&std::ptr::null_mut()) {
                if let Some(replicate) = raw::RedisModule_Replicate {
                    replicate(self.ctx, command.as_ptr(), c"v".as_ptr(), pointers.as_ptr(), pointers.len());
                }
            }
            for (arg, &string) in args.iter().zip(&pointers) {
                if matches!(arg, Replicated::Bytes(_)) && !string.is_null() {
                    if let Some(free) = raw::RedisModule_FreeString {
                        free(std::ptr::null_mut(), string);
                    }
                }
            }
        }
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
                f(self.ctx, c_int::from(value));
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

    /// A double as the server spells it. Where that is glibc's `%.17g` (a RESP2 client of
    /// Redis before 7.2), the same bytes are spelled here, in about 250 instructions against
    /// glibc's 4,000, and sent as the bulk string Redis would send.
    pub fn reply_double(&self, value: f64) {
        if server_spells_doubles_with_printf() && !self.is_resp3() {
            if let Some(text) = DoubleText::printf_g17(value) {
                self.reply_bulk(text.as_bytes());
                return;
            }
        }
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
                f(self.ctx, i64::from(raw::REDISMODULE_POSTPONED_LEN));
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

    pub fn reply_error(&self, error: CommandError) {
        unsafe {
            match (error, raw::RedisModule_WrongArity, raw::RedisModule_ReplyWithError) {
                (CommandError::WrongArity, Some(wrong_arity), _) => {
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

/// Redis 7.2 replaced `snprintf("%.17g")` in its double replies by its own shortest spelling
/// (`0.1`, not `0.10000000000000001`); its release candidates report 7.1.x, and not every one
/// of them may have had it, so only 7.0 and older take the module's own spelling (any other
/// server gets `RM_ReplyWithDouble`, its own bytes whatever they are). Valkey spells as 7.2
/// does, and reports a version from 7.2.4 on.
const SHORTEST_DOUBLES_SINCE: c_int = 0x0007_0100;

/// Whether the server replies a double to a RESP2 client as a bulk string of `%.17g`, asked
/// once.
fn server_spells_doubles_with_printf() -> bool {
    static PRINTF: OnceLock<bool> = OnceLock::new();
    // SAFETY: the API table is filled in at module load, before any command runs.
    *PRINTF.get_or_init(|| unsafe {
        raw::RedisModule_GetServerVersion.is_some_and(|version| version() < SHORTEST_DOUBLES_SINCE)
    })
}
