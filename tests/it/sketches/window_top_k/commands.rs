//! The grammar and its errors, every TOPK.* command on windowed lists under both protocols,
//! and the record RedisBloom refuses.

use super::{count, listed, query, DAY, TYPE_NAME};
use crate::harness::*;
use crate::sketches::words;
use redis::{ProtocolVersion, Value};

#[test]
fn bad_windows_and_arguments_are_refused_and_create_nothing() {
    let server = Server::start();
    let mut con = server.connection();
    let window_range = "ERR window must be an integer of milliseconds in [1, 1099511627776]";
    let generations_range =
        "ERR generations must be an integer in [1, 64], at most the window in milliseconds";
    for (command, expected) in [
        ("TOPK.RESERVE x 3 WINDOW", window_range),
        ("TOPK.RESERVE x 3 WINDOW 0", window_range),
        ("TOPK.RESERVE x 3 WINDOW -1", window_range),
        ("TOPK.RESERVE x 3 WINDOW 1.5", window_range),
        ("TOPK.RESERVE x 3 WINDOW 1099511627777", window_range),
        ("TOPK.RESERVE x 3 50 4 0.9 WINDOW abc", window_range),
        ("TOPK.RESERVE x 3 WINDOW 1000 GENERATIONS 0", generations_range),
        ("TOPK.RESERVE x 3 WINDOW 1000 GENERATIONS 65", generations_range),
        ("TOPK.RESERVE x 3 WINDOW 3 GENERATIONS 4", generations_range),
        ("TOPK.RESERVE x 3 GENERATIONS 4", "ERR GENERATIONS needs WINDOW"),
        ("TOPK.RESERVE x 3 WINDOW 1000 extra", "ERR wrong number of arguments for 'topk.reserve' command"),
        (
            "TOPK.RESERVE x 3 50 4 0.9 WINDOW 1000 x",
            "ERR wrong number of arguments for 'topk.reserve' command",
        ),
        // Two of width, depth and decay, as plain `TOPK.RESERVE x 3 50`: the count is wrong,
        // whatever follows (GENERATIONS once answered that it needs WINDOW).
        ("TOPK.RESERVE x 3 50 WINDOW 1000", "ERR wrong number of arguments for 'topk.reserve' command"),
        (
            "TOPK.RESERVE x 3 50 WINDOW 1000 GENERATIONS 2",
            "ERR wrong number of arguments for 'topk.reserve' command",
        ),
        ("TOPK.RESERVE x 3 50 4 WINDOW 1000", "ERR wrong number of arguments for 'topk.reserve' command"),
        ("TOPK.RESERVE x 0 WINDOW 1000", "TopK: invalid k"),
        ("TOPK.RESERVE x 3 50 4 1.5 WINDOW 1000", "TopK: invalid decay value. must be '<= 1' & '> 0'"),
        (
            "TOPK.RESERVE x 10 100000000 10 0.9 WINDOW 1000",
            "ERR Insufficient memory to create topk data structure",
        ),
        ("TOPK.ROTATE x 1000", "ERR TOPK.ROTATE is sent by a master to its replicas and the AOF"),
    ] {
        let args = words(command);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(err(&mut con, &args), expected, "{command}");
    }
    assert_eq!(ok(&mut con, &["DBSIZE"]), Value::Int(0), "nothing was created");
    ok(&mut con, &["TOPK.RESERVE", "w", "3", "WINDOW", "1000"]);
    assert_eq!(err(&mut con, &["TOPK.RESERVE", "w", "3"]), "TopK: key already exists");
    assert_eq!(err(&mut con, &["TOPK.RESERVE", "w", "3", "WINDOW", "5000"]), "TopK: key already exists");
    assert_eq!(
        err(&mut con, &["TOPK.ROTATE", "w", "1"]),
        "ERR TOPK.ROTATE is sent by a master to its replicas and the AOF"
    );
    ok(&mut con, &["SET", "s", "x"]);
    assert_eq!(err(&mut con, &["TOPK.RESERVE", "s", "3", "WINDOW", "1000"]), "TopK: key already exists");
    ok(&mut con, &["BF.ADD", "bf", "a"]);
    assert!(err(&mut con, &["TOPK.ADD", "bf", "a"]).starts_with("WRONGTYPE"));
    assert!(err(&mut con, &["BF.ADD", "w", "a"]).starts_with("WRONGTYPE"));
    assert!(err(&mut con, &["CMS.QUERY", "w", "a"]).starts_with("WRONGTYPE"));
}

