//! TOPK.*: every reply RedisBloom's where its algorithm draws nothing (errors, parameters,
//! sketches wide enough that buckets never collide, a decay of 1), the same heavy hitters on
//! a skewed stream where it draws; and what this module adds: one reply per item always,
//! decay after a load, INCRBY in bounded time.

use super::{assert_same_replies, replies, value, words, Script};
use crate::harness::*;
use redis::Value;
use std::collections::HashSet;
use std::time::Instant;

fn script(lines: &str) -> Script {
    lines.lines().map(str::trim).filter(|line| !line.is_empty()).map(words).collect()
}

#[test]
fn answers_are_redisbloom_answers_where_nothing_is_drawn() {
    let mut commands = script(
        "TOPK.RESERVE t 3 50 4 0.9
         TOPK.RESERVE t 3 50 4 0.9
         TOPK.RESERVE d 10
         TOPK.INFO d
         TOPK.RESERVE x 0
         TOPK.RESERVE x -1
         TOPK.RESERVE x k
         TOPK.RESERVE x 3 0 4 0.9
         TOPK.RESERVE x 3 50 0 0.9
         TOPK.RESERVE x 3 50 4 0
         TOPK.RESERVE x 3 50 4 1.5
         TOPK.RESERVE x 3 50 4 nan
         TOPK.RESERVE x 3 50 4 w
         TOPK.RESERVE x 3 50
         TOPK.RESERVE x 3 50 4 0.9 extra
         TOPK.RESERVE one 3 10 3 1
         TOPK.ADD t A B C D E A A B C G D B D A E E 1
         TOPK.QUERY t A B C D E F G 1
         TOPK.COUNT t A B C D E F G 1
         TOPK.LIST t
         TOPK.LIST t WITHCOUNT
         TOPK.LIST t withcount
         TOPK.LIST t WITH
         TOPK.LIST t WITHCOUNTS
         TOPK.LIST t COUNT
         TOPK.LIST t WITHCOUNT extra
         TOPK.INFO t
         TOPK.INCRBY one bar 3 baz 6 42 2
         TOPK.INCRBY one 42 8 xyzzy 4
         TOPK.COUNT one bar baz 42 xyzzy 4
         TOPK.INCRBY one bar 100000
         TOPK.INCRBY one bar 0
         TOPK.LIST one WITHCOUNT
         TOPK.ADD missing a
         TOPK.QUERY missing a
         TOPK.COUNT missing a
         TOPK.LIST missing
         TOPK.INFO missing
         TOPK.INCRBY missing a 1
         TOPK.INCRBY one a
         TOPK.ADD t
         SET str x
         TOPK.ADD str a
         TOPK.QUERY str a
         TOPK.LIST str
         TOPK.INFO str
         TOPK.RESERVE str 3",
    );
    // Ties: 60 items added once each into 40 slots.
    commands.push(words("TOPK.RESERVE ties 40 1000 5 0.9"));
    let mut ties = words("TOPK.ADD ties");
    ties.extend((0..60).map(|i| format!("tie{i}")));
    commands.push(ties);
    commands.push(words("TOPK.LIST ties WITHCOUNT"));
    // A decay of 1 never draws: collisions on a narrow sketch keep RedisBloom's answers.
    commands.push(words("TOPK.RESERVE flat 5 7 3 1"));
    let mut random = Random::seeded();
    for _ in 0..10 {
        let mut add = words("TOPK.ADD flat");
        add.extend((0..30).map(|_| format!("f{}", random.below(20).pow(2))));
        commands.push(add);
    }
    commands.push(words("TOPK.LIST flat WITHCOUNT"));
    commands.push(words("TOPK.COUNT flat f0 f1 f4 f9 f16 f25"));
    let (ours, theirs) = (Server::start(), Server::start_redisbloom(&[]));
    assert_same_replies(&ours, &theirs, &commands);
}

/// Where RedisBloom draws (a narrow sketch, a skewed stream), the heavy hitters it finds are
/// found here too.
#[test]
fn the_heavy_hitters_are_redisbloom_ones() {
    let mut random = Random::seeded();
    let mut commands = vec![words("TOPK.RESERVE hh 10 100 4 0.9")];
    for _ in 0..200 {
        let mut add = words("TOPK.ADD hh");
        // Item i comes about 1/i² as often: ten clear leaders over a long tail.
        add.extend((0..100).map(|_| {
            let uniform = (random.below(1 << 30) as f64 + 0.5) / f64::from(1 << 30);
            format!("h{}", (1.0 / uniform.sqrt()) as u64)
        }));
        commands.push(add);
    }
    let list = |server: &Server| -> HashSet<Vec<u8>> {
        let mut con = server.connection();
        for (command, reply) in commands.iter().zip(replies(&mut con, &commands)) {
            assert!(reply.is_ok(), "{command:?}: {reply:?}");
        }
        let Value::Array(items) = value(&mut con, "TOPK.LIST hh") else { panic!("TOPK.LIST") };
        items.into_iter().map(bulk).collect()
    };
    let (ours, theirs) = (list(&Server::start()), list(&Server::start_redisbloom(&[])));
    let shared = ours.intersection(&theirs).count();
    assert!(shared >= 8, "only {shared} of 10 heavy hitters in common: {ours:?} / {theirs:?}");
    for leader in 1..=5 {
        let item = format!("h{leader}").into_bytes();
        assert!(ours.contains(&item) && theirs.contains(&item), "h{leader} is a clear leader");
    }
}

