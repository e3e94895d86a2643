//! The decoders of every value kept as a record of typed values: the Count-Min sketch's
//! (encoding versions 0 to 2), Top-K's and the t-digest's (version 0), the time-windowed
//! Bloom filter's (version 1, and its SCANDUMP header alone), the windowed Count-Min sketch's
//! (version 1), the windowed t-digest's (version 0) and the windowed Top-K's (versions 1 to 3).
//! Input: a mode byte (taken modulo 8: 0 Count-Min, 1 Top-K, 2 t-digest, 3 windowed filter, 4 a
//! windowed filter's header from the bytes that follow, 5 windowed Count-Min, 6 windowed
//! t-digest, 7 windowed Top-K), the encoding version (taken modulo 4), then the record's values,
//! each a tag
//! (taken modulo 4: 0 unsigned, 1 signed, 2 double, each 8 bytes little-endian; 3 a string,
//! a 2-byte length and its bytes), up to the first that the input cuts short.
//!
//! Whatever loads is a working sketch: every operation answers without a panic, the answers
//! that cannot depend on the loaded state are checked, and its record loads back into a
//! sketch that saves the same record, before the operations and after them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redbloom_fuzz::core::bloom::window::WindowFilter;
use redbloom_fuzz::core::count_min::window::{WindowSource, WindowedCountMin, WriteError};
use redbloom_fuzz::core::count_min::{CellSize, CountMinSketch, MergeSource};
use redbloom_fuzz::core::decode::{Persistent, Record, RecordValue};
use redbloom_fuzz::core::t_digest::{AddError, TDigest, WindowTDigest};
use redbloom_fuzz::core::top_k::window::WindowTopK;
use redbloom_fuzz::core::top_k::TopK;
use redbloom_fuzz::core::window::MAX_TIME_MS;

/// What a record may load into: small, as in the cuckoo target, so that each run is quick.
const FUZZ_BUDGET: usize = 1 << 20;
/// After the operations: Top-K's items and a merged digest may take a little more than the
/// record that loaded.
const GROWN_BUDGET: usize = 4 * FUZZ_BUDGET;

/// Items every sketch is given: the empty one, short ones, a longer one, one with a NUL inside
/// (Top-K saves its items as C strings), and one twice.
const ITEMS: [&[u8]; 8] = [b"", b"a", b"b", b"item", b"0", b"\0inner", b"a somewhat longer item", b"a"];

/// The record the input's values make, up to the first value it cuts short.
fn record(mut data: &[u8]) -> Record {
    let mut record = Record::default();
    while let Some((&tag, rest)) = data.split_first() {
        let value = if tag % 4 == 3 {
            let Some((len, rest)) = rest.split_first_chunk::<2>() else { break };
            let len = usize::from(u16::from_le_bytes(*len));
            if rest.len() < len {
                break;
            }
            let (bytes, rest) = rest.split_at(len);
            data = rest;
            RecordValue::Bytes(bytes.to_vec())
        } else {
            let Some((bytes, rest)) = rest.split_first_chunk::<8>() else { break };
            data = rest;
            match tag % 4 {
                0 => RecordValue::Unsigned(u64::from_le_bytes(*bytes)),
                1 => RecordValue::Signed(i64::from_le_bytes(*bytes)),
                _ => RecordValue::Double(f64::from_le_bytes(*bytes)),
            }
        };
        record.0.push_back(value);
    }
    record
}

/// Two records hold the same values, doubles compared bit for bit (a NaN equals itself,
/// `0.0` does not equal `-0.0`).
fn same(a: &Record, b: &Record) -> bool {
    let bits = |value: &RecordValue| match value {
        RecordValue::Double(double) => RecordValue::Unsigned(double.to_bits()),
        other => other.clone(),
    };
    a.0.len() == b.0.len() && a.0.iter().zip(&b.0).all(|(a, b)| bits(a) == bits(b))
}

fn saved(value: &impl Persistent) -> Record {
    let mut record = Record::default();
    value.save_rdb(&mut record);
    record
}

