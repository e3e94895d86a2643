//! The record: round trips at every cell size, and hostile records refused, within the budget.

use super::*;
use crate::decode::{DecodeError, RecordValue};

/// A sketch with a closed generation, an open one and one nearly expired.
fn busy(cell_size: CellSize) -> WindowedCountMin {
    let mut sketch = windowed(20, 3, cell_size, 1000, 4);
    for (at, item) in [(0, b"a"), (300, b"b"), (600, b"c"), (900, b"d"), (1100, b"e")] {
        add_at(&mut sketch, at, item, 7);
    }
    sketch
}

#[test]
fn records_round_trip_at_every_cell_size() {
    for cell_size in [CellSize::One, CellSize::Two, CellSize::Four, CellSize::Eight] {
        let sketch = busy(cell_size);
        let record = record_of(&sketch);
        let loaded = load(&record, BUDGET).unwrap();
        assert_eq!(record_of(&loaded), record);
        assert_eq!(loaded.memory_bytes(), sketch.memory_bytes());
        assert_eq!(loaded.cell_size(), cell_size);
        for item in [b"a", b"b", b"e"] {
            assert_eq!(query(&loaded, item, None), query(&sketch, item, None));
        }
        assert!(WindowedCountMin::load_rdb(0, &mut record.clone(), BUDGET).is_err());
        assert!(WindowedCountMin::load_rdb(2, &mut record.clone(), BUDGET).is_err());
    }
}

/// Every prefix, every value changed, and records that lie about their sums or kinds: refused
/// (or, for a change a valid sketch can hold, loaded), never a panic.
#[test]
fn hostile_records_are_refused() {
    let record = record_of(&busy(CellSize::Four));
    for cut in 0..record.0.len() {
        let mut short = record.clone();
        short.0.truncate(cut);
        assert!(load(&short, BUDGET).is_err(), "cut at {cut}");
    }
    for at in 0..record.0.len() {
        for replacement in [
            RecordValue::Unsigned(0),
            RecordValue::Unsigned(1),
            RecordValue::Unsigned(2),
            RecordValue::Unsigned(u64::MAX),
            RecordValue::Unsigned(1 << 40),
            RecordValue::Bytes(vec![0xff; 240]),
            RecordValue::Bytes(Vec::new()),
            RecordValue::Double(1.0),
        ] {
            let mut changed = record.clone();
            changed.0[at] = replacement;
            if let Ok(loaded) = load(&changed, BUDGET) {
                assert_eq!(record_of(&loaded), changed, "a loaded record saves as it was");
            }
        }
    }
    // Records that only the checks between their parts refuse.
    let fields = |record: &Record| record.0.iter().cloned().collect::<Vec<_>>();
    let total_counters = 4;
    let mut below = fields(&record);
    if let RecordValue::Bytes(counters) = &mut below[total_counters] {
        counters.fill(0);
    }
    assert_eq!(
        load(&Record(below.into()), BUDGET).err(),
        Some(DecodeError::Malformed("a total below the sum of its generations"))
    );
    // Without its open generation, the total must be the closed ones' sum exactly.
    let mut closed_only = windowed(20, 3, CellSize::Four, 1000, 4);
    add_at(&mut closed_only, 0, b"a", 7);
    closed_only.rotate(300);
    let mut record = record_of(&closed_only);
    if let RecordValue::Unsigned(count) = &mut record.0[2] {
        *count += 1;
    }
    assert!(load(&record, BUDGET).is_err());
}

#[test]
fn records_are_held_to_the_budget_of_every_generation_they_may_hold() {
    let sketch = busy(CellSize::Four);
    let record = record_of(&sketch);
    let one = 20 * 3 * 4;
    let most = sketch.schedule().max_live_generations() as usize;
    assert_eq!(load(&record, most * one - 1).err(), Some(DecodeError::TooLarge));
    assert!(load(&record, most * one + 4096).is_ok());
    assert_eq!(
        WindowedCountMin::new(20, 3, CellSize::Four, *sketch.schedule(), most * one - 1).err(),
        Some(crate::count_min::SizeError::TooLarge)
    );
}
