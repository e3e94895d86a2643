//! One server, real time: counts kept for the window and forgotten after `window (1 + 1/g)`,
//! the window's heavy hitters found when they change, and memory handed back while the key
//! is idle.

use super::{
    assert_counted, assert_forgotten, forget_after, listed, names, query, sleep_until, write, MARGIN,
};
use crate::harness::*;
use redis::{Connection, Value};
use std::collections::HashMap;
use std::time::{Duration, Instant};

#[test]
fn counts_are_kept_for_the_window_and_forgotten_after() {
    const WINDOW: u64 = 1200;
    let window = Duration::from_millis(WINDOW);
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["TOPK.RESERVE", "w", "5", "100", "4", "0.9", "WINDOW", "1200", "GENERATIONS", "4"]);
    ok(&mut con, &["TOPK.RESERVE", "halves", "5", "100", "4", "0.9", "WINDOW", "1200", "GENERATIONS", "2"]);
    let old = write(&mut con, &["TOPK.INCRBY", "w", "old", "50"]);
    let old_halves = write(&mut con, &["TOPK.INCRBY", "halves", "old", "50"]);
    assert_counted(&mut con, "w", "old", 50, old, window.saturating_sub(MARGIN));
    std::thread::sleep(Duration::from_millis(600));
    let new = write(&mut con, &["TOPK.INCRBY", "w", "new", "7"]);
    assert_counted(&mut con, "w", "old", 50, old, window.saturating_sub(MARGIN));
    assert_counted(&mut con, "halves", "old", 50, old_halves, window.saturating_sub(MARGIN));
    assert_counted(&mut con, "w", "new", 7, new, window.saturating_sub(MARGIN));

    // Past window (1 + 1/g), whether or not a rotation ran: read by the master's clock.
    sleep_until(old.answered + forget_after(WINDOW, 4) + MARGIN);
    assert_forgotten(&mut con, "w", "old", old, forget_after(WINDOW, 4));
    assert_counted(&mut con, "w", "new", 7, new, window.saturating_sub(MARGIN));
    sleep_until(old_halves.answered + forget_after(WINDOW, 2) + MARGIN);
    assert_forgotten(&mut con, "halves", "old", old_halves, forget_after(WINDOW, 2));
    sleep_until(new.answered + forget_after(WINDOW, 4) + MARGIN);
    assert_forgotten(&mut con, "w", "new", new, forget_after(WINDOW, 4));
    // The list takes new items as a fresh one does.
    ok(&mut con, &["TOPK.ADD", "w", "again"]);
    assert_eq!(names(&mut con, "w"), ["again"]);
}

/// An item left out of a full list (here expelled) is listed by the rotation that drops the
/// heavier item's generation, with no add of its own, as a plain list fed only the window's
/// items lists it.
#[test]
fn an_item_left_out_is_listed_once_heavier_ones_expire() {
    const SPAN: u64 = 500;
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["TOPK.RESERVE", "t", "2", "200", "5", "0.9", "WINDOW", "2000", "GENERATIONS", "4"]);
    // Spans are on a grid from the epoch: start at one, with a span of margin on each side.
    let first = (now_ms() / SPAN + 1) * SPAN;
    let until = |at_ms: u64| std::thread::sleep(Duration::from_millis(at_ms.saturating_sub(now_ms())));
    until(first + 20);
    ok(&mut con, &["TOPK.INCRBY", "t", "a", "10", "b", "5"]);
    until(first + SPAN + 20);
    let Value::Array(expelled) = ok(&mut con, &["TOPK.INCRBY", "t", "b", "3", "c", "12"]) else {
        panic!("TOPK.INCRBY")
    };
    assert_eq!(expelled[1], Value::BulkString(b"b".to_vec()), "c takes b's place");
    assert_eq!(names(&mut con, "t"), ["c", "a"]);
    assert!(now_ms() < first + 2 * SPAN, "the adds fell in two spans");
    // The first span's generation expires at its end and a window more; the second's a span
    // later. A write between the two rotates.
    until(first + SPAN + 2000 + 20);
    ok(&mut con, &["TOPK.ADD", "t", "z"]);
    assert_eq!(listed(&mut con, "t"), [("c".to_string(), 12), ("b".to_string(), 3)]);
    assert!(query(&mut con, "t", "b"));
    assert!(now_ms() < first + 2 * SPAN + 2000, "read before the second span expired");
}