/// The value's record loads, all of it, at `max_bytes`, into a value that saves it again;
/// and a copy of the value saves it too.
fn round_trip<T: Persistent>(value: &T, max_bytes: usize) {
    let record = saved(value);
    let mut source = record.clone();
    let copy = T::load_rdb(T::ENCODING_VERSION, &mut source, max_bytes)
        .unwrap_or_else(|error| panic!("its own record refused: {error:?}\n{record:?}"));
    assert!(source.0.is_empty(), "values left after the load: {:?}", source.0);
    let again = saved(&copy);
    assert!(same(&record, &again), "saved\n{record:?}\nreloaded and saved\n{again:?}");
    if let Some(clone) = value.try_clone() {
        assert!(same(&record, &saved(&clone)), "a copy saves another record");
    }
    // The record a RESTORE payload carries, perhaps of an older version, loads as the value.
    let mut portable = Record::default();
    let version = value.save_portable(&mut portable);
    let copy = T::load_rdb(version, &mut portable, max_bytes)
        .unwrap_or_else(|error| panic!("its own portable record refused: {error:?}"));
    assert!(portable.0.is_empty(), "values left after the load of the portable record");
    assert!(same(&record, &saved(&copy)), "the portable record loads as another value");
    let _ = value.memory_bytes();
}

fn count_min(mut sketch: CountMinSketch) {
    let max = sketch.cell_size().max() as i64;
    for (n, &item) in ITEMS.iter().enumerate() {
        let by = [0, 1, 7, max, i64::MAX, -1, -max, i64::MIN][n % 8];
        let before = saved(&sketch);
        match sketch.increment(item, by) {
            Ok(counted) => assert_eq!(sketch.query(item), counted, "a query right after an increment"),
            Err(_) => assert!(same(&before, &saved(&sketch)), "a refused increment changed the sketch"),
        }
        assert!(sketch.count() <= i64::MAX as u64, "a total past i64::MAX");
    }
    // The batched paths (which prefetch on large sketches) answer as the single ones.
    let items: Vec<(&[u8], i64)> =
        ITEMS.iter().zip([3, -1, max, 2, -5, 3, 1, -2]).map(|(&i, by)| (i, by)).collect();
    let mut single = sketch.try_clone();
    let mut counted = Vec::new();
    sketch.increment_all(&items, |count| counted.push(count));
    if let Some(single) = &mut single {
        let one_by_one: Vec<_> = items.iter().map(|&(item, by)| single.increment(item, by)).collect();
        assert_eq!(counted, one_by_one, "increment_all counted otherwise than increment");
        assert!(same(&saved(&sketch), &saved(single)), "increment_all made another sketch than increment");
    }
    let mut queried = Vec::new();
    sketch.query_all(ITEMS.iter().copied(), |count| queried.push(count));
    let one_by_one: Vec<u64> = ITEMS.iter().map(|&item| sketch.query(item)).collect();
    assert_eq!(queried, one_by_one, "query_all answered otherwise than query");

    // Always succeeds: the total and every counter are within their ranges already.
    let before = saved(&sketch);
    assert!(
        sketch.merge(&[(MergeSource::Destination, 1)]).is_ok(),
        "a merge of itself alone, weight 1, failed"
    );
    assert!(same(&before, &saved(&sketch)), "a merge of itself alone, weight 1, changed it");
    if let Some(copy) = sketch.try_clone() {
        for weights in [[2, -1], [1, 1], [0, 0], [-1, 0], [i64::MAX, 1], [i64::MIN, -1]] {
            let before = saved(&sketch);
            let sources = [(MergeSource::Destination, weights[0]), (MergeSource::Sketch(&copy), weights[1])];
            if sketch.merge(&sources).is_err() {
                assert!(same(&before, &saved(&sketch)), "a merge that failed changed the sketch");
            }
        }
        let cell_size = copy.cell_size();
        if let Ok(other) = CountMinSketch::new(copy.width() + 1, copy.depth(), cell_size, GROWN_BUDGET) {
            assert!(sketch.merge(&[(MergeSource::Sketch(&other), 1)]).is_err());
        }
        let other_size = if cell_size == CellSize::One { CellSize::Eight } else { CellSize::One };
        if let Ok(other) = CountMinSketch::new(copy.width(), copy.depth(), other_size, GROWN_BUDGET) {
            assert!(sketch.merge(&[(MergeSource::Sketch(&other), 1)]).is_err());
        }
    }
    let _ = sketch.count();
    round_trip(&sketch, GROWN_BUDGET);
    batches_on_a_large_sketch(sketch.depth(), sketch.cell_size());
}

