//! ERROR makes filters of fingerprints wider than RedisBloom's 8 bits (type `rbCF-wide`, this
//! module's own): they keep the rate asked for and persist bit for bit, and RedisBloom refuses
//! them by name.

use super::catalogue::{cook_all, Held, Recipe};
use super::persistence::{assert_kept, assert_kept_through_aof_and_rdb, snapshot, Snapshot};
use super::replication::replica_of;
use super::{
    assert_alive, cf_loadchunks, cf_scandump, info_number, items, loadchunk, mexists, module_type, Module,
    AOF, WIDE,
};
use crate::harness::*;
use redis::{Connection, Value};

/// The share of `probes` never-added items that CF.MEXISTS answers present.
fn measured_rate(con: &mut Connection, key: &str, probes: usize) -> f64 {
    let absent = numbered(&format!("{key}:never-added:"), probes);
    let hits: usize = absent
        .chunks(1000)
        .map(|batch| mexists(con, key, batch).iter().filter(|answer| **answer == Value::Int(1)).count())
        .sum();
    hits as f64 / probes as f64
}

/// CF.RESERVE and CF.INSERT with ERROR make a filter of wider fingerprints (type `rbCF-wide`,
/// fingerprint bits in CF.DEBUG) whose measured rate, filled until it refuses an item, is at
/// or under the rate asked for; without ERROR nothing changes. Such filters answer, count,
/// delete, grow and compact like the others, and every persistence path, COPY, DUMP/RESTORE
/// and a replica keep them bit for bit.
#[test]
fn error_makes_wide_filters_that_keep_the_rate_asked_for_and_persist() {
    let mut server = Module::Redbloom.start(&AOF);
    let mut con = server.connection();
    let replica = replica_of(Module::Redbloom, &server);
    let mut replica_con = replica.connection();
    for (key, rate, bits) in [("full16", "0.001", 16), ("full32", "1e-6", 32), ("full8", "0.05", 8)] {
        ok(&mut con, &["CF.RESERVE", key, "20000", "ERROR", rate, "EXPANSION", "0"]);
        let expected_type = if bits == 8 { "MBbloomCF" } else { WIDE };
        assert_eq!(ok(&mut con, &["TYPE", key]), Value::SimpleString(expected_type.into()));
        let debug = String::from_utf8(bulk(ok(&mut con, &["CF.DEBUG", key]))).unwrap();
        assert_eq!(debug.ends_with(&format!(" fingerprint_bits:{bits}")), bits != 8, "{debug}");
        let mut added = 0;
        'fill: loop {
            let batch = numbered(&format!("{key}:member{added}:"), 500);
            let mut args: Vec<&[u8]> = vec![b"CF.INSERT", key.as_bytes(), b"ITEMS"];
            args.extend(batch.iter().map(Vec::as_slice));
            let Ok(Value::Array(answers)) = call_bytes(&mut con, &args) else { panic!("CF.INSERT {key}") };
            for answer in answers {
                if answer != Value::Int(1) {
                    break 'fill;
                }
                added += 1;
            }
        }
        let rate: f64 = rate.parse().unwrap();
        let measured = measured_rate(&mut con, key, 200_000);
        eprintln!("{key}: {added} items, ERROR {rate}, measured {measured:.2e}");
        assert!(added > 10_000 && measured <= rate, "{key}: {added} items, measured {measured}");
    }
    assert_eq!(ok(&mut con, &["CF.RESERVE", "plain", "1000"]), Value::Okay);
    assert_eq!(ok(&mut con, &["TYPE", "plain"]), Value::SimpleString("MBbloomCF".into()));

    let mut all = Vec::new();
    cook_all(
        &mut con,
        &[
            Recipe::new("grown16")
                .reserve(&["64", "ERROR", "0.001", "EXPANSION", "2"])
                .insert(numbered("g", 2000))
                .add(items(&["twice", "twice"]))
                .delete(numbered("g", 300)),
            Recipe::new("created32")
                .command(&["CF.INSERT", "created32", "ERROR", "1e-7", "CAPACITY", "100", "ITEMS", "x"])
                .insert(numbered("h", 400)),
            Recipe::new("emptied16")
                .reserve(&["100", "ERROR", "0.01"])
                .add(items(&["y"]))
                .delete(items(&["y"])),
        ],
        &mut all,
    );
    assert!(info_number(&mut con, "grown16", "Number of filters") > 2, "grown16 grew");
    // ERROR counts only when CF.INSERT creates the filter; BF.* refuse a wide filter as any CF.
    let debug_before = bulk(ok(&mut con, &["CF.DEBUG", "grown16"]));
    ok(&mut con, &["CF.INSERT", "grown16", "ERROR", "1e-9", "ITEMS", "more"]);
    // The rate is checked all the same, as CAPACITY is.
    let too_small = err(&mut con, &["CF.INSERT", "grown16", "ERROR", "1e-12", "ITEMS", "more"]);
    assert!(too_small.starts_with("ERROR: below 2 * bucket size"), "{too_small}");
    let debug_after = String::from_utf8(bulk(ok(&mut con, &["CF.DEBUG", "grown16"]))).unwrap();
    assert!(debug_after.ends_with("fingerprint_bits:16") && debug_after.as_bytes() != debug_before);
    ok(&mut con, &["CF.DEL", "grown16", "more"]);
    // (BF.EXISTS answers 0 for a key of another type, as RedisBloom does.)
    assert_eq!(int(&mut con, &["BF.EXISTS", "grown16", "a"]), 0);
    for bloom_command in
        [&["BF.ADD", "grown16", "a"][..], &["BF.MADD", "grown16", "a"], &["BF.INFO", "grown16"]]
    {
        assert_eq!(
            err(&mut con, bloom_command),
            "WRONGTYPE Operation against a key holding the wrong kind of value"
        );
    }
    assert_eq!(int(&mut con, &["CF.COUNT", "grown16", "twice"]), 2);
    ok(&mut con, &["CF.COMPACT", "grown16"]);
    all.push(Held { key: "full16".into(), members: Vec::new() });
    let before: Vec<Snapshot> = all.iter().map(|held| snapshot(&mut con, &held.key)).collect();

    wait_in_sync(&mut con, &mut replica_con);
    for held in &all {
        assert_eq!(
            digest(&mut replica_con, &held.key),
            digest(&mut con, &held.key),
            "{} on the replica",
            held.key
        );
        let copy = format!("copy:{}", held.key);
        assert_eq!(int(&mut con, &["COPY", &held.key, &copy]), 1);
        assert_eq!(ok(&mut con, &["TYPE", &copy]), Value::SimpleString(WIDE.into()));
        assert!(snapshot(&mut con, &copy) == snapshot(&mut con, &held.key), "COPY {}", held.key);
        let payload = dump_payload(&mut con, &held.key);
        assert_eq!(module_type(&payload), (WIDE.to_string(), 1), "{}", held.key);
        call_bytes(&mut con, &[b"RESTORE", copy.as_bytes(), b"0", &payload, b"REPLACE"]).expect("RESTORE");
        assert!(snapshot(&mut con, &copy) == snapshot(&mut con, &held.key), "RESTORE {}", held.key);
        let pairs = cf_scandump(&mut con, &held.key);
        if let Some((_, header)) = pairs.first() {
            assert_eq!(header.len(), 40, "{}: a wide header", held.key);
            ok(&mut con, &["DEL", &copy]);
            cf_loadchunks(&mut con, &copy, &pairs);
            assert!(snapshot(&mut con, &copy) == snapshot(&mut con, &held.key), "SCANDUMP {}", held.key);
        }
        ok(&mut con, &["DEL", &copy]);
    }
    ok(&mut con, &["DEBUG", "RELOAD"]);
    assert_kept(&mut con, &all, &before, "DEBUG RELOAD");
    drop(con);
    assert_kept_through_aof_and_rdb(Module::Redbloom, &mut server, &all, &before);
}

