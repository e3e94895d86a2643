use super::*;
use crate::bytes::AllocationFailed;
use crate::decode::{DecodeError, RdbSink, RdbSource, Record, RecordValue};

/// A window of 1000 ms in four spans of 250.
fn generations() -> Generations<u32> {
    Generations::new(Schedule::new(1000, 4).unwrap())
}

/// Writes `value` at `at_ms`, rotating first as a master does.
fn write(generations: &mut Generations<u32>, at_ms: u64, value: u32) {
    generations.rotate(at_ms);
    *generations.current_or_open(|| Ok::<u32, AllocationFailed>(0)).unwrap() += value;
}

fn counted(generations: &Generations<u32>, now_ms: Option<u64>) -> u32 {
    generations.live(now_ms).map(|generation| generation.value).sum()
}

#[test]
fn the_schedule_checks_and_derives() {
    assert_eq!(Schedule::new(0, 1), Err(ScheduleError::Window));
    assert_eq!(Schedule::new(MAX_WINDOW_MS + 1, 1), Err(ScheduleError::Window));
    assert_eq!(Schedule::new(3, 4), Err(ScheduleError::Generations));
    assert_eq!(Schedule::new(1000, 0), Err(ScheduleError::Generations));
    assert_eq!(Schedule::new(1000, MAX_GENERATIONS + 1), Err(ScheduleError::Generations));
    let schedule = Schedule::new(1000, 3).unwrap();
    assert_eq!((schedule.span_ms(), schedule.max_live_generations()), (334, 4));
    assert_eq!((schedule.span_start(1001), schedule.expiry_ms(668)), (668, 2002));
    assert!(window_in_range(1) && !window_in_range(0) && !window_in_range(-5));
    assert!(window_in_range(1 << 40) && !window_in_range((1 << 40) + 1));
    assert!(generations_in_range(64) && !generations_in_range(65) && !generations_in_range(0));
}

/// Every write is counted for a whole window after it and gone by `window (1 + 1/g)`, read at
/// any time with or without a rotation; never more than `g + 1` generations are alive.
#[test]
fn writes_are_kept_for_the_window_and_forgotten_after() {
    for step in [1, 7, 60, 249, 250, 251, 999] {
        let mut generations = generations();
        let mut written = Vec::new();
        let mut at = 5_000;
        while at < 12_000 {
            write(&mut generations, at, 1);
            written.push(at);
            at += step;
            for now in [at, at + 3] {
                let in_window = written.iter().filter(|&&t| now - t <= 1000).count() as u32;
                let within_slack = written.iter().filter(|&&t| now - t < 1250).count() as u32;
                let read = counted(&generations, Some(now));
                assert!(read >= in_window && read <= within_slack, "step {step} now {now}: {read}");
            }
            assert!(generations.iter().count() <= 5);
        }
    }
}

/// Room for older generations is held only while a generation is: a new value and an idle one
/// whose generations all expired (or were cleared) cost no room, and a value that holds one
/// has room for every older generation there can be, its copy and its reload too.
#[test]
fn room_is_held_only_while_a_generation_is() {
    let room = 4 * std::mem::size_of::<Stamped<u32>>();
    let mut generations = generations();
    assert_eq!(generations.room_bytes(), 0);
    write(&mut generations, 1_000, 1);
    assert_eq!(generations.room_bytes(), room);
    for at in [1_300, 1_600, 1_900, 2_200] {
        write(&mut generations, at, 1);
        assert_eq!(generations.room_bytes(), room, "at {at}");
    }
    let copy = generations.try_map(|&value| Ok::<u32, AllocationFailed>(value)).unwrap();
    assert_eq!((copy.room_bytes(), copy.iter().count()), (room, 5));
    assert_eq!(load(&mut saved(&generations)).unwrap().room_bytes(), room);
    generations.rotate(3_249);
    assert_eq!(generations.room_bytes(), room, "the newest generation is alive until 3,250");
    generations.rotate(3_250);
    assert_eq!((generations.iter().count(), generations.room_bytes()), (0, 0));
    assert_eq!(generations.try_map(|&value| Ok::<u32, AllocationFailed>(value)).unwrap().room_bytes(), 0);
    assert_eq!(load(&mut saved(&generations)).unwrap().room_bytes(), 0);
    write(&mut generations, 3_500, 1);
    assert_eq!(generations.room_bytes(), room);
    generations.clear();
    assert_eq!(generations.room_bytes(), 0);
}

#[test]
fn rotations_close_drop_and_report_only_changes() {
    let mut generations = generations();
    assert!(generations.rotate(1_000).changed());
    assert!(!generations.rotate(1_100).changed());
    write(&mut generations, 1_100, 2);
    assert_eq!(generations.next_rotation_ms(), Some(1_250));
    assert!(!generations.needs_rotation(1_249) && generations.needs_rotation(1_250));
    let rotation = generations.rotate(1_250);
    assert!(rotation.advanced && rotation.dropped.is_empty());
    assert_eq!(generations.next_rotation_ms(), Some(2_250));
    assert!(generations.holds_expired(2_250) && !generations.holds_expired(2_249));
    let rotation = generations.rotate(2_250);
    assert_eq!(rotation.dropped, vec![Stamped { start_ms: 1_000, value: 2 }]);
    assert_eq!(generations.next_rotation_ms(), None);
    // A clock set back moves nothing.
    assert!(!generations.rotate(10).changed());
    assert_eq!(generations.current_start_ms(), 2_250);
}

