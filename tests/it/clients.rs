//! Clients written for RedisBloom work unchanged: the `redis` crate's own Bloom filter API
//! (its `bloom` feature), which parses RedisBloom's replies strictly, redis-py's `r.bf()` and
//! `r.cf()` (`tests/clients/redis_py.py`) and node-redis's `client.bf` and `client.cf`
//! (`tests/clients/node_redis.mjs`),
//! each installed by `make clients` under `target/`. Both scripts also pass against the real
//! RedisBloom, so what they expect is what RedisBloom answers.

use crate::harness::*;
use redis::bloom::{
    BloomFilterDumpIterator, BloomFilterInfoType, BloomFilterInsertOptions, BloomFilterScalingOptions,
};
use redis::Commands;
use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn the_redis_crate_bloom_client_under_both_protocols() {
    let server = Server::start();
    for (protocol, mut con) in server.connections() {
        let key = format!("client-{protocol:?}");
        let () = con.bf_reserve(&key, 0.01, 1000).unwrap();
        assert!(con.bf_add::<_, _, bool>(&key, "a").unwrap());
        assert!(!con.bf_add::<_, _, bool>(&key, "a").unwrap());
        assert_eq!(con.bf_madd::<_, _, Vec<bool>>(&key, &["b", "c", "a"]).unwrap(), [true, true, false]);
        assert!(con.bf_exists::<_, _, bool>(&key, "b").unwrap());
        assert_eq!(con.bf_mexists::<_, _, Vec<bool>>(&key, &["a", "zzz"]).unwrap(), [true, false]);
        assert_eq!(con.bf_card::<_, usize>(&key).unwrap(), 3);

        let info: std::collections::HashMap<String, redis::bloom::BloomFilterInfoTypeResponse> =
            con.bf_info(&key).unwrap();
        assert_eq!(info.len(), 5);
        assert!(info["Capacity"] == 1000.0);
        assert!(info["Number of items inserted"] == 3.0);
        let capacity: redis::bloom::BloomFilterInfoTypeResponse =
            con.bf_info_type(&key, BloomFilterInfoType::Capacity).unwrap();
        assert!(capacity == 1000.0);
        let expansion: redis::bloom::BloomFilterInfoTypeResponse =
            con.bf_info_type(&key, BloomFilterInfoType::Expansion).unwrap();
        assert!(expansion == 2.0);

        let options = BloomFilterInsertOptions::default()
            .capacity(50)
            .error_rate(0.001)
            .expansion(BloomFilterScalingOptions::ExpansionRate(4));
        let inserted: Vec<bool> = con.bf_insert_options(format!("{key}-ins"), &["x", "y"], options).unwrap();
        assert_eq!(inserted, [true, true]);
        let options = BloomFilterInsertOptions::default().nocreate();
        let missing: redis::RedisResult<Vec<bool>> =
            con.bf_insert_options(format!("{key}-none"), &["x"], options);
        assert_eq!(missing.unwrap_err().detail(), Some("not found"));

        let chunks: Vec<_> =
            BloomFilterDumpIterator::new(&mut con, &key).map(|chunk| chunk.unwrap()).collect();
        assert!(chunks.len() >= 2);
        for chunk in chunks {
            let () = con.bf_loadchunk(format!("{key}-copy"), chunk).unwrap();
        }
        assert_eq!(digest(&mut con, &format!("{key}-copy")), digest(&mut con, &key));
    }
}

/// How a client's test script is run: its interpreter, the script, its environment, and where
/// `make clients` put the client.
struct ClientScript {
    interpreter: PathBuf,
    script: &'static str,
    env: Vec<(&'static str, PathBuf)>,
    installed: PathBuf,
}

impl ClientScript {
    fn redis_py() -> ClientScript {
        let python = client_path("CLIENTS_PYTHON", "target/venv/bin/python");
        ClientScript {
            interpreter: python.clone(),
            script: "redis_py.py",
            env: Vec::new(),
            installed: python,
        }
    }

    fn node_redis() -> ClientScript {
        let modules = client_path("CLIENTS_NODE_MODULES", "target/node/node_modules");
        ClientScript {
            interpreter: PathBuf::from("node"),
            script: "node_redis.mjs",
            env: vec![("NODE_PATH", modules.clone())],
            installed: modules.join("redis"),
        }
    }

    /// Runs the script against `server`, under RESP2 then RESP3.
    fn run(&self, server: &Server) {
        let installed = &self.installed;
        assert!(
            installed.exists(),
            "{} is missing: `make clients` installs it (make test does)",
            installed.display()
        );
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients").join(self.script);
        for protocol in ["2", "3"] {
            let output = Command::new(&self.interpreter)
                .arg(&script)
                .args([&server.port.to_string(), protocol])
                .envs(self.env.iter().map(|(name, value)| (name, value)))
                .output()
                .unwrap_or_else(|error| panic!("{} could not be run: {error}", self.interpreter.display()));
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(output.status.success(), "{} under RESP{protocol}:\n{text}", script.display());
            eprint!("{text}");
        }
    }
}

/// Where `make clients` installed a client, unless the Makefile says otherwise.
fn client_path(variable: &str, default: &str) -> PathBuf {
    std::env::var_os(variable)
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(default), PathBuf::from)
}

#[test]
fn redis_py_bloom_client_under_both_protocols() {
    ClientScript::redis_py().run(&Server::start());
}

#[test]
fn node_redis_bloom_client_under_both_protocols() {
    ClientScript::node_redis().run(&Server::start());
}

/// The scripts' expectations are RedisBloom's own answers, not this module's.
#[test]
fn the_client_scripts_pass_against_the_real_redisbloom() {
    let redisbloom = Server::start_redisbloom(&[]);
    ClientScript::redis_py().run(&redisbloom);
    ClientScript::node_redis().run(&redisbloom);
}

/// redis-py 8.1.0's own tests of `bf()`, `cf()`, `cms()`, `topk()` and `tdigest()` (its
/// `tests/test_bloom.py` and `tests/test_asyncio/test_bloom.py`, unchanged: 73 tests), under RESP2
/// then RESP3, run by `tests/clients/redis_py_suite.py`; `make clients` installs pytest and
/// unpacks the tests under target/.
fn run_redis_py_suite(server: &Server) {
    let python = client_path("CLIENTS_PYTHON", "target/venv/bin/python");
    let tests = client_path("REDIS_PY_TESTS", "target/redis-py-tests/redis-8.1.0");
    for needed in [python.clone(), tests.join("tests/test_bloom.py")] {
        assert!(
            needed.exists(),
            "{} is missing: `make clients` installs it (make test does)",
            needed.display()
        );
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/redis_py_suite.py");
    let output = Command::new(&python)
        .arg(&script)
        .arg(format!("127.0.0.1:{}", server.port))
        .env("REDIS_PY_TESTS", &tests)
        .output()
        .unwrap_or_else(|error| panic!("{} could not be run: {error}", python.display()));
    let text =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{}:\n{text}", script.display());
}

#[test]
fn redis_py_own_bloom_tests_pass_under_both_protocols() {
    run_redis_py_suite(&Server::start());
}

/// What the suite expects is RedisBloom's behaviour: it passes whole against the real one.
#[test]
fn redis_py_own_bloom_tests_pass_against_the_real_redisbloom() {
    run_redis_py_suite(&Server::start_redisbloom(&[]));
}
