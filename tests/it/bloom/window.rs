//! Time-windowed Bloom filters (`BF.RESERVE key rate capacity WINDOW ms`, type `rbBF-wind`)
//! against real servers and real time: the options and their errors, the reply shapes every
//! BF command keeps, items found for a window after their latest add and forgotten after
//! `window (1 + 1/g)`, the error rate under a burst, memory returned while the key is idle,
//! rotations decided by the master and replicated, and persistence that keeps absolute times.
//!
//! Windows are a second or two, and every timed check keeps a few hundred milliseconds from
//! its boundary. A "found" check that a loaded machine ran too late is skipped with a message
//! rather than failed: the promise it checks no longer applies. Keys that must not rotate
//! during a test get a window of a day.

use crate::harness::*;
use redis::{Connection, ProtocolVersion, Value};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const WINDOW_ERROR: &str = "ERR window must be an integer of milliseconds in [1, 1099511627776]";
const GENERATIONS_ERROR: &str =
    "ERR generations must be an integer in [1, 64], at most the window in milliseconds";
const NEEDS_WINDOW: &str = "ERR GENERATIONS needs WINDOW";
const TYPE_NAME: &str = "rbBF-wind";
/// A window no test outlives: generations of six hours on a grid from the epoch, so that
/// nothing rotates while a test runs.
const DAY: &str = "86400000";
/// Kept from every timed boundary.
const MARGIN: Duration = Duration::from_millis(300);

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_millis() as u64)
}

fn sleep_until(at: Instant) {
    let now = Instant::now();
    if at > now {
        std::thread::sleep(at - now);
    }
}

/// Sleeps until `offset_ms` after the start of the next span of `span_ms` on the grid from the
/// epoch that generations are cut on, so that the adds that follow open a generation of their
/// own and the next rotation is a whole span away.
fn wait_for_next_span(span_ms: u64, offset_ms: u64) {
    let now = now_ms();
    let next = now - now % span_ms + span_ms + offset_ms;
    std::thread::sleep(Duration::from_millis(next - now));
}

fn strings(prefix: &str, count: usize) -> Vec<String> {
    (0..count).map(|n| format!("{prefix}{n}")).collect()
}

/// How many of `items` the filter finds.
fn found(con: &mut Connection, key: &str, items: &[String]) -> u64 {
    count_present(con, key, items.iter().cloned())
}

/// How long after its latest add an item is certainly forgotten: `window (1 + 1/g)`, in whole
/// milliseconds.
fn forget_after(window_ms: u64, generations: u64) -> Duration {
    Duration::from_millis(window_ms + window_ms.div_ceil(generations))
}

/// When a batch of adds was sent and answered: its items' age on the server lies between
/// `answered.elapsed()` and `sent.elapsed()`.
#[derive(Clone, Copy)]
struct Added {
    sent: Instant,
    answered: Instant,
}

fn add_batch(con: &mut Connection, key: &str, items: &[String]) -> Added {
    let sent = Instant::now();
    madd_all(con, key, items.iter().cloned());
    Added { sent, answered: Instant::now() }
}

/// Checks that every item is found, when the check certainly ran within `window` of their
/// add; a later check is skipped, saying so.
fn assert_all_found(
    con: &mut Connection,
    key: &str,
    items: &[String],
    added: Added,
    window: Duration,
    what: &str,
) {
    let count = found(con, key, items);
    let age = added.sent.elapsed();
    if age > window {
        eprintln!("{what}: check skipped, it ran up to {age:?} after the add, past {window:?}");
        return;
    }
    assert_eq!(
        count,
        items.len() as u64,
        "{what}: found {count} of {} items at most {age:?} after their add",
        items.len()
    );
}

/// Checks that the items are forgotten, but for a couple of false positives (the filters of
/// these tests are at 0.1%, so 200 items expect 0.2 of them).
fn assert_forgotten(
    con: &mut Connection,
    key: &str,
    items: &[String],
    added: Added,
    bound: Duration,
    what: &str,
) {
    let age = added.answered.elapsed();
    assert!(age > bound, "{what}: the test checks too early ({age:?} after the add, before {bound:?})");
    let count = found(con, key, items);
    assert!(
        count <= 2,
        "{what}: {count} of {} items still found at least {age:?} after their add (forgotten after {bound:?})",
        items.len()
    );
}

fn digests(con: &mut Connection, keys: &[String]) -> Vec<String> {
    keys.iter().map(|key| digest(con, key)).collect()
}

fn bf_bytes(con: &mut Connection) -> i64 {
    info_field(con, "bf", "bf_bytes").and_then(|value| value.parse().ok()).expect("INFO bf has bf_bytes")
}

