//! The windowed sketch on a clock the tests control: a single generation is the plain sketch,
//! what is older than the window is forgotten (read before or after the rotation), the
//! window's heavy hitters are found when they change, memory stays within `g + 1` plain
//! sketches, and the record round-trips exactly and refuses what it did not write.

use super::sketch::generation_seed;
use super::*;
use crate::decode::{DecodeError, Persistent, Record, RecordValue};
use crate::top_k::tests::{flip_bits, flips, stream};
use crate::top_k::{Parameter, SizeError, TopK};
use crate::window::Schedule;
use proptest::prelude::*;

const BUDGET: usize = 1 << 30;
/// November 2023, in milliseconds: a plausible wall-clock time.
const T0: u64 = 1_700_000_000_000;
const SEED: u64 = 77;

fn windowed(k: u64, width: u64, depth: u64, window_ms: u64, generations: u32) -> WindowTopK {
    let schedule = Schedule::new(window_ms, generations).unwrap();
    let mut sketch = WindowTopK::new((k, width, depth, 0.9), schedule, SEED, BUDGET).unwrap();
    sketch.rotate(T0);
    sketch
}

/// Adds at `now` as a master does: rotate to its clock, then add.
fn add_at(sketch: &mut WindowTopK, item: &str, increment: u32, now: u64) -> Option<String> {
    sketch.rotate(now);
    sketch.add(item.as_bytes(), increment).unwrap().map(|item| String::from_utf8_lossy(&item).into_owned())
}

fn listed(sketch: &WindowTopK, now: Option<u64>) -> Vec<(String, u64)> {
    let list = sketch.list(now).unwrap();
    list.into_iter()
        .map(|(item, count)| (String::from_utf8(item.unwrap().to_vec()).unwrap(), count))
        .collect()
}

fn names(sketch: &WindowTopK, now: Option<u64>) -> Vec<String> {
    let mut names: Vec<String> = listed(sketch, now).into_iter().map(|(item, _)| item).collect();
    names.sort();
    names
}

fn record(sketch: &impl Persistent) -> Record {
    let mut record = Record::default();
    sketch.save_rdb(&mut record);
    record
}

