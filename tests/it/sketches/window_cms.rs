//! Windowed Count-Min sketches (`CMS.INITBYDIM key width depth WINDOW ms`, type `rbCMSwind`)
//! against real servers and real time: the options and their errors, every CMS command on
//! them, counts kept for the window and forgotten after `window (1 + 1/g)`, memory returned
//! while the key is idle, rotations decided by the master and replicated, persistence that
//! keeps absolute times, and RedisBloom refusing the type.
//!
//! Windows are a second or two, and every timed check keeps a few hundred milliseconds from
//! its boundary; a "counted" check that a loaded machine ran too late is skipped with a
//! message. Keys that must not rotate during a test get a window of a day. The sketches are
//! wide enough that the few items of a test share no counters: counts are exact.

mod promises;
mod replication_and_persistence;

use super::integer_info;
use crate::harness::*;
use crate::window::MARGIN;
use redis::{Connection, Value};

const TYPE_NAME: &str = "rbCMSwind";
/// A window no test outlives: generations of six hours on a grid from the epoch.
const DAY: &str = "86400000";

/// The item's count.
fn query(con: &mut Connection, key: &str, item: &str) -> i64 {
    match ok(con, &["CMS.QUERY", key, item]) {
        Value::Array(counts) => match counts[..] {
            [Value::Int(count)] => count,
            _ => panic!("CMS.QUERY {key} {item}: {counts:?}"),
        },
        other => panic!("CMS.QUERY {key} {item}: {other:?}"),
    }
}

/// CMS.INFO's pairs.
fn info(con: &mut Connection, key: &str) -> Vec<(String, i64)> {
    integer_info(con, "CMS.INFO", key)
}

fn pairs(list: &[(&str, i64)]) -> Vec<(String, i64)> {
    list.iter().map(|(label, value)| ((*label).to_string(), *value)).collect()
}

fn counts(values: &[i64]) -> Value {
    Value::Array(values.iter().map(|&value| Value::Int(value)).collect())
}

fn run(con: &mut Connection, line: &str) -> Result<Value, String> {
    let args: Vec<&str> = line.split_whitespace().collect();
    call(con, &args)
}

