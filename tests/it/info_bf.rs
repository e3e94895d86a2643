//! The `INFO bf` section: what the server holds in filters of each kind and what was asked of
//! them.

use crate::harness::*;
use redis::Value;

/// The `INFO bf` fields, without the `bf_` Redis puts before a module's fields.
fn info_bf(con: &mut redis::Connection) -> std::collections::HashMap<String, i64> {
    let text = info_text(con, "bf");
    text.lines()
        .filter_map(|line| line.split_once(':'))
        .filter_map(|(name, value)| Some((name.strip_prefix("bf_")?.to_string(), value.trim().parse().ok()?)))
        .collect()
}

/// The Bloom filters' fields of `INFO bf`, in their order.
const BLOOM_FIELDS: [&str; 10] = [
    "filters",
    "bytes",
    "items",
    "sub_filters",
    "window_timer_keys",
    "adds",
    "lookups",
    "lookups_found",
    "full_filter_errors",
    "refused_creations",
];

/// `BF.INFO key SIZE`: what `bf_bytes` counts of the filter.
fn filter_size(con: &mut redis::Connection, key: &str) -> i64 {
    let Value::Array(size) = ok(con, &["BF.INFO", key, "SIZE"]) else { panic!("BF.INFO SIZE") };
    let Value::Int(bytes) = size[0] else { panic!("an integer size") };
    bytes
}

