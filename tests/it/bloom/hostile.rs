//! Corrupt and foreign input is refused with an error; the server lives on and no other key
//! is touched.

use crate::harness::*;
use redis::{Connection, Value};

fn restore(con: &mut Connection, key: &str, payload: &[u8]) -> Result<Value, String> {
    call_bytes(con, &[b"RESTORE", key.as_bytes(), b"0", payload, b"REPLACE"])
}

fn assert_alive(con: &mut Connection) {
    assert_eq!(ok(con, &["PING"]), Value::SimpleString("PONG".into()));
    assert_eq!(ok(con, &["GET", "bystander"]), Value::BulkString(b"untouched".to_vec()));
    assert_eq!(int(con, &["BF.EXISTS", "source", "item7"]), 1);
}

fn setup(con: &mut Connection) -> Vec<u8> {
    ok(con, &["SET", "bystander", "untouched"]);
    ok(con, &["BF.RESERVE", "source", "0.01", "50", "EXPANSION", "2"]);
    madd_all(con, "source", (0..200).map(|n| format!("item{n}")));
    dump_payload(con, "source")
}

#[test]
fn the_checksum_is_the_one_redis_uses() {
    assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    let server = Server::start();
    let mut con = server.connection();
    let payload = setup(&mut con);
    assert_eq!(with_valid_checksum(payload.clone()), payload);
}

#[test]
fn truncated_and_flipped_payloads_are_refused() {
    let server = Server::start();
    let mut con = server.connection();
    let payload = setup(&mut con);
    for cut in [1, 9, 20, payload.len() / 2, payload.len() - 11] {
        assert!(restore(&mut con, "victim", &payload[..cut]).is_err(), "cut at {cut}");
        // Truncated again but with a valid checksum: now the module reads it, and refuses.
        let mut truncated = payload[..payload.len() - 10 - cut.min(payload.len() - 20)].to_vec();
        truncated.extend_from_slice(&payload[payload.len() - 10..]);
        assert!(restore(&mut con, "victim", &with_valid_checksum(truncated)).is_err(), "cut {cut}, resigned");
    }
    let mut flipped = payload.clone();
    flipped[15] ^= 0x10;
    assert!(restore(&mut con, "victim", &flipped).is_err());
    assert_eq!(int(&mut con, &["EXISTS", "victim"]), 0);
    assert_alive(&mut con);
}

#[test]
fn every_corrupted_header_byte_is_refused_or_yields_a_sound_filter() {
    let server = Server::start();
    let mut con = server.connection();
    let payload = setup(&mut con);
    let mut refused = 0;
    // The module's strings start after the type byte and the 9-byte module id; the first
    // ~120 bytes hold the string framing and the filter header.
    for at in 10..130.min(payload.len() - 10) {
        for mask in [0x01u8, 0x80, 0xFF] {
            let mut corrupt = payload.clone();
            corrupt[at] ^= mask;
            if restore(&mut con, "victim", &with_valid_checksum(corrupt)).is_err() {
                refused += 1;
            } else {
                // Accepted: then it must be a filter that answers every command.
                ok(&mut con, &["BF.INFO", "victim"]);
                ok(&mut con, &["BF.ADD", "victim", "probe"]);
                ok(&mut con, &["BF.DEBUG", "victim"]);
                ok(&mut con, &["DEL", "victim"]);
            }
        }
    }
    assert!(refused > 200, "only {refused} corruptions refused");
    assert_alive(&mut con);
}

/// This module's payload relabelled with RedisBloom's encoding versions is read as
/// RedisBloom's record, which it is not: refused.
#[test]
fn our_payload_under_redisbloom_versions_is_refused() {
    let server = Server::start();
    let mut con = server.connection();
    let payload = setup(&mut con);
    // Byte 0 is the module type opcode, then 0x81 and the 64-bit module id, big-endian,
    // whose low 10 bits are the encoding version.
    assert_eq!(payload[1], 0x81);
    for version in 0..=4u64 {
        let mut foreign = payload.clone();
        let mut id = u64::from_be_bytes(foreign[2..10].try_into().unwrap());
        id = (id & !0x3FF) | version;
        foreign[2..10].copy_from_slice(&id.to_be_bytes());
        assert!(restore(&mut con, "victim", &with_valid_checksum(foreign)).is_err(), "version {version}");
    }
    assert!(server.log().contains("RedisBloom's encoding version"));
    assert_alive(&mut con);
}

