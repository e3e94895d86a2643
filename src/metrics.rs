//! The `INFO bf` section: what the server holds in filters (gauges, kept as filters are
//! stored, grown and freed) and what was asked of them (counters), for Bloom filters
//! (`bf_filters`, ...) and cuckoo filters (`bf_cf_filters`, ...). A command updates a few
//! relaxed atomics once, not per item, and skips those it would not change.

use crate::filter::cuckoo::CuckooFilter;
use crate::filter::Filter;
use redis_module::raw;
use std::ffi::{c_int, CStr};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// One kind of filter's gauges and counters.
pub struct Metrics {
    filters: AtomicI64,
    bytes: AtomicI64,
    items: AtomicI64,
    sub_filters: AtomicI64,
    adds: AtomicU64,
    deletes: AtomicU64,
    lookups: AtomicU64,
    found: AtomicU64,
    full_errors: AtomicU64,
    refused_creations: AtomicU64,
}

pub static BLOOM: Metrics = Metrics::new();
pub static CUCKOO: Metrics = Metrics::new();

/// A filter the gauges follow.
pub trait Measured {
    fn metrics() -> &'static Metrics;
    fn footprint(&self) -> Footprint;
}

impl Measured for Filter {
    fn metrics() -> &'static Metrics {
        &BLOOM
    }

    fn footprint(&self) -> Footprint {
        Footprint {
            bytes: self.memory_bytes() as i64,
            items: self.items() as i64,
            sub_filters: self.link_count() as i64,
        }
    }
}

impl Measured for CuckooFilter {
    fn metrics() -> &'static Metrics {
        &CUCKOO
    }

    fn footprint(&self) -> Footprint {
        Footprint {
            bytes: self.size() as i64,
            items: self.items() as i64,
            sub_filters: self.sub_filters().len() as i64,
        }
    }
}

/// What one filter contributes to the gauges.
#[derive(Clone, Copy, Default)]
pub struct Footprint {
    bytes: i64,
    items: i64,
    sub_filters: i64,
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
    const fn new() -> Metrics {
        Metrics {
            filters: AtomicI64::new(0),
            bytes: AtomicI64::new(0),
            items: AtomicI64::new(0),
            sub_filters: AtomicI64::new(0),
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
        self.adds.fetch_add(items as u64, Ordering::Relaxed);
    }

    pub fn count_deletes(&self, items: usize) {
        self.deletes.fetch_add(items as u64, Ordering::Relaxed);
    }

    pub fn count_lookups(&self, items: usize, found: usize) {
        self.lookups.fetch_add(items as u64, Ordering::Relaxed);
        if found > 0 {
            self.found.fetch_add(found as u64, Ordering::Relaxed);
        }
    }

    /// Items a filter had no room for.
    pub fn count_full_errors(&self, items: usize) {
        if items > 0 {
            self.full_errors.fetch_add(items as u64, Ordering::Relaxed);
        }
    }

    pub fn count_refused_creation(&self) {
        self.refused_creations.fetch_add(1, Ordering::Relaxed);
    }
}

/// The field names of one kind of filter (Redis puts `bf_` before each).
struct Names {
    gauges: [&'static CStr; 4],
    adds: &'static CStr,
    /// Bloom filters have no deletes.
    deletes: Option<&'static CStr>,
    counters: [&'static CStr; 4],
}

const BLOOM_NAMES: Names = Names {
    gauges: [c"filters", c"bytes", c"items", c"sub_filters"],
    adds: c"adds",
    deletes: None,
    counters: [c"lookups", c"lookups_found", c"full_filter_errors", c"refused_creations"],
};

const CUCKOO_NAMES: Names = Names {
    gauges: [c"cf_filters", c"cf_bytes", c"cf_items", c"cf_sub_filters"],
    adds: c"cf_adds",
    deletes: Some(c"cf_deletes"),
    counters: [c"cf_lookups", c"cf_lookups_found", c"cf_full_filter_errors", c"cf_refused_creations"],
};

/// Registers the section with the server (at module load).
pub fn register(ctx: *mut raw::RedisModuleCtx) {
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
        for (metrics, names) in [(&BLOOM, &BLOOM_NAMES), (&CUCKOO, &CUCKOO_NAMES)] {
            let gauges = [&metrics.filters, &metrics.bytes, &metrics.items, &metrics.sub_filters];
            for (name, gauge) in names.gauges.iter().zip(gauges) {
                signed(ctx, name.as_ptr(), gauge.load(Ordering::Relaxed));
            }
            let deletes = names.deletes.map(|name| (name, &metrics.deletes));
            let counters =
                [&metrics.lookups, &metrics.found, &metrics.full_errors, &metrics.refused_creations];
            let all = std::iter::once((names.adds, &metrics.adds))
                .chain(deletes)
                .chain(names.counters.into_iter().zip(counters));
            for (name, counter) in all {
                unsigned(ctx, name.as_ptr(), counter.load(Ordering::Relaxed));
            }
        }
    }
}
