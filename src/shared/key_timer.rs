//! Keys whose values change with the clock though no command touches them (a windowed value
//! whose generations expire): each such type has a [`KeyTimer`] that remembers the keys
//! holding its values and visits them a batch at a time, so that an idle key gives its
//! expired memory back too. `lib.rs` lists the timers; [`start`] runs them all from one
//! server timer, on masters only (a replica applies what its master decided).
//!
//! A key is noted when a command creates a value in it, when one is loaded into it, and when
//! one comes to it under a new name (RENAME, COPY, MOVE, RESTORE: the `new` keyspace event).
//! SWAPDB moves whole databases without a keyspace event: its server event moves the noted
//! keys with them. A noted name that no longer holds the type is forgotten at its next visit,
//! so nothing needs to follow deletions.
//!
//! The subscription is made when the first key is noted, and to `new` events alone: a module
//! subscribed to a class of events has Redis build a context for its callback on every event
//! of that class, which costs a write command of any type about a fifth of its time (every
//! BF.*, CF.* and sketch write notifies a `generic` event). Until a value of a timed type
//! exists no event reaches the module, and after, only the creation of a key does.

use super::call::Call;
use super::datatype::guarded;
use super::keyspace::{untouched, Key};
use redis_module::native_types::RedisType;
use redis_module::raw;
use std::collections::BTreeSet;
use std::ffi::{c_char, c_int, c_void};
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

/// How often the timers run, and how many keys each visits a run.
const TICK_MS: i64 = 100;
const KEYS_PER_TICK: usize = 1000;

/// A key's database and name.
type NotedKey = (c_int, Vec<u8>);

/// What a visit found in a key.
pub enum Visit {
    /// A value of the timer's type: it stays noted.
    Kept,
    /// Anything else: the name is forgotten.
    Gone,
}

/// The keys of one type, and what a visit does to each.
pub struct KeyTimer {
    /// What the log calls it.
    what: &'static str,
    /// The type of the values it visits.
    data_type: &'static RedisType,
    keys: Mutex<BTreeSet<NotedKey>>,
    /// Where the last visit stopped, so that the next goes on from there.
    next: Mutex<Option<NotedKey>>,
    /// Looks at the (open, writable) key named by the string: due work done, and replicated.
    visit: fn(ctx: *mut raw::RedisModuleCtx, key: &mut Key, name: *mut raw::RedisModuleString) -> Visit,
}

impl KeyTimer {
    pub const fn new(
        what: &'static str,
        data_type: &'static RedisType,
        visit: fn(*mut raw::RedisModuleCtx, &mut Key, *mut raw::RedisModuleString) -> Visit,
    ) -> KeyTimer {
        KeyTimer { what, data_type, keys: Mutex::new(BTreeSet::new()), next: Mutex::new(None), visit }
    }

    fn note(&self, ctx: *mut raw::RedisModuleCtx, db: c_int, name: &[u8]) {
        subscribe_once(ctx);
        if let Ok(mut keys) = self.keys.lock() {
            keys.insert((db, name.to_vec()));
        }
    }

    /// Notes the key a command just stored a value in.
    pub fn note_call_key(&self, call: &Call) {
        self.note(call.context(), call.selected_db(), call.arg(1));
    }

    /// Notes the key a value was just loaded into.
    pub fn note_loaded(&self, rdb: *mut raw::RedisModuleIO) {
        // SAFETY: a live IO handle; the key name and context it gives live as long as it.
        unsafe {
            let (Some(name_of), Some(db_of), Some(context_of)) = (
                raw::RedisModule_GetKeyNameFromIO,
                raw::RedisModule_GetDbIdFromIO,
                raw::RedisModule_GetContextFromIO,
            ) else {
                return;
            };
            let name = name_of(rdb);
            if !name.is_null() {
                self.note(context_of(rdb), db_of(rdb), string_bytes(name.cast_mut()));
            }
        }
    }

