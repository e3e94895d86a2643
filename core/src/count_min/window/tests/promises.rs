//! What a windowed count promises, and the running total against a naive model.

use super::*;
use proptest::prelude::*;

/// An increment is counted for a whole window after it, read with or without a rotation,
/// and gone by `window (1 + 1/g)`.
#[test]
fn an_increment_is_counted_for_the_window_and_forgotten_after() {
    for (window, generations) in [(1000, 4), (1000, 3), (10, 4), (7, 7), (1000, 1)] {
        let schedule = Schedule::new(window, generations).unwrap();
        let forgotten_after = window + schedule.span_ms();
        for written_at in [0, 1, 249, 250, 251, 333, 999, 5000] {
            let mut sketch = windowed(1000, 3, CellSize::Four, window, generations);
            let written_at = written_at + 100_000;
            assert_eq!(add_at(&mut sketch, written_at, b"item", 3), 3);
            for now in written_at..written_at + forgotten_after + 5 {
                let expected = if now <= written_at + window {
                    Some(3)
                } else if now >= written_at + forgotten_after {
                    Some(0)
                } else {
                    None
                };
                let unrotated = query(&sketch, b"item", Some(now));
                let mut rotated = sketch.try_clone().unwrap();
                rotated.rotate(now);
                let after = query(&rotated, b"item", None);
                assert_eq!(unrotated, after, "{window}/{generations} at {written_at}, read at {now}");
                assert_eq!(rotated.count(None), after);
                if let Some(expected) = expected {
                    assert_eq!(after, expected, "{window}/{generations} at {written_at}, read at {now}");
                }
            }
        }
    }
}

/// Past the latest time a record may hold (a hostile `CMS.ROTATE`'s), a read answers as after
/// a rotation to the same time: time stops at `MAX_TIME_MS` for both, and the sketch there
/// saves a record that loads.
#[test]
fn reads_and_rotations_past_the_latest_time_agree_and_save() {
    let latest = crate::window::MAX_TIME_MS;
    for now in [latest - 1, latest, latest + 1, latest + 5_000, u64::MAX] {
        // Spans of a second: "old" expires before the latest time, "item" after it, and a
        // later span's write leaves "item" in an older generation.
        let mut sketch = windowed(1000, 3, CellSize::Four, 4000, 4);
        add_at(&mut sketch, latest - 5_000, b"old", 2);
        add_at(&mut sketch, latest - 2_000, b"item", 3);
        add_at(&mut sketch, latest - 1_000, b"new", 1);
        let unrotated = (query(&sketch, b"item", Some(now)), query(&sketch, b"old", Some(now)));
        sketch.rotate(now);
        assert_eq!(unrotated, (query(&sketch, b"item", None), query(&sketch, b"old", None)), "at {now}");
        assert_eq!(unrotated, (3, 0), "at {now}");
        assert!(load(&record_of(&sketch), usize::MAX).is_ok(), "at {now}");
    }
}

#[test]
fn negative_increments_are_refused_with_nothing_changed() {
    let mut sketch = windowed(100, 3, CellSize::Four, 1000, 4);
    add_at(&mut sketch, 10, b"a", 5);
    let before = record_of(&sketch);
    assert!(matches!(sketch.increment(b"a", -1), Err(WriteError::Negative)));
    let refused = sketch.increment_all(&[(b"b", 1), (b"a", -1)], |_| panic!("nothing is counted"));
    assert_eq!(refused, Err(WriteError::Negative));
    assert_eq!(record_of(&sketch), before);
    assert_eq!(sketch.increment(b"a", 0), Ok(Ok(5)));
}

#[test]
fn the_window_keeps_the_plain_overflow_rules() {
    let mut sketch = windowed(100, 3, CellSize::One, 1000, 4);
    assert_eq!(add_at(&mut sketch, 0, b"a", 200), 200);
    // Another span's increment counts in the same total counters.
    sketch.rotate(300);
    assert_eq!(sketch.increment(b"a", 100), Ok(Err(crate::count_min::IncrementError::Overflow)));
    assert_eq!(sketch.increment(b"a", 55), Ok(Ok(255)));
    // Once the first span expires, its 200 leave and there is room again.
    sketch.rotate(1250);
    assert_eq!(query(&sketch, b"a", None), 55);
    assert_eq!(sketch.increment(b"a", 200), Ok(Ok(255)));
}

/// A steady stream holds at most `window / span + 1` sketches, the total among them, and one
/// once the window holds nothing.
#[test]
fn memory_stays_within_the_live_generations() {
    for (window, generations) in [(1000, 4), (1000, 3), (1000, 1), (100, 64), (1000, 7)] {
        let schedule = Schedule::new(window, generations).unwrap();
        let most = schedule.max_live_generations() as usize;
        let mut sketch = windowed(64, 2, CellSize::Four, window, generations);
        let plain = sketch.total.memory_bytes();
        let mut peak = 0;
        for now in 0..10 * window {
            add_at(&mut sketch, now, b"x", 1);
            peak = peak.max(sketch.sketch_count());
            assert!(
                sketch.sketch_count() <= most,
                "{window}/{generations} at {now}: {}",
                sketch.sketch_count()
            );
            assert!(sketch.memory_bytes() <= most * plain + 512);
        }
        assert_eq!(peak, most, "{window}/{generations}");
        sketch.rotate(100 * window);
        assert_eq!(sketch.sketch_count(), 1);
        assert_eq!((sketch.count(None), query(&sketch, b"x", None)), (0, 0));
    }
}

