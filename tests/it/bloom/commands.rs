//! Every BF.* command and every error of docs/bf-commands.md, against a real server, under
//! RESP2 and RESP3.

use crate::harness::*;
use redis::{ProtocolVersion, Value};

#[test]
fn add_and_exists_under_both_protocols() {
    let server = Server::start();
    for (protocol, mut con) in server.connections() {
        let key = format!("add-{protocol:?}");
        assert!(as_bool(&ok(&mut con, &["BF.ADD", &key, "apple"]), protocol));
        assert!(!as_bool(&ok(&mut con, &["BF.ADD", &key, "apple"]), protocol));
        assert!(as_bool(&ok(&mut con, &["BF.EXISTS", &key, "apple"]), protocol));
        assert!(!as_bool(&ok(&mut con, &["BF.EXISTS", &key, "pear"]), protocol));
        assert!(!as_bool(&ok(&mut con, &["BF.EXISTS", "missing", "apple"]), protocol));

        let Value::Array(added) = ok(&mut con, &["BF.MADD", &key, "apple", "pear", "plum"]) else { panic!() };
        let added: Vec<bool> = added.iter().map(|v| as_bool(v, protocol)).collect();
        assert_eq!(added, [false, true, true]);
        let Value::Array(found) = ok(&mut con, &["BF.MEXISTS", &key, "plum", "kiwi", "apple"]) else {
            panic!()
        };
        let found: Vec<bool> = found.iter().map(|v| as_bool(v, protocol)).collect();
        assert_eq!(found, [true, false, true]);
        let Value::Array(none) = ok(&mut con, &["BF.MEXISTS", "missing", "a", "b"]) else { panic!() };
        assert!(none.iter().all(|v| !as_bool(v, protocol)));
        assert_eq!(int(&mut con, &["BF.CARD", &key]), 3);
        assert_eq!(int(&mut con, &["BF.CARD", "missing"]), 0);
    }
}

#[test]
fn exists_answers_zero_for_another_type_but_writes_refuse_it() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["SET", "text", "value"]);
    assert_eq!(int(&mut con, &["BF.EXISTS", "text", "a"]), 0);
    assert_eq!(
        ok(&mut con, &["BF.MEXISTS", "text", "a", "b"]),
        Value::Array(vec![Value::Int(0), Value::Int(0)])
    );
    let wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value";
    for args in [
        &["BF.ADD", "text", "a"][..],
        &["BF.MADD", "text", "a"],
        &["BF.INSERT", "text", "ITEMS", "a"],
        &["BF.RESERVE", "text", "0.01", "100"],
        &["BF.CARD", "text"],
        &["BF.INFO", "text"],
        &["BF.DEBUG", "text"],
        &["BF.SCANDUMP", "text", "0"],
        &["BF.LOADCHUNK", "text", "1", "x"],
    ] {
        assert_eq!(err(&mut con, args), wrongtype, "{args:?}");
    }
    assert_eq!(ok(&mut con, &["GET", "text"]), Value::BulkString(b"value".to_vec()));
}

#[test]
fn arity_errors_are_redis_own() {
    let server = Server::start();
    let mut con = server.connection();
    for (args, name) in [
        (&["BF.ADD", "k"][..], "bf.add"),
        (&["BF.ADD", "k", "a", "b"], "bf.add"),
        (&["BF.MADD", "k"], "bf.madd"),
        (&["BF.EXISTS", "k"], "bf.exists"),
        (&["BF.MEXISTS", "k"], "bf.mexists"),
        (&["BF.RESERVE", "k", "0.01"], "bf.reserve"),
        (&["BF.INSERT", "k", "ITEMS"], "bf.insert"),
        (&["BF.INFO"], "bf.info"),
        (&["BF.CARD"], "bf.card"),
        (&["BF.SCANDUMP", "k"], "bf.scandump"),
        (&["BF.LOADCHUNK", "k", "1"], "bf.loadchunk"),
        (&["BF.DEBUG"], "bf.debug"),
    ] {
        assert_eq!(
            err(&mut con, args),
            format!("ERR wrong number of arguments for '{name}' command"),
            "{args:?}"
        );
    }
    // Arities the command itself checks: options that need more arguments.
    ok(&mut con, &["BF.ADD", "k", "a"]);
    assert!(
        err(&mut con, &["BF.INFO", "k", "CAPACITY", "extra"]).starts_with("ERR wrong number of arguments")
    );
    assert!(err(&mut con, &["BF.INSERT", "n", "CAPACITY", "10", "ITEMS"]).starts_with("ERR wrong number"));
    assert!(err(&mut con, &["BF.INSERT", "n", "NOCREATE", "CAPACITY"]).starts_with("ERR wrong number"));
    assert!(
        err(&mut con, &["BF.INSERT", "n", "CAPACITY", "10", "NONSCALING"]).starts_with("ERR wrong number")
    );
}