    /// Follows SWAPDB: the keys noted in either database are now in the other.
    fn swap_databases(&self, first: c_int, second: c_int) {
        if let (Ok(mut keys), Ok(mut next)) = (self.keys.lock(), self.next.lock()) {
            let other = |db| match db {
                db if db == first => second,
                db if db == second => first,
                db => db,
            };
            *keys = std::mem::take(&mut *keys).into_iter().map(|(db, name)| (other(db), name)).collect();
            *next = None;
        }
    }

    /// Whether a value of `value_type` is one this timer visits.
    fn visits(&self, value_type: *mut raw::RedisModuleType) -> bool {
        value_type == *self.data_type.raw_type.borrow()
    }

    /// Visits up to [`KEYS_PER_TICK`] keys, from where the last visit stopped.
    fn visit_batch(&self, ctx: *mut raw::RedisModuleCtx) {
        let batch: Vec<NotedKey> = {
            let (Ok(keys), Ok(next)) = (self.keys.lock(), self.next.lock()) else { return };
            match &*next {
                Some(start) => keys.range(start.clone()..).take(KEYS_PER_TICK).cloned().collect(),
                None => keys.iter().take(KEYS_PER_TICK).cloned().collect(),
            }
        };
        // SAFETY: reading function pointers Redis set at module load.
        let functions = unsafe {
            (raw::RedisModule_SelectDb, raw::RedisModule_CreateString, raw::RedisModule_FreeString)
        };
        let (Some(select), Some(create), Some(free_string)) = functions else {
            return;
        };
        let mut gone = Vec::new();
        for (db, name) in &batch {
            // SAFETY: the timer's live context; the string is freed below, after the key.
            unsafe {
                if select(ctx, *db) != raw::REDISMODULE_OK as c_int {
                    gone.push((*db, name.clone()));
                    continue;
                }
                let key_name = create(ctx, name.as_ptr().cast(), name.len());
                {
                    let mut key = Key::open_write_untouched(ctx, key_name);
                    if let Visit::Gone = (self.visit)(ctx, &mut key, key_name) {
                        gone.push((*db, name.clone()));
                    }
                }
                free_string(ctx, key_name);
            }
        }
        if let (Ok(mut keys), Ok(mut next)) = (self.keys.lock(), self.next.lock()) {
            for key in &gone {
                keys.remove(key);
            }
            *next = batch.last().and_then(|last| {
                keys.range((Bound::Excluded(last.clone()), Bound::Unbounded)).next().cloned()
            });
        }
    }
}

/// The bytes of a Redis string.
///
/// # Safety
/// A live string.
unsafe fn string_bytes<'a>(string: *mut raw::RedisModuleString) -> &'a [u8] {
    let mut len = 0usize;
    // SAFETY: as the caller promises; the buffer lives as long as the string.
    unsafe {
        let pointer = raw::RedisModule_StringPtrLen.map_or(std::ptr::null(), |f| f(string, &raw mut len));
        if pointer.is_null() {
            &[]
        } else {
            std::slice::from_raw_parts(pointer.cast(), len)
        }
    }
}

/// Every type's timer; set once at load.
static TIMERS: OnceLock<&'static [&'static KeyTimer]> = OnceLock::new();

fn timers() -> &'static [&'static KeyTimer] {
    TIMERS.get().copied().unwrap_or_default()
}

/// Starts the server timer that runs `all` the timers; at module load.
pub fn start(ctx: *mut raw::RedisModuleCtx, all: &'static [&'static KeyTimer]) {
    if all.is_empty() || TIMERS.set(all).is_err() {
        return;
    }
    // SAFETY: the load's live context.
    unsafe {
        if let Some(subscribe) = raw::RedisModule_SubscribeToServerEvent {
            let swap = raw::RedisModuleEvent { id: raw::REDISMODULE_EVENT_SWAPDB, dataver: 1 };
            subscribe(ctx, swap, Some(databases_swapped));
        }
    }
    arm(ctx);
}

