//! Switching from RedisBloom and back: the catalogue's filters moved from the real RedisBloom
//! 2.8.2 to this module (RDB, AOF, SCANDUMP/LOADCHUNK) and back (SCANDUMP/LOADCHUNK, AOF, RDB),
//! each compared with a RedisBloom server that ran the same commands.

use super::catalogue::{catalogue, cook_all, cook_on_both, held, later, Held};
use super::{
    assert_same_list, cf_info, cf_loadchunks, cf_scandump, info_number, mexists, module_type, per_item,
    Module, AOF,
};
use crate::harness::*;
use redis::{Connection, Value};

/// Items never added: the false positives among them are the filter's own, so both servers
/// must answer them alike.
fn non_members() -> Vec<Vec<u8>> {
    let mut probes = numbered("absent:", 18_000);
    probes.extend((0..2000u32).map(|n| n.to_le_bytes().to_vec()));
    probes
}

fn distinct(items: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut items = items.to_vec();
    items.sort();
    items.dedup();
    items
}

/// The filter `held` describes is, on `tested`, the one on `reference`: same CF.INFO, every
/// item present, the same CF.COUNT for each, the same answers for 20,000 non-members, and the
/// same SCANDUMP stream byte for byte.
fn assert_same_filter(reference: &mut Connection, tested: &mut Connection, held: &Held) {
    let key = held.key.as_str();
    assert_eq!(ok(tested, &["TYPE", key]), Value::SimpleString("MBbloomCF".into()), "{key}");
    assert_eq!(cf_info(tested, key), cf_info(reference, key), "CF.INFO {key}");
    let present = per_item(tested, "CF.EXISTS", key, &held.members);
    assert!(present.iter().all(|answer| *answer == Ok(Value::Int(1))), "{key}: an item added is missing");
    let members = distinct(&held.members);
    assert_same_list(
        &per_item(tested, "CF.COUNT", key, &members),
        &per_item(reference, "CF.COUNT", key, &members),
        &format!("CF.COUNT {key}"),
    );
    let probes = non_members();
    assert_same_list(
        &mexists(tested, key, &probes),
        &mexists(reference, key, &probes),
        &format!("{key}: non-members"),
    );
    assert!(cf_scandump(tested, key) == cf_scandump(reference, key), "{key}: SCANDUMP streams differ");
}

/// CF.DEL of every item held, then of a few non-members, answers alike on both servers and
/// leaves the same filter (automatic compactions included).
fn assert_same_deletes(reference: &mut Connection, tested: &mut Connection, held: &Held) {
    let key = held.key.as_str();
    let mut doomed = held.members.clone();
    doomed.extend(non_members().into_iter().take(200));
    assert_same_list(
        &per_item(tested, "CF.DEL", key, &doomed),
        &per_item(reference, "CF.DEL", key, &doomed),
        &format!("CF.DEL {key}"),
    );
    assert_eq!(cf_info(tested, key), cf_info(reference, key), "CF.INFO {key} after the deletes");
    assert!(cf_scandump(tested, key) == cf_scandump(reference, key), "{key}: SCANDUMP after the deletes");
}

fn assert_all_same(theirs: &Server, ours: &Server, all: &[Held]) {
    let (mut theirs, mut ours) = (theirs.connection(), ours.connection());
    for held in all {
        assert_same_filter(&mut theirs, &mut ours, held);
    }
    for held in all {
        assert_same_deletes(&mut theirs, &mut ours, held);
    }
}

/// A RedisBloom server holding the catalogue.
fn redisbloom_with_catalogue(config: &[&str]) -> (Server, Vec<Held>) {
    let server = Module::RedisBloom.start(config);
    let mut all = Vec::new();
    cook_all(&mut server.connection(), &catalogue(), &mut all);
    (server, all)
}

#[test]
fn a_redisbloom_rdb_loads_and_every_filter_answers_as_before() {
    let (theirs, all) = redisbloom_with_catalogue(&[]);
    let mut con = theirs.connection();
    assert_eq!(module_type(&dump_payload(&mut con, "defaults")), ("MBbloomCF".to_string(), 4));
    ok(&mut con, &["SAVE"]);
    let mut ours = Module::Redbloom.prepared(&[]);
    ours.take_file(&theirs, "dump.rdb");
    ours.launch();
    assert_eq!(keys(&mut ours.connection()), keys(&mut con));
    assert_all_same(&theirs, &ours, &all);
}

