//! Switching from RedisBloom and back, against the real RedisBloom 2.8.2 binary: its RDB
//! files, AOF files, DUMP payloads and SCANDUMP streams load into this module, and filters
//! in its format go back to it, compared item by item and byte for byte with a RedisBloom
//! server that ran the same commands.

use crate::harness::*;
use redis::{Connection, Value};

/// A filter RedisBloom holds: how it was made and what was added.
pub(super) struct Kind {
    pub(super) key: &'static str,
    /// BF.RESERVE's arguments after the key; empty for a filter made by BF.MADD's defaults.
    pub(super) reserve: &'static [&'static str],
    pub(super) items: Vec<Vec<u8>>,
}

/// Every kind of filter the comparison covers: scaling chains of 10 and more links,
/// non-scaling, expansions of 1, 1000 and 100000, error rates from 0.25 to 1e-9, empty, binary and
/// long items, capacities from 1 to millions (one filter takes two 16 MiB chunks).
fn catalogue() -> Vec<Kind> {
    let mut random = Random::seeded();
    let mut binary: Vec<Vec<u8>> = (0..1000)
        .map(|_| {
            let len = random.below(64);
            random.bytes(len)
        })
        .collect();
    binary.extend((0..20).map(|n| vec![n as u8; 10_000 + 5000 * n]));
    binary.push(Vec::new());
    vec![
        Kind { key: "defaults", reserve: &[], items: numbered("d", 1000) },
        Kind { key: "chain", reserve: &["0.01", "10"], items: numbered("c", 20_000) },
        Kind { key: "nonscaling", reserve: &["0.001", "5000", "NONSCALING"], items: numbered("n", 6000) },
        Kind { key: "expansion1", reserve: &["0.05", "20", "EXPANSION", "1"], items: numbered("e", 300) },
        Kind {
            key: "expansion1000",
            reserve: &["0.01", "100", "EXPANSION", "1000"],
            items: numbered("x", 2000),
        },
        // RedisBloom bounds the expansion only from below; this module's commands stop at 32768.
        Kind {
            key: "expansion100000",
            reserve: &["0.01", "100", "EXPANSION", "100000"],
            items: numbered("y", 150),
        },
        Kind { key: "loose", reserve: &["0.25", "1000"], items: numbered("l", 1500) },
        Kind { key: "tight", reserve: &["0.000000001", "1000"], items: numbered("t", 1500) },
        Kind { key: "empty", reserve: &["0.01", "1000"], items: Vec::new() },
        Kind { key: "one", reserve: &["0.1", "1"], items: numbered("o", 40) },
        Kind { key: "binary", reserve: &["0.01", "2000"], items: binary },
        Kind { key: "large", reserve: &["0.0001", "9000000"], items: numbered("g", 100_000) },
    ]
}

/// Adds items with BF.MADD, 500 a call; answers the items acknowledged (answered 0 or 1):
/// a full non-scaling filter answers an error instead and ends its batch there.
pub(super) fn add(con: &mut Connection, key: &str, items: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut acknowledged = Vec::new();
    for batch in items.chunks(500) {
        let mut args: Vec<&[u8]> = vec![b"BF.MADD", key.as_bytes()];
        args.extend(batch.iter().map(Vec::as_slice));
        let Value::Array(replies) =
            call_bytes(con, &args).unwrap_or_else(|error| panic!("BF.MADD {key}: {error}"))
        else {
            panic!("BF.MADD {key}: not an array")
        };
        let answered = replies.iter().take_while(|reply| matches!(reply, Value::Int(_)));
        acknowledged.extend(batch.iter().zip(answered).map(|(item, _)| item.clone()));
    }
    acknowledged
}

/// Makes the filter on `con`, and keeps in `kind.items` only what it acknowledged.
pub(super) fn create(con: &mut Connection, kind: &mut Kind) {
    if !kind.reserve.is_empty() {
        let mut args = vec!["BF.RESERVE", kind.key];
        args.extend(kind.reserve);
        ok(con, &args);
    }
    kind.items = add(con, kind.key, &kind.items);
}

