//! CMS.* as Redis 8.12's RedisBloom answers it (pull requests 1063, 1064 and 1066: its
//! `tests/flow/test_cms.py` and `src/cms.c`), this module only, since no RedisBloom 8 binary
//! is here: `CELL_SIZE` and its errors, each cell size's bounds, negative increments, refusals
//! that change nothing (the counters, the total and the digest), CMS.INFO's fourth pair under
//! both protocols, MERGE across cell sizes, and memory that follows the cell size.

use crate::harness::*;
use redis::{Connection, ProtocolVersion, Value};

const SIZES: [(&str, i64); 4] = [("1", 255), ("2", 65_535), ("4", 4_294_967_295), ("8", i64::MAX)];
const OVERFLOW: &str = "CMS: INCRBY overflow";
const UNDERFLOW: &str = "CMS: INCRBY underflow";
const DIFFER: &str = "CMS: cell size is not equal";

/// An array element that is an error, as the client hands it over.
fn is_error(value: &Value, text: &str) -> bool {
    matches!(value, Value::ServerError(error) if server_error_text(error) == text)
}

/// CMS.INCRBY's array, each element a count or an error's text.
fn incrby(con: &mut Connection, args: &[&str]) -> Vec<Result<i64, String>> {
    let args = [&["CMS.INCRBY"][..], args].concat();
    let Value::Array(elements) = ok(con, &args) else { panic!("{args:?}: not an array") };
    elements
        .iter()
        .map(|element| match element {
            Value::Int(count) => Ok(*count),
            Value::ServerError(error) => Err(server_error_text(error)),
            other => panic!("{args:?}: element {other:?}"),
        })
        .collect()
}

/// What a refused command must leave as it was: the key's digest, its INFO and the counts.
fn state(con: &mut Connection, key: &str, items: &[&str]) -> (String, Value, Value) {
    let query = [&["CMS.QUERY", key][..], items].concat();
    (digest(con, key), ok(con, &["CMS.INFO", key]), ok(con, &query))
}

fn info(con: &mut Connection, key: &str, protocol: ProtocolVersion) -> Vec<(String, i64)> {
    let pairs: Vec<(Value, Value)> = match ok(con, &["CMS.INFO", key]) {
        Value::Array(flat) => {
            assert_eq!(protocol, ProtocolVersion::RESP2, "a flat array under RESP3");
            flat.chunks(2).map(|pair| (pair[0].clone(), pair[1].clone())).collect()
        }
        Value::Map(pairs) => {
            assert_eq!(protocol, ProtocolVersion::RESP3, "a map under RESP2");
            pairs
        }
        other => panic!("CMS.INFO answered {other:?}"),
    };
    pairs
        .into_iter()
        .map(|pair| match pair {
            (Value::SimpleString(label), Value::Int(value)) => (label, value),
            other => panic!("CMS.INFO pair {other:?}: labels are simple strings, values integers"),
        })
        .collect()
}

fn fields(width: i64, depth: i64, count: i64, cell_size: i64) -> Vec<(String, i64)> {
    [("width", width), ("depth", depth), ("count", count), ("cell_size", cell_size)]
        .map(|(label, value)| (label.to_string(), value))
        .to_vec()
}

