//! The `INFO bf` section: what the server holds (gauges, kept as values are stored, grown and
//! freed) and what was asked of it (counters), one set per data type, each with its own field
//! names (`bf_filters`, `bf_cf_filters`, `bf_cms_sketches`, ...). A command updates a few
//! relaxed atomics once, not per item, and skips those it would not change.
//!
//! The gauges change wherever a value is freed, a background thread included, so they add
//! atomically. The counters are written by command handlers alone, which Redis runs one at a
//! time on its main thread: each is read and written back ([`bump`]), without the locked
//! add that costs a few percent of a single-item command.

use redis_module::raw;
use std::ffi::{c_int, CStr};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::OnceLock;

/// One kind of filter's gauges and counters.
pub struct Metrics {
    names: Names,
    filters: AtomicI64,
    bytes: AtomicI64,
    items: AtomicI64,
    sub_filters: AtomicI64,
    timed_keys: AtomicI64,
    adds: AtomicU64,
    deletes: AtomicU64,
    lookups: AtomicU64,
    found: AtomicU64,
    full_errors: AtomicU64,
    refused_creations: AtomicU64,
}

/// A filter the gauges follow.
pub trait Measured {
    fn metrics() -> &'static Metrics;
    fn footprint(&self) -> Footprint;
}

/// What one filter contributes to the gauges.
#[derive(Clone, Copy, Default)]
pub struct Footprint {
    pub bytes: i64,
    pub items: i64,
    pub sub_filters: i64,
}

/// A filter became a value Redis holds (created, loaded, restored, copied).
pub fn held<F: Measured>(filter: &F) {
    F::metrics().filters.fetch_add(1, Ordering::Relaxed);
    F::metrics().add(Footprint::default(), filter.footprint());
}

/// A filter Redis held is freed (possibly on a background thread).
pub fn freed<F: Measured>(filter: &F) {
    F::metrics().filters.fetch_sub(1, Ordering::Relaxed);
    F::metrics().add(filter.footprint(), Footprint::default());
}

/// A held filter went from `before` to what it is now (items added or deleted, sub-filters
/// grown or compacted away).
pub fn changed<F: Measured>(before: Footprint, filter: &F) {
    F::metrics().add(before, filter.footprint());
}

impl Metrics {
    pub const fn new(names: Names) -> Metrics {
        Metrics {
            names,
            filters: AtomicI64::new(0),
            bytes: AtomicI64::new(0),
            items: AtomicI64::new(0),
            sub_filters: AtomicI64::new(0),
            timed_keys: AtomicI64::new(0),
            adds: AtomicU64::new(0),
            deletes: AtomicU64::new(0),
            lookups: AtomicU64::new(0),
            found: AtomicU64::new(0),
            full_errors: AtomicU64::new(0),
            refused_creations: AtomicU64::new(0),
        }
    }

    fn add(&self, before: Footprint, after: Footprint) {
        let changes = [
            (&self.bytes, after.bytes - before.bytes),
            (&self.items, after.items - before.items),
            (&self.sub_filters, after.sub_filters - before.sub_filters),
        ];
        for (gauge, change) in changes {
            if change != 0 {
                gauge.fetch_add(change, Ordering::Relaxed);
            }
        }
    }

    pub fn count_adds(&self, items: usize) {
        bump(&self.adds, items);
    }

    pub fn count_deletes(&self, items: usize) {
        bump(&self.deletes, items);
    }

    pub fn count_lookups(&self, items: usize, found: usize) {
        bump(&self.lookups, items);
        if found > 0 {
            bump(&self.found, found);
        }
    }

    /// Items a filter had no room for.
    pub fn count_full_errors(&self, items: usize) {
        if items > 0 {
            bump(&self.full_errors, items);
        }
    }

    pub fn count_refused_creation(&self) {
        bump(&self.refused_creations, 1);
    }

    /// The keys the family's windowed type's timer has queued now.
    pub fn set_timed_keys(&self, keys: usize) {
        self.timed_keys.store(i64::try_from(keys).unwrap_or(i64::MAX), Ordering::Relaxed);
    }
}

