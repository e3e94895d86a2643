//! Defaults and limits: module configs and loadmodule arguments (RedisBloom's too).

use crate::cuckoo::info_number;
use crate::harness::*;
use redis::Value;

fn config_get(con: &mut redis::Connection, name: &str) -> String {
    match ok(con, &["CONFIG", "GET", name]) {
        Value::Array(pair) if pair.len() == 2 => match &pair[1] {
            Value::BulkString(bytes) => String::from_utf8(bytes.clone()).unwrap(),
            other => panic!("{other:?}"),
        },
        other => panic!("{name}: {other:?}"),
    }
}

fn capacity(con: &mut redis::Connection, key: &str) -> i64 {
    match ok(con, &["BF.INFO", key, "CAPACITY"]) {
        Value::Array(values) => match values[0] {
            Value::Int(n) => n,
            _ => panic!(),
        },
        other => panic!("{other:?}"),
    }
}

#[test]
fn defaults_are_readable_and_settable() {
    let server = Server::start();
    let mut con = server.connection();
    assert_eq!(config_get(&mut con, "bf.error-rate"), "0.01");
    assert_eq!(config_get(&mut con, "bf.initial-size"), "100");
    assert_eq!(config_get(&mut con, "bf.expansion-factor"), "2");
    assert_eq!(config_get(&mut con, "bf.max-filter-bytes"), (4u64 << 30).to_string());

    ok(&mut con, &["CONFIG", "SET", "bf.error-rate", "0.002"]);
    ok(&mut con, &["CONFIG", "SET", "bf.initial-size", "321"]);
    ok(&mut con, &["CONFIG", "SET", "bf.expansion-factor", "0"]);
    ok(&mut con, &["BF.ADD", "k", "a"]);
    assert_eq!(capacity(&mut con, "k"), 321);
    assert_eq!(ok(&mut con, &["BF.INFO", "k", "EXPANSION"]), Value::Array(vec![Value::Nil]));
    let Value::Array(lines) = ok(&mut con, &["BF.DEBUG", "k"]) else { panic!() };
    assert!(format!("{:?}", lines[1]).contains("ratio:0.002"), "non-scaling keeps the full rate");

    for (name, value) in [
        ("bf.error-rate", "0"),
        ("bf.error-rate", "1.5"),
        ("bf.error-rate", "abc"),
        ("bf.initial-size", "0"),
        ("bf.initial-size", "1073741825"),
        ("bf.expansion-factor", "-1"),
        ("bf.expansion-factor", "32769"),
        ("bf.max-filter-bytes", "10"),
    ] {
        let error = err(&mut con, &["CONFIG", "SET", name, value]);
        assert!(error.starts_with("ERR"), "{name} {value}: {error}");
    }
    assert_eq!(config_get(&mut con, "bf.error-rate"), "0.002");
    assert_eq!(config_get(&mut con, "bf.initial-size"), "321");
}

#[test]
fn redisbloom_load_arguments() {
    let server = Server::start_with(&["INITIAL_SIZE", "400", "ERROR_RATE", "0.004"], &[]);
    let mut con = server.connection();
    assert_eq!(config_get(&mut con, "bf.error-rate"), "0.004");
    ok(&mut con, &["BF.ADD", "k", "a"]);
    assert_eq!(capacity(&mut con, "k"), 400);
    let Value::Array(lines) = ok(&mut con, &["BF.DEBUG", "k"]) else { panic!() };
    assert!(format!("{:?}", lines[1]).contains("ratio:0.002"), "{lines:?}");
}

#[test]
fn config_names_as_load_arguments() {
    let server = Server::start_with(
        &["bf.initial-size", "77", "expansion-factor", "5", "max-filter-bytes", "1000000"],
        &[],
    );
    let mut con = server.connection();
    assert_eq!(config_get(&mut con, "bf.expansion-factor"), "5");
    assert_eq!(config_get(&mut con, "bf.max-filter-bytes"), "1000000");
    ok(&mut con, &["BF.ADD", "k", "a"]);
    assert_eq!(capacity(&mut con, "k"), 77);
}

