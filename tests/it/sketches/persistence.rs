//! Every sketch survives what the server does with its data, bit for bit (DEBUG
//! DIGEST-VALUE, which is real here: RedisBloom answers one constant for all its keys):
//! DEBUG RELOAD, SAVE and restart, an AOF rewritten without the RDB preamble (the RESTOREs
//! RedisBloom writes too) and replayed, COPY, and a replica's full and partial sync, with
//! Top-K traffic that decays counters on every side.

use super::{replies, value, words, Script};
use crate::harness::*;
use redis::{Connection, Value};

/// Keys of every sketch type, filled by commands that cover their states: a Count-Min sketch
/// merged from others, Top-K lists that decay and expel, t-digests with values both merged
/// and still buffered.
pub fn writes() -> Script {
    let mut script: Script = [
        "CMS.INITBYDIM cms 200 5",
        "CMS.INITBYPROB cms:prob 0.01 0.01",
        "CMS.INITBYDIM cms:merged 200 5",
        "TOPK.RESERVE topk 5 20 3 0.9",
        "TOPK.RESERVE topk:tiny 1 1 1 0.9",
        "TOPK.RESERVE topk:defaults 10",
        "TDIGEST.CREATE td",
        "TDIGEST.CREATE td:small COMPRESSION 20",
        "TDIGEST.CREATE td:merged",
    ]
    .iter()
    .map(|line| words(line))
    .collect();
    let mut random = Random::seeded();
    for round in 0..30 {
        let mut cms = words("CMS.INCRBY cms");
        let mut topk = words("TOPK.ADD topk");
        let mut tiny = words("TOPK.ADD topk:tiny");
        let mut td = words("TDIGEST.ADD td");
        let mut small = words("TDIGEST.ADD td:small");
        for _ in 0..40 {
            let skewed = format!("item:{}", random.below(30).pow(2) / 10);
            cms.extend([skewed.clone(), (random.below(5) + 1).to_string()]);
            topk.push(skewed.clone());
            tiny.push(if random.below(4) == 0 { "a".to_string() } else { skewed });
            td.push(format!("{}.{}", random.below(1000), random.below(100)));
            small.push(format!("-{}", random.below(100_000)));
        }
        script.extend([cms, topk, tiny, td, small]);
        script.push(words(&format!("TOPK.INCRBY topk:defaults heavy {} light 1", round * 7)));
    }
    script.extend(
        [
            "CMS.MERGE cms:merged 2 cms cms WEIGHTS 2 1",
            "TDIGEST.MERGE td:merged 2 td td:small",
            "TDIGEST.ADD td 1 2 3",
        ]
        .iter()
        .map(|line| words(line)),
    );
    script
}

/// Reads of every key that `writes` fills: what a restored server must answer alike.
pub fn reads() -> Script {
    let mut script: Script = [
        "CMS.INFO cms",
        "CMS.INFO cms:prob",
        "CMS.QUERY cms:merged item:0 item:1 item:4 item:84 absent",
        "TOPK.LIST topk WITHCOUNT",
        "TOPK.LIST topk:tiny WITHCOUNT",
        "TOPK.LIST topk:defaults WITHCOUNT",
        "TOPK.INFO topk",
        "TOPK.QUERY topk item:0 item:1 a absent",
        "TOPK.COUNT topk item:0 item:1 a absent",
        "TDIGEST.INFO td",
        "TDIGEST.INFO td:merged",
        "TDIGEST.QUANTILE td 0 0.01 0.5 0.99 1",
        "TDIGEST.QUANTILE td:merged 0.1 0.5 0.9",
        "TDIGEST.CDF td:small -50000 0",
        "TDIGEST.RANK td 10 500",
        "TDIGEST.TRIMMED_MEAN td 0.1 0.9",
        "TDIGEST.MIN td:merged",
        "TDIGEST.MAX td:merged",
    ]
    .iter()
    .map(|line| words(line))
    .collect();
    script.push(words("CMS.QUERY cms item:0 item:1 item:2 item:3 item:84"));
    script
}

pub const KEYS: [&str; 9] =
    ["cms", "cms:prob", "cms:merged", "topk", "topk:tiny", "topk:defaults", "td", "td:small", "td:merged"];

/// Each key's digest, then the replies to `reads`.
pub fn snapshot(con: &mut Connection) -> (Vec<String>, Vec<Result<Value, String>>) {
    (KEYS.iter().map(|key| digest(con, key)).collect(), replies(con, &reads()))
}

