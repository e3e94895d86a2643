//! What a command acknowledged survives every way Redis moves or keeps data, bit for bit:
//! DEBUG DIGEST-VALUE is unchanged and every item still tests present.

use crate::harness::*;
use redis::{Connection, Value};

/// A few filters of every shape, with the items each acknowledged.
fn populate(con: &mut Connection) -> Vec<(String, Vec<String>)> {
    ok(con, &["BF.RESERVE", "grown", "0.01", "100", "EXPANSION", "2"]);
    ok(con, &["BF.RESERVE", "fixed", "0.001", "5000", "NONSCALING"]);
    let mut filters = Vec::new();
    for (key, count) in [("grown", 3000), ("fixed", 4000), ("defaults", 500)] {
        let items: Vec<String> = (0..count).map(|n| format!("{key}:{n}")).collect();
        madd_all(con, key, items.iter().cloned());
        filters.push((key.to_string(), items));
    }
    assert!(int(con, &["BF.CARD", "grown"]) > 2900);
    filters
}

fn digests(con: &mut Connection, filters: &[(String, Vec<String>)]) -> Vec<String> {
    filters.iter().map(|(key, _)| digest(con, key)).collect()
}

fn assert_intact(con: &mut Connection, filters: &[(String, Vec<String>)], before: &[String]) {
    assert_eq!(digests(con, filters), before);
    for (key, items) in filters {
        assert_eq!(count_present(con, key, items.iter().cloned()), items.len() as u64, "{key}");
        assert_eq!(ok(con, &["TYPE", key]), Value::SimpleString("MBbloom--".into()));
    }
}

#[test]
fn save_and_restart() {
    let mut server = Server::start();
    let mut con = server.connection();
    let filters = populate(&mut con);
    let before = digests(&mut con, &filters);
    ok(&mut con, &["SAVE"]);
    server.restart();
    assert_intact(&mut server.connection(), &filters, &before);
}

#[test]
fn debug_reload() {
    let server = Server::start();
    let mut con = server.connection();
    let filters = populate(&mut con);
    let before = digests(&mut con, &filters);
    ok(&mut con, &["DEBUG", "RELOAD"]);
    assert_intact(&mut con, &filters, &before);
}

#[test]
fn aof_rewrite_without_preamble_and_restart() {
    let mut server = Server::start_with(&[], &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    let mut con = server.connection();
    let mut filters = populate(&mut con);
    // A filter above 16 MiB, so that the rewrite must cut it into several chunks.
    ok(&mut con, &["BF.RESERVE", "large", "0.01", "20000000", "NONSCALING"]);
    let items: Vec<String> = (0..1000).map(|n| format!("large:{n}")).collect();
    madd_all(&mut con, "large", items.iter().cloned());
    filters.push(("large".to_string(), items));
    let before = digests(&mut con, &filters);
    ok(&mut con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut con);

    let base = std::fs::read_dir(server.dir().join("appendonlydir"))
        .expect("appendonlydir")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.to_string_lossy().ends_with(".base.aof"))
        .expect("a base AOF");
    let aof = std::fs::read(&base).unwrap();
    assert!(!aof.starts_with(b"REDIS"), "the base must be commands, not an RDB preamble");
    let loadchunks = aof.windows(12).filter(|w| w == b"BF.LOADCHUNK").count();
    // Header + at least two chunks for the large filter, header + chunk for each other.
    assert!(loadchunks >= 3 + 2 * 3, "{loadchunks} BF.LOADCHUNK commands");
    assert!(largest_bulk(&aof) <= 16 << 20, "a bulk string above 16 MiB");

    server.restart();
    assert_intact(&mut server.connection(), &filters, &before);
}

/// The largest `$<len>` bulk length announced in a RESP stream.
fn largest_bulk(stream: &[u8]) -> usize {
    let mut largest = 0;
    let mut at = 0;
    while at < stream.len() {
        if stream[at] == b'$' && (at == 0 || stream[at - 1] == b'\n') {
            let end = stream[at..].iter().position(|&b| b == b'\r').map_or(stream.len(), |p| at + p);
            if let Some(len) =
                std::str::from_utf8(&stream[at + 1..end]).ok().and_then(|s| s.parse::<usize>().ok())
            {
                largest = largest.max(len);
                at = end + 2 + len;
                continue;
            }
        }
        at += 1;
    }
    largest
}