/// A RedisBloom server holding every kind of filter.
fn redisbloom_with_catalogue(config: &[&str]) -> (Server, Vec<Kind>) {
    let server = Server::start_redisbloom(config);
    let mut con = server.connection();
    let mut kinds = catalogue();
    for kind in &mut kinds {
        create(&mut con, kind);
    }
    assert!(
        kinds.iter().any(|kind| kind.key == "nonscaling" && kind.items.len() < 6000),
        "meant to fill one"
    );
    (server, kinds)
}

/// Items never added: the false positives among them are the filter's own, so both servers
/// must give exactly the same answers.
fn non_members() -> Vec<Vec<u8>> {
    let mut probes = numbered("absent:", 30_000);
    probes.extend((0..2000u32).map(|n| n.to_le_bytes().to_vec()));
    probes
}

/// The filter under `key` on `tested` is, item by item and byte for byte, the one on
/// `reference`: every item present, the same BF.CARD, BF.INFO, BF.DEBUG, the same answers for
/// non-members and the same SCANDUMP stream.
pub(super) fn assert_same_filter(
    reference: &mut Connection,
    tested: &mut Connection,
    key: &str,
    items: &[Vec<u8>],
) {
    assert_same_answers(reference, tested, key, items);
    assert!(scandump(tested, key) == scandump(reference, key), "{key}: SCANDUMP streams differ");
}

/// As [`assert_same_filter`], but for the SCANDUMP stream.
pub(super) fn assert_same_answers(
    reference: &mut Connection,
    tested: &mut Connection,
    key: &str,
    items: &[Vec<u8>],
) {
    assert_eq!(ok(tested, &["TYPE", key]), Value::SimpleString("MBbloom--".into()), "{key}");
    let present = answers(tested, "BF.MEXISTS", key, items);
    assert!(present.iter().all(|answer| *answer == Value::Int(1)), "{key}: an item added is missing");
    for command in ["BF.CARD", "BF.INFO", "BF.DEBUG"] {
        assert_eq!(ok(tested, &[command, key]), ok(reference, &[command, key]), "{command} {key}");
    }
    let probes = non_members();
    let mine = answers(tested, "BF.MEXISTS", key, &probes);
    assert!(
        mine == answers(reference, "BF.MEXISTS", key, &probes),
        "{key}: non-members answered differently"
    );
}

fn assert_all_same(theirs: &Server, ours: &Server, kinds: &[Kind]) {
    let (mut theirs, mut ours) = (theirs.connection(), ours.connection());
    for kind in kinds {
        assert_same_filter(&mut theirs, &mut ours, kind.key, &kind.items);
    }
}

/// Adds that make the small filters grow, applied to both servers.
fn grow(servers: [&Server; 2]) -> Vec<(&'static str, Vec<Vec<u8>>)> {
    let growth = vec![
        ("one", numbered("more", 1500)),
        ("chain", numbered("c", 25_000)),
        ("expansion1", numbered("e", 400)),
    ];
    for server in servers {
        let mut con = server.connection();
        for (key, items) in &growth {
            add(&mut con, key, items);
        }
    }
    growth
}

