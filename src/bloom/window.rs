//! Filters whose items expire (`BF.RESERVE ... WINDOW ms [GENERATIONS g]`), type `rbBF-wind`,
//! over `redbloom_core::bloom::window`. Every BF.* command serves them with its own syntax;
//! the handlers of the other files hand a windowed key to this one.
//!
//! **The master's clock decides.** A master rotates a filter (opens a generation, drops the
//! expired ones) before every write to it, and its timer rotates the filters that receive no
//! writes; each rotation is sent to replicas and the AOF as `BF.ROTATE key at_ms`, the only way
//! a replica or a replay rotates. A master's reads skip the generations already expired by its
//! clock; a replica's read what its master's rotations left. A filter is created on replicas
//! and in the AOF as the BF.LOADCHUNK of its header, which holds its absolute times.

use super::datatype::METRICS;
use super::parse::{Creation, Window};
use crate::shared::call::Call;
use crate::shared::datatype::StoredValue;
use crate::shared::error::CommandError;
use crate::shared::keyspace::Key;
use crate::shared::metrics::{self, Footprint, Measured, Metrics};
use crate::shared::sketch_type::{sketch_methods, StoredSketch};
use redbloom_core::bloom::window::{Generation, ParamError, WindowFilter, WindowParams};
use redbloom_core::decode::Persistent;
use redis_module::native_types::RedisType;
use redis_module::raw;
use std::collections::BTreeSet;
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

pub static WINDOW_TYPE: RedisType =
    RedisType::new("rbBF-wind", WindowFilter::ENCODING_VERSION, sketch_methods::<WindowFilter>());

/// Dropped generations larger than this are freed on a thread of their own: a command or a
/// timer tick must not stall on a gigabyte's unmapping.
const FREE_IN_BACKGROUND_BYTES: usize = 256 << 10;
/// How often the timer looks at the windowed filters, and how many it visits a tick.
const TICK_MS: i64 = 100;
const KEYS_PER_TICK: usize = 1000;

impl Measured for WindowFilter {
    /// Counted with the Bloom filters in `INFO bf`.
    fn metrics() -> &'static Metrics {
        &METRICS
    }

    fn footprint(&self) -> Footprint {
        Footprint { bytes: self.bits_bytes() as i64, items: self.items() as i64, sub_filters: self.link_count() as i64 }
    }
}

impl StoredValue for WindowFilter {
    const KIND: &'static str = "windowed Bloom filter";

    fn data_types() -> &'static [&'static RedisType] {
        static TYPES: [&RedisType; 1] = [&WINDOW_TYPE];
        &TYPES
    }

    fn data_type(&self) -> &'static RedisType {
        &WINDOW_TYPE
    }

    fn freed_bytes(&self) -> usize {
        self.memory_bytes()
    }

    fn try_copy(&self) -> Option<WindowFilter> {
        self.try_clone().ok()
    }
}

impl StoredSketch for WindowFilter {
    const TYPE_NAME: &'static str = "rbBF-wind";

