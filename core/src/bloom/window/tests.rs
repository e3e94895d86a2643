//! The windowed filter's promises, on a clock the tests control: no false negative within the
//! window at any interleaving, forgetting on time, the error rate under bursts, steady-state
//! memory, and an encoding that round-trips exactly and refuses what it did not write.

use super::*;
use crate::bloom::encoding::ChunkError;
use crate::bloom::params::Layout;
use crate::bloom::{BloomFilter, FilterError};
use crate::decode::{DecodeError, Persistent, Record, RecordValue};
use proptest::prelude::*;
use std::collections::HashMap;

const UNLIMITED: usize = usize::MAX;
/// A plausible wall-clock time: November 2023, in milliseconds.
const T0: u64 = 1_700_000_000_000;

fn params(window_ms: u64, generations: u32, capacity: u64, rate: f64, expansion: u32) -> WindowParams {
    WindowParams::new(window_ms, generations, capacity, rate, expansion).unwrap()
}

fn filter(window_ms: u64, generations: u32, capacity: u64, rate: f64, expansion: u32) -> WindowFilter {
    WindowFilter::try_new(params(window_ms, generations, capacity, rate, expansion), T0, UNLIMITED).unwrap()
}

/// Adds at `now` as the module does: rotate to its clock, then add.
fn add_at(filter: &mut WindowFilter, item: &[u8], now: u64) -> Result<bool, FilterError> {
    filter.rotate(now);
    filter.insert(item, || UNLIMITED)
}

fn member(n: u64) -> Vec<u8> {
    format!("member:{n}").into_bytes()
}

/// False positives among `probes` items never added, as a lookup at `now` sees them.
fn false_positives(filter: &WindowFilter, probes: u64, now: u64) -> u64 {
    (0..probes).filter(|n| filter.contains_at(format!("absent:{n}").as_bytes(), now)).count() as u64
}

/// A true rate `p` over `n` probes plus four standard deviations.
fn allowed_false_positives(p: f64, n: u64) -> u64 {
    let mean = p * n as f64;
    (mean + 4.0 * (mean * (1.0 - p)).sqrt()).ceil() as u64
}

/// Rebuilds a filter as LOADCHUNK does: header, then every chunk.
fn reloaded(filter: &WindowFilter) -> WindowFilter {
    let mut copy = WindowFilter::decode_header(&filter.encode_header(), UNLIMITED).unwrap();
    for (end, chunk) in filter.chunks() {
        copy.write_chunk(end - chunk.len() as u64, chunk).unwrap();
    }
    copy
}

fn record_of(filter: &WindowFilter) -> Record {
    let mut record = Record::default();
    filter.save_rdb(&mut record);
    record
}

fn same(a: &WindowFilter, b: &WindowFilter) -> bool {
    a.encode_header() == b.encode_header() && a.chunks().eq(b.chunks())
}

/// Streams `per_window` distinct items per window, evenly over time, from `from` for
/// `windows` windows, starting at item number `first`; answers the time after the last add.
fn stream(filter: &mut WindowFilter, first: u64, per_window: u64, from: u64, windows: u64) -> u64 {
    let window = filter.params().window_ms();
    for n in 0..per_window * windows {
        let now = from + n * window / per_window;
        add_at(filter, &member(first + n), now).unwrap();
    }
    from + windows * window
}