/// SWAPDB ran (on a master, or replicated to a replica, which may be promoted): every timer's
/// keys follow their databases.
extern "C" fn databases_swapped(
    _ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    _subevent: u64,
    data: *mut c_void,
) {
    guarded("key timer swapdb event", (), || {
        if data.is_null() {
            return;
        }
        // SAFETY: Redis hands the SwapDB event the databases it swapped, live for the call.
        let swapped = unsafe { &*data.cast::<raw::RedisModuleSwapDbInfo>() };
        for timer in timers() {
            timer.swap_databases(swapped.dbnum_first, swapped.dbnum_second);
        }
    });
}

static SUBSCRIBED: AtomicBool = AtomicBool::new(false);

/// Subscribes to `new` events, once: from the first noted key on (see the module comment).
fn subscribe_once(ctx: *mut raw::RedisModuleCtx) {
    if ctx.is_null() || SUBSCRIBED.swap(true, Ordering::Relaxed) {
        return;
    }
    // SAFETY: a live context of this module (a command's, or a load's).
    unsafe {
        if let Some(subscribe) = raw::RedisModule_SubscribeToKeyspaceEvents {
            subscribe(ctx, raw::REDISMODULE_NOTIFY_NEW as c_int, Some(added));
        }
    }
}

/// A key was added (created, renamed or moved to, copied, restored): noted by the timer whose
/// type its value is, if any.
extern "C" fn added(
    ctx: *mut raw::RedisModuleCtx,
    _type: c_int,
    _event: *const c_char,
    key: *mut raw::RedisModuleString,
) -> c_int {
    guarded("key timer event", (), || {
        // SAFETY: a live context and key for the callback; the key is closed before the
        // callback returns, and opened without touching its access time, nor (from Redis 7.2
        // on, which has the flag) the keyspace hit count.
        let value_type = unsafe {
            let mode = untouched(raw::REDISMODULE_READ as c_int);
            let (Some(open), Some(type_of), Some(close)) =
                (raw::RedisModule_OpenKey, raw::RedisModule_ModuleTypeGetType, raw::RedisModule_CloseKey)
            else {
                return;
            };
            let opened = open(ctx, key, mode).cast::<raw::RedisModuleKey>();
            if opened.is_null() {
                return;
            }
            let value_type = type_of(opened);
            close(opened);
            value_type
        };
        if value_type.is_null() {
            return;
        }
        if let Some(timer) = timers().iter().find(|timer| timer.visits(value_type)) {
            // SAFETY: as above; the context's selected database is the event's.
            let (db, name) =
                unsafe { (raw::RedisModule_GetSelectedDb.map_or(0, |f| f(ctx)), string_bytes(key)) };
            timer.note(ctx, db, name);
        }
    });
    raw::REDISMODULE_OK as c_int
}

fn arm(ctx: *mut raw::RedisModuleCtx) {
    // SAFETY: a live context (module load or the timer's own callback).
    unsafe {
        if let Some(create_timer) = raw::RedisModule_CreateTimer {
            create_timer(ctx, TICK_MS, Some(tick), std::ptr::null_mut());
        }
    }
}

extern "C" fn tick(ctx: *mut raw::RedisModuleCtx, _data: *mut c_void) {
    // SAFETY: the timer's live context.
    let flags = unsafe { raw::RedisModule_GetContextFlags.map_or(0, |f| f(ctx)) };
    let replica = flags & raw::REDISMODULE_CTX_FLAGS_SLAVE as c_int != 0;
    let loading = flags & raw::REDISMODULE_CTX_FLAGS_LOADING as c_int != 0;
    // While clients are paused for a failover (CLIENT PAUSE, FAILOVER), a master must send
    // its replicas nothing: Redis asserts it, and a rotation replicated then took it down.
    // SAFETY: reading a function pointer Redis set at module load, and calling it.
    let paused = unsafe { raw::RedisModule_AvoidReplicaTraffic.is_some_and(|avoid| avoid() != 0) };
    if !replica && !loading && !paused {
        for timer in timers() {
            guarded(format_args!("{} timer", timer.what), (), || timer.visit_batch(ctx));
        }
    }
    arm(ctx);
}
