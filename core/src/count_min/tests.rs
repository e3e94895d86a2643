//! The sketch's behaviour, pinned against RedisBloom 2.8.2's answers and records (taken from
//! the real module by hand: its replies, and the values of its DUMP payloads), and its
//! properties: counts never below the truth, merges that add, records that round-trip, and
//! hostile records refused.

use super::*;
use crate::decode::{DecodeError, Persistent, Record, RecordValue};
use proptest::prelude::*;
use std::hint::black_box;

const BUDGET: usize = 1 << 30;

fn sketch(width: u64, depth: u64) -> CountMinSketch {
    CountMinSketch::new(width, depth, BUDGET).unwrap()
}

fn counters(sketch: &CountMinSketch) -> Vec<u32> {
    record(sketch)
        .0
        .iter()
        .find_map(|value| match value {
            RecordValue::Bytes(bytes) => {
                Some(bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect())
            }
            _ => None,
        })
        .unwrap()
}

fn record(sketch: &CountMinSketch) -> Record {
    let mut record = Record::default();
    sketch.save_rdb(&mut record);
    record
}

fn bytes_of(counters: &[u32]) -> Vec<u8> {
    counters.iter().flat_map(|counter| counter.to_le_bytes()).collect()
}

/// RedisBloom's record: width, depth, count, then the counters.
fn redisbloom_record(width: u64, depth: u64, count: u64, counters: &[u32]) -> Record {
    Record(
        [
            RecordValue::Unsigned(width),
            RecordValue::Unsigned(depth),
            RecordValue::Unsigned(count),
            RecordValue::Bytes(bytes_of(counters)),
        ]
        .into(),
    )
}

fn increment_all(sketch: &mut CountMinSketch, items: &[(&[u8], u64)]) -> Vec<u32> {
    let mut answers = Vec::new();
    sketch.increment_all(items.iter().copied(), |count| answers.push(count));
    answers
}

fn query_all(sketch: &CountMinSketch, items: &[&[u8]]) -> Vec<u32> {
    let mut answers = Vec::new();
    sketch.query_all(items.iter().copied(), |count| answers.push(count));
    answers
}

fn load(mut record: Record, encoding_version: i32, max_bytes: usize) -> Result<CountMinSketch, DecodeError> {
    CountMinSketch::load_rdb(encoding_version, &mut record, max_bytes)
}

#[test]
fn colliding_items_count_and_save_as_in_redisbloom() {
    // CMS.INITBYDIM k 10 3, then CMS.INCRBY k a 1 b 2 ... l 12 in one command.
    let mut k = sketch(10, 3);
    let letters: Vec<[u8; 1]> = (b'a'..=b'm').map(|letter| [letter]).collect();
    let items: Vec<(&[u8], u64)> =
        letters.iter().take(12).zip(1..).map(|(item, by)| (&item[..], by)).collect();
    assert_eq!(increment_all(&mut k, &items), [1, 2, 3, 4, 5, 6, 7, 9, 10, 16, 16, 12]);
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
    let increments: Vec<(&[u8], u64)> = items.iter().copied().zip(1..).collect();
    assert_eq!(increment_all(&mut t, &increments), [1, 2, 3, 4, 5, 6, 7, 8]);
    let mut queries = items.to_vec();
    queries.push(b"absent");
    assert_eq!(query_all(&t, &queries), [1, 2, 3, 4, 5, 6, 7, 8, 0]);
    let dumped = [1, 5, 0, 4, 7, 16, 3, 0, 4, 8, 7, 0, 13, 4, 6, 5, 0, 1, 2, 14, 8, 0, 4, 21, 5, 2, 4, 0];
    assert_eq!(record(&t), redisbloom_record(7, 4, 36, &dumped));
    // One at a time, the same.
    let mut single = sketch(7, 4);
    for (item, by) in increments {
        single.increment(item, by);
    }
    assert_eq!(counters(&single), dumped);
    assert_eq!(single.query(b"hello world"), 6);
}

