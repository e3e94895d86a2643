//! The server under pressure: maxmemory reached, kill -9 in the middle of writes and of an
//! AOF rewrite, access control, and freeing a large filter without stalling.

use crate::harness::*;
use redis::{Connection, Value};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A field INFO must have.
fn info_field(con: &mut Connection, section: &str, name: &str) -> String {
    crate::harness::info_field(con, section, name)
        .unwrap_or_else(|| panic!("{name} missing from INFO {section}"))
}

#[test]
fn at_maxmemory_writes_are_refused_and_reads_go_on() {
    let server = Server::start_with(&[], &["--maxmemory", "40mb", "--maxmemory-policy", "noeviction"]);
    let mut con = server.connection();
    ok(&mut con, &["BF.MADD", "kept", "a", "b", "c"]);
    let Value::Array(dump) = ok(&mut con, &["BF.SCANDUMP", "kept", "0"]) else { panic!() };
    let Value::BulkString(header) = dump[1].clone() else { panic!() };
    // Fill memory with filters until Redis refuses.
    let mut refused = None;
    for n in 0..100 {
        if let Err(error) =
            call(&mut con, &["BF.RESERVE", &format!("filler{n}"), "0.01", "4000000", "NONSCALING"])
        {
            refused = Some(error);
            break;
        }
    }
    let refused = refused.expect("maxmemory was never reached");
    assert!(refused.starts_with("OOM"), "{refused}");
    for args in [
        &["BF.ADD", "kept", "new"][..],
        &["BF.MADD", "kept", "x", "y"],
        &["BF.INSERT", "kept", "ITEMS", "z"],
        &["BF.ADD", "fresh", "a"],
        &["BF.RESERVE", "fresh", "0.01", "10"],
    ] {
        assert!(err(&mut con, args).starts_with("OOM"), "{args:?}");
    }
    let loadchunk = call_bytes(&mut con, &[b"BF.LOADCHUNK", b"copy", b"1", &header]);
    assert!(loadchunk.unwrap_err().starts_with("OOM"));
    assert_eq!(int(&mut con, &["BF.EXISTS", "kept", "a"]), 1);
    assert_eq!(
        ok(&mut con, &["BF.MEXISTS", "kept", "a", "new"]),
        Value::Array(vec![Value::Int(1), Value::Int(0)])
    );
    assert_eq!(int(&mut con, &["BF.CARD", "kept"]), 3);
    ok(&mut con, &["BF.INFO", "kept"]);
    ok(&mut con, &["BF.SCANDUMP", "kept", "1"]);
    ok(&mut con, &["BF.DEBUG", "kept"]);
    assert_eq!(int(&mut con, &["EXISTS", "fresh", "copy"]), 0);
}

#[test]
fn a_filter_beyond_the_cap_leaves_the_server_as_it_was() {
    let server = Server::start_with(&["max-filter-bytes", "10000000"], &[]);
    let mut con = server.connection();
    ok(&mut con, &["BF.MADD", "kept", "a", "b"]);
    let keys = int(&mut con, &["DBSIZE"]);
    let used: i64 = info_field(&mut con, "memory", "used_memory").parse().unwrap();
    for args in [
        &["BF.RESERVE", "big", "0.01", "100000000"][..],
        &["BF.INSERT", "big", "CAPACITY", "100000000", "ITEMS", "a"],
        &["BF.RESERVE", "big", "0.0000001", "1073741824"],
    ] {
        assert_eq!(err(&mut con, args), "ERR Insufficient memory to create filter", "{args:?}");
    }
    assert_eq!(int(&mut con, &["DBSIZE"]), keys);
    let after: i64 = info_field(&mut con, "memory", "used_memory").parse().unwrap();
    assert!((after - used).abs() < 1 << 20, "used_memory moved from {used} to {after}");
    assert_eq!(int(&mut con, &["BF.EXISTS", "kept", "b"]), 1);
}

/// The memory `maxmemory` counts is what MEMORY USAGE tells: arrays of a size the allocator
/// has a class of (every cuckoo filter, sketches of power-of-two sizes) once took the next
/// class, a quarter more, for their alignment to cache lines.
#[test]
fn used_memory_grows_by_what_memory_usage_tells() {
    let server = Server::start();
    let mut con = server.connection();
    // Valkey frees deleted keys in the background by default.
    ok(&mut con, &["CONFIG", "SET", "lazyfree-lazy-user-del", "no"]);
    let used = |con: &mut Connection| -> i64 { info_field(con, "memory", "used_memory").parse().unwrap() };
    for create in [
        &["CF.RESERVE", "k", "4194304"][..],
        &["CF.RESERVE", "k", "4194304", "BUCKETSIZE", "4"],
        &["CMS.INITBYDIM", "k", "262144", "4"],
        &["TOPK.RESERVE", "k", "10", "262144", "4", "0.9"],
    ] {
        // The first command of a kind grows the server's own buffers and tables.
        ok(&mut con, create);
        ok(&mut con, &["DEL", "k"]);
        let before = used(&mut con);
        ok(&mut con, create);
        let grown = used(&mut con) - before;
        let usage = int(&mut con, &["MEMORY", "USAGE", "k"]);
        assert!(
            (usage * 98..=usage * 102).contains(&(grown * 100)),
            "{create:?}: used_memory grew by {grown}, MEMORY USAGE {usage}"
        );
        ok(&mut con, &["DEL", "k"]);
    }
}

