//! One server, real time: counts kept for a window and forgotten after `window (1 + 1/g)`,
//! never below the window's true count, and memory handed back while the key is idle.

use super::{info, query, MARGIN};
use crate::harness::*;
use redis::Connection;
use std::time::{Duration, Instant};

/// When an increment was sent and answered: its age on the server lies between
/// `answered.elapsed()` and `sent.elapsed()`.
#[derive(Clone, Copy)]
struct Sent {
    sent: Instant,
    answered: Instant,
}

fn increment(con: &mut Connection, key: &str, item: &str, by: i64) -> Sent {
    let sent = Instant::now();
    ok(con, &["CMS.INCRBY", key, item, &by.to_string()]);
    Sent { sent, answered: Instant::now() }
}

/// Rounds of increments every 200 ms, each read right after by a query of the item every
/// round increments: never below the rounds certainly within the window, never above those
/// possibly within `window (1 + 1/g)`; then an item counted to the last millisecond a check
/// can keep from the window's end, and gone past `window (1 + 1/g)`.
#[test]
fn counts_are_kept_for_the_window_and_forgotten_after() {
    const WINDOW: u64 = 1500;
    let window = Duration::from_millis(WINDOW);
    let bound = Duration::from_millis(WINDOW + WINDOW / 3);
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["CMS.INITBYDIM", "k", "2000", "5", "WINDOW", "1500", "GENERATIONS", "3"]);
    let first = increment(&mut con, "k", "first", 10);
    let mut rounds: Vec<Sent> = Vec::new();
    for _ in 0..12 {
        std::thread::sleep(Duration::from_millis(200));
        rounds.push(increment(&mut con, "k", "every", 1));
        let asked = Instant::now();
        let count = query(&mut con, "k", "every");
        let answered = Instant::now();
        // Counted: sent after the read's latest server time less the window.
        let surely = rounds.iter().filter(|round| round.sent + window > answered).count() as i64;
        let possibly = rounds.iter().filter(|round| round.answered + bound > asked).count() as i64;
        assert!(
            (surely..=possibly).contains(&count),
            "after {} rounds: {count} counted, {surely} within the window, {possibly} within its slack",
            rounds.len()
        );
        if first.sent.elapsed() + MARGIN < window {
            assert_eq!(query(&mut con, "k", "first"), 10, "{:?} after its increment", first.sent.elapsed());
        }
    }
    // Past the slack, nothing of `first`, without any write since.
    let last = *rounds.last().expect("rounds");
    let wait = (first.answered + bound + MARGIN).saturating_duration_since(Instant::now());
    std::thread::sleep(wait);
    assert_eq!(query(&mut con, "k", "first"), 0, "{:?} after its increment", first.answered.elapsed());
    // A single increment, read just before its window ends and just after its slack.
    let late = increment(&mut con, "k", "late", 3);
    std::thread::sleep(window.saturating_sub(MARGIN).saturating_sub(late.sent.elapsed()));
    let count = query(&mut con, "k", "late");
    if late.sent.elapsed() < window {
        assert_eq!(count, 3, "{:?} after its increment", late.sent.elapsed());
    } else {
        eprintln!("late: check skipped, it ran {:?} after the increment", late.sent.elapsed());
    }
    std::thread::sleep((late.answered + bound + MARGIN).saturating_duration_since(Instant::now()));
    assert!(last.answered.elapsed() > bound);
    for item in ["late", "every", "first"] {
        assert_eq!(query(&mut con, "k", item), 0, "{item}");
    }
    assert_eq!(info(&mut con, "k")[2], ("count".to_string(), 0));
}

/// The memory of expired generations comes back from the timer, with no command sent to the
/// key: a span and a second after the last generation expires at the latest.
#[test]
fn an_idle_key_gives_back_its_expired_generations() {
    const WINDOW: u64 = 1000;
    let span = Duration::from_millis(WINDOW / 4);
    let server = Server::start();
    let mut con = server.connection();
    // 2 MB a sketch.
    ok(&mut con, &["CMS.INITBYDIM", "big", "100000", "5", "WINDOW", "1000", "GENERATIONS", "4"]);
    ok(&mut con, &["CMS.INITBYDIM", "plain", "100000", "5"]);
    let plain = int(&mut con, &["MEMORY", "USAGE", "plain"]);
    let mut last = None;
    for round in 0..12 {
        last = Some(increment(&mut con, "big", &format!("item{round}"), 1));
        std::thread::sleep(Duration::from_millis(100));
    }
    let last = last.expect("rounds");
    let busy = int(&mut con, &["MEMORY", "USAGE", "big"]);
    assert!(busy >= 3 * plain, "a sketch per live span: {busy} bytes, against {plain} for a plain one");
    assert!(busy <= 5 * plain + 4096, "at most g + 1 sketches: {busy} bytes, against {plain}");
    let busy_gauge = cms_bytes(&mut con);
    let deadline =
        last.answered + Duration::from_millis(WINDOW) + span + span + Duration::from_secs(1) + MARGIN;
    loop {
        let now = int(&mut con, &["MEMORY", "USAGE", "big"]);
        if now <= plain + 4096 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "MEMORY USAGE still {now} (was {busy}) {:?} after the last write",
            last.answered.elapsed()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(cms_bytes(&mut con) <= busy_gauge - (busy - plain) / 2, "INFO bf follows the memory given back");
    assert_eq!(info(&mut con, "big")[2], ("count".to_string(), 0));
    assert_eq!(query(&mut con, "big", "item11"), 0);
}

fn cms_bytes(con: &mut Connection) -> i64 {
    info_field(con, "bf", "bf_cms_bytes").and_then(|value| value.parse().ok()).expect("INFO bf has cms_bytes")
}
