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

mod commands;
mod promises;
mod replication_and_persistence;

use crate::harness::*;
pub use crate::window::{forget_after, MARGIN};
use redis::Connection;
use std::time::{Duration, Instant};

const TYPE_NAME: &str = "rbBF-wind";
/// A window no test outlives: generations of six hours on a grid from the epoch, so that
/// nothing rotates while a test runs.
const DAY: &str = "86400000";

fn strings(prefix: &str, count: usize) -> Vec<String> {
    (0..count).map(|n| format!("{prefix}{n}")).collect()
}

/// How many of `items` the filter finds.
fn found(con: &mut Connection, key: &str, items: &[String]) -> u64 {
    count_present(con, key, items.iter().cloned())
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