fn reload(sketch: &WindowTopK) -> WindowTopK {
    WindowTopK::load_rdb(WindowTopK::ENCODING_VERSION, &mut record(sketch), BUDGET).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Within one span the window is one generation: the plain sketch's answers, slot for
    /// slot, from the generator the generation was seeded with.
    #[test]
    fn a_single_generation_answers_as_the_plain_sketch(stream in stream()) {
        let mut window = windowed(4, 5, 3, 60_000, 4);
        let seed = generation_seed(SEED, window.generations.current_start_ms());
        let mut plain = TopK::new(4, 5, 3, 0.9, seed, BUDGET).unwrap();
        for &(item, increment) in &stream {
            let item = [b'i', item];
            prop_assert_eq!(window.add(&item, increment).unwrap(), plain.add(&item, increment).unwrap());
        }
        prop_assert_eq!(window.list(Some(T0)).unwrap(), plain.list().unwrap());
        for item in 0..12u8 {
            prop_assert_eq!(window.query(&[b'i', item], Some(T0)), plain.query(&[b'i', item]));
        }
    }

    /// Batches add as one by one, across generations, at any depth (hashed ahead or not).
    #[test]
    fn a_batch_adds_as_one_by_one(stream in stream(), depth in prop_oneof![Just(1u64), Just(7), Just(64), Just(65)]) {
        let mut single = windowed(4, 5, depth, 1000, 4);
        let mut batched = windowed(4, 5, depth, 1000, 4);
        let items: Vec<(Vec<u8>, u32)> = stream.iter().map(|&(item, increment)| (vec![b'i', item], increment)).collect();
        for (chunk, part) in items.chunks(40).enumerate() {
            let now = T0 + 300 * chunk as u64;
            single.rotate(now);
            batched.rotate(now);
            let one_by_one: Vec<_> = part.iter().map(|(item, increment)| single.add(item, *increment)).collect();
            let mut results = Vec::new();
            batched.add_all(part.iter().map(|(item, increment)| (&item[..], *increment)), |result| results.push(result));
            prop_assert_eq!(results, one_by_one);
        }
        prop_assert_eq!(record(&batched), record(&single));
    }

    /// A save and load at any point, across rotations, changes nothing that follows.
    #[test]
    fn a_save_and_load_mid_stream_changes_nothing(stream in stream(), split in any::<prop::sample::Index>()) {
        let split = split.index(stream.len() + 1);
        let mut kept = windowed(4, 5, 3, 1000, 4);
        let mut reloaded = windowed(4, 5, 3, 1000, 4);
        let run = |sketch: &mut WindowTopK, part: &[(u8, u32)], offset: usize| -> Vec<Option<String>> {
            part.iter().enumerate().map(|(index, &(item, increment))| {
                let now = T0 + 37 * (offset + index) as u64;
                add_at(sketch, &format!("i{item}"), increment, now)
            }).collect()
        };
        run(&mut kept, &stream[..split], 0);
        run(&mut reloaded, &stream[..split], 0);
        let mut reloaded = reload(&reloaded);
        prop_assert_eq!(run(&mut kept, &stream[split..], split), run(&mut reloaded, &stream[split..], split));
        prop_assert_eq!(record(&kept), record(&reloaded));
        prop_assert_eq!(record(&kept.try_clone().unwrap()), record(&kept));
    }

    #[test]
    fn corrupt_records_never_panic(
        stream in stream(),
        flips in flips(),
    ) {
        let mut sketch = windowed(3, 4, 2, 1000, 2);
        for (index, &(item, increment)) in stream.iter().enumerate() {
            add_at(&mut sketch, &format!("i{item}"), increment, T0 + 11 * index as u64);
        }
        let mut saved = record(&sketch);
        flip_bits(&mut saved, &flips);
        if let Ok(mut loaded) = WindowTopK::load_rdb(WindowTopK::ENCODING_VERSION, &mut saved, BUDGET) {
            let now = T0 + 11 * stream.len() as u64;
            let _ = (loaded.list(Some(now)).unwrap(), loaded.count(b"i1", Some(now)), loaded.query(b"i2", None));
            for (index, &(item, increment)) in stream.iter().enumerate() {
                add_at(&mut loaded, &format!("i{item}"), increment, now + 7 * index as u64);
            }
            let _ = loaded.list(None).unwrap();
        }
    }
}

#[test]
fn what_is_older_than_the_window_is_forgotten_read_before_or_after_the_rotation() {
    // 1000 ms in four spans of 250: gone by 1250 ms after the add.
    let mut sketch = windowed(3, 50, 4, 1000, 4);
    add_at(&mut sketch, "old", 500, T0);
    add_at(&mut sketch, "new", 5, T0 + 900);
    let read = T0 + 1000;
    assert_eq!(listed(&sketch, Some(read)), [("old".to_string(), 500), ("new".to_string(), 5)]);
    assert_eq!(sketch.count(b"old", Some(read)), 500);
    // Past its generation's expiry, a master reading before any rotation counts it no more.
    let expired = T0 - T0 % 250 + 250 + 1000;
    assert_eq!(listed(&sketch, Some(expired)), [("new".to_string(), 5)]);
    assert_eq!((sketch.count(b"old", Some(expired)), sketch.query(b"old", Some(expired))), (0, false));
    // A replica reads what its master's rotations left: still there until the rotation.
    assert!(sketch.query(b"old", None));
    let rotation = sketch.rotate(expired);
    assert_eq!(rotation.dropped.len(), 1);
    assert_eq!(listed(&sketch, None), [("new".to_string(), 5)]);
    assert!(!sketch.query(b"old", None));
    // The slot it left takes the next item, expelling nothing.
    assert_eq!(add_at(&mut sketch, "next", 1, expired + 1), None);
    assert_eq!(names(&sketch, None), ["new", "next"]);
}