#[test]
fn parameters_are_checked() {
    let ok = |w, g, c, e, x| WindowParams::new(w, g, c, e, x);
    assert!(ok(1, 1, 1, 0.01, 2).is_ok());
    assert!(ok(MAX_WINDOW_MS, MAX_GENERATIONS, 1 << 30, 0.25, 0).is_ok());
    assert_eq!(ok(0, 1, 100, 0.01, 2), Err(ParamError::Window));
    assert_eq!(ok(MAX_WINDOW_MS + 1, 4, 100, 0.01, 2), Err(ParamError::Window));
    assert_eq!(ok(1000, 0, 100, 0.01, 2), Err(ParamError::Generations));
    assert_eq!(ok(1000, MAX_GENERATIONS + 1, 100, 0.01, 2), Err(ParamError::Generations));
    assert_eq!(ok(3, 4, 100, 0.01, 2), Err(ParamError::Generations), "a span is at least 1 ms");
    assert_eq!(ok(1000, 4, 0, 0.01, 2), Err(ParamError::Capacity));
    assert_eq!(ok(1000, 4, (1 << 30) + 1, 0.01, 2), Err(ParamError::Capacity));
    for rate in [0.0, 1.0, -0.5, f64::NAN] {
        assert_eq!(ok(1000, 4, 100, rate, 2), Err(ParamError::ErrorRate), "{rate}");
    }
    assert_eq!(ok(1000, 4, 100, 0.9, 2).unwrap().error_rate(), 0.25);
    assert_eq!(ok(1000, 4, 100, 0.01, 32769), Err(ParamError::Expansion));

    assert!(!window_in_range(-1) && !window_in_range(0) && window_in_range(1));
    assert!(window_in_range(1 << 40) && !window_in_range((1 << 40) + 1));
    assert!(!generations_in_range(0) && generations_in_range(1) && generations_in_range(64));
    assert!(!generations_in_range(65) && !generations_in_range(-4));
}

#[test]
fn spans_cover_the_window_with_at_most_g_plus_one_generations() {
    let p = params(1000, 4, 10_000, 0.01, 2);
    assert_eq!((p.span_ms(), p.max_live_generations()), (250, 5));
    assert_eq!(p.generation_capacity(), 2813, "a quarter of 10,000 and an eighth more");
    assert_eq!(p.generation_error_rate(), 0.01 / 5.0);
    assert_eq!(p.first_link_error_rate(), 0.001);
    assert_eq!(params(1000, 4, 10_000, 0.01, 0).first_link_error_rate(), 0.002);
    // Windows that do not divide: the span rounds up, so never more than g + 1 generations.
    for (window, g, span, live) in [(10, 4, 3, 5), (10, 6, 2, 6), (10, 10, 1, 11), (7, 7, 1, 8), (5, 1, 5, 2)]
    {
        let p = params(window, g, 100, 0.01, 2);
        assert_eq!((p.span_ms(), p.max_live_generations()), (span, live), "{window} ms in {g}");
        assert!(p.max_live_generations() <= g + 1);
        // Forgetting: window + span never exceeds the first whole ms past window (1 + 1/g).
        assert!(window + span <= window + window / u64::from(g) + 1);
    }
    assert_eq!(params(1000, 4, 1, 0.01, 2).generation_capacity(), 1);
}

#[test]
fn a_rotation_moves_the_span_and_hands_back_what_expired() {
    let mut filter = filter(1000, 4, 1000, 0.01, 2);
    assert_eq!(filter.current_start_ms() % 250, 0);
    assert_eq!(filter.next_rotation_ms(), None, "nothing to rotate before the first add");
    let start = filter.current_start_ms();

    assert_eq!(add_at(&mut filter, b"a", start + 10), Ok(true));
    assert_eq!(filter.generations().count(), 1);
    assert_eq!(filter.next_rotation_ms(), Some(start + 250));
    assert!(!filter.needs_rotation(start + 249) && filter.needs_rotation(start + 250));
    assert!(!filter.rotate(start + 249).changed());

    let rotation = filter.rotate(start + 250);
    assert!(rotation.advanced && rotation.dropped.is_empty());
    assert_eq!(filter.current_start_ms(), start + 250);
    assert_eq!(filter.next_rotation_ms(), Some(start + 1250), "the first generation expires");
    assert!(filter.contains(b"a"));

    // Spans with no adds have no generation.
    assert_eq!(add_at(&mut filter, b"b", start + 1100), Ok(true));
    let starts: Vec<u64> = filter.generations().map(Generation::start_ms).collect();
    assert_eq!(starts, [start, start + 1000]);

    let rotation = filter.rotate(start + 1250);
    assert_eq!(rotation.dropped.iter().map(Generation::start_ms).collect::<Vec<_>>(), [start]);
    assert!(!filter.contains(b"a") && filter.contains(b"b"));
}