#[test]
fn cell_size_is_an_optional_pair_with_redisbloom_s_errors() {
    let server = Server::start();
    for (protocol, mut con) in server.connections() {
        ok(&mut con, &["FLUSHALL"]);
        for (size, _) in SIZES {
            ok(&mut con, &["CMS.INITBYDIM", &format!("dim{size}"), "20", "5", "CELL_SIZE", size]);
            ok(&mut con, &["CMS.INITBYPROB", &format!("prob{size}"), "0.001", "0.01", "cell_size", size]);
            let size: i64 = size.parse().unwrap();
            assert_eq!(info(&mut con, &format!("dim{size}"), protocol), fields(20, 5, 0, size));
            assert_eq!(info(&mut con, &format!("prob{size}"), protocol), fields(2000, 7, 0, size));
        }
        // Without it, RedisBloom's 4 bytes, and INFO says so too.
        ok(&mut con, &["CMS.INITBYDIM", "default", "20", "5"]);
        assert_eq!(info(&mut con, "default", protocol), fields(20, 5, 0, 4));
        for bad in ["0", "3", "5", "6", "7", "9", "16", "-1", "-4", "blah", "", "4.5", "04", "+4", " 4"] {
            for (command, first, second) in
                [("CMS.INITBYDIM", "20", "5"), ("CMS.INITBYPROB", "0.001", "0.01")]
            {
                let refused = err(&mut con, &[command, "x", first, second, "CELL_SIZE", bad]);
                assert_eq!(refused, "CMS: CELL_SIZE must be 1, 2, 4 or 8", "{command} CELL_SIZE {bad:?}");
            }
        }
        for keyword in ["CELLSIZE", "OOR", "CELL_SIZE_", "4"] {
            assert_eq!(
                err(&mut con, &["CMS.INITBYDIM", "x", "20", "5", keyword, "1"]),
                "CMS: unknown argument"
            );
            assert_eq!(
                err(&mut con, &["CMS.INITBYPROB", "x", "0.001", "0.01", keyword, "1"]),
                "CMS: unknown argument"
            );
        }
        for args in [
            &["x", "20", "5", "CELL_SIZE"][..],
            &["x", "20", "5", "CELL_SIZE", "1", "2"],
            &["x", "20", "5", "1"],
        ] {
            let dim = err(&mut con, &[&["CMS.INITBYDIM"][..], args].concat());
            assert_eq!(dim, "ERR wrong number of arguments for 'cms.initbydim' command", "{args:?}");
            let prob = err(&mut con, &[&["CMS.INITBYPROB"][..], args].concat());
            assert_eq!(prob, "ERR wrong number of arguments for 'cms.initbyprob' command", "{args:?}");
        }
        // The key, then the dimensions, then the cell size.
        assert_eq!(
            err(&mut con, &["CMS.INITBYDIM", "default", "0", "5", "CELL_SIZE", "3"]),
            "CMS: key already exists"
        );
        assert_eq!(err(&mut con, &["CMS.INITBYDIM", "x", "0", "5", "CELL_SIZE", "3"]), "CMS: invalid width");
        assert_eq!(err(&mut con, &["CMS.INITBYDIM", "x", "5", "x", "CELL", "1"]), "CMS: invalid depth");
        let refused = err(&mut con, &["CMS.INITBYPROB", "x", "2", "0.01", "CELL_SIZE", "1"]);
        assert_eq!(refused, "CMS: invalid overestimation value");
        let refused = err(&mut con, &["CMS.INITBYDIM", "x", "4294967295", "4294967295", "CELL_SIZE", "0"]);
        assert_eq!(refused, "CMS: invalid init arguments");
        assert_eq!(ok(&mut con, &["EXISTS", "x"]), Value::Int(0), "a refused creation created nothing");
    }
}

#[test]
fn each_cell_size_counts_to_its_maximum_and_a_refusal_changes_nothing() {
    let server = Server::start();
    for (protocol, mut con) in server.connections() {
        ok(&mut con, &["FLUSHALL"]);
        for (size, max) in SIZES {
            // RedisBloom 8.12's test: a 1 x 1 sketch, whose one counter is exact.
            let key = format!("one{size}");
            ok(&mut con, &["CMS.INITBYDIM", &key, "1", "1", "CELL_SIZE", size]);
            assert_eq!(incrby(&mut con, &[&key, "a", &max.to_string()]), [Ok(max)]);
            let full = state(&mut con, &key, &["a"]);
            assert_eq!(incrby(&mut con, &[&key, "a", "1"]), [Err(OVERFLOW.into())], "{protocol:?} {size}");
            assert_eq!(incrby(&mut con, &[&key, "b", &i64::MAX.to_string()]), [Err(OVERFLOW.into())]);
            assert_eq!(state(&mut con, &key, &["a"]), full, "a refused increment changed {key}");
            // An increment of 0 answers the count, full or not (RedisBloom 2.8 answered the
            // overflow here).
            assert_eq!(incrby(&mut con, &[&key, "a", "0"]), [Ok(max)]);
            let size: i64 = size.parse().unwrap();
            assert_eq!(info(&mut con, &key, protocol), fields(1, 1, max, size));

            // Wider: a refused pair answers its error in its place, and the others count. (8-byte
            // counters stop short of their maximum here, to leave the total room for b.)
            let key = format!("wide{size}");
            let top = if size == 8 { max - 10 } else { max };
            ok(&mut con, &["CMS.INITBYDIM", &key, "100", "4", "CELL_SIZE", &size.to_string()]);
            assert_eq!(incrby(&mut con, &[&key, "a", &top.to_string(), "b", "5"]), [Ok(top), Ok(5)]);
            let before = state(&mut con, &key, &["a", "b"]);
            let over = (max - top + 1).to_string();
            let answers = incrby(&mut con, &[&key, "a", &over, "b", "-6", "b", "2"]);
            assert_eq!(answers, [Err(OVERFLOW.into()), Err(UNDERFLOW.into()), Ok(7)]);
            assert_ne!(state(&mut con, &key, &["a", "b"]).0, before.0, "b counted");
            assert_eq!(incrby(&mut con, &[&key, "b", "-2"]), [Ok(5)]);
            assert_eq!(state(&mut con, &key, &["a", "b"]), before, "a refused pair changed {key}");
            // Down to 0, and no further.
            let down = incrby(&mut con, &[&key, "a", &(-top).to_string(), "a", "-1"]);
            assert_eq!(down, [Ok(0), Err(UNDERFLOW.into())]);
            assert_eq!(info(&mut con, &key, protocol), fields(100, 4, 5, size));
        }
        // Under RESP3 the element is an error as well, the array's length the pairs'.
        let reply = ok(&mut con, &["CMS.INCRBY", "one1", "a", "1", "c", "0"]);
        let Value::Array(elements) = reply else { panic!("{reply:?}") };
        assert!(is_error(&elements[0], OVERFLOW) && elements[1] == Value::Int(255), "{elements:?}");
    }
}