/// At any depth: past the rows hashed ahead (64) every row is hashed where it is read.
#[test]
fn window_counts_sum_the_generations_and_the_list_follows_them() {
    for depth in [4, 64, 65, 200] {
        window_counts_sum_the_generations_at(depth);
    }
}

fn window_counts_sum_the_generations_at(depth: u64) {
    let mut sketch = windowed(2, 64, depth, 1000, 4);
    for (at, item, increment) in [(0, "a", 10), (300, "a", 5), (300, "b", 12), (600, "b", 4), (600, "c", 1)] {
        add_at(&mut sketch, item, increment, T0 + at);
    }
    let now = Some(T0 + 700);
    assert_eq!(sketch.generation_count(), 3);
    assert_eq!([sketch.count(b"a", now), sketch.count(b"b", now), sketch.count(b"c", now)], [15, 16, 1]);
    assert_eq!(listed(&sketch, now), [("b".to_string(), 16), ("a".to_string(), 15)]);
    // c reaches the smallest window count, 15, only with its older counts: it expels a.
    assert_eq!(add_at(&mut sketch, "c", 13, T0 + 800), None);
    assert_eq!(add_at(&mut sketch, "c", 2, T0 + 800), Some("a".to_string()));
    assert_eq!(listed(&sketch, Some(T0 + 800)), [("b".to_string(), 16), ("c".to_string(), 16)]);
    // Once a's first generation expires, the recount leaves b and c as they were.
    let first_expiry = T0 - T0 % 250 + 250 + 1000;
    sketch.rotate(first_expiry);
    assert_eq!(listed(&sketch, None), [("b".to_string(), 16), ("c".to_string(), 16)]);
    assert_eq!(sketch.count(b"a", None), 5);
}

/// The next item of a stream whose ten heavy items change with the `phase`: half the adds go
/// to the phase's heavy items, weighted 10 to 1, the rest to a tail of 5000 items.
fn phased_item(random: &mut u64, phase: u64) -> String {
    *random ^= *random << 13;
    *random ^= *random >> 7;
    *random ^= *random << 17;
    if random.is_multiple_of(2) {
        let mut rank = *random / 2 % 55;
        let heavy = (0..10)
            .find(|&heavy| {
                rank < 10 - heavy || {
                    rank -= 10 - heavy;
                    false
                }
            })
            .unwrap_or(0);
        format!("heavy{phase}:{heavy}")
    } else {
        format!("tail:{}", *random / 2 % 5000)
    }
}

/// Heavy hitters that change faster than the window: phases of a quarter window (one span),
/// read at many instants. An item heavy in a phase whose list was full of heavier items
/// (listed from earlier phases) is left out when it is added; once those expire, the next
/// rotation lists it from the candidates. The windowed list holds the top k of what its
/// generations hold (the items of the live spans) as well as a plain sketch fed those items
/// (both 9.975 of 10 on average); without the candidates it held 8.5.
#[test]
fn heavy_hitters_of_phases_shorter_than_the_window_are_listed_once_heavier_ones_expire() {
    const K: usize = 10;
    let (window_ms, span) = (10_000, 2_500);
    let mut window = windowed(K as u64, 200, 5, window_ms, 4);
    let mut stream: Vec<(u64, String)> = Vec::new();
    let mut random = 0x2545_f491_4f6c_dd1du64;
    let (mut windowed_found, mut plain_found, mut instants) = (0usize, 0usize, 0usize);
    for now in T0..T0 + 6 * window_ms {
        let item = phased_item(&mut random, (now - T0) / span);
        add_at(&mut window, &item, 1, now);
        stream.push((now, item));
        if now < T0 + 2 * window_ms || !(now - T0).is_multiple_of(997) {
            continue;
        }
        // What the live generations hold: the spans that end less than a window ago.
        let live = stream.iter().filter(|(at, _)| at - at % span + span + window_ms > now);
        let mut exact = std::collections::HashMap::new();
        let mut plain = TopK::new(K as u64, 200, 5, 0.9, 2, BUDGET).unwrap();
        for (_, item) in live {
            *exact.entry(item.as_str()).or_insert(0u64) += 1;
            plain.add(item.as_bytes(), 1).unwrap();
        }
        let mut ranked: Vec<(&str, u64)> = exact.into_iter().collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let truth: Vec<&str> = ranked.iter().take(K).map(|&(item, _)| item).collect();
        let found =
            |listed: Vec<String>| truth.iter().filter(|item| listed.iter().any(|x| x == *item)).count();
        windowed_found += found(names(&window, Some(now)));
        let plain_list = plain.list().unwrap();
        plain_found += found(
            plain_list
                .into_iter()
                .map(|(item, _)| String::from_utf8_lossy(item.unwrap()).into_owned())
                .collect(),
        );
        instants += 1;
    }
    let (windowed, plain) = (windowed_found as f64 / instants as f64, plain_found as f64 / instants as f64);
    assert!(
        windowed >= 9.5 && windowed >= plain - 0.25,
        "windowed {windowed} of {K}, plain {plain}, {instants} reads"
    );
}

