//! Sketches of every cell size in every way the server keeps and moves them: their records
//! (encoding version 0 in the RDB and in DUMP payloads, as Redis stamps the registered
//! version on every value, a sketch of another cell size than 4 bytes marked there; in the
//! AOF, version 0 for 4-byte cells and 1 for the others), DEBUG RELOAD, an AOF rewrite
//! without the RDB preamble and the commands after it, SAVE and restart, COPY, a replica;
//! hand-built records of version 1, hostile ones refused; and the way back to RedisBloom
//! 2.8.2, which reads version 0 only: sketches of 4-byte cells go back by the RDB, a DUMP and
//! the AOF, and one of another cell size is refused there rather than misread.

use super::persistence::survives_save_restart_and_copy;
use super::{as_in_redisbloom_2_8, replies, words, Script};
use crate::harness::*;
use redbloom_core::decode::{Record, RecordValue};
use redbloom_core::dump_payload::dump_payload as encode_payload;
use redis::{Connection, Value};

/// The sketches of each cell size, the default one and a merged one, and the keys of 4-byte
/// cells among them.
const KEYS: [&str; 6] = ["c1", "c2", "c4", "c8", "default", "merged"];
const FOUR_BYTE_KEYS: usize = 3;

/// Module id of `CMSk-TYPE` at encoding version 0 (version 1 is this plus 1), as the bytes
/// that start a DUMP payload after the RDB type and the length marker.
const TYPE_ID_V0: u64 = 0x08c4_a4f9_360f_1000;

fn script(lines: &[&str]) -> Script {
    lines.iter().map(|line| words(line)).collect()
}

fn create() -> Script {
    script(&[
        "CMS.INITBYDIM c1 50 4 CELL_SIZE 1",
        "CMS.INITBYDIM c2 50 4 CELL_SIZE 2",
        "CMS.INITBYPROB c4 0.04 0.07 CELL_SIZE 4",
        "CMS.INITBYDIM c8 50 4 CELL_SIZE 8",
        "CMS.INITBYDIM default 50 4",
        "CMS.INITBYDIM merged 50 4",
    ])
}

/// Increments of every kind, refused ones among them (which must change nothing anywhere).
fn traffic(random: &mut Random) -> Script {
    let mut script = Script::new();
    for round in 0..20 {
        for key in ["c1", "c2", "c4", "c8", "default"] {
            let mut command = words(&format!("CMS.INCRBY {key}"));
            for _ in 0..10 {
                let by = match random.below(6) {
                    0 => -(random.below(20) as i64),
                    1 => 250 + random.below(10) as i64,
                    _ => random.below(30) as i64,
                };
                command.extend([format!("i{}", random.below(25)), by.to_string()]);
            }
            script.push(command);
        }
        if round % 5 == 4 {
            script.push(words("CMS.MERGE merged 2 default merged WEIGHTS 1 1"));
        }
    }
    script.push(words("CMS.INCRBY c8 huge 9223372036854775000"));
    script
}

/// Every key's digest, and its INFO and counts.
fn snapshot(con: &mut Connection) -> Vec<(String, Value, Value)> {
    let items: Vec<String> = (0..25).map(|n| format!("i{n}")).collect();
    KEYS.iter()
        .map(|&key| {
            let mut query = vec!["CMS.QUERY", key];
            query.extend(items.iter().map(String::as_str));
            (digest(con, key), ok(con, &["CMS.INFO", key]), ok(con, &query))
        })
        .collect()
}

/// Runs a script; every command must be answered (refused pairs are elements, not errors).
fn run(con: &mut Connection, script: &Script) {
    for (command, reply) in script.iter().zip(replies(con, script)) {
        assert!(reply.is_ok(), "{command:?}: {reply:?}");
    }
}

/// The encoding version a DUMP payload of `CMSk-TYPE` carries.
fn payload_version(payload: &[u8]) -> u64 {
    assert_eq!(payload[..2], [7, 0x81], "a module value with an 8-byte id");
    let id = u64::from_be_bytes(payload[2..10].try_into().unwrap());
    assert_eq!(id & !1023, TYPE_ID_V0, "CMSk-TYPE");
    id & 1023
}

