//! Rotations decided by the master and replicated as CMS.ROTATE, and sketches kept or copied
//! (RDB, AOF, rewrite, COPY, DUMP/RESTORE) bit for bit with absolute times: down longer than
//! the window, they forget. RedisBloom refuses the type.

use super::{query, DAY, MARGIN, TYPE_NAME};
use crate::harness::*;
use redis::{Connection, Value};
use std::time::{Duration, Instant};

/// Sleeps until `offset_ms` into the next span of `span_ms` on the grid from the epoch.
fn wait_for_next_span(span_ms: u64, offset_ms: u64) {
    let now = now_ms();
    let next = now - now % span_ms + span_ms + offset_ms;
    std::thread::sleep(Duration::from_millis(next - now));
}

fn digests(con: &mut Connection, keys: &[&str]) -> Vec<String> {
    keys.iter().map(|key| digest(con, key)).collect()
}

#[test]
fn a_replica_applies_its_masters_rotations_and_holds_the_same_counters() {
    const WINDOW: u64 = 1200;
    let bound = Duration::from_millis(WINDOW + WINDOW / 3);
    let aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"];
    let master = Server::start_with(&[], &aof);
    let mut on_master = master.connection();
    ok(&mut on_master, &["CMS.INITBYDIM", "win", "1000", "4", "WINDOW", "1200", "GENERATIONS", "3"]);
    ok(&mut on_master, &["CMS.INITBYDIM", "merged", "1000", "4", "WINDOW", "1200", "GENERATIONS", "3"]);
    ok(&mut on_master, &["CMS.INITBYDIM", "day", "1000", "4", "CELL_SIZE", "2", "WINDOW", DAY]);
    ok(&mut on_master, &["CMS.INCRBY", "win", "a", "1", "b", "2"]);
    ok(&mut on_master, &["CMS.INCRBY", "day", "a", "5"]);
    let keys = ["win", "merged", "day"];

    // A full sync, then commands and rotations.
    let replica = Server::start_with(&[], &["--replicaof", "127.0.0.1", &master.port.to_string()]);
    let mut on_replica = replica.connection();
    assert_replica_matches(&mut on_master, &mut on_replica, &keys);
    let mut last = Instant::now();
    for round in 0..4 {
        std::thread::sleep(Duration::from_millis(300));
        ok(&mut on_master, &["CMS.INCRBY", "win", "a", "1", &format!("r{round}"), "3"]);
        ok(&mut on_master, &["CMS.MERGE", "merged", "2", "merged", "win", "WEIGHTS", "1", "2"]);
        last = Instant::now();
        assert_replica_matches(&mut on_master, &mut on_replica, &keys);
    }
    assert_eq!(query(&mut on_replica, "win", "r3"), 3);
    assert_eq!(query(&mut on_master, "merged", "r3"), 6);

    // Once every generation expired and the master dropped it, the replica forgets too.
    std::thread::sleep(
        (last + bound + Duration::from_secs(1) + MARGIN).saturating_duration_since(Instant::now()),
    );
    assert_replica_matches(&mut on_master, &mut on_replica, &keys);
    for con in [&mut on_master, &mut on_replica] {
        for key in ["win", "merged"] {
            assert_eq!(
                ok(con, &["CMS.QUERY", key, "a", "b", "r3"]),
                Value::Array(vec![Value::Int(0); 3]),
                "{key}"
            );
        }
        assert_eq!(query(con, "day", "a"), 5);
    }

    // The rotations reached the AOF as CMS.ROTATE with the master's times.
    let text = String::from_utf8_lossy(&aof_bytes(&master)).into_owned();
    let rotations = text.matches("CMS.ROTATE").count();
    assert!(rotations >= 3, "{rotations} CMS.ROTATE in the AOF");
}

/// Compares each key's digest with the one it had; `gens` rotates at `stable_until_ms`, and is
/// compared only before it.
fn assert_unchanged(
    con: &mut Connection,
    keys: &[&str],
    before: &[String],
    stable_until_ms: u64,
    what: &str,
) {
    let stable = now_ms() < stable_until_ms;
    for (key, before) in keys.iter().zip(before) {
        if key.starts_with("gens") && !stable {
            eprintln!("{what}: {key} not compared, the test ran past its next rotation");
            continue;
        }
        assert_eq!(&digest(con, key), before, "{what}: digest of {key}");
    }
}