/// Waits (a span and a second at most, the time the master has to rotate an idle key) until
/// BF.CARD answers 0.
fn wait_for_empty_card(con: &mut Connection, key: &str, span: Duration) {
    let deadline = Instant::now() + span + Duration::from_secs(1) + MARGIN;
    loop {
        let card = int(con, &["BF.CARD", key]);
        if card == 0 {
            return;
        }
        assert!(Instant::now() < deadline, "BF.CARD {key} still answers {card}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn bad_windows_and_generations_are_refused_and_create_nothing() {
    let server = Server::start();
    let mut con = server.connection();
    let mut cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["BF.RESERVE", "k", "0.01", "100", "WINDOW"], WINDOW_ERROR),
        (vec!["BF.RESERVE", "k", "0.01", "100", "WINDOW", "NONSCALING"], WINDOW_ERROR),
        (vec!["BF.INSERT", "k", "WINDOW", "ITEMS", "a"], WINDOW_ERROR),
        (vec!["BF.RESERVE", "k", "0.01", "100", "WINDOW", "1000", "GENERATIONS"], GENERATIONS_ERROR),
        (vec!["BF.RESERVE", "k", "0.01", "100", "WINDOW", "10", "GENERATIONS", "11"], GENERATIONS_ERROR),
        (vec!["BF.RESERVE", "k", "0.01", "100", "WINDOW", "1", "GENERATIONS", "2"], GENERATIONS_ERROR),
        (
            vec!["BF.INSERT", "k", "CAPACITY", "100", "WINDOW", "5", "GENERATIONS", "6", "ITEMS", "a"],
            GENERATIONS_ERROR,
        ),
        (vec!["BF.RESERVE", "k", "0.01", "100", "GENERATIONS", "4"], NEEDS_WINDOW),
        (vec!["BF.RESERVE", "k", "0.01", "100", "GENERATIONS", "4", "NONSCALING"], NEEDS_WINDOW),
        (vec!["BF.INSERT", "k", "GENERATIONS", "4", "ITEMS", "a"], NEEDS_WINDOW),
        (vec!["BF.INSERT", "k", "CAPACITY", "100", "GENERATIONS", "2", "ITEMS", "a"], NEEDS_WINDOW),
    ];
    let bad_windows = [
        "0",
        "-1",
        "-1000",
        "abc",
        "1.5",
        "1e3",
        "",
        "1099511627777",
        "18446744073709551617",
        "99999999999999999999999",
    ];
    for window in bad_windows {
        cases.push((vec!["BF.RESERVE", "k", "0.01", "100", "WINDOW", window], WINDOW_ERROR));
        cases.push((
            vec!["BF.RESERVE", "k", "0.01", "100", "WINDOW", window, "GENERATIONS", "2"],
            WINDOW_ERROR,
        ));
        cases.push((vec!["BF.INSERT", "k", "WINDOW", window, "ITEMS", "a"], WINDOW_ERROR));
    }
    for generations in ["0", "-1", "65", "x", "2.5", "", "18446744073709551616"] {
        cases.push((
            vec!["BF.RESERVE", "k", "0.01", "100", "WINDOW", "1000", "GENERATIONS", generations],
            GENERATIONS_ERROR,
        ));
        cases.push((
            vec!["BF.INSERT", "k", "WINDOW", "1000", "GENERATIONS", generations, "ITEMS", "a"],
            GENERATIONS_ERROR,
        ));
    }
    for (args, expected) in &cases {
        assert_eq!(err(&mut con, args), *expected, "{args:?}");
        assert_eq!(int(&mut con, &["EXISTS", "k"]), 0, "{args:?} created the key");
    }
    assert!(keys(&mut con).is_empty());

    // The bounds themselves are accepted, keywords in any case.
    let accepted: [(&[&str], &str, i64, i64); 5] = [
        (&["BF.RESERVE", "w1", "0.01", "100", "WINDOW", "1", "GENERATIONS", "1"], "w1", 1, 1),
        (&["BF.RESERVE", "wmax", "0.01", "100", "WINDOW", "1099511627776"], "wmax", 1_099_511_627_776, 4),
        (&["BF.RESERVE", "w64", "0.01", "100", "WINDOW", "64", "GENERATIONS", "64"], "w64", 64, 64),
        (&["BF.INSERT", "w10", "WINDOW", "10", "GENERATIONS", "10", "ITEMS", "a"], "w10", 10, 10),
        (
            &["bf.reserve", "lower", "0.01", "100", "window", "1000", "generations", "2", "nonscaling"],
            "lower",
            1000,
            2,
        ),
    ];
    for (args, key, window, generations) in accepted {
        ok(&mut con, args);
        assert_eq!(ok(&mut con, &["TYPE", key]), simple(TYPE_NAME), "{args:?}");
        assert_eq!(
            ok(&mut con, &["BF.INFO", key, "WINDOW"]),
            Value::Array(vec![Value::Int(window)]),
            "{args:?}"
        );
        assert_eq!(
            ok(&mut con, &["BF.INFO", key, "GENERATIONS"]),
            Value::Array(vec![Value::Int(generations)]),
            "{args:?}"
        );
        assert_eq!(int(&mut con, &["BF.ADD", key, "item"]), 1, "{args:?}");
        // A window of a millisecond may have passed already.
        if window >= 1000 {
            assert_eq!(int(&mut con, &["BF.EXISTS", key, "item"]), 1, "{args:?}");
        }
    }
    assert_eq!(err(&mut con, &["BF.RESERVE", "w1", "0.01", "100", "WINDOW", "1000"]), "ERR item exists");
    assert_eq!(err(&mut con, &["BF.RESERVE", "w1", "0.01", "100"]), "ERR item exists");
}

