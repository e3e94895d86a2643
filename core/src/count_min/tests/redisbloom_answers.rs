//! What RedisBloom 2.8.2 answered and saved, and Redis 8.12 keeps: hashing, counts, merges,
//! sizing, and the record of a sketch of 4-byte cells.

use super::*;
use std::hint::black_box;

#[test]
fn colliding_items_count_and_save_as_in_redisbloom() {
    // CMS.INITBYDIM k 10 3, then CMS.INCRBY k a 1 b 2 ... l 12 in one command.
    let mut k = sketch(10, 3);
    let letters: Vec<[u8; 1]> = (b'a'..=b'm').map(|letter| [letter]).collect();
    let items: Vec<(&[u8], i64)> =
        letters.iter().take(12).zip(1..).map(|(item, by)| (&item[..], by)).collect();
    assert_eq!(increment_all(&mut k, &items), counted(&[1, 2, 3, 4, 5, 6, 7, 9, 10, 16, 16, 12]));
    let queries: Vec<&[u8]> = letters.iter().map(|item| &item[..]).collect();
    assert_eq!(query_all(&k, &queries), [1, 2, 3, 10, 12, 10, 12, 9, 10, 16, 16, 12, 0]);
    let dumped = [
        12, 3, 27, 0, 10, 0, 2, 12, 12, 0, 14, 2, 40, 0, 9, 0, 3, 0, 10, 0, 16, 1, 21, 0, 16, 0, 0, 0, 24, 0,
    ];
    assert_eq!(record(&k), redisbloom_record(10, 3, 78, &dumped));
}

#[test]
fn every_tail_length_and_binary_items_hash_as_in_redisbloom() {
    // CMS.INITBYDIM t 7 4; CMS.INCRBY t "" 1 x 2 xy 3 ... (binary items sent raw).
    let items: [&[u8]; 8] = [b"", b"x", b"xy", b"xyz", b"xyzw", b"hello world", b"\xff\x80", b"\0\0\0\0\x01"];
    let mut t = sketch(7, 4);
    let increments: Vec<(&[u8], i64)> = items.iter().copied().zip(1..).collect();
    assert_eq!(increment_all(&mut t, &increments), counted(&[1, 2, 3, 4, 5, 6, 7, 8]));
    let mut queries = items.to_vec();
    queries.push(b"absent");
    assert_eq!(query_all(&t, &queries), [1, 2, 3, 4, 5, 6, 7, 8, 0]);
    let dumped = [1, 5, 0, 4, 7, 16, 3, 0, 4, 8, 7, 0, 13, 4, 6, 5, 0, 1, 2, 14, 8, 0, 4, 21, 5, 2, 4, 0];
    assert_eq!(record(&t), redisbloom_record(7, 4, 36, &dumped));
    // One at a time, the same; and at every cell size, the same counts in the same cells.
    for cell_size in SIZES {
        let mut single = sized(7, 4, cell_size);
        for &(item, by) in &increments {
            single.increment(item, by).unwrap();
        }
        assert_eq!(counters(&single), dumped, "cell size {cell_size:?}");
        assert_eq!(single.query(b"hello world"), 6);
    }
}

/// The merge sketches RedisBloom made: m1 (a 10, b 20), m2 (a 3, c 4), md (q 100), all 4 x 2.
fn merge_sketches() -> [CountMinSketch; 3] {
    let [mut m1, mut m2, mut md] = [sketch(4, 2), sketch(4, 2), sketch(4, 2)];
    increment_all(&mut m1, &[(b"a", 10), (b"b", 20)]);
    increment_all(&mut m2, &[(b"a", 3), (b"c", 4)]);
    md.increment(b"q", 100).unwrap();
    assert_eq!(counters(&m1), [20, 0, 10, 0, 10, 20, 0, 0]);
    assert_eq!(counters(&m2), [0, 4, 3, 0, 7, 0, 0, 0]);
    [m1, m2, md]
}