#[test]
fn reserve_creates_exactly_what_was_asked() {
    let server = Server::start();
    let mut con = server.connection();
    assert_eq!(ok(&mut con, &["BF.RESERVE", "r", "0.001", "5000"]), Value::Okay);
    let info = ok(&mut con, &["BF.INFO", "r"]);
    let Value::Array(pairs) = info else { panic!("{info:?}") };
    assert_eq!(pairs.len(), 10);
    assert_eq!(pairs[0], simple("Capacity"));
    assert_eq!(pairs[1], Value::Int(5000));
    assert_eq!(pairs[4], simple("Number of filters"));
    assert_eq!(pairs[5], Value::Int(1));
    assert_eq!(pairs[9], Value::Int(2), "default expansion");

    assert_eq!(err(&mut con, &["BF.RESERVE", "r", "0.01", "100"]), "ERR item exists");
    ok(&mut con, &["BF.RESERVE", "ns", "0.01", "3", "NONSCALING"]);
    assert_eq!(ok(&mut con, &["BF.INFO", "ns", "EXPANSION"]), Value::Array(vec![Value::Nil]));
    ok(&mut con, &["BF.RESERVE", "e4", "0.01", "100", "EXPANSION", "4"]);
    assert_eq!(ok(&mut con, &["BF.INFO", "e4", "EXPANSION"]), Value::Array(vec![Value::Int(4)]));
    ok(&mut con, &["BF.RESERVE", "e0", "0.01", "100", "EXPANSION", "0"]);
    assert_eq!(ok(&mut con, &["BF.INFO", "e0", "EXPANSION"]), Value::Array(vec![Value::Nil]));
    // Options in any order; unknown tokens (a bare expansion number) are ignored.
    ok(&mut con, &["BF.RESERVE", "lenient", "0.01", "100", "4"]);
    assert_eq!(ok(&mut con, &["BF.INFO", "lenient", "EXPANSION"]), Value::Array(vec![Value::Int(2)]));
    ok(&mut con, &["BF.RESERVE", "order", "0.01", "100", "NONSCALING", "EXPANSION", "0"]);
    ok(&mut con, &["BF.RESERVE", "zero-exp", "0.01", "100", "EXPANSION", "0", "NONSCALING"]);
    // Extreme but valid parameters.
    ok(&mut con, &["BF.RESERVE", "tiny", "0.999", "1"]);
    ok(&mut con, &["BF.RESERVE", "strict", "1e-9", "1000"]);
}

