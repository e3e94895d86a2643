//! Cuckoo filters (CF.*, RedisBloom's `MBbloomCF` type) as black boxes, against the contract in
//! docs/cf-commands.md: the contract probe; filters moved from the real RedisBloom 2.8.2 to this
//! module (RDB, AOF, SCANDUMP/LOADCHUNK) and back (SCANDUMP/LOADCHUNK, AOF, RDB); this module's own
//! persistence and replication; hostile input; keyspace notifications.
//!
//! Where the contract says both modules answer alike, a test runs its body against RedisBloom
//! first and then against this module ([`on_both`]), so that every expectation is checked
//! against the reference as well. Where this module deliberately differs (RedisBloom's crashes,
//! DEBUG DIGEST-VALUE, COPY, replicated LOADCHUNK data, CF.COMPACT on a replica, keyspace
//! events), the test checks this module only, and says so.

mod common;

use common::*;
use redis::{Connection, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};

// ------------------------------------------------------------------------------------------
// The two modules

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Module {
    /// The real RedisBloom 2.8.2, the reference.
    RedisBloom,
    /// This module.
    Redbloom,
}

impl Module {
    fn path(self) -> PathBuf {
        match self {
            Module::RedisBloom => redisbloom_path(),
            Module::Redbloom => module_path(),
        }
    }

    fn start(self, config: &[&str]) -> Server {
        Server::start_module(self.path(), &[], config)
    }

    /// A server not started yet, so that another server's data files can be put in first.
    fn prepared(self, config: &[&str]) -> Server {
        Server::prepared(self.path(), &[], config)
    }
}

/// Runs a test body against RedisBloom, then against this module: the contract holds for both.
fn on_both(test: impl Fn(Module)) {
    for module in [Module::RedisBloom, Module::Redbloom] {
        eprintln!("== against {module:?}");
        test(module);
        eprintln!("== {module:?}: passed");
    }
}

/// An AOF without an RDB preamble: a rewrite then holds each module's own rewrite output
/// (CF.LOADCHUNK commands), which is what the other module has to replay. Every write reaches
/// the file before its reply, since the files are copied while their server runs.
const AOF: [&str; 6] = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"];

const NO_MEMORY: &str = "ERR Insufficient memory to create filter";
const MAX_EXPANSIONS: &str = "Maximum expansions reached";
const CANNOT_CREATE: &str = "Couldn't create filter!";
const FULL: &str = "Filter is full";
/// The type of filters whose fingerprints are wider than RedisBloom's 8 bits.
const WIDE: &str = "rbCF-wide";

// ------------------------------------------------------------------------------------------
// Small helpers

fn numbered(prefix: &str, count: usize) -> Vec<Vec<u8>> {
    (0..count).map(|n| format!("{prefix}{n}").into_bytes()).collect()
}

fn items(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|word| word.as_bytes().to_vec()).collect()
}

/// Bytes that are the same on every run (splitmix64 of `seed`), for the catalogue's binary
/// items; the hostile tests use the harness's printed-seed generator instead.
fn fixed_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (0..len)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) as u8
        })
        .collect()
}

/// A reply with a server error as its text, the way the harness's `call` answers.
fn plain(value: Value) -> Result<Value, String> {
    match value {
        Value::ServerError(error) => Err(server_error_text(&error)),
        other => Ok(other),
    }
}

/// `command key item` for every item, pipelined; answers each reply.
fn per_item(con: &mut Connection, command: &str, key: &str, items: &[Vec<u8>]) -> Vec<Result<Value, String>> {
    let mut replies = Vec::new();
    for batch in items.chunks(1000) {
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        for item in batch {
            pipe.cmd(command).arg(key).arg(item.as_slice());
        }
        let values: Vec<Value> = pipe.query(con).unwrap_or_else(|error| panic!("{command} {key}: {error}"));
        replies.extend(values.into_iter().map(plain));
    }
    replies
}

/// CF.MEXISTS of many items, 1000 a call.
fn mexists(con: &mut Connection, key: &str, items: &[Vec<u8>]) -> Vec<Value> {
    let mut replies = Vec::new();
    for batch in items.chunks(1000) {
        let mut args: Vec<&[u8]> = vec![b"CF.MEXISTS", key.as_bytes()];
        args.extend(batch.iter().map(Vec::as_slice));
        match call_bytes(con, &args) {
            Ok(Value::Array(values)) => replies.extend(values),
            other => panic!("CF.MEXISTS {key}: {other:?}"),
        }
    }
    replies
}

/// Panics at the first difference, naming it, rather than printing two long lists.
fn assert_same_list<T: PartialEq + std::fmt::Debug>(tested: &[T], reference: &[T], what: &str) {
    if let Some(at) = tested.iter().zip(reference).position(|(a, b)| a != b) {
        panic!("{what}: reply {at} differs: {:?}, RedisBloom {:?}", tested[at], reference[at]);
    }
    assert_eq!(tested.len(), reference.len(), "{what}: reply counts");
}

