//! Windowed t-digests (`TDIGEST.CREATE key [COMPRESSION c] WINDOW ms [GENERATIONS g]`, type
//! `rbTDIGwnd`) on real servers and real time: the grammar and its errors, every command on
//! them, values counted within the window and forgotten after `window (1 + 1/g)`, quantiles of
//! the window against the exact ones, merges span by span (and refused with plain digests),
//! rotations decided by the master and replicated,
//! persistence with absolute times, memory returned while idle, and RedisBloom refusing them.
//!
//! Windows are a second or two; every timed check keeps a few hundred milliseconds from its
//! boundary, and a "still counted" check that a loaded machine ran too late is skipped with a
//! message rather than failed. Keys that must not rotate during a test get a window of a day.

use super::{doubles, rank_errors, same_value, tdigest_info as info, words};
use crate::harness::*;
use crate::window::MARGIN;
use redis::{Connection, Value};
use std::time::{Duration, Instant};

const TYPE_NAME: &str = "rbTDIGwnd";
/// Generations of six hours on a grid from the epoch: nothing rotates while a test runs.
const DAY: &str = "86400000";

fn info_field(con: &mut Connection, key: &str, label: &str) -> i64 {
    info(con, key)
        .into_iter()
        .find(|(name, _)| name == label)
        .map_or_else(|| panic!("no {label}"), |(_, v)| v)
}

fn observations(con: &mut Connection, key: &str) -> i64 {
    info_field(con, key, "Observations")
}

fn add(con: &mut Connection, key: &str, values: &[f64]) {
    let mut args = vec!["TDIGEST.ADD".to_string(), key.to_string()];
    args.extend(values.iter().map(f64::to_string));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(con, &args);
}

/// When a write was sent and answered: its values' age on the server lies between.
#[derive(Clone, Copy)]
struct Written {
    sent: Instant,
    answered: Instant,
}

fn timed_add(con: &mut Connection, key: &str, values: &[f64]) -> Written {
    let sent = Instant::now();
    add(con, key, values);
    Written { sent, answered: Instant::now() }
}

/// Checks that `key` counts `expected` observations, when the check certainly ran within
/// `within` of every counted write; a later check is skipped, saying so.
fn assert_counted(
    con: &mut Connection,
    key: &str,
    expected: i64,
    oldest: Written,
    within: Duration,
    what: &str,
) {
    let counted = observations(con, key);
    let age = oldest.sent.elapsed();
    if age > within {
        eprintln!("{what}: check skipped, it ran up to {age:?} after the write, past {within:?}");
        return;
    }
    assert_eq!(counted, expected, "{what}: observations of {key}");
}