#[test]
fn bad_loadchunk_sequences_are_refused() {
    let server = Server::start();
    let mut con = server.connection();
    setup(&mut con);
    let Value::Array(reply) = ok(&mut con, &["BF.SCANDUMP", "source", "0"]) else { panic!() };
    let Value::BulkString(header) = &reply[1] else { panic!() };
    let refuse = |con: &mut Connection, iterator: &str, data: &[u8]| {
        let error = call_bytes(con, &[b"BF.LOADCHUNK", b"copy", iterator.as_bytes(), data]).unwrap_err();
        assert!(error.starts_with("ERR"), "{error}");
    };
    refuse(&mut con, "1", b"");
    refuse(&mut con, "1", &header[..header.len() - 1]);
    let mut bad_magic = header.clone();
    bad_magic[0] ^= 1;
    refuse(&mut con, "1", &bad_magic);
    let mut bad_count = header.clone();
    bad_count[10] = 7;
    refuse(&mut con, "1", &bad_count);
    assert_eq!(int(&mut con, &["EXISTS", "copy"]), 0);
    // A chunk before its header, then after it at offsets that do not exist.
    refuse(&mut con, "65", &[0u8; 64]);
    call_bytes(&mut con, &[b"BF.LOADCHUNK", b"copy", b"1", header]).unwrap();
    refuse(&mut con, "1", header); // a second header on the same key
    refuse(&mut con, "-5", b"abc");
    refuse(&mut con, "0", b"abc");
    refuse(&mut con, "999999999", b"abc");
    refuse(&mut con, &(1 + 1_000_000).to_string(), &vec![0u8; 1_000_000]);
    assert_alive(&mut con);
}

#[test]
fn thousands_of_mutated_dump_payloads() {
    let server = Server::start();
    let mut con = server.connection();
    let mut payloads = vec![setup(&mut con)];
    ok(&mut con, &["BF.RESERVE", "strict", "0.000001", "300", "NONSCALING"]);
    madd_all(&mut con, "strict", (0..100).map(|n| format!("s{n}")));
    payloads.push(dump_payload(&mut con, "strict"));
    ok(&mut con, &["BF.ADD", "tiny", "a"]);
    payloads.push(dump_payload(&mut con, "tiny"));
    let mut random = Random::seeded();
    let mut accepted = 0;
    for _ in 0..3000 {
        let original = &payloads[random.below(payloads.len())];
        let body = original.len() - 10;
        let mut mutated = original[..body].to_vec();
        match random.below(4) {
            0 => {
                for _ in 0..=random.below(4) {
                    let at = random.below(mutated.len());
                    mutated[at] ^= 1 + random.below(255) as u8;
                }
            }
            1 => mutated.truncate(random.below(mutated.len())),
            2 => {
                let len = 1 + random.below(64);
                let extra = random.bytes(len);
                let at = random.below(mutated.len());
                mutated.splice(at..at, extra);
            }
            _ => {
                let at = random.below(mutated.len());
                let len = random.below(mutated.len() - at);
                mutated.drain(at..at + len);
            }
        }
        mutated.extend_from_slice(&original[body..]);
        if restore(&mut con, "victim", &with_valid_checksum(mutated)).is_ok() {
            accepted += 1;
            if ok(&mut con, &["TYPE", "victim"]) == Value::SimpleString("MBbloom--".into()) {
                ok(&mut con, &["BF.INFO", "victim"]);
                let _ = call(&mut con, &["BF.MADD", "victim", "p", "q"]);
                ok(&mut con, &["BF.EXISTS", "victim", "p"]);
                ok(&mut con, &["BF.DEBUG", "victim"]);
                scandump(&mut con, "victim");
            }
            ok(&mut con, &["DEL", "victim"]);
        }
    }
    eprintln!("{accepted} of 3000 mutated payloads were valid filters (bit flips inside the bit arrays are)");
    assert_alive(&mut con);
}

