//! CF.* commands, their replies and errors, as scripts/probe-cf.py observes them on RedisBloom
//! 2.8.2 and on this module.

use super::Module;
use crate::harness::{err, int, ok};
use std::path::PathBuf;

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

/// WINDOW and GENERATIONS, which the other types take, are refused by CF.RESERVE and
/// CF.INSERT[NX] with an error that points to the windowed Bloom filter, and create nothing
/// (RedisBloom ignores CF.RESERVE's words it does not know, and would make a filter that
/// never forgets).
#[test]
fn a_cuckoo_filter_refuses_a_window() {
    let server = Module::Redbloom.start(&[]);
    let mut con = server.connection();
    let no_window =
        "WINDOW: cuckoo filters do not forget; a windowed Bloom filter does (BF.RESERVE ... WINDOW ms)";
    for command in [
        &["CF.RESERVE", "k", "1000", "WINDOW", "60000"][..],
        &["CF.RESERVE", "k", "1000", "BUCKETSIZE", "4", "generations", "2"],
        &["CF.INSERT", "k", "WINDOW", "60000", "ITEMS", "a"],
        &["CF.INSERTNX", "k", "CAPACITY", "1000", "GENERATIONS", "2", "ITEMS", "a"],
    ] {
        assert_eq!(err(&mut con, command), no_window, "{command:?}");
        assert_eq!(int(&mut con, &["EXISTS", "k"]), 0, "{command:?} created the key");
    }
    ok(&mut con, &["CF.RESERVE", "k", "1000"]);
    assert_eq!(err(&mut con, &["CF.INSERT", "k", "WINDOW", "60000", "ITEMS", "a"]), no_window);
    assert_eq!(int(&mut con, &["CF.EXISTS", "k", "a"]), 0, "nothing added");
}