#[test]
fn reload_rewrite_restart_copy_and_restore_keep_windowed_sketches_bit_for_bit() {
    const SPAN: u64 = 750;
    let aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"];
    let mut server = Server::start_with(&[], &aof);
    let mut con = server.connection();
    ok(&mut con, &["CMS.INITBYDIM", "day", "500", "3", "WINDOW", DAY]);
    ok(
        &mut con,
        &[
            "CMS.INITBYPROB",
            "day-narrow",
            "0.01",
            "0.05",
            "CELL_SIZE",
            "1",
            "WINDOW",
            DAY,
            "GENERATIONS",
            "7",
        ],
    );
    ok(&mut con, &["CMS.INCRBY", "day", "a", "5", "b", "7"]);
    ok(&mut con, &["CMS.INCRBY", "day-narrow", "a", "255"]);
    // A key with a generation in each of three spans.
    wait_for_next_span(SPAN, 50);
    let first_span = now_ms() / SPAN;
    ok(&mut con, &["CMS.INITBYDIM", "gens", "500", "3", "WINDOW", "3000", "GENERATIONS", "4"]);
    for round in 0..3 {
        if round > 0 {
            wait_for_next_span(SPAN, 50);
        }
        ok(&mut con, &["CMS.INCRBY", "gens", &format!("g{round}"), "4", "all", "1"]);
    }
    // Once the third span has closed, nothing changes until the first generation expires.
    wait_for_next_span(SPAN, 150);
    let stable_until = (first_span + 5) * SPAN - 100;
    let originals = ["day", "day-narrow", "gens"];
    for key in originals {
        assert_eq!(ok(&mut con, &["TYPE", key]), simple(TYPE_NAME));
        assert_eq!(int(&mut con, &["COPY", key, &format!("{key}:copy")]), 1);
        let payload = dump_payload(&mut con, key);
        call_bytes(&mut con, &[b"RESTORE", format!("{key}:restored").as_bytes(), b"0", &payload])
            .expect("RESTORE");
    }
    let keys = [
        "day",
        "day-narrow",
        "gens",
        "day:copy",
        "day-narrow:copy",
        "gens:copy",
        "day:restored",
        "day-narrow:restored",
        "gens:restored",
    ];
    let before = digests(&mut con, &keys[..3]);
    let before: Vec<String> = before.iter().cycle().take(keys.len()).cloned().collect();
    assert_unchanged(&mut con, &keys, &before, stable_until, "COPY and RESTORE");

    ok(&mut con, &["DEBUG", "RELOAD"]);
    assert_unchanged(&mut con, &keys, &before, stable_until, "after DEBUG RELOAD");
    ok(&mut con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut con);
    server.restart();
    let mut con = server.connection();
    assert_unchanged(&mut con, &keys, &before, stable_until, "after an AOF rewrite and restart");
    ok(&mut con, &["SAVE"]);
    ok(&mut con, &["CONFIG", "SET", "appendonly", "no"]);
    server.restart_with_module_args(&[]);
    let mut con = server.connection();
    assert_unchanged(&mut con, &keys, &before, stable_until, "after SAVE and a restart from the RDB");
    if now_ms() < stable_until {
        for key in ["gens", "gens:copy", "gens:restored"] {
            assert_eq!(
                ok(&mut con, &["CMS.QUERY", key, "g0", "g2", "all"]),
                Value::Array(vec![Value::Int(4), Value::Int(4), Value::Int(3)])
            );
        }
    }
    assert_eq!(query(&mut con, "day-narrow:restored", "a"), 255);
}

#[test]
fn a_server_down_longer_than_the_window_forgets_by_rdb_and_by_aof() {
    const WINDOW: u64 = 1500;
    let bound = Duration::from_millis(WINDOW + WINDOW / 4);
    for aof in [false, true] {
        let config: &[&str] = if aof {
            &["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"]
        } else {
            &[]
        };
        let mut server = Server::start_with(&[], config);
        let mut con = server.connection();
        ok(&mut con, &["CMS.INITBYDIM", "short", "1000", "4", "WINDOW", "1500"]);
        ok(&mut con, &["CMS.INITBYDIM", "day", "1000", "4", "WINDOW", DAY]);
        ok(&mut con, &["CMS.INCRBY", "day", "a", "9"]);
        let sent = Instant::now();
        ok(&mut con, &["CMS.INCRBY", "short", "a", "5"]);
        let answered = Instant::now();
        let day = digest(&mut con, "day");
        if !aof {
            ok(&mut con, &["SAVE"]);
        }
        // A quick restart keeps what is still within its window.
        server.restart();
        let mut con = server.connection();
        if sent.elapsed() + MARGIN < Duration::from_millis(WINDOW) {
            assert_eq!(query(&mut con, "short", "a"), 5, "aof {aof}: after a quick restart");
        }
        ok(&mut con, &["CMS.INCRBY", "short", "b", "2"]);
        let later = Instant::now();
        if !aof {
            ok(&mut con, &["SAVE"]);
        }
        server.kill();
        std::thread::sleep((later + bound + MARGIN).saturating_duration_since(Instant::now()));
        server.launch();
        let mut con = server.connection();
        assert_eq!(ok(&mut con, &["TYPE", "short"]), simple(TYPE_NAME));
        assert!(answered.elapsed() > bound);
        assert_eq!(
            ok(&mut con, &["CMS.QUERY", "short", "a", "b"]),
            Value::Array(vec![Value::Int(0); 2]),
            "aof {aof}"
        );
        assert_eq!(digest(&mut con, "day"), day, "aof {aof}");
        assert_eq!(query(&mut con, "day", "a"), 9);
        assert_eq!(ok(&mut con, &["CMS.INCRBY", "short", "a", "1"]), Value::Array(vec![Value::Int(1)]));
    }
}

/// RedisBloom 2.8.2 knows no `rbCMSwind`: it refuses a DUMP of one, and an RDB holding one
/// stops it with the type's name in its log, rather than misreading it.
#[test]
fn redisbloom_refuses_the_windowed_sketch() {
    let ours = Server::start();
    let mut con = ours.connection();
    ok(&mut con, &["CMS.INITBYDIM", "w", "100", "3", "WINDOW", DAY]);
    ok(&mut con, &["CMS.INCRBY", "w", "a", "1"]);
    let payload = dump_payload(&mut con, "w");
    let redisbloom = Server::start_redisbloom(&[]);
    let mut theirs = redisbloom.connection();
    let refused = call_bytes(&mut theirs, &[b"RESTORE", b"w", b"0", &payload]);
    assert!(refused.is_err_and(|error| error.contains("Bad data format")));
    ok(&mut con, &["SAVE"]);
    let mut by_rdb = Server::prepared(redisbloom_path(), &[], &[]);
    by_rdb.take_file(&ours, "dump.rdb");
    let log = by_rdb.run_until_exit();
    assert!(log.contains(TYPE_NAME), "{log}");
}