/// A record's string holds at most 64 KiB of counters here, below the size at which
/// `increment_all` and `query_all` take their prefetching path: that path runs on a sketch of
/// the loaded depth and cell size made just large enough, and must answer as the single
/// operations do, refusals included.
fn batches_on_a_large_sketch(depth: u64, cell_size: CellSize) {
    const PREFETCHED_BYTES: u64 = 300 << 10;
    let width = PREFETCHED_BYTES.div_ceil(cell_size.bytes() as u64 * depth);
    let Ok(mut batched) = CountMinSketch::new(width, depth, cell_size, GROWN_BUDGET) else { return };
    let Some(mut single) = batched.try_clone() else { return };
    let max = cell_size.max() as i64;
    let items: Vec<(&[u8], i64)> =
        ITEMS.iter().zip([1, 2, max, i64::MAX, -5, 6, -1, 8]).map(|(&i, by)| (i, by)).collect();
    let mut counted = Vec::new();
    batched.increment_all(&items, |count| counted.push(count));
    let one_by_one: Vec<_> = items.iter().map(|&(item, by)| single.increment(item, by)).collect();
    assert_eq!(counted, one_by_one, "increment_all counted otherwise than increment, prefetching");
    assert!(same(&saved(&batched), &saved(&single)), "increment_all made another sketch, prefetching");
    let mut queried = Vec::new();
    batched.query_all(ITEMS.iter().copied(), |count| queried.push(count));
    let one_by_one: Vec<u64> = ITEMS.iter().map(|&item| batched.query(item)).collect();
    assert_eq!(queried, one_by_one, "query_all answered otherwise than query, prefetching");
}

fn top_k(mut sketch: TopK) {
    let mut batched = sketch.try_clone();
    let adds: Vec<(&[u8], u32)> =
        ITEMS.iter().zip([1, 0, 100_000, 5, u32::MAX, 1, 2, 3]).map(|(&item, by)| (item, by)).collect();
    let mut expelled = Vec::new();
    for &(item, by) in adds.iter().chain(&adds) {
        expelled.push(sketch.add(item, by).ok());
        let _ = sketch.query(item);
        let _ = sketch.count(item);
    }
    // The batched adds draw the same decay as the single ones: the same sketch results.
    if let Some(batched) = &mut batched {
        let mut batch_expelled = Vec::new();
        batched.add_all(adds.iter().chain(&adds).copied(), |result| batch_expelled.push(result.ok()));
        assert_eq!(expelled, batch_expelled, "add_all expelled other items than add");
        assert!(same(&saved(&sketch), &saved(batched)), "add_all made another sketch than add");
    }
    if let Ok(list) = sketch.list() {
        assert!(list.len() <= sketch.shape().k() as usize);
        assert!(list.windows(2).all(|pair| pair[0].1 >= pair[1].1), "a list out of order: {list:?}");
        assert!(list.iter().all(|&(_, count)| count > 0));
    }
    round_trip(&sketch, GROWN_BUDGET);
}

fn t_digest(mut digest: TDigest) {
    assert_eq!(digest.add(&[f64::NAN]), Err(AddError::NotFinite));
    assert_eq!(digest.add(&[1.0, f64::INFINITY]), Err(AddError::NotFinite));
    for values in [&[1.0, 2.0, 3.0][..], &[-0.0, 0.0], &[1e308, -1e308, f64::MIN_POSITIVE], &[42.0; 40]] {
        let _ = digest.add(values);
        read(&digest);
    }
    round_trip(&digest, GROWN_BUDGET);
    for (destination, compression) in
        [(None, None), (Some(&digest), None), (None, Some(1)), (Some(&digest), Some(7))]
    {
        if let Ok(merged) = TDigest::merge(destination, &[&digest, &digest], compression, GROWN_BUDGET) {
            read(&merged);
            round_trip(&merged, GROWN_BUDGET);
        }
    }
    digest.compress();
    read(&digest);
    round_trip(&digest, GROWN_BUDGET);
    digest.reset();
    read(&digest);
    round_trip(&digest, GROWN_BUDGET);
}

