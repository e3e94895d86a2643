//! Every way Redis keeps or copies a cuckoo filter (DEBUG RELOAD, DUMP/RESTORE, an AOF rewrite,
//! an RDB, COPY) keeps it bit for bit, and DEBUG DIGEST-VALUE tells filters apart.

use super::catalogue::{catalogue, cook_all, Held, Recipe};
use super::{cf_info, cf_scandump, info_number, items, on_both, per_item, Module, AOF};
use crate::harness::*;
use redis::{Connection, Value};

/// What a filter is, as far as persistence must keep it.
#[derive(Debug, PartialEq)]
pub(super) struct Snapshot {
    pub(super) info: Value,
    pub(super) stream: Vec<(i64, Vec<u8>)>,
    pub(super) digest: String,
}

pub(super) fn snapshot(con: &mut Connection, key: &str) -> Snapshot {
    Snapshot { info: cf_info(con, key), stream: cf_scandump(con, key), digest: digest(con, key) }
}

pub(super) fn assert_kept(con: &mut Connection, all: &[Held], before: &[Snapshot], how: &str) {
    for (held, before) in all.iter().zip(before) {
        assert!(snapshot(con, &held.key) == *before, "{}: changed by {how}", held.key);
        let present = per_item(con, "CF.EXISTS", &held.key, &held.members);
        assert!(
            present.iter().all(|answer| *answer == Ok(Value::Int(1))),
            "{}: lost an item ({how})",
            held.key
        );
    }
}

/// DEBUG RELOAD, DUMP/RESTORE, an AOF rewrite and a restart on it, and SAVE and a server started
/// on that RDB keep each filter: its CF.INFO, its SCANDUMP bytes, its DEBUG DIGEST-VALUE
/// (RedisBloom's is one constant for every key, which holds trivially), empty filters included.
/// MEMORY USAGE counts at least CF.INFO's Size.
#[test]
fn every_persistence_path_keeps_each_filter() {
    on_both(|module| {
        let mut server = module.start(&AOF);
        let mut con = server.connection();
        let mut all = Vec::new();
        cook_all(&mut con, &catalogue(), &mut all);
        let before: Vec<Snapshot> = all.iter().map(|held| snapshot(&mut con, &held.key)).collect();
        for held in &all {
            let usage = int(&mut con, &["MEMORY", "USAGE", &held.key]);
            let size = info_number(&mut con, &held.key, "Size");
            assert!(usage >= size, "{}: MEMORY USAGE {usage} < Size {size}", held.key);
        }

        ok(&mut con, &["DEBUG", "RELOAD"]);
        assert_kept(&mut con, &all, &before, "DEBUG RELOAD");

        for (held, before) in all.iter().zip(&before) {
            let payload = dump_payload(&mut con, &held.key);
            let copy = format!("restored:{}", held.key);
            call_bytes(&mut con, &[b"RESTORE", copy.as_bytes(), b"0", &payload]).expect("RESTORE");
            assert!(snapshot(&mut con, &copy) == *before, "{}: changed by DUMP/RESTORE", held.key);
            ok(&mut con, &["DEL", &copy]);
        }

        drop(con);
        assert_kept_through_aof_and_rdb(module, &mut server, &all, &before);
    });
}

/// An AOF rewrite and a restart on it, then SAVE and a server started on that RDB, keep each
/// filter.
pub(super) fn assert_kept_through_aof_and_rdb(
    module: Module,
    server: &mut Server,
    all: &[Held],
    before: &[Snapshot],
) {
    let mut con = server.connection();
    ok(&mut con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut con);
    drop(con);
    server.restart();
    let mut con = server.connection();
    assert_kept(&mut con, all, before, "an AOF rewrite and a restart");
    ok(&mut con, &["SAVE"]);
    let mut from_rdb = module.prepared(&[]);
    from_rdb.take_file(server, "dump.rdb");
    from_rdb.launch();
    assert_kept(&mut from_rdb.connection(), all, before, "SAVE and a start on the RDB");
}

/// DEBUG DIGEST-VALUE tells CF filters apart (RedisBloom has no digest callback: one constant
/// for every key), and COPY works (RedisBloom: `ERR not supported for this module key`) and
/// makes an equal, independent filter.
#[test]
fn digests_tell_filters_apart_and_copy_makes_an_equal_filter() {
    let server = Module::Redbloom.start(&[]);
    let mut con = server.connection();
    let mut all = Vec::new();
    cook_all(
        &mut con,
        &[
            Recipe::new("a").reserve(&["100"]).add(items(&["x"])),
            Recipe::new("b").reserve(&["100"]).add(items(&["y"])),
            Recipe::new("twice").reserve(&["100"]).add(items(&["x", "x"])),
            Recipe::new("empty").reserve(&["100"]),
            Recipe::new("empty-other").reserve(&["100", "BUCKETSIZE", "4"]),
            Recipe::new("emptied").reserve(&["100"]).add(items(&["x"])).delete(items(&["x"])),
            Recipe::new("grown").reserve(&["8", "EXPANSION", "2"]).insert(numbered("g", 200)),
        ],
        &mut all,
    );
    let digests: Vec<String> = all.iter().map(|held| digest(&mut con, &held.key)).collect();
    for (n, first) in digests.iter().enumerate() {
        for (m, second) in digests.iter().enumerate().skip(n + 1) {
            assert_ne!(first, second, "{} and {} have one digest", all[n].key, all[m].key);
        }
    }

    for held in &all {
        let copy = format!("copy:{}", held.key);
        assert_eq!(int(&mut con, &["COPY", &held.key, &copy]), 1, "COPY {}", held.key);
        assert_eq!(snapshot(&mut con, &copy), snapshot(&mut con, &held.key), "COPY {}", held.key);
    }
    // The copy is a filter of its own.
    let before = snapshot(&mut con, "grown");
    ok(&mut con, &["CF.ADD", "copy:grown", "more"]);
    ok(&mut con, &["CF.DEL", "copy:grown", "g1"]);
    assert_eq!(snapshot(&mut con, "grown"), before);
    assert_ne!(digest(&mut con, "copy:grown"), before.digest);
    assert_eq!(int(&mut con, &["COPY", "a", "b"]), 0, "COPY does not overwrite without REPLACE");
    assert_eq!(int(&mut con, &["COPY", "a", "b", "REPLACE"]), 1);
    assert_eq!(digest(&mut con, "b"), digests[0]);
}