/// A candidate an add left out (expelled here) is listed when the item above it expires.
#[test]
fn a_rotation_lists_an_expelled_item_once_the_listed_ones_expire() {
    let mut sketch = windowed(2, 200, 5, 1000, 4);
    add_at(&mut sketch, "a", 10, T0);
    add_at(&mut sketch, "b", 5, T0);
    add_at(&mut sketch, "b", 3, T0 + 300);
    assert_eq!(add_at(&mut sketch, "c", 12, T0 + 300).as_deref(), Some("b"));
    assert_eq!(listed(&sketch, None), [("c".to_string(), 12), ("a".to_string(), 10)]);
    // The first span's generation expires at T0 + 1250: "a" has nothing left, "b" its 3.
    sketch.rotate(T0 + 1250);
    assert_eq!(listed(&sketch, None), [("c".to_string(), 12), ("b".to_string(), 3)]);
    assert_eq!(record(&reload(&sketch)), record(&sketch));
}

/// Heavy hitters that change: in each phase a new set of items is heavy. At the end of the
/// last phase, longer than the window, the windowed sketch finds the window's true top k as
/// well as a plain sketch fed only the window's items, and a plain sketch fed the whole
/// stream keeps the old ones.
#[test]
fn the_windows_heavy_hitters_are_found_when_they_change() {
    const K: usize = 10;
    let window_ms = 10_000;
    let phase_ends = [10_000, 20_000, 35_000];
    let end = T0 + phase_ends[2];
    let mut window = windowed(K as u64, 200, 5, window_ms, 4);
    let mut whole = TopK::new(K as u64, 200, 5, 0.9, 1, BUDGET).unwrap();
    let mut last_window = TopK::new(K as u64, 200, 5, 0.9, 2, BUDGET).unwrap();
    let mut exact = std::collections::HashMap::new();
    let mut random = 0x2545_f491_4f6c_dd1du64;
    for now in T0..end {
        let phase = phase_ends.iter().position(|&phase_end| now - T0 < phase_end).unwrap_or(0);
        let item = phased_item(&mut random, phase as u64);
        add_at(&mut window, &item, 1, now);
        whole.add(item.as_bytes(), 1).unwrap();
        if now >= end - window_ms {
            last_window.add(item.as_bytes(), 1).unwrap();
            *exact.entry(item).or_insert(0u64) += 1;
        }
    }
    let mut ranked: Vec<(String, u64)> = exact.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let truth: Vec<&String> = ranked.iter().take(K).map(|(item, _)| item).collect();
    let recall = |found: &[String]| truth.iter().filter(|item| found.contains(item)).count();
    let in_plain = |sketch: &TopK| -> Vec<String> {
        let list = sketch.list().unwrap();
        list.into_iter().map(|(item, _)| String::from_utf8(item.unwrap().to_vec()).unwrap()).collect()
    };
    let windowed_recall = recall(&names(&window, Some(end)));
    let last_window_recall = recall(&in_plain(&last_window));
    assert!(windowed_recall >= last_window_recall, "{windowed_recall} < {last_window_recall}");
    assert!(windowed_recall >= K - 1, "windowed recall {windowed_recall} of {K}");
    let whole_stream = in_plain(&whole);
    assert!(recall(&whole_stream) < windowed_recall, "the whole stream's sketch: {whole_stream:?}");
    let old = whole_stream.iter().filter(|item| !item.starts_with("heavy2:")).count();
    assert!(old >= K / 2, "the plain sketch of the whole stream keeps {old} old heavy hitters");
}

