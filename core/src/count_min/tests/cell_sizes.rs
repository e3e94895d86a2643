//! What Redis 8.12's RedisBloom changed (its `src/cms.c` and `tests/flow/test_cms.py`, pull
//! requests 1063 and 1066): counters of 1, 2, 4 or 8 bytes, negative increments, and an
//! increment refused whole, counters and total untouched, where 2.8 saturated the counters and
//! wrapped the total.

use super::*;
use crate::murmur::murmur2;

const MAXIMA: [(CellSize, u64); 4] = [
    (CellSize::One, 255),
    (CellSize::Two, 65_535),
    (CellSize::Four, 4_294_967_295),
    (CellSize::Eight, i64::MAX as u64),
];

#[test]
fn each_cell_size_counts_to_its_maximum_and_refuses_past_it() {
    for (cell_size, max) in MAXIMA {
        assert_eq!(cell_size.max(), max);
        assert_eq!(CellSize::from_bytes(cell_size.bytes() as u64), Some(cell_size));
        // A 1 x 1 sketch has one counter: its count is exact.
        let mut one = sized(1, 1, cell_size);
        assert_eq!(one.increment(b"a", max as i64), Ok(max), "{cell_size:?}");
        let full = rdb_record(&one);
        assert_eq!(one.increment(b"a", 1), Err(IncrementError::Overflow));
        assert_eq!(one.increment(b"b", i64::MAX), Err(IncrementError::Overflow));
        assert_eq!(rdb_record(&one), full, "{cell_size:?}: a refusal changed the sketch");
        assert_eq!((one.query(b"a"), one.count()), (max, max));
        // An increment of 0 answers the count, full or not (2.8 answered an overflow).
        assert_eq!(one.increment(b"a", 0), Ok(max));
        // Down to 0 and no further.
        assert_eq!(one.increment(b"a", -(max as i64)), Ok(0));
        assert_eq!(one.increment(b"a", -1), Err(IncrementError::Underflow));
        assert_eq!((one.query(b"a"), one.count()), (0, 0));
    }
    for bytes in [0, 3, 5, 16, u64::MAX] {
        assert_eq!(CellSize::from_bytes(bytes), None);
    }
    assert_eq!(CellSize::DEFAULT, CellSize::Four);
}

#[test]
fn an_increment_past_the_cell_is_refused_outright() {
    // CMS.INITBYDIM cms 20 5 CELL_SIZE 1; CMS.INCRBY cms a 256: the overflow, and nothing
    // counted.
    let mut cms = sized(20, 5, CellSize::One);
    assert_eq!(cms.increment(b"a", 256), Err(IncrementError::Overflow));
    assert_eq!((cms.query(b"a"), cms.count()), (0, 0));
    assert!(counters(&cms).iter().all(|&counter| counter == 0));
}

#[test]
fn decrements_take_back_what_was_counted() {
    let mut cms = sketch(1000, 5);
    assert_eq!(cms.increment(b"a", 100), Ok(100));
    assert_eq!(cms.increment(b"a", -40), Ok(60));
    assert_eq!((cms.query(b"a"), cms.count()), (60, 60));
    assert_eq!(cms.increment(b"a", -60), Ok(0));
    assert_eq!((cms.query(b"a"), cms.count()), (0, 0));
    assert_eq!(cms.increment(b"a", 0), Ok(0));

    assert_eq!(cms.increment(b"a", 10), Ok(10));
    let before = rdb_record(&cms);
    assert_eq!(cms.increment(b"a", -11), Err(IncrementError::Underflow));
    assert_eq!(cms.increment(b"never added", -1), Err(IncrementError::Underflow));
    assert_eq!(rdb_record(&cms), before);
    // A refusal does not stop the other pairs of the command.
    let answers = increment_all(&mut cms, &[(b"a", -100), (b"b", 3), (b"a", -4)]);
    assert_eq!(answers, [Err(IncrementError::Underflow), Ok(3), Ok(6)]);
    assert_eq!((query_all(&cms, &[b"a", b"b"]), cms.count()), (vec![6, 3], 9));
    // RedisBloom 8.12's test at every cell size.
    for cell_size in SIZES {
        let mut one = sized(1, 1, cell_size);
        let answers = increment_all(&mut one, &[(b"a", 200), (b"a", -150), (b"a", -51)]);
        assert_eq!(answers, [Ok(200), Ok(50), Err(IncrementError::Underflow)]);
        assert_eq!(one.query(b"a"), 50);
    }
}