/// Adds `by` to a counter that only Redis's main thread writes (see the module's comment).
fn bump(counter: &AtomicU64, by: usize) {
    counter.store(counter.load(Ordering::Relaxed).wrapping_add(by as u64), Ordering::Relaxed);
}

/// The field names of one kind of value (Redis puts `bf_` before each), in the order INFO
/// lists them; `None` for what the kind does not have.
pub struct Names {
    /// The values held (a gauge).
    pub values: &'static CStr,
    /// The bytes they hold (a gauge).
    pub bytes: &'static CStr,
    /// The items in them, where a value can count its items (a gauge).
    pub items: Option<&'static CStr>,
    /// Their sub-filters, where a value grows by adding some (a gauge).
    pub sub_filters: Option<&'static CStr>,
    /// The keys the timer of the family's windowed type has queued (a gauge), where it has
    /// one.
    pub timed_keys: Option<&'static CStr>,
    pub adds: &'static CStr,
    pub deletes: Option<&'static CStr>,
    pub lookups: &'static CStr,
    /// The lookups that answered "present", where a lookup answers that.
    pub lookups_found: Option<&'static CStr>,
    /// The items a full value had no room for, where a value can be full.
    pub full_errors: Option<&'static CStr>,
    pub refused_creations: &'static CStr,
}

impl Names {
    /// What a sketch has not: items it counts, sub-filters, lookups that find or a full
    /// state. A sketch names its own five fields over it (`Names { values: .., ..SKETCH }`);
    /// INFO bf's integration test holds every name.
    pub const SKETCH: Names = Names {
        values: c"",
        bytes: c"",
        items: None,
        sub_filters: None,
        timed_keys: None,
        adds: c"",
        deletes: None,
        lookups: c"",
        lookups_found: None,
        full_errors: None,
        refused_creations: c"",
    };
}

/// Every type's metrics, in the order INFO lists them; set once at load.
static REGISTERED: OnceLock<&'static [&'static Metrics]> = OnceLock::new();

/// Registers the section with the server (at module load), listing `all` types' metrics.
pub fn register(ctx: *mut raw::RedisModuleCtx, all: &'static [&'static Metrics]) {
    let _ = REGISTERED.set(all);
    // SAFETY: module load, live context.
    unsafe {
        if let Some(register) = raw::RedisModule_RegisterInfoFunc {
            register(ctx, Some(info));
        }
    }
}

extern "C" fn info(ctx: *mut raw::RedisModuleInfoCtx, _for_crash_report: c_int) {
    // SAFETY: a live info context for the duration of the callback; names are literals.
    // Nothing here can panic, so no guard is needed around this entry point.
    unsafe {
        let (Some(section), Some(signed), Some(unsigned)) = (
            raw::RedisModule_InfoAddSection,
            raw::RedisModule_InfoAddFieldLongLong,
            raw::RedisModule_InfoAddFieldULongLong,
        ) else {
            return;
        };
        // An empty name gives the section the module's own name: `INFO bf`.
        section(ctx, c"".as_ptr());
        for metrics in REGISTERED.get().copied().unwrap_or_default() {
            let names = &metrics.names;
            let gauges = [
                (Some(names.values), &metrics.filters),
                (Some(names.bytes), &metrics.bytes),
                (names.items, &metrics.items),
                (names.sub_filters, &metrics.sub_filters),
                (names.timed_keys, &metrics.timed_keys),
            ];
            for (name, gauge) in gauges {
                if let Some(name) = name {
                    signed(ctx, name.as_ptr(), gauge.load(Ordering::Relaxed));
                }
            }
            let counters = [
                (Some(names.adds), &metrics.adds),
                (names.deletes, &metrics.deletes),
                (Some(names.lookups), &metrics.lookups),
                (names.lookups_found, &metrics.found),
                (names.full_errors, &metrics.full_errors),
                (Some(names.refused_creations), &metrics.refused_creations),
            ];
            for (name, counter) in counters {
                if let Some(name) = name {
                    unsigned(ctx, name.as_ptr(), counter.load(Ordering::Relaxed));
                }
            }
        }
    }
}