fn read(digest: &TDigest) {
    let fractions = [0.0, 0.01, 0.5, 0.5, 0.99, 1.0, 0.3, -1.0, 2.0, f64::NAN];
    let values = [f64::MIN, -1.0, 0.0, 1.0, 42.0, f64::MAX, f64::INFINITY, f64::NAN];
    if let Ok(quantiles) = digest.quantiles(&fractions) {
        assert_eq!(quantiles.len(), fractions.len());
    }
    if let Ok(cdfs) = digest.cdfs(&values) {
        assert_eq!(cdfs.len(), values.len());
    }
    let _ = digest.ranks(&values);
    let _ = digest.rev_ranks(&values);
    let ranks = [0, 1, 2, 10, u64::MAX / 2, u64::MAX];
    let _ = digest.by_ranks(&ranks);
    let _ = digest.by_rev_ranks(&ranks);
    for (low, high) in [(0.0, 1.0), (0.1, 0.9), (0.5, 0.5), (0.9, 0.1), (-1.0, 2.0), (f64::NAN, 1.0)] {
        let _ = digest.trimmed_mean(low, high);
    }
    let _ = (digest.min(), digest.max(), digest.observations(), digest.compression(), digest.info());
}

/// The reads a windowed digest answers from the few centroids they read (or its bounds from
/// its generations'), the first after a write (a copy: its reads keep nothing yet), against
/// those of its whole digest.
fn read_right_after_a_write(digest: &WindowTDigest, now: Option<u64>) {
    let bits = |answers: Vec<f64>| answers.into_iter().map(f64::to_bits).collect::<Vec<_>>();
    let fractions = [0.99, 0.0, 0.5, 1.0];
    let values = [f64::MIN, -1.0, 42.0, f64::MAX];
    let ranks = [0, 1, 10, u64::MAX];
    let Some(fresh) = digest.try_copy() else { return };
    let bounds = fresh.bounds(now).map(|bounds| bounds.map(f64::to_bits));
    let Some(fresh) = digest.try_copy() else { return };
    let made = (
        fresh.quantiles(now, &fractions).map(bits),
        fresh.try_copy().map(|fresh| fresh.cdfs(now, &values).map(bits)),
        fresh.try_copy().map(|fresh| fresh.ranks(now, &values, true)),
        fresh.try_copy().map(|fresh| fresh.by_ranks(now, &ranks, false).map(bits)),
    );
    let Ok(whole) = digest.contents(now) else { return };
    if let Ok(bounds) = bounds {
        assert_eq!(bounds, [whole.min().to_bits(), whole.max().to_bits()], "bounds read alone");
    }
    if let Ok(made) = made.0 {
        assert_eq!(Ok(made), whole.quantiles(&fractions).map(bits), "quantiles made alone");
    }
    if let Some(Ok(made)) = made.1 {
        assert_eq!(Ok(made), whole.cdfs(&values).map(bits), "CDFs made alone");
    }
    if let Some(Ok(made)) = made.2 {
        assert_eq!(Ok(made), whole.rev_ranks(&values), "ranks made alone");
    }
    if let Some(Ok(made)) = made.3 {
        assert_eq!(Ok(made), whole.by_ranks(&ranks).map(bits), "by ranks made alone");
    }
}

