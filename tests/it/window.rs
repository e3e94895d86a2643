//! What the tests of every windowed type share beyond the harness (whose `now_ms`,
//! `sleep_until`, `assert_replica_matches` and `aof_bytes` they use): the margin kept from timed
//! boundaries, the span grid they are timed on, and the bound after which a write is forgotten.

use crate::harness::*;
use std::time::Duration;

/// Kept from every timed boundary.
pub const MARGIN: Duration = Duration::from_millis(300);

/// How long after its latest write a value is certainly forgotten: `window (1 + 1/g)`, in
/// whole milliseconds.
pub fn forget_after(window_ms: u64, generations: u64) -> Duration {
    Duration::from_millis(window_ms + window_ms.div_ceil(generations))
}

/// Sleeps until `offset_ms` after the start of the next span of `span_ms` on the grid from the
/// epoch that generations are cut on, so that the writes that follow open a generation of
/// their own and the next rotation is a whole span away.
pub fn wait_for_next_span(span_ms: u64, offset_ms: u64) {
    let now = now_ms();
    let next = now - now % span_ms + span_ms + offset_ms;
    std::thread::sleep(Duration::from_millis(next - now));
}
