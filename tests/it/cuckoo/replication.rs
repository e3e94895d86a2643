//! Replication of cuckoo filters: a replica gets every CF write and no refused one, the data
//! CF.LOADCHUNK loaded, and only the items its master's memory cap let in.

use super::catalogue::{cook_all, Recipe};
use super::persistence::snapshot;
use super::{cf_info, cf_loadchunks, cf_scandump, info_number, items, on_both, Module, MAX_EXPANSIONS, WIDE};
use crate::harness::*;
use redis::Value;

/// A master whose replicas sync at once (no diskless delay) and whose replication offset moves
/// only for commands (no pings), so that "not propagated" can be read off the offset.
fn master_config() -> [&'static str; 4] {
    ["--repl-diskless-sync-delay", "0", "--repl-ping-replica-period", "3600"]
}

pub(super) fn replica_of(module: Module, master: &Server) -> Server {
    Server::start_module(module.path(), &[], &["--replicaof", "127.0.0.1", &master.port.to_string()])
}

/// Every kind of CF write: creating adds, ADDNX of present and absent items, INSERT and
/// INSERTNX with `-1` items, deletes with automatic compactions, CF.COMPACT, a filter at the
/// sub-filter limit, a DEL of an absent item.
fn replicated_writes(prefix: &'static str) -> Vec<Recipe> {
    let key = |name: &str| -> &'static str { Box::leak(format!("{prefix}{name}").into_boxed_str()) };
    let (full, grow, multi, limit) = (key("full"), key("grow"), key("multi"), key("limit"));
    let (inserted, insertnx) = (key("inserted"), key("insertnx"));
    vec![
        Recipe::new(key("add")).add(items(&["x", "x", "y"])).add_nx(items(&["x", "z"])),
        // The probe's full filter: "a" has a single bucket there.
        Recipe::new(full)
            .reserve(&["4", "BUCKETSIZE", "1", "EXPANSION", "0"])
            .command(&["CF.ADD", full, "a"])
            .command(&["CF.INSERT", full, "ITEMS", "a", "b"])
            .command(&["CF.INSERTNX", full, "ITEMS", "a", "c"])
            .command(&["CF.ADDNX", full, "a"])
            .command(&["CF.ADDNX", full, "d"])
            .command(&["CF.INSERTNX", full, "ITEMS", "d"]),
        Recipe::new(inserted).command(&["CF.INSERT", inserted, "CAPACITY", "100", "ITEMS", "p", "q"]),
        Recipe::new(insertnx).command(&["CF.INSERTNX", insertnx, "ITEMS", "p", "p", "r"]),
        // 40 items in 10 sub-filters; deleting 6 compacts once (the contract's example).
        Recipe::new(grow).reserve(&["4", "EXPANSION", "1"]).add(numbered("i", 40)).delete(numbered("i", 6)),
        Recipe::new(grow).command(&["CF.COMPACT", grow]).command(&["CF.DEL", grow, "absent"]),
        Recipe::new(multi)
            .reserve(&["64", "BUCKETSIZE", "4", "EXPANSION", "2", "MAXITERATIONS", "7"])
            .insert(numbered("m", 500))
            .delete(numbered("m", 150)),
        Recipe::new(multi).command(&["CF.COMPACT", multi]),
        // The item "same" has a single bucket in a 2-bucket sub-filter: 63 adds make 32
        // sub-filters, the 64th is refused.
        Recipe::new(limit).reserve(&["4", "EXPANSION", "1"]).add(vec![b"same".to_vec(); 64]),
    ]
}