fn info_text(con: &mut Connection, section: &str) -> String {
    match ok(con, &["INFO", section]) {
        Value::BulkString(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Value::VerbatimString { text, .. } => text,
        other => panic!("INFO {section}: {other:?}"),
    }
}

fn wait_for_rewrite(con: &mut Connection) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let info = info_text(con, "persistence");
        if info.contains("aof_rewrite_in_progress:0") && info.contains("aof_rewrite_scheduled:0") {
            return;
        }
        assert!(Instant::now() < deadline, "the AOF rewrite did not finish");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A master whose replicas sync at once (no diskless delay) and whose replication offset moves
/// only for commands (no pings), so that "not propagated" can be read off the offset.
fn master_config() -> [&'static str; 4] {
    ["--repl-diskless-sync-delay", "0", "--repl-ping-replica-period", "3600"]
}

fn replica_of(module: Module, master: &Server) -> Server {
    Server::start_module(module.path(), &[], &["--replicaof", "127.0.0.1", &master.port.to_string()])
}

fn keys(con: &mut Connection) -> Vec<String> {
    let Value::Array(keys) = ok(con, &["KEYS", "*"]) else { panic!("KEYS") };
    let mut keys: Vec<String> = keys.into_iter().map(|key| String::from_utf8(bulk(key)).unwrap()).collect();
    keys.sort();
    keys
}

fn assert_alive(con: &mut Connection) {
    assert_eq!(call(con, &["PING"]), Ok(Value::SimpleString("PONG".into())), "the server died");
}

// ------------------------------------------------------------------------------------------
// CF helpers

fn cf_info(con: &mut Connection, key: &str) -> Value {
    ok(con, &["CF.INFO", key])
}

/// One CF.INFO field, by its label (`"Number of filters"`).
fn info_number(con: &mut Connection, key: &str, label: &str) -> i64 {
    let Value::Array(fields) = cf_info(con, key) else { panic!("CF.INFO {key}: not an array") };
    fields
        .chunks(2)
        .find_map(|pair| match (&pair[0], &pair[1]) {
            (Value::SimpleString(name), Value::Int(value)) if name == label => Some(*value),
            _ => None,
        })
        .unwrap_or_else(|| panic!("CF.INFO {key} has no {label}"))
}

/// A filter's CF.SCANDUMP stream: the (iterator, data) pairs, header first, before the final
/// `[0, nil]`; empty for a filter without items (RedisBloom then answers `[0, nil]` at once).
fn cf_scandump(con: &mut Connection, key: &str) -> Vec<(i64, Vec<u8>)> {
    let mut pairs = Vec::new();
    let mut iterator = 0i64;
    loop {
        let reply = ok(con, &["CF.SCANDUMP", key, &iterator.to_string()]);
        let Value::Array(parts) = reply else { panic!("CF.SCANDUMP {key} answered {reply:?}") };
        match <[Value; 2]>::try_from(parts) {
            Ok([Value::Int(0), Value::Nil]) => return pairs,
            Ok([Value::Int(next), Value::BulkString(data)]) if next > iterator => {
                pairs.push((next, data));
                iterator = next;
            }
            other => panic!("CF.SCANDUMP {key} {iterator}: {other:?}"),
        }
    }
}

fn loadchunk(con: &mut Connection, key: &str, iterator: i64, data: &[u8]) -> Result<Value, String> {
    call_bytes(con, &[b"CF.LOADCHUNK", key.as_bytes(), iterator.to_string().as_bytes(), data])
}

fn cf_loadchunks(con: &mut Connection, key: &str, pairs: &[(i64, Vec<u8>)]) {
    for (iterator, data) in pairs {
        loadchunk(con, key, *iterator, data)
            .unwrap_or_else(|error| panic!("CF.LOADCHUNK {key} {iterator}: {error}"));
    }
}

/// A SCANDUMP header (38 bytes, packed little-endian): items, buckets of sub-filter 0, deletes,
/// sub-filters, bucket size, max iterations, expansion.
fn header(
    items: u64,
    buckets: u64,
    deletes: u64,
    filters: u64,
    bucket: u16,
    iterations: u16,
    expansion: u16,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(38);
    for value in [items, buckets, deletes, filters] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    for value in [bucket, iterations, expansion] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    out
}

/// The type name and encoding version a DUMP payload carries (the 64-bit module id after the
/// RDB_TYPE_MODULE_2 byte and 0x81: nine 6-bit characters, then 10 bits of version).
fn module_type(payload: &[u8]) -> (String, u64) {
    assert_eq!(&payload[..2], &[7, 0x81], "a module value's payload");
    let id = u64::from_be_bytes(payload[2..10].try_into().unwrap());
    let chars = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let name = (0..9).map(|n| chars[((id >> (10 + 6 * (8 - n))) & 63) as usize] as char).collect();
    (name, id & 1023)
}

// ------------------------------------------------------------------------------------------
// The catalogue: filters of every shape, made by commands

/// How one filter is made: commands run as they are, then items inserted (CF.INSERT, 100 a
/// call), added one by one (CF.ADD: repeats mean copies), added if absent (CF.ADDNX), and
/// deleted (CF.DEL, only of items held, so that no other item loses its fingerprint).
#[derive(Clone, Default)]
struct Recipe {
    key: &'static str,
    commands: Vec<Vec<String>>,
    inserted: Vec<Vec<u8>>,
    added: Vec<Vec<u8>>,
    added_nx: Vec<Vec<u8>>,
    deleted: Vec<Vec<u8>>,
}

impl Recipe {
    fn new(key: &'static str) -> Recipe {
        Recipe { key, ..Recipe::default() }
    }

    fn reserve(self, args: &[&str]) -> Recipe {
        let mut command = vec!["CF.RESERVE", self.key];
        command.extend(args);
        self.command(&command)
    }

    fn command(mut self, args: &[&str]) -> Recipe {
        self.commands.push(args.iter().map(|arg| arg.to_string()).collect());
        self
    }

    fn insert(mut self, items: Vec<Vec<u8>>) -> Recipe {
        self.inserted.extend(items);
        self
    }

    fn add(mut self, items: Vec<Vec<u8>>) -> Recipe {
        self.added.extend(items);
        self
    }

    fn add_nx(mut self, items: Vec<Vec<u8>>) -> Recipe {
        self.added_nx.extend(items);
        self
    }

    fn delete(mut self, items: Vec<Vec<u8>>) -> Recipe {
        self.deleted.extend(items);
        self
    }
}

/// A filter as it stands on a server: its key and what it holds, a copy per successful add
/// less the copies deleted.
#[derive(Clone, Debug)]
struct Held {
    key: String,
    members: Vec<Vec<u8>>,
}

fn held<'a>(all: &'a mut Vec<Held>, key: &str) -> &'a mut Held {
    if let Some(at) = all.iter().position(|held| held.key == key) {
        return &mut all[at];
    }
    all.push(Held { key: key.to_string(), members: Vec::new() });
    all.last_mut().unwrap()
}