/// RedisBloom's AOF rewrite (CF.LOADCHUNK commands, also for empty filters) and the commands
/// written after it, replayed by this module.
#[test]
fn a_redisbloom_aof_replays_including_commands_after_the_rewrite() {
    let (theirs, mut all) = redisbloom_with_catalogue(&AOF);
    let mut con = theirs.connection();
    ok(&mut con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut con);
    cook_all(&mut con, &later(), &mut all);
    let mut ours = Module::Redbloom.prepared(&AOF);
    ours.take_file(&theirs, "appendonlydir");
    ours.launch();
    assert_eq!(keys(&mut ours.connection()), keys(&mut con));
    assert_all_same(&theirs, &ours, &all);
}

/// Every SCANDUMP stream of RedisBloom loads here with CF.LOADCHUNK. A filter without items
/// cannot travel this way: RedisBloom answers `[0, nil]` at once for it.
#[test]
fn redisbloom_scandump_streams_load_with_loadchunk() {
    let (theirs, all) = redisbloom_with_catalogue(&[]);
    let ours = Module::Redbloom.start(&[]);
    let (mut their_con, mut our_con) = (theirs.connection(), ours.connection());
    let mut moved = Vec::new();
    for held in &all {
        let pairs = cf_scandump(&mut their_con, &held.key);
        if info_number(&mut their_con, &held.key, "Number of items inserted") == 0 {
            assert!(pairs.is_empty(), "{}: RedisBloom dumps no filter without items", held.key);
            continue;
        }
        cf_loadchunks(&mut our_con, &held.key, &pairs);
        moved.push(held.clone());
    }
    assert!(moved.len() >= all.len() - 2, "only the empty filters stay behind");
    assert_all_same(&theirs, &ours, &moved);
}

/// Filters grown here by commands (answering each exactly as RedisBloom does), handed to a
/// fresh RedisBloom by SCANDUMP → CF.LOADCHUNK, by this module's AOF, which RedisBloom replays,
/// and by its RDB (the contract keeps RedisBloom's encoding version 4 and layout: the DUMP
/// payloads are RedisBloom's byte for byte): each is the filter of a RedisBloom server given
/// the same commands.
#[test]
fn filters_made_here_go_to_redisbloom_by_scandump_aof_and_rdb() {
    let ours = Module::Redbloom.start(&AOF);
    let reference = Module::RedisBloom.start(&[]);
    let (mut our_con, mut ref_con) = (ours.connection(), reference.connection());
    let mut all = Vec::new();
    cook_on_both(&mut ref_con, &mut our_con, &catalogue(), &mut all);
    ok(&mut our_con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut our_con);
    cook_on_both(&mut ref_con, &mut our_con, &later(), &mut all);
    // A copy made after the rewrite: its data chunks reach the AOF as CF.LOADCHUNK commands,
    // which RedisBloom must take.
    for con in [&mut ref_con, &mut our_con] {
        let pairs = cf_scandump(con, "bucket4");
        cf_loadchunks(con, "copied", &pairs);
    }
    let copied = Held { key: "copied".into(), members: held(&mut all, "bucket4").members.clone() };
    all.push(copied);

    let by_scandump = Module::RedisBloom.start(&[]);
    let mut scandump_con = by_scandump.connection();
    let mut dumped = Vec::new();
    for held in &all {
        let pairs = cf_scandump(&mut our_con, &held.key);
        if pairs.is_empty() {
            assert_eq!(info_number(&mut ref_con, &held.key, "Number of items inserted"), 0, "{}", held.key);
            continue;
        }
        cf_loadchunks(&mut scandump_con, &held.key, &pairs);
        dumped.push(held.clone());
    }
    for held in &all {
        let payload = dump_payload(&mut our_con, &held.key);
        assert_eq!(module_type(&payload), ("MBbloomCF".to_string(), 4), "{}", held.key);
        assert!(payload == dump_payload(&mut ref_con, &held.key), "{}: DUMP payloads differ", held.key);
    }
    ok(&mut our_con, &["SAVE"]);
    let mut by_rdb = Module::RedisBloom.prepared(&[]);
    by_rdb.take_file(&ours, "dump.rdb");
    by_rdb.launch();
    let mut by_aof = Module::RedisBloom.prepared(&AOF);
    by_aof.take_file(&ours, "appendonlydir");
    by_aof.launch();
    for server in [&by_rdb, &by_aof] {
        let mut con = server.connection();
        assert_eq!(keys(&mut con), keys(&mut ref_con));
        for held in &all {
            assert_same_filter(&mut ref_con, &mut con, held);
        }
    }
    for held in &dumped {
        assert_same_filter(&mut ref_con, &mut scandump_con, held);
    }
}
