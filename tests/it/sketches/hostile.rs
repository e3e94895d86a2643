//! Hostile input to the sketches: RESTORE payloads of every sketch type, RedisBloom's and this
//! module's (and of this module's windowed Bloom filters, Count-Min sketches, Top-K lists and t-digests, recorded the same way), mutated field by field (dimensions raised over the data that follows, strings cut
//! or grown, doubles made NaN or infinite, values dropped or repeated, other encoding versions)
//! and byte by byte, with valid checksums so that the module's loader sees them; and the
//! commands that take RedisBloom 2.8.2 down or make it try gigabytes. Every payload is refused
//! or loads as a sketch that answers every command; the server never goes down.

use super::persistence::fill;
use super::words;
use crate::harness::*;
use redbloom_core::decode::{Record, RecordValue};
use redbloom_core::dump_payload::dump_payload as encode_payload;
use redis::{Connection, Value};

/// The module value of a DUMP payload of a module type, as its type's name, its encoding
/// version and its record; `None` if it is not one (or uses compressed strings, which the
/// servers here are started without).
fn parse(payload: &[u8]) -> Option<(String, i32, Record)> {
    struct Cursor<'a>(&'a [u8]);
    impl Cursor<'_> {
        fn byte(&mut self) -> Option<u8> {
            let (&first, rest) = self.0.split_first()?;
            self.0 = rest;
            Some(first)
        }
        fn take(&mut self, len: usize) -> Option<&[u8]> {
            (self.0.len() >= len).then(|| {
                let (taken, rest) = self.0.split_at(len);
                self.0 = rest;
                taken
            })
        }
        fn length(&mut self) -> Option<u64> {
            let first = self.byte()?;
            match first >> 6 {
                0 => Some(u64::from(first & 0x3f)),
                1 => Some((u64::from(first & 0x3f) << 8) | u64::from(self.byte()?)),
                _ if first == 0x80 => Some(u64::from(u32::from_be_bytes(self.take(4)?.try_into().ok()?))),
                _ if first == 0x81 => Some(u64::from_be_bytes(self.take(8)?.try_into().ok()?)),
                _ => None,
            }
        }
    }
    const CHARACTERS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut cursor = Cursor(payload.get(..payload.len().checked_sub(10)?)?);
    if cursor.byte()? != 7 {
        return None;
    }
    let id = cursor.length()?;
    let name: String =
        (0..9).map(|index| CHARACTERS[((id >> (10 + 6 * (8 - index))) & 63) as usize] as char).collect();
    let mut record = Record::default();
    loop {
        let value = match cursor.length()? {
            0 => break,
            1 => RecordValue::Signed(cursor.length()? as i64),
            2 => RecordValue::Unsigned(cursor.length()?),
            4 => RecordValue::Double(f64::from_le_bytes(cursor.take(8)?.try_into().ok()?)),
            5 => {
                let len = usize::try_from(cursor.length()?).ok()?;
                RecordValue::Bytes(cursor.take(len)?.to_vec())
            }
            _ => return None,
        };
        record.0.push_back(value);
    }
    Some((name, (id & 1023) as i32, record))
}

fn mutated(random: &mut Random, name: &str, version: i32, record: &Record) -> Vec<u8> {
    let mut record = record.clone();
    let mut version = version;
    let edges = [0u64, 1, 2, 3, 255, 1 << 16, (1 << 31) - 1, 1 << 32, 1 << 40, 1 << 62, u64::MAX];
    let at = random.below(record.0.len().max(1));
    match random.below(6) {
        0 => version = [version + 1, version - 1, 5, 1023][random.below(4)],
        1 => {
            record.0.remove(at);
        }
        2 => {
            if let Some(value) = record.0.get(at).cloned() {
                record.0.insert(at, value);
            }
        }
        _ => match record.0.get_mut(at) {
            Some(RecordValue::Unsigned(value)) => {
                let raised = [value.wrapping_add(1), value.wrapping_sub(1), value.wrapping_mul(2)];
                *value = if random.below(2) == 0 {
                    edges[random.below(edges.len())]
                } else {
                    raised[random.below(3)]
                };
            }
            Some(RecordValue::Signed(value)) => *value = edges[random.below(edges.len())] as i64,
            Some(RecordValue::Double(value)) => {
                *value = [f64::NAN, f64::INFINITY, -f64::INFINITY, 0.0, -1.0, 1e308, *value * 10.0, 5e-324]
                    [random.below(8)];
            }
            Some(RecordValue::Bytes(bytes)) => match random.below(4) {
                0 => bytes.truncate(random.below(bytes.len().max(1))),
                1 => {
                    let len = 1 + random.below(64);
                    bytes.extend(random.bytes(len));
                }
                _ => {
                    for _ in 0..=random.below(4) {
                        let index = random.below(bytes.len().max(1));
                        if let Some(byte) = bytes.get_mut(index) {
                            *byte = random.below(256) as u8;
                        }
                    }
                }
            },
            None => {}
        },
    }
    encode_payload(name, version.clamp(0, 1023), &record).expect("a type name Redis registered")
}

