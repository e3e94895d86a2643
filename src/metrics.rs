//! The `INFO bf` section: what the server holds in filters (gauges, kept as filters are
//! stored, grown and freed) and what was asked of them (counters). Every update is one
//! relaxed atomic per command, not per item, so it does not show in `make bench`.

use crate::filter::Filter;
use redis_module::raw;
use std::ffi::{c_int, CStr};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// What one filter contributes to the gauges.
#[derive(Clone, Copy, Default)]
pub struct Footprint {
    bytes: i64,
    items: i64,
    links: i64,
}

impl Footprint {
    pub fn of(filter: &Filter) -> Footprint {
        Footprint {
            bytes: filter.memory_bytes() as i64,
            items: filter.items() as i64,
            links: filter.link_count() as i64,
        }
    }
}

static FILTERS: AtomicI64 = AtomicI64::new(0);
static BYTES: AtomicI64 = AtomicI64::new(0);
static ITEMS: AtomicI64 = AtomicI64::new(0);
static LINKS: AtomicI64 = AtomicI64::new(0);
static ADDS: AtomicU64 = AtomicU64::new(0);
static LOOKUPS: AtomicU64 = AtomicU64::new(0);
static FOUND: AtomicU64 = AtomicU64::new(0);
static FULL_ERRORS: AtomicU64 = AtomicU64::new(0);
static REFUSED_CREATIONS: AtomicU64 = AtomicU64::new(0);

/// A filter became a value Redis holds (created, loaded, restored, copied).
pub fn held(filter: &Filter) {
    FILTERS.fetch_add(1, Ordering::Relaxed);
    changed(Footprint::default(), Footprint::of(filter));
}

/// A filter Redis held is freed (possibly on a background thread).
pub fn freed(filter: &Filter) {
    FILTERS.fetch_sub(1, Ordering::Relaxed);
    changed(Footprint::of(filter), Footprint::default());
}

/// A held filter went from `before` to `after` (items added, links grown).
pub fn changed(before: Footprint, after: Footprint) {
    BYTES.fetch_add(after.bytes - before.bytes, Ordering::Relaxed);
    ITEMS.fetch_add(after.items - before.items, Ordering::Relaxed);
    LINKS.fetch_add(after.links - before.links, Ordering::Relaxed);
}

pub fn count_adds(items: usize) {
    ADDS.fetch_add(items as u64, Ordering::Relaxed);
}

pub fn count_lookups(items: usize, found: usize) {
    LOOKUPS.fetch_add(items as u64, Ordering::Relaxed);
    FOUND.fetch_add(found as u64, Ordering::Relaxed);
}

pub fn count_full_error() {
    FULL_ERRORS.fetch_add(1, Ordering::Relaxed);
}

pub fn count_refused_creation() {
    REFUSED_CREATIONS.fetch_add(1, Ordering::Relaxed);
}

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
    let gauges: [(&CStr, i64); 4] = [
        (c"filters", FILTERS.load(Ordering::Relaxed)),
        (c"bytes", BYTES.load(Ordering::Relaxed)),
        (c"items", ITEMS.load(Ordering::Relaxed)),
        (c"sub_filters", LINKS.load(Ordering::Relaxed)),
    ];
    let counters: [(&CStr, u64); 5] = [
        (c"adds", ADDS.load(Ordering::Relaxed)),
        (c"lookups", LOOKUPS.load(Ordering::Relaxed)),
        (c"lookups_found", FOUND.load(Ordering::Relaxed)),
        (c"full_filter_errors", FULL_ERRORS.load(Ordering::Relaxed)),
        (c"refused_creations", REFUSED_CREATIONS.load(Ordering::Relaxed)),
    ];
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
        for (name, value) in gauges {
            signed(ctx, name.as_ptr(), value);
        }
        for (name, value) in counters {
            unsigned(ctx, name.as_ptr(), value);
        }
    }
}