#[test]
fn reserve_errors_exactly() {
    let server = Server::start();
    let mut con = server.connection();
    let cases: &[(&[&str], &str)] = &[
        (&["BF.RESERVE", "k", "abc", "100"], "ERR bad error rate"),
        (&["BF.RESERVE", "k", "nan", "100"], "ERR bad error rate"),
        (&["BF.RESERVE", "k", "0", "100"], "ERR error rate must be in the range (0.000000, 1.000000)"),
        (&["BF.RESERVE", "k", "1", "100"], "ERR error rate must be in the range (0.000000, 1.000000)"),
        (&["BF.RESERVE", "k", "-0.5", "100"], "ERR error rate must be in the range (0.000000, 1.000000)"),
        (&["BF.RESERVE", "k", "0.01", "abc"], "ERR bad capacity"),
        (&["BF.RESERVE", "k", "0.01", "1.5"], "ERR bad capacity"),
        (&["BF.RESERVE", "k", "0.01", "0"], "ERR capacity must be in the range [1, 1073741824]"),
        (&["BF.RESERVE", "k", "0.01", "1073741825"], "ERR capacity must be in the range [1, 1073741824]"),
        (&["BF.RESERVE", "k", "0.01", "-3"], "ERR capacity must be in the range [1, 1073741824]"),
        (&["BF.RESERVE", "k", "0.01", "100", "EXPANSION"], "ERR no expansion"),
        (&["BF.RESERVE", "k", "0.01", "100", "EXPANSION", "x"], "ERR bad expansion"),
        (
            &["BF.RESERVE", "k", "0.01", "100", "EXPANSION", "32769"],
            "ERR expansion must be in the range [0, 32768]",
        ),
        (
            &["BF.RESERVE", "k", "0.01", "100", "EXPANSION", "-1"],
            "ERR expansion must be in the range [0, 32768]",
        ),
        (
            &["BF.RESERVE", "k", "0.01", "100", "EXPANSION", "2", "NONSCALING"],
            "Nonscaling filters cannot expand",
        ),
        (
            &["BF.RESERVE", "k", "0.01", "100", "NONSCALING", "EXPANSION", "2"],
            "Nonscaling filters cannot expand",
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(err(&mut con, args), *expected, "{args:?}");
    }
    assert_eq!(int(&mut con, &["EXISTS", "k"]), 0, "failed reservations create nothing");
}

#[test]
fn high_error_rates_are_capped() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["BF.RESERVE", "k", "0.9", "100", "NONSCALING"]);
    let Value::Array(lines) = ok(&mut con, &["BF.DEBUG", "k"]) else { panic!() };
    let line = format!("{:?}", lines[1]);
    assert!(line.contains("ratio:0.25"), "{line}");
    assert!(server.log().contains("capped"));
}

#[test]
fn insert_options_and_errors() {
    let server = Server::start();
    for (protocol, mut con) in server.connections() {
        let key = format!("ins-{protocol:?}");
        let reply = ok(
            &mut con,
            &[
                "BF.INSERT",
                &key,
                "CAPACITY",
                "1000",
                "ERROR",
                "0.001",
                "EXPANSION",
                "3",
                "ITEMS",
                "a",
                "b",
                "a",
            ],
        );
        let Value::Array(items) = reply else { panic!() };
        assert_eq!(items.iter().map(|v| as_bool(v, protocol)).collect::<Vec<_>>(), [true, true, false]);
        let capacity = ok(&mut con, &["BF.INFO", &key, "CAPACITY"]);
        if protocol == ProtocolVersion::RESP3 {
            assert_eq!(capacity, Value::Map(vec![(simple("Capacity"), Value::Int(1000))]));
        } else {
            assert_eq!(capacity, Value::Array(vec![Value::Int(1000)]));
        }
        // Options are ignored once the filter exists.
        ok(&mut con, &["BF.INSERT", &key, "CAPACITY", "5", "NONSCALING", "ITEMS", "c"]);
        let expansion = ok(&mut con, &["BF.INFO", &key, "expansion"]);
        if protocol == ProtocolVersion::RESP3 {
            assert_eq!(expansion, Value::Map(vec![(simple("Expansion rate"), Value::Int(3))]));
        } else {
            assert_eq!(expansion, Value::Array(vec![Value::Int(3)]));
        }
    }
    let mut con = server.connection();
    assert_eq!(err(&mut con, &["BF.INSERT", "nc", "NOCREATE", "ITEMS", "a"]), "ERR not found");
    assert_eq!(
        err(&mut con, &["BF.INSERT", "nc", "CAPACITY", "100", "ERROR", "0.01", "NOCREATE", "ITEMS", "a"]),
        "ERR not found"
    );
    assert_eq!(int(&mut con, &["EXISTS", "nc"]), 0);
    let cases: &[(&[&str], &str)] = &[
        (&["BF.INSERT", "x", "ERROR", "abc", "ITEMS", "a"], "Bad error rate"),
        (&["BF.INSERT", "x", "ERROR", "2", "ITEMS", "a"], "Bad error rate"),
        (&["BF.INSERT", "x", "CAPACITY", "abc", "ITEMS", "a"], "Bad capacity"),
        (&["BF.INSERT", "x", "CAPACITY", "0", "ITEMS", "a"], "Bad capacity"),
        (&["BF.INSERT", "x", "EXPANSION", "abc", "ITEMS", "a"], "Bad expansion"),
        (&["BF.INSERT", "x", "EXPANSION", "40000", "ITEMS", "a"], "Bad expansion"),
        (&["BF.INSERT", "x", "FOO", "ITEMS", "a"], "Unknown argument received"),
    ];
    for (args, expected) in cases {
        assert_eq!(err(&mut con, args), *expected, "{args:?}");
    }
    assert_eq!(int(&mut con, &["EXISTS", "x"]), 0);
    // NONSCALING wins over EXPANSION in INSERT, in either order, as in RedisBloom 2.8.2 and
    // Redis 8 (only RESERVE refuses the two together).
    for (key, options) in
        [("ns1", ["NONSCALING", "EXPANSION", "2"]), ("ns2", ["EXPANSION", "2", "NONSCALING"])]
    {
        let mut args = vec!["BF.INSERT", key];
        args.extend(options);
        args.extend(["ITEMS", "a"]);
        ok(&mut con, &args);
        assert_eq!(ok(&mut con, &["BF.INFO", key, "EXPANSION"]), Value::Array(vec![Value::Nil]), "{key}");
    }
    ok(&mut con, &["BF.INSERT", "ns", "CAPACITY", "10", "NONSCALING", "ITEMS", "a"]);
    assert_eq!(ok(&mut con, &["BF.INFO", "ns", "EXPANSION"]), Value::Array(vec![Value::Nil]));
}