#[test]
fn the_window_options_and_their_errors() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["TDIGEST.CREATE", "w", "WINDOW", "60000"]);
    ok(&mut con, &["TDIGEST.CREATE", "c", "COMPRESSION", "50", "WINDOW", "60000", "GENERATIONS", "6"]);
    ok(&mut con, &["TDIGEST.CREATE", "g", "window", "1000", "generations", "1"]);
    assert_eq!(ok(&mut con, &["TYPE", "w"]), simple(TYPE_NAME));
    let tail = |con: &mut Connection, key: &str| info(con, key)[9..].to_vec();
    assert_eq!(tail(&mut con, "w"), [("Window".to_string(), 60000), ("Generations".to_string(), 4)]);
    assert_eq!(tail(&mut con, "c"), [("Window".to_string(), 60000), ("Generations".to_string(), 6)]);
    assert_eq!(info(&mut con, "c")[0], ("Compression".to_string(), 50));
    // The options in any order, as BF.RESERVE's.
    for (key, order) in [
        ("o1", &["WINDOW", "60000", "COMPRESSION", "50", "GENERATIONS", "6"][..]),
        ("o2", &["GENERATIONS", "6", "WINDOW", "60000", "compression", "50"]),
    ] {
        let mut args = vec!["TDIGEST.CREATE", key];
        args.extend(order);
        ok(&mut con, &args);
        assert_eq!(info(&mut con, key), info(&mut con, "c"), "{order:?}");
    }
    assert_eq!(
        info(&mut con, "g")[9..].to_vec(),
        [("Window".to_string(), 1000), ("Generations".to_string(), 1)]
    );
    ok(&mut con, &["TDIGEST.CREATE", "plain"]);
    ok(&mut con, &["TDIGEST.ADD", "plain", "1", "2", "3"]);
    ok(&mut con, &["SET", "text", "v"]);
    let window = "ERR window must be an integer of milliseconds in [1, 1099511627776]";
    let generations = "ERR generations must be an integer in [1, 64], at most the window in milliseconds";
    for (command, error) in [
        ("TDIGEST.CREATE w WINDOW 1000", "ERR T-Digest: key already exists"),
        ("TDIGEST.CREATE plain WINDOW 1000", "ERR T-Digest: key already exists"),
        (
            "TDIGEST.CREATE text WINDOW 1000",
            "WRONGTYPE Operation against a key holding the wrong kind of value",
        ),
        ("TDIGEST.CREATE x WINDOW", window),
        ("TDIGEST.CREATE x WINDOW 0", window),
        ("TDIGEST.CREATE x WINDOW -1", window),
        ("TDIGEST.CREATE x WINDOW 1099511627777", window),
        ("TDIGEST.CREATE x WINDOW 1000 GENERATIONS 0", generations),
        ("TDIGEST.CREATE x WINDOW 1000 GENERATIONS 65", generations),
        ("TDIGEST.CREATE x WINDOW 3 GENERATIONS 4", generations),
        ("TDIGEST.CREATE x GENERATIONS 4", "ERR GENERATIONS needs WINDOW"),
        ("TDIGEST.CREATE x COMPRESSION 100 GENERATIONS 4", "ERR GENERATIONS needs WINDOW"),
        ("TDIGEST.CREATE x WINDOW 1000 COMPRESSION", "ERR T-Digest: error parsing compression parameter"),
        ("TDIGEST.CREATE x WINDOW 1000 COMPRESS 10", "ERR T-Digest: wrong keyword"),
        ("TDIGEST.CREATE x WINDOW 1000 EXTRA", "ERR T-Digest: wrong keyword"),
        (
            "TDIGEST.CREATE x COMPRESSION 0 WINDOW 1000",
            "ERR T-Digest: compression parameter needs to be a positive integer",
        ),
        ("TDIGEST.CREATE x COMPRESSION abc WINDOW 1000", "ERR T-Digest: error parsing compression parameter"),
        ("TDIGEST.CREATE x COMPRESSION 1000000000 WINDOW 1000", "ERR T-Digest: allocation failed"),
        ("TDIGEST.ROTATE w 1", "ERR TDIGEST.ROTATE is sent by a master to its replicas and the AOF"),
        ("TDIGEST.ADD w 1 nan", "ERR T-Digest: error parsing val parameter"),
        ("TDIGEST.ADD w 1 inf", "ERR T-Digest: val parameter needs to be a finite number"),
        ("TDIGEST.QUANTILE w 2", "ERR T-Digest: quantile should be in [0,1]"),
        (
            "TDIGEST.MERGE w 1 plain",
            "ERR T-Digest: a windowed t-digest merges only windowed t-digests (a plain digest's values have no time)",
        ),
        (
            "TDIGEST.MERGE w 2 w plain OVERRIDE",
            "ERR T-Digest: a windowed t-digest merges only windowed t-digests (a plain digest's values have no time)",
        ),
        ("TDIGEST.MERGE w 1 c", "ERR T-Digest: window/generations is not equal"),
        ("TDIGEST.MERGE w 2 w g", "ERR T-Digest: window/generations is not equal"),
        ("TDIGEST.MERGE w 1 missing", "ERR T-Digest: key does not exist"),
        (
            "TDIGEST.MERGE x 2 w plain",
            "ERR T-Digest: a windowed t-digest cannot be a merge source (a plain digest does not forget)",
        ),
        ("TDIGEST.MERGE x 2 w c", "ERR T-Digest: window/generations is not equal"),
        ("TDIGEST.MERGE x 2 w missing", "ERR T-Digest: key does not exist"),
        (
            "TDIGEST.MERGE plain 2 plain w OVERRIDE",
            "ERR T-Digest: a windowed t-digest cannot be a merge source (a plain digest does not forget)",
        ),
    ] {
        let args = words(command);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(err(&mut con, &args), error, "{command}");
    }
    // The refusals changed nothing: no key made, no generation opened.
    assert_eq!(ok(&mut con, &["EXISTS", "x"]), Value::Int(0));
    assert_eq!(observations(&mut con, "w"), 0);
    assert_eq!(info_field(&mut con, "w", "Memory usage"), 8);
    assert_eq!(observations(&mut con, "plain"), 3);
    // A digest larger than the budget for g + 1 generations is refused, one for g = 1 is not.
    let budgeted = Server::start_with(&["max-filter-bytes", "100000"], &[]);
    let mut small = budgeted.connection();
    ok(&mut small, &["TDIGEST.CREATE", "one", "COMPRESSION", "500", "WINDOW", "1000", "GENERATIONS", "1"]);
    let refused = err(&mut small, &["TDIGEST.CREATE", "five", "COMPRESSION", "500", "WINDOW", "1000"]);
    assert_eq!(refused, "ERR T-Digest: allocation failed");
}