/// Every item of `kinds`, plus what `grow` added, by key.
fn items_after_growth(
    kinds: &[Kind],
    grown: &[(&'static str, Vec<Vec<u8>>)],
) -> Vec<(&'static str, Vec<Vec<u8>>)> {
    kinds
        .iter()
        .map(|kind| {
            let mut items = kind.items.clone();
            for (_, more) in grown.iter().filter(|(key, _)| *key == kind.key) {
                items.extend(more.iter().cloned());
            }
            (kind.key, items)
        })
        .collect()
}

#[test]
fn a_redisbloom_rdb_loads_and_every_filter_answers_as_before() {
    let (theirs, kinds) = redisbloom_with_catalogue(&[]);
    ok(&mut theirs.connection(), &["SAVE"]);
    let mut ours = Server::prepared(module_path(), &[], &[]);
    ours.take_file(&theirs, "dump.rdb");
    ours.launch();
    assert_all_same(&theirs, &ours, &kinds);

    // Growing here grows as RedisBloom grows.
    let grown = grow([&theirs, &ours]);
    let (mut their_con, mut our_con) = (theirs.connection(), ours.connection());
    for (key, items) in items_after_growth(&kinds, &grown) {
        assert_same_filter(&mut their_con, &mut our_con, key, &items);
    }
    let links = ok(&mut our_con, &["BF.INFO", "one", "FILTERS"]);
    assert!(
        matches!(links, Value::Array(ref n) if matches!(n[0], Value::Int(10..))),
        "a short chain: {links:?}"
    );
}

#[test]
fn a_redisbloom_aof_replays_including_commands_after_the_rewrite() {
    // Every write reaches the file before its reply: the file is copied while the server runs,
    // and with `everysec` a write can wait behind a slow fsync.
    let config = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"];
    let (theirs, kinds) = redisbloom_with_catalogue(&config);
    let mut con = theirs.connection();
    ok(&mut con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut con);
    // These go to the incremental file, as commands.
    let more = numbered("after-rewrite", 500);
    add(&mut con, "one", &more);
    ok(&mut con, &["BF.RESERVE", "late", "0.02", "30"]);
    add(&mut con, "late", &numbered("late", 100));

    // Filters the AOF's commands create (BF.RESERVE, BF.ADD) take the configured format:
    // RedisBloom's here, so that they too can be compared byte for byte.
    let mut ours = Server::prepared(module_path(), &["format", "redisbloom"], &config);
    ours.take_file(&theirs, "appendonlydir");
    ours.launch();
    let mut our_con = ours.connection();
    for kind in &kinds {
        let mut items = kind.items.clone();
        if kind.key == "one" {
            items.extend(more.iter().cloned());
        }
        assert_same_filter(&mut con, &mut our_con, kind.key, &items);
    }
    assert_same_filter(&mut con, &mut our_con, "late", &numbered("late", 100));

    // Under the default format, what the AOF's commands create is in redbloom's format, with
    // every item; what its LOADCHUNKs carry is RedisBloom's, as before.
    let mut default_format = Server::prepared(module_path(), &[], &config);
    default_format.take_file(&theirs, "appendonlydir");
    default_format.launch();
    let mut default_con = default_format.connection();
    assert_same_filter(&mut con, &mut default_con, "chain", &kinds[1].items);
    let late = numbered("late", 100);
    assert!(answers(&mut default_con, "BF.MEXISTS", "late", &late)
        .iter()
        .all(|answer| *answer == Value::Int(1)));
    assert_ne!(
        scandump(&mut default_con, "late"),
        scandump(&mut con, "late"),
        "meant to be in redbloom's format"
    );
}

#[test]
fn scandump_streams_from_redisbloom_load_with_loadchunk() {
    let (theirs, kinds) = redisbloom_with_catalogue(&[]);
    let ours = Server::start();
    let (mut their_con, mut our_con) = (theirs.connection(), ours.connection());
    for kind in &kinds {
        loadchunks(&mut our_con, kind.key, &scandump(&mut their_con, kind.key));
    }
    assert_all_same(&theirs, &ours, &kinds);
}

/// Filters taken over from RedisBloom, grown here, handed back to a RedisBloom server both
/// ways (SCANDUMP into its LOADCHUNK, and this module's AOF replayed by it) must be what the
/// RedisBloom that ran the same commands holds.
#[test]
fn filters_go_back_to_redisbloom_by_scandump_and_by_aof() {
    let (theirs, kinds) = redisbloom_with_catalogue(&[]);
    let aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"];
    let ours = Server::start_with(&[], &aof);
    let (mut their_con, mut our_con) = (theirs.connection(), ours.connection());
    for kind in &kinds {
        loadchunks(&mut our_con, kind.key, &scandump(&mut their_con, kind.key));
    }
    // New filters in RedisBloom's format, by FORMAT and by default.
    let created = numbered("new", 5000);
    for (key, extra) in [("reserved", vec!["FORMAT", "REDISBLOOM"]), ("by-default", vec![])] {
        let mut args = vec!["BF.RESERVE", key, "0.001", "500"];
        ok(&mut their_con, &args);
        args.extend(extra);
        if key == "by-default" {
            ok(&mut our_con, &["CONFIG", "SET", "bf.format", "redisbloom"]);
        }
        ok(&mut our_con, &args);
        add(&mut their_con, key, &created);
        add(&mut our_con, key, &created);
    }
    let grown = grow([&theirs, &ours]);
    let mut expected = items_after_growth(&kinds, &grown);
    expected.push(("reserved", created.clone()));
    expected.push(("by-default", created.clone()));

    ok(&mut our_con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut our_con);
    // After the rewrite, creations go to the incremental AOF as commands, which RedisBloom
    // must replay into the same filters: none of them with RedisBloom's defaults, one empty.
    let reserve = ["BF.RESERVE", "late-reserved", "0.003", "5000", "EXPANSION", "4"];
    ok(&mut their_con, &reserve);
    ok(&mut our_con, &[&reserve[..], &["FORMAT", "REDISBLOOM"]].concat());
    expected.push(("late-reserved", Vec::new()));
    let inserted = numbered("i", 200);
    let insert =
        ["BF.INSERT", "late-inserted", "CAPACITY", "37", "ERROR", "0.004", "EXPANSION", "3", "ITEMS"];
    for (con, format) in [(&mut their_con, &[][..]), (&mut our_con, &["FORMAT", "REDISBLOOM"][..])] {
        let mut args: Vec<&[u8]> = insert[..8].iter().chain(format).map(|word| word.as_bytes()).collect();
        args.push(b"ITEMS");
        args.extend(inserted.iter().map(Vec::as_slice));
        call_bytes(con, &args).unwrap();
    }
    expected.push(("late-inserted", inserted));
    ok(&mut their_con, &["BF.RESERVE", "after", "0.002", "77"]);
    ok(&mut our_con, &["CONFIG", "SET", "bf.error-rate", "0.002"]);
    ok(&mut our_con, &["CONFIG", "SET", "bf.initial-size", "77"]);
    add(&mut their_con, "after", &numbered("a", 700));
    add(&mut our_con, "after", &numbered("a", 700));
    expected.push(("after", numbered("a", 700)));

    let by_scandump = Server::start_redisbloom(&[]);
    let mut scandump_con = by_scandump.connection();
    for (key, _) in &expected {
        loadchunks(&mut scandump_con, key, &scandump(&mut our_con, key));
    }
    let mut by_aof = Server::prepared(redisbloom_path(), &[], &aof);
    by_aof.take_file(&ours, "appendonlydir");
    by_aof.launch();
    let mut aof_con = by_aof.connection();
    for (key, items) in &expected {
        assert_same_filter(&mut their_con, &mut scandump_con, key, items);
        assert_same_filter(&mut their_con, &mut aof_con, key, items);
    }
}

pub(super) fn restore(con: &mut Connection, key: &str, payload: &[u8]) -> Result<Value, String> {
    call_bytes(con, &[b"RESTORE", key.as_bytes(), b"0", payload])
}

/// Corrupt RedisBloom payloads (DUMP with a valid checksum, and LOADCHUNK headers) are
/// refused, or make a filter that works; the server lives on and other keys stay.
#[test]
fn corrupt_redisbloom_payloads_are_refused() {
    let (theirs, kinds) = redisbloom_with_catalogue(&[]);
    let ours = Server::start();
    let (mut their_con, mut our_con) = (theirs.connection(), ours.connection());
    ok(&mut our_con, &["SET", "bystander", "still here"]);
    let mut random = Random::seeded();
    let (mut refused, mut accepted) = (0, 0);
    for kind in kinds.iter().filter(|kind| kind.key != "large") {
        let payload = dump_payload(&mut their_con, kind.key);
        let header = scandump(&mut their_con, kind.key).remove(0).1;
        for round in 0..150 {
            let mut corrupt = payload.clone();
            if round % 10 == 0 {
                corrupt.truncate(10 + random.below(corrupt.len() - 20));
                corrupt.extend_from_slice(&payload[payload.len() - 10..]);
            } else {
                for _ in 0..=random.below(3) {
                    // Past the type byte and id, before the version and checksum.
                    let at = 10 + random.below(corrupt.len() - 20);
                    corrupt[at] ^= 1 << random.below(8);
                }
            }
            let mut bad_header = header.clone();
            let at = random.below(bad_header.len());
            bad_header[at] ^= 1 << random.below(8);
            for outcome in [
                restore(&mut our_con, "victim", &with_valid_checksum(corrupt)),
                call_bytes(&mut our_con, &[b"BF.LOADCHUNK", b"victim2", b"1", &bad_header]),
            ] {
                match outcome {
                    Err(_) => refused += 1,
                    Ok(_) => accepted += 1,
                }
            }
            for key in ["victim", "victim2"] {
                if int(&mut our_con, &["EXISTS", key]) == 1 {
                    // Whatever was accepted is a working filter that dumps and loads back
                    // to itself.
                    let _ = call(&mut our_con, &["BF.MADD", key, "a", "b", "c"]);
                    let pairs = scandump(&mut our_con, key);
                    loadchunks(&mut our_con, "copy", &pairs);
                    assert!(
                        scandump(&mut our_con, "copy") == pairs,
                        "an accepted filter does not round-trip"
                    );
                    ok(&mut our_con, &["DEL", key, "copy"]);
                }
            }
        }
    }
    eprintln!("{refused} refused, {accepted} accepted");
    assert!(refused > 1000, "only {refused} of the corrupt payloads refused");
    assert_eq!(ok(&mut our_con, &["GET", "bystander"]), Value::BulkString(b"still here".to_vec()));
    assert!(ours.log().contains("RedisBloom's encoding version 4"));
}

/// Random command sequences, sent to RedisBloom and to this module creating filters in
/// RedisBloom's format: the same replies, and the same filters byte for byte.
#[test]
fn new_filters_in_redisbloom_format_behave_as_redisbloom() {
    let theirs = Server::start_redisbloom(&[]);
    let ours = Server::start_with(&["format", "redisbloom"], &[]);
    let (mut their_con, mut our_con) = (theirs.connection(), ours.connection());
    let mut random = Random::seeded();
    let rates = ["0.1", "0.01", "0.001", "0.0001", "0.25", "0.000001"];
    let mut keys = Vec::new();
    for n in 0..40 {
        let key = format!("k{n}");
        let rate = rates[random.below(rates.len())];
        let capacity = [1, 5, 50, 1000][random.below(4)].to_string();
        let mut args = vec!["BF.RESERVE".to_string(), key.clone(), rate.to_string(), capacity.clone()];
        match random.below(4) {
            0 => args.push("NONSCALING".into()),
            1 => args.extend(["EXPANSION".into(), (1 + random.below(6)).to_string()]),
            _ => {}
        }
        if random.below(5) == 0 {
            // Created by BF.INSERT instead, with its own parameters.
            args = vec![
                "BF.INSERT".into(),
                key.clone(),
                "CAPACITY".into(),
                capacity,
                "ERROR".into(),
                rate.into(),
            ];
            // NONSCALING beside an EXPANSION, which RedisBloom's header keeps.
            match random.below(3) {
                0 => {
                    args.extend(["EXPANSION".into(), (1 + random.below(6)).to_string(), "NONSCALING".into()]);
                }
                1 => args.push("NONSCALING".into()),
                _ => {}
            }
            args.extend(["ITEMS".into(), "first".into()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(call(&mut our_con, &args), call(&mut their_con, &args), "{args:?}");
        keys.push(key);
    }
    for _ in 0..400 {
        let key = keys[random.below(keys.len())].clone();
        let items: Vec<Vec<u8>> =
            (0..=random.below(60)).map(|_| format!("i{}", random.below(3000)).into_bytes()).collect();
        let command: &[u8] = [&b"BF.MADD"[..], b"BF.MEXISTS", b"BF.ADD"][random.below(3)];
        let mut args: Vec<&[u8]> = vec![command, key.as_bytes()];
        args.extend(items.iter().take(if command == b"BF.ADD" { 1 } else { items.len() }).map(Vec::as_slice));
        assert_eq!(
            call_bytes(&mut our_con, &args),
            call_bytes(&mut their_con, &args),
            "{:?}",
            String::from_utf8_lossy(command)
        );
    }
    for key in &keys {
        assert!(scandump(&mut our_con, key) == scandump(&mut their_con, key), "{key}");
        for command in ["BF.INFO", "BF.DEBUG", "BF.CARD"] {
            assert_eq!(
                ok(&mut our_con, &[command, key]),
                ok(&mut their_con, &[command, key]),
                "{command} {key}"
            );
        }
    }
}