/// Runs `recipe` on `con`, keeping `all` up to date; answers every reply in order, so that two
/// servers given the same recipe can be compared reply by reply.
fn cook(con: &mut Connection, recipe: &Recipe, all: &mut Vec<Held>) -> Vec<Result<Value, String>> {
    let key = recipe.key;
    let mut replies = Vec::new();
    for command in &recipe.commands {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        replies.push(call(con, &args));
    }
    let members = &mut held(all, key).members;
    for batch in recipe.inserted.chunks(100) {
        let mut args: Vec<&[u8]> = vec![b"CF.INSERT", key.as_bytes(), b"ITEMS"];
        args.extend(batch.iter().map(Vec::as_slice));
        let reply = call_bytes(con, &args);
        if let Ok(Value::Array(answers)) = &reply {
            assert_eq!(answers.len(), batch.len(), "CF.INSERT {key}");
            for (item, answer) in batch.iter().zip(answers) {
                match answer {
                    Value::Int(1) => members.push(item.clone()),
                    Value::Int(-1) => {}
                    other => panic!("CF.INSERT {key}: {other:?}"),
                }
            }
        }
        replies.push(reply);
    }
    for (command, list) in [("CF.ADD", &recipe.added), ("CF.ADDNX", &recipe.added_nx)] {
        for item in list {
            let reply = call_bytes(con, &[command.as_bytes(), key.as_bytes(), item]);
            if reply == Ok(Value::Int(1)) {
                members.push(item.clone());
            }
            replies.push(reply);
        }
    }
    for item in &recipe.deleted {
        let Some(at) = members.iter().position(|member| member == item) else { continue };
        let reply = call_bytes(con, &[b"CF.DEL", key.as_bytes(), item]);
        if reply == Ok(Value::Int(1)) {
            members.swap_remove(at);
        }
        replies.push(reply);
    }
    replies
}

fn cook_all(con: &mut Connection, recipes: &[Recipe], all: &mut Vec<Held>) {
    for recipe in recipes {
        cook(con, recipe, all);
    }
}

/// The same recipes on RedisBloom and on this module must get the same replies.
fn cook_on_both(
    reference: &mut Connection,
    tested: &mut Connection,
    recipes: &[Recipe],
    all: &mut Vec<Held>,
) {
    for recipe in recipes {
        let mut theirs = all.clone();
        let expected = cook(reference, recipe, &mut theirs);
        let got = cook(tested, recipe, all);
        assert_same_list(&got, &expected, &format!("making {}", recipe.key));
    }
}

/// Bucket sizes 1, 2 and 4; MAXITERATIONS 3 to 50; EXPANSION 0, 1, 2 and 4; one to twenty
/// sub-filters; deletes with automatic compaction; an empty filter and one emptied by deletes;
/// binary, empty and long items; items added twice and five times; a filter made by
/// CF.INSERTNX; one of 32 MiB (two 16 MiB SCANDUMP chunks).
fn catalogue() -> Vec<Recipe> {
    let mut binary: Vec<Vec<u8>> = (0..400).map(|n| fixed_bytes(n, (n * 7 % 65) as usize)).collect();
    binary.extend((0..4).map(|n| fixed_bytes(1000 + n, 5000 * (n as usize + 1))));
    let mut twice = numbered("t", 60);
    twice.extend(numbered("t", 60));
    twice.extend(vec![b"five".to_vec(); 5]);
    let every_third: Vec<Vec<u8>> = numbered("x", 400).into_iter().step_by(3).collect();
    vec![
        // Made by CF.ADD's defaults: capacity 1024, bucket size 2.
        Recipe::new("defaults").add(items(&["first"])).insert(numbered("d", 600)),
        Recipe::new("bucket1")
            .reserve(&["500", "BUCKETSIZE", "1", "MAXITERATIONS", "50"])
            .insert(numbered("b", 1200)),
        Recipe::new("bucket4")
            .reserve(&["100", "BUCKETSIZE", "4", "MAXITERATIONS", "5", "EXPANSION", "2"])
            .insert(numbered("q", 2000)),
        // Never grows: some inserts answer -1, some adds `Filter is full`.
        Recipe::new("full")
            .reserve(&["256", "EXPANSION", "0"])
            .insert(numbered("f", 400))
            .add(numbered("f", 400)),
        // Eight slots a sub-filter: many sub-filters, each of the first one's size.
        Recipe::new("chain").reserve(&["8", "MAXITERATIONS", "3"]).insert(numbered("c", 100)),
        Recipe::new("deletes")
            .reserve(&["64", "EXPANSION", "2"])
            .insert(numbered("x", 400))
            .delete(every_third),
        Recipe::new("empty").reserve(&["100", "BUCKETSIZE", "3", "MAXITERATIONS", "9", "EXPANSION", "0"]),
        Recipe::new("emptied").reserve(&["16"]).insert(numbered("e", 40)).delete(numbered("e", 40)),
        Recipe::new("binary").reserve(&["300", "EXPANSION", "4"]).insert(binary),
        Recipe::new("twice").reserve(&["200"]).add(twice).add_nx(items(&["t1", "t2", "new"])),
        Recipe::new("inserted")
            .command(&["CF.INSERTNX", "inserted", "CAPACITY", "50", "ITEMS", "a", "b", "a", "c"])
            .insert(numbered("n", 150)),
        Recipe::new("large").reserve(&["33554432"]).insert(numbered("g", 3000)),
    ]
}

/// Writes after an AOF rewrite (they reach the AOF as commands): growth, deletes, a
/// compaction, new filters, one of them empty.
fn later() -> Vec<Recipe> {
    vec![
        Recipe::new("bucket1").insert(numbered("b-later", 300)),
        Recipe::new("bucket4").delete(numbered("q", 300)),
        Recipe::new("deletes").command(&["CF.COMPACT", "deletes"]),
        Recipe::new("twice").delete(numbered("t", 30)).add(items(&["five"])),
        Recipe::new("late").reserve(&["50", "BUCKETSIZE", "1", "EXPANSION", "2"]).insert(numbered("l", 200)),
        Recipe::new("late-empty").reserve(&["10"]),
        Recipe::new("late-default").add(items(&["only"])),
    ]
}

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

// ------------------------------------------------------------------------------------------
// 1. The contract probe