/// Writes batches of BF.MADD until the connection dies, telling `first` when the first batch
/// is acknowledged; answers the acknowledged items.
fn write_until_killed(port: u16, prefix: &str, first: &mpsc::Sender<()>) -> Vec<String> {
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
    let mut con = client.get_connection().unwrap();
    let mut acknowledged = Vec::new();
    for batch in 0.. {
        let items: Vec<String> = (0..50).map(|n| format!("{prefix}:{batch}:{n}")).collect();
        let mut args = vec!["BF.MADD", "crash"];
        args.extend(items.iter().map(String::as_str));
        match call(&mut con, &args) {
            Ok(_) => acknowledged.extend(items),
            Err(error) if batch == 0 => panic!("the first batch was refused: {error:?}"),
            Err(_) => break,
        }
        if batch == 0 {
            let _ = first.send(());
        }
    }
    acknowledged
}

#[test]
fn acknowledged_adds_survive_kill_9() {
    let mut server = Server::start_with(&[], &["--appendonly", "yes", "--appendfsync", "always"]);
    let mut random = Random::seeded();
    ok(&mut server.connection(), &["BF.RESERVE", "crash", "0.001", "1000", "EXPANSION", "2"]);
    // A large filter makes every AOF rewrite last long enough to be interrupted.
    ok(&mut server.connection(), &["BF.RESERVE", "large", "0.01", "100000000", "NONSCALING"]);
    let mut all = Vec::new();
    for round in 0..8 {
        let port = server.port;
        let (first, acknowledged_once) = mpsc::channel();
        let writer = std::thread::spawn(move || write_until_killed(port, &format!("round{round}"), &first));
        // A busy machine can take longer than the pause below to answer the first batch.
        match acknowledged_once.recv_timeout(Duration::from_secs(30)) {
            Ok(()) => {}
            // The writer stopped before its first answer; its panic message tells why.
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("round {round}: {:?}", writer.join()),
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("round {round}: no answer in 30 s"),
        }
        std::thread::sleep(Duration::from_millis(random.below(300) as u64));
        let during_rewrite = round % 2 == 1;
        if during_rewrite {
            let mut con = server.connection();
            ok(&mut con, &["BGREWRITEAOF"]);
            std::thread::sleep(Duration::from_millis(random.below(50) as u64));
        }
        server.kill();
        let acknowledged = writer.join().unwrap();
        assert!(!acknowledged.is_empty(), "round {round}: nothing was written");
        all.extend(acknowledged);
        server.restart();
        let mut con = server.connection();
        let present = count_present(&mut con, "crash", all.iter().cloned());
        assert_eq!(
            present,
            all.len() as u64,
            "round {round} (rewrite: {during_rewrite}): acknowledged items lost"
        );
    }
}