/// Waits until `field` of `INFO bf` is `expected`: values replaced or flushed may still be
/// freeing on the lazy-free thread (Valkey).
fn wait_for_info(con: &mut redis::Connection, field: &str, expected: i64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while info_bf(con)[field] != expected {
        assert!(std::time::Instant::now() < deadline, "{field}: {:?}", info_bf(con));
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// `INFO bf` counts what the server holds in filters and what was asked of them, and keeps
/// the counts right through creation, growth, copies, reloads and deletion.
#[test]
fn info_bf_counts_filters_and_operations() {
    let server = Server::start();
    let mut con = server.connection();
    let info = info_bf;
    let zero = info(&mut con);
    for field in BLOOM_FIELDS {
        assert_eq!(zero.get(field), Some(&0), "{field} in {zero:?}");
    }
    ok(&mut con, &["BF.RESERVE", "grows", "0.01", "10", "FORMAT", "REDISBLOOM"]);
    let added = madd_all(&mut con, "grows", (0..100).map(|n| format!("g{n}")));
    ok(&mut con, &["BF.RESERVE", "full", "0.01", "2", "NONSCALING"]);
    let _ = call(&mut con, &["BF.MADD", "full", "a", "b", "c", "d"]);
    assert!(err(&mut con, &["BF.RESERVE", "huge", "0.0000001", "1073741824"]).contains("Insufficient memory"));
    assert_eq!(int(&mut con, &["BF.EXISTS", "grows", "g1"]), 1);
    let found = count_present(&mut con, "grows", (0..10).map(|n| format!("g{n}")));
    assert_eq!(int(&mut con, &["BF.EXISTS", "missing", "x"]), 0);

    let memory = |con: &mut redis::Connection, key: &str| -> i64 {
        let Value::Array(sizes) = ok(con, &["BF.INFO", key, "FILTERS"]) else { panic!() };
        let Value::Int(links) = sizes[0] else { panic!() };
        links
    };
    let stats = info(&mut con);
    let items = int(&mut con, &["BF.CARD", "grows"]) + int(&mut con, &["BF.CARD", "full"]);
    assert_eq!(stats["filters"], 2);
    assert_eq!(stats["items"], items);
    assert_eq!(stats["sub_filters"], memory(&mut con, "grows") + memory(&mut con, "full"));
    assert!(stats["sub_filters"] > 2, "meant to grow");
    assert!(
        stats["bytes"] > 0
            && stats["bytes"]
                <= int(&mut con, &["MEMORY", "USAGE", "grows"]) + int(&mut con, &["MEMORY", "USAGE", "full"])
    );
    assert_eq!(stats["adds"], added as i64 + 2, "the full filter took two");
    assert_eq!(stats["full_filter_errors"], 1);
    assert_eq!(stats["refused_creations"], 1);
    assert_eq!(stats["lookups"], 1 + 10 + 1);
    assert_eq!(stats["lookups_found"], 1 + found as i64);

    // The gauges follow the values Redis holds, whatever made or dropped them.
    assert_eq!(int(&mut con, &["COPY", "grows", "copy"]), 1);
    ok(&mut con, &["DEBUG", "RELOAD"]);
    wait_for_info(&mut con, "filters", 3);
    let reloaded = info(&mut con);
    assert_eq!(reloaded["items"], items + int(&mut con, &["BF.CARD", "grows"]));
    ok(&mut con, &["FLUSHALL", "ASYNC"]);
    wait_for_info(&mut con, "filters", 0);
    let empty = info(&mut con);
    for field in ["bytes", "items", "sub_filters"] {
        assert_eq!(empty[field], 0, "{field}");
    }
    let everything = String::from_utf8(bulk(ok(&mut con, &["INFO", "everything"]))).unwrap();
    assert!(
        everything.contains("# bf\r\n") && everything.contains("bf_lookups_found:"),
        "INFO everything has the section"
    );
}

/// Cuckoo filters have their own fields in `INFO bf` (`bf_cf_filters`, ...), kept as the Bloom
/// filters' are, and with deletes besides.
#[test]
#[allow(clippy::too_many_lines)] // one filter's life, each step checked against the gauges
fn info_bf_counts_cuckoo_filters_apart() {
    let server = Server::start();
    let mut con = server.connection();
    let fields = ["filters", "bytes", "items", "sub_filters", "adds", "deletes", "lookups", "lookups_found"];
    let more = ["full_filter_errors", "refused_creations"];
    let zero = info_bf(&mut con);
    for field in fields.iter().chain(&more) {
        assert_eq!(zero.get(&format!("cf_{field}")), Some(&0), "cf_{field} in {zero:?}");
    }
    ok(&mut con, &["CF.RESERVE", "a", "100"]);
    assert_eq!(int(&mut con, &["CF.ADD", "a", "x"]), 1);
    assert_eq!(int(&mut con, &["CF.ADDNX", "a", "x"]), 0);
    let mut insert = vec!["CF.INSERT", "b", "ERROR", "0.001", "CAPACITY", "8", "ITEMS"];
    let items: Vec<String> = (0..200).map(|n| format!("i{n}")).collect();
    insert.extend(items.iter().map(String::as_str));
    ok(&mut con, &insert);
    ok(&mut con, &["CF.RESERVE", "full", "4", "BUCKETSIZE", "1", "EXPANSION", "0"]);
    let Value::Array(answers) = ok(&mut con, &["CF.INSERT", "full", "ITEMS", "s", "s", "s", "s", "s", "s"])
    else {
        panic!()
    };
    let refused = answers.iter().filter(|answer| **answer == Value::Int(-1)).count() as i64;
    assert!(refused > 0);
    assert!(err(&mut con, &["CF.RESERVE", "huge", "1099511627776"]).contains("Insufficient memory"));
    assert_eq!(int(&mut con, &["CF.EXISTS", "a", "x"]), 1);
    assert_eq!(int(&mut con, &["CF.EXISTS", "a", "never"]), 0);
    let Value::Array(found) = ok(&mut con, &["CF.MEXISTS", "b", "i1", "i2", "never"]) else { panic!() };
    let found = found.iter().filter(|answer| **answer == Value::Int(1)).count() as i64;
    assert_eq!(int(&mut con, &["CF.DEL", "a", "x"]), 1);
    assert_eq!(int(&mut con, &["CF.DEL", "a", "x"]), 0);

    let cf_info = |con: &mut redis::Connection, key: &str, label: &str| -> i64 {
        let Value::Array(fields) = ok(con, &["CF.INFO", key]) else { panic!() };
        let at = fields.iter().position(|field| *field == Value::SimpleString(label.into())).unwrap();
        let Value::Int(value) = fields[at + 1] else { panic!() };
        value
    };
    let sum = |con: &mut redis::Connection, keys: &[&str], label: &str| -> i64 {
        keys.iter().map(|key| cf_info(con, key, label)).sum()
    };
    let keys = ["a", "b", "full"];
    let stats = info_bf(&mut con);
    assert_eq!(stats["cf_filters"], 3);
    assert_eq!(stats["cf_items"], sum(&mut con, &keys, "Number of items inserted"));
    assert_eq!(stats["cf_bytes"], sum(&mut con, &keys, "Size"));
    assert_eq!(stats["cf_sub_filters"], sum(&mut con, &keys, "Number of filters"));
    assert!(stats["cf_sub_filters"] > 3, "b grew");
    let added_to_full = answers.len() as i64 - refused;
    assert_eq!(stats["cf_adds"], 1 + 200 + added_to_full);
    assert_eq!(stats["cf_full_filter_errors"], refused);
    assert_eq!(stats["cf_refused_creations"], 1);
    assert_eq!(stats["cf_lookups"], 2 + 3);
    assert_eq!(stats["cf_lookups_found"], 1 + found);
    assert_eq!(stats["cf_deletes"], 1);
    assert_eq!(
        (stats["filters"], stats["adds"], stats["lookups"]),
        (0, 0, 0),
        "Bloom filters' fields stay apart"
    );

    // The gauges against the filters themselves, after every way of growing, shrinking and
    // copying one.
    let assert_gauges = |con: &mut redis::Connection, keys: &[&str], step: &str| {
        let stats = info_bf(con);
        assert_eq!(stats["cf_filters"], keys.len() as i64, "{step}");
        for (field, label) in [
            ("cf_items", "Number of items inserted"),
            ("cf_bytes", "Size"),
            ("cf_sub_filters", "Number of filters"),
        ] {
            assert_eq!(stats[field], sum(con, keys, label), "{field} after {step}");
        }
    };
    ok(&mut con, &["CF.RESERVE", "chain", "8", "BUCKETSIZE", "1", "EXPANSION", "2"]);
    let chain_items: Vec<String> = (0..60).map(|n| format!("c{n}")).collect();
    let mut insert = vec!["CF.INSERT", "chain", "ITEMS"];
    insert.extend(chain_items.iter().map(String::as_str));
    ok(&mut con, &insert);
    let grown = cf_info(&mut con, "chain", "Number of filters");
    assert!(grown > 2, "chain grew");
    // Deleting everything but one item leaves the newer sub-filters empty, for the automatic
    // compactions and CF.COMPACT to drop.
    for item in &chain_items[1..] {
        assert_eq!(int(&mut con, &["CF.DEL", "chain", item]), 1);
    }
    ok(&mut con, &["CF.COMPACT", "chain"]);
    assert!(cf_info(&mut con, "chain", "Number of filters") < grown, "the chain shrank");
    let mut keys = vec!["a", "b", "full", "chain"];
    assert_gauges(&mut con, &keys, "growth, deletes and compactions");
    let Value::BulkString(payload) = ok(&mut con, &["DUMP", "chain"]) else { panic!() };
    call_bytes(&mut con, &[b"RESTORE", b"restored", b"0", &payload]).unwrap();
    let mut iterator = 0;
    loop {
        let Value::Array(pair) = ok(&mut con, &["CF.SCANDUMP", "b", &iterator.to_string()]) else { panic!() };
        let (Value::Int(next), Value::BulkString(data)) = (&pair[0], &pair[1]) else { break };
        call_bytes(&mut con, &[b"CF.LOADCHUNK", b"loaded", next.to_string().as_bytes(), data]).unwrap();
        iterator = *next;
    }
    assert_eq!(int(&mut con, &["CF.ADD", "created", "x"]), 1);
    keys.extend(["restored", "loaded", "created"]);
    assert_gauges(&mut con, &keys, "RESTORE, LOADCHUNK and a creating CF.ADD");
    ok(&mut con, &["DEL", "restored", "a"]);
    keys.retain(|key| *key != "restored" && *key != "a");
    wait_for_info(&mut con, "cf_filters", keys.len() as i64);
    assert_gauges(&mut con, &keys, "DEL");

    assert_eq!(int(&mut con, &["COPY", "b", "c"]), 1);
    keys.push("c");
    ok(&mut con, &["DEBUG", "RELOAD"]);
    wait_for_info(&mut con, "cf_filters", keys.len() as i64);
    assert_gauges(&mut con, &keys, "COPY and DEBUG RELOAD");
    ok(&mut con, &["FLUSHALL", "ASYNC"]);
    wait_for_info(&mut con, "cf_filters", 0);
    let empty = info_bf(&mut con);
    for field in ["cf_bytes", "cf_items", "cf_sub_filters"] {
        assert_eq!(empty[field], 0, "{field}");
    }
}

/// Every field of `INFO bf`, in its order: the names monitoring has been told of. A field
/// renamed, lost or reordered fails here.
#[test]
fn info_bf_lists_every_field_in_its_order() {
    let server = Server::start();
    let mut con = server.connection();
    let names: Vec<String> = info_text(&mut con, "bf")
        .lines()
        .filter_map(|line| line.split_once(':'))
        .map(|(name, _)| name.to_string())
        .collect();
    let expected = [
        "cf_filters",
        "cf_bytes",
        "cf_items",
        "cf_sub_filters",
        "cf_adds",
        "cf_deletes",
        "cf_lookups",
        "cf_lookups_found",
        "cf_full_filter_errors",
        "cf_refused_creations",
        "cms_sketches",
        "cms_bytes",
        "cms_window_timer_keys",
        "cms_increments",
        "cms_queries",
        "cms_refused_creations",
        "topk_sketches",
        "topk_bytes",
        "topk_window_timer_keys",
        "topk_adds",
        "topk_queries",
        "topk_refused_creations",
        "tdigest_digests",
        "tdigest_bytes",
        "tdigest_observations",
        "tdigest_window_timer_keys",
        "tdigest_adds",
        "tdigest_queries",
        "tdigest_refused_creations",
    ];
    let expected: Vec<String> =
        BLOOM_FIELDS.iter().chain(&expected).map(|name| format!("bf_{name}")).collect();
    assert_eq!(names, expected);
}

/// A windowed filter counts in `bf_bytes` as its `BF.INFO` Size and MEMORY USAGE count it
/// (its structure too, not only its generations' bits): empty, filled, past its base into
/// an overflow, and gone.
#[test]
fn windowed_filters_count_their_whole_memory() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["BF.RESERVE", "empty", "0.01", "1000", "WINDOW", "86400000"]);
    ok(&mut con, &["BF.RESERVE", "filled", "0.01", "1000", "WINDOW", "86400000"]);
    madd_all(&mut con, "filled", (0..100).map(|n| format!("f{n}")));
    ok(&mut con, &["BF.RESERVE", "burst", "0.01", "100", "WINDOW", "86400000"]);
    madd_all(&mut con, "burst", (0..1000).map(|n| format!("b{n}")));
    let keys = ["empty", "filled", "burst"];
    let sizes: Vec<i64> = keys.iter().map(|key| filter_size(&mut con, key)).collect();
    assert!(sizes[0] > 0 && sizes[1] > sizes[0] && sizes[2] > sizes[1], "{sizes:?}");
    assert_eq!(info_bf(&mut con)["bytes"], sizes.iter().sum::<i64>());
    ok(&mut con, &["DEL", "filled"]);
    assert_eq!(info_bf(&mut con)["bytes"], sizes[0] + sizes[2]);
}

/// A windowed filter whose generations all expired gives back everything but what a new one
/// takes, the room for its generations included, by the timer's rotation alone.
#[test]
fn an_idle_windowed_filter_takes_what_a_new_one_does() {
    let server = Server::start();
    let mut con = server.connection();
    for key in ["new", "old"] {
        ok(&mut con, &["BF.RESERVE", key, "0.01", "1000", "WINDOW", "300"]);
    }
    let new = filter_size(&mut con, "new");
    madd_all(&mut con, "old", (0..500).map(|n| format!("i{n}")));
    assert!(filter_size(&mut con, "old") > new);
    // Everything expires within 375 ms of the last add; the timer visits every 100 ms.
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert_eq!(filter_size(&mut con, "old"), new);
    assert_eq!(info_bf(&mut con)["bytes"], 2 * new);
}