/// An item that shares `other`'s counter in row 0 or not (`first_shared`), and the other way
/// in some later row: an increment refused there has rows to put back.
fn item_with_rows_to_undo(other: &[u8], width: u64, depth: u32, first_shared: bool) -> Vec<u8> {
    let shared =
        |item: &[u8], row: u32| murmur2(item, row) % width as u32 == murmur2(other, row) % width as u32;
    (0..1_000_000)
        .map(|n| format!("a{n}").into_bytes())
        .find(|item| {
            shared(item, 0) == first_shared && (1..depth).any(|row| shared(item, row) != first_shared)
        })
        .expect("such an item among the first million")
}

#[test]
fn a_refused_increment_puts_back_the_rows_it_changed() {
    // RedisBloom 8.12's test: CMS.INITBYDIM cms 2 4 CELL_SIZE 1, filler 200, then a 100; and
    // deeper and larger sketches, the largest taking the prefetching path in a batch.
    for (width, depth) in [(2, 4), (3, 40), (7_000, 40)] {
        let mut cms = sized(width, depth, CellSize::One);
        assert_eq!(cms.increment(b"filler", 200), Ok(200));
        // Up: refused at a later row, shared with the filler.
        let item = item_with_rows_to_undo(b"filler", width, depth as u32, false);
        let before = rdb_record(&cms);
        assert_eq!(cms.increment(&item, 100), Err(IncrementError::Overflow));
        assert_eq!(rdb_record(&cms), before, "{width} x {depth}");
        let answers = increment_all(&mut cms, &[(&item, 100), (b"filler", 1), (&item, 55)]);
        assert_eq!(answers[..2], [Err(IncrementError::Overflow), Ok(201)], "{width} x {depth}");
        assert_eq!(answers[2], Err(IncrementError::Overflow));
        assert_eq!(cms.count(), 201);
        // Down: refused at a later row, not shared with the filler, after taking from its own.
        let item = item_with_rows_to_undo(b"filler", width, depth as u32, true);
        let before = rdb_record(&cms);
        assert_eq!(cms.increment(&item, -150), Err(IncrementError::Underflow));
        assert_eq!(
            increment_all(&mut cms, &[(&item, -150), (&item, -150)]),
            [Err(IncrementError::Underflow); 2]
        );
        assert_eq!(rdb_record(&cms), before, "{width} x {depth}");
    }
}

#[test]
fn the_total_stops_at_i64_max() {
    // RedisBloom 8.12's test: CELL_SIZE 8, one item at i64::MAX, then 1 more of an item in
    // another counter, which has room: refused, since CMS.INFO replies the total as an
    // integer.
    let mut cms = sized(100, 1, CellSize::Eight);
    let max = i64::MAX as u64;
    assert_eq!(cms.increment(b"a", i64::MAX), Ok(max));
    let other = (0..1000).map(|n| format!("x{n}")).find(|item| cms.query(item.as_bytes()) == 0).unwrap();
    assert_eq!(cms.increment(other.as_bytes(), 1), Err(IncrementError::Overflow));
    assert_eq!((cms.query(other.as_bytes()), cms.count()), (0, max));
    // Each item's counters below their maximum, the total at it.
    let mut halves = sized(100, 1, CellSize::Eight);
    assert_eq!(halves.increment(b"a", i64::MAX / 2 + 1), Ok(max / 2 + 1));
    assert_eq!(halves.increment(other.as_bytes(), i64::MAX / 2), Ok(max / 2));
    assert_eq!(halves.count(), max);
    assert_eq!(halves.increment(b"a", 1), Err(IncrementError::Overflow));
}

#[test]
fn a_decrement_past_the_total_is_refused_though_the_counters_allow_it() {
    // RedisBloom 8.12's test: a RESTORE of a record whose total is 0 and whose counters hold
    // 7 for `a` (no command makes one; it loads). Taking 7 from `a` would wrap the total.
    let mut honest = sketch(20, 5);
    honest.increment(b"a", 7).unwrap();
    let cells = counters(&honest);
    let mut bad = load(version_1_record(20, 5, 0, CellSize::Four, &cells), 1, BUDGET).unwrap();
    assert_eq!((bad.query(b"a"), bad.count()), (7, 0));
    assert_eq!(bad.increment(b"a", -7), Err(IncrementError::Underflow));
    assert_eq!((bad.query(b"a"), bad.count()), (7, 0));
    assert_eq!(honest.increment(b"a", -7), Ok(0));
}