/// Fills a non-scaling filter of capacity 3, then checks where the full error lands.
#[test]
fn a_full_non_scaling_filter_reports_at_the_item_that_did_not_fit() {
    let server = Server::start();
    for (protocol, mut con) in server.connections() {
        let key = format!("full-{protocol:?}");
        ok(&mut con, &["BF.RESERVE", &key, "0.001", "3", "NONSCALING"]);
        let reply = ok(&mut con, &["BF.MADD", &key, "a", "b", "a", "c", "d", "e"]);
        let Value::Array(items) = reply else { panic!() };
        assert_eq!(items.len(), 5, "stops after the error: {items:?}");
        assert!(as_bool(&items[0], protocol) && as_bool(&items[1], protocol));
        assert!(!as_bool(&items[2], protocol));
        assert!(as_bool(&items[3], protocol));
        match &items[4] {
            Value::ServerError(error) => {
                assert_eq!(server_error_text(error), "ERR non scaling filter is full");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(err(&mut con, &["BF.ADD", &key, "zzz"]), "ERR non scaling filter is full");
        assert!(!as_bool(&ok(&mut con, &["BF.ADD", &key, "a"]), protocol), "a present item is no error");
        let Value::Array(items) = ok(&mut con, &["BF.INSERT", &key, "ITEMS", "b", "yyy", "c"]) else {
            panic!()
        };
        assert_eq!(items.len(), 2);
        assert!(matches!(&items[1], Value::ServerError(_)));
        assert_eq!(int(&mut con, &["BF.CARD", &key]), 3);
    }
}

#[test]
fn info_in_every_form() {
    let server = Server::start();
    ok(&mut server.connection(), &["BF.RESERVE", "k", "0.01", "1000"]);
    ok(&mut server.connection(), &["BF.MADD", "k", "a", "b"]);
    let mut con = server.connection();
    let Value::Array(pairs) = ok(&mut con, &["BF.INFO", "k"]) else { panic!() };
    let labels: Vec<&Value> = pairs.iter().step_by(2).collect();
    assert_eq!(
        labels,
        ["Capacity", "Size", "Number of filters", "Number of items inserted", "Expansion rate"]
            .map(simple)
            .iter()
            .collect::<Vec<_>>()
    );
    let Value::Int(size) = pairs[3] else { panic!() };
    assert_eq!(pairs[7], Value::Int(2));
    let memory = int(&mut con, &["MEMORY", "USAGE", "k"]);
    assert!(memory >= size && memory < size + 200, "MEMORY USAGE {memory} vs Size {size}");
    assert!(size > 1000 && size < 3000, "{size}");

    let mut con3 = server.connection_resp3();
    let Value::Map(map) = ok(&mut con3, &["BF.INFO", "k"]) else { panic!() };
    assert_eq!(map.len(), 5);
    assert_eq!(map[0], (simple("Capacity"), Value::Int(1000)));
    assert_eq!(map[4], (simple("Expansion rate"), Value::Int(2)));

    for (field, label, value) in [
        ("capacity", "Capacity", Value::Int(1000)),
        ("Size", "Size", Value::Int(size)),
        ("FILTERS", "Number of filters", Value::Int(1)),
        ("items", "Number of items inserted", Value::Int(2)),
        ("EXPANSION", "Expansion rate", Value::Int(2)),
    ] {
        assert_eq!(ok(&mut con, &["BF.INFO", "k", field]), Value::Array(vec![value.clone()]));
        assert_eq!(ok(&mut con3, &["BF.INFO", "k", field]), Value::Map(vec![(simple(label), value)]));
    }
    assert_eq!(err(&mut con, &["BF.INFO", "k", "bogus"]), "Invalid information value");
    assert_eq!(err(&mut con, &["BF.INFO", "missing"]), "ERR not found");
    assert_eq!(err(&mut con3, &["BF.INFO", "missing", "CAPACITY"]), "ERR not found");
}

#[test]
fn debug_describes_every_sub_filter() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["BF.RESERVE", "k", "0.01", "10", "EXPANSION", "2"]);
    madd_all(&mut con, "k", (0..100).map(|n| format!("item{n}")));
    let Value::Array(lines) = ok(&mut con, &["BF.DEBUG", "k"]) else { panic!() };
    let lines: Vec<String> = lines
        .iter()
        .map(|line| match line {
            Value::BulkString(bytes) => String::from_utf8(bytes.clone()).unwrap(),
            Value::SimpleString(text) => text.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    let card = int(&mut con, &["BF.CARD", "k"]);
    assert_eq!(lines[0], format!("size:{card}"));
    assert!(lines.len() >= 4, "{lines:?}");
    let first = &lines[1];
    assert!(first.starts_with("bytes:"), "{first}");
    assert!(first.contains(" hashwidth:64 capacity:10 size:10 ratio:0.005"), "{first}");
    assert!(lines[2].contains("capacity:20 size:20 ratio:0.0025"), "{}", lines[2]);
    assert!(lines[3].contains("ratio:0.00125"), "{}", lines[3]);
    let filters = ok(&mut con, &["BF.INFO", "k", "FILTERS"]);
    assert_eq!(filters, Value::Array(vec![Value::Int(lines.len() as i64 - 1)]));
    assert_eq!(err(&mut con, &["BF.DEBUG", "missing"]), "ERR not found");
}

#[test]
fn scaling_adds_sub_filters_with_growing_capacity() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["BF.RESERVE", "k", "0.01", "100", "EXPANSION", "3"]);
    let added = madd_all(&mut con, "k", (0..5000).map(|n| format!("v{n}")));
    assert_eq!(int(&mut con, &["BF.CARD", "k"]) as u64, added);
    let capacity = match ok(&mut con, &["BF.INFO", "k", "CAPACITY"]) {
        Value::Array(v) => match v[0] {
            Value::Int(n) => n,
            _ => panic!(),
        },
        _ => panic!(),
    };
    // 100 + 300 + 900 + 2700 + 8100 covers 5000 items.
    assert_eq!(capacity, 12100);
    assert_eq!(count_present(&mut con, "k", (0..5000).map(|n| format!("v{n}"))), 5000);
}