#[test]
fn aof_replays_creations_with_the_parameters_they_had() {
    // Created from defaults, then replayed by a server with other defaults.
    let mut server = Server::start_with(
        &["INITIAL_SIZE", "50", "ERROR_RATE", "0.02", "format", "redisbloom"],
        &["--appendonly", "yes"],
    );
    let mut con = server.connection();
    ok(&mut con, &["BF.ADD", "a", "x"]);
    ok(&mut con, &["BF.MADD", "b", "x", "y"]);
    ok(&mut con, &["BF.INSERT", "c", "CAPACITY", "70", "ITEMS", "x"]);
    ok(&mut con, &["BF.RESERVE", "d", "0.01", "100"]);
    ok(&mut con, &["BF.RESERVE", "e", "0.01", "100", "FORMAT", "REDBLOOM"]);
    let keys = ["a", "b", "c", "d", "e"];
    let before: Vec<String> = keys.iter().map(|key| digest(&mut con, key)).collect();
    server.restart_with_module_args(&["INITIAL_SIZE", "999", "ERROR_RATE", "0.1", "EXPANSION", "7"]);
    let mut con = server.connection();
    let after: Vec<String> = keys.iter().map(|key| digest(&mut con, key)).collect();
    assert_eq!(before, after);
    assert_eq!(
        ok(&mut con, &["CONFIG", "GET", "bf.initial-size"]),
        Value::Array(vec![
            Value::BulkString(b"bf.initial-size".to_vec()),
            Value::BulkString(b"999".to_vec())
        ])
    );
}

#[test]
fn dump_restore_and_copy() {
    let server = Server::start();
    let mut con = server.connection();
    let filters = populate(&mut con);
    for (key, items) in &filters {
        let payload = match ok(&mut con, &["DUMP", key]) {
            Value::BulkString(bytes) => bytes,
            other => panic!("{other:?}"),
        };
        let restored = format!("{key}-restored");
        call_bytes(&mut con, &[b"RESTORE", restored.as_bytes(), b"0", &payload]).expect("RESTORE");
        assert_eq!(digest(&mut con, &restored), digest(&mut con, key));
        let copied = format!("{key}-copied");
        assert_eq!(int(&mut con, &["COPY", key, &copied]), 1);
        assert_eq!(digest(&mut con, &copied), digest(&mut con, key));
        assert_eq!(count_present(&mut con, &copied, items.iter().cloned()), items.len() as u64);
        // The copy is independent of the original.
        let before = digest(&mut con, key);
        madd_all(&mut con, &copied, (0..100).map(|n| format!("only-in-copy:{n}")));
        assert_ne!(digest(&mut con, &copied), before);
        assert_eq!(digest(&mut con, key), before);
        assert!(int(&mut con, &["MEMORY", "USAGE", &copied]) > 0);
    }
}

#[test]
fn scandump_into_loadchunk_on_another_key() {
    let server = Server::start();
    let mut con = server.connection();
    let mut filters = populate(&mut con);
    ok(&mut con, &["BF.RESERVE", "large", "0.001", "12000000"]);
    madd_all(&mut con, "large", (0..100).map(|n| format!("large:{n}")));
    filters.push(("large".to_string(), (0..100).map(|n| format!("large:{n}")).collect()));
    for (key, items) in &filters {
        let target = format!("{key}-loaded");
        let mut iterator = 0i64;
        let mut chunks = 0;
        loop {
            let Value::Array(reply) = ok(&mut con, &["BF.SCANDUMP", key, &iterator.to_string()]) else {
                panic!()
            };
            let (Value::Int(next), Value::BulkString(data)) = (&reply[0], &reply[1]) else {
                panic!("{reply:?}")
            };
            if *next == 0 {
                assert!(data.is_empty());
                break;
            }
            assert!(data.len() <= 16 << 20);
            call_bytes(&mut con, &[b"BF.LOADCHUNK", target.as_bytes(), next.to_string().as_bytes(), data])
                .expect("BF.LOADCHUNK");
            iterator = *next;
            chunks += 1;
        }
        assert!(chunks >= 2);
        assert_eq!(digest(&mut con, &target), digest(&mut con, key), "{key}");
        assert_eq!(count_present(&mut con, &target, items.iter().cloned()), items.len() as u64);
        assert_eq!(int(&mut con, &["BF.CARD", &target]), int(&mut con, &["BF.CARD", key]));
    }
}