#[test]
#[allow(clippy::too_many_lines)] // one command after another, each checked
fn every_bf_command_serves_a_windowed_filter_as_it_serves_a_plain_one() {
    let server = Server::start();
    for (protocol, mut con) in server.connections() {
        let resp3 = protocol == ProtocolVersion::RESP3;
        let key = format!("w-{protocol:?}");
        ok(
            &mut con,
            &["BF.RESERVE", &key, "0.01", "1000", "WINDOW", DAY, "GENERATIONS", "3", "EXPANSION", "4"],
        );
        assert_eq!(ok(&mut con, &["TYPE", &key]), simple(TYPE_NAME));
        assert!(as_bool(&ok(&mut con, &["BF.ADD", &key, "apple"]), protocol));
        assert!(!as_bool(&ok(&mut con, &["BF.ADD", &key, "apple"]), protocol));
        assert!(as_bool(&ok(&mut con, &["BF.EXISTS", &key, "apple"]), protocol));
        assert!(!as_bool(&ok(&mut con, &["BF.EXISTS", &key, "pear"]), protocol));
        let bools = |reply: Value| -> Vec<bool> {
            let Value::Array(values) = reply else { panic!("expected an array, got {reply:?}") };
            values.iter().map(|value| as_bool(value, protocol)).collect()
        };
        assert_eq!(bools(ok(&mut con, &["BF.MADD", &key, "apple", "pear", "plum"])), [false, true, true]);
        assert_eq!(bools(ok(&mut con, &["BF.MEXISTS", &key, "plum", "kiwi", "apple"])), [true, false, true]);
        assert_eq!(bools(ok(&mut con, &["BF.INSERT", &key, "ITEMS", "fig", "plum"])), [true, false]);
        assert_eq!(int(&mut con, &["BF.CARD", &key]), 4);

        // BF.INFO: the plain five, then Window and Generations.
        let pairs: Vec<(Value, Value)> = match ok(&mut con, &["BF.INFO", &key]) {
            Value::Array(flat) if !resp3 => {
                flat.chunks(2).map(|pair| (pair[0].clone(), pair[1].clone())).collect()
            }
            Value::Map(map) if resp3 => map,
            other => panic!("BF.INFO under {protocol:?}: {other:?}"),
        };
        let labels: Vec<Value> = pairs.iter().map(|(label, _)| label.clone()).collect();
        let expected = [
            "Capacity",
            "Size",
            "Number of filters",
            "Number of items inserted",
            "Expansion rate",
            "Window",
            "Generations",
        ];
        assert_eq!(labels, expected.map(simple).to_vec());
        let values: Vec<&Value> = pairs.iter().map(|(_, value)| value).collect();
        assert_eq!(values[0], &Value::Int(1000), "capacity per window, as reserved");
        assert!(matches!(values[1], Value::Int(size) if *size > 0), "{:?}", values[1]);
        assert!(matches!(values[2], Value::Int(filters) if *filters >= 1), "{:?}", values[2]);
        assert_eq!(&values[3..], [&Value::Int(4), &Value::Int(4), &Value::Int(86_400_000), &Value::Int(3)]);
        for (field, label, value) in [
            ("WINDOW", "Window", 86_400_000),
            ("window", "Window", 86_400_000),
            ("Generations", "Generations", 3),
            ("CAPACITY", "Capacity", 1000),
            ("items", "Number of items inserted", 4),
            ("EXPANSION", "Expansion rate", 4),
        ] {
            let expected = if resp3 {
                Value::Map(vec![(simple(label), Value::Int(value))])
            } else {
                Value::Array(vec![Value::Int(value)])
            };
            assert_eq!(
                ok(&mut con, &["BF.INFO", &key, field]),
                expected,
                "BF.INFO {field} under {protocol:?}"
            );
        }
        assert_eq!(err(&mut con, &["BF.INFO", &key, "bogus"]), "Invalid information value");
        let Value::Array(lines) = ok(&mut con, &["BF.DEBUG", &key]) else { panic!("BF.DEBUG") };
        assert!(!lines.is_empty());
        assert!(int(&mut con, &["MEMORY", "USAGE", &key]) > 0);
    }

    let mut con = server.connection();
    // BF.INSERT creates with its options; GENERATIONS defaults to 4.
    let Value::Array(added) = ok(
        &mut con,
        &[
            "BF.INSERT",
            "ins",
            "CAPACITY",
            "500",
            "ERROR",
            "0.001",
            "WINDOW",
            DAY,
            "EXPANSION",
            "2",
            "ITEMS",
            "a",
            "b",
            "a",
        ],
    ) else {
        panic!("BF.INSERT")
    };
    assert_eq!(added, [Value::Int(1), Value::Int(1), Value::Int(0)]);
    assert_eq!(ok(&mut con, &["TYPE", "ins"]), simple(TYPE_NAME));
    for (field, value) in [("GENERATIONS", 4), ("WINDOW", 86_400_000), ("CAPACITY", 500), ("EXPANSION", 2)] {
        assert_eq!(
            ok(&mut con, &["BF.INFO", "ins", field]),
            Value::Array(vec![Value::Int(value)]),
            "{field}"
        );
    }
    ok(&mut con, &["BF.INSERT", "ns", "WINDOW", DAY, "NONSCALING", "ITEMS", "a"]);
    assert_eq!(ok(&mut con, &["BF.INFO", "ns", "EXPANSION"]), Value::Array(vec![Value::Nil]));
    assert_eq!(err(&mut con, &["BF.INSERT", "nc", "WINDOW", DAY, "NOCREATE", "ITEMS", "a"]), "ERR not found");
    assert_eq!(int(&mut con, &["EXISTS", "nc"]), 0);

    // BF.CARD counts the distinct items of the window.
    ok(&mut con, &["BF.RESERVE", "card", "0.01", "1000", "WINDOW", DAY]);
    let new = madd_all(&mut con, "card", strings("card:", 1000).into_iter());
    assert!(new >= 990, "{new} of 1000 distinct items were new");
    assert_eq!(int(&mut con, &["BF.CARD", "card"]), new as i64);
    madd_all(&mut con, "card", strings("card:", 1000).into_iter());
    assert_eq!(int(&mut con, &["BF.CARD", "card"]), new as i64, "adding items again counts them once");
}

