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
    // A tiny rate reads back short, and as itself.
    ok(&mut con, &["CONFIG", "SET", "bf.error-rate", "1e-300"]);
    assert_eq!(config_get(&mut con, "bf.error-rate"), "1e-300");
    ok(&mut con, &["CONFIG", "SET", "bf.error-rate", "0.002"]);
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
    let disagreeing = &["cf-bucket-size", "600"];
    for args in
        [&["ERROR_RATE", "2"][..], &["INITIAL_SIZE", "0"], &["BOGUS", "1"], &["INITIAL_SIZE"], disagreeing]
    {
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
    // Redis marks a module's lines with its name, and a warning with '#' after the timestamp;
    // what the server says of a module's configs or commands names no module.
    let warnings: Vec<&str> = log
        .lines()
        .filter(|line| line.contains(" # ") && (line.contains("<bf>") || line.contains("Module ")))
        .collect();
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

/// Settings that must agree with each other are checked once all are set, at load as in a
/// CONFIG SET: load arguments that raise the bucket size past half the capacity redis.conf
/// set, and the capacity with it, load.
#[test]
fn agreeing_settings_load_in_any_order() {
    let server = Server::start_with(
        &["CF_BUCKET_SIZE", "100", "CF_INITIAL_SIZE", "300"],
        &["--bf.cf-initial-size", "8"],
    );
    let mut con = server.connection();
    assert_eq!(config_get(&mut con, "bf.cf-bucket-size"), "100");
    assert_eq!(config_get(&mut con, "bf.cf-initial-size"), "300");
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

/// The settings Redis 8 names without a prefix, each with its `bf.` name, a value that is not
/// its default, and values out of its range.
const REDIS_8_SETTINGS: [(&str, &str, &str, &[&str]); 8] = [
    ("bf-error-rate", "bf.error-rate", "0.003", &["0", "1", "x"]),
    ("bf-initial-size", "bf.initial-size", "333", &["0", "1073741825"]),
    ("bf-expansion-factor", "bf.expansion-factor", "4", &["-1", "32769"]),
    ("cf-bucket-size", "bf.cf-bucket-size", "4", &["0", "256"]),
    ("cf-initial-size", "bf.cf-initial-size", "2048", &["3", "1073741825"]),
    ("cf-max-iterations", "bf.cf-max-iterations", "30", &["0", "65536"]),
    ("cf-expansion-factor", "bf.cf-expansion-factor", "2", &["-1", "32769"]),
    ("cf-max-expansions", "bf.cf-max-expansions", "10", &["0", "65537"]),
];

/// Redis 8.0 and later take module configs without the module's prefix; Valkey reports the
/// Redis version it is compatible with, and answers for itself.
fn server_kind(con: &mut redis::Connection) -> (bool, u32) {
    let info = info_text(con, "server");
    let field = |name: &str| info.lines().find_map(|line| line.strip_prefix(name)).map(str::to_string);
    let major = field("redis_version:").and_then(|v| v.split('.').next()?.parse().ok()).unwrap_or(0);
    (field("valkey_version:").is_some(), major)
}

/// Filters created without parameters get the settings: BF.ADD's capacity, expansion and
/// rate, and CF.ADD's bucket size, buckets, iterations and expansion.
fn assert_new_filters_follow(con: &mut redis::Connection, prefix: &str) {
    let bloom = format!("{prefix}bloom");
    ok(con, &["BF.ADD", &bloom, "a"]);
    assert_eq!(capacity(con, &bloom), 333);
    assert_eq!(ok(con, &["BF.INFO", &bloom, "EXPANSION"]), Value::Array(vec![Value::Int(4)]));
    let Value::Array(lines) = ok(con, &["BF.DEBUG", &bloom]) else { panic!() };
    assert!(format!("{:?}", lines[1]).contains("ratio:0.0015"), "{lines:?}");
    let cuckoo = format!("{prefix}cuckoo");
    ok(con, &["CF.ADD", &cuckoo, "a"]);
    assert_eq!(info_number(con, &cuckoo, "Bucket size"), 4);
    assert_eq!(info_number(con, &cuckoo, "Number of buckets"), 512, "2048 items in buckets of 4");
    assert_eq!(info_number(con, &cuckoo, "Max iterations"), 30);
    assert_eq!(info_number(con, &cuckoo, "Expansion rate"), 2);
}

/// Every setting by its `bf.` name, on every server: read, set, refused out of range, and
/// taken by the filters commands create without parameters.
#[test]
fn every_setting_has_its_bf_name() {
    let server = Server::start();
    let mut con = server.connection();
    for (_, name, value, bad) in REDIS_8_SETTINGS {
        ok(&mut con, &["CONFIG", "SET", name, value]);
        assert_eq!(config_get(&mut con, name), value);
        for bad in bad {
            let error = err(&mut con, &["CONFIG", "SET", name, bad]);
            assert!(error.starts_with("ERR"), "{name} {bad}: {error}");
            assert_eq!(config_get(&mut con, name), value, "{name} {bad} changed nothing");
        }
    }
    assert_new_filters_follow(&mut con, "set:");
    // A cuckoo filter made with the defaults holds two buckets: the two settings agree, once
    // all of a CONFIG SET is set, in whichever order it names them; refused, it changes none.
    let error = err(&mut con, &["CONFIG", "SET", "bf.cf-initial-size", "7"]);
    assert!(error.contains("cf-bucket-size (4) must be at most half cf-initial-size (7)"), "{error}");
    ok(&mut con, &["CONFIG", "SET", "bf.cf-initial-size", "100"]);
    let error = err(&mut con, &["CONFIG", "SET", "bf.cf-bucket-size", "51"]);
    assert!(error.contains("cf-bucket-size (51) must be at most half cf-initial-size (100)"), "{error}");
    let both = ["bf.cf-bucket-size", "100", "bf.cf-initial-size", "300"];
    let error = err(&mut con, &["CONFIG", "SET", "bf.cf-bucket-size", "100", "bf.cf-max-iterations", "5"]);
    assert!(error.contains("must be at most half"), "{error}");
    assert_eq!(config_get(&mut con, "bf.cf-bucket-size"), "4");
    assert_eq!(config_get(&mut con, "bf.cf-max-iterations"), "30");
    ok(&mut con, &[&["CONFIG", "SET"][..], &both].concat());
    ok(&mut con, &["CONFIG", "SET", "bf.cf-initial-size", "200", "bf.cf-bucket-size", "4"]);
    ok(&mut con, &["CONFIG", "SET", "bf.cf-initial-size", "2048"]);
    // CF.RESERVE and CF.INSERT take what they do not name from the settings too.
    ok(&mut con, &["CF.RESERVE", "reserved", "1000", "MAXITERATIONS", "9"]);
    assert_eq!(info_number(&mut con, "reserved", "Bucket size"), 4);
    assert_eq!(info_number(&mut con, "reserved", "Max iterations"), 9);
    ok(&mut con, &["CF.INSERT", "inserted", "ITEMS", "a"]);
    assert_eq!(info_number(&mut con, "inserted", "Number of buckets"), 512);
    assert_eq!(err(&mut con, &["CF.RESERVE", "small", "6"]), "Capacity must be at least (BucketSize * 2)");
    // Redis 8 takes up to 65536 sub-filters; stored filters here hold at most 1024, and a
    // larger setting acts as that.
    ok(&mut con, &["CONFIG", "SET", "bf.cf-max-expansions", "65536"]);
}

/// On Redis 8, a server started with every name Redis 8's Bloom module has, on its command
/// line: both names show the values, reach the same setting, refuse what is out of range, and
/// CONFIG REWRITE keeps them. Before Redis 8 the names without a prefix do not exist.
#[test]
fn redis_8_names_reach_the_same_settings() {
    let command_line: Vec<String> = REDIS_8_SETTINGS
        .iter()
        .flat_map(|(unprefixed, _, value, _)| [format!("--{unprefixed}"), value.to_string()])
        .collect();
    let probe = Server::start();
    let mut con = probe.connection();
    let (valkey, major) = server_kind(&mut con);
    let registered = ok(&mut con, &["CONFIG", "GET", "bf-error-rate"]) != Value::Array(vec![]);
    if !valkey {
        assert_eq!(registered, major >= 8, "Redis {major}");
    }
    if !registered {
        return;
    }
    let args: Vec<&str> = command_line.iter().map(String::as_str).collect();
    let server = Server::start_with(&[], &args);
    let mut con = server.connection();
    for (unprefixed, name, value, bad) in REDIS_8_SETTINGS {
        assert_eq!(config_get(&mut con, unprefixed), value, "{unprefixed}");
        assert_eq!(config_get(&mut con, name), value, "{name}");
        for bad in bad {
            let error = err(&mut con, &["CONFIG", "SET", unprefixed, bad]);
            assert!(error.starts_with("ERR"), "{unprefixed} {bad}: {error}");
        }
    }
    assert_new_filters_follow(&mut con, "cli:");
    ok(&mut con, &["CONFIG", "SET", "cf-max-iterations", "44"]);
    assert_eq!(config_get(&mut con, "bf.cf-max-iterations"), "44");
    ok(&mut con, &["CONFIG", "SET", "bf.cf-max-iterations", "45"]);
    assert_eq!(config_get(&mut con, "cf-max-iterations"), "45");

    let lines = REDIS_8_SETTINGS.map(|(unprefixed, _, value, _)| format!("{unprefixed} {value}")).join("\n");
    let from_file = Server::start_with_config_file(&lines);
    let mut con = from_file.connection();
    assert_new_filters_follow(&mut con, "file:");
    ok(&mut con, &["CONFIG", "SET", "bf-initial-size", "444"]);
    ok(&mut con, &["CONFIG", "REWRITE"]);
    let rewritten = from_file.config_file();
    assert!(rewritten.lines().any(|line| line == "bf-initial-size 444"), "{rewritten}");
    assert!(rewritten.lines().any(|line| line == "cf-bucket-size 4"), "{rewritten}");
}

/// RedisBloom's load-time names (2.8, and Redis 8's deprecated ones), and Redis 8's names as
/// load arguments, set the same settings.
#[test]
fn redisbloom_and_redis_8_names_as_load_arguments() {
    let server = Server::start_with(
        &[
            "CF_MAX_EXPANSIONS",
            "12",
            "cf-bucket-size",
            "4",
            "bf-initial-size",
            "66",
            "BF_EXPANSION_FACTOR",
            "3",
        ],
        &[],
    );
    let mut con = server.connection();
    assert_eq!(config_get(&mut con, "bf.cf-max-expansions"), "12");
    assert_eq!(config_get(&mut con, "bf.cf-bucket-size"), "4");
    assert_eq!(config_get(&mut con, "bf.initial-size"), "66");
    assert_eq!(config_get(&mut con, "bf.expansion-factor"), "3");
    let log = Server::failing_to_start(&["CF_BUCKET_SIZE", "256"]);
    assert!(log.contains("redbloom: cf-bucket-size must be an integer in the range [1, 255]"), "{log}");
}

/// A server that holds another module named `bf` (RedisBloom, or a Redis 8 built with its
/// modules) refuses this one; the log says why and what to do, and the server and the other
/// module go on as before.
#[test]
fn another_module_named_bf_keeps_this_one_out_harmlessly() {
    let server = Server::start_redisbloom(&[]);
    let mut con = server.connection();
    ok(&mut con, &["BF.ADD", "theirs", "a"]);
    let module = module_path();
    let error = err(&mut con, &["MODULE", "LOAD", module.to_str().unwrap()]);
    assert!(error.starts_with("ERR"), "{error}");
    let log = server.log();
    assert!(log.contains("another module named 'bf' is loaded already"), "{log}");
    assert!(log.contains("remove that module's loadmodule line"), "{log}");
    assert_eq!(int(&mut con, &["BF.EXISTS", "theirs", "a"]), 1, "RedisBloom still serves its filter");
    let Value::Array(modules) = ok(&mut con, &["MODULE", "LIST"]) else { panic!() };
    let named_bf = |module: &&Value| matches!(module, Value::Array(fields) if fields.get(1) == Some(&Value::BulkString(b"bf".to_vec())));
    assert_eq!(modules.iter().filter(named_bf).count(), 1, "{modules:?}");
}

/// MODULE LOADEX naming a config the module does not have is refused and the server goes on.
/// Redis 8 unloads the module then, and crashed doing so while the module held a timer (it
/// armed one at load). Redis 7.2-7.4 and Valkey crash on that unload for any module with data
/// types, RedisBloom's too, so they are not asked; 7.0 keeps the module loaded.
#[test]
fn loadex_naming_an_unknown_config_leaves_the_server_up() {
    let server = Server::start_bare();
    let mut con = server.connection();
    let info = info_text(&mut con, "server");
    let asked = !info.contains("valkey_version:")
        && (info.contains("redis_version:7.0.") || !info.contains("redis_version:7."));
    if !asked {
        return;
    }
    let module = module_path();
    let module = module.to_str().unwrap();
    let error = err(&mut con, &["MODULE", "LOADEX", module, "CONFIG", "bf.no-such-setting", "1"]);
    assert!(error.starts_with("ERR"), "{error}");
    assert_eq!(ok(&mut con, &["PING"]), Value::SimpleString("PONG".into()));
    let Value::Array(modules) = ok(&mut con, &["MODULE", "LIST"]) else { panic!("MODULE LIST") };
    let named_bf = |module: &Value| matches!(module, Value::Array(fields) if fields.get(1) == Some(&Value::BulkString(b"bf".to_vec())));
    if !modules.iter().any(named_bf) {
        ok(&mut con, &["MODULE", "LOAD", module]);
    }
    ok(&mut con, &["BF.RESERVE", "w", "0.01", "100", "WINDOW", "200"]);
    assert_eq!(int(&mut con, &["BF.ADD", "w", "a"]), 1);
    std::thread::sleep(std::time::Duration::from_millis(400));
    assert_eq!(int(&mut con, &["BF.EXISTS", "w", "a"]), 0);
}

/// `bf.huge-pages` is a yes/no config and load argument.
#[test]
fn huge_pages_is_a_yes_or_no_setting() {
    let server = Server::start();
    let mut con = server.connection();
    assert_eq!(config_get(&mut con, "bf.huge-pages"), "no");
    ok(&mut con, &["CONFIG", "SET", "bf.huge-pages", "yes"]);
    assert_eq!(config_get(&mut con, "bf.huge-pages"), "yes");
    assert!(err(&mut con, &["CONFIG", "SET", "bf.huge-pages", "maybe"]).starts_with("ERR"));
    assert_eq!(config_get(&mut con, "bf.huge-pages"), "yes");
    let from_argument = Server::start_with(&["huge-pages", "yes"], &[]);
    assert_eq!(config_get(&mut from_argument.connection(), "bf.huge-pages"), "yes");
}