#[test]
fn after_an_idle_time_longer_than_the_window_everything_is_dropped() {
    let mut filter = filter(1000, 4, 1000, 0.01, 2);
    let end = stream(&mut filter, 0, 1000, T0, 2);
    assert_eq!(filter.generations().count(), 5);
    let held = filter.memory_bytes();

    let later = end + 1000 + 250;
    assert!(filter.needs_rotation(later));
    let rotation = filter.rotate(later);
    assert_eq!(rotation.dropped.len(), 5);
    let freed: usize = rotation.dropped.iter().map(Generation::memory_bytes).sum();
    assert!(freed > held * 9 / 10);
    assert_eq!(filter.generations().count(), 0);
    assert_eq!((filter.items(), filter.bits_bytes(), filter.next_rotation_ms()), (0, 0, None));
    assert!(!filter.needs_rotation(u64::MAX), "an idle key needs no more rotations");
    assert!((0..2000).all(|n| !filter.contains(&member(n))));
    assert_eq!(add_at(&mut filter, &member(0), later + 1), Ok(true));
}

#[test]
fn a_clock_set_back_moves_nothing_back() {
    let mut filter = filter(1000, 4, 1000, 0.01, 2);
    stream(&mut filter, 0, 1000, T0, 2);
    let before = filter.encode_header();
    assert!(!filter.rotate(T0).changed());
    assert_eq!(filter.encode_header(), before);
    // Items then go to the current span: kept longer, never shorter.
    add_at(&mut filter, b"late", T0 + 5).unwrap();
    assert!(filter.contains_at(b"late", T0 + 1005));
}

#[test]
fn adding_again_starts_the_window_again() {
    let mut filter = filter(1000, 4, 1000, 0.01, 2);
    let t = filter.current_start_ms() + 3;
    assert_eq!(add_at(&mut filter, b"x", t), Ok(true));
    assert_eq!(add_at(&mut filter, b"x", t + 999), Ok(false), "present: 0, and added to this span");
    assert_eq!(filter.generations().count(), 2);
    assert_eq!(filter.items(), 1, "counted once");
    filter.rotate(t + 1000 + 250 + 1);
    assert!(filter.contains(b"x"), "found until a window after its latest add");
    assert_eq!(filter.items(), 1);
    filter.rotate(t + 999 + 1250);
    assert!(!filter.contains(b"x"));
    assert_eq!(filter.items(), 0);
}

#[test]
fn an_item_is_kept_a_whole_window_and_forgotten_a_span_later() {
    for (window, g) in [(1000u64, 4u32), (10, 4), (10, 3), (7, 7), (1, 1), (100, 1)] {
        let span = params(window, g, 100, 0.01, 2).span_ms();
        // The first and the last millisecond of a span: the extremes of how long it is kept.
        for offset in [0, span - 1] {
            let mut filter = filter(window, g, 100, 0.01, 2);
            let t = filter.current_start_ms() + span + offset;
            add_at(&mut filter, b"x", t).unwrap();
            filter.rotate(t + window);
            assert!(filter.contains(b"x"), "{window}/{g}: kept for the window");
            let forgotten = t + window + window / u64::from(g) + 1;
            assert!(!filter.contains_at(b"x", forgotten), "{window}/{g}: forgotten after W(1 + 1/g)");
            filter.rotate(forgotten);
            assert_eq!(filter.generations().count(), 0, "{window}/{g}");
        }
    }
}

#[test]
fn items_not_added_for_longer_than_the_window_and_its_slack_answer_as_never_added() {
    for rate in [0.01, 0.001] {
        let mut filter = filter(1000, 4, 20_000, rate, 2);
        // A window of old items, then other items at the same steady rate.
        let old_end = stream(&mut filter, 0, 20_000, T0, 1);
        let last_old_add = old_end - 1;
        stream(&mut filter, 1_000_000, 20_000, old_end, 1);
        let forgotten = last_old_add + 1000 + 1000 / 4 + 1;
        filter.rotate(forgotten);
        assert_eq!(filter.generations().count(), 3, "the new items of the last 1000 ms");
        let found = (0..20_000).filter(|&n| filter.contains(&member(n))).count() as u64;
        assert!(found <= allowed_false_positives(rate, 20_000), "{rate}: {found} old items found");
        // Those added from 1000 ms before on are kept.
        assert!((1_005_000..1_020_000).all(|n| filter.contains(&member(n))), "new items are kept");
    }
}