#[test]
fn items_are_found_for_a_window_after_their_latest_add_and_forgotten_after() {
    const WINDOW: u64 = 1500;
    let window = Duration::from_millis(WINDOW);
    let bound = forget_after(WINDOW, 4);
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["BF.RESERVE", "k", "0.001", "1000", "WINDOW", "1500", "GENERATIONS", "4"]);
    // A shorter window cut in two: forgotten after 1.5 windows.
    ok(&mut con, &["BF.RESERVE", "halves", "0.001", "1000", "WINDOW", "1000", "GENERATIONS", "2"]);
    let first = strings("first:", 200);
    let start = add_batch(&mut con, "k", &first);
    let halves = add_batch(&mut con, "halves", &first);
    assert_eq!(int(&mut con, &["BF.ADD", "k", "kept"]), 1);

    sleep_until(start.sent + Duration::from_millis(600));
    assert_all_found(&mut con, "k", &first, start, window.saturating_sub(MARGIN), "k, 600 ms after the add");
    assert_all_found(
        &mut con,
        "halves",
        &first,
        halves,
        Duration::from_secs(1).saturating_sub(MARGIN),
        "halves, 600 ms after",
    );
    // Adding it again answers 0 (a live generation holds it) and starts its window again.
    let again = Added { sent: Instant::now(), answered: Instant::now() };
    assert_eq!(int(&mut con, &["BF.ADD", "k", "kept"]), 0);
    sleep_until(again.sent + Duration::from_millis(700));
    let kept = vec!["kept".to_string()];
    assert_all_found(&mut con, "k", &kept, again, window.saturating_sub(MARGIN), "kept, 700 ms after adding it again");
    let last = Added { sent: Instant::now(), answered: Instant::now() };
    assert_eq!(int(&mut con, &["BF.ADD", "k", "kept"]), 0);

    sleep_until(start.answered + bound + MARGIN);
    assert_forgotten(&mut con, "k", &first, start, bound, "k, past window (1 + 1/4)");
    assert_forgotten(
        &mut con,
        "halves",
        &first,
        halves,
        forget_after(1000, 2),
        "halves, past window (1 + 1/2)",
    );
    assert_all_found(&mut con, "k", &kept, last, window.saturating_sub(MARGIN), "kept, added again within the window");
    let never = strings("never:", 200);
    assert!(found(&mut con, "k", &never) <= 2);
    // Forgotten items are new again, and the window counts them with the one kept.
    let new = madd_all(&mut con, "k", first.iter().cloned());
    assert!(new >= 198, "{new} of 200 forgotten items answered 1 when added again");
    let card = int(&mut con, &["BF.CARD", "k"]);
    assert!((195..=201).contains(&card), "BF.CARD {card}, expected about 201");
}