#[test]
fn scandump_and_loadchunk_errors() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["BF.ADD", "k", "a"]);
    assert_eq!(err(&mut con, &["BF.SCANDUMP", "k", "abc"]), "Second argument must be numeric");
    assert_eq!(err(&mut con, &["BF.SCANDUMP", "missing", "0"]), "ERR not found");
    assert_eq!(err(&mut con, &["BF.LOADCHUNK", "k", "abc", "x"]), "ERR Second argument must be numeric");
    assert_eq!(err(&mut con, &["BF.LOADCHUNK", "new", "1", "not a header"]), "ERR received bad data");
    assert_eq!(err(&mut con, &["BF.LOADCHUNK", "missing", "100", "data"]), "ERR not found");
    assert_eq!(err(&mut con, &["BF.LOADCHUNK", "k", "100000", "data"]), "ERR invalid offset - no link found");
    let too_big = "x".repeat(5000);
    assert_eq!(
        err(&mut con, &["BF.LOADCHUNK", "k", &(1 + too_big.len()).to_string(), &too_big]),
        "ERR invalid chunk - Too big for current filter"
    );
    assert_eq!(int(&mut con, &["EXISTS", "new"]), 0);
    assert_eq!(int(&mut con, &["BF.EXISTS", "k", "a"]), 1, "refused chunks change nothing");
    // The end of a dump is [0, ""], an empty bulk string.
    let Value::Array(header) = ok(&mut con, &["BF.SCANDUMP", "k", "0"]) else { panic!() };
    assert_eq!(header[0], Value::Int(1));
    let Value::Array(chunk) = ok(&mut con, &["BF.SCANDUMP", "k", "1"]) else { panic!() };
    let Value::Int(next) = chunk[0] else { panic!() };
    let Value::Array(end) = ok(&mut con, &["BF.SCANDUMP", "k", &next.to_string()]) else { panic!() };
    assert_eq!(end, vec![Value::Int(0), Value::BulkString(vec![])]);
    let Value::Array(negative) = ok(&mut con, &["BF.SCANDUMP", "k", "-3"]) else { panic!() };
    assert_eq!(negative, vec![Value::Int(0), Value::BulkString(vec![])]);
    // Numbers are read as Redis reads them.
    for bad in ["007", "+5", "-0", "1.0", ""] {
        assert_eq!(err(&mut con, &["BF.SCANDUMP", "k", bad]), "Second argument must be numeric", "{bad:?}");
    }
    assert_eq!(err(&mut con, &["BF.LOADCHUNK", "k", "3", "longer than three"]), "ERR received bad data");
    // An iterator equal to the chunk's length names the byte before the first: in no link.
    assert_eq!(err(&mut con, &["BF.LOADCHUNK", "k", "3", "abc"]), "ERR invalid offset - no link found");
    assert_eq!(err(&mut con, &["BF.LOADCHUNK", "k", "2", "abc"]), "ERR received bad data");
}