/// A sketch under `key` answers its type's commands, reads and writes, and dumps and restores
/// to itself.
fn exercise(con: &mut Connection, key: &str) {
    let kind = ok(con, &["TYPE", key]);
    let commands: &[&str] = match &kind {
        Value::SimpleString(kind) if kind == "CMSk-TYPE" => {
            &["CMS.INFO", "CMS.QUERY {} a b", "CMS.INCRBY {} a 1 b 1000", "CMS.MERGE {} 1 {} WEIGHTS 2"]
        }
        Value::SimpleString(kind) if kind == "TopK-TYPE" || kind == "rbTOPKwnd" => &[
            "TOPK.INFO",
            "TOPK.LIST {} WITHCOUNT",
            "TOPK.ADD {} a b a c",
            "TOPK.INCRBY {} a 100000",
            "TOPK.QUERY {} a z",
            "TOPK.COUNT {} a z",
        ],
        Value::SimpleString(kind) if kind == "rbBF-wind" => &[
            "BF.INFO",
            "BF.DEBUG",
            "BF.CARD",
            "BF.MEXISTS {} a b c",
            "BF.MADD {} a b c",
            "BF.SCANDUMP {} 0",
            "BF.SCANDUMP {} 1",
        ],
        Value::SimpleString(kind) if kind == "rbCMSwind" => &[
            "CMS.INFO",
            "CMS.QUERY {} a b z",
            "CMS.INCRBY {} a 5 b 1000",
            "CMS.MERGE {} 2 {} {} WEIGHTS 2 1",
            "CMS.QUERY {} a",
        ],
        Value::SimpleString(kind) if kind == "rbTDIGwnd" => &[
            "TDIGEST.INFO",
            "TDIGEST.MIN",
            "TDIGEST.MAX",
            "TDIGEST.QUANTILE {} 0 0.5 1",
            "TDIGEST.CDF {} 0 1e300",
            "TDIGEST.REVRANK {} 0 5",
            "TDIGEST.BYREVRANK {} 0 3 1000000",
            "TDIGEST.TRIMMED_MEAN {} 0.1 0.9",
            "TDIGEST.ADD {} 1 2 3",
            "TDIGEST.MERGE {}:merged 2 {} {}",
            "TDIGEST.QUANTILE {}:merged 0.5",
            "TDIGEST.MERGE {} 1 {}:merged",
        ],
        Value::SimpleString(kind) if kind == "TDIS-TYPE" => &[
            "TDIGEST.INFO",
            "TDIGEST.MIN",
            "TDIGEST.MAX",
            "TDIGEST.QUANTILE {} 0 0.5 1",
            "TDIGEST.CDF {} 0 1e300",
            "TDIGEST.RANK {} 0 5",
            "TDIGEST.BYRANK {} 0 3 1000000",
            "TDIGEST.TRIMMED_MEAN {} 0.1 0.9",
            "TDIGEST.ADD {} 1 2 3",
            "TDIGEST.MERGE {}:merged 2 {} {}",
            "TDIGEST.QUANTILE {}:merged 0.5",
        ],
        other => panic!("{key} holds {other:?}"),
    };
    for command in commands {
        let text =
            if command.contains("{}") { command.replace("{}", key) } else { format!("{command} {key}") };
        let args = words(&text);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        // An error is a fine answer; a dropped connection is not.
        let _ = call(con, &args);
    }
    assert_eq!(ok(con, &["PING"]), Value::SimpleString("PONG".into()), "after commands on {key}");
    let before = digest(con, key);
    let payload = dump_payload(con, key);
    call_bytes(con, &[b"RESTORE", b"hostile:copy", b"0", &payload, b"REPLACE"])
        .expect("RESTORE of its own DUMP");
    assert_eq!(digest(con, "hostile:copy"), before, "{key}: DUMP and RESTORE");
}