#[test]
fn access_control_by_key_pattern_and_category() {
    let server = Server::start();
    let mut admin = server.connection();
    ok(&mut admin, &["ACL", "SETUSER", "tenant", "on", ">secret", "~tenant:*", "+@all"]);
    ok(&mut admin, &["ACL", "SETUSER", "reader", "on", ">secret", "%R~*", "+@all"]);
    ok(&mut admin, &["BF.ADD", "other:filter", "x"]);
    let login = |user: &str| {
        let mut con = server.connection();
        ok(&mut con, &["AUTH", user, "secret"]);
        con
    };
    let mut tenant = login("tenant");
    assert_eq!(int(&mut tenant, &["BF.ADD", "tenant:f", "a"]), 1);
    assert_eq!(int(&mut tenant, &["BF.EXISTS", "tenant:f", "a"]), 1);
    for args in [
        &["BF.ADD", "other:filter", "y"][..],
        &["BF.EXISTS", "other:filter", "x"],
        &["BF.MEXISTS", "other:filter", "x"],
        &["BF.INFO", "other:filter"],
        &["BF.RESERVE", "other:new", "0.01", "10"],
        &["BF.SCANDUMP", "other:filter", "0"],
        &["BF.CARD", "other:filter"],
    ] {
        assert!(err(&mut tenant, args).starts_with("NOPERM"), "{args:?}");
    }
    // Read-only key permission: lookups pass, writes do not.
    let mut reader = login("reader");
    assert_eq!(int(&mut reader, &["BF.EXISTS", "other:filter", "x"]), 1);
    ok(&mut reader, &["BF.INFO", "other:filter"]);
    ok(&mut reader, &["BF.SCANDUMP", "other:filter", "0"]);
    for args in [
        &["BF.ADD", "other:filter", "z"][..],
        &["BF.MADD", "other:filter", "z"],
        &["BF.RESERVE", "r", "0.01", "9"],
    ] {
        assert!(err(&mut reader, args).starts_with("NOPERM"), "{args:?}");
    }
    assert_eq!(int(&mut admin, &["BF.EXISTS", "other:filter", "z"]), 0);

    // Module ACL categories exist from Redis 7.2 (@read/@write), @bloom and @cuckoo from 7.4.
    let Value::Array(categories) = ok(&mut admin, &["ACL", "CAT"]) else { panic!() };
    let has_bloom = categories.iter().any(|c| matches!(c, Value::BulkString(b) if b == b"bloom"));
    let version = info_field(&mut admin, "server", "redis_version");
    if has_bloom {
        // ACL CAT leaves module commands out of its lists; COMMAND INFO and ACL DRYRUN show
        // what a category grants.
        let Value::Array(names) = ok(&mut admin, &["COMMAND", "LIST", "FILTERBY", "MODULE", "bf"]) else {
            panic!()
        };
        let names: Vec<String> =
            names.iter().map(|name| String::from_utf8(bulk(name.clone())).unwrap()).collect();
        // The sketches' commands have a category each of their own.
        for (prefix, category) in [("cms.", "@cms"), ("topk.", "@topk"), ("tdigest.", "@tdigest")] {
            let of_sketch: Vec<&String> = names.iter().filter(|name| name.starts_with(prefix)).collect();
            assert!(!of_sketch.is_empty(), "{prefix}");
            for name in of_sketch {
                let info = format!("{:?}", ok(&mut admin, &["COMMAND", "INFO", name]));
                assert!(info.contains(category), "{name}: {info}");
            }
        }
        // BF.ROTATE runs only when a master or the AOF sends it: no user is given it.
        let names: Vec<String> = names
            .into_iter()
            .filter(|name| (name.starts_with("bf.") || name.starts_with("cf.")) && name != "bf.rotate")
            .collect();
        assert_eq!(names.len(), 25, "{names:?}");
        ok(&mut admin, &["ACL", "SETUSER", "bloom-only", "on", "nopass", "~*", "+@bloom"]);
        ok(&mut admin, &["ACL", "SETUSER", "cuckoo-only", "on", "nopass", "~*", "+@cuckoo"]);
        for name in &names {
            let Value::Array(info) = ok(&mut admin, &["COMMAND", "INFO", name]) else { panic!() };
            let Value::Array(fields) = &info[0] else { panic!("{info:?}") };
            let categories = format!("{:?}", fields[6]);
            let (category, user, other_user) = if name.starts_with("cf.") {
                ("@cuckoo", "cuckoo-only", "bloom-only")
            } else {
                ("@bloom", "bloom-only", "cuckoo-only")
            };
            assert!(categories.contains(category), "{name}: {categories}");
            assert!(categories.contains("@read") != categories.contains("@write"), "{name}: {categories}");
            let mut args = vec!["ACL", "DRYRUN", user, name.as_str(), "k"];
            args.extend(match name.as_str() {
                "bf.reserve" => &["0.01", "100"][..],
                "cf.reserve" => &["100"],
                "bf.info" | "bf.card" | "bf.debug" | "cf.info" | "cf.debug" | "cf.compact" => &[],
                "bf.scandump" | "cf.scandump" => &["0"],
                "bf.loadchunk" | "cf.loadchunk" => &["1", "x"],
                "bf.insert" | "cf.insert" | "cf.insertnx" => &["ITEMS", "item"],
                _ => &["item"],
            });
            assert_eq!(ok(&mut admin, &args), Value::Okay, "{args:?}");
            args[2] = other_user;
            assert!(call(&mut admin, &args).is_ok_and(|v| v != Value::Okay), "{args:?}");
        }
        for user in ["bloom-only", "cuckoo-only"] {
            assert!(call(&mut admin, &["ACL", "DRYRUN", user, "GET", "k"]).is_ok_and(|v| v != Value::Okay));
        }
    } else {
        eprintln!("Redis {version} has no module ACL categories: only key permissions were checked");
    }
}

