//! Keys whose values change with the clock though no command touches them (a windowed value
//! whose generations expire): each such type has a [`KeyTimer`] that queues the keys holding
//! its values by the time each is next due and visits those due, so that an idle key gives
//! its expired memory back too, on time whatever the number of keys that are not due. `lib.rs`
//! lists the timers and [`start`]s them; one server timer, started when the first key is
//! queued, runs them all. A replica applies what its master decided: its visits rotate nothing
//! and only forget the names that hold no value of the type any more, so that its queues
//! follow its keys for the day it is promoted.
//!
//! A key is queued, to be visited at once, when a value is loaded into it and when sources
//! are merged into its value in place (CMS.MERGE); for when its value is next due, when one
//! comes to it under a new name (RENAME, COPY, MOVE, RESTORE, and a merge that stores a new
//! value: the `new` keyspace event); and for when the generation closes, when a write may
//! open one. A visit queues the key again for when its value next needs a rotation, or
//! forgets it: the name holds no value of the type any more, or a value with nothing to
//! expire, which only such a write changes. So the queue holds every key with a generation
//! for its next rotation or earlier. A key leaves it with its value, by the type's unlink callback (DEL, UNLINK,
//! expiry, eviction, replacement, the old name of a RENAME or MOVE), or with its database
//! (the `FlushDB` server event: FLUSHDB, FLUSHALL, and the emptying before a full sync or a
//! DEBUG RELOAD), rather than at its next visit, which for a long window is hours away.
//! SWAPDB moves whole databases without a keyspace event: its server event moves the queued
//! keys with them.
//!
//! The subscription is made when the first key is queued, and to `new` events alone: a module
//! subscribed to a class of events has Redis build a context for its callback on every event
//! of that class, which costs a write command of any type about a fifth of its time (every
//! BF.*, CF.* and sketch write notifies a `generic` event). Until a value of a timed type
//! exists no event reaches the module, and after, only the creation of a key does.

use super::call::Call;
use super::clock::now_ms;
use super::datatype::guarded;
use super::keyspace::untouched;
use super::metrics::Metrics;
use redis_module::native_types::RedisType;
use redis_module::raw;
use std::collections::{BTreeSet, HashMap};
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How often the timers run.
const TICK_MS: i64 = 100;
/// How long the timers may visit due keys a run, all types together (a visit takes a few
/// microseconds): a backlog of due keys costs commands at most this much latency a tick,
/// about as Redis's own expiry cycle would, and is worked off at thousands of keys a tick.
/// The type that goes first changes from run to run.
const VISITS_PER_TICK: Duration = Duration::from_millis(5);
/// Keys taken out of the queue at a time (each visit looks at the clock first).
const KEYS_PER_TAKE: usize = 64;
/// How long a replica waits before it looks at a key again: it rotates nothing, and looks
/// only to forget deleted keys, so that its queues follow its keys for the day it is
/// promoted.
const REPLICA_REVISIT_MS: u64 = 1000;

/// A key's database and name.
type NotedKey = (c_int, Vec<u8>);

/// What a visit found in a key.
pub enum Visit {
    /// A value of the timer's type that next needs a visit at this time (ms since the epoch).
    At(u64),
    /// Anything else: the name is forgotten until it is queued again.
    Done,
}

/// Keys and the time each is due, earliest first; a key at most once.
#[derive(Default)]
struct Queue {
    due_at: HashMap<NotedKey, u64>,
    by_time: BTreeSet<(u64, NotedKey)>,
}

impl Queue {
    /// Queues the key for `at_ms`, or leaves it where it is queued for earlier.
    fn queue(&mut self, key: NotedKey, at_ms: u64) {
        match self.due_at.get_mut(&key) {
            Some(due) if *due <= at_ms => {}
            Some(due) => {
                let later = std::mem::replace(due, at_ms);
                self.by_time.remove(&(later, key.clone()));
                self.by_time.insert((at_ms, key));
            }
            None => {
                self.by_time.insert((at_ms, key.clone()));
                self.due_at.insert(key, at_ms);
            }
        }
    }

    /// Takes the key out, if queued.
    fn remove(&mut self, key: NotedKey) {
        if let Some(at) = self.due_at.remove(&key) {
            self.by_time.remove(&(at, key));
        }
    }