/// Beyond RedisBloom: a bad increment anywhere refuses the whole command with one error and
/// changes nothing (RedisBloom applies the pairs before it, then sends fewer replies than it
/// announced); a large increment takes no longer than a small one; a sketch that was loaded
/// still decays (RedisBloom's never does again); a sketch beyond the budget is refused.
#[test]
fn increments_are_checked_first_bounded_and_loaded_sketches_decay() {
    let server = Server::start_with(&["max-filter-bytes", "1048576"], &[]);
    let mut con = server.connection();
    ok(&mut con, &["TOPK.RESERVE", "k", "3", "10", "3", "0.9"]);
    let error = err(&mut con, &["TOPK.INCRBY", "k", "a", "5", "b", "-1", "c", "2"]);
    assert!(error.starts_with("TopK: increment must be an integer"), "{error}");
    assert_eq!(value(&mut con, "TOPK.COUNT k a c"), Value::Array(vec![Value::Int(0), Value::Int(0)]));
    assert_eq!(value(&mut con, "PING"), Value::SimpleString("PONG".into()), "the connection is in step");

    ok(&mut con, &["TOPK.RESERVE", "slow", "1", "1", "1", "0.999"]);
    ok(&mut con, &["TOPK.INCRBY", "slow", "big", "100000"]);
    let started = Instant::now();
    for _ in 0..100 {
        ok(&mut con, &["TOPK.INCRBY", "slow", "other", "100000"]);
    }
    assert!(started.elapsed().as_secs_f64() < 5.0, "100 large increments took {:?}", started.elapsed());

    ok(&mut con, &["TOPK.RESERVE", "tiny", "1", "1", "1", "0.9"]);
    ok(&mut con, &["TOPK.ADD", "tiny", "a"]);
    ok(&mut con, &["DEBUG", "RELOAD"]);
    let mut adds = vec!["TOPK.ADD", "tiny"];
    adds.extend(std::iter::repeat_n("b", 1000));
    ok(&mut con, &adds);
    assert_eq!(value(&mut con, "TOPK.LIST tiny"), Value::Array(vec![Value::BulkString(b"b".to_vec())]));

    let error = err(&mut con, &["TOPK.RESERVE", "huge", "10", "100000000", "100", "0.9"]);
    assert_eq!(error, "ERR Insufficient memory to create topk data structure");
    assert_eq!(value(&mut con, "EXISTS huge"), Value::Int(0));
}

/// Arguments are checked in RedisBloom's order: RESERVE's each in turn, one that is no number
/// reported in its turn; INCRBY's key before its increments. Items holding a NUL are listed
/// and expelled cut at it, as RedisBloom replies its C strings, and still match whole.
#[test]
fn arguments_are_checked_and_items_replied_as_redisbloom_does() {
    let mut commands: Script = [
        "TOPK.RESERVE r 0 abc 0 0.9",
        "TOPK.RESERVE r 2 0 abc 0.9",
        "TOPK.RESERVE r 2 10 0 abc",
        "TOPK.RESERVE r abc 0 0 0",
        "TOPK.RESERVE r -1 10 5 x",
        "TOPK.INCRBY nokey a x",
        "SET s x",
        "TOPK.INCRBY s a x",
        "TOPK.RESERVE t 3 8 7 1",
        "TOPK.RESERVE u 1 8 7 1",
    ]
    .iter()
    .map(|line| words(line))
    .collect();
    let with_nul = |words: &[&str]| words.iter().map(ToString::to_string).collect::<Vec<String>>();
    commands.push(with_nul(&["TOPK.ADD", "t", "a\0b", "\0"]));
    commands.push(words("TOPK.LIST t WITHCOUNT"));
    commands.push(words("TOPK.LIST t"));
    commands.push(with_nul(&["TOPK.ADD", "u", "a\0b", "c", "c"]));
    commands.push(with_nul(&["TOPK.QUERY", "t", "a\0b", "a", "\0", ""]));
    commands.push(with_nul(&["TOPK.COUNT", "t", "a\0b", "a"]));
    let (ours, theirs) = (Server::start(), Server::start_redisbloom(&[]));
    assert_same_replies(&ours, &theirs, &commands);
}