/// A closing span's counts are the running total less the closed spans, counter by counter
/// and in the count, stopping at 0 (parts above the total included): the stepped pass
/// against the counters taken one at a time, at every cell size, within one step and across
/// several.
#[test]
fn a_closing_span_holds_the_total_less_the_closed_spans() {
    let counters = |sketch: &CountMinSketch| -> Vec<u64> {
        let bytes = sketch.cell_size().bytes();
        sketch
            .counter_bytes()
            .chunks_exact(bytes)
            .map(|cell| cell.iter().rev().fold(0, |value, &byte| value << 8 | u64::from(byte)))
            .collect()
    };
    for cell_size in [CellSize::One, CellSize::Two, CellSize::Four, CellSize::Eight] {
        for width in [1, 7, 4_000] {
            let filled = |seed: u64, adds: u64| {
                let mut sketch = CountMinSketch::new(width, 3, cell_size, BUDGET).unwrap();
                for n in 0..adds {
                    // Past a cell's range an increment is refused whole: the sketch stays valid.
                    let _ = sketch.increment(format!("{seed}:{}", n % 700).as_bytes(), 1 + (n % 3) as i64);
                }
                sketch
            };
            let total = filled(1, 30_000);
            let parts = [filled(1, 9_000), filled(2, 14_000), filled(3, 50)];
            let mut target = filled(4, 100);
            super::super::cells::difference_into(&mut target, &total, &parts.iter());
            let (total_counters, part_counters) = (counters(&total), parts.each_ref().map(counters));
            let expected: Vec<u64> = (0..total_counters.len())
                .map(|at| {
                    part_counters.iter().fold(total_counters[at], |left, part| left.saturating_sub(part[at]))
                })
                .collect();
            let wrong = counters(&target).iter().zip(&expected).position(|(held, wanted)| held != wanted);
            assert_eq!(wrong, None, "first wrong counter, {cell_size:?}, width {width}");
            let count = parts.iter().fold(total.count(), |left, part| left.saturating_sub(part.count()));
            assert_eq!(target.count(), count);
            if width == 4_000 {
                let stopped = (0..expected.len())
                    .any(|at| part_counters.iter().map(|part| part[at]).sum::<u64>() > total_counters[at]);
                assert!(stopped && expected.iter().any(|&left| left > 0), "both cases covered");
            }
        }
    }
}

#[derive(Debug, Clone)]
enum Step {
    /// Time moves on by this many milliseconds, then a write of (item, increment) pairs.
    Write(u64, Vec<(u8, i64)>),
    /// Time moves on, and the timer rotates.
    Rotate(u64),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let write = (0u64..400, proptest::collection::vec((0u8..30, 0i64..50), 1..6))
        .prop_map(|(dt, pairs)| Step::Write(dt, pairs));
    let rotate = (0u64..600).prop_map(Step::Rotate);
    proptest::collection::vec(prop_oneof![3 => write, 1 => rotate], 1..60)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The total equals, counter for counter, the sum of per-span plain sketches that a naive
    /// model keeps and drops on time; reads without a rotation answer as after one; a record
    /// saved at any step loads into a sketch that goes on identically.
    #[test]
    fn the_running_total_is_the_sum_of_the_live_spans(
        steps in steps(),
        window in 50u64..1500,
        generations in 1u32..9,
        width in 1u64..40,
        depth in 1u64..4,
    ) {
        let schedule = Schedule::new(window, generations).unwrap();
        let mut sketch = WindowedCountMin::new(width, depth, CellSize::Two, schedule, BUDGET).unwrap();
        let mut naive: Vec<(u64, CountMinSketch)> = Vec::new();
        let mut reloaded: Option<WindowedCountMin> = None;
        let mut now = 1_000_000u64;
        let items: Vec<[u8; 1]> = (0u8..30).map(|item| [item]).collect();
        for (n, step) in steps.iter().enumerate() {
            let dt = match step { Step::Write(dt, _) | Step::Rotate(dt) => *dt };
            now += dt;
            naive.retain(|(start, _)| schedule.expiry_ms(*start) > now);
            let live: Vec<&CountMinSketch> = naive.iter().map(|(_, counts)| counts).collect();
            let expected = sum_of(&sketch.total, &live);
            for item in &items {
                prop_assert_eq!(query(&sketch, item, Some(now)), expected.query(item));
            }
            prop_assert_eq!(sketch.count(Some(now)), expected.count());
            for copy in std::iter::once(&mut sketch).chain(reloaded.as_mut()) {
                copy.rotate(now);
            }
            prop_assert_eq!(sketch.total.counter_bytes(), expected.counter_bytes());
            prop_assert_eq!(sketch.total.count(), expected.count());
            prop_assert!(sketch.sketch_count() <= schedule.max_live_generations() as usize);
            if let Step::Write(_, pairs) = step {
                let start = schedule.span_start(now);
                if naive.last().is_none_or(|(last, _)| *last != start) {
                    naive.push((start, sketch.total.try_empty_like().unwrap()));
                }
                let pairs: Vec<(&[u8], i64)> = pairs.iter().map(|(item, by)| (&items[usize::from(*item)][..], *by)).collect();
                for copy in std::iter::once(&mut sketch).chain(reloaded.as_mut()) {
                    copy.increment_all(&pairs, |_| {}).unwrap();
                }
                if let Some((_, counts)) = naive.last_mut() {
                    counts.increment_all(&pairs, |_| {});
                }
            }
            if n % 7 == 3 {
                let record = record_of(&sketch);
                let loaded = load(&record, BUDGET).unwrap();
                prop_assert_eq!(record_of(&loaded), record);
                prop_assert_eq!(loaded.memory_bytes(), sketch.memory_bytes());
                reloaded = Some(loaded);
            }
            if let Some(reloaded) = &reloaded {
                prop_assert_eq!(record_of(reloaded), record_of(&sketch));
                prop_assert_eq!(reloaded.memory_bytes(), sketch.memory_bytes());
            }
        }
    }
}