#[test]
fn tiny_error_rates_and_long_chains_are_served() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["BF.RESERVE", "tiny", "1e-25", "100"]);
    ok(&mut con, &["BF.ADD", "tiny", "a"]);
    assert_eq!(int(&mut con, &["BF.EXISTS", "tiny", "a"]), 1);
    // Expansion 1 halves the rate of every new sub-filter: 60 of them still grow.
    ok(&mut con, &["BF.RESERVE", "chain", "0.01", "1", "EXPANSION", "1"]);
    let added = madd_all(&mut con, "chain", (0..60).map(|n| format!("c{n}")));
    let Value::Array(filters) = ok(&mut con, &["BF.INFO", "chain", "FILTERS"]) else { panic!() };
    assert_eq!(filters, vec![Value::Int(added as i64)]);
    assert!(added >= 58);
    ok(&mut con, &["DEBUG", "RELOAD"]);
    assert_eq!(count_present(&mut con, "chain", (0..60).map(|n| format!("c{n}"))), 60);
}

#[test]
fn size_is_the_same_after_a_reload() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["BF.RESERVE", "k", "0.01", "10"]);
    madd_all(&mut con, "k", (0..500).map(|n| format!("s{n}")));
    let size = ok(&mut con, &["BF.INFO", "k", "SIZE"]);
    let usage = int(&mut con, &["MEMORY", "USAGE", "k"]);
    ok(&mut con, &["DEBUG", "RELOAD"]);
    assert_eq!(ok(&mut con, &["BF.INFO", "k", "SIZE"]), size);
    assert_eq!(int(&mut con, &["MEMORY", "USAGE", "k"]), usage);
}