#[test]
fn the_error_rate_holds_at_ten_times_the_capacity_and_nonscaling_generations_fill() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["BF.RESERVE", "burst", "0.01", "1000", "WINDOW", "3600000"]);
    let members = strings("member:", 10_000);
    let new = madd_all(&mut con, "burst", members.iter().cloned());
    assert!(new >= 9_900, "{new} of 10000 distinct items were new");
    assert_eq!(found(&mut con, "burst", &members), 10_000, "no false negative");
    let outsiders = strings("outsider:", 20_000);
    let false_positives = found(&mut con, "burst", &outsiders);
    assert!(false_positives <= 300, "{false_positives} false positives among 20000 at error rate 0.01");
    let card = int(&mut con, &["BF.CARD", "burst"]);
    assert!((9_900..=10_000).contains(&card), "BF.CARD {card}");

    // NONSCALING: a generation holds its share and then refuses, as a plain filter does. The
    // longest window keeps the whole test in one generation.
    ok(&mut con, &["BF.RESERVE", "fixed", "0.01", "100", "WINDOW", "1099511627776", "NONSCALING"]);
    let items = strings("fixed:", 300);
    let mut args = vec!["BF.MADD", "fixed"];
    args.extend(items.iter().map(String::as_str));
    let Value::Array(replies) = ok(&mut con, &args) else { panic!("BF.MADD") };
    let Some((Value::ServerError(error), accepted)) = replies.split_last() else {
        panic!("300 items into a non-scaling filter of capacity 100 answered {replies:?}")
    };
    assert_eq!(server_error_text(error), "ERR non scaling filter is full");
    assert!(
        (1..=113).contains(&accepted.len()),
        "{} items accepted before the filter was full",
        accepted.len()
    );
    assert!(accepted.iter().all(|reply| matches!(reply, Value::Int(0 | 1))), "{accepted:?}");
    assert_eq!(found(&mut con, "fixed", &items[..accepted.len()]), accepted.len() as u64);
    assert_eq!(err(&mut con, &["BF.ADD", "fixed", "one more"]), "ERR non scaling filter is full");
    assert_eq!(int(&mut con, &["BF.ADD", "fixed", &items[0]]), 0, "a present item is no error");
    let Value::Array(replies) = ok(&mut con, &["BF.INSERT", "fixed", "ITEMS", &items[0], "yet another"])
    else {
        panic!("BF.INSERT")
    };
    assert_eq!(replies.len(), 2);
    assert_eq!(replies[0], Value::Int(0));
    assert!(
        matches!(&replies[1], Value::ServerError(error) if server_error_text(error) == "ERR non scaling filter is full")
    );
}

#[test]
fn memory_of_expired_generations_is_returned_while_the_key_is_idle() {
    const WINDOW: u64 = 1000;
    let span = Duration::from_millis(WINDOW / 4);
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["BF.RESERVE", "idle", "0.01", "100000", "WINDOW", "1000", "GENERATIONS", "4"]);
    let items = strings("idle:", 20_000);
    let added = add_batch(&mut con, "idle", &items);
    let usage = int(&mut con, &["MEMORY", "USAGE", "idle"]);
    let bytes = bf_bytes(&mut con);
    assert!(usage > 20_000 && bytes > 20_000, "MEMORY USAGE {usage}, bf_bytes {bytes} for 20000 items");

    // From here nothing names the key until the memory is back: INFO alone.
    // The generation expires at most a window and a span after the add, and its memory is
    // returned within a span and a second of that.
    let deadline =
        added.answered + Duration::from_millis(WINDOW) + span + span + Duration::from_secs(1) + MARGIN;
    loop {
        let now_bytes = bf_bytes(&mut con);
        if now_bytes < bytes / 10 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "bf_bytes still {now_bytes} (was {bytes}) {:?} after the last add",
            added.answered.elapsed()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("memory returned at most {:?} after the last add", added.sent.elapsed());
    let after = int(&mut con, &["MEMORY", "USAGE", "idle"]);
    assert!(after < usage / 10, "MEMORY USAGE {after}, was {usage}");
    assert_eq!(ok(&mut con, &["TYPE", "idle"]), simple(TYPE_NAME), "the key stays, empty");
    assert_eq!(int(&mut con, &["BF.CARD", "idle"]), 0);
    assert_eq!(found(&mut con, "idle", &items[..1000]), 0);
    assert_eq!(int(&mut con, &["BF.ADD", "idle", "idle:0"]), 1);
    assert_eq!(int(&mut con, &["BF.EXISTS", "idle", "idle:0"]), 1);
}

/// Checks that the replica holds exactly its master's keys: digests read while the master's
/// replication offset stood still (a rotation in between is read again).
fn assert_replica_matches(master: &mut Connection, replica: &mut Connection, keys: &[&str]) {
    for _ in 0..50 {
        let offset = master_offset(master);
        let on_master: Vec<String> = keys.iter().map(|key| digest(master, key)).collect();
        wait_in_sync(master, replica);
        let on_replica: Vec<String> = keys.iter().map(|key| digest(replica, key)).collect();
        if master_offset(master) == offset {
            assert_eq!(on_replica, on_master, "digests of {keys:?} on the replica and the master");
            return;
        }
    }
    panic!("the master's replication offset never stood still");
}

