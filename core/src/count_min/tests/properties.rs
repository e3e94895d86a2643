//! Properties over random operations at every cell size: counts never below the truth,
//! refusals that change nothing, a total that is the sum of what was accepted, merges that
//! add, records that round-trip, loaders that never panic.

use super::*;
use proptest::prelude::*;

fn cell_size() -> impl Strategy<Value = CellSize> {
    prop::sample::select(SIZES.to_vec())
}

/// A small sketch's width, depth and cell size.
fn shape() -> impl Strategy<Value = (u64, u64, CellSize)> {
    (1u64..40, 1u64..6, cell_size())
}

/// Operations on a small sketch: (item number, increment), few items so that they collide;
/// increments large enough to reach a 1- or 2-byte counter's maximum.
fn operations() -> impl Strategy<Value = Vec<(u8, i64)>> {
    proptest::collection::vec((0u8..40, -300i64..1000), 0..200)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn counts_are_never_below_the_truth(
        (width, depth, cell_size) in shape(),
        operations in operations(),
    ) {
        let mut sketch = sized(width, depth, cell_size);
        let mut truth = [0u64; 40];
        for &(item, by) in &operations {
            let own = &mut truth[usize::from(item)];
            // A decrement within the item's own count is never refused: each of its counters
            // holds at least that count, and the total at least the sum of all.
            let by = if by < 0 { -(by.unsigned_abs().min(*own) as i64) } else { by };
            match sketch.increment(&[item], by) {
                Ok(answered) => {
                    *own = own.checked_add_signed(by).unwrap();
                    prop_assert!(answered >= *own);
                }
                Err(refused) => {
                    prop_assert!(by > 0, "{by} refused: {refused:?}");
                    prop_assert_eq!(refused, IncrementError::Overflow);
                }
            }
        }
        for (item, &count) in truth.iter().enumerate() {
            prop_assert!(sketch.query(&[item as u8]) >= count);
        }
        prop_assert_eq!(sketch.count(), truth.iter().sum::<u64>());
        prop_assert!(counters(&sketch).iter().all(|&counter| counter <= cell_size.max()));
    }

    #[test]
    fn refusals_change_nothing_and_the_total_sums_what_was_accepted(
        (width, depth, cell_size) in shape(),
        operations in proptest::collection::vec((0u8..40, any::<i64>()), 0..100),
    ) {
        let mut sketch = sized(width, depth, cell_size);
        let mut total = 0i128;
        for &(item, by) in &operations {
            // Edges as often as anything: each cell's maximum, and one past it, both ways.
            let by = match by.rem_euclid(4) {
                0 => by,
                1 => by.signum() * cell_size.max() as i64,
                2 => by.signum() * (cell_size.max() as i64).saturating_add(1),
                _ => by % 300,
            };
            let before = rdb_record(&sketch);
            if sketch.increment(&[item], by).is_ok() {
                total += i128::from(by);
            } else {
                prop_assert_eq!(rdb_record(&sketch), before);
            }
            prop_assert_eq!(i128::from(sketch.count()), total);
        }
        prop_assert!(i64::try_from(sketch.count()).is_ok());
    }

    #[test]
    fn batches_answer_as_single_items(
        (width, depth, cell_size) in shape(),
        operations in operations(),
    ) {
        let (mut batched, mut single) = (sized(width, depth, cell_size), sized(width, depth, cell_size));
        let names: Vec<[u8; 1]> = operations.iter().map(|&(item, _)| [item]).collect();
        let items: Vec<(&[u8], i64)> = names.iter().zip(&operations).map(|(name, &(_, by))| (&name[..], by)).collect();
        let answers = increment_all(&mut batched, &items);
        let expected: Vec<_> = items.iter().map(|&(item, by)| single.increment(item, by)).collect();
        prop_assert_eq!(answers, expected);
        prop_assert_eq!(rdb_record(&batched), rdb_record(&single));
    }

    #[test]
    fn a_merge_adds_the_weighted_increments(
        width in 1u64..40,
        depth in 1u64..6,
        cell_size in prop::sample::select(vec![CellSize::Four, CellSize::Eight]),
        left in proptest::collection::vec((0u8..40, 0i64..1000), 0..200),
        right in proptest::collection::vec((0u8..40, 0i64..1000), 0..200),
        weights in (0i64..4, 0i64..4),
    ) {
        let [mut a, mut b, mut together] = [0; 3].map(|_| sized(width, depth, cell_size));
        for &(item, by) in &left {
            a.increment(&[item], by).unwrap();
            together.increment(&[item], by * weights.0).unwrap();
        }
        for &(item, by) in &right {
            b.increment(&[item], by).unwrap();
            together.increment(&[item], by * weights.1).unwrap();
        }
        let mut merged = sized(width, depth, cell_size);
        merged.merge(&[(MergeSource::Sketch(&a), weights.0), (MergeSource::Sketch(&b), weights.1)]).unwrap();
        prop_assert_eq!(rdb_record(&merged), rdb_record(&together));
        // Into a source, the same.
        a.merge(&[(MergeSource::Destination, weights.0), (MergeSource::Sketch(&b), weights.1)]).unwrap();
        prop_assert_eq!(rdb_record(&a), rdb_record(&together));
    }

    #[test]
    fn saved_sketches_load_as_they_were(
        (width, depth, cell_size) in shape(),
        operations in operations(),
    ) {
        let mut sketch = sized(width, depth, cell_size);
        for &(item, by) in &operations {
            let _ = sketch.increment(&[item], by);
        }
        let (version, travelling) = portable(&sketch);
        for (version, mut saved) in [(CountMinSketch::ENCODING_VERSION, rdb_record(&sketch)), (version, travelling)] {
            let loaded = CountMinSketch::load_rdb(version, &mut saved, BUDGET).unwrap();
            prop_assert!(saved.0.is_empty());
            prop_assert_eq!(rdb_record(&loaded), rdb_record(&sketch));
            for item in 0..40u8 {
                prop_assert_eq!(loaded.query(&[item]), sketch.query(&[item]));
            }
        }
    }

    #[test]
    fn arbitrary_records_never_panic_the_loader(
        version in 0i32..3,
        fields in proptest::collection::vec(prop_oneof![0u64..64, Just(i64::MAX as u64), any::<u64>()], 0..7),
        counters in proptest::collection::vec(any::<u8>(), 0..300),
    ) {
        let mut values: Vec<RecordValue> = fields.iter().map(|&value| RecordValue::Unsigned(value)).collect();
        values.insert(values.len().min(3 + usize::from(version >= 1)), RecordValue::Bytes(counters));
        if let Ok(mut sketch) = CountMinSketch::load_rdb(version, &mut Record(values.into()), BUDGET) {
            prop_assert!(i64::try_from(sketch.count()).is_ok());
            prop_assert!(self::counters(&sketch).iter().all(|&counter| counter <= sketch.cell_size().max()));
            if sketch.increment(b"probe", 1).is_ok() {
                prop_assert!(sketch.query(b"probe") >= 1);
            }
            let _ = sketch.increment(b"probe", -2);
        }
    }
}