#[test]
fn the_total_stops_at_i64_max() {
    // RedisBloom 8.12's test: CELL_SIZE 8, one item at i64::MAX, then 1 of an item whose own
    // counter has room.
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["CMS.INITBYDIM", "cms", "100", "1", "CELL_SIZE", "8"]);
    assert_eq!(incrby(&mut con, &["cms", "a", &i64::MAX.to_string()]), [Ok(i64::MAX)]);
    let other = (0..1000)
        .map(|n| format!("x{n}"))
        .find(|item| ok(&mut con, &["CMS.QUERY", "cms", item]) == Value::Array(vec![Value::Int(0)]))
        .unwrap();
    let before = state(&mut con, "cms", &["a", &other]);
    assert_eq!(incrby(&mut con, &["cms", &other, "1"]), [Err(OVERFLOW.into())]);
    assert_eq!(state(&mut con, "cms", &["a", &other]), before);
    assert_eq!(info(&mut con, "cms", ProtocolVersion::RESP2), fields(100, 1, i64::MAX, 8));
}

#[test]
fn increments_are_read_whole_before_any_counts() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["CMS.INITBYDIM", "k", "20", "5"]);
    ok(&mut con, &["CMS.INCRBY", "k", "a", "3"]);
    let before = state(&mut con, "k", &["a"]);
    let min = i64::MIN.to_string();
    // RedisBloom 8.12 refuses the one increment whose size is no i64, for the whole command.
    for (args, expected) in [
        (vec!["k", "a", &min], "CMS: invalid increment"),
        (vec!["k", "a", "1", "b", &min], "CMS: invalid increment"),
        (vec!["k", "a", &min, "b", "x"], "CMS: invalid increment"),
        (vec!["k", "a", "x", "b", &min], "CMS: Cannot parse number"),
        (vec!["k", "a", "-1", "b", "9223372036854775808"], "CMS: Cannot parse number"),
        (vec!["k", "a", "-0"], "CMS: Cannot parse number"),
        (vec!["missing", "a", &min], "CMS: key does not exist"),
    ] {
        assert_eq!(err(&mut con, &[&["CMS.INCRBY"][..], &args].concat()), expected, "{args:?}");
    }
    assert_eq!(state(&mut con, "k", &["a"]), before);
    // The most negative one that is allowed underflows.
    assert_eq!(incrby(&mut con, &["k", "a", "-9223372036854775807"]), [Err(UNDERFLOW.into())]);
}