/// Items heavy in a later span, while the list was full of heavier items and more heavier
/// items were left out too, are listed by the rotation that drops the heavier ones' span, as
/// a plain list fed only the later items lists them. (An earlier version kept the items left
/// out ranked by their counts when left out, and forgot these.)
#[test]
fn items_kept_out_by_heavier_ones_are_listed_once_those_expire() {
    const SPAN: u64 = 500;
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["TOPK.RESERVE", "t", "10", "2000", "7", "0.9", "WINDOW", "2000"]);
    let first = (now_ms() / SPAN + 1) * SPAN;
    let until = |at_ms: u64| std::thread::sleep(Duration::from_millis(at_ms.saturating_sub(now_ms())));
    until(first + 20);
    let mut heavier = vec!["TOPK.INCRBY", "t"];
    let (listed_first, left_out): (Vec<String>, Vec<String>) =
        ((0..10).map(|i| format!("x{i}")).collect(), (0..20).map(|i| format!("y{i}")).collect());
    for item in &listed_first {
        heavier.extend([item.as_str(), "100"]);
    }
    for item in &left_out {
        heavier.extend([item.as_str(), "60"]);
    }
    ok(&mut con, &heavier);
    assert!(now_ms() < first + SPAN, "the heavier items fell in one span");
    until(first + 3 * SPAN + 20);
    let later: Vec<String> = (0..10).map(|i| format!("b{i}")).collect();
    let mut adds = vec!["TOPK.INCRBY", "t"];
    for item in &later {
        adds.extend([item.as_str(), "40"]);
    }
    ok(&mut con, &adds);
    let sorted = |mut names: Vec<String>| {
        names.sort();
        names
    };
    assert_eq!(sorted(names(&mut con, "t")), listed_first);
    // The first span expires at its end and a window later; a write rotates.
    until(first + SPAN + 2000 + 20);
    ok(&mut con, &["TOPK.ADD", "t", "z"]);
    assert_eq!(sorted(names(&mut con, "t")), later);
    assert!(listed(&mut con, "t").iter().all(|(_, count)| *count == 40));
    assert!(now_ms() < first + 4 * SPAN + 2000, "read before the later span expired");
}

/// Half of each batch goes to ten heavy items weighted 10 to 1, the rest to a tail of 2000.
fn batch(random: &mut Random, heavy: &str, len: usize) -> Vec<String> {
    (0..len)
        .map(|_| {
            if random.below(2) == 0 {
                let mut rank = random.below(55);
                let item = (0..10).find(|&item| {
                    rank < 10 - item || {
                        rank -= 10 - item;
                        false
                    }
                });
                format!("{heavy}:{}", item.unwrap_or(0))
            } else {
                format!("tail:{}", random.below(2000))
            }
        })
        .collect()
}

fn add_batch(con: &mut Connection, key: &str, items: &[String]) {
    let mut args = vec!["TOPK.ADD", key];
    args.extend(items.iter().map(String::as_str));
    ok(con, &args);
}

