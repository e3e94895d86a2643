//! The records: RedisBloom 2.8's version 0, Redis 8.12's version 1 (the cell size), the later
//! version 2 (a hash configuration) when its hash is the legacy one; what each save writes;
//! and hostile records refused before their counters are trusted.

use super::*;

/// The RDB record of a sketch of another cell size than 4 bytes: the mark (width, depth and
/// count 0, no counters), then version 1's fields.
fn marked(version_1: Record) -> Record {
    let mark = [
        RecordValue::Unsigned(0),
        RecordValue::Unsigned(0),
        RecordValue::Unsigned(0),
        RecordValue::Bytes(vec![]),
    ];
    Record(mark.into_iter().chain(version_1.0).collect())
}

#[test]
fn records_of_every_version_load_and_keep_their_cell_size() {
    let cells = [1, 2, 3, 4, 5, 6];
    // RedisBloom 2.8's record loads as 4-byte cells, and the RDB and a RESTORE payload (the
    // AOF's) hold version 0 of it again, byte for byte.
    let version_0 = load(redisbloom_record(3, 2, 21, &cells), 0, BUDGET).unwrap();
    assert_eq!(version_0.cell_size(), CellSize::Four);
    assert_eq!(rdb_record(&version_0), redisbloom_record(3, 2, 21, &cells));
    assert_eq!(portable(&version_0), (0, redisbloom_record(3, 2, 21, &cells)));
    for cell_size in SIZES {
        let fields = |hash: Option<(u64, u64)>| {
            let mut record = version_1_record(3, 2, 21, cell_size, &cells);
            if let Some((version, seed)) = hash {
                record.0.extend([RecordValue::Unsigned(version), RecordValue::Unsigned(seed)]);
            }
            record
        };
        let version_1 = load(fields(None), 1, BUDGET).unwrap();
        assert_eq!(version_1.cell_size(), cell_size);
        assert_eq!(counters(&version_1), cells);
        // Only 4-byte cells have a version 0 to travel in; the others are marked in the RDB,
        // and travel as version 1 in a RESTORE payload.
        let (saved, expected) = if cell_size == CellSize::Four {
            (redisbloom_record(3, 2, 21, &cells), (0, redisbloom_record(3, 2, 21, &cells)))
        } else {
            (marked(fields(None)), (1, fields(None)))
        };
        assert_eq!(rdb_record(&version_1), saved, "{cell_size:?}");
        assert_eq!(portable(&version_1), expected);
        assert_eq!(counters(&load(saved, 0, BUDGET).unwrap()), cells, "the RDB's record loads back");
        let version_2 = load(fields(Some((0, 0))), 2, BUDGET).unwrap();
        assert_eq!(rdb_record(&version_2), rdb_record(&version_1));
        assert!(load(fields(Some((1, 0x1234))), 2, BUDGET).is_err(), "a seeded hash");
        assert!(load(fields(Some((0, 0))), 1, BUDGET).is_ok(), "the hash fields are version 2's");
        assert!(load(fields(None), 0, BUDGET).is_err(), "version 0 has no cell size");
        assert!(load(marked(fields(None)), 1, BUDGET).is_err(), "the mark is version 0's");
    }
    assert_eq!(CountMinSketch::ENCODING_VERSION, 0);
}

/// A marked record is refused where the mark is not exactly one (counters after it, a count
/// in it), and where what follows is not a valid version 1 record.
#[test]
fn a_marked_record_holds_the_mark_and_a_valid_sketch() {
    let valid = version_1_record(3, 2, 21, CellSize::One, &[1, 2, 3, 4, 5, 6]);
    assert!(load(marked(valid.clone()), 0, BUDGET).is_ok());
    let mut counters_after_the_mark = marked(valid.clone());
    counters_after_the_mark.0[3] = RecordValue::Bytes(vec![0; 6]);
    let mut counted_mark = marked(valid.clone());
    counted_mark.0[2] = RecordValue::Unsigned(1);
    let mut without_cell_size = marked(valid.clone());
    without_cell_size.0.remove(7);
    let mark_alone = Record(marked(valid).0.into_iter().take(4).collect());
    for (what, record) in [
        ("counters after the mark", counters_after_the_mark),
        ("a count in the mark", counted_mark),
        ("no cell size after the mark", without_cell_size),
        ("the mark alone", mark_alone),
    ] {
        assert!(load(record, 0, BUDGET).is_err(), "{what}");
    }
}

#[test]
fn every_record_a_save_writes_loads_as_the_same_sketch() {
    for cell_size in SIZES {
        let mut sketch = sized(30, 3, cell_size);
        let answers = increment_all(
            &mut sketch,
            &[(b"a", 5), (b"b", cell_size.max() as i64 - 20), (b"c", 7), (b"a", -2)],
        );
        assert!(answers.iter().all(Result::is_ok), "{answers:?}");
        let saved = rdb_record(&sketch);
        let (version, travelling) = portable(&sketch);
        for (version, record) in [(CountMinSketch::ENCODING_VERSION, saved.clone()), (version, travelling)] {
            let mut source = record;
            let loaded = CountMinSketch::load_rdb(version, &mut source, BUDGET).unwrap();
            assert!(source.0.is_empty());
            assert_eq!(rdb_record(&loaded), saved, "{cell_size:?}, version {version}");
            assert_eq!(query_all(&loaded, &[b"a", b"b", b"c"]), query_all(&sketch, &[b"a", b"b", b"c"]));
        }
    }
}

