//! One server, real time: items found for a window after their latest add and forgotten after
//! `window (1 + 1/g)`, the error rate under a burst, and memory handed back while the key is idle.

use super::{
    add_batch, assert_all_found, assert_forgotten, forget_after, found, strings, Added, DAY, MARGIN,
    TYPE_NAME,
};
use crate::harness::*;
use redis::{Connection, Value};
use std::time::{Duration, Instant};

fn bf_bytes(con: &mut Connection) -> i64 {
    info_field(con, "bf", "bf_bytes").and_then(|value| value.parse().ok()).expect("INFO bf has bf_bytes")
}

/// Waits until `INFO bf` holds no more than `baseline` and a tenth of what `bytes` holds
/// above it. The last generation expires at most a window and a span after the last add, and
/// the timer visits a key within a tick (100 ms) of its next rotation.
fn wait_for_memory_back(
    con: &mut Connection,
    (baseline, bytes): (i64, i64),
    added: &Added,
    window_ms: u64,
    span: Duration,
) {
    let deadline =
        added.answered + Duration::from_millis(window_ms) + span + Duration::from_millis(200) + MARGIN;
    loop {
        let now_bytes = bf_bytes(con);
        if now_bytes - baseline < (bytes - baseline) / 10 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "bf_bytes still {now_bytes} (was {bytes}, {baseline} of it held by other keys) {:?} after the last add",
            added.answered.elapsed()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
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
    assert_all_found(
        &mut con,
        "k",
        &kept,
        again,
        window.saturating_sub(MARGIN),
        "kept, 700 ms after adding it again",
    );
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
    assert_all_found(
        &mut con,
        "k",
        &kept,
        last,
        window.saturating_sub(MARGIN),
        "kept, added again within the window",
    );
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
    wait_for_memory_back(&mut con, (0, bytes), &added, WINDOW, span);
    eprintln!("memory returned at most {:?} after the last add", added.sent.elapsed());
    let after = int(&mut con, &["MEMORY", "USAGE", "idle"]);
    assert!(after < usage / 10, "MEMORY USAGE {after}, was {usage}");
    assert_eq!(ok(&mut con, &["TYPE", "idle"]), simple(TYPE_NAME), "the key stays, empty");
    assert_eq!(int(&mut con, &["BF.CARD", "idle"]), 0);
    assert_eq!(found(&mut con, "idle", &items[..1000]), 0);
    assert_eq!(int(&mut con, &["BF.ADD", "idle", "idle:0"]), 1);
    assert_eq!(int(&mut con, &["BF.EXISTS", "idle", "idle:0"]), 1);
}

/// The timer follows a filter to a new name or database (RENAME, COPY, MOVE, RESTORE, and
/// SWAPDB, which sends no keyspace event): the old names are deleted, and the memory still
/// comes back while nothing names the new ones.
#[test]
fn memory_is_returned_from_filters_under_new_names_while_idle() {
    const WINDOW: u64 = 1000;
    let span = Duration::from_millis(WINDOW / 4);
    let server = Server::start();
    let mut con = server.connection();
    let mut last_add = None;
    for (db, key) in [("0", "renamed"), ("0", "copied"), ("0", "moved"), ("0", "restored"), ("3", "swapped")]
    {
        ok(&mut con, &["SELECT", db]);
        ok(&mut con, &["BF.RESERVE", key, "0.01", "100000", "WINDOW", "1000", "GENERATIONS", "4"]);
        last_add = Some(add_batch(&mut con, key, &strings(&format!("{key}:"), 20_000)));
    }
    ok(&mut con, &["SELECT", "0"]);
    ok(&mut con, &["SWAPDB", "3", "4"]);
    ok(&mut con, &["RENAME", "renamed", "renamed:to"]);
    assert_eq!(int(&mut con, &["COPY", "copied", "copied:to"]), 1);
    assert_eq!(int(&mut con, &["MOVE", "moved", "1"]), 1);
    let payload: Vec<u8> = redis::cmd("DUMP").arg("restored").query(&mut con).expect("DUMP");
    let () = redis::cmd("RESTORE").arg("restored:to").arg(0).arg(payload).query(&mut con).expect("RESTORE");
    for key in ["copied", "restored"] {
        assert_eq!(int(&mut con, &["DEL", key]), 1);
    }
    let bytes = bf_bytes(&mut con);
    assert!(bytes > 5 * 20_000, "bf_bytes {bytes} for five filters of 20000 items");

    let added = last_add.expect("four filters were filled");
    wait_for_memory_back(&mut con, (0, bytes), &added, WINDOW, span);
    for key in ["renamed:to", "copied:to", "restored:to"] {
        assert_eq!(ok(&mut con, &["TYPE", key]), simple(TYPE_NAME), "{key} stays, empty");
    }
}

/// The timer visits a key when its next rotation is due, not in turn with every other key:
/// among 60,000 filters of a day's window, each holding an item (none due for hours), a filter
/// of a second's window gives its memory back as soon as one that is alone. Visiting 1,000
/// keys every 100 ms in turn, the timer came back to it every six seconds.
#[test]
fn memory_is_returned_on_time_among_many_filters_not_due() {
    const WINDOW: u64 = 1000;
    let span = Duration::from_millis(WINDOW / 4);
    let server = Server::start();
    let mut con = server.connection();
    let created = Instant::now();
    for first in (0..60_000).step_by(10_000) {
        let mut pipe = redis::pipe();
        for n in first..first + 10_000 {
            let key = format!("day:{n}");
            pipe.cmd("BF.INSERT").arg(&key).arg("CAPACITY").arg("100").arg("WINDOW").arg(DAY);
            pipe.arg("ITEMS").arg("item").ignore();
        }
        let () = pipe.query(&mut con).expect("60,000 filters of a day");
    }
    eprintln!("created in {:?}", created.elapsed());
    // The new filter's own structure stays with it: the generations' memory is what returns.
    ok(&mut con, &["BF.RESERVE", "second", "0.01", "100000", "WINDOW", "1000", "GENERATIONS", "4"]);
    let baseline = bf_bytes(&mut con);
    let added = add_batch(&mut con, "second", &strings("second:", 20_000));
    let bytes = bf_bytes(&mut con);
    assert!(bytes - baseline > 20_000, "bf_bytes {bytes}, {baseline} before 20000 items");
    wait_for_memory_back(&mut con, (baseline, bytes), &added, WINDOW, span);
    eprintln!("memory returned {:?} after the last add", added.answered.elapsed());
    assert_eq!(bf_bytes(&mut con), baseline, "the day's filters keep theirs");
    assert_eq!(found(&mut con, "day:59999", &["item".to_string()]), 1);
}

/// Every read by the master's clock leaves out what the window forgot, not only lookups:
/// a filter restored from a record older than the window answers BF.CARD and BF.INFO's items
/// 0 at once, in the same transaction, before any rotation could drop its generation.
#[test]
fn counts_read_by_the_masters_clock_leave_out_what_was_forgotten() {
    const WINDOW: u64 = 400;
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["BF.RESERVE", "k", "0.01", "100", "WINDOW", "400"]);
    ok(&mut con, &["BF.MADD", "k", "a", "b", "c"]);
    let payload = dump_payload(&mut con, "k");
    std::thread::sleep(forget_after(WINDOW, 4) + MARGIN);
    let replies: Vec<Value> = redis::pipe()
        .atomic()
        .cmd("RESTORE")
        .arg("old")
        .arg(0)
        .arg(payload)
        .cmd("BF.EXISTS")
        .arg("old")
        .arg("a")
        .cmd("BF.CARD")
        .arg("old")
        .cmd("BF.INFO")
        .arg("old")
        .arg("ITEMS")
        .cmd("BF.INFO")
        .arg("old")
        .query(&mut con)
        .expect("the transaction runs");
    assert_eq!(replies[1..4], [Value::Int(0), Value::Int(0), Value::Array(vec![Value::Int(0)])]);
    let Value::Array(pairs) = &replies[4] else { panic!("BF.INFO answers pairs: {:?}", replies[4]) };
    let label = Value::SimpleString("Number of items inserted".into());
    let items = pairs.chunks(2).find(|pair| pair[0] == label).map(|pair| &pair[1]);
    assert_eq!(items, Some(&Value::Int(0)), "{pairs:?}");
}