#[test]
fn windowed_sketches_take_every_cms_command() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["CMS.INITBYDIM", "w", "1000", "5", "WINDOW", DAY]);
    assert_eq!(ok(&mut con, &["TYPE", "w"]), simple(TYPE_NAME));
    let fresh = [
        ("width", 1000),
        ("depth", 5),
        ("count", 0),
        ("cell_size", 4),
        ("Window", 86_400_000),
        ("Generations", 4),
    ];
    assert_eq!(info(&mut con, "w"), pairs(&fresh));
    assert_eq!(ok(&mut con, &["CMS.INCRBY", "w", "a", "3", "b", "4"]), counts(&[3, 4]));
    assert_eq!(ok(&mut con, &["CMS.INCRBY", "w", "a", "2"]), counts(&[5]));
    assert_eq!(ok(&mut con, &["CMS.QUERY", "w", "a", "b", "c"]), counts(&[5, 4, 0]));
    assert_eq!(info(&mut con, "w")[2], ("count".to_string(), 9));
    // Under RESP3, a map of the same pairs.
    let mut resp3 = server.connection_resp3();
    let Value::Map(map) = ok(&mut resp3, &["CMS.INFO", "w"]) else { panic!("a map under RESP3") };
    let labels: Vec<Value> = map.iter().map(|(label, _)| label.clone()).collect();
    assert_eq!(labels.len(), 6);
    assert_eq!(labels[4], simple("Window"));
    assert_eq!(map[5].1, Value::Int(4));

    // INITBYPROB, a cell size and generations; the plain overflow rules.
    ok(
        &mut con,
        &["CMS.INITBYPROB", "p", "0.01", "0.01", "CELL_SIZE", "1", "WINDOW", DAY, "GENERATIONS", "8"],
    );
    let prob = [
        ("width", 200),
        ("depth", 7),
        ("count", 0),
        ("cell_size", 1),
        ("Window", 86_400_000),
        ("Generations", 8),
    ];
    assert_eq!(info(&mut con, "p"), pairs(&prob));
    assert_eq!(ok(&mut con, &["CMS.INCRBY", "p", "a", "250"]), counts(&[250]));
    let Value::Array(replies) = ok(&mut con, &["CMS.INCRBY", "p", "a", "10", "b", "1"]) else {
        panic!("an array")
    };
    assert!(matches!(&replies[..], [Value::ServerError(_), Value::Int(1)]), "{replies:?}");
    assert_eq!(ok(&mut con, &["CMS.QUERY", "p", "a", "b"]), counts(&[250, 1]));

    // A negative increment is refused whole, with nothing changed.
    let before = digest(&mut con, "w");
    assert_eq!(
        err(&mut con, &["CMS.INCRBY", "w", "c", "1", "a", "-1"]),
        "CMS: a windowed sketch takes no negative increment"
    );
    assert_eq!(digest(&mut con, "w"), before);
    assert_eq!(ok(&mut con, &["CMS.INCRBY", "w", "a", "0"]), counts(&[5]));

    // MERGE: windowed into windowed, span by span; mixes and other shapes refused.
    ok(&mut con, &["CMS.INITBYDIM", "m", "1000", "5", "WINDOW", DAY]);
    ok(&mut con, &["CMS.MERGE", "m", "2", "w", "w", "WEIGHTS", "1", "2"]);
    assert_eq!(ok(&mut con, &["CMS.QUERY", "m", "a", "b"]), counts(&[15, 12]));
    ok(&mut con, &["CMS.MERGE", "m", "2", "m", "w"]);
    assert_eq!(ok(&mut con, &["CMS.QUERY", "m", "a"]), counts(&[20]));
    ok(&mut con, &["CMS.INITBYDIM", "hour", "1000", "5", "WINDOW", "3600000"]);
    ok(&mut con, &["CMS.INITBYDIM", "narrow", "1000", "5", "CELL_SIZE", "2", "WINDOW", DAY]);
    ok(&mut con, &["CMS.INITBYDIM", "plain", "1000", "5"]);
    let merged = digest(&mut con, "m");
    for (line, expected) in [
        ("CMS.MERGE m 1 hour", "CMS: window/generations is not equal"),
        ("CMS.MERGE m 1 p", "CMS: width/depth is not equal"),
        ("CMS.MERGE m 1 narrow", "CMS: cell size is not equal"),
        ("CMS.MERGE m 1 plain", "CMS: windowed and plain sketches do not merge together"),
        ("CMS.MERGE plain 1 w", "CMS: windowed and plain sketches do not merge together"),
        ("CMS.MERGE m 2 w missing", "CMS: key does not exist"),
        // Source by source, as a plain merge checks them: a first source of another shape is
        // answered before a later one's weight or key.
        ("CMS.MERGE m 2 p m WEIGHTS 1 x", "CMS: width/depth is not equal"),
        ("CMS.MERGE m 2 p missing", "CMS: width/depth is not equal"),
        ("CMS.MERGE m 2 narrow m WEIGHTS 1 x", "CMS: cell size is not equal"),
        ("CMS.MERGE m 1 w WEIGHTS -1", "CMS: MERGE overflow"),
        ("CMS.ROTATE w 123", "ERR CMS.ROTATE is sent by a master to its replicas and the AOF"),
        ("CMS.INCRBY missing a 1", "CMS: key does not exist"),
        ("CMS.QUERY missing a", "CMS: key does not exist"),
        ("CMS.INITBYDIM w 10 2 WINDOW 1000", "CMS: key already exists"),
    ] {
        assert_eq!(run(&mut con, line), Err(expected.to_string()), "{line}");
    }
    assert_eq!(digest(&mut con, "m"), merged);
    ok(&mut con, &["SET", "string", "x"]);
    for line in ["CMS.QUERY string a", "CMS.INCRBY string a 1", "CMS.INFO string", "CMS.MERGE m 1 string"] {
        assert!(run(&mut con, line).is_err_and(|error| error.starts_with("WRONGTYPE")), "{line}");
    }
    // Both protocols answer the same counts.
    for (protocol, mut con) in server.connections() {
        let reply = ok(&mut con, &["CMS.QUERY", "w", "a", "b"]);
        assert_eq!(reply, counts(&[5, 4]), "{protocol:?}");
    }
}