/// A replica, synced before and after more writes, ends with its master's filters: same
/// CF.INFO, SCANDUMP and digest. Commands refused as a whole (`Filter is full`, `Maximum
/// expansions reached`, NOCREATE on a missing key, RESERVE of an existing key, DEL on a missing
/// key) send nothing: the master's replication offset does not move.
#[test]
fn a_replica_gets_every_cf_write_and_no_refused_one() {
    on_both(|module| {
        let master = module.start(&master_config());
        let mut con = master.connection();
        let mut all = Vec::new();
        cook_all(&mut con, &replicated_writes("before:"), &mut all);
        let replica = replica_of(module, &master);
        let mut on_replica = replica.connection();
        wait_in_sync(&mut con, &mut on_replica);
        cook_all(&mut con, &replicated_writes("after:"), &mut all);
        assert_eq!(info_number(&mut con, "after:limit", "Number of filters"), 32);

        let before = master_offset(&mut con);
        assert_eq!(err(&mut con, &["CF.ADD", "after:full", "a"]), "Filter is full");
        assert_eq!(err(&mut con, &["CF.ADDNX", "after:full", "d"]), "Filter is full");
        assert_eq!(err(&mut con, &["CF.ADD", "after:limit", "other"]), MAX_EXPANSIONS);
        assert_eq!(err(&mut con, &["CF.INSERT", "after:limit", "ITEMS", "u", "v"]), MAX_EXPANSIONS);
        assert_eq!(err(&mut con, &["CF.INSERT", "missing", "NOCREATE", "ITEMS", "a"]), "ERR not found");
        assert_eq!(err(&mut con, &["CF.RESERVE", "after:grow", "10"]), "ERR item exists");
        assert_eq!(err(&mut con, &["CF.DEL", "missing", "a"]), "Not found");
        assert_eq!(master_offset(&mut con), before, "a refused command was replicated");
        ok(&mut con, &["CF.ADD", "after:add", "w"]);
        assert!(master_offset(&mut con) > before, "the offset shows what is replicated");

        wait_in_sync(&mut con, &mut on_replica);
        assert_eq!(keys(&mut on_replica), keys(&mut con));
        for held in &all {
            let key = held.key.as_str();
            assert_eq!(snapshot(&mut on_replica, key), snapshot(&mut con, key), "{key} on the replica");
        }
        assert_eq!(ok(&mut on_replica, &["DEBUG", "DIGEST"]), ok(&mut con, &["DEBUG", "DIGEST"]));

        // CF.COMPACT moves items. RedisBloom flags it `readonly`, so a replica runs it for a
        // client and drifts from its master; this module flags it `write` (a deliberate
        // difference), so a read-only replica refuses it.
        let compact = call(&mut on_replica, &["CF.COMPACT", "after:multi"]);
        match module {
            Module::RedisBloom => assert_eq!(compact, Ok(Value::Okay)),
            Module::Redbloom => {
                assert!(compact.as_ref().is_err_and(|error| error.starts_with("READONLY")), "{compact:?}");
            }
        }
    });
}

/// This module replicates CF.LOADCHUNK's data chunks, so a replica (and the AOF) gets the
/// filter a SCANDUMP/LOADCHUNK copy made on its master. RedisBloom sends only the header: its
/// replica ends with a filter of zeroes, which the RedisBloom half of this test shows.
#[test]
fn loadchunk_data_reaches_the_replica_here_only() {
    for module in [Module::RedisBloom, Module::Redbloom] {
        let master = module.start(&master_config());
        let replica = replica_of(module, &master);
        let (mut con, mut on_replica) = (master.connection(), replica.connection());
        wait_in_sync(&mut con, &mut on_replica);
        let mut all = Vec::new();
        cook_all(
            &mut con,
            &[Recipe::new("source").reserve(&["8", "EXPANSION", "2"]).insert(numbered("s", 300))],
            &mut all,
        );
        cook_all(
            &mut con,
            &[Recipe::new("large").reserve(&["33554432"]).insert(numbered("g", 100))],
            &mut all,
        );
        for key in ["source", "large"] {
            let pairs = cf_scandump(&mut con, key);
            assert!(pairs.len() >= 3, "{key}: a header and several chunks");
            cf_loadchunks(&mut con, &format!("copy:{key}"), &pairs);
        }
        wait_in_sync(&mut con, &mut on_replica);
        for key in ["copy:source", "copy:large"] {
            let (master_side, replica_side) = (snapshot(&mut con, key), snapshot(&mut on_replica, key));
            assert_eq!(replica_side.info, master_side.info, "{module:?} {key}: the header is replicated");
            match module {
                Module::Redbloom => assert!(replica_side == master_side, "{key}: the replica lacks the data"),
                Module::RedisBloom => {
                    let data = replica_side.stream[1..].iter().flat_map(|(_, data)| data.iter());
                    assert!(data.copied().all(|byte| byte == 0), "RedisBloom's replica has no data");
                }
            }
        }
    }
}