    /// Every key queued again under the name `rename` gives it, or left out where it gives
    /// none.
    fn rebuild(&mut self, rename: impl Fn(NotedKey) -> Option<NotedKey>) {
        let by_time = std::mem::take(&mut self.by_time);
        *self = Queue::default();
        for (at, key) in by_time {
            if let Some(key) = rename(key) {
                self.queue(key, at);
            }
        }
    }

    /// Gives back the map's room once it holds a quarter of it or less: a `HashMap` keeps the
    /// room of its largest size (200,000 keys come and gone held 12 MB).
    fn shrink(&mut self) {
        if self.due_at.capacity() > 4 * self.due_at.len() + 64 {
            self.due_at.shrink_to(2 * self.due_at.len());
        }
    }

    /// Takes out up to `most` keys due at `now_ms`, the earliest first, with their times.
    fn take_due(&mut self, now_ms: u64, most: usize) -> Vec<(u64, NotedKey)> {
        let mut due = Vec::new();
        while due.len() < most && self.by_time.first().is_some_and(|(at, _)| *at <= now_ms) {
            if let Some((at, key)) = self.by_time.pop_first() {
                self.due_at.remove(&key);
                due.push((at, key));
            }
        }
        due
    }
}

/// The keys of one type, and what a visit does to each.
pub struct KeyTimer {
    /// What the log calls it.
    what: &'static str,
    /// The type of the values it visits.
    data_type: &'static RedisType,
    /// Where INFO finds how many keys are queued.
    metrics: &'static Metrics,
    /// Made at the first key queued: a `HashMap` cannot be made in a constant.
    queue: Mutex<Option<Queue>>,
    /// Looks at the key named by the string, in the database selected: due work done, and
    /// replicated. `rotates` is false on a replica, whose master decides: the visit only
    /// looks. The visit opens the key itself, to write only when there is work to do.
    visit: fn(ctx: *mut raw::RedisModuleCtx, name: *mut raw::RedisModuleString, rotates: bool) -> Visit,
}

impl KeyTimer {
    pub const fn new(
        what: &'static str,
        data_type: &'static RedisType,
        metrics: &'static Metrics,
        visit: fn(*mut raw::RedisModuleCtx, *mut raw::RedisModuleString, bool) -> Visit,
    ) -> KeyTimer {
        KeyTimer { what, data_type, metrics, queue: Mutex::new(None), visit }
    }

    /// Queues the key for a visit at `at_ms`, or earlier where it is queued for earlier.
    fn note(&self, ctx: *mut raw::RedisModuleCtx, db: c_int, name: &[u8], at_ms: u64) {
        subscribe_once(ctx);
        arm_once(ctx);
        self.change_queue(|queue| queue.queue((db, name.to_vec()), at_ms));
    }

    /// Queues the key a command just stored a value in for a visit at once.
    pub fn note_call_key(&self, call: &Call) {
        self.note_call_key_at(call, now_ms());
    }

    /// Queues the key a command writes to for a visit at `at_ms` (or earlier).
    pub fn note_call_key_at(&self, call: &Call, at_ms: u64) {
        self.note(call.context(), call.selected_db(), call.arg(1), at_ms);
    }