#[test]
fn window_options_are_checked_and_held_to_the_memory_budget() {
    let server = Server::start_with(&["max-filter-bytes", "1048576"], &[]);
    let mut con = server.connection();
    for (line, expected) in [
        (
            "CMS.INITBYDIM k 100 5 WINDOW 0",
            "ERR window must be an integer of milliseconds in [1, 1099511627776]",
        ),
        (
            "CMS.INITBYDIM k 100 5 WINDOW x",
            "ERR window must be an integer of milliseconds in [1, 1099511627776]",
        ),
        (
            "CMS.INITBYDIM k 100 5 WINDOW",
            "ERR window must be an integer of milliseconds in [1, 1099511627776]",
        ),
        (
            "CMS.INITBYDIM k 100 5 WINDOW 1000 GENERATIONS 65",
            "ERR generations must be an integer in [1, 64], at most the window in milliseconds",
        ),
        (
            "CMS.INITBYDIM k 100 5 WINDOW 3 GENERATIONS 4",
            "ERR generations must be an integer in [1, 64], at most the window in milliseconds",
        ),
        ("CMS.INITBYPROB k 0.01 0.01 GENERATIONS 4", "ERR GENERATIONS needs WINDOW"),
        ("CMS.INITBYDIM k 100 5 WINDOW 1000 CELL_SIZE 3", "CMS: CELL_SIZE must be 1, 2, 4 or 8"),
        ("CMS.INITBYDIM k 100 5 WINDOW 1000 CELL_SIZE", "CMS: CELL_SIZE must be 1, 2, 4 or 8"),
        ("CMS.INITBYDIM k 100 5 WINDOW 1000 CELL 2", "CMS: unknown argument"),
        ("CMS.INITBYDIM k 100 5 WINDOW 1000 EXTRA", "CMS: unknown argument"),
        ("CMS.INITBYDIM k 100 5 CELL_SIZE 3 WINDOW 1000", "CMS: CELL_SIZE must be 1, 2, 4 or 8"),
        ("CMS.INITBYDIM k 0 5 WINDOW 1000", "CMS: invalid width"),
        ("CMS.INITBYPROB k 2 0.01 WINDOW 1000", "CMS: invalid overestimation value"),
        // 200,000 bytes a sketch: nine (GENERATIONS 8, and the total) pass the budget of 1 MiB.
        ("CMS.INITBYDIM k 10000 5 WINDOW 1000 GENERATIONS 8", "CMS: Insufficient memory to create the key"),
    ] {
        assert_eq!(run(&mut con, line), Err(expected.to_string()), "{line}");
    }
    assert_eq!(int(&mut con, &["EXISTS", "k"]), 0, "nothing was created");
    // Five (the default four generations, and the total) fit; so does the plain sketch.
    ok(&mut con, &["CMS.INITBYDIM", "k", "10000", "5", "WINDOW", "1000"]);
    ok(&mut con, &["CMS.INITBYDIM", "plain", "10000", "5", "CELL_SIZE", "4"]);
    ok(
        &mut con,
        &["CMS.INITBYDIM", "cells", "100", "5", "CELL_SIZE", "8", "WINDOW", "1000", "GENERATIONS", "2"],
    );
    assert_eq!(
        info(&mut con, "cells")[3..],
        pairs(&[("cell_size", 8), ("Window", 1000), ("Generations", 2)])[..]
    );
    // The options in any order, as BF.RESERVE's.
    for (key, order) in [
        ("o1", &["GENERATIONS", "2", "CELL_SIZE", "8", "WINDOW", "1000"][..]),
        ("o2", &["WINDOW", "1000", "CELL_SIZE", "8", "GENERATIONS", "2"]),
        ("o3", &["WINDOW", "1000", "GENERATIONS", "2", "cell_size", "8"]),
    ] {
        let mut args = vec!["CMS.INITBYDIM", key, "100", "5"];
        args.extend(order);
        ok(&mut con, &args);
        assert_eq!(info(&mut con, key), info(&mut con, "cells"), "{order:?}");
    }
}