fn refuse(values: Vec<RecordValue>, version: i32, max_bytes: usize) -> (Option<DecodeError>, usize) {
    let mut record = Record(values.into());
    let result = CountMinSketch::load_rdb(version, &mut record, max_bytes);
    (result.err(), record.0.len())
}

fn header(width: u64, depth: u64, count: u64, cell_size: Option<u64>) -> Vec<RecordValue> {
    let mut values =
        vec![RecordValue::Unsigned(width), RecordValue::Unsigned(depth), RecordValue::Unsigned(count)];
    values.extend(cell_size.map(RecordValue::Unsigned));
    values
}

fn with_counters(mut values: Vec<RecordValue>, len: usize) -> Vec<RecordValue> {
    values.push(RecordValue::Bytes(vec![0; len]));
    values
}

#[test]
fn hostile_records_are_refused_before_their_counters_are_read() {
    // Refused with the counters' string still unread: nothing was allocated for it.
    for (width, depth, max_bytes) in [
        (0, 3, BUDGET),
        (3, 0, BUDGET),
        (u64::MAX, u64::MAX, usize::MAX),
        (1 << 62, 1, usize::MAX),
        (1000, 1000, 3_999_999),
    ] {
        let (error, left) = refuse(with_counters(header(width, depth, 0, None), 12), 0, max_bytes);
        assert!(error.is_some(), "{width} x {depth}");
        assert_eq!(left, 1, "{width} x {depth}: the string was read");
    }
    assert_eq!(
        refuse(with_counters(header(1000, 1000, 0, None), 12), 0, 3_999_999).0,
        Some(DecodeError::TooLarge)
    );
    // The budget counts width * depth * cell size bytes.
    for cell_size in SIZES {
        let bytes = 100 * cell_size.bytes();
        let values = with_counters(header(10, 10, 0, Some(cell_size.bytes() as u64)), bytes);
        assert_eq!(refuse(values.clone(), 1, bytes - 1), (Some(DecodeError::TooLarge), 1));
        assert_eq!(refuse(values, 1, bytes).0, None);
    }
    // Cell sizes never allowed, in version 1 or 2.
    for cell_size in [0, 3, 5, 16, 32, u64::MAX] {
        for version in [1, 2] {
            let (error, left) = refuse(with_counters(header(3, 1, 0, Some(cell_size)), 12), version, BUDGET);
            assert!(error.is_some(), "cell size {cell_size}");
            assert_eq!(left, 1, "cell size {cell_size}: the string was read");
        }
    }
    // A total past i64::MAX, which no increment makes (RedisBloom 2.8's wrapped totals
    // included: 8.12 refuses them too).
    for (version, cell_size) in [(0, None), (1, Some(4)), (1, Some(8))] {
        let values = with_counters(header(3, 1, (i64::MAX as u64) + 1, cell_size), 12);
        assert_eq!(refuse(values, version, BUDGET).1, 1, "version {version}");
        let values =
            with_counters(header(3, 1, i64::MAX as u64, cell_size), 3 * cell_size.unwrap_or(4) as usize);
        assert_eq!(refuse(values, version, BUDGET).0, None);
    }
}

#[test]
fn hostile_counters_are_refused() {
    // Lengths other than width * depth * cell size.
    for (cell_size, good) in [(None, 12), (Some(1), 3), (Some(2), 6), (Some(4), 12), (Some(8), 24)] {
        let version = i32::from(cell_size.is_some());
        for len in [0, good - 1, good + 1, good * 2] {
            let values = with_counters(header(3, 1, 0, cell_size), len);
            assert!(refuse(values, version, BUDGET).0.is_some(), "{cell_size:?}: {len} bytes");
        }
    }
    // An 8-byte counter past i64::MAX (RedisBloom 8.12's CMS_ValidateLoaded): narrower ones
    // cannot be past their maximum.
    for counter in [(i64::MAX as u64) + 1, u64::MAX] {
        let cells = [0, counter, 5];
        let record = version_1_record(3, 1, 0, CellSize::Eight, &cells);
        assert!(load(record, 1, BUDGET).is_err(), "{counter}");
    }
    let at_most = version_1_record(3, 1, 0, CellSize::Eight, &[0, i64::MAX as u64, 5]);
    assert_eq!(counters(&load(at_most, 1, BUDGET).unwrap()), [0, i64::MAX as u64, 5]);
    // Truncated anywhere, or of another kind.
    for (version, whole) in
        [(0, with_counters(header(3, 1, 0, None), 12)), (1, with_counters(header(3, 1, 0, Some(2)), 6))]
    {
        for cut in 0..whole.len() {
            assert_eq!(
                refuse(whole[..cut].to_vec(), version, BUDGET).0,
                Some(DecodeError::Malformed("short read"))
            );
        }
        let mut swapped = whole.clone();
        swapped.swap(2, 3);
        assert!(refuse(swapped, version, BUDGET).0.is_some());
    }
    // Versions never written.
    let whole = with_counters(header(3, 1, 0, None), 12);
    for version in [3, 4, 1023, -1] {
        assert!(refuse(whole.clone(), version, BUDGET).0.is_some(), "version {version}");
    }
}