#[test]
fn mutated_sketch_payloads_are_refused_or_sound() {
    let config = ["--rdbcompression", "no"];
    let mut random = Random::seeded();
    let victim = Server::start_with(&["max-filter-bytes", "16777216"], &config);
    let mut con = victim.connection();
    ok(&mut con, &["SET", "bystander", "untouched"]);
    let mut originals = Vec::new();
    for source in [Server::start_with(&[], &config), Server::start_redisbloom(&config)] {
        let mut source_con = source.connection();
        fill(&mut source_con);
        for key in super::persistence::KEYS {
            let payload = dump_payload(&mut source_con, key);
            originals.push(parse(&payload).unwrap_or_else(|| panic!("{key}: not a module payload")));
        }
    }
    // And this module's windowed filters, whose record is the same kind of values.
    let source = Server::start_with(&[], &config);
    let mut source_con = source.connection();
    ok(&mut source_con, &["BF.RESERVE", "w", "0.01", "200", "WINDOW", "3600000", "GENERATIONS", "3"]);
    ok(&mut source_con, &["BF.MADD", "w", "a", "b", "c", "d"]);
    ok(&mut source_con, &["BF.INSERT", "w2", "WINDOW", "86400000", "NONSCALING", "ITEMS", "x", "y"]);
    // And its windowed Count-Min sketches: closed generations of 100 ms spans, and a day's.
    ok(&mut source_con, &["CMS.INITBYDIM", "cw", "20", "3", "WINDOW", "400"]);
    for round in 0..3 {
        ok(&mut source_con, &["CMS.INCRBY", "cw", "a", "3", &format!("r{round}"), "1"]);
        std::thread::sleep(std::time::Duration::from_millis(110));
    }
    ok(&mut source_con, &["CMS.INITBYDIM", "cw2", "30", "2", "CELL_SIZE", "1", "WINDOW", "86400000"]);
    ok(&mut source_con, &["CMS.INCRBY", "cw2", "a", "200", "b", "1"]);
    // And its windowed t-digests.
    ok(
        &mut source_con,
        &["TDIGEST.CREATE", "tw", "COMPRESSION", "30", "WINDOW", "3600000", "GENERATIONS", "3"],
    );
    ok(&mut source_con, &["TDIGEST.ADD", "tw", "1", "2.5", "-7", "1e300", "42"]);
    ok(&mut source_con, &["TDIGEST.CREATE", "tw2", "WINDOW", "86400000"]);
    // And windowed Top-K lists, one of a single generation, one of several.
    ok(&mut source_con, &["TOPK.RESERVE", "wt", "3", "20", "3", "0.9", "WINDOW", "3600000"]);
    ok(&mut source_con, &["TOPK.ADD", "wt", "a", "b", "a", "c", "d"]);
    ok(&mut source_con, &["TOPK.RESERVE", "wt2", "2", "WINDOW", "300", "GENERATIONS", "3"]);
    for round in 0..3 {
        ok(&mut source_con, &["TOPK.INCRBY", "wt2", "a", "5", &format!("r{round}"), "7"]);
        std::thread::sleep(std::time::Duration::from_millis(110));
    }
    for key in ["w", "w2", "cw", "cw2", "wt", "wt2", "tw", "tw2"] {
        let payload = dump_payload(&mut source_con, key);
        originals.push(parse(&payload).unwrap_or_else(|| panic!("{key}: not a module payload")));
    }
    let (mut loaded, mut refused) = (0, 0);
    for round in 0..1500 {
        let (name, version, record) = &originals[round % originals.len()];
        let payload = mutated(&mut random, name, *version, record);
        match call_bytes(&mut con, &[b"RESTORE", b"victim", b"0", &payload, b"REPLACE"]) {
            Ok(_) => {
                loaded += 1;
                exercise(&mut con, "victim");
            }
            Err(_) => refused += 1,
        }
        assert_eq!(ok(&mut con, &["PING"]), Value::SimpleString("PONG".into()), "round {round}");
    }
    eprintln!("{loaded} mutated payloads loaded and worked, {refused} refused");
    assert!(
        loaded > 100 && refused > 100,
        "the mutations test both paths: {loaded} loaded, {refused} refused"
    );
    ok(&mut con, &["DEBUG", "RELOAD"]);
    assert_eq!(ok(&mut con, &["GET", "bystander"]), Value::BulkString(b"untouched".to_vec()));
}