#[test]
fn counters_saturate_and_the_total_wraps_as_in_redisbloom() {
    // CMS.INITBYDIM o 4 2, then each CMS.INCRBY below; RedisBloom answered
    // "CMS: INCRBY overflow" wherever SATURATED is expected.
    let mut o = sketch(4, 2);
    let max = u64::from(u32::MAX);
    assert_eq!(o.increment(b"a", max), SATURATED);
    assert_eq!(o.count(), 4_294_967_295);
    assert_eq!(o.increment(b"a", max), SATURATED);
    assert_eq!(o.count(), 8_589_934_590);
    assert_eq!(counters(&o), [0, 0, u32::MAX, 0, u32::MAX, 0, 0, 0]);
    assert_eq!(o.query(b"a"), u32::MAX);
    assert_eq!(increment_all(&mut o, &[(b"a", 1), (b"b", 5)]), [SATURATED, 5]);
    assert_eq!(o.increment(b"b", 1 << 32), SATURATED);
    assert_eq!(
        record(&o),
        redisbloom_record(4, 2, 12_884_901_892, &[u32::MAX, 0, u32::MAX, 0, u32::MAX, u32::MAX, 0, 0])
    );
    let most = i64::MAX as u64;
    assert_eq!(o.increment(b"c", most), SATURATED);
    // CMS.INFO answered -9223372023969873917 here: the total, read as signed.
    assert_eq!(o.count() as i64, -9_223_372_023_969_873_917);
    o.increment(b"c", most);
    assert_eq!(o.count(), 12_884_901_890);
    o.increment(b"c", most);
    let full = [u32::MAX, u32::MAX, u32::MAX, 0, u32::MAX, u32::MAX, 0, 0];
    assert_eq!(record(&o), redisbloom_record(4, 2, 9_223_372_049_739_677_697, &full));
    // An increment of 0 of a saturated item answers the overflow too, and changes nothing.
    assert_eq!(o.increment(b"a", 0), SATURATED);
    assert_eq!(o.count(), 9_223_372_049_739_677_697);
}

/// The merge sketches RedisBloom made: m1 (a 10, b 20), m2 (a 3, c 4), md (q 100), all 4 x 2.
fn merge_sketches() -> [CountMinSketch; 3] {
    let [mut m1, mut m2, mut md] = [sketch(4, 2), sketch(4, 2), sketch(4, 2)];
    m1.increment_all([(&b"a"[..], 10), (b"b", 20)], drop);
    m2.increment_all([(&b"a"[..], 3), (b"c", 4)], drop);
    md.increment(b"q", 100);
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
    s1.increment(b"a", u64::from(u32::MAX - 1));
    let mut s2 = sketch(4, 2);
    s2.merge(&[(Sketch(&s1), 1)]).unwrap();
    assert_eq!(
        record(&s2),
        redisbloom_record(4, 2, 4_294_967_294, &[0, 0, u32::MAX - 1, 0, u32::MAX - 1, 0, 0, 0])
    );
    assert_eq!(s2.merge(&[(Sketch(&s1), 1), (Sketch(&s1), 1)]), Err(MergeError::Overflow));
    // Exactly u32::MAX is a counter.
    assert_eq!(s2.increment(b"a", 1), SATURATED);
    s2.merge(&[(Sketch(&s1), -1), (Destination, 1)]).unwrap();
    assert_eq!(record(&s2), redisbloom_record(4, 2, 1, &[0, 0, 1, 0, 1, 0, 0, 0]));

    // s3: a 2^62 (its counters saturate). The total is what overflows.
    let mut s3 = sketch(4, 2);
    assert_eq!(s3.increment(b"a", 1 << 62), SATURATED);
    let mut s4 = sketch(4, 2);
    s4.merge(&[(Sketch(&s3), 1)]).unwrap();
    assert_eq!(s4.count(), 1 << 62);
    assert_eq!(s4.merge(&[(Sketch(&s3), 2)]), Err(MergeError::Overflow));
    assert_eq!(s4.merge(&[(Sketch(&s3), 1), (Sketch(&s3), 1)]), Err(MergeError::Overflow));
    // A partial sum beyond i64 overflows even where the whole would not.
    assert_eq!(s4.merge(&[(Sketch(&s3), 1), (Sketch(&s3), 1), (Sketch(&s3), -1)]), Err(MergeError::Overflow));
    assert_eq!(s4.count(), 1 << 62);

    // A total past i64::MAX overflows as a source even at weight 1.
    let mut o = sketch(4, 2);
    o.increment(b"a", 1 << 33);
    for _ in 0..3 {
        o.increment(b"c", i64::MAX as u64);
    }
    assert_eq!(sketch(4, 2).merge(&[(Sketch(&o), 1)]), Err(MergeError::Overflow));
    assert_eq!(sketch(4, 2).merge(&[(Sketch(&o), 0)]), Ok(()));
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
    assert_eq!(CountMinSketch::new(width, depth, BUDGET).err(), Some(SizeError::TooLarge));
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
    // bytes pass what an address holds.
    for (width, depth) in [(1 << 62, 1), (3, 3_074_457_345_618_258_602), ((1 << 62) - 1, 2)] {
        let (width, depth) = dimensions(width, depth).unwrap();
        assert_eq!(CountMinSketch::new(width, depth, usize::MAX).err(), Some(SizeError::TooLarge));
    }
}