/// A windowed filter at times around its own: rotations forward (and one back, which changes
/// nothing), adds that must be found at once and in every later state within the window, and
/// its SCANDUMP header and chunks rebuilding it.
fn window(mut filter: WindowFilter) {
    let start = filter.current_start_ms();
    let window = filter.params().window_ms();
    let mut now = start;
    for (step, &item) in ITEMS.iter().enumerate() {
        now = now.saturating_add(window / 3 * step as u64);
        let _ = filter.rotate(now);
        if filter.insert(item, || GROWN_BUDGET).is_ok() {
            assert!(filter.contains(item) && filter.contains_at(item, now), "an item just added is missing");
        }
    }
    let before = saved(&filter);
    let _ = filter.rotate(start.saturating_sub(1));
    assert!(same(&before, &saved(&filter)), "a rotation back in time changed the filter");
    let header = filter.encode_header();
    if let Ok(mut copy) = WindowFilter::decode_header(&header, GROWN_BUDGET) {
        // Each chunk comes with the offset just past it, as SCANDUMP's iterator.
        let chunks: Vec<(u64, Vec<u8>)> = filter.chunks().map(|(end, bytes)| (end, bytes.to_vec())).collect();
        for (end, bytes) in &chunks {
            let start = end - bytes.len() as u64;
            assert!(copy.write_chunk(start, bytes).is_ok(), "its own chunk refused");
        }
        assert!(same(&saved(&copy), &saved(&filter)), "SCANDUMP and LOADCHUNK made another filter");
    }
    if let Some(later) = long_past(now, window) {
        let _ = filter.rotate(later);
        assert_eq!(filter.items(), 0, "a window long past left items");
    }
    round_trip(&filter, GROWN_BUDGET);
}

/// A windowed sketch at times around its own: increments counted at once, read with and
/// without a rotation alike, negative ones refused, a merge with itself, and nothing left
/// once its window is long past.
fn windowed_count_min(mut sketch: WindowedCountMin) {
    let start = sketch.generations().current_start_ms();
    let schedule = *sketch.schedule();
    let mut now = start;
    for (step, &item) in ITEMS.iter().enumerate() {
        now = now.saturating_add(schedule.span_ms() / 2 * step as u64);
        let mut unrotated = 0;
        sketch.query_all([item], Some(now), |count| unrotated = count);
        let _ = sketch.rotate(now);
        let mut rotated = 0;
        sketch.query_all([item], None, |count| rotated = count);
        assert_eq!(unrotated, rotated, "a read before a rotation answers as after it");
        if let Ok(Ok(count)) = sketch.increment(item, 1) {
            assert!(count >= 1, "an increment just counted is missing");
        }
        assert!(sketch.sketch_count() <= schedule.max_live_generations() as usize, "more sketches than generations");
    }
    let before = saved(&sketch);
    assert!(matches!(sketch.increment(b"a", -1), Err(WriteError::Negative)));
    assert!(same(&before, &saved(&sketch)), "a refused increment changed the sketch");
    if sketch.merge(&[(WindowSource::Destination, 1), (WindowSource::Destination, 1)]).is_err() {
        assert!(same(&before, &saved(&sketch)), "a refused merge changed the sketch");
    }
    round_trip(&sketch, GROWN_BUDGET);
    if let Some(later) = long_past(now, schedule.window_ms()) {
        let _ = sketch.rotate(later);
        assert_eq!(sketch.count(None), 0, "a window long past left counts");
        assert_eq!(sketch.sketch_count(), 1, "a window long past left generations");
    }
    round_trip(&sketch, GROWN_BUDGET);
}

/// A windowed digest at times around its own: rotations forward (and one back, which changes
/// nothing), adds counted at once, refused adds that change nothing, reads of the window by a
/// master's clock and a replica's, a reset, and a window long past that holds nothing.
fn window_t_digest(mut digest: WindowTDigest) {
    let start = digest.generations().current_start_ms();
    let window = digest.schedule().window_ms();
    let mut now = start;
    for (step, values) in [&[1.0, 2.0, 3.0][..], &[-0.0, 0.0], &[1e308, -1e308], &[42.0; 40]].iter().enumerate() {
        now = now.saturating_add(window / 3 * step as u64);
        let _ = digest.rotate(now);
        let before = saved(&digest);
        assert_eq!(digest.add(&[1.0, f64::NAN]), Err(AddError::NotFinite));
        assert!(same(&before, &saved(&digest)), "a refused add changed the digest");
        let counted = digest.contents(Some(now)).map(|window| window.observations());
        if digest.add(values).is_ok() {
            if let (Ok(counted), Ok(window)) = (counted, digest.contents(Some(now))) {
                assert_eq!(window.observations(), counted + values.len() as i64, "an add not counted");
            }
        }
        for now in [None, Some(now), Some(now.saturating_add(window))] {
            read_right_after_a_write(&digest, now);
            if let Ok(window) = digest.contents(now) {
                read(&window);
                // A window of several generations takes its trimmed mean from them.
                for (low, high) in [(0.0, 1.0), (0.1, 0.9), (0.9, 0.1), (-1.0, 2.0), (f64::NAN, 1.0)] {
                    let _ = window.trimmed_mean(low, high);
                }
            }
            let _ = digest.info(now);
        }
    }
    let before = saved(&digest);
    let _ = digest.rotate(start.saturating_sub(1));
    assert!(same(&before, &saved(&digest)), "a rotation back in time changed the digest");
    round_trip(&digest, GROWN_BUDGET);
    if let Some(later) = long_past(now, window) {
        let _ = digest.rotate(later);
        if let Ok(window) = digest.contents(None) {
            assert_eq!(window.observations(), 0, "a window long past held observations");
        }
    }
    round_trip(&digest, GROWN_BUDGET);
    digest.reset();
    round_trip(&digest, GROWN_BUDGET);
}

