//! Hostile input: each of RedisBloom 2.8.2's crashes answers an error here, and mutated
//! headers, chunks and payloads are refused or make a sound filter; the server never dies.

use super::catalogue::{cook_all, Recipe};
use super::{
    assert_alive, cf_loadchunks, cf_scandump, info_number, items, loadchunk, Module, MAX_EXPANSIONS, WIDE,
};
use crate::harness::*;
use redis::{Connection, Value};

const NO_MEMORY: &str = "ERR Insufficient memory to create filter";

const CANNOT_CREATE: &str = "Couldn't create filter!";

const FULL: &str = "Filter is full";

/// A SCANDUMP header (38 bytes, packed little-endian): items, buckets of sub-filter 0, deletes,
/// sub-filters, bucket size, max iterations, expansion.
fn header(
    items: u64,
    buckets: u64,
    deletes: u64,
    filters: u64,
    bucket: u16,
    iterations: u16,
    expansion: u16,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(38);
    for value in [items, buckets, deletes, filters] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    for value in [bucket, iterations, expansion] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    out
}

/// Each of RedisBloom 2.8.2's crashes (the contract's "Hazards") answers an error here, and
/// the server lives on.
#[test]
fn redisbloom_hazards_answer_errors_here() {
    let server = Module::Redbloom.start(&[]);
    let mut con = server.connection();
    ok(&mut con, &["SET", "bystander", "untouched"]);
    let refused = |con: &mut Connection, args: &[&str], expected: &str| {
        assert_eq!(err(con, args), expected, "{args:?}");
        assert_alive(con);
        assert_eq!(int(con, &["EXISTS", args[1]]), 0, "{args:?} left a key");
    };
    // 1. Bucket arrays that cannot be had: over 2^56 buckets, over the memory, over the cap.
    refused(&mut con, &["CF.RESERVE", "k", "72057594037927936"], NO_MEMORY);
    refused(&mut con, &["CF.RESERVE", "k", "9223372036854775807"], NO_MEMORY);
    refused(&mut con, &["CF.RESERVE", "k", "8589934592"], NO_MEMORY); // 8 GiB > the 4 GiB default cap
    refused(&mut con, &["CF.INSERT", "k", "CAPACITY", "72057594037927936", "ITEMS", "a"], NO_MEMORY);
    ok(&mut con, &["CONFIG", "SET", "bf.max-filter-bytes", "1000000"]);
    refused(&mut con, &["CF.RESERVE", "k", "2000000"], NO_MEMORY);
    refused(&mut con, &["CF.INSERT", "k", "CAPACITY", "2000000", "ITEMS", "a"], NO_MEMORY);
    ok(&mut con, &["CF.RESERVE", "under-cap", "500000"]);
    ok(&mut con, &["CONFIG", "SET", "bf.max-filter-bytes", "4294967296"]);

    // 2. An option word as the last argument: its value is missing, not read past the end.
    for option in ["BUCKETSIZE", "MAXITERATIONS", "EXPANSION"] {
        refused(&mut con, &["CF.RESERVE", "k", "10", "x", option], &format!("Couldn't parse {option}"));
    }

    // 4 and 5. LOADCHUNK headers for empty sub-filters or terabytes.
    for (what, bad) in [
        ("expansion 0, two sub-filters", header(0, 4, 0, 2, 2, 20, 0)),
        ("expansion 0, three sub-filters", header(5, 4, 0, 3, 2, 20, 0)),
        ("2^40 buckets", header(1, 1 << 40, 0, 1, 2, 20, 1)),
        ("2^30 buckets of 255", header(1, 1 << 30, 0, 1, 255, 20, 1)),
    ] {
        let reply = call_bytes(&mut con, &[b"CF.LOADCHUNK", b"k", b"1", &bad]);
        assert_eq!(reply, Err(CANNOT_CREATE.to_string()), "{what}");
        assert_alive(&mut con);
        assert_eq!(int(&mut con, &["EXISTS", "k"]), 0, "{what}");
    }

    // 3. Geometric growth of one item's copies: RedisBloom reaches a sub-filter of 2^33
    // buckets and dies of SIGFPE; here growth stops at the memory cap (the filter is full, or
    // there is no memory for it) or at the sub-filter limit.
    for expansion in ["4", "32768"] {
        let key = format!("grows-{expansion}");
        ok(&mut con, &["CF.RESERVE", &key, "4", "EXPANSION", expansion]);
        let mut stopped = None;
        for attempt in 0..200 {
            match call(&mut con, &["CF.ADD", &key, "same"]) {
                Ok(Value::Int(1)) => assert!(stopped.is_none(), "an add succeeded after growth stopped"),
                Err(error) if [NO_MEMORY, MAX_EXPANSIONS, FULL].contains(&error.as_str()) => {
                    stopped.get_or_insert((attempt, error));
                }
                other => panic!("CF.ADD {key} same, add {attempt}: {other:?}"),
            }
            assert_alive(&mut con);
        }
        let (attempt, error) = stopped.expect("growth never stopped");
        let size = info_number(&mut con, &key, "Size");
        eprintln!("EXPANSION {expansion}: add {attempt} answered {error}; Size {size}");
        assert!(size <= 4 << 30, "{key}: {size} bytes, over the cap");
        assert_eq!(int(&mut con, &["CF.EXISTS", &key, "same"]), 1);
        ok(&mut con, &["DEL", &key]);
    }
    assert_eq!(ok(&mut con, &["GET", "bystander"]), Value::BulkString(b"untouched".to_vec()));
}

