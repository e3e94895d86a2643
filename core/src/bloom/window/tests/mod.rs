//! The windowed filter's promises, on a clock the tests control: no false negative within the
//! window at any interleaving, forgetting on time, the error rate under bursts, steady-state
//! memory, and an encoding that round-trips exactly and refuses what it did not write.
//!
//! This file holds what the topic files share: the clock, filters built and streamed on it, and
//! the comparisons of two filters.

mod capacity_and_memory;
mod encoding;
mod pool;
mod rotation;

use super::*;
use crate::bloom::FilterError;
use crate::decode::{Persistent, Record};
use crate::window::{DEFAULT_GENERATIONS, MAX_GENERATIONS, MAX_TIME_MS, MAX_WINDOW_MS};

const UNLIMITED: usize = usize::MAX;
/// A plausible wall-clock time: November 2023, in milliseconds.
const T0: u64 = 1_700_000_000_000;

fn params(window_ms: u64, generations: u32, capacity: u64, rate: f64, expansion: u32) -> WindowParams {
    WindowParams::new(window_ms, generations, capacity, rate, expansion).unwrap()
}

fn filter(window_ms: u64, generations: u32, capacity: u64, rate: f64, expansion: u32) -> WindowFilter {
    WindowFilter::try_new(params(window_ms, generations, capacity, rate, expansion), T0, UNLIMITED).unwrap()
}

/// Adds at `now` as the module does: rotate to its clock, then add.
fn add_at(filter: &mut WindowFilter, item: &[u8], now: u64) -> Result<bool, FilterError> {
    filter.rotate(now);
    filter.insert(item, || UNLIMITED)
}

fn member(n: u64) -> Vec<u8> {
    format!("member:{n}").into_bytes()
}

/// False positives among `probes` items never added, as a lookup at `now` sees them.
fn false_positives(filter: &WindowFilter, probes: u64, now: u64) -> u64 {
    (0..probes).filter(|n| filter.contains_at(format!("absent:{n}").as_bytes(), now)).count() as u64
}

/// A true rate `p` over `n` probes plus four standard deviations.
fn allowed_false_positives(p: f64, n: u64) -> u64 {
    let mean = p * n as f64;
    (mean + 4.0 * (mean * (1.0 - p)).sqrt()).ceil() as u64
}

/// Rebuilds a filter as LOADCHUNK does: header, then every chunk.
fn reloaded(filter: &WindowFilter) -> WindowFilter {
    let mut copy = WindowFilter::decode_header(&filter.encode_header(), UNLIMITED).unwrap();
    for (end, chunk) in filter.chunks() {
        copy.write_chunk(end - chunk.len() as u64, chunk).unwrap();
    }
    copy
}

fn record_of(filter: &WindowFilter) -> Record {
    let mut record = Record::default();
    filter.save_rdb(&mut record);
    record
}

fn same(a: &WindowFilter, b: &WindowFilter) -> bool {
    a.encode_header() == b.encode_header() && a.chunks().eq(b.chunks())
}

/// Streams `per_window` distinct items per window, evenly over time, from `from` for
/// `windows` windows, starting at item number `first`; answers the time after the last add.
fn stream(filter: &mut WindowFilter, first: u64, per_window: u64, from: u64, windows: u64) -> u64 {
    let window = filter.params().window_ms();
    for n in 0..per_window * windows {
        let now = from + n * window / per_window;
        add_at(filter, &member(first + n), now).unwrap();
    }
    from + windows * window
}
