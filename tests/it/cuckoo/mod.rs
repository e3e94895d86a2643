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

mod catalogue;
mod commands;
mod hostile;
mod notifications;
mod persistence;
mod redisbloom;
mod replication;
mod wide;

use crate::harness::*;
use redis::{Connection, Value};
use std::path::PathBuf;

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

const MAX_EXPANSIONS: &str = "Maximum expansions reached";

/// The type of filters whose fingerprints are wider than RedisBloom's 8 bits.
const WIDE: &str = "rbCF-wide";

// ------------------------------------------------------------------------------------------
// Small helpers

fn items(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|word| word.as_bytes().to_vec()).collect()
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
    answers(con, "CF.MEXISTS", key, items)
}

/// Panics at the first difference, naming it, rather than printing two long lists.
fn assert_same_list<T: PartialEq + std::fmt::Debug>(tested: &[T], reference: &[T], what: &str) {
    if let Some(at) = tested.iter().zip(reference).position(|(a, b)| a != b) {
        panic!("{what}: reply {at} differs: {:?}, RedisBloom {:?}", tested[at], reference[at]);
    }
    assert_eq!(tested.len(), reference.len(), "{what}: reply counts");
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
pub(crate) fn info_number(con: &mut Connection, key: &str, label: &str) -> i64 {
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

/// The type name and encoding version a DUMP payload carries (the 64-bit module id after the
/// `RDB_TYPE_MODULE_2` byte and 0x81: nine 6-bit characters, then 10 bits of version).
fn module_type(payload: &[u8]) -> (String, u64) {
    assert_eq!(&payload[..2], &[7, 0x81], "a module value's payload");
    let id = u64::from_be_bytes(payload[2..10].try_into().unwrap());
    let chars = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let name = (0..9).map(|n| chars[((id >> (10 + 6 * (8 - n))) & 63) as usize] as char).collect();
    (name, id & 1023)
}