/// Every read of a windowed digest whose values fell in one generation answers as a plain digest
/// given the same writes, under both protocols; INFO adds `Window` and `Generations`.
#[test]
fn every_command_works_on_a_windowed_digest() {
    let server = Server::start();
    for (protocol, mut con) in server.connections() {
        ok(&mut con, &["FLUSHALL"]);
        ok(&mut con, &["TDIGEST.CREATE", "w", "COMPRESSION", "40", "WINDOW", DAY]);
        ok(&mut con, &["TDIGEST.CREATE", "p", "COMPRESSION", "40"]);
        let reads = [
            "TDIGEST.MIN {}",
            "TDIGEST.MAX {}",
            "TDIGEST.QUANTILE {} 0 0.1 0.5 0.99 1",
            "TDIGEST.CDF {} -1 3 50 1000",
            "TDIGEST.RANK {} -1 3 50 1000",
            "TDIGEST.REVRANK {} -1 3 50 1000",
            "TDIGEST.BYRANK {} 0 1 100 100000",
            "TDIGEST.BYREVRANK {} 0 1 100 100000",
            "TDIGEST.TRIMMED_MEAN {} 0.1 0.9",
        ];
        let compare = |con: &mut Connection, when: &str| {
            for read in reads {
                let mut on = |key: &str| {
                    let args = words(&read.replace("{}", key));
                    call(con, &args.iter().map(String::as_str).collect::<Vec<_>>())
                };
                let (windowed, plain) = (on("w"), on("p"));
                let same = match (&windowed, &plain) {
                    (Ok(a), Ok(b)) => same_value(a, b),
                    (a, b) => a == b,
                };
                assert!(same, "{protocol:?} {when} {read}: windowed {windowed:?}, plain {plain:?}");
            }
            let windowed = ok(con, &["TDIGEST.INFO", "w"]);
            let plain = ok(con, &["TDIGEST.INFO", "p"]);
            let (windowed, plain) = match (windowed, plain) {
                (Value::Array(w), Value::Array(p)) => (w, p),
                (Value::Map(w), Value::Map(p)) => (
                    w.into_iter().flat_map(|(k, v)| [k, v]).collect(),
                    p.into_iter().flat_map(|(k, v)| [k, v]).collect(),
                ),
                other => panic!("{other:?}"),
            };
            assert_eq!(windowed[..18], plain[..], "{protocol:?} {when}: INFO");
            assert_eq!(
                windowed[18..],
                [simple("Window"), Value::Int(86_400_000), simple("Generations"), Value::Int(4)]
            );
        };
        compare(&mut con, "empty");
        let values: Vec<f64> = (0..3000).map(|i| f64::from((i * 7919) % 1009) / 7.0).collect();
        for chunk in values.chunks(250) {
            add(&mut con, "w", chunk);
            add(&mut con, "p", chunk);
        }
        compare(&mut con, "after adds");
        ok(&mut con, &["TDIGEST.RESET", "w"]);
        ok(&mut con, &["TDIGEST.RESET", "p"]);
        compare(&mut con, "after RESET");
        add(&mut con, "w", &[5.0]);
        add(&mut con, "p", &[5.0]);
        compare(&mut con, "after RESET and an add");
        // COPY, RENAME, DUMP and RESTORE keep the window.
        ok(&mut con, &["COPY", "w", "copied"]);
        ok(&mut con, &["RENAME", "copied", "renamed"]);
        let payload = dump_payload(&mut con, "w");
        call_bytes(&mut con, &[b"RESTORE", b"restored", b"0", &payload]).unwrap();
        for key in ["renamed", "restored"] {
            assert_eq!(digest(&mut con, key), digest(&mut con, "w"), "{key}");
            assert_eq!(ok(&mut con, &["TYPE", key]), simple(TYPE_NAME));
        }
    }
}