/// A mutated input of one of three kinds, from a seeded generator.
fn mutate(random: &mut Random, original: &[u8], fields: bool) -> Vec<u8> {
    let mut bytes = original.to_vec();
    match random.below(if fields { 6 } else { 5 }) {
        0 => {
            for _ in 0..=random.below(3) {
                let at = random.below(bytes.len().max(1));
                if let Some(byte) = bytes.get_mut(at) {
                    *byte ^= 1 << random.below(8);
                }
            }
        }
        1 => bytes.truncate(random.below(bytes.len().max(1))),
        2 => {
            let len = 1 + random.below(40);
            bytes.extend(random.bytes(len));
        }
        3 => bytes = random.bytes(bytes.len()),
        4 => {
            let len = random.below(80);
            bytes = random.bytes(len);
        }
        // A header field set to a value at an edge: the u64s at 0, 8, 16, 24, the u16s after.
        _ => {
            let edges = [
                0u64,
                1,
                2,
                3,
                255,
                256,
                1 << 15,
                65535,
                1 << 16,
                1 << 31,
                1 << 32,
                1 << 40,
                1 << 56,
                1 << 63,
                u64::MAX,
            ];
            let value = if random.below(4) == 0 {
                random.below(usize::MAX) as u64
            } else {
                edges[random.below(edges.len())]
            };
            // A wide header's fingerprint bits are a u16 too, after RedisBloom's fields.
            let field = random.below(if bytes.len() >= 40 { 8 } else { 7 });
            if field < 4 {
                bytes[8 * field..8 * field + 8].copy_from_slice(&value.to_le_bytes());
            } else {
                let at = 32 + 2 * (field - 4);
                bytes[at..at + 2].copy_from_slice(&(value as u16).to_le_bytes());
            }
        }
    }
    bytes
}

/// Whatever was accepted under `key` is a filter that answers every command without taking the
/// server down, dumps (within the cap) and loads back to itself.
fn exercise(con: &mut Connection, key: &str, cap: i64) {
    let kind = ok(con, &["TYPE", key]);
    assert!(kind == Value::SimpleString("MBbloomCF".into()) || kind == Value::SimpleString(WIDE.into()));
    let size = info_number(con, key, "Size");
    assert!(size <= 2 * cap, "{key}: an accepted filter of {size} bytes, over the cap");
    for args in [
        &["CF.EXISTS", key, "a"][..],
        &["CF.MEXISTS", key, "a", "b", ""],
        &["CF.COUNT", key, "a"],
        &["CF.DEBUG", key],
        &["CF.ADD", key, "a"],
        &["CF.ADDNX", key, "b"],
        &["CF.INSERT", key, "ITEMS", "c", "d", "e"],
        &["CF.INSERTNX", key, "ITEMS", "c", "f"],
        &["CF.DEL", key, "a"],
        &["CF.DEL", key, "zz"],
        &["CF.COMPACT", key],
        &["CF.INFO", key],
    ] {
        let _ = call(con, args);
        assert_alive(con);
    }
    let pairs = cf_scandump(con, key);
    assert_alive(con);
    if !pairs.is_empty() {
        cf_loadchunks(con, "hostile:copy", &pairs);
        assert!(cf_scandump(con, "hostile:copy") == pairs, "{key}: an accepted filter does not round-trip");
        ok(con, &["DEL", "hostile:copy"]);
    }
    let payload = dump_payload(con, key);
    call_bytes(con, &[b"RESTORE", b"hostile:copy", b"0", &payload]).expect("RESTORE of its own DUMP");
    ok(con, &["DEL", "hostile:copy"]);
    assert_alive(con);
}

