//! BF.RESERVE's and BF.INSERT's WINDOW and GENERATIONS, their bounds and errors, and every BF
//! command answering a windowed filter in a plain one's reply shapes, under both protocols.

use super::{strings, DAY, TYPE_NAME};
use crate::harness::*;
use redis::{ProtocolVersion, Value};

const WINDOW_ERROR: &str = "ERR window must be an integer of milliseconds in [1, 1099511627776]";
const GENERATIONS_ERROR: &str =
    "ERR generations must be an integer in [1, 64], at most the window in milliseconds";
const NEEDS_WINDOW: &str = "ERR GENERATIONS needs WINDOW";

#[test]
fn bad_windows_and_generations_are_refused_and_create_nothing() {
    const NO_REDISBLOOM_FORMAT: &str = "ERR FORMAT REDISBLOOM does not apply to a WINDOW filter";
    let server = Server::start();
    let mut con = server.connection();
    let mut cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["BF.RESERVE", "k", "0.01", "100", "WINDOW"], WINDOW_ERROR),
        (vec!["BF.RESERVE", "k", "0.01", "100", "WINDOW", "NONSCALING"], WINDOW_ERROR),
        (vec!["BF.INSERT", "k", "WINDOW", "ITEMS", "a"], WINDOW_ERROR),
        (vec!["BF.RESERVE", "k", "0.01", "100", "WINDOW", "1000", "GENERATIONS"], GENERATIONS_ERROR),
        (vec!["BF.RESERVE", "k", "0.01", "100", "WINDOW", "10", "GENERATIONS", "11"], GENERATIONS_ERROR),
        (vec!["BF.RESERVE", "k", "0.01", "100", "WINDOW", "1", "GENERATIONS", "2"], GENERATIONS_ERROR),
        (
            vec!["BF.INSERT", "k", "CAPACITY", "100", "WINDOW", "5", "GENERATIONS", "6", "ITEMS", "a"],
            GENERATIONS_ERROR,
        ),
        (vec!["BF.RESERVE", "k", "0.01", "100", "GENERATIONS", "4"], NEEDS_WINDOW),
        (vec!["BF.RESERVE", "k", "0.01", "100", "GENERATIONS", "4", "NONSCALING"], NEEDS_WINDOW),
        (vec!["BF.INSERT", "k", "GENERATIONS", "4", "ITEMS", "a"], NEEDS_WINDOW),
        (vec!["BF.INSERT", "k", "CAPACITY", "100", "GENERATIONS", "2", "ITEMS", "a"], NEEDS_WINDOW),
        (
            vec!["BF.RESERVE", "k", "0.01", "100", "FORMAT", "REDISBLOOM", "WINDOW", "1000"],
            NO_REDISBLOOM_FORMAT,
        ),
        (
            vec!["BF.INSERT", "k", "WINDOW", "1000", "FORMAT", "redisbloom", "ITEMS", "a"],
            NO_REDISBLOOM_FORMAT,
        ),
    ];
    let bad_windows = [
        "0",
        "-1",
        "-1000",
        "abc",
        "1.5",
        "1e3",
        "",
        "1099511627777",
        "18446744073709551617",
        "99999999999999999999999",
    ];
    for window in bad_windows {
        cases.push((vec!["BF.RESERVE", "k", "0.01", "100", "WINDOW", window], WINDOW_ERROR));
        cases.push((
            vec!["BF.RESERVE", "k", "0.01", "100", "WINDOW", window, "GENERATIONS", "2"],
            WINDOW_ERROR,
        ));
        cases.push((vec!["BF.INSERT", "k", "WINDOW", window, "ITEMS", "a"], WINDOW_ERROR));
    }
    for generations in ["0", "-1", "65", "x", "2.5", "", "18446744073709551616"] {
        cases.push((
            vec!["BF.RESERVE", "k", "0.01", "100", "WINDOW", "1000", "GENERATIONS", generations],
            GENERATIONS_ERROR,
        ));
        cases.push((
            vec!["BF.INSERT", "k", "WINDOW", "1000", "GENERATIONS", generations, "ITEMS", "a"],
            GENERATIONS_ERROR,
        ));
    }
    for (args, expected) in &cases {
        assert_eq!(err(&mut con, args), *expected, "{args:?}");
        assert_eq!(int(&mut con, &["EXISTS", "k"]), 0, "{args:?} created the key");
    }
    assert!(keys(&mut con).is_empty());

    // The bounds themselves are accepted, keywords in any case.
    let accepted: [(&[&str], &str, i64, i64); 5] = [
        (&["BF.RESERVE", "w1", "0.01", "100", "WINDOW", "1", "GENERATIONS", "1"], "w1", 1, 1),
        (&["BF.RESERVE", "wmax", "0.01", "100", "WINDOW", "1099511627776"], "wmax", 1_099_511_627_776, 4),
        (&["BF.RESERVE", "w64", "0.01", "100", "WINDOW", "64", "GENERATIONS", "64"], "w64", 64, 64),
        (&["BF.INSERT", "w10", "WINDOW", "10", "GENERATIONS", "10", "ITEMS", "a"], "w10", 10, 10),
        (
            &["bf.reserve", "lower", "0.01", "100", "window", "1000", "generations", "2", "nonscaling"],
            "lower",
            1000,
            2,
        ),
    ];
    for (args, key, window, generations) in accepted {
        ok(&mut con, args);
        assert_eq!(ok(&mut con, &["TYPE", key]), simple(TYPE_NAME), "{args:?}");
        assert_eq!(
            ok(&mut con, &["BF.INFO", key, "WINDOW"]),
            Value::Array(vec![Value::Int(window)]),
            "{args:?}"
        );
        assert_eq!(
            ok(&mut con, &["BF.INFO", key, "GENERATIONS"]),
            Value::Array(vec![Value::Int(generations)]),
            "{args:?}"
        );
        assert_eq!(int(&mut con, &["BF.ADD", key, "item"]), 1, "{args:?}");
        // A window of a millisecond may have passed already.
        if window >= 1000 {
            assert_eq!(int(&mut con, &["BF.EXISTS", key, "item"]), 1, "{args:?}");
        }
    }
    assert_eq!(err(&mut con, &["BF.RESERVE", "w1", "0.01", "100", "WINDOW", "1000"]), "ERR item exists");
    assert_eq!(err(&mut con, &["BF.RESERVE", "w1", "0.01", "100"]), "ERR item exists");
}