#[test]
fn merges_weigh_replace_and_refuse_as_in_redisbloom() {
    use MergeSource::{Destination, Sketch};
    let [mut m1, m2, mut md] = merge_sketches();
    // CMS.MERGE md 2 m1 m2: md's own counters are replaced.
    md.merge(&[(Sketch(&m1), 1), (Sketch(&m2), 1)]).unwrap();
    let merged = [20, 4, 13, 0, 17, 20, 0, 0];
    assert_eq!(record(&md), redisbloom_record(4, 2, 37, &merged));
    // WEIGHTS 1 -1 and 2 -1 take a counter below 0: "CMS: MERGE overflow", nothing changed.
    assert_eq!(md.merge(&[(Sketch(&m1), 1), (Sketch(&m2), -1)]), Err(MergeError::Overflow));
    assert_eq!(md.merge(&[(Sketch(&m1), 2), (Sketch(&m2), -1)]), Err(MergeError::Overflow));
    assert_eq!(record(&md), redisbloom_record(4, 2, 37, &merged));
    // A weight of 0 clears.
    md.merge(&[(Sketch(&m1), 0)]).unwrap();
    assert_eq!(record(&md), redisbloom_record(4, 2, 0, &[0; 8]));
    // CMS.MERGE m1 2 m1 m2 WEIGHTS 3 1: the destination among its sources.
    m1.merge(&[(Destination, 3), (Sketch(&m2), 1)]).unwrap();
    assert_eq!(record(&m1), redisbloom_record(4, 2, 97, &[60, 4, 33, 0, 37, 60, 0, 0]));
    // CMS.MERGE m1 2 m2 m1 WEIGHTS -1 1: a negative weight that keeps every counter >= 0.
    m1.merge(&[(Sketch(&m2), -1), (Destination, 1)]).unwrap();
    assert_eq!(record(&m1), redisbloom_record(4, 2, 90, &[60, 0, 30, 0, 30, 60, 0, 0]));
    // CMS.MERGE md 2 m1 m3, m3 of width 5: "CMS: width/depth is not equal".
    let m3 = sketch(5, 2);
    assert_eq!(md.merge(&[(Sketch(&m1), 1), (Sketch(&m3), 1)]), Err(MergeError::Dimensions));
    assert_eq!(md.merge(&[(Sketch(&sketch(4, 3)), 1)]), Err(MergeError::Dimensions));
}

#[test]
fn merges_check_counters_and_totals_in_64_bits_as_in_redisbloom() {
    use MergeSource::{Destination, Sketch};
    // s1: a 4294967294. s2 = s1 is fine; s1 + s1 passes u32::MAX.
    let mut s1 = sketch(4, 2);
    s1.increment(b"a", i64::from(u32::MAX - 1)).unwrap();
    let mut s2 = sketch(4, 2);
    s2.merge(&[(Sketch(&s1), 1)]).unwrap();
    let almost = u64::from(u32::MAX - 1);
    assert_eq!(record(&s2), redisbloom_record(4, 2, almost, &[0, 0, almost, 0, almost, 0, 0, 0]));
    assert_eq!(s2.merge(&[(Sketch(&s1), 1), (Sketch(&s1), 1)]), Err(MergeError::Overflow));
    // Exactly u32::MAX is a counter.
    assert_eq!(s2.increment(b"a", 1), Ok(u64::from(u32::MAX)));
    s2.merge(&[(Sketch(&s1), -1), (Destination, 1)]).unwrap();
    assert_eq!(record(&s2), redisbloom_record(4, 2, 1, &[0, 0, 1, 0, 1, 0, 0, 0]));

    // s3: a total of 2^62 over empty counters (a record no increment makes, and RedisBloom
    // 8.12 loads). The total is what overflows.
    let s3 = load(redisbloom_record(4, 2, 1 << 62, &[0; 8]), 0, BUDGET).unwrap();
    let mut s4 = sketch(4, 2);
    s4.merge(&[(Sketch(&s3), 1)]).unwrap();
    assert_eq!(s4.count(), 1 << 62);
    assert_eq!(s4.merge(&[(Sketch(&s3), 2)]), Err(MergeError::Overflow));
    assert_eq!(s4.merge(&[(Sketch(&s3), 1), (Sketch(&s3), 1)]), Err(MergeError::Overflow));
    // A partial sum beyond i64 overflows even where the whole would not.
    assert_eq!(s4.merge(&[(Sketch(&s3), 1), (Sketch(&s3), 1), (Sketch(&s3), -1)]), Err(MergeError::Overflow));
    // A total just within i64::MAX merges.
    let s5 = load(redisbloom_record(4, 2, (1 << 62) - 1, &[0; 8]), 0, BUDGET).unwrap();
    s4.merge(&[(Sketch(&s3), 1), (Sketch(&s5), 1)]).unwrap();
    assert_eq!(s4.count(), i64::MAX as u64);
    assert_eq!(s4.increment(b"a", 1), Err(IncrementError::Overflow));
}

