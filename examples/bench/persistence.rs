//! What persistence costs on a large filter: memory as Redis counts it and as the machine
//! holds it, SAVE and load time, and the memory a BGSAVE's fork copies per add while it runs.

use crate::common::ok;
use crate::workloads::{synthetic_fill, FilterSize, Target};
use redis::{Connection, Value};
use std::time::{Duration, Instant};

/// A 1 GB filter at 1%, its bits written at the density of a half-full one.
const CAPACITY: u64 = 800_000_000;
/// Adds sent while a BGSAVE's child runs.
const ADDS_DURING_BGSAVE: usize = 20_000;

pub struct PersistenceCost {
    pub target: String,
    pub used_memory: i64,
    pub rss: i64,
    pub filter_bytes: i64,
    pub save_seconds: f64,
    pub load_seconds: f64,
    pub cow_bytes_per_add: f64,
}

pub fn measure(target: &mut Target) -> PersistenceCost {
    let name = target.name.clone();
    let con = target.connection();
    ok(con, &["FLUSHALL"]);
    // A filter's bits do not compress: compressing them only slows SAVE down.
    ok(con, &["CONFIG", "SET", "rdbcompression", "no"]);
    let size = FilterSize { name: "persisted", capacity: CAPACITY, rate: "0.01", synthetic_fill: true };
    synthetic_fill(con, "persisted", &size);
    let filter_bytes = integer(&ok(con, &["MEMORY", "USAGE", "persisted"]));
    let used_memory = info_number(con, "memory", "used_memory");
    let rss = info_number(con, "memory", "used_memory_rss");

    let started = Instant::now();
    ok(con, &["SAVE"]);
    let save_seconds = started.elapsed().as_secs_f64();
    let started = Instant::now();
    ok(con, &["DEBUG", "RELOAD", "NOSAVE"]);
    let load_seconds = started.elapsed().as_secs_f64();

    ok(con, &["BGSAVE"]);
    let mut pipe = redis::pipe();
    for n in 0..ADDS_DURING_BGSAVE {
        pipe.cmd("BF.ADD").arg("persisted").arg(format!("during-bgsave:{n}")).ignore();
    }
    pipe.query::<()>(con).expect("adds during BGSAVE");
    let added_while_saving = info_number(con, "persistence", "rdb_bgsave_in_progress") == 1;
    let deadline = Instant::now() + Duration::from_mins(10);
    while info_number(con, "persistence", "rdb_bgsave_in_progress") == 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let cow = info_number(con, "persistence", "rdb_last_cow_size") as f64;
    ok(con, &["FLUSHALL"]);
    PersistenceCost {
        target: name,
        used_memory,
        rss,
        filter_bytes,
        save_seconds,
        load_seconds,
        // Only meaningful when every add landed while the child was still writing.
        cow_bytes_per_add: if added_while_saving { cow / ADDS_DURING_BGSAVE as f64 } else { f64::NAN },
    }
}

fn integer(value: &Value) -> i64 {
    match value {
        Value::Int(n) => *n,
        other => panic!("expected an integer, got {other:?}"),
    }
}

fn info_number(con: &mut Connection, section: &str, name: &str) -> i64 {
    let info = match ok(con, &["INFO", section]) {
        Value::BulkString(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Value::VerbatimString { text, .. } => text,
        other => panic!("INFO: {other:?}"),
    };
    info.lines()
        .find_map(|line| line.strip_prefix(&format!("{name}:")))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("INFO {section} has no {name}"))
}
