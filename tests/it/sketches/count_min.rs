//! CMS.*: every reply RedisBloom 2.8.2's, on the same commands, errors included, where Redis
//! 8.12 kept it (CMS.INFO is compared without the pair 8.12 added; what 8.12 changed is
//! `cell_size`'s); and what this module adds: sizes beyond the budget refused without trying.

use super::{assert_same_replies, words, Script};
use crate::harness::*;

fn script(lines: &str) -> Script {
    lines.lines().map(str::trim).filter(|line| !line.is_empty()).map(words).collect()
}

/// Every refusal RedisBloom answers, and increments, queries, info and merges on a narrow
/// sketch where items collide. (Not here: negative increments and counters at their maximum,
/// which Redis 8.12 answers otherwise.)
fn refusals_and_merges() -> Script {
    script(
        "CMS.INITBYDIM a 100 5
         CMS.INITBYDIM a 100 5
         CMS.INITBYDIM b 0 5
         CMS.INITBYDIM b -1 5
         CMS.INITBYDIM b x 5
         CMS.INITBYDIM b 5 0
         CMS.INITBYDIM b 5 x
         CMS.INITBYDIM b 1.5 2
         CMS.INITBYDIM b 4294967295 4294967295
         CMS.INITBYDIM b 9223372036854775807 2
         CMS.INITBYPROB p 0.001 0.01
         CMS.INFO p
         CMS.INITBYPROB p2 0 0.01
         CMS.INITBYPROB p2 1 0.5
         CMS.INITBYPROB p2 0.5 0
         CMS.INITBYPROB p2 0.5 1
         CMS.INITBYPROB p2 x 0.1
         CMS.INITBYPROB p2 0.1 x
         CMS.INITBYPROB p2 0.1 nan
         CMS.INITBYPROB p2 1e-19 0.5
         CMS.INITBYPROB p2 0.1 1e-50
         CMS.INITBYPROB p2 0.5 0.25
         CMS.INFO p2
         CMS.INCRBY a foo 5 bar 3 foo 2
         CMS.INCRBY a foo 1.5
         CMS.INCRBY a foo x
         CMS.INCRBY a foo -0
         CMS.INCRBY a foo +1
         CMS.INCRBY a foo 9223372036854775808
         CMS.INCRBY a foo 1 bar
         CMS.INCRBY a foo
         CMS.INCRBY missing foo 1
         CMS.QUERY a foo bar baz
         CMS.QUERY missing foo
         CMS.QUERY a
         CMS.INFO a
         CMS.INFO missing
         CMS.INFO a extra
         CMS.INITBYDIM c 100 5
         CMS.INITBYDIM d 50 5
         CMS.INITBYDIM e 100 4
         CMS.MERGE c 1 a
         CMS.QUERY c foo bar baz
         CMS.INFO c
         CMS.MERGE c 2 a a WEIGHTS 2 -1
         CMS.QUERY c foo bar
         CMS.MERGE c 2 a d
         CMS.MERGE c 2 a e
         CMS.MERGE missing 1 a
         CMS.MERGE c x a
         CMS.MERGE c 0 a
         CMS.MERGE c -1 a
         CMS.MERGE c 2 a
         CMS.MERGE c 1 a b
         CMS.MERGE c 1 a WEIGHTS
         CMS.MERGE c 1 a WEIGHTS x
         CMS.MERGE c 1 a WEIGHTS 1 2
         CMS.MERGE c 2 a d WEIGHTS 1 x
         CMS.MERGE c 1 nokey
         CMS.MERGE c 1 weights
         CMS.MERGE c 1 WEIGHTS 1
         CMS.MERGE c 2 a WEIGHTS 1 2
         CMS.MERGE c 2 a a WEIGHTS 1 2 3
         CMS.MERGE c 2 c a WEIGHTS 3 1
         CMS.QUERY c foo bar
         CMS.MERGE c 1 a WEIGHTS -1
         CMS.MERGE c 1 a weights 4
         CMS.QUERY c foo bar
         SET str x
         CMS.QUERY str a
         CMS.INCRBY str a 1
         CMS.INFO str
         CMS.INITBYDIM str 10 10
         CMS.MERGE c 1 str
         CMS.MERGE str 1 a",
    )
}

/// Creation, increments, queries, info and merges, with every refusal RedisBloom answers,
/// on a narrow sketch where items collide.
#[test]
fn answers_are_redisbloom_answers() {
    let mut commands = refusals_and_merges();
    // Many items on 100 columns: collisions in every row.
    let mut random = Random::seeded();
    for _ in 0..20 {
        let mut increment = words("CMS.INCRBY a");
        let mut query = words("CMS.QUERY a");
        for _ in 0..50 {
            let item = format!("item:{}", random.below(500));
            query.push(item.clone());
            increment.push(item);
            increment.push(random.below(1000).to_string());
        }
        commands.push(increment);
        commands.push(query);
    }
    commands.push(words("CMS.INFO a"));
    let (ours, theirs) = (Server::start(), Server::start_redisbloom(&[]));
    assert_same_replies(&ours, &theirs, &commands);
}

/// Beyond RedisBloom: a sketch larger than `bf.max-filter-bytes` is refused with RedisBloom's
/// memory error before anything is allocated, and nothing is created.
#[test]
fn a_sketch_beyond_the_budget_is_refused_without_trying() {
    let server = Server::start_with(&["max-filter-bytes", "1048576"], &[]);
    let mut con = server.connection();
    for command in
        [&["CMS.INITBYDIM", "k", "1000000", "1000"][..], &["CMS.INITBYPROB", "k", "0.0000001", "0.001"]]
    {
        assert_eq!(err(&mut con, command), "CMS: Insufficient memory to create the key");
    }
    assert_eq!(ok(&mut con, &["EXISTS", "k"]), redis::Value::Int(0));
    ok(&mut con, &["CMS.INITBYDIM", "k", "1000", "100"]);
}

/// INITBYDIM and INITBYPROB check their two numbers in turn, as RedisBloom does: the first one
/// out of range is reported before a second that is no number.
#[test]
fn dimensions_are_checked_in_redisbloom_order() {
    let commands: Script = [
        "CMS.INITBYPROB x 0 nan",
        "CMS.INITBYPROB x 0 abc",
        "CMS.INITBYPROB x 1 abc",
        "CMS.INITBYPROB x inf abc",
        "CMS.INITBYPROB x 0.5 abc",
        "CMS.INITBYPROB x abc 0",
        "CMS.INITBYPROB x 0.5 2",
        "CMS.INITBYDIM x 0 abc",
        "CMS.INITBYDIM x -1 abc",
        "CMS.INITBYDIM x abc 0",
        "CMS.INITBYDIM x 10 abc",
        "CMS.INITBYDIM x 10 0",
    ]
    .iter()
    .map(|line| words(line))
    .collect();
    let (ours, theirs) = (Server::start(), Server::start_redisbloom(&[]));
    assert_same_replies(&ours, &theirs, &commands);
}
