//! Keyspace notifications of BF.* commands: one for each command that changes a filter.

use crate::harness::*;

#[test]
fn keyspace_notifications_on_create_and_add() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["CONFIG", "SET", "notify-keyspace-events", "Kg"]);
    let mut listener = server.connection();
    let mut pubsub = listener.as_pubsub();
    pubsub.psubscribe("__keyspace@0__:*").unwrap();
    pubsub.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();

    ok(&mut con, &["BF.ADD", "k", "a"]);
    ok(&mut con, &["BF.ADD", "k", "a"]); // nothing added: no event
    ok(&mut con, &["BF.MADD", "k", "b"]);
    ok(&mut con, &["BF.RESERVE", "r", "0.01", "10"]);
    ok(&mut con, &["BF.INSERT", "r", "ITEMS", "x"]);
    let mut events = Vec::new();
    for _ in 0..5 {
        let message = pubsub.get_message().expect("a notification");
        let payload: String = message.get_payload().unwrap();
        events
            .push(format!("{}:{payload}", message.get_channel_name().trim_start_matches("__keyspace@0__:")));
    }
    assert_eq!(events, ["k:bf.reserve", "k:bf.add", "k:bf.madd", "r:bf.reserve", "r:bf.insert"]);
}