/// How many RESTORE payloads of each version (0, 1) the AOF's base file holds (the one its
/// manifest names: an older one may linger until Redis removes it).
fn aof_payload_versions(server: &Server) -> [usize; 2] {
    let directory = server.dir().join("appendonlydir");
    let manifest = std::fs::read_dir(&directory)
        .unwrap()
        .filter_map(Result::ok)
        .find(|entry| entry.file_name().to_string_lossy().ends_with(".manifest"))
        .expect("a manifest");
    let manifest = std::fs::read_to_string(manifest.path()).unwrap();
    let base = manifest
        .lines()
        .find(|line| line.ends_with("type b"))
        .and_then(|line| line.split_whitespace().nth(1))
        .expect("a base file in the manifest");
    let bytes = std::fs::read(directory.join(base)).unwrap();
    [0u64, 1].map(|version| {
        let mut prefix = vec![7, 0x81];
        prefix.extend((TYPE_ID_V0 | version).to_be_bytes());
        bytes.windows(prefix.len()).filter(|window| *window == prefix.as_slice()).count()
    })
}

#[test]
fn every_cell_size_survives_dump_reload_aof_restart_and_copy() {
    let aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"];
    let mut server = Server::start_with(&[], &aof);
    let mut con = server.connection();
    let mut random = Random::seeded();
    run(&mut con, &create());
    run(&mut con, &traffic(&mut random));
    let before = snapshot(&mut con);
    let mut digests: Vec<&String> = before.iter().map(|(digest, _, _)| digest).collect();
    digests.sort();
    digests.dedup();
    assert_eq!(digests.len(), KEYS.len(), "digests tell the sketches apart");

    // The RDB's version, whatever the cell size: Redis stamps the registered one.
    for key in KEYS {
        let payload = dump_payload(&mut con, key);
        assert_eq!(payload_version(&payload), 0, "{key}");
        call_bytes(&mut con, &[b"RESTORE", b"copy", b"0", &payload, b"REPLACE"]).unwrap();
        assert_eq!(digest(&mut con, "copy"), digest(&mut con, key), "DUMP and RESTORE of {key}");
        assert_eq!(ok(&mut con, &["CMS.INFO", "copy"]), ok(&mut con, &["CMS.INFO", key]));
    }
    ok(&mut con, &["DEL", "copy"]);

    ok(&mut con, &["DEBUG", "RELOAD"]);
    assert_eq!(snapshot(&mut con), before, "after DEBUG RELOAD");

    // The AOF's RESTOREs: version 0 for 4-byte cells, which every RedisBloom reads.
    ok(&mut con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut con);
    assert_eq!(aof_payload_versions(&server), [FOUR_BYTE_KEYS, KEYS.len() - FOUR_BYTE_KEYS]);
    // Commands after the rewrite, refused pairs among them, replay alike.
    let after_rewrite = traffic(&mut random);
    run(&mut con, &after_rewrite);
    let before = snapshot(&mut con);
    server.restart();
    let mut con = server.connection();
    assert_eq!(snapshot(&mut con), before, "after an AOF rewrite, more commands and a restart");
    survives_save_restart_and_copy(&mut server, &KEYS, snapshot, &before);
}

#[test]
fn a_replica_holds_every_cell_size_bit_for_bit() {
    let master = Server::start_with(&[], &["--repl-diskless-sync-delay", "0"]);
    let mut con = master.connection();
    let mut random = Random::seeded();
    // Half the traffic before the replica syncs (an RDB of version 0), half after (commands,
    // refused pairs included, which the replica refuses alike).
    run(&mut con, &create());
    run(&mut con, &traffic(&mut random));
    let replica = Server::start_with(&[], &["--replicaof", "127.0.0.1", &master.port.to_string()]);
    let mut replica_con = replica.connection();
    wait_in_sync(&mut con, &mut replica_con);
    assert_eq!(snapshot(&mut replica_con), snapshot(&mut con), "after the full sync");
    run(&mut con, &traffic(&mut random));
    wait_in_sync(&mut con, &mut replica_con);
    assert_eq!(snapshot(&mut replica_con), snapshot(&mut con), "after the commands");
}

fn record(values: &[RecordValue]) -> Record {
    Record(values.iter().cloned().collect())
}

fn restore(con: &mut Connection, key: &str, version: i32, values: &[RecordValue]) -> Result<Value, String> {
    let payload = encode_payload("CMSk-TYPE", version, &record(values)).unwrap();
    call_bytes(con, &[b"RESTORE", key.as_bytes(), b"0", &payload, b"REPLACE"])
}