/// The `BF.ROTATE key at_ms` commands of an AOF, in order.
fn rotations(aof: &[u8]) -> Vec<(String, u64)> {
    let text = String::from_utf8_lossy(aof);
    let lines: Vec<&str> = text.split("\r\n").collect();
    let mut list = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        if line.eq_ignore_ascii_case("BF.ROTATE") {
            let key = lines.get(at + 2).map(|key| (*key).to_string()).unwrap_or_default();
            let time = lines.get(at + 4).and_then(|time| time.parse().ok());
            let Some(time) = time else {
                panic!("BF.ROTATE without a time: {:?}", &lines[at..lines.len().min(at + 5)])
            };
            list.push((key, time));
        }
    }
    list
}

fn aof_bytes(server: &Server) -> Vec<u8> {
    let mut files: Vec<_> = std::fs::read_dir(server.dir().join("appendonlydir"))
        .expect("appendonlydir")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.to_string_lossy().ends_with(".aof"))
        .collect();
    files.sort();
    files.iter().flat_map(|path| std::fs::read(path).expect("AOF file")).collect()
}

#[test]
fn a_replica_applies_its_masters_rotations_and_holds_the_same_bits() {
    const WINDOW: u64 = 1500;
    const SPAN: u64 = WINDOW / 4;
    let window = Duration::from_millis(WINDOW);
    let bound = forget_after(WINDOW, 4);
    let started_ms = now_ms();
    let master = Server::start_with(&[], &["--appendonly", "yes", "--appendfsync", "always"]);
    let mut on_master = master.connection();
    ok(&mut on_master, &["BF.RESERVE", "win", "0.001", "1000", "WINDOW", "1500", "GENERATIONS", "4"]);
    ok(&mut on_master, &["BF.RESERVE", "day", "0.01", "1000", "WINDOW", DAY]);
    let batches: Vec<Vec<String>> = (0..3).map(|batch| strings(&format!("batch{batch}:"), 200)).collect();
    let mut added = vec![add_batch(&mut on_master, "win", &batches[0])];
    madd_all(&mut on_master, "day", batches[0].iter().cloned());

    // A full sync, then commands and rotations.
    let replica = Server::start_with(&[], &["--replicaof", "127.0.0.1", &master.port.to_string()]);
    let mut on_replica = replica.connection();
    assert_replica_matches(&mut on_master, &mut on_replica, &["win", "day"]);
    for batch in &batches[1..] {
        std::thread::sleep(Duration::from_millis(400));
        added.push(add_batch(&mut on_master, "win", batch));
        assert_replica_matches(&mut on_master, &mut on_replica, &["win", "day"]);
    }
    let newest = added[2];
    assert_all_found(&mut on_replica, "win", &batches[2], newest, window.saturating_sub(MARGIN), "on the replica");
    assert_all_found(&mut on_master, "win", &batches[2], newest, window.saturating_sub(MARGIN), "on the master");

    // Once every generation expired and the master dropped it, the replica forgets too.
    sleep_until(newest.answered + window + Duration::from_millis(2 * SPAN) + Duration::from_secs(1) + MARGIN);
    assert_replica_matches(&mut on_master, &mut on_replica, &["win", "day"]);
    for (batch, when) in batches.iter().zip(&added) {
        assert_forgotten(&mut on_replica, "win", batch, *when, bound, "on the replica");
        assert_forgotten(&mut on_master, "win", batch, *when, bound, "on the master");
    }
    assert_eq!(int(&mut on_replica, &["BF.CARD", "win"]), 0);
    assert_eq!(int(&mut on_master, &["BF.CARD", "win"]), 0);
    assert_eq!(found(&mut on_replica, "day", &batches[0]), 200);

    // The rotations reached the AOF (and the replica) as BF.ROTATE with the master's times.
    wait_for_rewrite(&mut on_master);
    let rotations = rotations(&aof_bytes(&master));
    let times: Vec<u64> = rotations.iter().filter(|(key, _)| key == "win").map(|(_, time)| *time).collect();
    assert!(times.len() >= 2, "BF.ROTATE in the AOF: {rotations:?}");
    assert!(times.windows(2).all(|pair| pair[0] <= pair[1]), "rotations back in time: {times:?}");
    let now = now_ms();
    assert!(
        times.iter().all(|time| (started_ms.saturating_sub(SPAN)..=now).contains(time)),
        "rotation times {times:?} outside the test's [{started_ms}, {now}]"
    );
}

/// Compares each key's digest with the one it had; the keys starting with `gens` rotate at
/// `stable_until_ms`, and are compared only before it.
fn assert_unchanged(
    con: &mut Connection,
    keys: &[String],
    before: &[String],
    stable_until_ms: u64,
    what: &str,
) {
    let after = digests(con, keys);
    let stable = now_ms() < stable_until_ms;
    for ((key, before), after) in keys.iter().zip(before).zip(&after) {
        if key.starts_with("gens") && !stable {
            eprintln!("{what}: {key} not compared, the test ran past its next rotation");
            continue;
        }
        assert_eq!(after, before, "{what}: digest of {key}");
    }
}