pub fn fill(con: &mut Connection) {
    let script = writes();
    for (command, reply) in script.iter().zip(replies(con, &script)) {
        assert!(reply.is_ok(), "{command:?}: {reply:?}");
    }
}

#[test]
fn sketches_survive_reload_restart_aof_and_copy() {
    let aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"];
    let mut server = Server::start_with(&[], &aof);
    let mut con = server.connection();
    fill(&mut con);
    let before = snapshot(&mut con);
    assert_eq!(value(&mut con, "TYPE cms"), Value::SimpleString("CMSk-TYPE".into()));
    assert_eq!(value(&mut con, "TYPE topk"), Value::SimpleString("TopK-TYPE".into()));
    assert_eq!(value(&mut con, "TYPE td"), Value::SimpleString("TDIS-TYPE".into()));
    // Digests tell the keys apart, unlike RedisBloom's constant.
    let mut distinct = before.0.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), KEYS.len(), "{:?}", before.0);

    ok(&mut con, &["DEBUG", "RELOAD"]);
    assert_eq!(snapshot(&mut con), before, "after DEBUG RELOAD");
    // Reads change nothing: the digests after all the reads above are the same.
    assert_eq!(snapshot(&mut con).0, before.0, "after reads");

    ok(&mut con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut con);
    server.restart();
    let mut con = server.connection();
    assert_eq!(snapshot(&mut con), before, "after an AOF rewrite and restart");

    survives_save_restart_and_copy(&mut server, &KEYS, snapshot, &before);
}

/// SAVE, a restart from the RDB alone (the AOF turned off), then COPY of each key: the
/// server answers `snapshot` as `before`, and each copy digests as its key.
pub fn survives_save_restart_and_copy<S: PartialEq + std::fmt::Debug>(
    server: &mut Server,
    keys: &[&str],
    snapshot: impl Fn(&mut Connection) -> S,
    before: &S,
) {
    let mut con = server.connection();
    ok(&mut con, &["SAVE"]);
    ok(&mut con, &["CONFIG", "SET", "appendonly", "no"]);
    server.restart_with_module_args(&[]);
    let mut con = server.connection();
    assert_eq!(&snapshot(&mut con), before, "after SAVE and restart");
    for key in keys {
        let copy = format!("{key}:copy");
        assert_eq!(ok(&mut con, &["COPY", key, &copy]), Value::Int(1));
        assert_eq!(digest(&mut con, &copy), digest(&mut con, key), "COPY of {key}");
        let usage = int(&mut con, &["MEMORY", "USAGE", key]);
        assert!(usage > 0, "MEMORY USAGE {key}");
    }
}

/// Top-K's decay draws from a generator kept with each sketch, so a replica that applies its
/// master's commands, or loads its master's RDB, holds the same sketch (RedisBloom's replicas
/// draw from their own `rand()` and drift).
#[test]
fn a_replica_holds_its_masters_sketches_bit_for_bit() {
    let config = ["--repl-diskless-sync-delay", "0"];
    let master = Server::start_with(&[], &config);
    let mut con = master.connection();
    // Half the traffic before the replica syncs (it gets an RDB), half after (it gets commands).
    let script = writes();
    let (before_sync, after_sync) = script.split_at(script.len() / 2);
    for command in before_sync {
        let args: Vec<&[u8]> = command.iter().map(String::as_bytes).collect();
        call_bytes(&mut con, &args).unwrap_or_else(|error| panic!("{command:?}: {error}"));
    }
    let replica = Server::start_with(&[], &["--replicaof", "127.0.0.1", &master.port.to_string()]);
    let mut replica_con = replica.connection();
    wait_in_sync(&mut con, &mut replica_con);
    for command in after_sync {
        let args: Vec<&[u8]> = command.iter().map(String::as_bytes).collect();
        call_bytes(&mut con, &args).unwrap_or_else(|error| panic!("{command:?}: {error}"));
    }
    wait_in_sync(&mut con, &mut replica_con);
    assert_eq!(snapshot(&mut replica_con), snapshot(&mut con));
    // A read-only replica answers every read, TOPK.COUNT among them (RedisBloom flags it a
    // write, so its replicas refuse it).
    let count = call(&mut replica_con, &["TOPK.COUNT", "topk", "item:0"]);
    assert!(matches!(count, Ok(Value::Array(_))), "{count:?}");
}