#[test]
#[allow(clippy::too_many_lines)] // one command after another, each checked
fn every_bf_command_serves_a_windowed_filter_as_it_serves_a_plain_one() {
    let server = Server::start();
    for (protocol, mut con) in server.connections() {
        let resp3 = protocol == ProtocolVersion::RESP3;
        let key = format!("w-{protocol:?}");
        ok(
            &mut con,
            &["BF.RESERVE", &key, "0.01", "1000", "WINDOW", DAY, "GENERATIONS", "3", "EXPANSION", "4"],
        );
        assert_eq!(ok(&mut con, &["TYPE", &key]), simple(TYPE_NAME));
        assert!(as_bool(&ok(&mut con, &["BF.ADD", &key, "apple"]), protocol));
        assert!(!as_bool(&ok(&mut con, &["BF.ADD", &key, "apple"]), protocol));
        assert!(as_bool(&ok(&mut con, &["BF.EXISTS", &key, "apple"]), protocol));
        assert!(!as_bool(&ok(&mut con, &["BF.EXISTS", &key, "pear"]), protocol));
        let bools = |reply: Value| -> Vec<bool> {
            let Value::Array(values) = reply else { panic!("expected an array, got {reply:?}") };
            values.iter().map(|value| as_bool(value, protocol)).collect()
        };
        assert_eq!(bools(ok(&mut con, &["BF.MADD", &key, "apple", "pear", "plum"])), [false, true, true]);
        assert_eq!(bools(ok(&mut con, &["BF.MEXISTS", &key, "plum", "kiwi", "apple"])), [true, false, true]);
        assert_eq!(bools(ok(&mut con, &["BF.INSERT", &key, "ITEMS", "fig", "plum"])), [true, false]);
        assert_eq!(int(&mut con, &["BF.CARD", &key]), 4);

        // BF.INFO: the plain five, then Window and Generations.
        let pairs: Vec<(Value, Value)> = match ok(&mut con, &["BF.INFO", &key]) {
            Value::Array(flat) if !resp3 => {
                flat.chunks(2).map(|pair| (pair[0].clone(), pair[1].clone())).collect()
            }
            Value::Map(map) if resp3 => map,
            other => panic!("BF.INFO under {protocol:?}: {other:?}"),
        };
        let labels: Vec<Value> = pairs.iter().map(|(label, _)| label.clone()).collect();
        let expected = [
            "Capacity",
            "Size",
            "Number of filters",
            "Number of items inserted",
            "Expansion rate",
            "Window",
            "Generations",
        ];
        assert_eq!(labels, expected.map(simple).to_vec());
        let values: Vec<&Value> = pairs.iter().map(|(_, value)| value).collect();
        assert_eq!(values[0], &Value::Int(1000), "capacity per window, as reserved");
        assert!(matches!(values[1], Value::Int(size) if *size > 0), "{:?}", values[1]);
        assert!(matches!(values[2], Value::Int(filters) if *filters >= 1), "{:?}", values[2]);
        assert_eq!(&values[3..], [&Value::Int(4), &Value::Int(4), &Value::Int(86_400_000), &Value::Int(3)]);
        for (field, label, value) in [
            ("WINDOW", "Window", 86_400_000),
            ("window", "Window", 86_400_000),
            ("Generations", "Generations", 3),
            ("CAPACITY", "Capacity", 1000),
            ("items", "Number of items inserted", 4),
            ("EXPANSION", "Expansion rate", 4),
        ] {
            let expected = if resp3 {
                Value::Map(vec![(simple(label), Value::Int(value))])
            } else {
                Value::Array(vec![Value::Int(value)])
            };
            assert_eq!(
                ok(&mut con, &["BF.INFO", &key, field]),
                expected,
                "BF.INFO {field} under {protocol:?}"
            );
        }
        assert_eq!(err(&mut con, &["BF.INFO", &key, "bogus"]), "Invalid information value");
        let Value::Array(lines) = ok(&mut con, &["BF.DEBUG", &key]) else { panic!("BF.DEBUG") };
        assert!(!lines.is_empty());
        assert!(int(&mut con, &["MEMORY", "USAGE", &key]) > 0);
    }

    let mut con = server.connection();
    // BF.INSERT creates with its options; GENERATIONS defaults to 4.
    let Value::Array(added) = ok(
        &mut con,
        &[
            "BF.INSERT",
            "ins",
            "CAPACITY",
            "500",
            "ERROR",
            "0.001",
            "WINDOW",
            DAY,
            "EXPANSION",
            "2",
            "ITEMS",
            "a",
            "b",
            "a",
        ],
    ) else {
        panic!("BF.INSERT")
    };
    assert_eq!(added, [Value::Int(1), Value::Int(1), Value::Int(0)]);
    assert_eq!(ok(&mut con, &["TYPE", "ins"]), simple(TYPE_NAME));
    for (field, value) in [("GENERATIONS", 4), ("WINDOW", 86_400_000), ("CAPACITY", 500), ("EXPANSION", 2)] {
        assert_eq!(
            ok(&mut con, &["BF.INFO", "ins", field]),
            Value::Array(vec![Value::Int(value)]),
            "{field}"
        );
    }
    ok(&mut con, &["BF.INSERT", "ns", "WINDOW", DAY, "NONSCALING", "ITEMS", "a"]);
    assert_eq!(ok(&mut con, &["BF.INFO", "ns", "EXPANSION"]), Value::Array(vec![Value::Nil]));
    assert_eq!(err(&mut con, &["BF.INSERT", "nc", "WINDOW", DAY, "NOCREATE", "ITEMS", "a"]), "ERR not found");
    assert_eq!(int(&mut con, &["EXISTS", "nc"]), 0);

    // BF.CARD counts the distinct items of the window.
    ok(&mut con, &["BF.RESERVE", "card", "0.01", "1000", "WINDOW", DAY]);
    let new = madd_all(&mut con, "card", strings("card:", 1000).into_iter());
    assert!(new >= 990, "{new} of 1000 distinct items were new");
    assert_eq!(int(&mut con, &["BF.CARD", "card"]), new as i64);
    madd_all(&mut con, "card", strings("card:", 1000).into_iter());
    assert_eq!(int(&mut con, &["BF.CARD", "card"]), new as i64, "adding items again counts them once");
}