#[test]
fn huge_pages_when_asked_for() {
    let server = Server::start_with(&["huge-pages", "yes"], &[]);
    let mut con = server.connection();
    assert_eq!(
        ok(&mut con, &["CONFIG", "GET", "bf.huge-pages"]),
        Value::Array(vec![Value::BulkString(b"bf.huge-pages".to_vec()), Value::BulkString(b"yes".to_vec())])
    );
    ok(&mut con, &["BF.RESERVE", "big", "0.01", "50000000", "NONSCALING"]);
    madd_all(&mut con, "big", (0..1000).map(|n| format!("h{n}")));
    assert_eq!(count_present(&mut con, "big", (0..1000).map(|n| format!("h{n}"))), 1000);
    // The kernel honours the advice only in THP's "madvise" mode (in "always" mode Redis
    // turns THP off for itself); there the filter must sit on huge pages.
    let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if mode.contains("[madvise]") {
        let Value::BulkString(info) = ok(&mut con, &["INFO", "server"]) else { panic!() };
        let info = String::from_utf8_lossy(&info);
        let pid = info.lines().find_map(|l| l.strip_prefix("process_id:")).unwrap().trim().to_string();
        let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap();
        let huge_kb: u64 = smaps
            .lines()
            .find_map(|l| l.strip_prefix("AnonHugePages:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        assert!(huge_kb >= 32 * 1024, "only {huge_kb} kB on huge pages");
    } else {
        eprintln!("transparent huge pages are '{}' here: placement not checked", mode.trim());
    }
}

#[test]
fn insufficient_memory_is_an_error_and_the_server_lives() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["SET", "other", "kept"]);
    assert_eq!(
        err(&mut con, &["BF.RESERVE", "huge", "0.0000001", "1073741824"]),
        "ERR Insufficient memory to create filter"
    );
    assert_eq!(
        err(&mut con, &["BF.INSERT", "huge", "CAPACITY", "1073741824", "ERROR", "1e-9", "ITEMS", "a"]),
        "ERR Insufficient memory to create filter"
    );
    assert_eq!(int(&mut con, &["EXISTS", "huge"]), 0);
    // Beyond the configured cap, smaller than the machine.
    ok(&mut con, &["CONFIG", "SET", "bf.max-filter-bytes", "100000"]);
    assert_eq!(
        err(&mut con, &["BF.RESERVE", "capped", "0.01", "1000000"]),
        "ERR Insufficient memory to create filter"
    );
    ok(&mut con, &["BF.RESERVE", "small", "0.01", "1000"]);
    // Growth beyond the cap is refused too, and what was added stays.
    ok(&mut con, &["BF.RESERVE", "grows", "0.01", "10000", "EXPANSION", "4"]);
    let items: Vec<String> = (0..60_000).map(|n| format!("g{n}")).collect();
    let mut refused = false;
    let mut acknowledged = Vec::new();
    for item in &items {
        match call(&mut con, &["BF.ADD", "grows", item]) {
            Ok(_) => acknowledged.push(item.clone()),
            Err(error) => {
                assert_eq!(error, "ERR Insufficient memory to create filter");
                refused = true;
                break;
            }
        }
    }
    assert!(refused);
    assert_eq!(count_present(&mut con, "grows", acknowledged.iter().cloned()), acknowledged.len() as u64);
    assert_eq!(ok(&mut con, &["PING"]), simple("PONG"));
    assert_eq!(ok(&mut con, &["GET", "other"]), Value::BulkString(b"kept".to_vec()));
}

/// `BF.INFO key ERROR`: the error rate the filter has now, estimated from its fill, alone
/// (the plain reply keeps its five pairs): a one-element array under RESP2, a one-entry map
/// under RESP3.
#[test]
fn info_estimates_the_error_rate_from_the_fill() {
    let server = Server::start();
    for (protocol, mut con) in server.connections() {
        let key = format!("estimate-{protocol:?}");
        ok(&mut con, &["BF.RESERVE", &key, "0.01", "1000", "NONSCALING"]);
        let rate = |con: &mut redis::Connection| -> f64 {
            match ok(con, &["BF.INFO", &key, "error"]) {
                Value::Array(values) => match &values[..] {
                    [Value::BulkString(text)] => String::from_utf8_lossy(text).parse().unwrap(),
                    [Value::Double(value)] => *value,
                    other => panic!("{other:?}"),
                },
                Value::Map(pairs) => {
                    assert_eq!(pairs[0].0, Value::SimpleString("Estimated error rate".into()));
                    let Value::Double(value) = pairs[0].1 else { panic!("{pairs:?}") };
                    value
                }
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(rate(&mut con), 0.0);
        madd_all(&mut con, &key, (0..1000).map(|n| format!("i{n}")));
        let full = rate(&mut con);
        assert!(full > 0.003 && full < 0.02, "a full 1% filter estimated at {full}");
        if protocol == redis::ProtocolVersion::RESP2 {
            let Value::Array(pairs) = ok(&mut con, &["BF.INFO", &key]) else { panic!() };
            assert_eq!(pairs.len(), 10, "the plain reply keeps its five pairs");
        }
    }
}