/// On a wide list that nothing collides in, a windowed list within one span answers every
/// command as a plain one (here checked against RedisBloom's replies for the same stream,
/// which the plain list gives), and INFO adds its window.
#[test]
fn every_command_answers_on_windowed_lists_under_both_protocols() {
    let server = Server::start();
    for (protocol, mut con) in server.connections() {
        ok(&mut con, &["FLUSHALL"]);
        ok(&mut con, &["TOPK.RESERVE", "w", "3", "50", "4", "0.9", "WINDOW", DAY]);
        ok(&mut con, &["TOPK.RESERVE", "p", "3", "50", "4", "0.9"]);
        assert_eq!(ok(&mut con, &["TYPE", "w"]), simple(TYPE_NAME));
        for key in ["w", "p"] {
            ok(
                &mut con,
                &["TOPK.ADD", key, "A", "B", "C", "D", "E", "A", "A", "B", "C", "G", "D", "B", "D", "A"],
            );
            ok(&mut con, &["TOPK.INCRBY", key, "E", "3", "F", "0"]);
        }
        let same = |con: &mut redis::Connection, command: &[&str]| {
            let mut on = |key: &str| {
                let args: Vec<&str> =
                    command.iter().map(|arg| if *arg == "{}" { key } else { arg }).collect();
                call(con, &args)
            };
            let (windowed, plain) = (on("w"), on("p"));
            assert_eq!(windowed, plain, "{command:?} under {protocol:?}");
        };
        for command in [
            &["TOPK.QUERY", "{}", "A", "B", "C", "D", "E", "F", "G"][..],
            &["TOPK.COUNT", "{}", "A", "B", "C", "D", "E", "F", "G"],
            &["TOPK.LIST", "{}"],
            &["TOPK.LIST", "{}", "WITHCOUNT"],
            &["TOPK.LIST", "{}", "with"],
            &["TOPK.LIST", "{}", "COUNT"],
            &["TOPK.ADD", "{}", "1", "1", "1", "1", "1"],
            &["TOPK.INCRBY", "{}", "G", "100000", "F", "-1"],
            &["TOPK.INCRBY", "{}", "G", "99999"],
            &["TOPK.INCRBY", "{}", "G", "1", "F"],
            &["TOPK.ADD", "{}"],
        ] {
            same(&mut con, command);
        }
        assert_eq!(listed(&mut con, "w"), listed(&mut con, "p"));
        assert!(query(&mut con, "w", "G") && count(&mut con, "w", "G") == 100_000);

        let info = ok(&mut con, &["TOPK.INFO", "w"]);
        let resp3 = protocol == ProtocolVersion::RESP3;
        let double = |value: f64| {
            if resp3 {
                Value::Double(value)
            } else {
                Value::BulkString(format!("{value}").into_bytes())
            }
        };
        let pairs = vec![
            (simple("k"), Value::Int(3)),
            (simple("width"), Value::Int(50)),
            (simple("depth"), Value::Int(4)),
            (simple("decay"), double(0.9)),
            (simple("Window"), Value::Int(86_400_000)),
            (simple("Generations"), Value::Int(4)),
        ];
        let expected = if resp3 {
            Value::Map(pairs)
        } else {
            Value::Array(pairs.into_iter().flat_map(|(label, value)| [label, value]).collect())
        };
        assert!(crate::sketches::same_value(&info, &expected), "{info:?} under {protocol:?}");

        // RENAME and COPY keep the type and what it holds.
        let digest_before = digest(&mut con, "w");
        ok(&mut con, &["RENAME", "w", "renamed"]);
        assert_eq!(int(&mut con, &["COPY", "renamed", "copied"]), 1);
        for key in ["renamed", "copied"] {
            assert_eq!(ok(&mut con, &["TYPE", key]), simple(TYPE_NAME));
            assert_eq!(digest(&mut con, key), digest_before, "{key}");
        }
        let memory = int(&mut con, &["MEMORY", "USAGE", "renamed"]);
        let plain = int(&mut con, &["MEMORY", "USAGE", "p"]);
        assert!(memory > 0 && memory <= 5 * plain, "MEMORY USAGE {memory}, plain {plain}");
    }
}

/// RedisBloom 2.8.2 does not know the type: it refuses the record, by RESTORE and in an RDB,
/// rather than misread it.
#[test]
fn redisbloom_refuses_the_record() {
    let ours = Server::start();
    let mut con = ours.connection();
    ok(&mut con, &["TOPK.RESERVE", "w", "3", "WINDOW", DAY]);
    ok(&mut con, &["TOPK.ADD", "w", "a", "b", "a"]);
    let payload = dump_payload(&mut con, "w");
    ok(&mut con, &["SAVE"]);
    let redisbloom = Server::start_redisbloom(&[]);
    let mut theirs = redisbloom.connection();
    let refused = call_bytes(&mut theirs, &[b"RESTORE", b"w", b"0", &payload]);
    assert!(refused.is_err(), "RedisBloom took a windowed Top-K: {refused:?}");
    assert_eq!(ok(&mut theirs, &["DBSIZE"]), Value::Int(0));
    let mut loading = Server::prepared(redisbloom_path(), &[], &[]);
    loading.take_file(&ours, "dump.rdb");
    let log = loading.run_until_exit();
    assert!(log.contains(TYPE_NAME), "RedisBloom's log names the type it cannot load:\n{log}");
}