/// A 3 x 1 record: width, depth, total, [cell size], counters.
fn fields(count: u64, cell_size: Option<u64>, counters: Vec<u8>) -> Vec<RecordValue> {
    let mut values = vec![RecordValue::Unsigned(3), RecordValue::Unsigned(1), RecordValue::Unsigned(count)];
    values.extend(cell_size.map(RecordValue::Unsigned));
    values.push(RecordValue::Bytes(counters));
    values
}

fn cells(counters: &[u64], size: usize) -> Vec<u8> {
    counters.iter().flat_map(|counter| counter.to_le_bytes()[..size].to_vec()).collect()
}

#[test]
fn hand_built_version_1_records_load_and_hostile_ones_are_refused() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["SET", "bystander", "untouched"]);
    for (size, max) in [(1usize, 255u64), (2, 65_535), (4, 4_294_967_295), (8, i64::MAX as u64)] {
        // The total is the counters' sum, at the widest cells' maximum.
        let counters = [max - 7, 7, 0];
        let loaded = restore(&mut con, "k", 1, &fields(max, Some(size as u64), cells(&counters, size)));
        assert_eq!(loaded, Ok(Value::Okay), "cell size {size}");
        let Value::Array(info) = ok(&mut con, &["CMS.INFO", "k"]) else { panic!() };
        assert_eq!(info[6..], [simple("cell_size"), Value::Int(size as i64)]);
        assert_eq!(info[4..6], [simple("count"), Value::Int(max as i64)]);
        // Each counter answers for the items that land in it.
        let Value::Array(counts) = ok(&mut con, &["CMS.QUERY", "k", "a", "b", "c", "d", "e", "f"]) else {
            panic!()
        };
        let held = counters.map(|counter| Value::Int(counter as i64));
        assert!(counts.iter().all(|count| held.contains(count)), "{counts:?}");
        let payload = dump_payload(&mut con, "k");
        assert_eq!(payload_version(&payload), 0);
        // A version 2 record with the legacy hash loads as version 1.
        let mut version_2 = fields(max, Some(size as u64), cells(&counters, size));
        version_2.extend([RecordValue::Unsigned(0), RecordValue::Unsigned(0)]);
        assert_eq!(restore(&mut con, "k2", 2, &version_2), Ok(Value::Okay));
        assert_eq!(dump_payload(&mut con, "k2"), payload);
    }
    let refused: Vec<(i32, Vec<RecordValue>, &str)> = vec![
        (1, fields(0, Some(3), vec![0; 12]), "cell size 3"),
        (1, fields(0, Some(0), vec![]), "cell size 0"),
        (1, fields(0, Some(16), vec![0; 48]), "cell size 16"),
        (1, fields(0, Some(8), cells(&[0, (i64::MAX as u64) + 1, 0], 8)), "an 8-byte counter past i64::MAX"),
        (1, fields(0, Some(8), cells(&[u64::MAX, 0, 0], 8)), "an 8-byte counter of all ones"),
        (1, fields((i64::MAX as u64) + 1, Some(4), vec![0; 12]), "a total past i64::MAX"),
        (0, fields(u64::MAX, None, vec![0; 12]), "a version 0 total past i64::MAX"),
        (1, fields(0, Some(2), vec![0; 12]), "4-byte counters said to be 2"),
        (1, fields(0, Some(8), vec![0; 12]), "4-byte counters said to be 8"),
        (1, fields(0, None, vec![0; 12]), "version 1 without a cell size"),
        (
            2,
            [fields(0, Some(4), vec![0; 12]), vec![RecordValue::Unsigned(1), RecordValue::Unsigned(9)]]
                .concat(),
            "a seeded hash",
        ),
    ];
    for (version, values, what) in refused {
        let answer = restore(&mut con, "hostile", version, &values);
        assert!(answer.as_ref().is_err_and(|error| error.contains("Bad data format")), "{what}: {answer:?}");
        assert_eq!(ok(&mut con, &["EXISTS", "hostile"]), Value::Int(0), "{what}");
    }
    assert_eq!(ok(&mut con, &["GET", "bystander"]), Value::BulkString(b"untouched".to_vec()));
}

