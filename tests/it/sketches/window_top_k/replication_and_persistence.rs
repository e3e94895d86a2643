//! Rotations decided by the master and replicated as TOPK.ROTATE, and lists kept (RDB, AOF
//! rewrite, restart) exactly, with absolute times: down longer than the window, they forget.

use super::{
    assert_counted, assert_forgotten, forget_after, listed, now_ms, sleep_until, write, DAY, MARGIN,
    TYPE_NAME,
};
use crate::harness::*;
use crate::window::wait_for_next_span;
use redis::Connection;
use std::time::Duration;

/// Writes that collide and decay (a narrow list), over several spans.
fn writes(con: &mut Connection, key: &str, round: usize) {
    let items: Vec<String> = (0..60).map(|n| format!("i{}", (n * 7 + round * 3) % 23)).collect();
    let mut args = vec!["TOPK.ADD", key];
    args.extend(items.iter().map(String::as_str));
    ok(con, &args);
    ok(con, &["TOPK.INCRBY", key, &format!("heavy{round}"), "40", "i1", "3"]);
}

#[test]
fn a_replica_applies_its_masters_rotations_and_holds_the_same_list() {
    const WINDOW: u64 = 1000;
    let master = Server::start_with(&[], &["--appendonly", "yes", "--appendfsync", "always"]);
    let mut on_master = master.connection();
    ok(&mut on_master, &["TOPK.RESERVE", "win", "4", "8", "3", "0.9", "WINDOW", "1000", "GENERATIONS", "4"]);
    ok(&mut on_master, &["TOPK.RESERVE", "day", "4", "8", "3", "0.9", "WINDOW", DAY]);
    writes(&mut on_master, "win", 0);
    writes(&mut on_master, "day", 0);

    // A full sync, then commands and rotations.
    let replica = Server::start_with(&[], &["--replicaof", "127.0.0.1", &master.port.to_string()]);
    let mut on_replica = replica.connection();
    assert_replica_matches(&mut on_master, &mut on_replica, &["win", "day"]);
    let mut last = None;
    for round in 1..5 {
        std::thread::sleep(Duration::from_millis(300));
        last = Some(write(&mut on_master, &["TOPK.INCRBY", "win", "last", "1"]));
        writes(&mut on_master, "win", round);
        assert_replica_matches(&mut on_master, &mut on_replica, &["win", "day"]);
        assert_eq!(listed(&mut on_replica, "win"), listed(&mut on_master, "win"), "round {round}");
    }
    let last = last.expect("writes");
    // Once every generation expired and the master dropped it, the replica forgets too.
    sleep_until(
        last.answered + forget_after(WINDOW, 4) + Duration::from_millis(500) + Duration::from_secs(1),
    );
    assert_replica_matches(&mut on_master, &mut on_replica, &["win", "day"]);
    assert_forgotten(&mut on_replica, "win", "last", last, forget_after(WINDOW, 4));
    assert_forgotten(&mut on_master, "win", "last", last, forget_after(WINDOW, 4));
    assert!(listed(&mut on_replica, "win").is_empty());
    assert_eq!(listed(&mut on_replica, "day"), listed(&mut on_master, "day"));
    assert!(!listed(&mut on_replica, "day").is_empty());
    // The rotations reached the AOF (and the replica) as TOPK.ROTATE.
    wait_for_rewrite(&mut on_master);
    let rotations = String::from_utf8_lossy(&aof_bytes(&master)).matches("TOPK.ROTATE").count();
    assert!(rotations >= 3, "{rotations} TOPK.ROTATE in the AOF");
}