#[test]
fn sizes_are_checked_before_allocating() {
    assert_eq!(CountMinSketch::new(0, 3, BUDGET).err(), Some(SizeError::InvalidDimensions));
    assert_eq!(CountMinSketch::new(3, 0, BUDGET).err(), Some(SizeError::InvalidDimensions));
    assert_eq!(CountMinSketch::new(u64::MAX, u64::MAX, usize::MAX).err(), Some(SizeError::TooLarge));
    assert_eq!(CountMinSketch::new(1 << 31, 1 << 31, usize::MAX).err(), Some(SizeError::TooLarge));
    assert_eq!(CountMinSketch::new(100, 10, 3999).err(), Some(SizeError::TooLarge));
    let exact = CountMinSketch::new(100, 10, 4000).unwrap();
    assert_eq!((exact.width(), exact.depth(), exact.count()), (100, 10, 0));
    assert!(exact.memory_bytes() >= 4000);
}

#[test]
fn batches_answer_as_single_items_in_cache_and_beyond() {
    // 50 counters a row take the plain path; 70,000 (over 256 KiB) the prefetching windows,
    // which span several items at small depths and part of one at 40.
    for (width, depth) in
        [(50, 1), (50, 3), (70_000, 1), (70_000, 3), (70_000, 31), (70_000, 32), (70_000, 40)]
    {
        let mut batched = sketch(width, depth);
        let mut single = sketch(width, depth);
        let names: Vec<Vec<u8>> = (0..100u32).map(|n| format!("item:{}", n % 37).into_bytes()).collect();
        let items: Vec<(&[u8], u64)> = names.iter().map(|name| (&name[..], name.len() as u64)).collect();
        let answers = increment_all(&mut batched, &items);
        let expected: Vec<u32> = items.iter().map(|&(item, by)| single.increment(item, by)).collect();
        assert_eq!(answers, expected, "{width} x {depth}");
        let queries: Vec<&[u8]> = names.iter().map(|name| &name[..]).collect();
        let expected: Vec<u32> = queries.iter().map(|item| single.query(item)).collect();
        assert_eq!(query_all(&batched, &queries), expected);
        assert_eq!(record(&batched), record(&single));
    }
}

