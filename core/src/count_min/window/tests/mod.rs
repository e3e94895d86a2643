//! The windowed sketch: its promises at the window's edges, the running total against a naive
//! sum of per-span sketches under random writes, reads and rotations, its memory, its record
//! (round trips, and hostile records refused), and its merge.

mod merge;
mod promises;
mod records;

use super::*;
use crate::count_min::{CellSize, CountMinSketch, MergeSource};
use crate::decode::{Persistent, Record};
use crate::window::Schedule;

const BUDGET: usize = 1 << 30;

fn windowed(
    width: u64,
    depth: u64,
    cell_size: CellSize,
    window_ms: u64,
    generations: u32,
) -> WindowedCountMin {
    let schedule = Schedule::new(window_ms, generations).unwrap();
    WindowedCountMin::new(width, depth, cell_size, schedule, BUDGET).unwrap()
}

/// Adds `by` to `item` at `at_ms`, rotating first as a master does.
fn add_at(sketch: &mut WindowedCountMin, at_ms: u64, item: &[u8], by: i64) -> u64 {
    sketch.rotate(at_ms);
    sketch.increment(item, by).unwrap().unwrap()
}

fn query(sketch: &WindowedCountMin, item: &[u8], now_ms: Option<u64>) -> u64 {
    let mut answer = None;
    sketch.query_all([item], now_ms, |count| answer = Some(count));
    answer.unwrap()
}

fn record_of(sketch: &WindowedCountMin) -> Record {
    let mut record = Record::default();
    sketch.save_rdb(&mut record);
    record
}

fn load(record: &Record, max_bytes: usize) -> Result<WindowedCountMin, crate::decode::DecodeError> {
    WindowedCountMin::load_rdb(1, &mut record.clone(), max_bytes)
}

/// The plain sum of `parts`, as a naive model of the running total.
fn sum_of(shape: &CountMinSketch, parts: &[&CountMinSketch]) -> CountMinSketch {
    let mut sum = shape.try_empty_like().unwrap();
    let sources: Vec<(MergeSource<'_>, i64)> =
        parts.iter().map(|part| (MergeSource::Sketch(part), 1)).collect();
    if !sources.is_empty() {
        sum.merge(&sources).unwrap();
    }
    sum
}
