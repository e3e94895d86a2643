//! The sketch's behaviour. What RedisBloom 2.8.2 answered and saved (taken from the real module
//! by hand: its replies, and the values of its DUMP payloads) is pinned where Redis 8.12 kept
//! it: hashing, counts, merges, sizes, the version 0 record. What 8.12 changed (cell sizes,
//! negative increments, refusals instead of saturation, version 1) is pinned against its
//! source. Then the properties: counts never below the truth, refusals that change nothing,
//! merges that add, records that round-trip, hostile records refused.

mod cell_sizes;
mod properties;
mod records;
mod redisbloom_answers;

use super::*;
use crate::decode::{DecodeError, Persistent, Record, RecordValue};

const BUDGET: usize = 1 << 30;
const SIZES: [CellSize; 4] = [CellSize::One, CellSize::Two, CellSize::Four, CellSize::Eight];

fn sketch(width: u64, depth: u64) -> CountMinSketch {
    sized(width, depth, CellSize::DEFAULT)
}

fn sized(width: u64, depth: u64, cell_size: CellSize) -> CountMinSketch {
    CountMinSketch::new(width, depth, cell_size, BUDGET).unwrap()
}

/// The RDB record (version 0, the mark of another cell size first where the cells are not 4
/// bytes).
fn rdb_record(sketch: &CountMinSketch) -> Record {
    let mut record = Record::default();
    sketch.save_rdb(&mut record);
    record
}

/// The record RESTORE payloads carry, and its version.
fn portable(sketch: &CountMinSketch) -> (i32, Record) {
    let mut record = Record::default();
    let version = sketch.save_portable(&mut record);
    (version, record)
}

/// The record RedisBloom 2.8 saves of a sketch of 4-byte cells: version 0, which the AOF
/// rewrite writes for such a sketch.
fn record(sketch: &CountMinSketch) -> Record {
    let (version, record) = portable(sketch);
    assert_eq!(version, 0, "a sketch of 4-byte cells travels as version 0");
    record
}

/// The counters, as numbers, whatever their size.
fn counters(sketch: &CountMinSketch) -> Vec<u64> {
    let bytes = sketch.counter_bytes();
    bytes
        .chunks(sketch.cell_size().bytes())
        .map(|cell| {
            let mut wide = [0; 8];
            wide[..cell.len()].copy_from_slice(cell);
            u64::from_le_bytes(wide)
        })
        .collect()
}

fn bytes_of(counters: &[u64], cell_size: CellSize) -> Vec<u8> {
    counters.iter().flat_map(|counter| counter.to_le_bytes()[..cell_size.bytes()].to_vec()).collect()
}

/// RedisBloom's record of version 0: width, depth, count, then the 4-byte counters.
fn redisbloom_record(width: u64, depth: u64, count: u64, counters: &[u64]) -> Record {
    Record(
        [
            RecordValue::Unsigned(width),
            RecordValue::Unsigned(depth),
            RecordValue::Unsigned(count),
            RecordValue::Bytes(bytes_of(counters, CellSize::Four)),
        ]
        .into(),
    )
}

/// Redis 8.12's record of version 1: the cell size after the count, counters of that size.
fn version_1_record(width: u64, depth: u64, count: u64, cell_size: CellSize, counters: &[u64]) -> Record {
    Record(
        [
            RecordValue::Unsigned(width),
            RecordValue::Unsigned(depth),
            RecordValue::Unsigned(count),
            RecordValue::Unsigned(cell_size.bytes() as u64),
            RecordValue::Bytes(bytes_of(counters, cell_size)),
        ]
        .into(),
    )
}

fn increment_all(sketch: &mut CountMinSketch, items: &[(&[u8], i64)]) -> Vec<Result<u64, IncrementError>> {
    let mut answers = Vec::new();
    sketch.increment_all(items, |count| answers.push(count));
    answers
}

fn query_all(sketch: &CountMinSketch, items: &[&[u8]]) -> Vec<u64> {
    let mut answers = Vec::new();
    sketch.query_all(items.iter().copied(), |count| answers.push(count));
    answers
}

/// Answers that are all counts.
fn counted(counts: &[u64]) -> Vec<Result<u64, IncrementError>> {
    counts.iter().map(|&count| Ok(count)).collect()
}

fn load(mut record: Record, encoding_version: i32, max_bytes: usize) -> Result<CountMinSketch, DecodeError> {
    CountMinSketch::load_rdb(encoding_version, &mut record, max_bytes)
}