#[test]
fn records_of_every_version_load() {
    let cells = [1, 2, 3, 4, 5, 6];
    let version_0 = load(redisbloom_record(3, 2, 21, &cells), 0, BUDGET).unwrap();
    assert_eq!(record(&version_0), redisbloom_record(3, 2, 21, &cells));
    // Redis 8.12's version 1 (a cell size) and 2 (a hash configuration, the legacy one), at
    // every cell size: each saves back as version 0.
    for cell_size in [1usize, 2, 4, 8] {
        let stored: Vec<u8> =
            cells.iter().flat_map(|&cell| u64::from(cell).to_le_bytes()[..cell_size].to_vec()).collect();
        let fields = |hash: Option<(u64, u64)>| {
            let mut values = vec![
                RecordValue::Unsigned(3),
                RecordValue::Unsigned(2),
                RecordValue::Unsigned(21),
                RecordValue::Unsigned(cell_size as u64),
                RecordValue::Bytes(stored.clone()),
            ];
            if let Some((version, seed)) = hash {
                values.extend([RecordValue::Unsigned(version), RecordValue::Unsigned(seed)]);
            }
            Record(values.into())
        };
        let version_1 = load(fields(None), 1, BUDGET).unwrap();
        assert_eq!(record(&version_1), redisbloom_record(3, 2, 21, &cells), "cell size {cell_size}");
        let version_2 = load(fields(Some((0, 0))), 2, BUDGET).unwrap();
        assert_eq!(record(&version_2), redisbloom_record(3, 2, 21, &cells));
        assert!(load(fields(Some((1, 0x1234))), 2, BUDGET).is_err(), "a seeded hash");
        assert!(load(fields(Some((0, 0))), 1, BUDGET).is_ok(), "the hash fields are version 2's");
        assert!(load(fields(None), 0, BUDGET).is_err(), "version 0 has no cell size");
    }
}

#[test]
fn hostile_records_are_refused_before_their_counters_are_read() {
    let refuse = |values: Vec<RecordValue>, version: i32, max_bytes: usize| {
        let mut record = Record(values.into());
        let result = CountMinSketch::load_rdb(version, &mut record, max_bytes);
        (result.err(), record.0.len())
    };
    let header = |width, depth| {
        vec![RecordValue::Unsigned(width), RecordValue::Unsigned(depth), RecordValue::Unsigned(0)]
    };
    let with_counters = |mut values: Vec<RecordValue>, len| {
        values.push(RecordValue::Bytes(vec![0; len]));
        values
    };
    // Refused with the counters' string still unread: nothing was allocated for it.
    for (width, depth, max_bytes) in [
        (0, 3, BUDGET),
        (3, 0, BUDGET),
        (u64::MAX, u64::MAX, usize::MAX),
        (1 << 62, 1, usize::MAX),
        (1000, 1000, 3_999_999),
    ] {
        let (error, left) = refuse(with_counters(header(width, depth), 12), 0, max_bytes);
        assert!(error.is_some(), "{width} x {depth}");
        assert_eq!(left, 1, "{width} x {depth}: the string was read");
    }
    assert_eq!(refuse(with_counters(header(1000, 1000), 12), 0, 3_999_999).0, Some(DecodeError::TooLarge));
    // Lengths other than width * depth * 4.
    for len in [0, 11, 13, 24] {
        assert!(refuse(with_counters(header(3, 1), len), 0, BUDGET).0.is_some(), "{len} bytes");
    }
    // Truncated anywhere, or of another kind.
    let whole = with_counters(header(3, 1), 12);
    for cut in 0..whole.len() {
        assert_eq!(refuse(whole[..cut].to_vec(), 0, BUDGET).0, Some(DecodeError::Malformed("short read")));
    }
    // Versions never written, cell sizes never allowed, counters beyond 32 bits.
    assert!(refuse(whole.clone(), 3, BUDGET).0.is_some());
    assert!(refuse(whole, -1, BUDGET).0.is_some());
    for cell_size in [0, 3, 16, u64::MAX] {
        let mut values = header(3, 1);
        values.push(RecordValue::Unsigned(cell_size));
        assert!(refuse(with_counters(values, 12), 1, BUDGET).0.is_some(), "cell size {cell_size}");
    }
    let mut wide = header(1, 1);
    wide.extend([RecordValue::Unsigned(8), RecordValue::Bytes((1u64 << 32).to_le_bytes().to_vec())]);
    assert!(refuse(wide, 1, BUDGET).0.is_some());
    // A budget counts the larger of the stored and the kept counters.
    let mut eight = header(10, 10);
    eight.extend([RecordValue::Unsigned(8), RecordValue::Bytes(vec![0; 800])]);
    assert_eq!(refuse(eight.clone(), 1, 799).0, Some(DecodeError::TooLarge));
    assert_eq!(refuse(eight, 1, 800).0, None);
}

