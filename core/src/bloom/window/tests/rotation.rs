//! The window's promise on a clock the tests drive: spans cut on a grid, rotations that drop what
//! expired, an item found a whole window after its latest add and forgotten a span later.

use super::*;
use proptest::prelude::*;
use std::collections::HashMap;

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
}

#[test]
fn spans_cover_the_window_with_at_most_g_plus_one_generations() {
    let p = params(1000, 4, 10_000, 0.01, 2);
    assert_eq!((p.span_ms(), p.max_live_generations()), (250, 5));
    assert_eq!(p.generation_capacity(), 2657, "a quarter of 10,000 and a sixteenth more");
    assert_eq!(p.generation_error_rate(), 0.01 / 5.0);
    assert_eq!(p.base_error_rate(), 0.01 / 5.0 * BASE_SHARE_OF_RATE);
    assert_eq!(p.base_error_rate() + p.overflow_error_rate(), p.generation_error_rate());
    assert_eq!(params(1000, 4, 10_000, 0.01, 0).base_error_rate(), 0.002);
    assert_eq!(p.overflow_capacity(), 2657);
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
    assert!(!filter.rotate(start + 249).changed());

    let rotation = filter.rotate(start + 250);
    assert!(rotation.advanced && rotation.dropped.is_empty());
    assert_eq!(filter.current_start_ms(), start + 250);
    assert_eq!(filter.next_rotation_ms(), Some(start + 1250), "the first generation expires");
    assert!(filter.contains(b"a"));

    // Spans with no adds have no generation.
    assert_eq!(add_at(&mut filter, b"b", start + 1100), Ok(true));
    let starts: Vec<u64> = filter.generations().map(|generation| generation.start_ms).collect();
    assert_eq!(starts, [start, start + 1000]);

    let rotation = filter.rotate(start + 1250);
    assert_eq!(rotation.dropped.iter().map(|generation| generation.start_ms).collect::<Vec<_>>(), [start]);
    assert!(!filter.contains(b"a") && filter.contains(b"b"));
}

#[test]
fn after_an_idle_time_longer_than_the_window_everything_is_dropped() {
    let mut filter = filter(1000, 4, 1000, 0.01, 2);
    let end = stream(&mut filter, 0, 1000, T0, 2);
    assert_eq!(filter.generations().count(), 5);
    let held = filter.memory_bytes();

    let later = end + 1000 + 250;
    assert!(filter.next_rotation_ms().is_some_and(|next| next <= later));
    let rotation = filter.rotate(later);
    assert_eq!(rotation.dropped.len(), 5);
    let freed: usize = rotation.dropped.iter().map(|generation| generation.value.memory_bytes()).sum();
    let room = 4 * std::mem::size_of::<crate::window::Stamped<Generation>>();
    assert_eq!(freed + room, held - filter.memory_bytes(), "the generations and their room");
    let new = super::filter(1000, 4, 1000, 0.01, 2);
    assert_eq!(filter.memory_bytes(), new.memory_bytes(), "what a new filter takes");
    assert_eq!(filter.generations().count(), 0);
    let idle = (filter.items(), filter.bits_bytes(), filter.next_rotation_ms());
    assert_eq!(idle, (0, 0, None), "an idle key needs no more rotations");
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
fn items_read_by_the_clock_leave_out_expired_generations_before_the_rotation() {
    let mut filter = filter(1000, 4, 1000, 0.01, 2);
    let t = filter.current_start_ms() + 3;
    add_at(&mut filter, b"x", t).unwrap();
    add_at(&mut filter, b"y", t + 300).unwrap();
    assert_eq!(filter.items_at(Some(t + 300)), 2);
    // x's generation expires first; no rotation has dropped it.
    let x_gone = t + 1000 + 250;
    assert!(!filter.contains_at(b"x", x_gone) && filter.contains_at(b"y", x_gone));
    assert_eq!((filter.items_at(Some(x_gone)), filter.items_at(None), filter.items()), (1, 2, 2));
    assert_eq!(filter.items_at(Some(x_gone + 1000)), 0);
    filter.rotate(x_gone);
    assert_eq!((filter.items_at(None), filter.items()), (1, 1), "as the rotation leaves it");
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
            prop_assert!(filter.totals_hold(), "sums kept through a rotation");
            prop_assert!(filter.generations().count() <= max_live);
            prop_assert!(filter.generations().all(|generation| generation.start_ms + filter.params().span_ms() + window > now));
            for (&item, &at) in &latest {
                let age = now - at;
                if age <= window {
                    prop_assert!(filter.contains(&[item]), "item {} aged {} of {}", item, age, window);
                }
                if age * u64::from(g) > window * u64::from(g + 1) {
                    prop_assert!(filter.generations().all(|generation| generation.start_ms > at), "item {} aged {}", item, age);
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
                prop_assert!(filter.totals_hold(), "sums kept through an add");
            }
        }
        let copy = reloaded(&filter);
        prop_assert!(same(&copy, &filter));
        prop_assert!(copy.totals_hold() && filter.try_clone().unwrap().totals_hold());
        let mut record = record_of(&filter);
        let loaded = WindowFilter::load_rdb(WindowFilter::ENCODING_VERSION, &mut record, UNLIMITED).unwrap();
        prop_assert!(same(&loaded, &filter));
        prop_assert!(loaded.totals_hold());
        prop_assert_eq!(loaded.items(), filter.items());
        prop_assert_eq!(loaded.memory_bytes(), filter.memory_bytes());
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

/// What the module asks before rotating for a write: whether a rotation would change anything,
/// told without one, at every step of a stream with idle times.
#[test]
fn whether_a_rotation_changes_anything_is_told_without_one() {
    let mut filter = filter(1000, 4, 100, 0.01, 2);
    let mut now = filter.current_start_ms();
    for step in [0, 1, 249, 1, 250, 3, 999, 1251, 7, 5000, 1, 1, 260] {
        now += step;
        let told = filter.rotates_at(now);
        assert_eq!(told, filter.rotate(now).changed(), "at {now}");
        filter.insert(&member(now), || UNLIMITED).unwrap();
    }
    assert!(!filter.rotates_at(now - 300), "a clock set back changes nothing");
}

/// An add refused for memory after its overflow opened, or before: the kept sums still are
/// the generations'.
#[test]
fn sums_are_kept_through_adds_refused_for_memory() {
    let mut filter = filter(1000, 4, 100, 0.01, 2);
    let now = filter.current_start_ms();
    filter.rotate(now);
    let budget = filter.params().max_live_generations() as usize * 200;
    let mut refused = 0;
    for n in 0..2000u64 {
        if filter.insert(&member(n), || budget).is_err() {
            refused += 1;
        }
        assert!(filter.totals_hold(), "after add {n}");
    }
    assert!(refused > 0, "the budget was reached");
}

/// What the adds the links took tells apart: an add of an item the current generation holds
/// changes nothing; one of an item only an older generation holds answers 0 and changes the
/// filter (the current generation takes it).
#[test]
fn the_links_take_a_renewed_item_and_not_a_held_one() {
    let mut filter = filter(1000, 4, 1000, 0.01, 2);
    assert_eq!(add_at(&mut filter, b"a", T0), Ok(true));
    let took = filter.links_took();
    assert_eq!((add_at(&mut filter, b"a", T0 + 10), filter.links_took()), (Ok(false), took));
    assert_eq!(add_at(&mut filter, b"a", T0 + 300), Ok(false));
    assert_eq!(filter.links_took(), took + 1, "the new span's generation took it");
    assert_eq!((add_at(&mut filter, b"a", T0 + 310), filter.links_took()), (Ok(false), took + 1));
}
