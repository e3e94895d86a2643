//! A replica with other bf.* defaults ends with exactly its master's filters.

use crate::harness::*;
use redis::{Connection, Value};

fn writes(con: &mut Connection, prefix: &str) {
    ok(con, &["BF.ADD", &format!("{prefix}add"), "x"]);
    madd_all(con, &format!("{prefix}madd"), (0..2000).map(|n| format!("m{n}")));
    ok(con, &["BF.INSERT", &format!("{prefix}insert"), "CAPACITY", "30", "ITEMS", "a", "b", "c"]);
    ok(con, &["BF.INSERT", &format!("{prefix}insert-error"), "ERROR", "0.2", "ITEMS", "a"]);
    ok(con, &["BF.RESERVE", &format!("{prefix}reserve"), "0.001", "40"]);
    madd_all(con, &format!("{prefix}reserve"), (0..500).map(|n| format!("r{n}")));
    ok(con, &["BF.RESERVE", &format!("{prefix}fixed"), "0.01", "3", "NONSCALING"]);
    ok(con, &["BF.MADD", &format!("{prefix}fixed"), "1", "2", "3", "4", "5"]);
    // Both formats, named and by default, growing.
    for format in ["REDISBLOOM", "REDBLOOM"] {
        let key = format!("{prefix}reserve-{format}");
        ok(con, &["BF.RESERVE", &key, "0.01", "20", "FORMAT", format]);
        madd_all(con, &key, (0..300).map(|n| format!("f{n}")));
        ok(con, &["BF.INSERT", &format!("{prefix}insert-{format}"), "FORMAT", format, "ITEMS", "a", "b"]);
    }
    // A SCANDUMP/LOADCHUNK copy replicates too.
    let source = format!("{prefix}madd");
    let target = format!("{prefix}loaded");
    let mut iterator = 0i64;
    loop {
        let Value::Array(reply) = ok(con, &["BF.SCANDUMP", &source, &iterator.to_string()]) else { panic!() };
        let (Value::Int(next), Value::BulkString(data)) = (&reply[0], &reply[1]) else { panic!() };
        if *next == 0 {
            break;
        }
        call_bytes(con, &[b"BF.LOADCHUNK", target.as_bytes(), next.to_string().as_bytes(), data]).unwrap();
        iterator = *next;
    }
}

#[test]
fn a_replica_with_other_defaults_matches_its_master() {
    for (master_format, replica_format) in [("redbloom", "redisbloom"), ("redisbloom", "redbloom")] {
        let master = Server::start_with(&["format", master_format], &[]);
        let mut on_master = master.connection();
        writes(&mut on_master, "before-sync:");

        let master_port = master.port.to_string();
        let replica = Server::start_with(
            &["ERROR_RATE", "0.2", "INITIAL_SIZE", "7", "bf.expansion-factor", "9", "format", replica_format],
            &["--replicaof", "127.0.0.1", &master_port],
        );
        let mut on_replica = replica.connection();
        wait_in_sync(&mut on_master, &mut on_replica);
        writes(&mut on_master, "after-sync:");
        wait_in_sync(&mut on_master, &mut on_replica);

        let master_keys = keys(&mut on_master);
        assert_eq!(master_keys.len(), 22);
        assert_eq!(keys(&mut on_replica), master_keys);
        for key in &master_keys {
            assert_eq!(digest(&mut on_replica, key), digest(&mut on_master, key), "{key}");
            assert_eq!(
                ok(&mut on_replica, &["BF.DEBUG", key]),
                ok(&mut on_master, &["BF.DEBUG", key]),
                "{key}"
            );
        }
        assert_eq!(ok(&mut on_replica, &["DEBUG", "DIGEST"]), ok(&mut on_master, &["DEBUG", "DIGEST"]));
    }
}

#[test]
fn commands_that_change_nothing_are_not_replicated() {
    // The offset only moves while a replica listens; its pings must not move it meanwhile.
    let master = Server::start_with(&[], &["--repl-ping-replica-period", "3600"]);
    let replica = Server::start_with(&[], &["--replicaof", "127.0.0.1", &master.port.to_string()]);
    let mut con = master.connection();
    wait_in_sync(&mut con, &mut replica.connection());
    ok(&mut con, &["BF.MADD", "k", "a", "b"]);
    ok(&mut con, &["BF.RESERVE", "full", "0.01", "1", "NONSCALING"]);
    ok(&mut con, &["BF.ADD", "full", "only"]);
    // A windowed filter whose current generation holds the items (a span of six hours).
    ok(&mut con, &["BF.RESERVE", "w", "0.01", "100", "WINDOW", "86400000"]);
    ok(&mut con, &["BF.MADD", "w", "a", "b"]);
    let before = master_offset(&mut con);
    ok(&mut con, &["BF.ADD", "k", "a"]);
    ok(&mut con, &["BF.MADD", "k", "a", "b"]);
    ok(&mut con, &["BF.INSERT", "k", "ITEMS", "b"]);
    ok(&mut con, &["BF.ADD", "w", "a"]);
    ok(&mut con, &["BF.MADD", "w", "a", "b"]);
    ok(&mut con, &["BF.INSERT", "w", "ITEMS", "b"]);
    ok(&mut con, &["BF.EXISTS", "k", "a"]);
    let _ = call(&mut con, &["BF.ADD", "full", "new item"]);
    let _ = call(&mut con, &["BF.RESERVE", "k", "0.01", "100"]);
    let _ = call(&mut con, &["BF.INSERT", "missing", "NOCREATE", "ITEMS", "a"]);
    assert_eq!(master_offset(&mut con), before);
    ok(&mut con, &["BF.ADD", "k", "c"]);
    assert!(master_offset(&mut con) > before);

    // An add of an item an older generation holds answers 0 and still changes the filter (the
    // current generation takes it, and its window starts again): it is replicated.
    ok(&mut con, &["BF.RESERVE", "short", "0.01", "100", "WINDOW", "4000", "GENERATIONS", "4"]);
    crate::window::wait_for_next_span(1000, 50);
    assert_eq!(int(&mut con, &["BF.ADD", "short", "x"]), 1);
    crate::window::wait_for_next_span(1000, 50);
    // A new item first, so that the rotation to the new span is replicated before.
    assert_eq!(int(&mut con, &["BF.ADD", "short", "y"]), 1);
    let before_renewal = master_offset(&mut con);
    assert_eq!(int(&mut con, &["BF.ADD", "short", "x"]), 0);
    assert!(master_offset(&mut con) > before_renewal, "a renewing add was not replicated");
    let after_renewal = master_offset(&mut con);
    assert_eq!(int(&mut con, &["BF.ADD", "short", "x"]), 0);
    assert_eq!(master_offset(&mut con), after_renewal, "the current generation held it");
    wait_in_sync(&mut con, &mut replica.connection());
    for key in ["k", "w", "short"] {
        assert_eq!(digest(&mut replica.connection(), key), digest(&mut con, key), "{key}");
    }
}