#[test]
fn merges_need_one_cell_size_and_stay_within_it() {
    use MergeSource::{Destination, Sketch};
    // RedisBloom 8.12's tests: CELL_SIZE 2 sketches a (x 10), b (x 7) into dest.
    let [mut a, mut b, mut dest] = [0; 3].map(|_| sized(20, 5, CellSize::Two));
    a.increment(b"x", 10).unwrap();
    b.increment(b"x", 7).unwrap();
    dest.merge(&[(Sketch(&a), 1), (Sketch(&b), 1)]).unwrap();
    assert_eq!((dest.query(b"x"), dest.count(), dest.cell_size()), (17, 17, CellSize::Two));
    dest.merge(&[(Sketch(&a), 1000), (Sketch(&b), 1)]).unwrap();
    assert_eq!(dest.query(b"x"), 10_007);
    let before = rdb_record(&dest);
    assert_eq!(dest.merge(&[(Sketch(&a), 10_000), (Sketch(&b), 1)]), Err(MergeError::Overflow));
    assert_eq!(dest.merge(&[(Destination, 7)]), Err(MergeError::Overflow));
    assert_eq!(rdb_record(&dest), before);
    // Another cell size is refused either way round, after the width and depth.
    let small = sized(20, 5, CellSize::One);
    let mut large = sized(20, 5, CellSize::Four);
    assert_eq!(large.merge(&[(Sketch(&small), 1)]), Err(MergeError::CellSize));
    assert_eq!(dest.merge(&[(Sketch(&a), 1), (Sketch(&large), 1)]), Err(MergeError::CellSize));
    assert_eq!(dest.merge(&[(Sketch(&sized(21, 5, CellSize::One)), 1)]), Err(MergeError::Dimensions));
    assert_eq!(rdb_record(&dest), before);
    // 8-byte counters merge up to i64::MAX, and no further.
    let mut big = sized(1, 1, CellSize::Eight);
    big.increment(b"a", i64::MAX / 2).unwrap();
    big.merge(&[(Destination, 2)]).unwrap();
    assert_eq!(big.query(b"a"), i64::MAX as u64 - 1);
    assert_eq!(big.merge(&[(Destination, 1), (Sketch(&sized(1, 1, CellSize::Eight)), 1)]), Ok(()));
    let mut one = sized(1, 1, CellSize::Eight);
    one.increment(b"a", 2).unwrap();
    assert_eq!(big.merge(&[(Destination, 1), (Sketch(&one), 1)]), Err(MergeError::Overflow));
}

#[test]
fn batches_answer_as_single_items_at_every_size_refusals_included() {
    // 50 counters a row take the plain path; 70,000 x 4 (over 256 KiB at any size) the
    // prefetching windows, which span several items at small depths and part of one at 40.
    let names: Vec<Vec<u8>> = (0..300u32).map(|n| format!("item:{}", n % 37).into_bytes()).collect();
    for cell_size in SIZES {
        let step = (cell_size.max() / 40).min(1 << 40) as i64;
        let items: Vec<(&[u8], i64)> = names
            .iter()
            .enumerate()
            .map(|(n, name)| (&name[..], [step, -step / 2, step * 3, 0, -step][n % 5] + n as i64 % 3))
            .collect();
        for (width, depth) in [(50, 1), (50, 3), (70_000, 4), (70_000, 31), (70_000, 32), (70_000, 40)] {
            let mut batched = sized(width, depth, cell_size);
            let mut single = sized(width, depth, cell_size);
            let answers = increment_all(&mut batched, &items);
            let expected: Vec<_> = items.iter().map(|&(item, by)| single.increment(item, by)).collect();
            assert_eq!(answers, expected, "{cell_size:?} {width} x {depth}");
            assert!(answers.iter().any(Result::is_err) && answers.iter().any(Result::is_ok));
            let queries: Vec<&[u8]> = names.iter().map(|name| &name[..]).collect();
            let expected: Vec<u64> = queries.iter().map(|item| single.query(item)).collect();
            assert_eq!(query_all(&batched, &queries), expected);
            assert_eq!(rdb_record(&batched), rdb_record(&single));
        }
    }
}