#[test]
fn reload_aof_rewrite_copy_and_scandump_keep_windowed_filters_bit_for_bit() {
    const WINDOW: u64 = 3000;
    const SPAN: u64 = WINDOW / 4;
    let aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"];
    let mut server = Server::start_with(&[], &aof);
    let mut con = server.connection();
    // Keys no rotation touches during the test, scaled, non-scaling, made by BF.INSERT.
    ok(&mut con, &["BF.RESERVE", "day", "0.01", "100", "WINDOW", DAY, "EXPANSION", "2"]);
    madd_all(&mut con, "day", strings("day:", 3000).into_iter());
    ok(
        &mut con,
        &["BF.RESERVE", "day-fixed", "0.001", "5000", "WINDOW", DAY, "GENERATIONS", "7", "NONSCALING"],
    );
    // Within one generation's share of the window (capacity / g, and an eighth): all in one span.
    madd_all(&mut con, "day-fixed", strings("fixed:", 700).into_iter());
    ok(
        &mut con,
        &[
            "BF.INSERT",
            "day-insert",
            "CAPACITY",
            "50",
            "ERROR",
            "0.05",
            "WINDOW",
            DAY,
            "GENERATIONS",
            "2",
            "ITEMS",
            "a",
            "b",
        ],
    );
    // A key with a generation in each of three spans.
    wait_for_next_span(SPAN, 50);
    let first_span = now_ms() / SPAN;
    ok(&mut con, &["BF.RESERVE", "gens", "0.01", "1000", "WINDOW", "3000", "GENERATIONS", "4"]);
    let batches: Vec<Vec<String>> = (0..3).map(|batch| strings(&format!("gens{batch}:"), 300)).collect();
    let mut newest = None;
    for (n, batch) in batches.iter().enumerate() {
        if n > 0 {
            wait_for_next_span(SPAN, 50);
        }
        newest = Some(add_batch(&mut con, "gens", batch));
    }
    let newest = newest.expect("three batches");
    // Once the third span has closed, nothing changes until the first generation expires.
    wait_for_next_span(SPAN, 150);
    let stable_until = (first_span + 5) * SPAN - 100;
    let Value::Array(filters) = ok(&mut con, &["BF.INFO", "gens", "FILTERS"]) else { panic!("BF.INFO") };
    assert!(matches!(filters[..], [Value::Int(n)] if n >= 3), "three generations: {filters:?}");

    let mut keys: Vec<String> = ["day", "day-fixed", "day-insert", "gens"].map(String::from).to_vec();
    let originals = keys.clone();
    for key in &originals {
        assert_eq!(ok(&mut con, &["TYPE", key]), simple(TYPE_NAME));
        let copy = format!("{key}:copy");
        assert_eq!(int(&mut con, &["COPY", key, &copy]), 1);
        let loaded = format!("{key}:loaded");
        let chunks = scandump(&mut con, key);
        loadchunks(&mut con, &loaded, &chunks);
        keys.extend([copy, loaded]);
    }
    let before = digests(&mut con, &keys);
    for (n, key) in originals.iter().enumerate() {
        if key.starts_with("gens") && now_ms() >= stable_until {
            eprintln!("{key}: copies not compared, the test ran past its next rotation");
            continue;
        }
        assert_eq!(before[4 + 2 * n], before[n], "COPY of {key}");
        assert_eq!(before[5 + 2 * n], before[n], "SCANDUMP and LOADCHUNK of {key}");
    }
    assert_unchanged(&mut con, &keys, &before, stable_until, "after COPY and LOADCHUNK");
    let cards: Vec<i64> = keys.iter().map(|key| int(&mut con, &["BF.CARD", key])).collect();

    ok(&mut con, &["DEBUG", "RELOAD"]);
    assert_unchanged(&mut con, &keys, &before, stable_until, "after DEBUG RELOAD");

    ok(&mut con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut con);
    let base = aof_bytes(&server);
    assert!(!base.starts_with(b"REDIS"), "the AOF must be commands, not an RDB preamble");
    server.restart();
    let mut con = server.connection();
    assert_unchanged(&mut con, &keys, &before, stable_until, "after an AOF rewrite and restart");
    for key in &keys {
        assert_eq!(ok(&mut con, &["TYPE", key]), simple(TYPE_NAME), "{key}");
    }
    if now_ms() < stable_until {
        let after: Vec<i64> = keys.iter().map(|key| int(&mut con, &["BF.CARD", key])).collect();
        assert_eq!(after, cards, "BF.CARD of {keys:?}");
    }
    assert_eq!(found(&mut con, "day:loaded", &strings("day:", 3000)), 3000);
    assert_eq!(found(&mut con, "day-fixed:copy", &strings("fixed:", 700)), 700);
    let window = Duration::from_millis(WINDOW);
    for key in ["gens", "gens:copy", "gens:loaded"] {
        assert_all_found(&mut con, key, &batches[2], newest, window.saturating_sub(MARGIN), key);
    }
}