#[test]
fn a_copy_is_the_same_sketch() {
    let mut original = sketch(20, 4);
    original.increment_all([(&b"x"[..], 3), (b"y", 9)], drop);
    let copy = original.try_clone().unwrap();
    assert_eq!(record(&copy), record(&original));
    assert_eq!(copy.memory_bytes(), original.memory_bytes());
}

/// Operations on a small sketch: (item number, increment), few items so that they collide.
fn operations() -> impl Strategy<Value = Vec<(u8, u64)>> {
    proptest::collection::vec((0u8..40, 0u64..1000), 0..200)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn counts_are_never_below_the_truth(width in 1u64..40, depth in 1u64..6, operations in operations()) {
        let mut sketch = sketch(width, depth);
        let mut truth = [0u64; 40];
        for &(item, by) in &operations {
            let answered = sketch.increment(&[item], by);
            truth[usize::from(item)] += by;
            prop_assert!(u64::from(answered) >= truth[usize::from(item)]);
        }
        for (item, &count) in truth.iter().enumerate() {
            prop_assert!(u64::from(sketch.query(&[item as u8])) >= count);
        }
        prop_assert_eq!(sketch.count(), truth.iter().sum::<u64>());
    }

    #[test]
    fn a_merge_adds_the_weighted_increments(
        width in 1u64..40,
        depth in 1u64..6,
        left in operations(),
        right in operations(),
        weights in (0i64..4, 0i64..4),
    ) {
        let [mut a, mut b, mut together] = [sketch(width, depth), sketch(width, depth), sketch(width, depth)];
        for &(item, by) in &left {
            a.increment(&[item], by);
            together.increment(&[item], by * weights.0 as u64);
        }
        for &(item, by) in &right {
            b.increment(&[item], by);
            together.increment(&[item], by * weights.1 as u64);
        }
        let mut merged = sketch(width, depth);
        merged.merge(&[(MergeSource::Sketch(&a), weights.0), (MergeSource::Sketch(&b), weights.1)]).unwrap();
        prop_assert_eq!(record(&merged), record(&together));
        // Into a source, the same.
        a.merge(&[(MergeSource::Destination, weights.0), (MergeSource::Sketch(&b), weights.1)]).unwrap();
        prop_assert_eq!(record(&a), record(&together));
    }

    #[test]
    fn saved_sketches_load_as_they_were(width in 1u64..40, depth in 1u64..6, operations in operations()) {
        let mut sketch = sketch(width, depth);
        for &(item, by) in &operations {
            sketch.increment(&[item], by);
        }
        let mut saved = record(&sketch);
        let loaded = CountMinSketch::load_rdb(CountMinSketch::ENCODING_VERSION, &mut saved, BUDGET).unwrap();
        prop_assert!(saved.0.is_empty());
        prop_assert_eq!(record(&loaded), record(&sketch));
        for item in 0..40u8 {
            prop_assert_eq!(loaded.query(&[item]), sketch.query(&[item]));
        }
    }

    #[test]
    fn arbitrary_records_never_panic_the_loader(
        version in 0i32..3,
        fields in proptest::collection::vec(0u64..64, 0..6),
        counters in proptest::collection::vec(any::<u8>(), 0..300),
    ) {
        let mut values: Vec<RecordValue> = fields.iter().map(|&value| RecordValue::Unsigned(value)).collect();
        values.insert(values.len().min(3 + usize::from(version >= 1)), RecordValue::Bytes(counters));
        if let Ok(mut sketch) = CountMinSketch::load_rdb(version, &mut Record(values.into()), BUDGET) {
            sketch.increment(b"probe", 1);
            prop_assert!(sketch.query(b"probe") >= 1);
        }
    }
}