#[test]
fn bad_load_arguments_refuse_to_load() {
    for args in [&["ERROR_RATE", "2"][..], &["INITIAL_SIZE", "0"], &["BOGUS", "1"], &["INITIAL_SIZE"]] {
        let log = Server::failing_to_start(args);
        assert!(log.contains("redbloom:"), "{args:?}: {log}");
    }
}

/// An operator reads warnings as something to act on: a normal load must not log one.
#[test]
fn a_normal_load_logs_no_warning() {
    let server = Server::start();
    server.connection();
    let log = server.log();
    assert!(log.contains("Module 'bf' loaded"), "{log}");
    // Redis marks a module's lines with its name, and a warning with '#' after the timestamp.
    let warnings: Vec<&str> =
        log.lines().filter(|line| line.contains("<bf>") && line.contains(" # ")).collect();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(!log.contains("Skip register"), "{log}");
}

#[test]
fn config_file_lines_are_read() {
    let server = Server::start_with(&[], &["--bf.initial-size", "555"]);
    let mut con = server.connection();
    ok(&mut con, &["BF.ADD", "k", "a"]);
    assert_eq!(capacity(&mut con, "k"), 555);
}

/// `bf.format` picks the format of filters created without FORMAT; FORMAT overrides it.
#[test]
fn the_format_of_new_filters_is_configurable() {
    let server = Server::start();
    let mut con = server.connection();
    let first_line = |con: &mut redis::Connection, key: &str| match ok(con, &["BF.DEBUG", key]) {
        Value::Array(lines) => String::from_utf8(bulk(lines[1].clone())).unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(config_get(&mut con, "bf.format"), "redbloom");
    ok(&mut con, &["BF.RESERVE", "ours", "0.01", "100"]);
    // RedisBloom's layout for 100 items at 0.5%: 144 bytes, 8 hashes (its own BF.DEBUG line).
    let redisbloom_line = "bytes:144 bits:1152 hashes:8 hashwidth:64 capacity:100 size:0 ratio:0.005";
    assert_ne!(first_line(&mut con, "ours"), redisbloom_line);
    ok(&mut con, &["BF.RESERVE", "named", "0.01", "100", "FORMAT", "redisbloom"]);
    assert_eq!(first_line(&mut con, "named"), redisbloom_line);

    ok(&mut con, &["CONFIG", "SET", "bf.format", "REDISBLOOM"]);
    assert_eq!(config_get(&mut con, "bf.format"), "redisbloom");
    ok(&mut con, &["BF.RESERVE", "by-default", "0.01", "100"]);
    assert_eq!(first_line(&mut con, "by-default"), redisbloom_line);
    ok(&mut con, &["BF.INSERT", "inserted", "CAPACITY", "100", "FORMAT", "REDBLOOM", "ITEMS", "a"]);
    assert!(!first_line(&mut con, "inserted").contains("bytes:144"));

    assert!(err(&mut con, &["CONFIG", "SET", "bf.format", "classic"]).starts_with("ERR"));
    for args in [
        &["BF.RESERVE", "x", "0.01", "100", "FORMAT", "other"][..],
        &["BF.RESERVE", "x", "0.01", "100", "FORMAT"],
    ] {
        assert_eq!(err(&mut con, args), "ERR format must be REDBLOOM or REDISBLOOM");
    }
    assert_eq!(
        err(&mut con, &["BF.INSERT", "x", "FORMAT", "x", "ITEMS", "a"]),
        "ERR format must be REDBLOOM or REDISBLOOM"
    );
    assert_eq!(int(&mut con, &["EXISTS", "x"]), 0);
    let log = Server::failing_to_start(&["format", "classic"]);
    assert!(log.contains("format must be redbloom or redisbloom"), "{log}");
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