#[test]
fn rdb_keeps_absolute_times_so_a_server_down_longer_than_the_window_forgets() {
    const WINDOW: u64 = 1500;
    let window = Duration::from_millis(WINDOW);
    let bound = forget_after(WINDOW, 4);
    let mut server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["BF.RESERVE", "short", "0.001", "1000", "WINDOW", "1500", "GENERATIONS", "4"]);
    ok(&mut con, &["BF.RESERVE", "day", "0.01", "1000", "WINDOW", DAY]);
    let day_items = strings("day:", 2000);
    madd_all(&mut con, "day", day_items.iter().cloned());
    let day_digest = digest(&mut con, "day");
    let early = strings("early:", 200);
    let early_added = add_batch(&mut con, "short", &early);

    // A quick restart keeps what is still within its window.
    ok(&mut con, &["SAVE"]);
    server.restart();
    let mut con = server.connection();
    assert_all_found(&mut con, "short", &early, early_added, window.saturating_sub(MARGIN), "after a quick restart");
    assert_eq!(digest(&mut con, "day"), day_digest);

    // A downtime longer than the window forgets.
    let late = strings("late:", 200);
    let late_added = add_batch(&mut con, "short", &late);
    ok(&mut con, &["SAVE"]);
    server.kill();
    sleep_until(late_added.answered + bound + MARGIN);
    server.launch();
    let mut con = server.connection();
    assert_eq!(ok(&mut con, &["TYPE", "short"]), simple(TYPE_NAME));
    assert_forgotten(&mut con, "short", &late, late_added, bound, "after a downtime");
    assert_forgotten(&mut con, "short", &early, early_added, bound, "after a downtime");
    wait_for_empty_card(&mut con, "short", Duration::from_millis(WINDOW / 4));
    assert_eq!(int(&mut con, &["BF.ADD", "short", "late:0"]), 1);
    assert_eq!(digest(&mut con, "day"), day_digest);
    assert_eq!(found(&mut con, "day", &day_items), 2000);
}

#[test]
fn aof_keeps_absolute_times_so_a_server_down_longer_than_the_window_forgets() {
    const WINDOW: u64 = 1500;
    let window = Duration::from_millis(WINDOW);
    let bound = forget_after(WINDOW, 4);
    let aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"];
    let mut server = Server::start_with(&[], &aof);
    let mut con = server.connection();
    ok(&mut con, &["BF.RESERVE", "day", "0.01", "1000", "WINDOW", DAY]);
    let day_items = strings("day:", 2000);
    madd_all(&mut con, "day", day_items.iter().cloned());
    ok(&mut con, &["BF.RESERVE", "rewritten", "0.001", "1000", "WINDOW", "1500", "GENERATIONS", "4"]);
    let in_base = strings("base:", 200);
    let base_added = add_batch(&mut con, "rewritten", &in_base);
    ok(&mut con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut con);
    // After the rewrite: commands appended to the AOF, on the rewritten key and a new one.
    let appended = strings("appended:", 200);
    let appended_added = add_batch(&mut con, "rewritten", &appended);
    ok(&mut con, &["BF.INSERT", "created", "ERROR", "0.001", "WINDOW", "1500", "ITEMS", "x"]);
    let created_added = add_batch(&mut con, "created", &appended);
    let day_digest = digest(&mut con, "day");

    // Replayed later, the adds keep their own times: still found within their window.
    server.restart();
    let mut con = server.connection();
    assert_all_found(&mut con, "rewritten", &in_base, base_added, window.saturating_sub(MARGIN), "in the rewritten base");
    assert_all_found(
        &mut con,
        "rewritten",
        &appended,
        appended_added,
        window.saturating_sub(MARGIN),
        "appended after the rewrite",
    );
    assert_all_found(
        &mut con,
        "created",
        &appended,
        created_added,
        window.saturating_sub(MARGIN),
        "created after the rewrite",
    );
    assert_eq!(digest(&mut con, "day"), day_digest);

    // Down longer than the window: replayed, they are forgotten.
    server.kill();
    sleep_until(created_added.answered + bound + MARGIN);
    server.launch();
    let mut con = server.connection();
    assert_eq!(ok(&mut con, &["TYPE", "rewritten"]), simple(TYPE_NAME));
    assert_eq!(ok(&mut con, &["TYPE", "created"]), simple(TYPE_NAME));
    assert_forgotten(&mut con, "rewritten", &in_base, base_added, bound, "base, after a downtime");
    assert_forgotten(&mut con, "rewritten", &appended, appended_added, bound, "appended, after a downtime");
    assert_forgotten(&mut con, "created", &appended, created_added, bound, "created, after a downtime");
    wait_for_empty_card(&mut con, "rewritten", Duration::from_millis(WINDOW / 4));
    wait_for_empty_card(&mut con, "created", Duration::from_millis(WINDOW / 4));
    assert_eq!(digest(&mut con, "day"), day_digest);
    assert_eq!(found(&mut con, "day", &day_items), 2000);
}