/// The first read after a write makes only the centroids it reads (MIN and MAX none); the
/// second makes the window's whole digest (and keeps it): their answers are the same, to the
/// last digit, on a window of three generations, for the reads that ask for a few values and
/// for those that ask for more.
#[test]
fn a_read_right_after_a_write_answers_as_the_windows_whole_digest() {
    // More values than a first read makes from the cut (twelve): it makes the whole digest.
    const MANY: &str = "TDIGEST.QUANTILE w 0 0.01 0.05 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 0.95 0.99 1";
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["TDIGEST.CREATE", "w", "COMPRESSION", "50", "WINDOW", "6000", "GENERATIONS", "3"]);
    let mut values = (0..).map(|i: i32| f64::from((i * 7919) % 2003) / 3.0);
    // A batch in each of three spans of 2000 ms: the first is counted for 6000 ms at least,
    // the reads end about 4100 ms after it.
    for batch in 0..3 {
        if batch > 0 {
            std::thread::sleep(Duration::from_millis(2050));
        }
        let batch: Vec<f64> = values.by_ref().take(400).collect();
        add(&mut con, "w", &batch);
    }
    // MIN and MAX read the generations' bounds right after a write, then the kept digest's.
    for read in ["TDIGEST.MIN w", "TDIGEST.MAX w"] {
        add(&mut con, "w", &[values.next().unwrap_or_default()]);
        let first = ok(&mut con, &words(read).iter().map(String::as_str).collect::<Vec<_>>());
        ok(&mut con, &words(MANY).iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(
            ok(&mut con, &words(read).iter().map(String::as_str).collect::<Vec<_>>()),
            first,
            "{read}"
        );
    }
    let reads = [
        "TDIGEST.QUANTILE w 0.5",
        "TDIGEST.QUANTILE w 0.99 0.001 0.5 1 0",
        "TDIGEST.QUANTILE w 0 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1",
        MANY,
        "TDIGEST.CDF w -5 0 100.5 250 700",
        "TDIGEST.RANK w 3 100 600",
        "TDIGEST.REVRANK w 3 100 600",
        "TDIGEST.BYRANK w 1 2 600 1199",
        "TDIGEST.BYREVRANK w 0 7 1000",
    ];
    for read in reads {
        add(&mut con, "w", &[values.next().unwrap_or_default()]);
        let args = words(read);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let first = ok(&mut con, &args);
        assert_eq!(ok(&mut con, &args), first, "{read}");
        assert_eq!(ok(&mut con, &args), first, "{read}, read a third time");
    }
    assert_eq!(observations(&mut con, "w"), 1202 + reads.len() as i64, "every generation read");
}

#[test]
fn values_are_counted_within_the_window_and_forgotten_after_it() {
    const WINDOW: u64 = 1000;
    let window = Duration::from_millis(WINDOW);
    let bound = Duration::from_millis(WINDOW + WINDOW / 4);
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["TDIGEST.CREATE", "w", "WINDOW", "1000", "GENERATIONS", "4"]);
    let early: Vec<f64> = (0..200).map(f64::from).collect();
    let late: Vec<f64> = (1000..1100).map(f64::from).collect();
    let first = timed_add(&mut con, "w", &early);
    assert_counted(&mut con, "w", 200, first, window.saturating_sub(MARGIN), "right after the first write");
    std::thread::sleep(Duration::from_millis(600));
    let second = timed_add(&mut con, "w", &late);
    assert_counted(&mut con, "w", 300, first, window.saturating_sub(MARGIN), "both writes within the window");
    // Past the first write's bound (and within the second's window): only the second counts,
    // whether or not a rotation ran since.
    sleep_until(first.answered + bound + MARGIN);
    assert_counted(&mut con, "w", 100, second, window.saturating_sub(MARGIN), "past the first write's bound");
    if second.sent.elapsed() < window.saturating_sub(MARGIN) {
        assert_eq!(doubles(ok(&mut con, &["TDIGEST.MIN", "w"])), [1000.0]);
    }
    sleep_until(second.answered + bound + MARGIN);
    assert_eq!(observations(&mut con, "w"), 0);
    assert!(doubles(ok(&mut con, &["TDIGEST.QUANTILE", "w", "0.5"]))[0].is_nan());
    assert!(doubles(ok(&mut con, &["TDIGEST.MIN", "w"]))[0].is_nan());
    assert_eq!(ok(&mut con, &["TDIGEST.RANK", "w", "5"]), Value::Array(vec![Value::Int(-2)]));
}