/// A CF.INSERT whose items found no room under the master's memory cap is replicated as the
/// items it added, not as sent: the replica (and an AOF replay) has no cap, would find room,
/// and would end with another filter.
#[test]
fn items_refused_by_the_memory_cap_do_not_reach_the_replica() {
    let master = Server::start_with(&["max-filter-bytes", "4096"], &master_config());
    let replica = Server::start_with(&[], &["--replicaof", "127.0.0.1", &master.port.to_string()]);
    let (mut con, mut on_replica) = (master.connection(), replica.connection());
    wait_in_sync(&mut con, &mut on_replica);
    ok(&mut con, &["CF.RESERVE", "capped", "4", "BUCKETSIZE", "1", "EXPANSION", "2"]);
    let mut answers = Vec::new();
    for round in 0..8 {
        let items: Vec<String> =
            (0..10).map(|n| if n % 2 == 0 { "same".to_string() } else { format!("i{round}-{n}") }).collect();
        let mut args = vec!["CF.INSERT", "capped", "ITEMS"];
        args.extend(items.iter().map(String::as_str));
        let Value::Array(replies) = ok(&mut con, &args) else { panic!("CF.INSERT") };
        answers.extend(replies);
    }
    assert!(answers.contains(&Value::Int(-1)), "the cap refused nothing: {answers:?}");
    assert!(answers.contains(&Value::Int(1)));
    // Created by CF.INSERT under the cap too.
    let Value::Array(created) =
        ok(&mut con, &["CF.INSERT", "created", "CAPACITY", "4", "ITEMS", "x", "x", "x", "x", "x", "x", "x"])
    else {
        panic!()
    };
    assert!(created.contains(&Value::Int(1)));
    // Created with ERROR, the replica must build the same wide filter from what it is sent.
    let mut args = vec!["CF.INSERT", "wide", "ERROR", "1e-6", "CAPACITY", "4", "ITEMS"];
    args.extend(["x"; 200]);
    let Value::Array(wide) = ok(&mut con, &args) else { panic!() };
    assert!(wide.contains(&Value::Int(1)) && wide.contains(&Value::Int(-1)), "{wide:?}");
    wait_in_sync(&mut con, &mut on_replica);
    for key in ["capped", "created", "wide"] {
        assert_eq!(digest(&mut on_replica, key), digest(&mut con, key), "{key}");
        assert_eq!(cf_info(&mut on_replica, key), cf_info(&mut con, key), "{key}");
    }
    assert_eq!(ok(&mut on_replica, &["TYPE", "wide"]), Value::SimpleString(WIDE.into()));
}

/// Filters that commands create from the server's defaults reach a replica with other
/// defaults unchanged: a new filter is replicated as its header, and a CF.INSERT as the items
/// it added, without the options the replica would check against its own settings.
#[test]
fn filters_created_from_the_masters_defaults_reach_a_replica_with_others() {
    let defaults = [
        "--bf.cf-bucket-size",
        "1",
        "--bf.cf-initial-size",
        "64",
        "--bf.cf-max-iterations",
        "7",
        "--bf.cf-expansion-factor",
        "2",
        "--bf.initial-size",
        "50",
        "--bf.error-rate",
        "0.001",
    ];
    let master = Server::start_with(&[], &[&master_config()[..], &defaults[..]].concat());
    let replica = replica_of(Module::Redbloom, &master);
    let (mut con, mut on_replica) = (master.connection(), replica.connection());
    wait_in_sync(&mut con, &mut on_replica);
    for item in numbered("a", 200) {
        call_bytes(&mut con, &[b"CF.ADD", b"added", &item]).expect("CF.ADD");
    }
    ok(&mut con, &["CF.ADDNX", "added-nx", "x"]);
    ok(&mut con, &["CF.RESERVE", "reserved", "40"]);
    // Two slots of one bucket each: CAPACITY 2 passes the master's bucket size of 1 only.
    ok(&mut con, &["CF.INSERT", "inserted", "CAPACITY", "2", "ITEMS", "p", "q", "r"]);
    ok(&mut con, &["CF.INSERT", "inserted", "CAPACITY", "2", "ITEMS", "s"]);
    ok(&mut con, &["CF.INSERTNX", "inserted-nx", "ITEMS", "p", "p", "q"]);
    ok(&mut con, &["BF.ADD", "bloom", "x"]);
    wait_in_sync(&mut con, &mut on_replica);
    assert_eq!(info_number(&mut con, "added", "Bucket size"), 1);
    assert_eq!(info_number(&mut on_replica, "added", "Bucket size"), 1);
    let keys_here = keys(&mut con);
    assert_eq!(keys(&mut on_replica), keys_here);
    for key in &keys_here {
        assert_eq!(digest(&mut on_replica, key), digest(&mut con, key), "{key} on the replica");
    }
}