/// A windowed Top-K at times around its own: adds across rotations (and a rotation back,
/// which changes nothing), reads by a master's clock and a replica's, and, a window and more
/// later, nothing left.
fn window_top_k(mut sketch: WindowTopK) {
    let window = sketch.schedule().window_ms();
    let start = sketch.current_start_ms();
    let mut now = start;
    let adds = ITEMS.iter().zip([1, 0, 100_000, 5, u32::MAX, 1, 2, 3]);
    for (step, (&item, by)) in adds.enumerate() {
        now = now.saturating_add(window / 3 * step as u64);
        let _ = sketch.rotate(now);
        let _ = sketch.add(item, by);
        for at in [Some(now), Some(now.saturating_add(window)), None] {
            let _ = (sketch.query(item, at), sketch.count(item, at));
            if let Ok(list) = sketch.list(at) {
                assert!(list.len() <= sketch.shape().k() as usize);
                assert!(list.windows(2).all(|pair| pair[0].1 >= pair[1].1), "a list out of order: {list:?}");
                assert!(list.iter().all(|&(_, count)| count > 0));
            }
        }
    }
    let before = saved(&sketch);
    let _ = sketch.rotate(0);
    assert!(same(&before, &saved(&sketch)), "a rotation back in time changed the sketch");
    round_trip(&sketch, GROWN_BUDGET);
    let Some(later) = long_past(now, window) else { return };
    let _ = sketch.rotate(later);
    assert_eq!(sketch.generation_count(), 0, "a window long past left generations");
    assert!(sketch.list(None).is_ok_and(|list| list.is_empty()), "a window long past left a list");
    assert!(ITEMS.iter().all(|item| sketch.count(item, None) == 0 && !sketch.query(item, None)));
    round_trip(&sketch, GROWN_BUDGET);
}

/// Three windows after `now`, if a clock can get there: time stops at `MAX_TIME_MS` (a
/// rotation to a later time moves no further), and nothing is long past there.
fn long_past(now: u64, window: u64) -> Option<u64> {
    window.checked_mul(3).and_then(|long| now.checked_add(long)).filter(|&later| later <= MAX_TIME_MS)
}

fn load<T: Persistent>(version: i32, record: &Record) -> Option<T> {
    let value = T::load_rdb(version, &mut record.clone(), FUZZ_BUDGET).ok()?;
    round_trip(&value, FUZZ_BUDGET);
    Some(value)
}

fuzz_target!(|data: &[u8]| {
    let [mode, version, values @ ..] = data else { return };
    if mode % 8 == 4 {
        if let Ok(filter) = WindowFilter::decode_header(values, FUZZ_BUDGET) {
            window(filter);
        }
        return;
    }
    let version = i32::from(version % 4);
    let record = record(values);
    match mode % 8 {
        0 => load(version, &record).map(count_min),
        1 => load(version, &record).map(top_k),
        2 => load(version, &record).map(t_digest),
        5 => load(version, &record).map(windowed_count_min),
        6 => load(version, &record).map(window_t_digest),
        7 => load(version, &record).map(window_top_k),
        _ => load(version, &record).map(window),
    };
});