#[test]
fn redisbloom_2_8_records_load_as_4_byte_cells_and_go_back_by_rdb_dump_and_aof() {
    // Version 0 from the real RedisBloom 2.8.2: 4-byte cells, open to 8.12's commands.
    let redisbloom = Server::start_redisbloom(&[]);
    let mut theirs = redisbloom.connection();
    ok(&mut theirs, &["CMS.INITBYDIM", "old", "20", "5"]);
    ok(&mut theirs, &["CMS.INCRBY", "old", "a", "7", "b", "3"]);
    let aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"];
    let ours = Server::start_with(&[], &aof);
    let mut con = ours.connection();
    let payload = dump_payload(&mut theirs, "old");
    assert_eq!(payload_version(&payload), 0);
    call_bytes(&mut con, &[b"RESTORE", b"old", b"0", &payload]).unwrap();
    let info = ok(&mut con, &["CMS.INFO", "old"]);
    assert_eq!(
        as_in_redisbloom_2_8(&words("CMS.INFO old"), &Ok(info)),
        Ok(ok(&mut theirs, &["CMS.INFO", "old"]))
    );
    assert_eq!(ok(&mut con, &["CMS.INCRBY", "old", "a", "-2"]), Value::Array(vec![Value::Int(5)]));

    // Back: the AOF holds 4-byte sketches as version 0, which RedisBloom 2.8.2 replays. A
    // sketch of another cell size is a RESTORE of version 1 there, which its loader refuses,
    // and Redis stops: such sketches must go (or be rebuilt with 4-byte cells) first.
    ok(&mut con, &["CMS.INITBYDIM", "made", "40", "3", "CELL_SIZE", "4"]);
    ok(&mut con, &["CMS.INITBYDIM", "narrow", "40", "3", "CELL_SIZE", "2"]);
    ok(&mut con, &["CMS.INCRBY", "made", "x", "9", "y", "4", "x", "-1"]);
    ok(&mut con, &["CMS.INCRBY", "narrow", "x", "9"]);
    ok(&mut con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut con);
    let mut refusing = Server::prepared(redisbloom_path(), &[], &aof);
    refusing.take_file(&ours, "appendonlydir");
    let log = refusing.run_until_exit();
    assert!(log.contains("module data for the module 'bf' that is not terminated"), "{log}");

    // A DUMP, and so an RDB, holds a sketch of 4-byte cells in version 0, which RedisBloom
    // 2.8.2 takes; one of 2-byte cells is marked, and refused there (`Bad data format`; an
    // RDB holding one stops the server) rather than read as a sketch of 4-byte cells.
    let narrow = dump_payload(&mut con, "narrow");
    assert_eq!(payload_version(&narrow), 0);
    let refused = call_bytes(&mut theirs, &[b"RESTORE", b"dumped", b"0", &narrow]);
    assert!(refused.is_err_and(|error| error.contains("Bad data format")));
    assert_eq!(ok(&mut theirs, &["EXISTS", "dumped"]), Value::Int(0));
    let made = dump_payload(&mut con, "made");
    call_bytes(&mut theirs, &[b"RESTORE", b"dumped", b"0", &made]).expect("RedisBloom takes version 0");
    for command in ["CMS.INFO dumped", "CMS.QUERY dumped x y z"] {
        let command = words(command);
        let original = words(&command.join(" ").replace("dumped", "made"));
        let ours = replies(&mut con, &vec![original]).remove(0);
        let theirs = replies(&mut theirs, &vec![command.clone()]).remove(0);
        assert_eq!(as_in_redisbloom_2_8(&command, &ours), theirs, "{command:?}");
    }
    ok(&mut con, &["SAVE"]);
    let mut by_rdb = Server::prepared(redisbloom_path(), &[], &[]);
    by_rdb.take_file(&ours, "dump.rdb");
    let log = by_rdb.run_until_exit();
    assert!(log.contains("module data for the module 'bf' that is not terminated"), "{log}");

    ok(&mut con, &["DEL", "narrow"]);
    ok(&mut con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut con);
    ok(&mut con, &["CMS.INCRBY", "made", "y", "6"]);
    ok(&mut con, &["SAVE"]);
    for (way, file, options) in [("AOF", "appendonlydir", &aof[..]), ("RDB", "dump.rdb", &[][..])] {
        let mut back = Server::prepared(redisbloom_path(), &[], options);
        back.take_file(&ours, file);
        back.launch();
        let mut returned = back.connection();
        for (key, items) in [("old", "a b c"), ("made", "x y z")] {
            for command in [format!("CMS.INFO {key}"), format!("CMS.QUERY {key} {items}")] {
                let command = words(&command);
                let ours = replies(&mut con, &vec![command.clone()]).remove(0);
                let theirs = replies(&mut returned, &vec![command.clone()]).remove(0);
                assert_eq!(as_in_redisbloom_2_8(&command, &ours), theirs, "{way}: {command:?}");
            }
        }
    }
}