/// Over a stream whose distribution drifts, the window's quantiles against the exact ones of
/// the values it holds (the newest writes: generations drop whole writes, oldest first), next
/// to a plain digest given those values.
#[test]
fn quantiles_of_the_window_carry_a_plain_digests_rank_error() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["TDIGEST.CREATE", "w", "WINDOW", "1200", "GENERATIONS", "4"]);
    let mut random = Random::seeded();
    let mut written: Vec<Vec<f64>> = Vec::new();
    let quantiles: Vec<f64> = (1..100).map(|i| f64::from(i) / 100.0).collect();
    let estimate = |con: &mut Connection, key: &str| {
        let mut args = vec!["TDIGEST.QUANTILE".to_string(), key.to_string()];
        args.extend(quantiles.iter().map(f64::to_string));
        doubles(ok(con, &args.iter().map(String::as_str).collect::<Vec<_>>()))
    };
    let (mut worst, mut worst_plain, mut sum, mut sum_plain, mut reads) = (0.0f64, 0.0f64, 0.0, 0.0, 0);
    for step in 0..30 {
        let drift = f64::from(step) * 40.0;
        let batch: Vec<f64> = (0..300).map(|_| drift + random.below(1_000_000) as f64 / 1000.0).collect();
        add(&mut con, "w", &batch);
        written.push(batch);
        std::thread::sleep(Duration::from_millis(80));
        if step % 5 != 4 {
            continue;
        }
        // The count and the answers read with no rotation or expiry in between.
        let before = observations(&mut con, "w");
        let estimates = estimate(&mut con, "w");
        if observations(&mut con, "w") != before {
            continue;
        }
        let mut held: Vec<f64> = written.iter().rev().flatten().take(before as usize).copied().collect();
        assert_eq!(held.len(), before as usize, "whole writes are held");
        ok(&mut con, &["DEL", "plain"]);
        ok(&mut con, &["TDIGEST.CREATE", "plain"]);
        for batch in written.iter().rev().take(held.len() / 300).rev() {
            add(&mut con, "plain", batch);
        }
        let plain_estimates = estimate(&mut con, "plain");
        held.sort_by(f64::total_cmp);
        let errors = rank_errors(&held, &quantiles, &estimates);
        let plain_errors = rank_errors(&held, &quantiles, &plain_estimates);
        worst = errors.iter().copied().fold(worst, f64::max);
        worst_plain = plain_errors.iter().copied().fold(worst_plain, f64::max);
        sum += errors.iter().sum::<f64>() / errors.len() as f64;
        sum_plain += plain_errors.iter().sum::<f64>() / plain_errors.len() as f64;
        reads += 1;
    }
    assert!(reads >= 3, "only {reads} reads saw no rotation");
    let (mean, mean_plain) = (sum / f64::from(reads), sum_plain / f64::from(reads));
    eprintln!(
        "rank error of the window's quantiles over {reads} reads: mean {mean:.5}, max {worst:.5}; \
         a plain digest of the same values: mean {mean_plain:.5}, max {worst_plain:.5}"
    );
    assert!(worst <= 2.0 * worst_plain + 0.005, "largest rank error {worst} against {worst_plain}");
    assert!(mean <= 2.0 * mean_plain + 0.001, "mean rank error {mean} against {mean_plain}");
}

/// `TDIGEST.TRIMMED_MEAN` of a window of two generations averages the generations' own
/// centroids: of the whole window, the exact mean of its values, as a plain digest gives.
#[test]
fn the_trimmed_mean_of_a_whole_window_is_its_values_mean() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["TDIGEST.CREATE", "w", "WINDOW", "3000", "GENERATIONS", "3"]);
    let mut random = Random::seeded();
    let mut values = Vec::new();
    for batch in 0..2 {
        if batch > 0 {
            // Spans of a second: the second batch opens a generation of its own.
            std::thread::sleep(Duration::from_millis(1100));
        }
        // Skewed values, where the window's digest's centroids (values at middle ranks) are
        // not their means.
        let batch: Vec<f64> = (0..2000).map(|_| (random.below(1000) as f64 / 100.0).exp()).collect();
        add(&mut con, "w", &batch);
        values.extend(batch);
    }
    assert_eq!(observations(&mut con, "w"), 4000, "both batches in the window");
    let exact = values.iter().sum::<f64>() / values.len() as f64;
    let mean = doubles(ok(&mut con, &["TDIGEST.TRIMMED_MEAN", "w", "0", "1"]))[0];
    assert!((mean / exact - 1.0).abs() < 1e-9, "{mean} against {exact}");
}

