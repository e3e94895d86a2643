//! Counters of what the requests cost, served as `GET /metrics` in Prometheus's text format.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Clone, Copy)]
pub enum Counter {
    /// Requests under /users.
    Requests,
    /// Lookups the filter answered with "definitely not": no cache, no database.
    FilterRejections,
    /// Lookups that found no filter key and went on to the cache (see `bloom::Check`).
    FilterMissing,
    CacheHits,
    DatabaseQueries,
    /// Queries that found no row: the filter's false positives, and users deleted since it was
    /// built. Many more of them than the filter's error rate explains means: rebuild it.
    DatabaseMisses,
    UsersCreated,
    UsersDeleted,
    Errors,
}

const COUNTERS: [(Counter, &str); 9] = [
    (Counter::Requests, "requests_total"),
    (Counter::FilterRejections, "filter_rejections_total"),
    (Counter::FilterMissing, "filter_missing_total"),
    (Counter::CacheHits, "cache_hits_total"),
    (Counter::DatabaseQueries, "database_queries_total"),
    (Counter::DatabaseMisses, "database_misses_total"),
    (Counter::UsersCreated, "users_created_total"),
    (Counter::UsersDeleted, "users_deleted_total"),
    (Counter::Errors, "errors_total"),
];

#[derive(Default)]
pub struct Metrics {
    values: [AtomicU64; COUNTERS.len()],
}

impl Metrics {
    pub fn count(&self, counter: Counter) {
        self.values[counter as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// One `name value` line per counter.
    pub fn render(&self) -> String {
        COUNTERS
            .iter()
            .map(|&(counter, name)| {
                format!("{name} {}\n", self.values[counter as usize].load(Ordering::Relaxed))
            })
            .collect()
    }
}
