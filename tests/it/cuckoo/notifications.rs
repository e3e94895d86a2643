//! Keyspace notifications of CF.* commands: this module notifies every change, RedisBloom none.

use super::{cf_scandump, on_both, Module};
use crate::harness::*;
use std::time::Duration;

/// Keyspace events per command, told apart by a PUBLISH after each command (the listener gets
/// events and messages in the order the server produced them). RedisBloom 2.8.2 notifies
/// nothing for any CF command (observed: not even CF.RESERVE); this module notifies at least
/// one event on the key for every command that changes a filter, and none for reads.
#[test]
fn keyspace_notifications_for_each_changing_command() {
    on_both(|module| {
        let server = module.start(&[]);
        let mut con = server.connection();
        ok(&mut con, &["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
        ok(&mut con, &["CF.RESERVE", "source", "100"]);
        ok(&mut con, &["CF.ADD", "source", "s"]);
        let pairs = cf_scandump(&mut con, "source");

        let mut listener = server.connection();
        let mut pubsub = listener.as_pubsub();
        pubsub.psubscribe("__keyspace@0__:*").unwrap();
        pubsub.subscribe("step").unwrap();
        pubsub.set_read_timeout(Some(Duration::from_secs(10))).unwrap();

        // (command, Some(true): must notify, Some(false): must not, None: either)
        let header = pairs[0].1.clone();
        let chunk = pairs[1].1.clone();
        let (header_at, chunk_at) = (pairs[0].0.to_string(), pairs[1].0.to_string());
        let steps: Vec<(Vec<&[u8]>, Option<bool>)> = vec![
            (vec![b"CF.RESERVE", b"f", b"100"], Some(true)),
            (vec![b"CF.ADD", b"f", b"a"], Some(true)),
            (vec![b"CF.ADD", b"created", b"a"], Some(true)),
            (vec![b"CF.ADDNX", b"f", b"b"], Some(true)),
            (vec![b"CF.ADDNX", b"f", b"a"], None),
            (vec![b"CF.INSERT", b"f", b"ITEMS", b"c", b"d"], Some(true)),
            (vec![b"CF.INSERTNX", b"f", b"ITEMS", b"e"], Some(true)),
            (vec![b"CF.INSERT", b"inserted", b"ITEMS", b"a"], Some(true)),
            (vec![b"CF.DEL", b"f", b"a"], Some(true)),
            (vec![b"CF.DEL", b"f", b"zz"], None),
            (vec![b"CF.EXISTS", b"f", b"b"], Some(false)),
            (vec![b"CF.MEXISTS", b"f", b"b", b"c"], Some(false)),
            (vec![b"CF.COUNT", b"f", b"b"], Some(false)),
            (vec![b"CF.INFO", b"f"], Some(false)),
            (vec![b"CF.DEBUG", b"f"], Some(false)),
            (vec![b"CF.SCANDUMP", b"f", b"0"], Some(false)),
            (vec![b"CF.LOADCHUNK", b"copy", header_at.as_bytes(), &header[..]], Some(true)),
            (vec![b"CF.LOADCHUNK", b"copy", chunk_at.as_bytes(), &chunk[..]], Some(true)),
            (vec![b"CF.COMPACT", b"f"], None),
        ];
        for (n, (args, _)) in steps.iter().enumerate() {
            call_bytes(&mut con, args).unwrap_or_else(|error| panic!("{args:?}: {error}"));
            ok(&mut con, &["PUBLISH", "step", &n.to_string()]);
        }
        let mut events: Vec<Vec<(String, String)>> = vec![Vec::new(); steps.len()];
        let mut step = 0;
        while step < steps.len() {
            let message = pubsub.get_message().expect("a message within 10 s");
            let payload: String = message.get_payload().unwrap();
            if let Some(key) = message.get_channel_name().strip_prefix("__keyspace@0__:") {
                events[step].push((key.to_string(), payload));
            } else {
                assert_eq!(payload, step.to_string(), "markers in order");
                step += 1;
            }
        }
        for ((args, expected), events) in steps.iter().zip(&events) {
            let command = String::from_utf8_lossy(args[0]).into_owned();
            let key = String::from_utf8_lossy(args[1]).into_owned();
            eprintln!("{module:?} {command} {key}: {events:?}");
            assert!(events.iter().all(|(on, _)| *on == key), "{command} notified on another key: {events:?}");
            match (module, expected) {
                (Module::RedisBloom, _) => assert!(events.is_empty(), "RedisBloom notified {events:?}"),
                (Module::Redbloom, Some(true)) => {
                    assert!(!events.is_empty(), "{command} {key} notified nothing");
                }
                (Module::Redbloom, Some(false)) => {
                    assert!(events.is_empty(), "{command} notified {events:?}");
                }
                (Module::Redbloom, None) => {}
            }
        }
        if matches!(module, Module::Redbloom) {
            // A header creates the filter, as BF.LOADCHUNK's does.
            let names = |step: usize| events[step].iter().map(|(_, name)| name.as_str()).collect::<Vec<_>>();
            let header_step = steps.iter().position(|(args, _)| args[0] == b"CF.LOADCHUNK").unwrap();
            assert_eq!(names(header_step), ["cf.reserve"]);
            assert_eq!(names(header_step + 1), ["cf.loadchunk"]);
        }
    });
}