/// What RedisBloom 2.8.2 crashes on, or tries gigabytes for, answers errors here (or sound
/// answers), and the server stays up.
#[test]
fn redisbloom_hazards_answer_errors_here() {
    let server = Server::start();
    let mut con = server.connection();
    let refused = [
        ("CMS.INITBYDIM c 4294967295 4294967295", "CMS: invalid init arguments"),
        ("CMS.INITBYDIM c 1000000000 100", "CMS: Insufficient memory to create the key"),
        ("TOPK.RESERVE t 1000000000 8 7 0.9", "ERR Insufficient memory to create topk data structure"),
        ("TOPK.RESERVE t 10 1000000000 100 0.9", "ERR Insufficient memory to create topk data structure"),
        ("TOPK.RESERVE t 4294967296", "TopK: invalid k"),
        // A window of generations each within the cap, all of them beyond it.
        (
            "TDIGEST.CREATE w COMPRESSION 5000000 WINDOW 60000 GENERATIONS 64",
            "ERR T-Digest: allocation failed",
        ),
        // A window's generations are budgeted at creation: each would be 8 GB here.
        (
            "TOPK.RESERVE t 10 100000000 10 0.9 WINDOW 1000",
            "ERR Insufficient memory to create topk data structure",
        ),
        (
            "TOPK.RESERVE t 10 WINDOW 1099511627777",
            "ERR window must be an integer of milliseconds in [1, 1099511627776]",
        ),
    ];
    for (command, expected) in refused {
        let args = words(command);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(err(&mut con, &args), expected, "{command}");
    }
    let huge_compression = err(&mut con, &["TDIGEST.CREATE", "d", "COMPRESSION", "1000000000"]);
    assert!(!huge_compression.is_empty());
    assert_eq!(ok(&mut con, &["DBSIZE"]), Value::Int(0), "nothing was created");
    ok(&mut con, &["TDIGEST.CREATE", "d"]);
    let _ = call(&mut con, &["TDIGEST.ADD", "d", "1e308", "1e308", "-1e308"]);
    for _ in 0..3 {
        let _ = call(&mut con, &["TDIGEST.ADD", "d", "1e308", "1e308", "-1e308"]);
        let _ = call(&mut con, &["TDIGEST.QUANTILE", "d", "0.5"]);
    }
    let info = ok(&mut con, &["TDIGEST.INFO", "d"]);
    assert!(!matches!(info, Value::Nil));
    ok(&mut con, &["DEBUG", "RELOAD"]);
    assert_eq!(ok(&mut con, &["PING"]), Value::SimpleString("PONG".into()));
}

/// A t-digest record of a few dozen bytes naming sixty million buffered nodes (RedisBloom's
/// loader zeroes as many as a record names) once made the server hold a gigabyte, and the
/// digest, full, refuse every add: it is refused, and the server holds what it held.
#[test]
fn a_record_naming_millions_of_buffered_nodes_is_refused() {
    let server = Server::start_with(&[], &["--rdbcompression", "no"]);
    let mut con = server.connection();
    let used = |con: &mut Connection| -> u64 {
        info_field(con, "memory", "used_memory").and_then(|bytes| bytes.parse().ok()).unwrap_or(u64::MAX)
    };
    let before = used(&mut con);
    let (capacity, buffered) = (60_000_010, 60_000_010);
    let record = Record(
        vec![
            RecordValue::Double(1e7),
            RecordValue::Double(0.0),
            RecordValue::Double(0.0),
            RecordValue::Signed(capacity),
            RecordValue::Signed(0),
            RecordValue::Signed(buffered),
            RecordValue::Signed(0),
            RecordValue::Double(0.0),
            RecordValue::Double(0.0),
        ]
        .into(),
    );
    let payload = encode_payload("TDIS-TYPE", 0, &record).expect("a registered type");
    assert!(payload.len() < 100, "{} bytes", payload.len());
    assert!(call_bytes(&mut con, &[b"RESTORE", b"d", b"0", &payload]).is_err());
    assert_eq!(ok(&mut con, &["EXISTS", "d"]), Value::Int(0));
    assert!(used(&mut con) < before + (16 << 20), "{} bytes held, {before} before", used(&mut con));
}
