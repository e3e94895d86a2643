//! Rotations decided by the master and replicated as BF.ROTATE, and filters kept or copied (RDB, AOF,
//! rewrite, COPY, SCANDUMP) bit for bit with absolute times: down longer than the window, they forget.

use super::{
    add_batch, assert_all_found, assert_forgotten, forget_after, found, strings, DAY, MARGIN, TYPE_NAME,
};
use crate::harness::*;
use crate::window::wait_for_next_span;
use redis::{Connection, Value};
use std::time::{Duration, Instant};

fn digests(con: &mut Connection, keys: &[String]) -> Vec<String> {
    keys.iter().map(|key| digest(con, key)).collect()
}

/// Waits (a span and a second at most, the time the master has to rotate an idle key) until
/// BF.CARD answers 0.
fn wait_for_empty_card(con: &mut Connection, key: &str, span: Duration) {
    let deadline = Instant::now() + span + Duration::from_secs(1) + MARGIN;
    loop {
        let card = int(con, &["BF.CARD", key]);
        if card == 0 {
            return;
        }
        assert!(Instant::now() < deadline, "BF.CARD {key} still answers {card}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The `BF.ROTATE key at_ms` commands of an AOF, in order.
fn rotations(aof: &[u8]) -> Vec<(String, u64)> {
    let text = String::from_utf8_lossy(aof);
    let lines: Vec<&str> = text.split("\r\n").collect();
    let mut list = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        if line.eq_ignore_ascii_case("BF.ROTATE") {
            let key = lines.get(at + 2).map(|key| (*key).to_string()).unwrap_or_default();
            let time = lines.get(at + 4).and_then(|time| time.parse().ok());
            let Some(time) = time else {
                panic!("BF.ROTATE without a time: {:?}", &lines[at..lines.len().min(at + 5)])
            };
            list.push((key, time));
        }
    }
    list
}

#[test]
fn a_replica_applies_its_masters_rotations_and_holds_the_same_bits() {
    const WINDOW: u64 = 1500;
    const SPAN: u64 = WINDOW / 4;
    let window = Duration::from_millis(WINDOW);
    let bound = forget_after(WINDOW, 4);
    let started_ms = now_ms();
    let master = Server::start_with(&[], &["--appendonly", "yes", "--appendfsync", "always"]);
    let mut on_master = master.connection();
    ok(&mut on_master, &["BF.RESERVE", "win", "0.001", "1000", "WINDOW", "1500", "GENERATIONS", "4"]);
    ok(&mut on_master, &["BF.RESERVE", "day", "0.01", "1000", "WINDOW", DAY]);
    let batches: Vec<Vec<String>> = (0..3).map(|batch| strings(&format!("batch{batch}:"), 200)).collect();
    let mut added = vec![add_batch(&mut on_master, "win", &batches[0])];
    madd_all(&mut on_master, "day", batches[0].iter().cloned());

    // A full sync, then commands and rotations.
    let replica = Server::start_with(&[], &["--replicaof", "127.0.0.1", &master.port.to_string()]);
    let mut on_replica = replica.connection();
    assert_replica_matches(&mut on_master, &mut on_replica, &["win", "day"]);
    for batch in &batches[1..] {
        std::thread::sleep(Duration::from_millis(400));
        added.push(add_batch(&mut on_master, "win", batch));
        assert_replica_matches(&mut on_master, &mut on_replica, &["win", "day"]);
    }
    let newest = added[2];
    assert_all_found(
        &mut on_replica,
        "win",
        &batches[2],
        newest,
        window.saturating_sub(MARGIN),
        "on the replica",
    );
    assert_all_found(
        &mut on_master,
        "win",
        &batches[2],
        newest,
        window.saturating_sub(MARGIN),
        "on the master",
    );

    // Once every generation expired and the master dropped it, the replica forgets too.
    sleep_until(newest.answered + window + Duration::from_millis(2 * SPAN) + Duration::from_secs(1) + MARGIN);
    assert_replica_matches(&mut on_master, &mut on_replica, &["win", "day"]);
    for (batch, when) in batches.iter().zip(&added) {
        assert_forgotten(&mut on_replica, "win", batch, *when, bound, "on the replica");
        assert_forgotten(&mut on_master, "win", batch, *when, bound, "on the master");
    }
    assert_eq!(int(&mut on_replica, &["BF.CARD", "win"]), 0);
    assert_eq!(int(&mut on_master, &["BF.CARD", "win"]), 0);
    assert_eq!(found(&mut on_replica, "day", &batches[0]), 200);

    // The rotations reached the AOF (and the replica) as BF.ROTATE with the master's times.
    wait_for_rewrite(&mut on_master);
    let rotations = rotations(&aof_bytes(&master));
    let times: Vec<u64> = rotations.iter().filter(|(key, _)| key == "win").map(|(_, time)| *time).collect();
    assert!(times.len() >= 2, "BF.ROTATE in the AOF: {rotations:?}");
    assert!(times.windows(2).all(|pair| pair[0] <= pair[1]), "rotations back in time: {times:?}");
    let now = now_ms();
    assert!(
        times.iter().all(|time| (started_ms.saturating_sub(SPAN)..=now).contains(time)),
        "rotation times {times:?} outside the test's [{started_ms}, {now}]"
    );
}

/// A client that flushes a steady stream every 80 ms into spans of 300 ms gives each span three
/// batches or four (2,400 or 3,200 items against a base of 3,188): the heavy spans' bases take
/// what the others leave, so no overflow opens, on the master and on its replica alike, and
/// the header says so (flag bit 0). A batch answered more than 20 ms late can give a span five
/// batches, which must open one: the check of the links is then skipped with a message.
#[test]
fn a_batched_stream_pools_its_bases_on_the_master_and_the_replica_alike() {
    const INTERVAL_MS: u64 = 80;
    let master = Server::start();
    let mut on_master = master.connection();
    let replica = Server::start_with(&[], &["--replicaof", "127.0.0.1", &master.port.to_string()]);
    let mut on_replica = replica.connection();
    ok(&mut on_master, &["BF.RESERVE", "w", "0.01", "12000", "WINDOW", "1200", "GENERATIONS", "4"]);
    let (start, mut late, mut most_links) = (Instant::now(), Duration::ZERO, 0);
    for batch in 0..45u64 {
        let due = start + Duration::from_millis(batch * INTERVAL_MS);
        sleep_until(due);
        madd_all(&mut on_master, "w", strings(&format!("b{batch}:"), 800).into_iter());
        late = late.max(due.elapsed());
        let Value::Array(links) = ok(&mut on_master, &["BF.INFO", "w", "FILTERS"]) else { panic!("BF.INFO") };
        let [Value::Int(links)] = links[..] else { panic!("BF.INFO FILTERS: {links:?}") };
        most_links = most_links.max(links);
    }
    assert_replica_matches(&mut on_master, &mut on_replica, &["w"]);
    let header = &scandump(&mut on_master, "w")[0].1;
    assert_eq!(header[..6], *b"RBLW\x02\x01", "the header of a filter whose bases pool");
    if late > Duration::from_millis(15) {
        eprintln!("pooled bases: links not checked, a batch was answered {late:?} late");
    } else {
        assert!(most_links <= 5, "{most_links} links: an overflow opened");
    }
}

/// Compares each key's digest with the one it had; the keys starting with `gens` rotate at
/// `stable_until_ms`, and are compared only before it.
fn assert_unchanged(
    con: &mut Connection,
    keys: &[String],
    before: &[String],
    stable_until_ms: u64,
    what: &str,
) {
    let after = digests(con, keys);
    let stable = now_ms() < stable_until_ms;
    for ((key, before), after) in keys.iter().zip(before).zip(&after) {
        if key.starts_with("gens") && !stable {
            eprintln!("{what}: {key} not compared, the test ran past its next rotation");
            continue;
        }
        assert_eq!(after, before, "{what}: digest of {key}");
    }
}

#[test]
fn reload_aof_rewrite_copy_and_scandump_keep_windowed_filters_bit_for_bit() {
    const WINDOW: u64 = 3000;
    const SPAN: u64 = WINDOW / 4;
    let aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"];
    let mut server = Server::start_with(&[], &aof);
    let mut con = server.connection();
    // Keys no rotation touches during the test, scaled, non-scaling, made by BF.INSERT.
    ok(&mut con, &["BF.RESERVE", "day", "0.01", "100", "WINDOW", DAY, "EXPANSION", "2"]);
    madd_all(&mut con, "day", strings("day:", 3000).into_iter());
    ok(
        &mut con,
        &["BF.RESERVE", "day-fixed", "0.001", "5000", "WINDOW", DAY, "GENERATIONS", "7", "NONSCALING"],
    );
    // Within one generation's share of the window (capacity / g, and an eighth): all in one span.
    madd_all(&mut con, "day-fixed", strings("fixed:", 700).into_iter());
    ok(
        &mut con,
        &[
            "BF.INSERT",
            "day-insert",
            "CAPACITY",
            "50",
            "ERROR",
            "0.05",
            "WINDOW",
            DAY,
            "GENERATIONS",
            "2",
            "ITEMS",
            "a",
            "b",
        ],
    );
    // A key with a generation in each of three spans.
    wait_for_next_span(SPAN, 50);
    let first_span = now_ms() / SPAN;
    ok(&mut con, &["BF.RESERVE", "gens", "0.01", "1000", "WINDOW", "3000", "GENERATIONS", "4"]);
    let batches: Vec<Vec<String>> = (0..3).map(|batch| strings(&format!("gens{batch}:"), 300)).collect();
    let mut newest = None;
    for (n, batch) in batches.iter().enumerate() {
        if n > 0 {
            wait_for_next_span(SPAN, 50);
        }
        newest = Some(add_batch(&mut con, "gens", batch));
    }
    let newest = newest.expect("three batches");
    // Once the third span has closed, nothing changes until the first generation expires.
    wait_for_next_span(SPAN, 150);
    let stable_until = (first_span + 5) * SPAN - 100;
    let Value::Array(filters) = ok(&mut con, &["BF.INFO", "gens", "FILTERS"]) else { panic!("BF.INFO") };
    assert!(matches!(filters[..], [Value::Int(n)] if n >= 3), "three generations: {filters:?}");

    let mut keys: Vec<String> = ["day", "day-fixed", "day-insert", "gens"].map(String::from).to_vec();
    let originals = keys.clone();
    for key in &originals {
        assert_eq!(ok(&mut con, &["TYPE", key]), simple(TYPE_NAME));
        let copy = format!("{key}:copy");
        assert_eq!(int(&mut con, &["COPY", key, &copy]), 1);
        let loaded = format!("{key}:loaded");
        let chunks = scandump(&mut con, key);
        loadchunks(&mut con, &loaded, &chunks);
        keys.extend([copy, loaded]);
    }
    let before = digests(&mut con, &keys);
    for (n, key) in originals.iter().enumerate() {
        if key.starts_with("gens") && now_ms() >= stable_until {
            eprintln!("{key}: copies not compared, the test ran past its next rotation");
            continue;
        }
        assert_eq!(before[4 + 2 * n], before[n], "COPY of {key}");
        assert_eq!(before[5 + 2 * n], before[n], "SCANDUMP and LOADCHUNK of {key}");
    }
    assert_unchanged(&mut con, &keys, &before, stable_until, "after COPY and LOADCHUNK");
    let cards: Vec<i64> = keys.iter().map(|key| int(&mut con, &["BF.CARD", key])).collect();

    ok(&mut con, &["DEBUG", "RELOAD"]);
    assert_unchanged(&mut con, &keys, &before, stable_until, "after DEBUG RELOAD");

    ok(&mut con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut con);
    let base = aof_bytes(&server);
    assert!(!base.starts_with(b"REDIS"), "the AOF must be commands, not an RDB preamble");
    server.restart();
    let mut con = server.connection();
    assert_unchanged(&mut con, &keys, &before, stable_until, "after an AOF rewrite and restart");
    for key in &keys {
        assert_eq!(ok(&mut con, &["TYPE", key]), simple(TYPE_NAME), "{key}");
    }
    if now_ms() < stable_until {
        let after: Vec<i64> = keys.iter().map(|key| int(&mut con, &["BF.CARD", key])).collect();
        assert_eq!(after, cards, "BF.CARD of {keys:?}");
    }
    assert_eq!(found(&mut con, "day:loaded", &strings("day:", 3000)), 3000);
    assert_eq!(found(&mut con, "day-fixed:copy", &strings("fixed:", 700)), 700);
    let window = Duration::from_millis(WINDOW);
    for key in ["gens", "gens:copy", "gens:loaded"] {
        assert_all_found(&mut con, key, &batches[2], newest, window.saturating_sub(MARGIN), key);
    }
}

#[test]
fn rdb_keeps_absolute_times_so_a_server_down_longer_than_the_window_forgets() {
    const WINDOW: u64 = 1500;
    let window = Duration::from_millis(WINDOW);
    let bound = forget_after(WINDOW, 4);
    let mut server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["BF.RESERVE", "short", "0.001", "1000", "WINDOW", "1500", "GENERATIONS", "4"]);
    ok(&mut con, &["BF.RESERVE", "day", "0.01", "1000", "WINDOW", DAY]);
    let day_items = strings("day:", 2000);
    madd_all(&mut con, "day", day_items.iter().cloned());
    let day_digest = digest(&mut con, "day");
    let early = strings("early:", 200);
    let early_added = add_batch(&mut con, "short", &early);

    // A quick restart keeps what is still within its window.
    ok(&mut con, &["SAVE"]);
    server.restart();
    let mut con = server.connection();
    assert_all_found(
        &mut con,
        "short",
        &early,
        early_added,
        window.saturating_sub(MARGIN),
        "after a quick restart",
    );
    assert_eq!(digest(&mut con, "day"), day_digest);

    // A downtime longer than the window forgets.
    let late = strings("late:", 200);
    let late_added = add_batch(&mut con, "short", &late);
    ok(&mut con, &["SAVE"]);
    server.kill();
    sleep_until(late_added.answered + bound + MARGIN);
    server.launch();
    let mut con = server.connection();
    assert_eq!(ok(&mut con, &["TYPE", "short"]), simple(TYPE_NAME));
    assert_forgotten(&mut con, "short", &late, late_added, bound, "after a downtime");
    assert_forgotten(&mut con, "short", &early, early_added, bound, "after a downtime");
    wait_for_empty_card(&mut con, "short", Duration::from_millis(WINDOW / 4));
    assert_eq!(int(&mut con, &["BF.ADD", "short", "late:0"]), 1);
    assert_eq!(digest(&mut con, "day"), day_digest);
    assert_eq!(found(&mut con, "day", &day_items), 2000);
}

#[test]
fn aof_keeps_absolute_times_so_a_server_down_longer_than_the_window_forgets() {
    const WINDOW: u64 = 1500;
    let window = Duration::from_millis(WINDOW);
    let bound = forget_after(WINDOW, 4);
    let aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"];
    let mut server = Server::start_with(&[], &aof);
    let mut con = server.connection();
    ok(&mut con, &["BF.RESERVE", "day", "0.01", "1000", "WINDOW", DAY]);
    let day_items = strings("day:", 2000);
    madd_all(&mut con, "day", day_items.iter().cloned());
    ok(&mut con, &["BF.RESERVE", "rewritten", "0.001", "1000", "WINDOW", "1500", "GENERATIONS", "4"]);
    let in_base = strings("base:", 200);
    let base_added = add_batch(&mut con, "rewritten", &in_base);
    ok(&mut con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut con);
    // After the rewrite: commands appended to the AOF, on the rewritten key and a new one.
    let appended = strings("appended:", 200);
    let appended_added = add_batch(&mut con, "rewritten", &appended);
    ok(&mut con, &["BF.INSERT", "created", "ERROR", "0.001", "WINDOW", "1500", "ITEMS", "x"]);
    let created_added = add_batch(&mut con, "created", &appended);
    let day_digest = digest(&mut con, "day");

    // Replayed later, the adds keep their own times: still found within their window.
    server.restart();
    let mut con = server.connection();
    assert_all_found(
        &mut con,
        "rewritten",
        &in_base,
        base_added,
        window.saturating_sub(MARGIN),
        "in the rewritten base",
    );
    assert_all_found(
        &mut con,
        "rewritten",
        &appended,
        appended_added,
        window.saturating_sub(MARGIN),
        "appended after the rewrite",
    );
    assert_all_found(
        &mut con,
        "created",
        &appended,
        created_added,
        window.saturating_sub(MARGIN),
        "created after the rewrite",
    );
    assert_eq!(digest(&mut con, "day"), day_digest);

    // Down longer than the window: replayed, they are forgotten.
    server.kill();
    sleep_until(created_added.answered + bound + MARGIN);
    server.launch();
    let mut con = server.connection();
    assert_eq!(ok(&mut con, &["TYPE", "rewritten"]), simple(TYPE_NAME));
    assert_eq!(ok(&mut con, &["TYPE", "created"]), simple(TYPE_NAME));
    assert_forgotten(&mut con, "rewritten", &in_base, base_added, bound, "base, after a downtime");
    assert_forgotten(&mut con, "rewritten", &appended, appended_added, bound, "appended, after a downtime");
    assert_forgotten(&mut con, "created", &appended, created_added, bound, "created, after a downtime");
    wait_for_empty_card(&mut con, "rewritten", Duration::from_millis(WINDOW / 4));
    wait_for_empty_card(&mut con, "created", Duration::from_millis(WINDOW / 4));
    assert_eq!(digest(&mut con, "day"), day_digest);
    assert_eq!(found(&mut con, "day", &day_items), 2000);
}

/// A `BF.ROTATE` to a time no clock reaches, as a hostile AOF (or master) may send: the filter
/// stops at the latest time a record may hold, and SAVE and reload keep it, where it used to
/// save a current span its own load refused (the key lost at the next restart).
#[test]
fn a_rotation_beyond_any_clock_in_the_aof_leaves_a_filter_that_reloads() {
    let aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"];
    let mut server = Server::start_with(&[], &aof);
    let mut con = server.connection();
    ok(&mut con, &["BF.RESERVE", "w", "0.01", "1000", "WINDOW", DAY]);
    assert_eq!(int(&mut con, &["BF.ADD", "w", "before"]), 1);
    server.kill();
    let incremental = std::fs::read_dir(server.dir().join("appendonlydir"))
        .expect("appendonlydir")
        .map(|entry| entry.expect("an AOF file").path())
        .find(|path| path.to_string_lossy().ends_with(".incr.aof"))
        .expect("an incremental AOF");
    let mut appended = std::fs::OpenOptions::new().append(true).open(&incremental).expect("the AOF");
    for command in [["BF.ROTATE", "w", &i64::MAX.to_string()], ["BF.ADD", "w", "after"]] {
        let bytes: String = std::iter::once(format!("*{}\r\n", command.len()))
            .chain(command.iter().map(|word| format!("${}\r\n{word}\r\n", word.len())))
            .collect();
        std::io::Write::write_all(&mut appended, bytes.as_bytes()).expect("appended");
    }
    drop(appended);
    server.launch();
    let mut con = server.connection();
    assert_eq!(int(&mut con, &["BF.EXISTS", "w", "after"]), 1, "the add replayed after the rotation");
    let before = digest(&mut con, "w");
    ok(&mut con, &["DEBUG", "RELOAD"]);
    assert_eq!(digest(&mut con, "w"), before, "the filter as saved");
    assert_eq!(int(&mut con, &["BF.EXISTS", "w", "after"]), 1);
}

/// A record this module wrote before generations had an overflow (encoding version 1, its DUMP
/// payload on Redis 7.0: `item:0` to `item:299` added to a filter for 200 items at 1% with a
/// window of 10^12 ms in 2 generations, its current generation scaled) restores, answers as it
/// did, and is saved again in this version's record.
#[test]
fn records_of_the_first_version_still_load() {
    let server = Server::start();
    let mut con = server.connection();
    let text = include_str!("v1_dump.hex").trim();
    let payload: Vec<u8> =
        (0..text.len()).step_by(2).map(|at| u8::from_str_radix(&text[at..at + 2], 16).unwrap()).collect();
    let restored: Value = redis::cmd("RESTORE").arg("old").arg(0).arg(payload).query(&mut con).unwrap();
    assert_eq!(restored, Value::Okay);
    let items = strings("item:", 300);
    assert_eq!(found(&mut con, "old", &items), 300);
    assert_eq!(int(&mut con, &["BF.CARD", "old"]), 299);
    ok(&mut con, &["DEBUG", "RELOAD"]);
    assert_eq!(found(&mut con, "old", &items), 300);
    assert_eq!(int(&mut con, &["BF.ADD", "old", "new item"]), 1);
}

/// A SCANDUMP or LOADCHUNK of a windowed filter that a rotation dropping a generation overtook
/// is refused, on the filter dumped and on the copy being loaded: the chunks after the dropped
/// one moved, and the copy lost items without a word. A dump within one layout copies them all.
#[test]
fn a_dump_that_a_dropped_generation_overtook_is_refused() {
    let server = Server::start();
    let mut con = server.connection();
    // Spans of 500 ms: the first batch's generation expires within 1.5 s of its add, and the
    // second's 2 s after the first's span began, at the earliest.
    ok(&mut con, &["BF.RESERVE", "w", "0.01", "1000", "WINDOW", "1000", "GENERATIONS", "2"]);
    let first = strings("first:", 50);
    let added = add_batch(&mut con, "w", &first);
    std::thread::sleep(Duration::from_millis(510));
    let second = strings("second:", 50);
    add_batch(&mut con, "w", &second);

    let pairs = scandump(&mut con, "w");
    assert!(pairs.len() >= 3, "a header and a chunk per generation: {}", pairs.len());
    loadchunks(&mut con, "copy", &pairs);
    assert_eq!((found(&mut con, "copy", &first), found(&mut con, "copy", &second)), (50, 50));
    let (header, chunk) = (&pairs[0], &pairs[1]);
    call_bytes(&mut con, &[b"BF.LOADCHUNK", b"late", header.0.to_string().as_bytes(), &header.1]).unwrap();

    // Until the first generation is dropped, the dump goes on and the chunk loads; then both
    // are refused, the dump by the filter dumped, the load by the copy, which rotates alike.
    let deadline = added.sent + Duration::from_millis(1500 + 1000) + MARGIN;
    let next = header.0.to_string();
    let chunk_command = |con: &mut Connection| {
        call_bytes(con, &[b"BF.LOADCHUNK", b"late", chunk.0.to_string().as_bytes(), &chunk.1])
    };
    loop {
        let dumped = call_bytes(&mut con, &[b"BF.SCANDUMP", b"w", next.as_bytes()]);
        let loaded = chunk_command(&mut con);
        // Both go on, or both are refused; one of each is a rotation between the two calls,
        // after which the next round sees both refused.
        if let (Err(dump_error), Err(load_error)) = (dumped, loaded) {
            assert!(dump_error.contains("dropped a generation since this dump began"), "{dump_error}");
            assert!(load_error.contains("dropped a generation since this load began"), "{load_error}");
            break;
        }
        assert!(Instant::now() < deadline, "no rotation dropped the first generation");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(found(&mut con, "w", &second), 50, "the second generation is still held");
}
