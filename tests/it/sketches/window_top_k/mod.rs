//! Windowed Top-K lists (`TOPK.RESERVE key k [width depth decay] WINDOW ms`, type
//! `rbTOPKwnd`) against real servers and real time: the grammar and its errors, every TOPK.*
//! command on them, counts forgotten after `window (1 + 1/g)`, the window's heavy hitters
//! found when they change, memory returned while the key is idle, rotations decided by the
//! master and replicated, persistence that keeps absolute times, and RedisBloom refusing the
//! record.
//!
//! Windows are a second or two; every timed check keeps a few hundred milliseconds from its
//! boundary, and a "still counted" check that a loaded machine ran too late is skipped with a
//! message rather than failed. Keys that must not rotate during a test get a window of a day.

mod commands;
mod promises;
mod replication_and_persistence;

use crate::harness::*;
pub use crate::window::{forget_after, MARGIN};
use redis::{Connection, Value};
use std::time::{Duration, Instant};

const TYPE_NAME: &str = "rbTOPKwnd";
/// A window no test outlives: generations of six hours on a grid from the epoch.
const DAY: &str = "86400000";

/// TOPK.LIST key WITHCOUNT, as (item, count) pairs.
fn listed(con: &mut Connection, key: &str) -> Vec<(String, i64)> {
    let Value::Array(reply) = ok(con, &["TOPK.LIST", key, "WITHCOUNT"]) else { panic!("TOPK.LIST {key}") };
    reply
        .chunks(2)
        .map(|pair| match pair {
            [Value::BulkString(item), Value::Int(count)] => {
                (String::from_utf8_lossy(item).into_owned(), *count)
            }
            other => panic!("TOPK.LIST {key}: {other:?}"),
        })
        .collect()
}

fn names(con: &mut Connection, key: &str) -> Vec<String> {
    listed(con, key).into_iter().map(|(item, _)| item).collect()
}

/// TOPK.COUNT of one item.
fn count(con: &mut Connection, key: &str, item: &str) -> i64 {
    match ok(con, &["TOPK.COUNT", key, item]) {
        Value::Array(counts) => match counts[..] {
            [Value::Int(count)] => count,
            _ => panic!("TOPK.COUNT {key} {item}: {counts:?}"),
        },
        other => panic!("TOPK.COUNT {key} {item}: {other:?}"),
    }
}

/// TOPK.QUERY of one item.
fn query(con: &mut Connection, key: &str, item: &str) -> bool {
    match ok(con, &["TOPK.QUERY", key, item]) {
        Value::Array(found) => found == [Value::Int(1)] || found == [Value::Boolean(true)],
        other => panic!("TOPK.QUERY {key} {item}: {other:?}"),
    }
}

/// When a write was sent and answered: its age on the server lies between the two.
#[derive(Clone, Copy)]
struct Written {
    sent: Instant,
    answered: Instant,
}

fn write(con: &mut Connection, args: &[&str]) -> Written {
    let sent = Instant::now();
    ok(con, args);
    Written { sent, answered: Instant::now() }
}

/// Checks that `item` is counted `expected` times and listed, when the check certainly ran
/// within `window` of the write; a later check is skipped, saying so.
fn assert_counted(
    con: &mut Connection,
    key: &str,
    item: &str,
    expected: i64,
    written: Written,
    window: Duration,
) {
    let (counted, listed) = (count(con, key, item), query(con, key, item));
    let age = written.sent.elapsed();
    if age > window {
        eprintln!("{key} {item}: check skipped, it ran up to {age:?} after the write, past {window:?}");
        return;
    }
    assert_eq!((counted, listed), (expected, true), "{key} {item}, at most {age:?} after its write");
}

/// Checks that `item` is counted nowhere: not by COUNT, QUERY or LIST.
fn assert_forgotten(con: &mut Connection, key: &str, item: &str, written: Written, bound: Duration) {
    let age = written.answered.elapsed();
    assert!(age > bound, "{key}: the test checks too early ({age:?} after the write, before {bound:?})");
    assert_eq!(count(con, key, item), 0, "{key} {item} counted {age:?} after its write");
    assert!(!query(con, key, item), "{key} {item} listed {age:?} after its write");
    assert!(!names(con, key).contains(&item.to_string()), "{key} {item} in TOPK.LIST");
}