#[test]
fn a_long_idle_time_drops_the_current_generation_too() {
    let mut generations = generations();
    write(&mut generations, 1_000, 1);
    let rotation = generations.rotate(100_000);
    assert_eq!(rotation.dropped.len(), 1);
    assert_eq!(generations.iter().count(), 0);
}

fn saved(generations: &Generations<u32>) -> Record {
    let mut record = Record(std::collections::VecDeque::default());
    generations.save(&mut record, |value, sink| RdbSink::unsigned(sink, u64::from(*value)));
    record
}

fn load(record: &mut Record) -> Result<Generations<u32>, DecodeError> {
    Generations::load(record, |source| Ok(RdbSource::unsigned(source)? as u32))
}

#[test]
fn the_record_loads_back_and_hostile_times_are_refused() {
    let mut generations = generations();
    for at in [1_000, 1_300, 1_600, 1_700] {
        write(&mut generations, at, 3);
    }
    let loaded = load(&mut saved(&generations)).unwrap();
    assert_eq!(loaded.iter().collect::<Vec<_>>(), generations.iter().collect::<Vec<_>>());
    assert_eq!(loaded.current_start_ms(), 1_500);
    assert!(loaded.current().is_some());

    // Fields: window, generations, current start, count, then (start, payload) pairs.
    let hostile: [(usize, u64); 8] =
        [(0, 0), (1, 0), (1, 2_000), (2, 1_501), (3, 9), (4, 1_001), (6, 1_000), (8, 1_750)];
    for (index, value) in hostile {
        let mut record = saved(&generations);
        record.0[index] = RecordValue::Unsigned(value);
        assert!(load(&mut record).is_err(), "field {index} = {value}");
    }
    let mut expired = saved(&generations);
    expired.0[2] = RecordValue::Unsigned(100_000);
    assert!(load(&mut expired).is_err());
    // A current span beyond any clock, on the grid, with nothing in it.
    let empty = saved(&Generations::new(Schedule::new(1000, 4).unwrap()));
    for (start, loads) in [(u64::MAX - u64::MAX % 250, false), (MAX_TIME_MS - MAX_TIME_MS % 250, true)] {
        let mut record = empty.clone();
        record.0[2] = RecordValue::Unsigned(start);
        assert_eq!(load(&mut record).is_ok(), loads, "current span at {start}");
    }
}

/// A rotation to a time no clock reaches (a hostile AOF's or master's `ROTATE`) stops at the
/// latest time a record may hold: the value saves a record that loads. Found by the `sketches`
/// fuzz target, whose windowed t-digest, rotated a third of a long window at a time from a
/// loaded record's late span, saved a record its own load refused.
#[test]
fn a_rotation_beyond_any_clock_leaves_a_value_that_saves_and_loads() {
    let schedule = Schedule::new(1000, 4).unwrap();
    for at in [MAX_TIME_MS - 1, MAX_TIME_MS, MAX_TIME_MS + 1, MAX_TIME_MS + 777, u64::MAX] {
        let mut generations = Generations::new(schedule);
        write(&mut generations, 1_000, 2);
        assert_eq!(generations.rotates_at(at), generations.rotate(at).changed(), "at {at}");
        assert!(generations.current_start_ms() <= MAX_TIME_MS, "at {at}");
        write(&mut generations, at, 1);
        let loaded = load(&mut saved(&generations)).unwrap_or_else(|error| panic!("at {at}: {error:?}"));
        assert_eq!(loaded.current_start_ms(), generations.current_start_ms());
        // Once at the latest time, no later one moves it.
        generations.rotate(u64::MAX);
        assert!(!generations.rotates_at(u64::MAX), "at {at}");
        assert!(load(&mut saved(&generations)).is_ok(), "at {at}");
    }
}

proptest::proptest! {
    /// The check every windowed write makes before it rotates: told without a division, it
    /// answers what the rotation then does, for any schedule, writes and times (clocks set
    /// back included).
    #[test]
    fn rotates_at_tells_whether_a_rotation_changes_anything(
        window_ms in 1u64..5_000,
        generations in 1u32..8,
        steps in proptest::collection::vec((0u64..3_000, proptest::bool::ANY, proptest::bool::ANY), 1..60),
    ) {
        let Ok(schedule) = Schedule::new(window_ms, generations) else { return Ok(()) };
        let mut held = Generations::new(schedule);
        let mut now = 1_000_000u64;
        for (step, back, writes) in steps {
            now = if back { now.saturating_sub(step / 4) } else { now + step };
            let told = held.rotates_at(now);
            proptest::prop_assert_eq!(told, held.rotate(now).changed(), "at {}", now);
            if writes {
                *held.current_or_open(|| Ok::<u32, AllocationFailed>(0)).unwrap() += 1;
            }
        }
    }
}