#[test]
fn reload_aof_rewrite_and_restart_keep_windowed_lists_exactly() {
    const SPAN: u64 = 750;
    let aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"];
    let mut server = Server::start_with(&[], &aof);
    let mut con = server.connection();
    ok(&mut con, &["TOPK.RESERVE", "day", "4", "8", "3", "0.9", "WINDOW", DAY]);
    writes(&mut con, "day", 0);
    // A key with a generation in each of three spans of 750 ms, then nothing changes until
    // the first expires, 3 s after it opened.
    wait_for_next_span(SPAN, 50);
    let first_span_start = now_ms() - now_ms() % SPAN;
    ok(&mut con, &["TOPK.RESERVE", "gens", "4", "8", "3", "0.9", "WINDOW", "3000", "GENERATIONS", "4"]);
    for round in 0..3 {
        if round > 0 {
            wait_for_next_span(SPAN, 50);
        }
        writes(&mut con, "gens", round);
    }
    wait_for_next_span(SPAN, 100);
    let stable_until = first_span_start + SPAN + 3000 - 100;
    let keys = ["day", "gens"];
    let digests = |con: &mut Connection| -> Vec<String> { keys.iter().map(|key| digest(con, key)).collect() };
    let lists = |con: &mut Connection| -> Vec<Vec<(String, i64)>> {
        keys.iter().map(|key| listed(con, key)).collect()
    };
    let (before, lists_before) = (digests(&mut con), lists(&mut con));
    let check = |con: &mut Connection, what: &str| {
        if now_ms() >= stable_until {
            eprintln!("{what}: not compared, the test ran past the next rotation");
            return;
        }
        assert_eq!(digests(con), before, "{what}");
        assert_eq!(lists(con), lists_before, "{what}");
    };
    ok(&mut con, &["DEBUG", "RELOAD"]);
    check(&mut con, "after DEBUG RELOAD");
    ok(&mut con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut con);
    server.restart();
    let mut con = server.connection();
    check(&mut con, "after an AOF rewrite and restart");
    for key in keys {
        assert_eq!(ok(&mut con, &["TYPE", key]), simple(TYPE_NAME), "{key}");
    }
    ok(&mut con, &["CONFIG", "SET", "appendonly", "no"]);
    ok(&mut con, &["SAVE"]);
    server.restart();
    let mut con = server.connection();
    check(&mut con, "after SAVE and a restart");
}

/// RDB and AOF (with commands after its rewrite) hold absolute times: a server down longer
/// than the window comes back having forgotten, and one back sooner still counts.
#[test]
fn a_server_down_longer_than_the_window_comes_back_having_forgotten() {
    const WINDOW: u64 = 1200;
    let window = Duration::from_millis(WINDOW);
    let bound = forget_after(WINDOW, 4);
    let aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"];
    let mut by_rdb = Server::start();
    let mut by_aof = Server::start_with(&[], &aof);
    let mut written = Vec::new();
    for (server, name) in [(&by_rdb, "rdb"), (&by_aof, "aof")] {
        let mut con = server.connection();
        ok(&mut con, &["TOPK.RESERVE", "short", "4", "50", "4", "0.9", "WINDOW", "1200"]);
        ok(&mut con, &["TOPK.RESERVE", "day", "4", "50", "4", "0.9", "WINDOW", DAY]);
        ok(&mut con, &["TOPK.INCRBY", "day", "kept", "9"]);
        let base = write(&mut con, &["TOPK.INCRBY", "short", "base", "5"]);
        if name == "aof" {
            ok(&mut con, &["BGREWRITEAOF"]);
            wait_for_rewrite(&mut con);
        }
        let later = write(&mut con, &["TOPK.INCRBY", "short", "later", "6"]);
        ok(&mut con, &["TOPK.RESERVE", "created", "4", "WINDOW", "1200"]);
        let created = write(&mut con, &["TOPK.INCRBY", "created", "later", "6"]);
        if name == "rdb" {
            ok(&mut con, &["SAVE"]);
        }
        written.push((base, later, created));
    }
    // A quick restart keeps what is within its window.
    by_rdb.restart();
    by_aof.restart();
    for (server, (base, later, created)) in [&by_rdb, &by_aof].into_iter().zip(&written) {
        let mut con = server.connection();
        assert_counted(&mut con, "short", "base", 5, *base, window.saturating_sub(MARGIN));
        assert_counted(&mut con, "short", "later", 6, *later, window.saturating_sub(MARGIN));
        assert_counted(&mut con, "created", "later", 6, *created, window.saturating_sub(MARGIN));
    }
    // Down longer than the window.
    by_rdb.kill();
    by_aof.kill();
    let newest = written.iter().map(|(_, _, created)| created.answered).max().expect("two servers");
    sleep_until(newest + bound + MARGIN);
    by_rdb.launch();
    by_aof.launch();
    for (server, (base, later, created)) in [&by_rdb, &by_aof].into_iter().zip(&written) {
        let mut con = server.connection();
        assert_eq!(ok(&mut con, &["TYPE", "short"]), simple(TYPE_NAME));
        assert_forgotten(&mut con, "short", "base", *base, bound);
        assert_forgotten(&mut con, "short", "later", *later, bound);
        assert_forgotten(&mut con, "created", "later", *created, bound);
        assert_eq!(listed(&mut con, "day"), [("kept".to_string(), 9)]);
    }
}