/// scripts/probe-cf.py re-checks about 300 observations of RedisBloom 2.8.2 (replies, errors,
/// sizes, the hash and eviction model, SCANDUMP bytes, DUMP layout, what reaches the AOF). It
/// must find no difference with RedisBloom itself on this server (else the probe, not the
/// module, is off), and none with this module once told of the deliberate differences
/// (`--redbloom`: registration, CF.COMPACT flagged write, COPY and digests, LOADCHUNK data in the
/// AOF, headers RedisBloom could not have written).
#[test]
fn the_probe_finds_this_module_answering_as_redisbloom() {
    let server = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_string());
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/probe-cf.py");
    for (module, flags) in [(Module::RedisBloom, &[][..]), (Module::Redbloom, &["--redbloom"][..])] {
        let output = std::process::Command::new("python3")
            .arg(&script)
            .arg("--module")
            .arg(module.path())
            .args(["--server", &server])
            .args(flags)
            .output()
            .expect("python3 runs scripts/probe-cf.py");
        assert!(
            output.status.success(),
            "the probe found differences from RedisBloom 2.8.2 in {module:?}:\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

// ------------------------------------------------------------------------------------------
// 2. RedisBloom → this module

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

// ------------------------------------------------------------------------------------------
// 3. This module → RedisBloom

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

// ------------------------------------------------------------------------------------------
// 4. Persistence on one module

/// What a filter is, as far as persistence must keep it.
#[derive(Debug, PartialEq)]
struct Snapshot {
    info: Value,
    stream: Vec<(i64, Vec<u8>)>,
    digest: String,
}

fn snapshot(con: &mut Connection, key: &str) -> Snapshot {
    Snapshot { info: cf_info(con, key), stream: cf_scandump(con, key), digest: digest(con, key) }
}

fn assert_kept(con: &mut Connection, all: &[Held], before: &[Snapshot], how: &str) {
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
fn assert_kept_through_aof_and_rdb(module: Module, server: &mut Server, all: &[Held], before: &[Snapshot]) {
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

// ------------------------------------------------------------------------------------------
// 5. Replication

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
                assert!(compact.as_ref().is_err_and(|error| error.starts_with("READONLY")), "{compact:?}")
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

// ------------------------------------------------------------------------------------------
// 6. This module's deliberate differences: no crash on RedisBloom's hazards, digests, COPY

/// Each of RedisBloom 2.8.2's crashes (the contract's "Hazards") answers an error here, and
/// the server lives on.
#[test]
fn redisbloom_hazards_answer_errors_here() {
    let server = Module::Redbloom.start(&[]);
    let mut con = server.connection();
    ok(&mut con, &["SET", "bystander", "untouched"]);
    let refused = |con: &mut Connection, args: &[&str], expected: &str| {
        assert_eq!(err(con, args), expected, "{args:?}");
        assert_alive(con);
        assert_eq!(int(con, &["EXISTS", args[1]]), 0, "{args:?} left a key");
    };
    // 1. Bucket arrays that cannot be had: over 2^56 buckets, over the memory, over the cap.
    refused(&mut con, &["CF.RESERVE", "k", "72057594037927936"], NO_MEMORY);
    refused(&mut con, &["CF.RESERVE", "k", "9223372036854775807"], NO_MEMORY);
    refused(&mut con, &["CF.RESERVE", "k", "8589934592"], NO_MEMORY); // 8 GiB > the 4 GiB default cap
    refused(&mut con, &["CF.INSERT", "k", "CAPACITY", "72057594037927936", "ITEMS", "a"], NO_MEMORY);
    ok(&mut con, &["CONFIG", "SET", "bf.max-filter-bytes", "1000000"]);
    refused(&mut con, &["CF.RESERVE", "k", "2000000"], NO_MEMORY);
    refused(&mut con, &["CF.INSERT", "k", "CAPACITY", "2000000", "ITEMS", "a"], NO_MEMORY);
    ok(&mut con, &["CF.RESERVE", "under-cap", "500000"]);
    ok(&mut con, &["CONFIG", "SET", "bf.max-filter-bytes", "4294967296"]);

    // 2. An option word as the last argument: its value is missing, not read past the end.
    for option in ["BUCKETSIZE", "MAXITERATIONS", "EXPANSION"] {
        refused(&mut con, &["CF.RESERVE", "k", "10", "x", option], &format!("Couldn't parse {option}"));
    }

    // 4 and 5. LOADCHUNK headers for empty sub-filters or terabytes.
    for (what, bad) in [
        ("expansion 0, two sub-filters", header(0, 4, 0, 2, 2, 20, 0)),
        ("expansion 0, three sub-filters", header(5, 4, 0, 3, 2, 20, 0)),
        ("2^40 buckets", header(1, 1 << 40, 0, 1, 2, 20, 1)),
        ("2^30 buckets of 255", header(1, 1 << 30, 0, 1, 255, 20, 1)),
    ] {
        let reply = call_bytes(&mut con, &[b"CF.LOADCHUNK", b"k", b"1", &bad]);
        assert_eq!(reply, Err(CANNOT_CREATE.to_string()), "{what}");
        assert_alive(&mut con);
        assert_eq!(int(&mut con, &["EXISTS", "k"]), 0, "{what}");
    }

    // 3. Geometric growth of one item's copies: RedisBloom reaches a sub-filter of 2^33
    // buckets and dies of SIGFPE; here growth stops at the memory cap (the filter is full, or
    // there is no memory for it) or at the sub-filter limit.
    for expansion in ["4", "32768"] {
        let key = format!("grows-{expansion}");
        ok(&mut con, &["CF.RESERVE", &key, "4", "EXPANSION", expansion]);
        let mut stopped = None;
        for attempt in 0..200 {
            match call(&mut con, &["CF.ADD", &key, "same"]) {
                Ok(Value::Int(1)) => assert!(stopped.is_none(), "an add succeeded after growth stopped"),
                Err(error) if [NO_MEMORY, MAX_EXPANSIONS, FULL].contains(&error.as_str()) => {
                    stopped.get_or_insert((attempt, error));
                }
                other => panic!("CF.ADD {key} same, add {attempt}: {other:?}"),
            }
            assert_alive(&mut con);
        }
        let (attempt, error) = stopped.expect("growth never stopped");
        let size = info_number(&mut con, &key, "Size");
        eprintln!("EXPANSION {expansion}: add {attempt} answered {error}; Size {size}");
        assert!(size <= 4 << 30, "{key}: {size} bytes, over the cap");
        assert_eq!(int(&mut con, &["CF.EXISTS", &key, "same"]), 1);
        ok(&mut con, &["DEL", &key]);
    }
    assert_eq!(ok(&mut con, &["GET", "bystander"]), Value::BulkString(b"untouched".to_vec()));
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

/// A mutated input of one of three kinds, from a seeded generator.
fn mutate(random: &mut Random, original: &[u8], fields: bool) -> Vec<u8> {
    let mut bytes = original.to_vec();
    match random.below(if fields { 6 } else { 5 }) {
        0 => {
            for _ in 0..1 + random.below(3) {
                let at = random.below(bytes.len().max(1));
                if let Some(byte) = bytes.get_mut(at) {
                    *byte ^= 1 << random.below(8);
                }
            }
        }
        1 => bytes.truncate(random.below(bytes.len().max(1))),
        2 => {
            let len = 1 + random.below(40);
            bytes.extend(random.bytes(len));
        }
        3 => bytes = random.bytes(bytes.len()),
        4 => {
            let len = random.below(80);
            bytes = random.bytes(len);
        }
        // A header field set to a value at an edge: the u64s at 0, 8, 16, 24, the u16s after.
        _ => {
            let edges = [
                0u64,
                1,
                2,
                3,
                255,
                256,
                1 << 15,
                65535,
                1 << 16,
                1 << 31,
                1 << 32,
                1 << 40,
                1 << 56,
                1 << 63,
                u64::MAX,
            ];
            let value = if random.below(4) == 0 {
                random.below(usize::MAX) as u64
            } else {
                edges[random.below(edges.len())]
            };
            // A wide header's fingerprint bits are a u16 too, after RedisBloom's fields.
            let field = random.below(if bytes.len() >= 40 { 8 } else { 7 });
            if field < 4 {
                bytes[8 * field..8 * field + 8].copy_from_slice(&value.to_le_bytes());
            } else {
                let at = 32 + 2 * (field - 4);
                bytes[at..at + 2].copy_from_slice(&(value as u16).to_le_bytes());
            }
        }
    }
    bytes
}

/// Whatever was accepted under `key` is a filter that answers every command without taking the
/// server down, dumps (within the cap) and loads back to itself.
fn exercise(con: &mut Connection, key: &str, cap: i64) {
    let kind = ok(con, &["TYPE", key]);
    assert!(kind == Value::SimpleString("MBbloomCF".into()) || kind == Value::SimpleString(WIDE.into()));
    let size = info_number(con, key, "Size");
    assert!(size <= 2 * cap, "{key}: an accepted filter of {size} bytes, over the cap");
    for args in [
        &["CF.EXISTS", key, "a"][..],
        &["CF.MEXISTS", key, "a", "b", ""],
        &["CF.COUNT", key, "a"],
        &["CF.DEBUG", key],
        &["CF.ADD", key, "a"],
        &["CF.ADDNX", key, "b"],
        &["CF.INSERT", key, "ITEMS", "c", "d", "e"],
        &["CF.INSERTNX", key, "ITEMS", "c", "f"],
        &["CF.DEL", key, "a"],
        &["CF.DEL", key, "zz"],
        &["CF.COMPACT", key],
        &["CF.INFO", key],
    ] {
        let _ = call(con, args);
        assert_alive(con);
    }
    let pairs = cf_scandump(con, key);
    assert_alive(con);
    if !pairs.is_empty() {
        cf_loadchunks(con, "hostile:copy", &pairs);
        assert!(cf_scandump(con, "hostile:copy") == pairs, "{key}: an accepted filter does not round-trip");
        ok(con, &["DEL", "hostile:copy"]);
    }
    let payload = dump_payload(con, key);
    call_bytes(con, &[b"RESTORE", b"hostile:copy", b"0", &payload]).expect("RESTORE of its own DUMP");
    ok(con, &["DEL", "hostile:copy"]);
    assert_alive(con);
}

/// Random mutations (bit flips, truncations, extensions, random bytes, header fields at their
/// edges) of valid LOADCHUNK headers and chunks and of DUMP payloads (checksum fixed, so the
/// module reads them), of RedisBloom's 8-bit filters and of wide ones, are refused, or make a
/// filter that works; the server never dies.
#[test]
fn mutated_headers_chunks_and_payloads_are_refused_or_sound() {
    const CAP: i64 = 16 << 20;
    let server = Module::Redbloom.start(&[]);
    let mut con = server.connection();
    ok(&mut con, &["CONFIG", "SET", "bf.max-filter-bytes", &CAP.to_string()]);
    ok(&mut con, &["SET", "bystander", "untouched"]);
    let mut all = Vec::new();
    cook_all(
        &mut con,
        &[
            Recipe::new("s1")
                .reserve(&["64", "BUCKETSIZE", "1", "EXPANSION", "2"])
                .insert(numbered("a", 200)),
            Recipe::new("s2").add(items(&["first"])).insert(numbered("b", 100)),
            Recipe::new("s4")
                .reserve(&["40", "BUCKETSIZE", "4", "MAXITERATIONS", "3"])
                .insert(numbered("c", 300)),
            Recipe::new("s0")
                .reserve(&["16", "EXPANSION", "0"])
                .insert(numbered("d", 10))
                .delete(numbered("d", 3)),
            Recipe::new("w16")
                .reserve(&["64", "ERROR", "0.001", "EXPANSION", "2"])
                .insert(numbered("e", 300))
                .delete(numbered("e", 20)),
            Recipe::new("w32").reserve(&["32", "ERROR", "1e-6"]).insert(numbered("f", 100)),
        ],
        &mut all,
    );
    // Per filter: its SCANDUMP stream and its DUMP payload.
    type Sources = Vec<(Vec<(i64, Vec<u8>)>, Vec<u8>)>;
    let sources: Sources = all
        .iter()
        .map(|held| (cf_scandump(&mut con, &held.key), dump_payload(&mut con, &held.key)))
        .collect();
    let mut random = Random::seeded();
    // (refused, accepted), for mutated headers, chunks and payloads.
    let mut tally = [(0, 0); 3];
    let mut count = |kind: usize, result: &Result<Value, String>| match result {
        Err(_) => tally[kind].0 += 1,
        Ok(_) => tally[kind].1 += 1,
    };
    for round in 0..1800 {
        let (stream, payload) = &sources[random.below(sources.len())];
        match round % 3 {
            // A mutated header, then the original chunks (which may no longer fit).
            0 => {
                let result = loadchunk(&mut con, "victim", 1, &mutate(&mut random, &stream[0].1, true));
                assert_alive(&mut con);
                count(0, &result);
                if result.is_ok() {
                    for (iterator, data) in &stream[1..] {
                        let _ = loadchunk(&mut con, "victim", *iterator, data);
                        assert_alive(&mut con);
                    }
                }
            }
            // The original header, then chunks with mutated data or iterators.
            1 => {
                loadchunk(&mut con, "victim", 1, &stream[0].1).expect("a valid header");
                for (iterator, data) in &stream[1..] {
                    let (iterator, data) = match random.below(3) {
                        0 => (*iterator, data.clone()),
                        1 => (*iterator, mutate(&mut random, data, false)),
                        _ => {
                            let edges =
                                [0, 1, -1, 2, iterator - 1, iterator + 1, iterator * 2, i64::MAX, i64::MIN];
                            (edges[random.below(edges.len())], data.clone())
                        }
                    };
                    count(1, &loadchunk(&mut con, "victim", iterator, &data));
                    assert_alive(&mut con);
                }
            }
            // A DUMP payload mutated after its type byte and module id (sometimes in the id's
            // version bits too), its checksum recomputed.
            _ => {
                let body = payload.len() - 10;
                let from = if random.below(10) == 0 { 8 } else { 10 };
                let mut mutated = payload[..from].to_vec();
                mutated.extend(mutate(&mut random, &payload[from..body], false));
                mutated.extend_from_slice(&payload[body..]);
                let result = call_bytes(
                    &mut con,
                    &[b"RESTORE", b"victim", b"0", &with_valid_checksum(mutated), b"REPLACE"],
                );
                assert_alive(&mut con);
                count(2, &result);
            }
        }
        if int(&mut con, &["EXISTS", "victim"]) == 1 {
            exercise(&mut con, "victim", CAP);
            ok(&mut con, &["DEL", "victim"]);
        }
    }
    eprintln!("(refused, accepted) for mutated headers, chunks and payloads: {tally:?}");
    for (what, (refused, accepted)) in ["headers", "chunks", "payloads"].iter().zip(tally) {
        assert!(refused > 30 && accepted > 30, "mutated {what}: meant to be both refused and accepted");
    }
    assert_eq!(ok(&mut con, &["GET", "bystander"]), Value::BulkString(b"untouched".to_vec()));
    for (held, (stream, _)) in all.iter().zip(&sources) {
        assert!(cf_scandump(&mut con, &held.key) == *stream, "{} was touched", held.key);
    }
}

// ------------------------------------------------------------------------------------------
// 6b. ERROR: wider fingerprints, this module's own

/// The share of `probes` never-added items that CF.MEXISTS answers present.
fn measured_rate(con: &mut Connection, key: &str, probes: usize) -> f64 {
    let absent = numbered(&format!("{key}:never-added:"), probes);
    let hits: usize = absent
        .chunks(1000)
        .map(|batch| mexists(con, key, batch).iter().filter(|answer| **answer == Value::Int(1)).count())
        .sum();
    hits as f64 / probes as f64
}

/// CF.RESERVE and CF.INSERT with ERROR make a filter of wider fingerprints (type `rbCF-wide`,
/// fingerprint bits in CF.DEBUG) whose measured rate, filled until it refuses an item, is at
/// or under the rate asked for; without ERROR nothing changes. Such filters answer, count,
/// delete, grow and compact like the others, and every persistence path, COPY, DUMP/RESTORE
/// and a replica keep them bit for bit.
#[test]
fn error_makes_wide_filters_that_keep_the_rate_asked_for_and_persist() {
    let mut server = Module::Redbloom.start(&AOF);
    let mut con = server.connection();
    let replica = replica_of(Module::Redbloom, &server);
    let mut replica_con = replica.connection();
    for (key, rate, bits) in [("full16", "0.001", 16), ("full32", "1e-6", 32), ("full8", "0.05", 8)] {
        ok(&mut con, &["CF.RESERVE", key, "20000", "ERROR", rate, "EXPANSION", "0"]);
        let expected_type = if bits == 8 { "MBbloomCF" } else { WIDE };
        assert_eq!(ok(&mut con, &["TYPE", key]), Value::SimpleString(expected_type.into()));
        let debug = String::from_utf8(bulk(ok(&mut con, &["CF.DEBUG", key]))).unwrap();
        assert_eq!(debug.ends_with(&format!(" fingerprint_bits:{bits}")), bits != 8, "{debug}");
        let mut added = 0;
        'fill: loop {
            let batch = numbered(&format!("{key}:member{added}:"), 500);
            let mut args: Vec<&[u8]> = vec![b"CF.INSERT", key.as_bytes(), b"ITEMS"];
            args.extend(batch.iter().map(Vec::as_slice));
            let Ok(Value::Array(answers)) = call_bytes(&mut con, &args) else { panic!("CF.INSERT {key}") };
            for answer in answers {
                if answer != Value::Int(1) {
                    break 'fill;
                }
                added += 1;
            }
        }
        let rate: f64 = rate.parse().unwrap();
        let measured = measured_rate(&mut con, key, 200_000);
        eprintln!("{key}: {added} items, ERROR {rate}, measured {measured:.2e}");
        assert!(added > 10_000 && measured <= rate, "{key}: {added} items, measured {measured}");
    }
    assert_eq!(ok(&mut con, &["CF.RESERVE", "plain", "1000"]), Value::Okay);
    assert_eq!(ok(&mut con, &["TYPE", "plain"]), Value::SimpleString("MBbloomCF".into()));

    let mut all = Vec::new();
    cook_all(
        &mut con,
        &[
            Recipe::new("grown16")
                .reserve(&["64", "ERROR", "0.001", "EXPANSION", "2"])
                .insert(numbered("g", 2000))
                .add(items(&["twice", "twice"]))
                .delete(numbered("g", 300)),
            Recipe::new("created32")
                .command(&["CF.INSERT", "created32", "ERROR", "1e-7", "CAPACITY", "100", "ITEMS", "x"])
                .insert(numbered("h", 400)),
            Recipe::new("emptied16")
                .reserve(&["100", "ERROR", "0.01"])
                .add(items(&["y"]))
                .delete(items(&["y"])),
        ],
        &mut all,
    );
    assert!(info_number(&mut con, "grown16", "Number of filters") > 2, "grown16 grew");
    // ERROR counts only when CF.INSERT creates the filter; BF.* refuse a wide filter as any CF.
    let debug_before = bulk(ok(&mut con, &["CF.DEBUG", "grown16"]));
    ok(&mut con, &["CF.INSERT", "grown16", "ERROR", "1e-9", "ITEMS", "more"]);
    // The rate is checked all the same, as CAPACITY is.
    let too_small = err(&mut con, &["CF.INSERT", "grown16", "ERROR", "1e-12", "ITEMS", "more"]);
    assert!(too_small.starts_with("ERROR: below 2 * bucket size"), "{too_small}");
    let debug_after = String::from_utf8(bulk(ok(&mut con, &["CF.DEBUG", "grown16"]))).unwrap();
    assert!(debug_after.ends_with("fingerprint_bits:16") && debug_after.as_bytes() != debug_before);
    ok(&mut con, &["CF.DEL", "grown16", "more"]);
    // (BF.EXISTS answers 0 for a key of another type, as RedisBloom does.)
    assert_eq!(int(&mut con, &["BF.EXISTS", "grown16", "a"]), 0);
    for bloom_command in
        [&["BF.ADD", "grown16", "a"][..], &["BF.MADD", "grown16", "a"], &["BF.INFO", "grown16"]]
    {
        assert_eq!(
            err(&mut con, bloom_command),
            "WRONGTYPE Operation against a key holding the wrong kind of value"
        );
    }
    assert_eq!(int(&mut con, &["CF.COUNT", "grown16", "twice"]), 2);
    ok(&mut con, &["CF.COMPACT", "grown16"]);
    all.push(Held { key: "full16".into(), members: Vec::new() });
    let before: Vec<Snapshot> = all.iter().map(|held| snapshot(&mut con, &held.key)).collect();

    wait_in_sync(&mut con, &mut replica_con);
    for held in &all {
        assert_eq!(
            digest(&mut replica_con, &held.key),
            digest(&mut con, &held.key),
            "{} on the replica",
            held.key
        );
        let copy = format!("copy:{}", held.key);
        assert_eq!(int(&mut con, &["COPY", &held.key, &copy]), 1);
        assert_eq!(ok(&mut con, &["TYPE", &copy]), Value::SimpleString(WIDE.into()));
        assert!(snapshot(&mut con, &copy) == snapshot(&mut con, &held.key), "COPY {}", held.key);
        let payload = dump_payload(&mut con, &held.key);
        assert_eq!(module_type(&payload), (WIDE.to_string(), 1), "{}", held.key);
        call_bytes(&mut con, &[b"RESTORE", copy.as_bytes(), b"0", &payload, b"REPLACE"]).expect("RESTORE");
        assert!(snapshot(&mut con, &copy) == snapshot(&mut con, &held.key), "RESTORE {}", held.key);
        let pairs = cf_scandump(&mut con, &held.key);
        if let Some((_, header)) = pairs.first() {
            assert_eq!(header.len(), 40, "{}: a wide header", held.key);
            ok(&mut con, &["DEL", &copy]);
            cf_loadchunks(&mut con, &copy, &pairs);
            assert!(snapshot(&mut con, &copy) == snapshot(&mut con, &held.key), "SCANDUMP {}", held.key);
        }
        ok(&mut con, &["DEL", &copy]);
    }
    ok(&mut con, &["DEBUG", "RELOAD"]);
    assert_kept(&mut con, &all, &before, "DEBUG RELOAD");
    drop(con);
    assert_kept_through_aof_and_rdb(Module::Redbloom, &mut server, &all, &before);
}

/// RedisBloom cannot hold a wide filter, and does not misread one: its CF.LOADCHUNK refuses the
/// 40-byte header (`Invalid header`), RESTORE and an RDB name the type it does not know, and
/// its replay of an AOF skips the filter. Once the wide filters are deleted, the same server's
/// RDB loads into RedisBloom again.
#[test]
fn redisbloom_refuses_wide_filters_by_name_and_takes_the_rest() {
    let ours = Module::Redbloom.start(&AOF);
    let mut con = ours.connection();
    ok(&mut con, &["CF.RESERVE", "wide", "1000", "ERROR", "0.001"]);
    ok(&mut con, &["CF.INSERT", "wide", "ITEMS", "a", "b"]);
    ok(&mut con, &["CF.INSERT", "classic", "ITEMS", "a", "b"]);
    let pairs = cf_scandump(&mut con, "wide");
    let payload = dump_payload(&mut con, "wide");

    let reference = Module::RedisBloom.start(&[]);
    let mut ref_con = reference.connection();
    assert_eq!(loadchunk(&mut ref_con, "wide", 1, &pairs[0].1), Err("Invalid header".to_string()));
    let restored = call_bytes(&mut ref_con, &[b"RESTORE", b"wide", b"0", &payload]);
    assert_eq!(restored, Err("ERR Bad data format".to_string()), "RedisBloom and a wide DUMP");
    assert_eq!(int(&mut ref_con, &["EXISTS", "wide"]), 0);
    assert_alive(&mut ref_con);

    ok(&mut con, &["BGREWRITEAOF"]);
    wait_for_rewrite(&mut con);
    let mut replaying = Module::RedisBloom.prepared(&AOF);
    replaying.take_file(&ours, "appendonlydir");
    replaying.launch();
    let mut replaying_con = replaying.connection();
    assert_eq!(keys(&mut replaying_con), ["classic"], "the wide filter is skipped, the rest replayed");
    assert_eq!(mexists(&mut replaying_con, "classic", &items(&["a", "b"])), [Value::Int(1), Value::Int(1)]);

    ok(&mut con, &["SAVE"]);
    let mut refusing = Module::RedisBloom.prepared(&[]);
    refusing.take_file(&ours, "dump.rdb");
    let log = refusing.run_until_exit();
    assert!(log.contains(WIDE), "RedisBloom's log names the type it cannot load:\n{log}");

    ok(&mut con, &["DEL", "wide"]);
    ok(&mut con, &["SAVE"]);
    let mut taking = Module::RedisBloom.prepared(&[]);
    taking.take_file(&ours, "dump.rdb");
    taking.launch();
    let mut taking_con = taking.connection();
    assert_eq!(mexists(&mut taking_con, "classic", &items(&["a", "b"])), [Value::Int(1), Value::Int(1)]);
}

// ------------------------------------------------------------------------------------------
// 7. Keyspace notifications

/// Keyspace events per command, told apart by a PUBLISH after each command (the listener gets
/// events and messages in the order the server produced them). RedisBloom 2.8.2 notifies
/// nothing for any CF command (observed: not even CF.RESERVE); this module notifies at least
/// one event on the key for every command that changes a filter, and none for reads.
#[test]
fn keyspace_notifications_for_each_changing_command() {
    on_both(|module| {
        let server = module.start(&[]);
        let mut con = server.connection();
        ok(&mut con, &["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
        ok(&mut con, &["CF.RESERVE", "source", "100"]);
        ok(&mut con, &["CF.ADD", "source", "s"]);
        let pairs = cf_scandump(&mut con, "source");

        let mut listener = server.connection();
        let mut pubsub = listener.as_pubsub();
        pubsub.psubscribe("__keyspace@0__:*").unwrap();
        pubsub.subscribe("step").unwrap();
        pubsub.set_read_timeout(Some(Duration::from_secs(10))).unwrap();

        // (command, Some(true): must notify, Some(false): must not, None: either)
        let header = pairs[0].1.clone();
        let chunk = pairs[1].1.clone();
        let (header_at, chunk_at) = (pairs[0].0.to_string(), pairs[1].0.to_string());
        let steps: Vec<(Vec<&[u8]>, Option<bool>)> = vec![
            (vec![b"CF.RESERVE", b"f", b"100"], Some(true)),
            (vec![b"CF.ADD", b"f", b"a"], Some(true)),
            (vec![b"CF.ADD", b"created", b"a"], Some(true)),
            (vec![b"CF.ADDNX", b"f", b"b"], Some(true)),
            (vec![b"CF.ADDNX", b"f", b"a"], None),
            (vec![b"CF.INSERT", b"f", b"ITEMS", b"c", b"d"], Some(true)),
            (vec![b"CF.INSERTNX", b"f", b"ITEMS", b"e"], Some(true)),
            (vec![b"CF.INSERT", b"inserted", b"ITEMS", b"a"], Some(true)),
            (vec![b"CF.DEL", b"f", b"a"], Some(true)),
            (vec![b"CF.DEL", b"f", b"zz"], None),
            (vec![b"CF.EXISTS", b"f", b"b"], Some(false)),
            (vec![b"CF.MEXISTS", b"f", b"b", b"c"], Some(false)),
            (vec![b"CF.COUNT", b"f", b"b"], Some(false)),
            (vec![b"CF.INFO", b"f"], Some(false)),
            (vec![b"CF.DEBUG", b"f"], Some(false)),
            (vec![b"CF.SCANDUMP", b"f", b"0"], Some(false)),
            (vec![b"CF.LOADCHUNK", b"copy", header_at.as_bytes(), &header[..]], Some(true)),
            (vec![b"CF.LOADCHUNK", b"copy", chunk_at.as_bytes(), &chunk[..]], Some(true)),
            (vec![b"CF.COMPACT", b"f"], None),
        ];
        for (n, (args, _)) in steps.iter().enumerate() {
            call_bytes(&mut con, args).unwrap_or_else(|error| panic!("{args:?}: {error}"));
            ok(&mut con, &["PUBLISH", "step", &n.to_string()]);
        }
        let mut events: Vec<Vec<(String, String)>> = vec![Vec::new(); steps.len()];
        let mut step = 0;
        while step < steps.len() {
            let message = pubsub.get_message().expect("a message within 10 s");
            let payload: String = message.get_payload().unwrap();
            match message.get_channel_name().strip_prefix("__keyspace@0__:") {
                Some(key) => events[step].push((key.to_string(), payload)),
                None => {
                    assert_eq!(payload, step.to_string(), "markers in order");
                    step += 1;
                }
            }
        }
        for ((args, expected), events) in steps.iter().zip(&events) {
            let command = String::from_utf8_lossy(args[0]).into_owned();
            let key = String::from_utf8_lossy(args[1]).into_owned();
            eprintln!("{module:?} {command} {key}: {events:?}");
            assert!(events.iter().all(|(on, _)| *on == key), "{command} notified on another key: {events:?}");
            match (module, expected) {
                (Module::RedisBloom, _) => assert!(events.is_empty(), "RedisBloom notified {events:?}"),
                (Module::Redbloom, Some(true)) => {
                    assert!(!events.is_empty(), "{command} {key} notified nothing")
                }
                (Module::Redbloom, Some(false)) => {
                    assert!(events.is_empty(), "{command} notified {events:?}")
                }
                (Module::Redbloom, None) => {}
            }
        }
    });
}

// ------------------------------------------------------------------------------------------
// 9. Limits of this server that its replicas and its AOF do not share

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

/// RedisBloom's `CF_MAX_EXPANSIONS` load argument sets the sub-filter limit
/// (`bf.cf-max-expansions`).
#[test]
fn cf_max_expansions_limits_the_sub_filters() {
    let server = Server::start_with(&["CF_MAX_EXPANSIONS", "3"], &[]);
    let mut con = server.connection();
    let Value::Array(config) = ok(&mut con, &["CONFIG", "GET", "bf.cf-max-expansions"]) else { panic!() };
    assert_eq!(bulk(config[1].clone()), b"3");
    ok(&mut con, &["CF.RESERVE", "k", "4", "BUCKETSIZE", "1", "EXPANSION", "1"]);
    let mut refused = None;
    for n in 0..100 {
        match call(&mut con, &["CF.ADD", "k", "same"]) {
            Ok(_) => {}
            Err(error) => {
                refused = Some((n, error));
                break;
            }
        }
    }
    let (_, error) = refused.expect("the limit stopped the adds");
    assert!(error == "Maximum expansions reached" || error == "Filter is full", "{error}");
    assert_eq!(info_number(&mut con, "k", "Number of filters"), 3);
    assert_eq!(err(&mut con, &["CF.ADD", "k", "same"]), "Maximum expansions reached");
    assert!(Server::failing_to_start(&["CF_MAX_EXPANSIONS", "0"]).contains("cf-max-expansions"));
}