#[test]
fn initbyprob_dimensions_are_redisbloom_s() {
    // CMS.INITBYPROB p error probability, then CMS.INFO p, on RedisBloom 2.8.2.
    let made = [
        (0.001, 0.01, (2000, 7)),
        (0.5, 0.5, (4, 1)),
        (0.5, 0.25, (4, 2)),
        (0.5, 0.125, (4, 3)),
        (0.3, 0.1, (7, 4)),
        (0.1, 0.9999, (20, 1)),
        (0.1, 1e-44, (20, 147)),
        (0.1, 1e-40, (20, 133)),
        (0.01, 0.0625, (200, 4)),
        (0.999_999, 0.999, (3, 1)),
    ];
    for (error, probability, expected) in made {
        assert_eq!(
            dimensions_for(black_box(error), black_box(probability)),
            Ok(expected),
            "{error} {probability}"
        );
    }
    let refused = [
        (0.0, 0.5, InitError::Overestimation),
        (1.0, 0.5, InitError::Overestimation),
        (-0.1, 0.5, InitError::Overestimation),
        (f64::NAN, 0.5, InitError::Overestimation),
        (f64::INFINITY, 0.5, InitError::Overestimation),
        (0.5, 0.0, InitError::Probability),
        (0.5, 1.0, InitError::Probability),
        (0.5, -1.0, InitError::Probability),
        (0.5, f64::NAN, InitError::Probability),
        // A float probability of 1 (depth 0) or of 0 (infinite depth).
        (0.1, 0.999_999_99, InitError::Dimensions),
        (0.1, 1e-50, InitError::Dimensions),
        // Widths past i64 (1e-300's is infinite).
        (1e-300, 0.5, InitError::Dimensions),
        (1e-19, 0.5, InitError::Dimensions),
        (1.1e-19, 0.5, InitError::Dimensions),
    ];
    for (error, probability, expected) in refused {
        assert_eq!(
            dimensions_for(black_box(error), black_box(probability)),
            Err(expected),
            "{error} {probability}"
        );
    }
    // 1e-18 passes these checks; RedisBloom then fails to allocate 8e18 bytes ("CMS:
    // Insufficient memory to create the key" on a server with RedisModule_TryCalloc), and
    // the budget refuses them here.
    let (width, depth) = dimensions_for(1e-18, 0.5).unwrap();
    assert_eq!((width, depth), (1_999_999_999_999_999_744, 1));
    assert_eq!(CountMinSketch::new(width, depth, CellSize::One, BUDGET).err(), Some(SizeError::TooLarge));
}

#[test]
fn the_depth_divides_by_redisbloom_s_folded_constant() {
    assert_eq!(dimensions::LOG10_HALF.to_bits(), 0xbe9a_209b);
    assert_eq!(black_box(0.5f32).log10(), dimensions::LOG10_HALF);
}

#[test]
fn initbydim_dimensions_are_redisbloom_s() {
    assert_eq!(dimensions(10, 3), Ok((10, 3)));
    assert_eq!(dimensions(0, 1), Err(InitError::Width));
    assert_eq!(dimensions(-1, 0), Err(InitError::Width));
    assert_eq!(dimensions(1, 0), Err(InitError::Depth));
    assert_eq!(dimensions(i64::MAX, 2), Err(InitError::Dimensions));
    assert_eq!(dimensions(i64::MAX, 1), Ok((i64::MAX as u64, 1)));
    // These pass, and RedisBloom answers "CMS: Insufficient memory to create the key": the
    // bytes pass what an address holds (at 4 bytes a cell; at 1, the budget refuses them).
    for (width, depth) in [(1 << 62, 1), (3, 3_074_457_345_618_258_602), ((1 << 62) - 1, 2)] {
        let (width, depth) = dimensions(width, depth).unwrap();
        assert_eq!(
            CountMinSketch::new(width, depth, CellSize::Four, usize::MAX).err(),
            Some(SizeError::TooLarge)
        );
        assert_eq!(CountMinSketch::new(width, depth, CellSize::One, BUDGET).err(), Some(SizeError::TooLarge));
    }
}

#[test]
fn sizes_are_checked_before_allocating() {
    for cell_size in SIZES {
        let new = |width, depth, max_bytes| CountMinSketch::new(width, depth, cell_size, max_bytes).err();
        assert_eq!(new(0, 3, BUDGET), Some(SizeError::InvalidDimensions));
        assert_eq!(new(3, 0, BUDGET), Some(SizeError::InvalidDimensions));
        assert_eq!(new(u64::MAX, u64::MAX, usize::MAX), Some(SizeError::TooLarge));
        assert_eq!(new(1 << 32, 1 << 32, usize::MAX), Some(SizeError::TooLarge));
        // The budget counts width * depth * cell size bytes.
        let bytes = 1000 * cell_size.bytes();
        assert_eq!(new(100, 10, bytes - 1), Some(SizeError::TooLarge));
        let exact = CountMinSketch::new(100, 10, cell_size, bytes).unwrap();
        assert_eq!((exact.width(), exact.depth(), exact.count(), exact.cell_size()), (100, 10, 0, cell_size));
        assert_eq!(exact.memory_bytes(), std::mem::size_of::<CountMinSketch>() + bytes);
    }
}

#[test]
fn a_copy_is_the_same_sketch() {
    for cell_size in SIZES {
        let mut original = sized(20, 4, cell_size);
        increment_all(&mut original, &[(b"x", 3), (b"y", 9)]);
        let copy = original.try_clone().unwrap();
        assert_eq!(rdb_record(&copy), rdb_record(&original));
        assert_eq!(copy.memory_bytes(), original.memory_bytes());
    }
}