#[test]
fn memory_stays_within_g_plus_one_plain_sketches() {
    for (k, width, depth, generations) in
        [(10, 8, 7, 4), (100, 2000, 7, 4), (1000, 8, 7, 1), (50, 100, 3, 64)]
    {
        let window_ms = 64_000;
        let mut sketch = windowed(k, width, depth, window_ms, generations);
        let plain = TopK::new(k, width, depth, 0.9, 0, BUDGET).unwrap();
        let span = window_ms / u64::from(generations);
        for step in 0..=u64::from(generations) {
            add_at(&mut sketch, "x", 1, T0 + step * span);
        }
        let live = sketch.generation_count() as f64;
        assert_eq!(live, f64::from(generations) + 1.0);
        let ratio = sketch.memory_bytes() as f64 / plain.memory_bytes() as f64;
        assert!(ratio <= live, "{k} {width} {depth} {generations}: {ratio}");
    }
}

#[test]
fn reserve_checks_the_plain_parameters_and_the_budget_of_every_generation() {
    let schedule = Schedule::new(1000, 4).unwrap();
    let new = |k, width, depth, decay, budget| WindowTopK::new((k, width, depth, decay), schedule, 0, budget);
    assert!(matches!(new(0, 8, 7, 0.9, BUDGET), Err(SizeError::Invalid(Parameter::K))));
    assert!(matches!(new(1, 8, 7, 1.5, BUDGET), Err(SizeError::Invalid(Parameter::Decay))));
    // Five generations of 100 x 10 buckets, the list and the candidates: 40,000 + 2 x 100 x 40
    // bytes.
    assert!(matches!(new(100, 100, 10, 0.9, 47_999), Err(SizeError::TooLarge)));
    assert!(new(100, 100, 10, 0.9, 48_000).is_ok());
    assert!(matches!(
        new(1, u64::from(u32::MAX), u64::from(u32::MAX), 0.9, BUDGET),
        Err(SizeError::TooLarge)
    ));
}