/// RedisBloom cannot hold a wide filter, and does not misread one: its CF.LOADCHUNK refuses the
/// 40-byte header (`Invalid header`), RESTORE and an RDB name the type it does not know, and
/// its replay of an AOF skips the filter. Once the wide filters are deleted, the same server's
/// RDB loads into RedisBloom again.
#[test]
fn redisbloom_refuses_wide_filters_by_name_and_takes_the_rest() {
    let ours = Module::Redbloom.start(&AOF);
    let mut con = ours.connection();
    ok(&mut con, &["CF.RESERVE", "wide", "1000", "ERROR", "0.001"]);
    ok(&mut con, &["CF.INSERT", "wide", "ITEMS", "a", "b"]);
    ok(&mut con, &["CF.INSERT", "classic", "ITEMS", "a", "b"]);
    let pairs = cf_scandump(&mut con, "wide");
    let payload = dump_payload(&mut con, "wide");

    let reference = Module::RedisBloom.start(&[]);
    let mut ref_con = reference.connection();
    assert_eq!(loadchunk(&mut ref_con, "wide", 1, &pairs[0].1), Err("Invalid header".to_string()));
    let restored = call_bytes(&mut ref_con, &[b"RESTORE", b"wide", b"0", &payload]);
    assert_eq!(restored, Err("ERR Bad data format".to_string()), "RedisBloom and a wide DUMP");
    assert_eq!(int(&mut ref_con, &["EXISTS", "wide"]), 0);
    assert_alive(&mut ref_con);

    ok(&mut con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut con);
    let mut replaying = Module::RedisBloom.prepared(&AOF);
    replaying.take_file(&ours, "appendonlydir");
    replaying.launch();
    let mut replaying_con = replaying.connection();
    assert_eq!(keys(&mut replaying_con), ["classic"], "the wide filter is skipped, the rest replayed");
    assert_eq!(mexists(&mut replaying_con, "classic", &items(&["a", "b"])), [Value::Int(1), Value::Int(1)]);

    ok(&mut con, &["SAVE"]);
    let mut refusing = Module::RedisBloom.prepared(&[]);
    refusing.take_file(&ours, "dump.rdb");
    let log = refusing.run_until_exit();
    assert!(log.contains(WIDE), "RedisBloom's log names the type it cannot load:\n{log}");

    ok(&mut con, &["DEL", "wide"]);
    ok(&mut con, &["SAVE"]);
    let mut taking = Module::RedisBloom.prepared(&[]);
    taking.take_file(&ours, "dump.rdb");
    taking.launch();
    let mut taking_con = taking.connection();
    assert_eq!(mexists(&mut taking_con, "classic", &items(&["a", "b"])), [Value::Int(1), Value::Int(1)]);
}
