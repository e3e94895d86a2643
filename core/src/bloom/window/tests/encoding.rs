//! The header, chunks and RDB record: copies and reloads equal to the bit, and whatever the filter
//! did not write (truncated, patched, flipped, too large) refused without a panic.

use super::*;
use crate::bloom::encoding::ChunkError;
use crate::decode::{DecodeError, RdbSink, RecordValue};
use proptest::prelude::*;

#[test]
fn clones_and_reloads_are_equal_and_independent() {
    let mut filter = filter(1000, 4, 300, 0.001, 3);
    let end = stream(&mut filter, 0, 900, T0, 2);
    let copy = filter.try_clone().unwrap();
    assert!(same(&copy, &filter));
    assert_eq!(copy.memory_bytes(), filter.memory_bytes());
    let reloaded = reloaded(&filter);
    assert_eq!(reloaded.memory_bytes(), filter.memory_bytes());
    assert_eq!(reloaded.items(), filter.items());
    assert_eq!(reloaded.link_count(), filter.link_count());
    assert!(filter.link_count() > filter.generations().count(), "some generations scaled");
    add_at(&mut filter, b"only in the original", end).unwrap();
    assert!(!copy.contains(b"only in the original"));
}

#[test]
fn chunks_cover_every_link_and_refuse_what_does_not_fit() {
    let mut filter = filter(1000, 4, 2000, 0.01, 2);
    stream(&mut filter, 0, 2000, T0, 2);
    let total: usize = filter.link_bytes().map(<[u8]>::len).sum();
    assert_eq!(filter.chunks().last().map(|(end, _)| end), Some(total as u64));
    assert_eq!(filter.chunk_at(0), filter.link_bytes().next());
    assert_eq!(filter.chunk_at(total as u64), None);
    let first_len = filter.link_bytes().next().unwrap().len();
    let mut copy = WindowFilter::decode_header(&filter.encode_header(), UNLIMITED).unwrap();
    assert_eq!(copy.write_chunk(total as u64, b"x"), Err(ChunkError::NoLink));
    assert_eq!(copy.write_chunk(first_len as u64 - 1, b"xy"), Err(ChunkError::TooBig));
    for chunk in copy.chunks_mut() {
        chunk.fill(0);
    }
    let empty = WindowFilter::decode_header(&filter.encode_header(), UNLIMITED).unwrap();
    assert!(same(&copy, &empty));
}