#[test]
fn the_record_round_trips_and_hostile_ones_are_refused() {
    let mut sketch = windowed(3, 8, 2, 1000, 4);
    for (at, item) in [(0, "a"), (300, "b"), (600, "a"), (600, "c")] {
        add_at(&mut sketch, item, 3, T0 + at);
    }
    let saved = record(&sketch);
    assert_eq!(record(&reload(&sketch)), saved);
    let malformed = |record: &mut Record| {
        matches!(
            WindowTopK::load_rdb(WindowTopK::ENCODING_VERSION, record, BUDGET),
            Err(DecodeError::Malformed(_))
        )
    };
    assert!(matches!(WindowTopK::load_rdb(0, &mut saved.clone(), BUDGET), Err(DecodeError::Malformed(_))));
    // Fields: k, width, depth, decay, seed, list slots, 3 items, candidate slots, 3 items,
    // window, generations, current start, count, then (start, generator, buckets) per
    // generation.
    let at = |index: usize, value: RecordValue| {
        let mut record = saved.clone();
        record.0[index] = value;
        record
    };
    for (index, value) in [
        (0, RecordValue::Unsigned(0)),
        (1, RecordValue::Unsigned(1 << 32)),
        (3, RecordValue::Double(f64::NAN)),
        (5, RecordValue::Bytes(vec![0; 24])),
        (6, RecordValue::Bytes(b"a".to_vec())),
        (9, RecordValue::Bytes(vec![0; 24])),
        (10, RecordValue::Bytes(b"a".to_vec())),
        (13, RecordValue::Unsigned(0)),
        (14, RecordValue::Unsigned(65)),
        (15, RecordValue::Unsigned(T0 + 1)),
        (16, RecordValue::Unsigned(9)),
        (17, RecordValue::Unsigned(1)),
        (19, RecordValue::Bytes(vec![0; 8])),
    ] {
        assert!(malformed(&mut at(index, value.clone())), "{index}: {value:?}");
    }
    let mut short = saved.clone();
    short.0.pop_back();
    assert!(malformed(&mut short));
    // An item both listed and a candidate: a rotation would list it twice.
    let mut twice = windowed(3, 8, 2, 1000, 4);
    add_at(&mut twice, "x", 3, T0);
    add_at(&mut twice, "y", 1, T0);
    let mut record_of_twice = record(&twice);
    let (list_slots, list_items) =
        (record_of_twice.0[5].clone(), [6, 7, 8].map(|i| record_of_twice.0[i].clone()));
    record_of_twice.0[9] = list_slots;
    for (offset, item) in list_items.into_iter().enumerate() {
        record_of_twice.0[10 + offset] = item;
    }
    assert!(malformed(&mut record_of_twice));
    // A candidate whose slot says another length than its item's: lookups would miss it, and
    // an add list it while it stays a candidate.
    let mut left_out = windowed(2, 200, 5, 1000, 4);
    add_at(&mut left_out, "a", 10, T0);
    add_at(&mut left_out, "b", 5, T0);
    add_at(&mut left_out, "c", 12, T0 + 300);
    let mut record_of_left_out = record(&left_out);
    assert_eq!(
        WindowTopK::load_rdb(WindowTopK::ENCODING_VERSION, &mut record_of_left_out.clone(), BUDGET)
            .map(|loaded| record(&loaded))
            .ok(),
        Some(record_of_left_out.clone())
    );
    let RecordValue::Bytes(slots) = &mut record_of_left_out.0[8] else { panic!("the candidates' slots") };
    for slot in slots.chunks_exact_mut(24).filter(|slot| slot[4] == 1) {
        slot[4] = 2;
    }
    assert!(malformed(&mut record_of_left_out));
    // The first version's record, without the candidates (none here: every item is listed),
    // loads with none and saves as this version's.
    let mut first = saved.clone();
    for _ in 0..4 {
        first.0.remove(9);
    }
    assert!(malformed(&mut first.clone()));
    assert_eq!(record(&WindowTopK::load_rdb(1, &mut first, BUDGET).unwrap()), saved);
    // Beyond the budget: refused before a generation's buckets are read.
    assert!(matches!(
        WindowTopK::load_rdb(WindowTopK::ENCODING_VERSION, &mut saved.clone(), 200),
        Err(DecodeError::TooLarge)
    ));
    // A shape whose generations would not fit, even with none alive: its adds would open them.
    let mut empty = Record::default();
    windowed(3, 8, 2, 1000, 4).save_rdb(&mut empty);
    empty.0[1] = RecordValue::Unsigned(1 << 20);
    assert!(WindowTopK::load_rdb(WindowTopK::ENCODING_VERSION, &mut empty.clone(), BUDGET).is_ok());
    assert!(matches!(
        WindowTopK::load_rdb(WindowTopK::ENCODING_VERSION, &mut empty, 1 << 20),
        Err(DecodeError::TooLarge)
    ));
    let mut huge = at(1, RecordValue::Unsigned(u64::from(u32::MAX)));
    huge.0[2] = RecordValue::Unsigned(u64::from(u32::MAX));
    assert!(matches!(
        WindowTopK::load_rdb(WindowTopK::ENCODING_VERSION, &mut huge, BUDGET),
        Err(DecodeError::TooLarge)
    ));
}