/// The heavy hitters change: ten old ones counted hugely at first, then a stream of new
/// ones for longer than `window (1 + 1/g)`. The windowed list finds the last window's true
/// top ten as well as a plain list fed only that window's items, and a plain list fed the
/// whole stream keeps the old ones.
#[test]
fn the_windows_heavy_hitters_are_found_when_they_change() {
    const WINDOW: u64 = 1500;
    let server = Server::start();
    let mut con = server.connection();
    ok(
        &mut con,
        &["TOPK.RESERVE", "windowed", "10", "200", "5", "0.9", "WINDOW", "1500", "GENERATIONS", "4"],
    );
    ok(&mut con, &["TOPK.RESERVE", "whole", "10", "200", "5", "0.9"]);
    ok(&mut con, &["TOPK.RESERVE", "last", "10", "200", "5", "0.9"]);
    let started = Instant::now();
    for key in ["windowed", "whole"] {
        for item in 0..10 {
            ok(&mut con, &["TOPK.INCRBY", key, &format!("old:{item}"), &((10 - item) * 5000).to_string()]);
        }
    }
    let mut random = Random::seeded();
    let mut sent: Vec<(Instant, Vec<String>)> = Vec::new();
    while started.elapsed() < forget_after(WINDOW, 4) + MARGIN + Duration::from_millis(500) {
        let items = batch(&mut random, "new", 200);
        let at = Instant::now();
        add_batch(&mut con, "windowed", &items);
        add_batch(&mut con, "whole", &items);
        sent.push((at, items));
        std::thread::sleep(Duration::from_millis(10));
    }
    let windowed = names(&mut con, "windowed");
    // The window's items: the batches sent within its last window, certainly counted.
    let in_window = |at: &Instant| at.elapsed() <= Duration::from_millis(WINDOW);
    let mut exact: HashMap<&String, u64> = HashMap::new();
    for (_, items) in sent.iter().filter(|(at, _)| in_window(at)) {
        add_batch(&mut con, "last", items);
        for item in items {
            *exact.entry(item).or_default() += 1;
        }
    }
    let mut ranked: Vec<(&String, u64)> = exact.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let truth: Vec<&String> = ranked.iter().take(10).map(|(item, _)| *item).collect();
    let recall = |found: &[String]| truth.iter().filter(|item| found.contains(item)).count();
    let (last, whole) = (names(&mut con, "last"), names(&mut con, "whole"));
    eprintln!("truth {truth:?}\nwindowed {windowed:?}\nlast window only {last:?}\nwhole stream {whole:?}");
    assert!(recall(&windowed) >= recall(&last), "windowed {windowed:?}, plain of the window {last:?}");
    assert!(recall(&windowed) >= 9, "windowed recall {} of 10", recall(&windowed));
    assert!(!windowed.iter().any(|item| item.starts_with("old:")), "{windowed:?}");
    let old = whole.iter().filter(|item| item.starts_with("old:")).count();
    assert!(old >= 5, "the plain list of the whole stream keeps the old heavy hitters: {whole:?}");
}

fn topk_bytes(con: &mut Connection) -> i64 {
    info_field(con, "bf", "bf_topk_bytes")
        .and_then(|value| value.parse().ok())
        .expect("INFO bf has topk_bytes")
}

/// Generations of 112,000 bytes each: their memory comes back without any command on the
/// key, within a window, two spans and a second of the last write.
#[test]
fn idle_keys_give_their_memory_back() {
    const WINDOW: u64 = 800;
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["TOPK.RESERVE", "idle", "10", "2000", "7", "0.9", "WINDOW", "800", "GENERATIONS", "2"]);
    let empty = int(&mut con, &["MEMORY", "USAGE", "idle"]);
    let empty_bytes = topk_bytes(&mut con);
    let mut last = None;
    for round in 0..3 {
        last = Some(write(&mut con, &["TOPK.ADD", "idle", "a", "b", &format!("r{round}")]));
        std::thread::sleep(Duration::from_millis(250));
    }
    let last = last.expect("three writes");
    let full = int(&mut con, &["MEMORY", "USAGE", "idle"]);
    assert!(full >= empty + 2 * 112_000, "MEMORY USAGE {full}, empty {empty}");
    assert!(topk_bytes(&mut con) >= empty_bytes + 2 * 112_000);
    let span = Duration::from_millis(WINDOW / 2);
    let deadline = last.answered + Duration::from_millis(WINDOW) + span * 2 + Duration::from_secs(1) + MARGIN;
    loop {
        let (now, bytes) = (int(&mut con, &["MEMORY", "USAGE", "idle"]), topk_bytes(&mut con));
        if now == empty && bytes == empty_bytes {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "MEMORY USAGE {now} (empty {empty}), topk_bytes {bytes} (empty {empty_bytes})"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(names(&mut con, "idle").is_empty());
}