#[test]
fn a_replica_applies_its_masters_rotations_and_holds_the_same_digests() {
    const WINDOW: u64 = 1200;
    let bound = Duration::from_millis(WINDOW + WINDOW / 3);
    let started_ms = now_ms();
    let master = Server::start_with(&[], &["--appendonly", "yes", "--appendfsync", "always"]);
    let mut on_master = master.connection();
    ok(&mut on_master, &["TDIGEST.CREATE", "win", "WINDOW", "1200", "GENERATIONS", "3"]);
    ok(&mut on_master, &["TDIGEST.CREATE", "day", "COMPRESSION", "30", "WINDOW", DAY]);
    ok(&mut on_master, &["TDIGEST.CREATE", "plain"]);
    let keys = ["win", "day", "plain"];
    let mut random = Random::seeded();
    let mut batch =
        |size: usize| -> Vec<f64> { (0..size).map(|_| random.below(100_000) as f64 / 7.0).collect() };
    add(&mut on_master, "win", &batch(700));
    add(&mut on_master, "day", &batch(300));
    let replica = Server::start_with(&[], &["--replicaof", "127.0.0.1", &master.port.to_string()]);
    let mut on_replica = replica.connection();
    assert_replica_matches(&mut on_master, &mut on_replica, &keys);
    let mut last = Instant::now();
    for round in 0..4 {
        std::thread::sleep(Duration::from_millis(350));
        last = timed_add(&mut on_master, "win", &batch(150 + round * 100)).answered;
        add(&mut on_master, "day", &batch(50));
        add(&mut on_master, "plain", &batch(50));
        assert_replica_matches(&mut on_master, &mut on_replica, &keys);
        assert_same_quantiles(&mut on_master, &mut on_replica, "win");
    }
    ok(&mut on_master, &["TDIGEST.RESET", "day"]);
    add(&mut on_master, "day", &[1.0, 2.0]);
    assert_replica_matches(&mut on_master, &mut on_replica, &keys);
    // Once every generation expired and the master's timer dropped it, the replica forgets too.
    sleep_until(last + bound + Duration::from_secs(1) + MARGIN);
    assert_replica_matches(&mut on_master, &mut on_replica, &keys);
    assert_eq!(observations(&mut on_replica, "win"), 0);
    assert_eq!(info_field(&mut on_replica, "win", "Memory usage"), 8);
    assert_eq!(observations(&mut on_replica, "day"), 2);
    // The rotations reached the AOF with the master's times.
    let aof = std::fs::read_dir(master.dir().join("appendonlydir"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| entry.path().to_string_lossy().ends_with(".incr.aof"))
        .map(|entry| std::fs::read(entry.path()).unwrap())
        .fold(Vec::new(), |mut all, file| {
            all.extend(file);
            all
        });
    let text = String::from_utf8_lossy(&aof);
    let lines: Vec<&str> = text.split("\r\n").collect();
    let times: Vec<u64> = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| line.eq_ignore_ascii_case("TDIGEST.ROTATE"))
        .filter(|(at, _)| lines.get(at + 2) == Some(&"win"))
        .filter_map(|(at, _)| lines.get(at + 4)?.parse().ok())
        .collect();
    assert!(times.len() >= 3, "TDIGEST.ROTATE of win in the AOF: {times:?}");
    assert!(times.windows(2).all(|pair| pair[0] <= pair[1]), "rotations back in time: {times:?}");
    assert!(times.iter().all(|time| (started_ms - WINDOW..=now_ms()).contains(time)), "{times:?}");
}