    fn after_load(rdb: *mut raw::RedisModuleIO) {
        // SAFETY: a live IO handle; the key name it gives lives as long as the handle.
        unsafe {
            let (Some(name_of), Some(db_of)) = (raw::RedisModule_GetKeyNameFromIO, raw::RedisModule_GetDbIdFromIO)
            else {
                return;
            };
            let name = name_of(rdb);
            if !name.is_null() {
                note(db_of(rdb), string_bytes(name.cast_mut()));
            }
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

// ------------------------------------------------------------------------------------------
// The clock and the rotations

/// This server's clock, in milliseconds since the epoch.
fn now_ms() -> u64 {
    // SAFETY: a plain read of the server's cached time.
    let now = unsafe { raw::RedisModule_Milliseconds.map_or(0, |f| f()) };
    u64::try_from(now).unwrap_or(0)
}

/// Whether this call may decide by this server's clock: a master's own client, not a replica
/// and not what a master or the AOF sends.
fn decides(call: &Call) -> bool {
    !call.replayed() && !call.is_replica()
}

/// Gives back dropped generations' memory, in the background when it is large.
fn free(dropped: Vec<Generation>) {
    let bytes: usize = dropped.iter().map(Generation::memory_bytes).sum();
    if bytes > FREE_IN_BACKGROUND_BYTES {
        // Where no thread can be made, the drop happens here after all.
        let _ = std::thread::Builder::new().name("redbloom-free".into()).spawn(move || drop(dropped));
    }
}

/// Rotates `filter` to `at_ms`, freeing what expired and following it in the metrics;
/// whether anything changed.
fn rotate_to(filter: &mut WindowFilter, at_ms: u64) -> bool {
    let before = filter.footprint();
    let rotation = filter.rotate(at_ms);
    let changed = rotation.changed();
    free(rotation.dropped);
    metrics::changed(before, filter);
    changed
}

/// Before a write on a master: the rotation its clock asks for, replicated ahead of the write.
fn rotate_for_write(call: &Call, filter: &mut WindowFilter) {
    if decides(call) {
        let now = now_ms();
        if rotate_to(filter, now) {
            call.replicate("BF.ROTATE", &[call.arg(1), now.to_string().as_bytes()]);
        }
    }
}

/// `BF.ROTATE key at_ms`: a master's rotation, applied as it was decided. Refused from a
/// client: a rotation to a time of its choosing would drop what the window still holds.
pub fn rotate(call: &Call) -> Result<(), CommandError> {
    if !call.replayed() {
        return Err(CommandError::RotateNotReplayed);
    }
    let at = crate::shared::parse::integer(call.arg(2))
        .and_then(|at| u64::try_from(at).ok())
        .ok_or(CommandError::BadData)?;
    let mut key = call.open_key_for_writing();
    if let Some(filter) = key.get_mut::<WindowFilter>()? {
        rotate_to(filter, at);
    }
    call.reply_ok();
    Ok(())
}

// ------------------------------------------------------------------------------------------
// Creation and writes

impl From<ParamError> for CommandError {
    fn from(error: ParamError) -> CommandError {
        match error {
            ParamError::Window => CommandError::WindowOutOfRange,
            ParamError::Generations => CommandError::GenerationsOutOfRange,
            ParamError::Capacity => CommandError::CapacityOutOfRange,
            ParamError::ErrorRate => CommandError::ErrorRateOutOfRange,
            ParamError::Expansion => CommandError::ExpansionOutOfRange,
        }
    }
}

/// Whether the key holds a windowed filter.
pub fn holds(key: &Key) -> bool {
    matches!(key.get::<WindowFilter>(), Ok(Some(_)))
}

/// A new windowed filter in the (empty) key, noted for the timer; answers its header, which
/// replicates it.
pub fn create(call: &Call, key: &mut Key, creation: &Creation, window: Window) -> Result<Vec<u8>, CommandError> {
    let params =
        WindowParams::new(window.ms, window.generations, creation.capacity, creation.error_rate, creation.expansion)?;
    let filter = WindowFilter::try_new(params, now_ms(), call.max_filter_bytes()).inspect_err(|_| {
        METRICS.count_refused_creation();
    })?;
    let header = filter.encode_header();
    key.store(filter)?;
    note_call_key(call);
    Ok(header)
}

/// Adds the items from `first_item` on to the windowed filter in `key`: 1 for an item no live
/// generation had, 0 for one it restarted the window of. The first error ends the answers.
/// Answers the number of items processed.
pub fn add_items(
    call: &Call,
    key: &mut Key,
    first_item: usize,
    single: bool,
) -> Result<usize, CommandError> {
    let filter = key.get_mut::<WindowFilter>()?.ok_or(CommandError::Internal)?;
    rotate_for_write(call, filter);
    let before = filter.footprint();
    let budget = call.max_filter_bytes();
    let mut processed = 0;
    let mut answer = |result: Result<bool, redbloom_core::bloom::FilterError>| match result {
        Ok(new) => {
            processed += 1;
            call.reply_bool(new);
        }
        Err(error) => {
            if error == redbloom_core::bloom::FilterError::Full {
                METRICS.count_full_errors(1);
            }
            call.reply_error(error.into());
        }
    };
    if single {
        answer(filter.insert(call.arg(first_item), || budget));
    } else {
        // Hashed as a batch, every generation's lines asked for before the first add; the
        // first error ends it.
        call.reply_array_postponed();
        let mut answered = 0;
        filter.insert_each(call.args_from(first_item), || budget, |result| {
            answered += 1;
            answer(result);
        });
        call.set_array_length(answered);
    }
    METRICS.count_adds(processed);
    metrics::changed(before, filter);
    Ok(processed)
}

// ------------------------------------------------------------------------------------------
// Reads

/// The filter's answer for one item: by this master's clock, or as its master left it.
pub fn exists(call: &Call, key: &Key) -> Result<bool, CommandError> {
    let filter = key.get::<WindowFilter>()?.ok_or(CommandError::Internal)?;
    Ok(if decides(call) { filter.contains_at(call.arg(2), now_ms()) } else { filter.contains(call.arg(2)) })
}

/// The answers for the items from argument 2 on, each to `answer`.
pub fn exists_each(call: &Call, key: &Key, answer: impl FnMut(bool)) -> Result<(), CommandError> {
    let filter = key.get::<WindowFilter>()?.ok_or(CommandError::Internal)?;
    let now = decides(call).then(now_ms);
    filter.contains_each(call.args_from(2), now, answer);
    Ok(())
}

/// BF.CARD: the items of the current window.
pub fn card(key: &Key) -> Result<u64, CommandError> {
    Ok(key.get::<WindowFilter>()?.ok_or(CommandError::Internal)?.items())
}

/// BF.INFO's values for a windowed filter: the five of every filter, then `Window` and
/// `Generations`.
pub fn info_values(key: &Key) -> Result<[Option<i64>; 7], CommandError> {
    let filter = key.get::<WindowFilter>()?.ok_or(CommandError::Internal)?;
    let params = filter.params();
    let expansion = (params.expansion() > 0).then_some(i64::from(params.expansion()));
    Ok([
        Some(filter.capacity() as i64),
        Some(filter.memory_bytes() as i64),
        Some(filter.link_count() as i64),
        Some(filter.items() as i64),
        expansion,
        Some(params.window_ms() as i64),
        Some(i64::from(params.generations())),
    ])
}

/// BF.DEBUG: the window, then one line per live generation.
pub fn debug(call: &Call, key: &Key) -> Result<(), CommandError> {
    let filter = key.get::<WindowFilter>()?.ok_or(CommandError::Internal)?;
    let params = filter.params();
    let generations: Vec<String> = filter
        .generations()
        .map(|generation| {
            format!(
                "generation start:{} items:{} links:{} bytes:{}",
                generation.start_ms(),
                generation.latest_items(),
                generation.filter().links().len(),
                generation.memory_bytes()
            )
        })
        .collect();
    call.reply_array(1 + generations.len());
    call.reply_bulk(
        format!(
            "window:{} generations:{} span:{} items:{} current:{}",
            params.window_ms(),
            params.generations(),
            params.span_ms(),
            filter.items(),
            filter.current_start_ms()
        )
        .as_bytes(),
    );
    for line in generations {
        call.reply_bulk(line.as_bytes());
    }
    Ok(())
}

/// BF.SCANDUMP of a windowed filter: its header at iterator 0, then its chunks, with the
/// plain filters' iterator arithmetic (`dump.rs`); the chunk is sent from the filter's bits.
pub fn scandump(call: &Call, key: &Key, iterator: i64, header_iterator: i64) -> Result<(), CommandError> {
    let filter = key.get::<WindowFilter>()?.ok_or(CommandError::Internal)?;
    call.reply_array(2);
    if iterator == 0 {
        call.reply_integer(header_iterator);
        call.reply_bulk(&filter.encode_header());
        return Ok(());
    }
    let offset = iterator.checked_sub(1).and_then(|offset| u64::try_from(offset).ok());
    if let Some(chunk) = offset.and_then(|offset| filter.chunk_at(offset)) {
        call.reply_integer(iterator.saturating_add(chunk.len() as i64));
        call.reply_bulk(chunk);
    } else {
        call.reply_integer(0);
        call.reply_bulk(&[]);
    }
    Ok(())
}

/// BF.LOADCHUNK of a windowed filter's header: the filter, empty, in the (empty) key.
pub fn load_header(call: &Call, key: &mut Key, data: &[u8]) -> Result<(), CommandError> {
    let filter = WindowFilter::decode_header(data, call.max_filter_bytes())?;
    key.store(filter)?;
    note_call_key(call);
    Ok(())
}

/// BF.LOADCHUNK of a chunk of a windowed filter.
pub fn load_chunk(key: &mut Key, offset: u64, data: &[u8]) -> Result<(), CommandError> {
    let filter = key.get_mut::<WindowFilter>()?.ok_or(CommandError::Internal)?;
    filter.write_chunk(offset, data)?;
    Ok(())
}

// ------------------------------------------------------------------------------------------
// The timer: memory of expired generations comes back even from keys no command touches

/// The keys (database, name) that held a windowed filter when last seen. A name that no
/// longer holds one is forgotten when the timer finds so.
static KEYS: Mutex<BTreeSet<(c_int, Vec<u8>)>> = Mutex::new(BTreeSet::new());

fn note(db: c_int, name: &[u8]) {
    if let Ok(mut keys) = KEYS.lock() {
        keys.insert((db, name.to_vec()));
    }
}

fn note_call_key(call: &Call) {
    note(call.selected_db(), call.arg(1));
}

/// Keyspace events that move a key's value to another name or database: the new name is
/// noted (a stale old one is forgotten later).
extern "C" fn moved(
    ctx: *mut raw::RedisModuleCtx,
    _type: c_int,
    event: *const std::ffi::c_char,
    key: *mut raw::RedisModuleString,
) -> c_int {
    crate::shared::datatype::guarded("windowed filter event", (), || {
        // SAFETY: Redis passes a NUL-terminated event name and a live key for the callback.
        let event = unsafe { std::ffi::CStr::from_ptr(event) }.to_bytes();
        if matches!(event, b"rename_to" | b"copy_to" | b"move_to" | b"restore") {
            // SAFETY: as above; the context's selected database is the event's.
            unsafe {
                let db = raw::RedisModule_GetSelectedDb.map_or(0, |f| f(ctx));
                note(db, string_bytes(key));
            }
        }
    });
    raw::REDISMODULE_OK as c_int
}

/// Subscribes to the events above and starts the timer; at module load.
pub fn start(ctx: *mut raw::RedisModuleCtx) {
    // SAFETY: module load, live context.
    unsafe {
        if let Some(subscribe) = raw::RedisModule_SubscribeToKeyspaceEvents {
            subscribe(ctx, raw::REDISMODULE_NOTIFY_GENERIC as c_int, Some(moved));
        }
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

/// Where the last tick stopped in the key list, so that the next goes on from there.
static NEXT: Mutex<Option<(c_int, Vec<u8>)>> = Mutex::new(None);

extern "C" fn tick(ctx: *mut raw::RedisModuleCtx, _data: *mut c_void) {
    crate::shared::datatype::guarded("windowed filter timer", (), || {
        // SAFETY: the timer's live context.
        let flags = unsafe { raw::RedisModule_GetContextFlags.map_or(0, |f| f(ctx)) };
        let replica = flags & raw::REDISMODULE_CTX_FLAGS_SLAVE as c_int != 0;
        let loading = flags & raw::REDISMODULE_CTX_FLAGS_LOADING as c_int != 0;
        if !replica && !loading {
            visit(ctx);
        }
    });
    arm(ctx);
}

/// Visits up to [`KEYS_PER_TICK`] keys, rotating those due and replicating each rotation.
fn visit(ctx: *mut raw::RedisModuleCtx) {
    let batch: Vec<(c_int, Vec<u8>)> = {
        let (Ok(keys), Ok(next)) = (KEYS.lock(), NEXT.lock()) else { return };
        match &*next {
            Some(start) => keys.range(start.clone()..).take(KEYS_PER_TICK).cloned().collect(),
            None => keys.iter().take(KEYS_PER_TICK).cloned().collect(),
        }
    };
    let now = now_ms();
    let mut gone = Vec::new();
    for (db, name) in &batch {
        // SAFETY: the timer's live context; the string is freed below.
        unsafe {
            let (Some(select), Some(create), Some(free_string)) =
                (raw::RedisModule_SelectDb, raw::RedisModule_CreateString, raw::RedisModule_FreeString)
            else {
                return;
            };
            if select(ctx, *db) != raw::REDISMODULE_OK as c_int {
                gone.push((*db, name.clone()));
                continue;
            }
            let key_name = create(ctx, name.as_ptr().cast(), name.len());
            {
                let mut key = Key::open_write(ctx, key_name);
                match key.get_mut::<WindowFilter>() {
                    Ok(Some(filter)) => {
                        if filter.needs_rotation(now) && rotate_to(filter, now) {
                            replicate_rotation(ctx, key_name, now);
                        }
                    }
                    _ => gone.push((*db, name.clone())),
                }
            }
            free_string(ctx, key_name);
        }
    }
    if let (Ok(mut keys), Ok(mut next)) = (KEYS.lock(), NEXT.lock()) {
        for key in &gone {
            keys.remove(key);
        }
        *next = batch.last().and_then(|last| {
            keys.range((std::ops::Bound::Excluded(last.clone()), std::ops::Bound::Unbounded)).next().cloned()
        });
    }
}

fn replicate_rotation(ctx: *mut raw::RedisModuleCtx, key: *mut raw::RedisModuleString, at_ms: u64) {
    let at = at_ms.to_string();
    // SAFETY: the timer's live context and key; "sb" is a string and a buffer with its length.
    unsafe {
        if let Some(replicate) = raw::RedisModule_Replicate {
            replicate(ctx, c"BF.ROTATE".as_ptr(), c"sb".as_ptr(), key, at.as_ptr(), at.len());
        }
    }
}