#[test]
fn random_argument_lists_for_every_command() {
    let server = Server::start();
    let mut con = server.connection();
    setup(&mut con);
    let before = digest(&mut con, "source");
    let mut random = Random::seeded();
    let tokens: Vec<Vec<u8>> = [
        "k1",
        "k2",
        "bystander",
        "0",
        "1",
        "2",
        "-1",
        "100",
        "0.01",
        "0.5",
        "1e-300",
        "1e300",
        "nan",
        "inf",
        "-inf",
        "32768",
        "32769",
        "1073741824",
        "1073741825",
        "9223372036854775807",
        "99999999999999999999",
        "CAPACITY",
        "ERROR",
        "EXPANSION",
        "NOCREATE",
        "NONSCALING",
        "ITEMS",
        "capacity",
        "items",
        "SIZE",
        "FILTERS",
        "",
        "RBLF",
    ]
    .iter()
    .map(|t| t.as_bytes().to_vec())
    .collect();
    let commands = [
        "BF.RESERVE",
        "BF.ADD",
        "BF.MADD",
        "BF.INSERT",
        "BF.EXISTS",
        "BF.MEXISTS",
        "BF.INFO",
        "BF.CARD",
        "BF.SCANDUMP",
        "BF.LOADCHUNK",
        "BF.DEBUG",
    ];
    for round in 0..6000 {
        let mut args: Vec<Vec<u8>> = vec![commands[round % commands.len()].as_bytes().to_vec()];
        for _ in 0..random.below(10) {
            let arg = if random.below(5) == 0 {
                let len = random.below(40);
                random.bytes(len)
            } else {
                tokens[random.below(tokens.len())].clone()
            };
            args.push(arg);
        }
        let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let _ = call_bytes(&mut con, &args);
        if round % 500 == 0 {
            ok(&mut con, &["FLUSHDB"]);
            setup(&mut con);
        }
    }
    assert_alive(&mut con);
    assert_eq!(digest(&mut con, "source"), before);
}

#[test]
fn malformed_loadchunk_sequences() {
    let server = Server::start();
    let mut con = server.connection();
    setup(&mut con);
    ok(&mut con, &["BF.RESERVE", "other", "0.01", "20", "NONSCALING"]);
    let source = scandump(&mut con, "source");
    let other = scandump(&mut con, "other");
    assert!(source.len() >= 3, "a header and several chunks");
    let load = |con: &mut Connection, key: &str, iterator: i64, data: &[u8]| {
        call_bytes(con, &[b"BF.LOADCHUNK", key.as_bytes(), iterator.to_string().as_bytes(), data])
    };
    // Chunks before any header.
    for (iterator, data) in &source[1..] {
        assert_eq!(load(&mut con, "a", *iterator, data).unwrap_err(), "ERR not found");
    }
    // Out of order: every chunk still lands at its own offset.
    load(&mut con, "b", source[0].0, &source[0].1).unwrap();
    for (iterator, data) in source[1..].iter().rev() {
        load(&mut con, "b", *iterator, data).unwrap();
    }
    assert_eq!(digest(&mut con, "b"), digest(&mut con, "source"));
    // Overlapping, shifted and truncated chunks: refused or written inside a sub-filter.
    load(&mut con, "c", source[0].0, &source[0].1).unwrap();
    for (iterator, data) in &source[1..] {
        for (shift, len) in [(1i64, data.len()), (-1, data.len()), (0, data.len() / 2), (7, 3)] {
            if let Err(error) = load(&mut con, "c", iterator + shift, &data[..len]) {
                assert!(error.starts_with("ERR"), "{error}");
            }
        }
    }
    // A header for a filter of another size, then the source's chunks.
    load(&mut con, "d", other[0].0, &other[0].1).unwrap();
    let mut refused = 0;
    for (iterator, data) in &source[1..] {
        refused += usize::from(load(&mut con, "d", *iterator, data).is_err());
    }
    assert!(refused > 0, "chunks of another filter's shape must not all fit");
    // Truncated headers.
    for cut in [0, 1, 5, 13, source[0].1.len() - 1] {
        assert_eq!(load(&mut con, "e", 1, &source[0].1[..cut]).unwrap_err(), "ERR received bad data");
    }
    assert_alive(&mut con);
}

#[test]
fn restore_is_held_to_the_memory_budget_but_reloads_are_not() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["SET", "bystander", "untouched"]);
    ok(&mut con, &["BF.RESERVE", "large", "0.01", "10000000", "NONSCALING"]);
    ok(&mut con, &["BF.ADD", "large", "x"]);
    let payload = dump_payload(&mut con, "large");
    let before = digest(&mut con, "large");
    ok(&mut con, &["CONFIG", "SET", "bf.max-filter-bytes", "1000000"]);
    // A payload from a client claiming more than the budget allows is refused...
    assert!(restore(&mut con, "copy", &payload).is_err());
    assert_eq!(int(&mut con, &["EXISTS", "copy"]), 0);
    // ...while what the server saved itself loads whatever its size.
    ok(&mut con, &["DEBUG", "RELOAD"]);
    assert_eq!(digest(&mut con, "large"), before);
    ok(&mut con, &["CONFIG", "SET", "bf.max-filter-bytes", "100000000"]);
    restore(&mut con, "copy", &payload).expect("within the budget");
    assert_eq!(digest(&mut con, "copy"), before);
    assert_eq!(ok(&mut con, &["GET", "bystander"]), Value::BulkString(b"untouched".to_vec()));
}