/// Checks that `key` answers the same quantiles on the master and on its replica in sync.
/// A master reads by its clock and leaves out a generation that expired a moment ago; its
/// replica keeps the generation until the master's rotation reaches it, which the master's
/// timer sends at once. So the answers may differ for a moment every span, never longer: the
/// check reads again, after a short wait, before it fails.
fn assert_same_quantiles(master: &mut Connection, replica: &mut Connection, key: &str) {
    let quantiles = |con: &mut Connection| doubles(ok(con, &["TDIGEST.QUANTILE", key, "0.5", "0.99"]));
    let mut answers = (Vec::new(), Vec::new());
    for _ in 0..3 {
        wait_in_sync(master, replica);
        answers = (quantiles(replica), quantiles(master));
        if answers.0 == answers.1 {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("quantiles of {key} on the replica and the master: {:?} against {:?}", answers.0, answers.1);
}

/// TDIGEST.MERGE of windowed digests into a windowed one, or into a missing key (which it makes
/// windowed, of the sources' window, as a plain merge makes a plain digest): with every value
/// in one span, the result answers as a plain merge of plain digests given the same values,
/// with and without OVERRIDE and with the destination among the sources; merged values keep
/// their span's time and are forgotten with it; a replica holds the same result.
#[test]
fn windowed_digests_merge_span_by_span() {
    const WINDOW: u64 = 1500;
    let master = Server::start();
    let mut con = master.connection();
    let replica = Server::start_with(&[], &["--replicaof", "127.0.0.1", &master.port.to_string()]);
    let mut on_replica = replica.connection();
    let mut random = Random::seeded();
    let mut batch =
        |size: usize| -> Vec<f64> { (0..size).map(|_| random.below(100_000) as f64 / 7.0).collect() };
    let fractions = ["0.01", "0.1", "0.5", "0.9", "0.99"];
    let quantiles = |con: &mut Connection, key: &str| {
        let mut args = vec!["TDIGEST.QUANTILE", key];
        args.extend(fractions);
        doubles(ok(con, &args))
    };
    for (windowed, plain, values) in
        [("wa", "pa", batch(400)), ("wb", "pb", batch(250)), ("wd", "pd", batch(90))]
    {
        ok(&mut con, &["TDIGEST.CREATE", windowed, "COMPRESSION", "60", "WINDOW", DAY]);
        ok(&mut con, &["TDIGEST.CREATE", plain, "COMPRESSION", "60"]);
        add(&mut con, windowed, &values);
        add(&mut con, plain, &values);
    }
    // Each windowed destination, its plain twin, whether it exists (it is then a source too),
    // and the options.
    for (merge, plain_destination, exists, options) in [
        ("wd", "pd", true, &[][..]),
        ("wo", "po", true, &["COMPRESSION", "80", "OVERRIDE"][..]),
        ("wn", "pn", false, &[][..]),
        ("wc", "pc", false, &["COMPRESSION", "90"][..]),
    ] {
        if merge == "wo" {
            ok(&mut con, &["TDIGEST.CREATE", "wo", "WINDOW", DAY]);
            ok(&mut con, &["TDIGEST.CREATE", "po"]);
        }
        let count = if exists { "3" } else { "2" };
        let mut windowed_args = vec!["TDIGEST.MERGE", merge, count, "wa", "wb"];
        windowed_args.extend(exists.then_some(merge));
        windowed_args.extend(options);
        let mut plain_args = vec!["TDIGEST.MERGE", plain_destination, count, "pa", "pb"];
        plain_args.extend(exists.then_some(plain_destination));
        plain_args.extend(options);
        ok(&mut con, &windowed_args);
        ok(&mut con, &plain_args);
        assert_eq!(quantiles(&mut con, merge), quantiles(&mut con, plain_destination), "{merge}");
        assert_eq!(observations(&mut con, merge), observations(&mut con, plain_destination), "{merge}");
        assert_eq!(info(&mut con, merge)[0], info(&mut con, plain_destination)[0], "{merge}'s compression");
    }
    assert_eq!(info(&mut con, "wn")[9..], info(&mut con, "wa")[9..], "the sources' window");
    assert_replica_matches(&mut con, &mut on_replica, &["wa", "wb", "wd", "wo", "wn", "wc"]);

    // Merged values keep their span: a short window forgets them with the source's own.
    let short = WINDOW.to_string();
    ok(&mut con, &["TDIGEST.CREATE", "source", "WINDOW", &short, "GENERATIONS", "3"]);
    ok(&mut con, &["TDIGEST.CREATE", "merged", "WINDOW", &short, "GENERATIONS", "3"]);
    let written = timed_add(&mut con, "source", &batch(200));
    ok(&mut con, &["TDIGEST.MERGE", "merged", "1", "source"]);
    ok(&mut con, &["TDIGEST.MERGE", "made", "1", "source"]);
    if written.answered.elapsed() + MARGIN < Duration::from_millis(WINDOW) {
        assert_eq!(observations(&mut con, "merged"), 200);
        assert_eq!(observations(&mut con, "made"), 200);
    } else {
        eprintln!("the machine was too slow to check the merged values within the window");
    }
    sleep_until(written.answered + Duration::from_millis(WINDOW + WINDOW / 3) + MARGIN);
    for key in ["merged", "made"] {
        assert!(doubles(ok(&mut con, &["TDIGEST.QUANTILE", key, "0.5"]))[0].is_nan(), "{key} forgotten");
    }
    assert_replica_matches(&mut con, &mut on_replica, &["source", "merged", "made"]);
}

#[test]
fn reload_aof_rewrite_and_restart_keep_windowed_digests_with_absolute_times() {
    const WINDOW: u64 = 1500;
    let bound = Duration::from_millis(WINDOW + WINDOW / 4);
    let aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"];
    let mut server = Server::start_with(&[], &aof);
    let mut con = server.connection();
    // A day-long window in 64 generations: nothing rotates during the test.
    ok(&mut con, &["TDIGEST.CREATE", "day", "COMPRESSION", "20", "WINDOW", DAY, "GENERATIONS", "64"]);
    let values: Vec<f64> = (0..2000).map(|i| f64::from((i * 31) % 997)).collect();
    add(&mut con, "day", &values);
    ok(&mut con, &["TDIGEST.CREATE", "short", "WINDOW", "1500"]);
    let short = timed_add(&mut con, "short", &values[..300]);
    let kept = digest(&mut con, "day");
    ok(&mut con, &["DEBUG", "RELOAD"]);
    assert_eq!(digest(&mut con, "day"), kept, "after DEBUG RELOAD");
    ok(&mut con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut con);
    add(&mut con, "day", &[1.5, 2.5]);
    ok(&mut con, &["TDIGEST.CREATE", "appended", "WINDOW", DAY]);
    add(&mut con, "appended", &[3.0]);
    let kept = [digest(&mut con, "day"), digest(&mut con, "appended")];
    server.restart();
    let mut con = server.connection();
    assert_eq!(
        [digest(&mut con, "day"), digest(&mut con, "appended")],
        kept,
        "after an AOF rewrite and restart"
    );
    assert_counted(
        &mut con,
        "short",
        300,
        short,
        Duration::from_millis(WINDOW).saturating_sub(MARGIN),
        "after the restart",
    );
    // A downtime longer than the window forgets, in the AOF as in the RDB.
    server.kill();
    sleep_until(short.answered + bound + MARGIN);
    server.launch();
    let mut con = server.connection();
    assert_eq!(ok(&mut con, &["TYPE", "short"]), simple(TYPE_NAME));
    assert_eq!(observations(&mut con, "short"), 0, "after a downtime longer than the window (AOF)");
    assert_eq!(digest(&mut con, "day"), kept[0]);
    let again = timed_add(&mut con, "short", &values[..50]);
    ok(&mut con, &["CONFIG", "SET", "appendonly", "no"]);
    ok(&mut con, &["SAVE"]);
    server.kill();
    sleep_until(again.answered + bound + MARGIN);
    server.launch();
    let mut con = server.connection();
    assert_eq!(observations(&mut con, "short"), 0, "after a downtime longer than the window (RDB)");
    assert_eq!(digest(&mut con, "day"), kept[0]);
}

#[test]
fn an_idle_key_gives_back_expired_generations_by_its_timer() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["TDIGEST.CREATE", "idle", "WINDOW", "600", "GENERATIONS", "2"]);
    let bytes = |con: &mut Connection| info_field(con, "idle", "Memory usage");
    let metric = |con: &mut Connection| info_field_bf(con, "bf_tdigest_bytes");
    let empty = (bytes(&mut con), metric(&mut con));
    assert_eq!(empty, (8, 8));
    let values: Vec<f64> = (0..5000).map(f64::from).collect();
    let written = timed_add(&mut con, "idle", &values);
    assert!(bytes(&mut con) > 8);
    assert_eq!(metric(&mut con), bytes(&mut con));
    // No command touches the key: the timer drops its generation within a span and a second
    // of its expiry (900 ms after the write at most).
    let deadline = written.answered + Duration::from_millis(900) + Duration::from_secs(1) + MARGIN;
    while bytes(&mut con) > 8 {
        assert!(Instant::now() < deadline, "the timer kept the expired generation");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!((bytes(&mut con), metric(&mut con)), empty);
}

fn info_field_bf(con: &mut Connection, name: &str) -> i64 {
    crate::harness::info_field(con, "bf", name).and_then(|value| value.parse().ok()).unwrap_or(-1)
}

#[test]
fn redisbloom_refuses_an_rdb_holding_a_windowed_digest() {
    let ours = Server::start();
    let mut con = ours.connection();
    ok(&mut con, &["TDIGEST.CREATE", "w", "WINDOW", DAY]);
    add(&mut con, "w", &[1.0, 2.0]);
    ok(&mut con, &["SAVE"]);
    let mut refusing = Server::prepared(redisbloom_path(), &[], &[]);
    refusing.take_file(&ours, "dump.rdb");
    let log = refusing.run_until_exit();
    assert!(log.contains("no matching module type 'rbTDIGwnd'"), "{log}");
    let payload = dump_payload(&mut con, "w");
    let redisbloom = Server::start_redisbloom(&[]);
    let refused = call_bytes(&mut redisbloom.connection(), &[b"RESTORE", b"w", b"0", &payload]);
    assert!(refused.is_err(), "{refused:?}");
}