    /// Queues the key a value was just loaded into.
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
                self.note(context_of(rdb), db_of(rdb), string_bytes(name.cast_mut()), now_ms());
            }
        }
    }

    /// Forgets the key a value of the timer's type left (`ctx` of an unlink callback), which
    /// would otherwise stay queued until it was due: up to a span, hours for long windows.
    pub fn forget_unlinked(&self, ctx: *mut raw::RedisModuleKeyOptCtx) {
        // SAFETY: the callback's live context; the name lives as long as it.
        let (db, name) = unsafe {
            let (Some(name_of), Some(db_of)) =
                (raw::RedisModule_GetKeyNameFromOptCtx, raw::RedisModule_GetDbIdFromOptCtx)
            else {
                return;
            };
            let name = name_of(ctx);
            if name.is_null() {
                return;
            }
            (db_of(ctx), string_bytes(name.cast_mut()))
        };
        self.change_queue(|queue| queue.remove((db, name.to_vec())));
    }

    /// Follows FLUSHDB and FLUSHALL (`db` `None`): no key of theirs is left to visit.
    fn forget_database(&self, db: Option<c_int>) {
        self.change_queue(|queue| queue.rebuild(|key| db.is_some_and(|db| db != key.0).then_some(key)));
    }

    /// Changes the queue (made at the first change) and gives INFO its new size.
    fn change_queue(&self, change: impl FnOnce(&mut Queue)) {
        let Ok(mut guard) = self.queue.lock() else { return };
        let queue = guard.get_or_insert_with(Queue::default);
        change(queue);
        queue.shrink();
        self.metrics.set_timed_keys(queue.due_at.len());
    }

    /// Follows SWAPDB: the keys queued in either database are now in the other.
    fn swap_databases(&self, first: c_int, second: c_int) {
        let other = |db| match db {
            db if db == first => second,
            db if db == second => first,
            db => db,
        };
        self.change_queue(|queue| queue.rebuild(|(db, name)| Some((other(db), name))));
    }

    /// Whether a value of `value_type` is one this timer visits.
    fn visits(&self, value_type: *mut raw::RedisModuleType) -> bool {
        value_type == *self.data_type.raw_type.borrow()
    }

    /// Visits the keys due now, the earliest first, until `deadline`, and queues each again
    /// as its visit asks; on a replica (`rotates` false), only to forget the names that hold
    /// no value of the type any more.
    fn visit_due(&self, ctx: *mut raw::RedisModuleCtx, rotates: bool, deadline: Instant) {
        let now = now_ms();
        while Instant::now() < deadline {
            let due = match self.queue.lock() {
                Ok(mut queue) => queue.as_mut().map(|queue| queue.take_due(now, KEYS_PER_TAKE)),
                Err(_) => return,
            };
            match due {
                Some(due) if !due.is_empty() => self.visit_keys(ctx, due, rotates, deadline),
                _ => return,
            }
        }
    }

    /// Visits the keys until `deadline` (one visit may take milliseconds: a large Count-Min
    /// sketch's rotation), and queues each again as its visit asks, on a replica a second on
    /// at the soonest, since its master's rotations, not its clock, move its values on; those
    /// not visited by then go back as they were.
    fn visit_keys(
        &self,
        ctx: *mut raw::RedisModuleCtx,
        keys: Vec<(u64, NotedKey)>,
        rotates: bool,
        deadline: Instant,
    ) {
        let soonest = if rotates { 0 } else { now_ms().saturating_add(REPLICA_REVISIT_MS) };
        // SAFETY: reading function pointers Redis set at module load.
        let functions = unsafe {
            (raw::RedisModule_SelectDb, raw::RedisModule_CreateString, raw::RedisModule_FreeString)
        };
        let (Some(select), Some(create), Some(free_string)) = functions else {
            return;
        };
        let mut again = Vec::new();
        for (due, (db, name)) in keys {
            if Instant::now() >= deadline {
                again.push(((db, name), due));
                continue;
            }
            // SAFETY: the timer's live context; the string is freed below, after the key.
            unsafe {
                if select(ctx, db) != raw::REDISMODULE_OK as c_int {
                    continue;
                }
                let key_name = create(ctx, name.as_ptr().cast(), name.len());
                if let Visit::At(at) = (self.visit)(ctx, key_name, rotates) {
                    again.push(((db, name), at.max(soonest)));
                }
                free_string(ctx, key_name);
            }
        }
        self.change_queue(|queue| {
            for (key, at) in again {
                queue.queue(key, at);
            }
        });
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

/// Sets up `all` the timers, at module load: the server timer that runs them starts with the
/// first key queued ([`arm_once`]).
pub fn start(ctx: *mut raw::RedisModuleCtx, all: &'static [&'static KeyTimer]) {
    if all.is_empty() || TIMERS.set(all).is_err() {
        return;
    }
    // SAFETY: the load's live context.
    unsafe {
        if let Some(subscribe) = raw::RedisModule_SubscribeToServerEvent {
            let swap = raw::RedisModuleEvent { id: raw::REDISMODULE_EVENT_SWAPDB, dataver: 1 };
            subscribe(ctx, swap, Some(databases_swapped));
            let flush = raw::RedisModuleEvent { id: raw::REDISMODULE_EVENT_FLUSHDB, dataver: 1 };
            subscribe(ctx, flush, Some(databases_flushed));
        }
    }
}