#[test]
fn merges_need_one_cell_size_and_stay_within_it() {
    let server = Server::start();
    let mut con = server.connection();
    // RedisBloom 8.12's tests.
    for key in ["a", "b", "dest"] {
        ok(&mut con, &["CMS.INITBYDIM", key, "20", "5", "CELL_SIZE", "2"]);
    }
    ok(&mut con, &["CMS.INCRBY", "a", "x", "10"]);
    ok(&mut con, &["CMS.INCRBY", "b", "x", "7"]);
    ok(&mut con, &["CMS.MERGE", "dest", "2", "a", "b"]);
    assert_eq!(info(&mut con, "dest", ProtocolVersion::RESP2), fields(20, 5, 17, 2));
    ok(&mut con, &["CMS.MERGE", "dest", "2", "a", "b", "WEIGHTS", "1000", "1"]);
    assert_eq!(ok(&mut con, &["CMS.QUERY", "dest", "x"]), Value::Array(vec![Value::Int(10_007)]));
    let before = state(&mut con, "dest", &["x"]);
    let refused = err(&mut con, &["CMS.MERGE", "dest", "2", "a", "b", "WEIGHTS", "10000", "1"]);
    assert_eq!(refused, "CMS: MERGE overflow");
    assert_eq!(err(&mut con, &["CMS.MERGE", "dest", "1", "dest", "WEIGHTS", "7"]), "CMS: MERGE overflow");
    assert_eq!(state(&mut con, "dest", &["x"]), before);

    ok(&mut con, &["CMS.INITBYDIM", "small", "20", "5", "CELL_SIZE", "1"]);
    ok(&mut con, &["CMS.INITBYDIM", "large", "20", "5", "CELL_SIZE", "4"]);
    ok(&mut con, &["CMS.INITBYDIM", "narrow", "19", "5", "CELL_SIZE", "1"]);
    assert_eq!(err(&mut con, &["CMS.MERGE", "large", "1", "small"]), DIFFER);
    assert_eq!(err(&mut con, &["CMS.MERGE", "small", "1", "large"]), DIFFER);
    assert_eq!(err(&mut con, &["CMS.MERGE", "dest", "2", "a", "small"]), DIFFER);
    // Each source in turn: its weight, its key, its width and depth, then its cell size.
    assert_eq!(err(&mut con, &["CMS.MERGE", "large", "1", "narrow"]), "CMS: width/depth is not equal");
    let refused = err(&mut con, &["CMS.MERGE", "dest", "2", "a", "small", "WEIGHTS", "1", "x"]);
    assert_eq!(refused, "CMS: invalid weight value");
    assert_eq!(err(&mut con, &["CMS.MERGE", "dest", "2", "small", "a", "WEIGHTS", "1", "x"]), DIFFER);
    assert_eq!(err(&mut con, &["CMS.MERGE", "dest", "2", "small", "nokey"]), DIFFER);
    assert_eq!(err(&mut con, &["CMS.MERGE", "dest", "2", "nokey", "small"]), "CMS: key does not exist");
    assert_eq!(state(&mut con, "dest", &["x"]), before);
}

#[test]
fn memory_follows_the_cell_size_within_the_budget() {
    // bf.max-filter-bytes counts width * depth * cell size bytes.
    let server = Server::start_with(&["max-filter-bytes", "1048576"], &[]);
    let mut con = server.connection();
    // Valkey 9 counts 16 bytes more for the first key a database holds: the keys measured follow
    // another.
    ok(&mut con, &["CMS.INITBYDIM", "first", "1000", "5"]);
    let mut usage = Vec::new();
    for (size, _) in SIZES {
        let key = format!("k{size}");
        ok(&mut con, &["CMS.INITBYDIM", &key, "1000", "5", "CELL_SIZE", size]);
        usage.push(int(&mut con, &["MEMORY", "USAGE", &key]));
    }
    // 5000 counters: 5000 more bytes from 1 to 2, 10,000 from 2 to 4, 20,000 from 4 to 8.
    assert_eq!([usage[1] - usage[0], usage[2] - usage[1], usage[3] - usage[2]], [5000, 10_000, 20_000]);
    let refused = "CMS: Insufficient memory to create the key";
    for (width, size, fits) in
        [("262144", "4", true), ("262145", "4", false), ("524288", "2", true), ("131073", "8", false)]
    {
        let answer = call(&mut con, &["CMS.INITBYDIM", "big", width, "1", "CELL_SIZE", size]);
        if fits {
            assert_eq!(answer, Ok(Value::Okay), "{width} x {size} bytes");
            ok(&mut con, &["DEL", "big"]);
        } else {
            assert_eq!(answer, Err(refused.to_string()), "{width} x {size} bytes");
        }
    }
    assert_eq!(err(&mut con, &["CMS.INITBYPROB", "big", "0.000001", "0.5", "CELL_SIZE", "1"]), refused);
    ok(&mut con, &["CMS.INITBYPROB", "big", "0.000004", "0.5", "CELL_SIZE", "1"]);
}

#[test]
fn command_docs_and_info_tell_of_the_cell_size() {
    let server = Server::start();
    let mut con = server.connection();
    for command in ["cms.initbydim", "cms.initbyprob"] {
        let docs = format!("{:?}", ok(&mut con, &["COMMAND", "DOCS", command]));
        assert!(docs.contains("cell_size") && docs.contains("CELL_SIZE"), "{command}: {docs}");
        let Value::Array(info) = ok(&mut con, &["COMMAND", "INFO", command]) else { panic!() };
        let Some(Value::Array(entry)) = info.first() else { panic!("{info:?}") };
        assert_eq!(entry.get(1), Some(&Value::Int(-4)), "{command}: 4 arguments or more");
    }
}