#[derive(Debug, Clone)]
struct Op {
    advance: u64,
    item: u8,
    add: bool,
    /// How far past `now` a lookup without rotation looks.
    peek: u64,
}

fn ops(window: u64) -> impl Strategy<Value = Vec<Op>> {
    let advance = prop_oneof![4 => 0..=window / 4 + 1, 2 => 0..=window + 2, 1 => 0..=3 * window];
    prop::collection::vec(
        (advance, 0u8..24, any::<bool>(), 0..=window + 1).prop_map(|(advance, item, add, peek)| Op {
            advance,
            item,
            add,
            peek,
        }),
        1..160,
    )
}

fn scenario() -> impl Strategy<Value = (u64, u32, u64, Vec<Op>)> {
    (1u64..=600, 1u32..=8, 0u64..1 << 42).prop_flat_map(|(window, g, start)| {
        let g = g.min(window as u32);
        (Just(window), Just(g), Just(T0 + start), ops(window))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Whatever the interleaving of adds, lookups and rotations: an item whose latest add is
    /// at most a window old is found (after a rotation, and by `contains_at` without one);
    /// one not added for more than W(1 + 1/g) is in no live generation; never more than
    /// g + 1 generations live; an add answers 1 only for an item outside the window.
    #[test]
    fn no_false_negative_within_the_window_and_forgotten_after((window, g, start, ops) in scenario()) {
        let mut filter = WindowFilter::try_new(params(window, g, 64, 0.01, 2), start, UNLIMITED).unwrap();
        let max_live = filter.params().max_live_generations() as usize;
        let mut latest: HashMap<u8, u64> = HashMap::new();
        let mut now = start;
        for op in ops {
            now += op.advance;
            filter.rotate(now);
            prop_assert!(filter.generations().count() <= max_live);
            prop_assert!(filter.generations().all(|generation| generation.start_ms() + filter.params().span_ms() + window > now));
            for (&item, &at) in &latest {
                let age = now - at;
                if age <= window {
                    prop_assert!(filter.contains(&[item]), "item {} aged {} of {}", item, age, window);
                }
                if age * u64::from(g) > window * u64::from(g + 1) {
                    prop_assert!(filter.generations().all(|generation| generation.start_ms() > at), "item {} aged {}", item, age);
                }
                if now + op.peek - at <= window {
                    prop_assert!(filter.contains_at(&[item], now + op.peek));
                }
            }
            if op.add {
                let answer = filter.insert(&[op.item], || UNLIMITED).unwrap();
                if latest.get(&op.item).is_some_and(|&at| now - at <= window) {
                    prop_assert!(!answer, "an item within its window answered new");
                }
                latest.insert(op.item, now);
            }
        }
        let copy = reloaded(&filter);
        prop_assert!(same(&copy, &filter));
        let mut record = record_of(&filter);
        let loaded = WindowFilter::load_rdb(WindowFilter::ENCODING_VERSION, &mut record, UNLIMITED).unwrap();
        prop_assert!(same(&loaded, &filter));
        prop_assert_eq!(loaded.items(), filter.items());
        prop_assert_eq!(loaded.memory_bytes(), filter.memory_bytes());
    }

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

#[test]
fn a_replica_applying_the_masters_rotations_holds_the_same_bits() {
    let mut master = filter(1000, 4, 500, 0.01, 2);
    let mut replica = WindowFilter::decode_header(&master.encode_header(), UNLIMITED).unwrap();
    let mut now = T0;
    for n in 0..5000u64 {
        now += n % 7;
        let rotation = master.rotate(now);
        if rotation.changed() {
            assert!(replica.rotate(now).changed());
        }
        let item = member(n % 1500);
        assert_eq!(master.insert(&item, || UNLIMITED), replica.insert(&item, || UNLIMITED));
    }
    assert!(same(&master, &replica));
}

#[test]
fn the_error_rate_holds_at_ten_times_the_capacity() {
    for (rate, probes) in [(0.01, 200_000u64), (0.001, 600_000)] {
        let mut filter = filter(1000, 4, 2000, rate, 2);
        let end = stream(&mut filter, 0, 20_000, T0, 3);
        // The worst instant: the last millisecond of the last span, every live generation full.
        let worst = end - 1;
        filter.rotate(worst);
        assert_eq!(filter.generations().count(), 5);
        assert!(filter.generations().all(|generation| generation.filter().links().len() >= 3));
        let found = false_positives(&filter, probes, worst);
        assert!(found <= allowed_false_positives(rate, probes), "{rate}: {found} in {probes}");
    }
}

#[test]
fn non_scaling_generations_refuse_past_their_share() {
    let mut filter = filter(1000, 4, 1000, 0.01, 0);
    let start = filter.current_start_ms();
    let mut refused = None;
    for n in 0..1000 {
        if let Err(error) = add_at(&mut filter, &member(n), start) {
            refused = Some((n, error));
            break;
        }
    }
    let (n, error) = refused.unwrap();
    assert_eq!(error, FilterError::Full);
    assert!(n >= filter.params().generation_capacity(), "{n}");
    assert!((0..n).all(|m| filter.contains(&member(m))));
    // An item it holds is no error; the next span takes items again.
    assert_eq!(add_at(&mut filter, &member(0), start), Ok(false));
    assert_eq!(add_at(&mut filter, &member(n), start + 250), Ok(true));
}

#[test]
fn an_item_held_by_an_older_generation_but_refused_by_a_full_current_one_is_an_error() {
    let mut filter = filter(1000, 4, 40, 0.01, 0);
    let start = filter.current_start_ms();
    add_at(&mut filter, b"old", start).unwrap();
    let mut n = 0;
    while add_at(&mut filter, &member(n), start + 250).is_ok() {
        n += 1;
    }
    // Answering 0 would leave its window unrestarted: a false negative later.
    assert_eq!(add_at(&mut filter, b"old", start + 250), Err(FilterError::Full));
}

/// Bits per item of a steady stream of `capacity` items per window, measured at the peak
/// over a window, and the false-positive rate at the worst instant.
fn steady_state(g: u32, rate: f64, expansion: u32, capacity: u64) -> (f64, f64) {
    let window = 1000 * u64::from(g);
    let mut filter =
        WindowFilter::try_new(params(window, g, capacity, rate, expansion), T0, UNLIMITED).unwrap();
    let mut now = stream(&mut filter, 0, capacity, T0, 2);
    let mut peak = 0;
    for n in 0..capacity {
        now = T0 + 2 * window + n * window / capacity;
        add_at(&mut filter, &member(2 * capacity + n), now).unwrap();
        peak = peak.max(filter.bits_bytes());
    }
    assert!(filter.generations().all(|generation| generation.filter().links().len() == 1), "no growth");
    let worst = now - now % 1000 + 999;
    filter.rotate(worst);
    let probes = 200_000;
    (peak as f64 * 8.0 / capacity as f64, false_positives(&filter, probes, worst) as f64 / probes as f64)
}

/// Bits per item of a plain filter of this crate holding `capacity` items.
fn plain(rate: f64, expansion: u32, capacity: u64) -> f64 {
    let mut filter = BloomFilter::try_new(capacity, rate, expansion, UNLIMITED).unwrap();
    for n in 0..capacity {
        filter.insert(&member(n), UNLIMITED).unwrap();
    }
    filter.bits_bytes() as f64 * 8.0 / capacity as f64
}

#[test]
fn steady_state_memory_is_within_twice_a_plain_filter() {
    for rate in [0.01, 0.001] {
        let (bits, measured_rate) = steady_state(DEFAULT_GENERATIONS, rate, 2, 20_000);
        let ratio = bits / plain(rate, 2, 20_000);
        assert!(ratio <= 2.0, "{rate}: {bits} bits per item, {ratio} times a plain filter");
        assert!(measured_rate <= rate, "{rate}: measured {measured_rate}");
    }
}

/// The table of the module documentation.
#[test]
#[ignore = "a measurement: prints the memory table"]
fn memory_table() {
    let capacity = 100_000;
    println!("| rate | g | bits/item | × plain scaling | × plain non-scaling | measured rate |");
    println!("|---|---|---|---|---|---|");
    for rate in [0.01, 0.001] {
        let scaling = plain(rate, 2, capacity);
        let non_scaling = plain(rate, 0, capacity);
        for g in [1, 2, 3, 4, 5, 6, 8, 12, 16] {
            let (bits, measured) = steady_state(g, rate, 2, capacity);
            println!(
                "| {rate} | {g} | {bits:.1} | {:.2} | {:.2} | {measured:.5} |",
                bits / scaling,
                bits / non_scaling
            );
        }
        println!("| {rate} | plain | {scaling:.1} (scaling), {non_scaling:.1} (non-scaling) | | | |");
    }
}

#[test]
fn the_cardinality_counts_each_item_once_in_the_window() {
    let mut filter = filter(1000, 4, 5000, 0.01, 2);
    let mut now = filter.current_start_ms();
    // The same 1000 items in every span: the window holds 1000 items, not 1000 per span.
    for _ in 0..12 {
        for n in 0..1000 {
            add_at(&mut filter, &member(n), now).unwrap();
        }
        now += 250;
    }
    let items = filter.items();
    assert!((980..=1000).contains(&items), "{items}");
    filter.rotate(now + 1000);
    assert!(filter.items() <= 1000);
    filter.rotate(now + 2000);
    assert_eq!(filter.items(), 0);
}

#[test]
fn batches_answer_as_single_items_do() {
    let mut filter = filter(1000, 4, 500, 0.01, 2);
    let start = filter.current_start_ms();
    stream(&mut filter, 0, 500, start, 2);
    let now = start + 2000;
    filter.rotate(now);
    let items: Vec<Vec<u8>> = (0..1500).map(member).collect();
    let mut batch = Vec::new();
    filter.contains_each(items.iter().map(Vec::as_slice), Some(now), |found| batch.push(found));
    let single: Vec<bool> = items.iter().map(|item| filter.contains_at(item, now)).collect();
    assert_eq!(batch, single);
    let mut batch = Vec::new();
    filter.contains_each(items.iter().map(Vec::as_slice), None, |found| batch.push(found));
    assert_eq!(batch, items.iter().map(|item| filter.contains(item)).collect::<Vec<_>>());

    let mut copy = filter.try_clone().unwrap();
    let mut answers = Vec::new();
    filter.insert_each(items.iter().map(Vec::as_slice), || UNLIMITED, |answer| answers.push(answer));
    let single: Vec<_> = items.iter().map(|item| copy.insert(item, || UNLIMITED)).collect();
    assert_eq!(answers, single);
    assert!(same(&filter, &copy));
}

#[test]
fn a_batch_stops_at_the_first_refusal() {
    let mut filter = filter(1000, 4, 8, 0.01, 0);
    let items: Vec<Vec<u8>> = (0..100).map(member).collect();
    let mut answers = Vec::new();
    filter.insert_each(items.iter().map(Vec::as_slice), || UNLIMITED, |answer| answers.push(answer));
    assert_eq!(answers.last(), Some(&Err(FilterError::Full)));
    assert!(answers.len() < 100);
}

#[test]
fn the_budget_is_checked_before_allocating() {
    let p = params(1000, 4, 100_000, 0.01, 2);
    let layout = Layout::for_capacity(p.generation_capacity(), p.first_link_error_rate()).unwrap();
    let steady = (layout.bits() / 8) as usize * 5;
    assert_eq!(WindowFilter::try_new(p, T0, steady - 1).err(), Some(FilterError::TooLarge));
    let mut filter = WindowFilter::try_new(p, T0, steady).unwrap();
    assert_eq!(filter.bits_bytes(), 0, "generations are opened by their first add");

    // Room for two generations only: the third span's first add is refused.
    let budget = (layout.bits() / 8) as usize * 2;
    let start = filter.current_start_ms();
    for (span, expected) in [(0, Ok(true)), (1, Ok(true)), (2, Err(FilterError::TooLarge))] {
        assert_eq!(filter.rotate(start + span * 250).changed(), span > 0);
        assert_eq!(filter.insert(&member(span), || budget), expected);
    }
    assert!(filter.bits_bytes() <= budget);

    // A generation that would grow past the budget is refused too.
    let one = (layout.bits() / 8) as usize;
    let mut filter = WindowFilter::try_new(p, T0, steady).unwrap();
    let refused = (0..200_000).map(|n| filter.insert(&member(n), || one)).find(Result::is_err);
    assert_eq!(refused, Some(Err(FilterError::TooLarge)));
    assert_eq!(filter.bits_bytes(), one);
}

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
    assert!(malformed(&patched(&header, 4, &[2])));
    assert!(malformed(&patched(&header, 5, &[1])));
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
    assert!(malformed(&patched(&header, COUNT_AT, &6u32.to_le_bytes())));
    assert!(malformed(&patched(&header, COUNT_AT, &4u32.to_le_bytes())));
    assert!(malformed(&patched(&header, COUNT_AT, &u32::MAX.to_le_bytes())));

    let first_start = filter.generations().next().unwrap().start_ms();
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
    assert!(WindowFilter::load_rdb(2, &mut record.clone(), UNLIMITED).is_err());

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
    plain_header.0[0] = RecordValue::Bytes(crate::bloom::encoding::encode_header(
        filter.generations().next().unwrap().filter(),
    ));
    assert!(matches!(load(plain_header).err(), Some(DecodeError::Malformed(_))));
}

/// Lookup and add times against a plain filter holding one window's items, in memory larger
/// than the caches.
#[test]
#[ignore = "a measurement: prints lookup and add times"]
fn lookup_speed() {
    use std::hint::black_box;
    use std::time::Instant;
    for rate in [0.01, 0.001] {
        let capacity = 4_000_000;
        let mut plain = BloomFilter::try_new(capacity, rate, 2, UNLIMITED).unwrap();
        for n in 0..2 * capacity {
            plain.insert(&member(n), UNLIMITED).unwrap();
        }
        let mut window = WindowFilter::try_new(params(4000, 4, capacity, rate, 2), T0, UNLIMITED).unwrap();
        let now = stream(&mut window, 0, capacity, T0, 2) - 1;
        let absent: Vec<Vec<u8>> = (0..1_000_000).map(|n| format!("absent:{n}").into_bytes()).collect();
        let present: Vec<Vec<u8>> = (0..1_000_000).map(|n| member(capacity + n * 3)).collect();
        let fresh: Vec<Vec<u8>> = (0..1_000_000).map(|n| format!("fresh:{n}").into_bytes()).collect();
        let time = |what: &str, run: &mut dyn FnMut(&[u8]) -> bool, items: &[Vec<u8>]| {
            let started = Instant::now();
            let found = items.iter().filter(|item| run(item)).count();
            let nanos = started.elapsed().as_nanos() as f64 / items.len() as f64;
            println!("{rate} {what}: {nanos:.0} ns ({found} found)");
        };
        time("plain absent", &mut |item| black_box(plain.contains(item)), &absent);
        time("window absent", &mut |item| black_box(window.contains_at(item, now)), &absent);
        time("plain present", &mut |item| black_box(plain.contains(item)), &present);
        time("window present", &mut |item| black_box(window.contains_at(item, now)), &present);
        time("plain add", &mut |item| plain.insert(item, UNLIMITED).unwrap(), &fresh);
        time("window add", &mut |item| window.insert(item, || UNLIMITED).unwrap(), &fresh);
        println!("{rate} bytes: plain {} window {}", plain.bits_bytes(), window.bits_bytes());
    }
}