/// Random mutations (bit flips, truncations, extensions, random bytes, header fields at their
/// edges) of valid LOADCHUNK headers and chunks and of DUMP payloads (checksum fixed, so the
/// module reads them), of RedisBloom's 8-bit filters and of wide ones, are refused, or make a
/// filter that works; the server never dies.
#[test]
fn mutated_headers_chunks_and_payloads_are_refused_or_sound() {
    // Per filter: its SCANDUMP stream and its DUMP payload.
    type Sources = Vec<(Vec<(i64, Vec<u8>)>, Vec<u8>)>;
    const CAP: i64 = 16 << 20;
    let server = Module::Redbloom.start(&[]);
    let mut con = server.connection();
    ok(&mut con, &["CONFIG", "SET", "bf.max-filter-bytes", &CAP.to_string()]);
    ok(&mut con, &["SET", "bystander", "untouched"]);
    let mut all = Vec::new();
    cook_all(
        &mut con,
        &[
            Recipe::new("s1")
                .reserve(&["64", "BUCKETSIZE", "1", "EXPANSION", "2"])
                .insert(numbered("a", 200)),
            Recipe::new("s2").add(items(&["first"])).insert(numbered("b", 100)),
            Recipe::new("s4")
                .reserve(&["40", "BUCKETSIZE", "4", "MAXITERATIONS", "3"])
                .insert(numbered("c", 300)),
            Recipe::new("s0")
                .reserve(&["16", "EXPANSION", "0"])
                .insert(numbered("d", 10))
                .delete(numbered("d", 3)),
            Recipe::new("w16")
                .reserve(&["64", "ERROR", "0.001", "EXPANSION", "2"])
                .insert(numbered("e", 300))
                .delete(numbered("e", 20)),
            Recipe::new("w32").reserve(&["32", "ERROR", "1e-6"]).insert(numbered("f", 100)),
        ],
        &mut all,
    );
    let sources: Sources = all
        .iter()
        .map(|held| (cf_scandump(&mut con, &held.key), dump_payload(&mut con, &held.key)))
        .collect();
    let mut random = Random::seeded();
    // (refused, accepted), for mutated headers, chunks and payloads.
    let mut tally = [(0, 0); 3];
    let mut count = |kind: usize, result: &Result<Value, String>| match result {
        Err(_) => tally[kind].0 += 1,
        Ok(_) => tally[kind].1 += 1,
    };
    for round in 0..1800 {
        let (stream, payload) = &sources[random.below(sources.len())];
        match round % 3 {
            // A mutated header, then the original chunks (which may no longer fit).
            0 => {
                let result = loadchunk(&mut con, "victim", 1, &mutate(&mut random, &stream[0].1, true));
                assert_alive(&mut con);
                count(0, &result);
                if result.is_ok() {
                    for (iterator, data) in &stream[1..] {
                        let _ = loadchunk(&mut con, "victim", *iterator, data);
                        assert_alive(&mut con);
                    }
                }
            }
            // The original header, then chunks with mutated data or iterators.
            1 => {
                loadchunk(&mut con, "victim", 1, &stream[0].1).expect("a valid header");
                for (iterator, data) in &stream[1..] {
                    let (iterator, data) = match random.below(3) {
                        0 => (*iterator, data.clone()),
                        1 => (*iterator, mutate(&mut random, data, false)),
                        _ => {
                            let edges =
                                [0, 1, -1, 2, iterator - 1, iterator + 1, iterator * 2, i64::MAX, i64::MIN];
                            (edges[random.below(edges.len())], data.clone())
                        }
                    };
                    count(1, &loadchunk(&mut con, "victim", iterator, &data));
                    assert_alive(&mut con);
                }
            }
            // A DUMP payload mutated after its type byte and module id (sometimes in the id's
            // version bits too), its checksum recomputed.
            _ => {
                let body = payload.len() - 10;
                let from = if random.below(10) == 0 { 8 } else { 10 };
                let mut mutated = payload[..from].to_vec();
                mutated.extend(mutate(&mut random, &payload[from..body], false));
                mutated.extend_from_slice(&payload[body..]);
                let result = call_bytes(
                    &mut con,
                    &[b"RESTORE", b"victim", b"0", &with_valid_checksum(mutated), b"REPLACE"],
                );
                assert_alive(&mut con);
                count(2, &result);
            }
        }
        if int(&mut con, &["EXISTS", "victim"]) == 1 {
            exercise(&mut con, "victim", CAP);
            ok(&mut con, &["DEL", "victim"]);
        }
    }
    eprintln!("(refused, accepted) for mutated headers, chunks and payloads: {tally:?}");
    for (what, (refused, accepted)) in ["headers", "chunks", "payloads"].iter().zip(tally) {
        assert!(refused > 30 && accepted > 30, "mutated {what}: meant to be both refused and accepted");
    }
    assert_eq!(ok(&mut con, &["GET", "bystander"]), Value::BulkString(b"untouched".to_vec()));
    for (held, (stream, _)) in all.iter().zip(&sources) {
        assert!(cf_scandump(&mut con, &held.key) == *stream, "{} was touched", held.key);
    }
}