#[test]
fn an_empty_filter_dumps_as_a_header_alone() {
    let filter = filter(60_000, 4, 1000, 0.01, 2);
    assert_eq!(filter.chunks().count(), 0);
    let copy = WindowFilter::decode_header(&filter.encode_header(), 0).unwrap();
    assert!(same(&copy, &filter));
    assert!(is_window_header(&filter.encode_header()));
    assert!(!is_window_header(b"RBLF"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Whatever the bytes, decoding refuses or builds a filter; it never panics.
    #[test]
    fn damaged_headers_never_panic(flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6)) {
        let mut filter = filter(1000, 4, 100, 0.01, 2);
        stream(&mut filter, 0, 300, T0, 2);
        let mut header = filter.encode_header();
        for (at, byte) in flips {
            let index = at.index(header.len());
            header[index] ^= byte | 1;
        }
        let _ = WindowFilter::decode_header(&header, 1 << 24);
    }
}

/// Offsets of the fixed header's fields (see `encoding`).
const WINDOW_AT: usize = 6;
const GENERATIONS_AT: usize = 14;
const CAPACITY_AT: usize = 18;
const RATE_AT: usize = 26;
const EXPANSION_AT: usize = 34;
const CURRENT_AT: usize = 38;
const COUNT_AT: usize = 46;
const FIRST_GENERATION_AT: usize = 50;

fn patched(header: &[u8], at: usize, bytes: &[u8]) -> Vec<u8> {
    let mut header = header.to_vec();
    header[at..at + bytes.len()].copy_from_slice(bytes);
    header
}

fn refusal(header: &[u8]) -> DecodeError {
    WindowFilter::decode_header(header, UNLIMITED).err().expect("refused")
}

#[test]
fn hostile_headers_are_refused() {
    let mut filter = filter(1000, 4, 200, 0.01, 2);
    let start = filter.current_start_ms();
    for span in 0..3 {
        for n in 0..300 {
            add_at(&mut filter, &member(span * 1000 + n), start + span * 250).unwrap();
        }
    }
    let header = filter.encode_header();
    assert!(WindowFilter::decode_header(&header, UNLIMITED).is_ok());
    let current = filter.current_start_ms();
    let malformed = |header: &[u8]| matches!(refusal(header), DecodeError::Malformed(_));

    for len in 0..header.len() {
        assert!(malformed(&header[..len]), "truncated to {len}");
    }
    let mut trailing = header.clone();
    trailing.push(0);
    assert!(malformed(&trailing));
    assert!(malformed(&patched(&header, 0, b"RBLF")));
    assert!(malformed(&patched(&header, 4, &[3])));
    assert!(malformed(&patched(&header, 4, &[1])), "read as the first version");
    assert!(malformed(&patched(&header, 5, &[2])), "unknown flags");
    assert!(malformed(&patched(&header, 5, &[3])), "unknown flags");
    let non_scaling = super::filter(1000, 4, 200, 0.01, 0).encode_header();
    assert_eq!(non_scaling[5], 0, "a base that cannot scale does not pool");
    assert!(malformed(&patched(&non_scaling, 5, &[1])), "pooled rates without an overflow");
    for window in [0u64, MAX_WINDOW_MS + 1, 3] {
        assert!(malformed(&patched(&header, WINDOW_AT, &window.to_le_bytes())), "window {window}");
    }
    assert!(malformed(&patched(&header, WINDOW_AT, &2000u64.to_le_bytes())), "another window's chains");
    for generations in [0u32, 65, 5] {
        assert!(malformed(&patched(&header, GENERATIONS_AT, &generations.to_le_bytes())), "g {generations}");
    }
    assert!(malformed(&patched(&header, CAPACITY_AT, &0u64.to_le_bytes())));
    let resized =
        WindowFilter::decode_header(&patched(&header, CAPACITY_AT, &300u64.to_le_bytes()), UNLIMITED);
    assert!(resized.is_ok(), "generations sized otherwise (by another version) still load");
    for rate in [f64::NAN, 0.0, 0.3, 0.009_999] {
        assert!(malformed(&patched(&header, RATE_AT, &rate.to_le_bytes())), "rate {rate}");
    }
    assert!(malformed(&patched(&header, EXPANSION_AT, &40_000u32.to_le_bytes())));
    assert!(malformed(&patched(&header, EXPANSION_AT, &4u32.to_le_bytes())));
    assert!(malformed(&patched(&header, CURRENT_AT, &(current + 1).to_le_bytes())), "off the grid");
    assert!(malformed(&patched(&header, CURRENT_AT, &(current - 250).to_le_bytes())), "before a generation");
    assert!(malformed(&patched(&header, CURRENT_AT, &(current + 2000).to_le_bytes())), "generations expired");
    // A filter holding nothing, its current span beyond any clock (sums of times would saturate).
    let empty = super::filter(1000, 4, 200, 0.01, 2).encode_header();
    let beyond_any_clock = u64::MAX - u64::MAX % 250;
    assert!(malformed(&patched(&empty, CURRENT_AT, &beyond_any_clock.to_le_bytes())), "beyond any clock");
    let latest = MAX_TIME_MS - MAX_TIME_MS % 250;
    assert!(
        WindowFilter::decode_header(&patched(&empty, CURRENT_AT, &latest.to_le_bytes()), UNLIMITED).is_ok()
    );
    assert!(malformed(&patched(&header, COUNT_AT, &6u32.to_le_bytes())));
    assert!(malformed(&patched(&header, COUNT_AT, &4u32.to_le_bytes())));
    assert!(malformed(&patched(&header, COUNT_AT, &u32::MAX.to_le_bytes())));

    let first_start = filter.generations().next().unwrap().start_ms;
    let start_at = FIRST_GENERATION_AT;
    assert!(malformed(&patched(&header, start_at, &(first_start + 1).to_le_bytes())), "off the grid");
    assert!(malformed(&patched(&header, start_at, &(first_start + 250).to_le_bytes())), "out of order");
    assert!(malformed(&patched(&header, start_at, &(first_start - 1000).to_le_bytes())), "expired");
    assert!(malformed(&patched(&header, start_at + 8, &1_000_000u64.to_le_bytes())), "latest above items");
    assert!(malformed(&patched(&header, start_at + 16, &u32::MAX.to_le_bytes())), "chain too long");
    assert!(malformed(&patched(&header, start_at + 16, &13u32.to_le_bytes())), "chain cut short");
    assert!(malformed(&patched(&header, start_at + 20, b"RBLX")), "not a chain");
}

#[test]
fn a_generation_after_the_current_span_is_refused() {
    let mut filter = filter(1000, 4, 200, 0.01, 2);
    let start = filter.current_start_ms();
    add_at(&mut filter, b"a", start).unwrap();
    filter.rotate(start + 250);
    let header = filter.encode_header();
    assert!(WindowFilter::decode_header(&header, UNLIMITED).is_ok());
    let back = patched(&header, CURRENT_AT, &(start - 250).to_le_bytes());
    assert!(matches!(refusal(&back), DecodeError::Malformed(_)));
}

#[test]
fn the_budget_is_checked_before_a_load_allocates() {
    let mut filter = filter(1000, 4, 2000, 0.01, 2);
    stream(&mut filter, 0, 2000, T0, 2);
    let header = filter.encode_header();
    let bits = filter.bits_bytes();
    assert_eq!(WindowFilter::decode_header(&header, bits - 1).err(), Some(DecodeError::TooLarge));
    assert!(WindowFilter::decode_header(&header, bits).is_ok());
    let mut record = record_of(&filter);
    assert_eq!(
        WindowFilter::load_rdb(WindowFilter::ENCODING_VERSION, &mut record, bits - 1).err(),
        Some(DecodeError::TooLarge)
    );
}

#[test]
fn hostile_records_are_refused() {
    let mut filter = filter(1000, 4, 200, 0.01, 2);
    stream(&mut filter, 0, 400, T0, 2);
    let load =
        |mut record: Record| WindowFilter::load_rdb(WindowFilter::ENCODING_VERSION, &mut record, UNLIMITED);
    let record = record_of(&filter);
    assert!(load(record.clone()).is_ok());
    assert!(WindowFilter::load_rdb(3, &mut record.clone(), UNLIMITED).is_err());
    assert!(WindowFilter::load_rdb(0, &mut record.clone(), UNLIMITED).is_err());

    let mut short = record.clone();
    short.0.pop_back();
    assert!(matches!(load(short).err(), Some(DecodeError::Malformed(_))));
    let mut wrong_length = record.clone();
    if let Some(RecordValue::Bytes(link)) = wrong_length.0.back_mut() {
        link.push(0);
    }
    assert!(matches!(load(wrong_length).err(), Some(DecodeError::Malformed(_))));
    let mut not_a_string = record.clone();
    not_a_string.0[1] = RecordValue::Unsigned(7);
    assert!(matches!(load(not_a_string).err(), Some(DecodeError::Malformed(_))));
    let mut plain_header = record;
    plain_header.0[0] = RecordValue::Bytes(crate::bloom::encoding::encode_chain_header(
        0,
        std::slice::from_ref(filter.generations().next().unwrap().value.base()),
    ));
    assert!(matches!(load(plain_header).err(), Some(DecodeError::Malformed(_))));
}

/// A filter this module wrote before generations had an overflow (header version 1: one chain
/// per generation, its first link at half the generation's rate), as its SCANDUMP gave it: a
/// window of 1000 ms in 4 generations for 300 items at 0.1%, expansion 3, fed 900 items a
/// window for two windows from `T0`, rotated to the last millisecond.
const FIRST_VERSION_DUMP: &str = include_str!("v1_filter.hex");

fn from_hex(line: &str) -> Vec<u8> {
    (0..line.len()).step_by(2).map(|at| u8::from_str_radix(&line[at..at + 2], 16).unwrap()).collect()
}

#[test]
fn filters_of_the_first_version_load_and_answer_as_they_did() {
    let mut lines = FIRST_VERSION_DUMP.lines().map(from_hex);
    let header = lines.next().unwrap();
    assert_eq!(header[4], 1, "a version 1 header");
    let mut filter = WindowFilter::decode_header(&header, UNLIMITED).unwrap();
    let mut offset = 0;
    for chunk in lines {
        filter.write_chunk(offset, &chunk).unwrap();
        offset += chunk.len() as u64;
    }
    let now = T0 + 2 * 1000 - 1;
    assert_eq!((filter.items(), filter.link_count(), filter.generations().count()), (1125, 10, 5));
    // Everything of the last window is found; strangers as rarely as the rate allows.
    assert!((900..1800).all(|n| filter.contains_at(&member(n), now)));
    assert!(false_positives(&filter, 100_000, now) <= allowed_false_positives(0.001, 100_000));
    // Saved again in this version's form, it is the same filter, and it takes items on.
    assert!(same(&reloaded(&filter), &filter));
    assert_eq!(filter.encode_header()[4], 2);
    let mut record = record_of(&filter);
    let loaded = WindowFilter::load_rdb(WindowFilter::ENCODING_VERSION, &mut record, UNLIMITED).unwrap();
    assert!(same(&loaded, &filter));
    let end = stream(&mut filter, 5000, 900, now, 1);
    assert!((5000..5900).all(|n| filter.contains_at(&member(n), end - 1)));
}

#[test]
fn records_of_the_first_version_load() {
    let mut lines = FIRST_VERSION_DUMP.lines().map(from_hex);
    let mut record = Record::default();
    record.bytes(&lines.next().unwrap());
    for chunk in lines {
        record.bytes(&chunk);
    }
    let filter = WindowFilter::load_rdb(1, &mut record, UNLIMITED).unwrap();
    assert!((900..1800).all(|n| filter.contains(&member(n))));
    assert!(!filter.pooled, "a record of the first version places its items as that version did");
    // That version pooled nothing: a first-version header that says so is refused.
    let mut header = from_hex(FIRST_VERSION_DUMP.lines().next().unwrap());
    header[5] = 1;
    assert_eq!(
        WindowFilter::decode_header(&header, UNLIMITED).err(),
        Some(DecodeError::Malformed("pooled rates where generations cannot pool them"))
    );
}

/// Dump iterators carry the mark of the generations held: a rotation that only opens a span
/// keeps it, one that drops the oldest generation changes it, and unmarked iterators (an
/// earlier version's) name their position as they are.
#[test]
fn dump_iterators_are_marked_with_the_generations_held() {
    let mut filter = filter(1000, 4, 1000, 0.01, 2);
    add_at(&mut filter, b"a", T0).unwrap();
    let header = filter.marked_iterator(1);
    assert!(header > 1 << 40 && WindowFilter::is_header_iterator(header));
    assert_eq!(filter.position_of(header), Some(1));
    assert_eq!(filter.position_of(65), Some(65), "an unmarked iterator");
    add_at(&mut filter, b"b", T0 + 300).unwrap();
    assert_eq!(filter.marked_iterator(1), header, "a span opened: the chunks before stay put");
    filter.rotate(T0 + 1300);
    assert_eq!(filter.generations().count(), 1);
    assert_eq!(filter.position_of(header), None, "the oldest generation was dropped");
    assert_ne!(filter.marked_iterator(1), header);
    let empty = filter.marked_iterator(9);
    assert_eq!(filter.position_of(empty), Some(9));
    assert!(!WindowFilter::is_header_iterator(empty));
}