/// SWAPDB ran (on a master, or replicated to a replica, which may be promoted): every timer's
/// queued keys follow their databases.
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

/// FLUSHDB or FLUSHALL ran, which unlinks no key one by one: every timer forgets the keys of
/// the databases emptied.
extern "C" fn databases_flushed(
    _ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    subevent: u64,
    data: *mut c_void,
) {
    guarded("key timer flush event", (), || {
        if subevent != raw::REDISMODULE_SUBEVENT_FLUSHDB_END || data.is_null() {
            return;
        }
        // SAFETY: Redis hands the FlushDB event the database it flushed (-1: all), live for
        // the call.
        let flushed = unsafe { &*data.cast::<raw::RedisModuleFlushInfo>() };
        let db = (flushed.dbnum >= 0).then_some(flushed.dbnum);
        for timer in timers() {
            timer.forget_database(db);
        }
    });
}

static SUBSCRIBED: AtomicBool = AtomicBool::new(false);
static ARMED: AtomicBool = AtomicBool::new(false);

/// Runs of the timers so far: which type goes first.
static TICKS: AtomicUsize = AtomicUsize::new(0);

/// Subscribes to `new` events, once: from the first queued key on (see the module comment).
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

/// A key was added (created, renamed or moved to, copied, restored): queued by the timer whose
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
            // Queued for when its value is next due, found by a visit that only looks, rather
            // than for a visit at once: a burst of new keys (tens of thousands created in a
            // pipeline, none due for hours) would otherwise queue ahead of keys that are due.
            let Visit::At(at) = (timer.visit)(ctx, key, false) else { return };
            // SAFETY: as above; the context's selected database is the event's.
            let (db, name) =
                unsafe { (raw::RedisModule_GetSelectedDb.map_or(0, |f| f(ctx)), string_bytes(key)) };
            timer.note(ctx, db, name, at);
        }
    });
    raw::REDISMODULE_OK as c_int
}

/// Starts the server timer, once: from the first queued key on, not at load. A module that
/// holds a timer cannot be unloaded, and Redis 8.2 unloading a module whose `MODULE LOADEX`
/// named a config it does not have (with no message to give for that) crashed on it; a
/// server without windowed values is not woken ten times a second for nothing either.
fn arm_once(ctx: *mut raw::RedisModuleCtx) {
    if ctx.is_null() || ARMED.swap(true, Ordering::Relaxed) {
        return;
    }
    arm(ctx);
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
    if !loading && !paused {
        let deadline = Instant::now() + VISITS_PER_TICK;
        let all = timers();
        let first = TICKS.fetch_add(1, Ordering::Relaxed) % all.len().max(1);
        for timer in all.iter().cycle().skip(first).take(all.len()) {
            guarded(format_args!("{} timer", timer.what), (), || timer.visit_due(ctx, !replica, deadline));
        }
    }
    arm(ctx);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(db: c_int, name: &str) -> NotedKey {
        (db, name.as_bytes().to_vec())
    }

    #[test]
    fn keys_come_out_due_earliest_first_each_once() {
        let mut queue = Queue::default();
        queue.queue(key(0, "late"), 300);
        queue.queue(key(0, "early"), 100);
        queue.queue(key(1, "early"), 200);
        // Queued again: earlier moves it, later leaves it.
        queue.queue(key(0, "late"), 150);
        queue.queue(key(0, "early"), 250);
        assert_eq!(queue.take_due(99, 10), []);
        assert_eq!(queue.take_due(1000, 2), [(100, key(0, "early")), (150, key(0, "late"))]);
        assert_eq!(queue.take_due(199, 10), []);
        assert_eq!(queue.take_due(200, 10), [(200, key(1, "early"))]);
        assert!(queue.due_at.is_empty() && queue.by_time.is_empty());
        // Taken out, a key is queued anew at any time.
        queue.queue(key(0, "early"), 900);
        assert_eq!(queue.take_due(900, 10), [(900, key(0, "early"))]);
    }
}