/// Server time of the last calls of a command, from INFO commandstats.
fn usec_per_call(con: &mut Connection, command: &str) -> f64 {
    let stats = info_field(con, "commandstats", &format!("cmdstat_{command}"));
    stats
        .split("usec_per_call=")
        .nth(1)
        .and_then(|v| v.split(',').next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[test]
fn unlinking_a_gigabyte_filter_does_not_stall_the_server() {
    let server = Server::start_with(&[], &["--lazyfree-lazy-user-del", "no"]);
    let mut con = server.connection();
    for key in ["lazy", "eager"] {
        ok(&mut con, &["BF.RESERVE", key, "0.01", "850000000", "NONSCALING"]);
        // Touch every page, as a filter in use would have.
        madd_all(&mut con, key, (0..200_000).map(|n| format!("{key}{n}")));
    }
    assert!(int(&mut con, &["MEMORY", "USAGE", "lazy"]) > 1_000_000_000);
    ok(&mut con, &["CONFIG", "RESETSTAT"]);
    assert_eq!(int(&mut con, &["UNLINK", "lazy"]), 1);
    assert_eq!(int(&mut con, &["DEL", "eager"]), 1);
    // Timings on a shared machine are compared with each other, not with a constant: the
    // background free must cost the server a small fraction of freeing in place.
    let (unlink, del) = (usec_per_call(&mut con, "unlink"), usec_per_call(&mut con, "del"));
    eprintln!("UNLINK {unlink} µs, synchronous DEL {del} µs");
    assert!(unlink * 10.0 < del, "UNLINK took {unlink} µs, a synchronous DEL {del} µs");
    let deadline = Instant::now() + Duration::from_secs(30);
    while info_field(&mut con, "memory", "lazyfreed_objects").parse::<u64>().unwrap() < 1 {
        assert!(Instant::now() < deadline, "not freed in the background");
        std::thread::sleep(Duration::from_millis(20));
    }
    let used: i64 = info_field(&mut con, "memory", "used_memory").parse().unwrap();
    assert!(used < 100_000_000, "used_memory still {used}");
}

/// A gigabyte filter, reserved or grown into by an add, takes memory only as its bits are
/// written: the server does not clear it by hand (on Redis 7.0 that stalled it for half a
/// second), yet `used_memory` counts all of it and it reads as empty. In both formats.
#[test]
fn large_filters_become_resident_only_as_they_are_written() {
    let server = Server::start();
    let mut con = server.connection();
    // Valkey frees deleted keys in the background by default: its used_memory would still be
    // falling from one step's filters while the next step is measured.
    ok(&mut con, &["CONFIG", "SET", "lazyfree-lazy-user-del", "no"]);
    let memory = |con: &mut Connection| -> (i64, i64) {
        let used = info_field(con, "memory", "used_memory").parse().unwrap();
        (used, info_field(con, "memory", "used_memory_rss").parse().unwrap())
    };
    for format in ["REDBLOOM", "REDISBLOOM"] {
        let (used, rss) = memory(&mut con);
        ok(&mut con, &["BF.RESERVE", "big", "0.01", "800000000", "FORMAT", format]);
        let (used_after, rss_after) = memory(&mut con);
        assert!(used_after - used > 900_000_000, "{format}: used_memory grew by {}", used_after - used);
        assert!(rss_after - rss < 100_000_000, "{format}: RSS grew by {} on a reserve", rss_after - rss);
        assert!(int(&mut con, &["MEMORY", "USAGE", "big"]) > 900_000_000);
        assert_eq!(
            int(&mut con, &["BF.EXISTS", "big", "anything"]),
            0,
            "{format}: a new filter reads as empty"
        );

        // A filter whose only link is full (as a header says), grown by one add to a link of
        // about 1 GB.
        let (_, mut header) = scandump(&mut con, "big").remove(0);
        // The link's item count, set to its capacity; RedisBloom's header also counts the
        // chain's items, first thing.
        let (items_at, capacity) = (if format == "REDBLOOM" { 14 + 28 } else { 20 + 16 }, 800_000_000u64);
        ok(&mut con, &["DEL", "big"]);
        header[items_at..items_at + 8].copy_from_slice(&capacity.to_le_bytes());
        if format == "REDISBLOOM" {
            header[..8].copy_from_slice(&capacity.to_le_bytes());
        }
        let (used, rss) = memory(&mut con);
        call_bytes(&mut con, &[b"BF.LOADCHUNK", b"full", b"1", &header])
            .unwrap_or_else(|error| panic!("{format}: {error}"));
        assert_eq!(int(&mut con, &["BF.ADD", "full", "one more"]), 1);
        assert_eq!(ok(&mut con, &["BF.INFO", "full", "FILTERS"]), Value::Array(vec![Value::Int(2)]));
        let (used_after, rss_after) = memory(&mut con);
        assert!(used_after - used > 1_000_000_000, "{format}: used_memory grew by {}", used_after - used);
        assert!(rss_after - rss < 100_000_000, "{format}: RSS grew by {} on growth", rss_after - rss);
        assert_eq!(int(&mut con, &["BF.EXISTS", "full", "one more"]), 1);
        ok(&mut con, &["DEL", "full"]);
    }
}