#[test]
fn a_replica_gets_only_the_items_its_master_accepted() {
    // The master refuses to grow past a small budget; replicas have none. They must still
    // end with what the master has, not with the items it refused.
    let master = Server::start_with(&["max-filter-bytes", "20000"], &["--appendonly", "yes"]);
    let replica = Server::start_with(&[], &["--replicaof", "127.0.0.1", &master.port.to_string()]);
    let mut con = master.connection();
    wait_in_sync(&mut con, &mut replica.connection());

    ok(&mut con, &["BF.RESERVE", "grows", "0.01", "1000", "EXPANSION", "4"]);
    let mut refused = false;
    for batch in 0..20 {
        let items: Vec<String> = (0..400).map(|n| format!("{batch}:{n}")).collect();
        let mut args = vec!["BF.MADD", "grows"];
        args.extend(items.iter().map(String::as_str));
        let Value::Array(replies) = ok(&mut con, &args) else { panic!() };
        if let Some(Value::ServerError(error)) = replies.last() {
            assert_eq!(server_error_text(error), "ERR Insufficient memory to create filter");
            refused = true;
            break;
        }
    }
    assert!(refused, "the budget was never reached");
    // A filter created by BF.MADD from defaults, stopped part-way the same way.
    let items: Vec<String> = (0..20_000).map(|n| format!("fresh:{n}")).collect();
    let mut args = vec!["BF.MADD", "fresh"];
    args.extend(items.iter().map(String::as_str));
    let Value::Array(replies) = ok(&mut con, &args) else { panic!() };
    assert!(matches!(replies.last(), Some(Value::ServerError(_))), "fresh was not refused");

    wait_in_sync(&mut con, &mut replica.connection());
    let mut on_replica = replica.connection();
    for key in ["grows", "fresh"] {
        assert_eq!(int(&mut on_replica, &["BF.CARD", key]), int(&mut con, &["BF.CARD", key]), "{key}");
        assert_eq!(digest(&mut on_replica, key), digest(&mut con, key), "{key}");
    }
    // The AOF holds the same: after a restart the master has what it acknowledged, no more.
    let before = [digest(&mut con, "grows"), digest(&mut con, "fresh")];
    drop(con);
    let mut master = master;
    master.restart();
    let mut con = master.connection();
    assert_eq!([digest(&mut con, "grows"), digest(&mut con, "fresh")], before);
}

/// A replica takes what its master took, whatever its own cap: a filter refused there would be
/// a key the master has and the replica lacks. RESTORE (what MIGRATE sends) and the commands
/// that create filters alike.
#[test]
fn a_replica_with_a_smaller_cap_keeps_every_filter_of_its_master() {
    // Uncompressed, so that the DUMP payload is as large as a full filter's would be.
    let master = Server::start_with(&[], &["--rdbcompression", "no"]);
    let replica = Server::start_with(
        &["max-filter-bytes", "1048576"],
        &["--replicaof", "127.0.0.1", &master.port.to_string()],
    );
    let (mut on_master, mut on_replica) = (master.connection(), replica.connection());
    wait_in_sync(&mut on_master, &mut on_replica);
    ok(&mut on_master, &["BF.RESERVE", "large", "0.01", "3000000"]);
    ok(&mut on_master, &["BF.ADD", "large", "a"]);
    let payload = dump_payload(&mut on_master, "large");
    assert!(payload.len() > 2 * 1_048_576, "{} bytes", payload.len());
    call_bytes(&mut on_master, &[b"RESTORE", b"restored", b"0", &payload]).expect("RESTORE on the master");
    wait_in_sync(&mut on_master, &mut on_replica);
    for key in ["large", "restored"] {
        assert_eq!(int(&mut on_replica, &["EXISTS", key]), 1, "{key} is missing on the replica");
        assert_eq!(digest(&mut on_replica, key), digest(&mut on_master, key), "{key}");
    }
}
