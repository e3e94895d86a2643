//! Every windowed type where the master's rotations meet the server's own machinery: a
//! replica's AOF keeps them, a master whose clients are paused for a failover holds them back
//! rather than send its replicas anything, and the timer's visits leave keys idle.

use crate::harness::*;
use crate::window::wait_for_next_span;
use std::time::Duration;

const SPAN: u64 = 1000;
/// One key of each windowed type, a window of ten spans, and a write for each.
const KEYS: [(&[&str], &[&str]); 4] = [
    (&["BF.RESERVE", "f", "0.01", "1000", "WINDOW", "10000", "GENERATIONS", "10"], &["BF.ADD", "f"]),
    (&["CMS.INITBYDIM", "c", "10", "3", "WINDOW", "10000", "GENERATIONS", "10"], &["CMS.INCRBY", "c"]),
    (
        &["TOPK.RESERVE", "t", "2", "8", "3", "0.9", "WINDOW", "10000", "GENERATIONS", "10"],
        &["TOPK.ADD", "t"],
    ),
    (&["TDIGEST.CREATE", "d", "WINDOW", "10000", "GENERATIONS", "10"], &["TDIGEST.ADD", "d"]),
];

/// Creates one key of each windowed type ([`KEYS`]).
fn create_each(con: &mut redis::Connection) {
    for (create, _) in KEYS {
        ok(con, create);
    }
}

/// A server holding one key of each windowed type, and a connection to it.
fn started_with_keys() -> (Server, redis::Connection) {
    let server = Server::start();
    let mut con = server.connection();
    create_each(&mut con);
    (server, con)
}

fn write_each(con: &mut redis::Connection, round: usize) {
    for (_, write) in KEYS {
        let mut args: Vec<String> = write.iter().map(|arg| (*arg).to_string()).collect();
        match write[0] {
            "CMS.INCRBY" => args.extend([format!("x{round}"), "1".into()]),
            "TDIGEST.ADD" => args.push(round.to_string()),
            _ => args.push(format!("x{round}")),
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ok(con, &args);
    }
}

/// A replica writes its master's rotations (`*.ROTATE`) to its own AOF as it writes the
/// writes: promoted and reloaded from that AOF, it holds what its master holds. Without them,
/// a replay put every write in the epoch's span or one generation.
#[test]
fn a_replicas_aof_holds_its_masters_rotations() {
    let master = Server::start();
    let mut on_master = master.connection();
    let aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always"];
    let replica_of = ["--replicaof", "127.0.0.1", &master.port.to_string()];
    let replica = Server::start_with(&[], &[&aof[..], &replica_of[..]].concat());
    let mut on_replica = replica.connection();
    wait_in_sync(&mut on_master, &mut on_replica);
    // The replica's AOF starts with a rewrite once it has synced: its writes follow that.
    for _ in 0..100 {
        let busy = ["aof_rewrite_in_progress", "aof_rewrite_scheduled"]
            .iter()
            .any(|field| info_field(&mut on_replica, "persistence", field).as_deref() != Some("0"));
        if !busy {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    create_each(&mut on_master);
    for round in 0..3 {
        wait_for_next_span(SPAN, 20);
        write_each(&mut on_master, round);
    }
    let keys: Vec<&str> = KEYS.iter().map(|(create, _)| create[1]).collect();
    wait_in_sync(&mut on_master, &mut on_replica);
    let on_the_master: Vec<String> = keys.iter().map(|key| digest(&mut on_master, key)).collect();
    ok(&mut on_replica, &["REPLICAOF", "NO", "ONE"]);
    ok(&mut on_replica, &["DEBUG", "LOADAOF"]);
    let replayed: Vec<String> = keys.iter().map(|key| digest(&mut on_replica, key)).collect();
    assert!(now_ms() % SPAN < SPAN - 100, "compared within the last write's span");
    assert_eq!(replayed, on_the_master, "{keys:?} replayed from the replica's AOF");
}

/// A master whose clients are paused for a failover (CLIENT PAUSE WRITE, FAILOVER) must send
/// its replicas and its AOF nothing: Redis asserts it, and a rotation its timer replicated
/// then took the server down. The timer waits for the pause to end, then rotates.
#[test]
fn a_paused_master_rotates_nothing_until_its_clients_resume() {
    // Every write reaches the file before the next reply.
    let master = Server::start_with(&[], &["--appendonly", "yes", "--appendfsync", "always"]);
    let mut con = master.connection();
    ok(&mut con, &["CMS.INITBYDIM", "w", "10", "3", "WINDOW", "200", "GENERATIONS", "4"]);
    ok(&mut con, &["CMS.INCRBY", "w", "a", "1"]);
    let rotations = |server: &Server| {
        let aof = aof_bytes(server);
        aof.windows(b"CMS.ROTATE".len()).filter(|window| window == b"CMS.ROTATE").count()
    };
    // Read 800 ms into a pause of 2 s: a test thread held up under a loaded machine (it read
    // 1 s into a pause of 1 s once, on a CI run) still reads within the pause.
    let paused_at = std::time::Instant::now();
    ok(&mut con, &["CLIENT", "PAUSE", "2000", "WRITE"]);
    let before = rotations(&master);
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(ok(&mut con, &["PING"]), redis::Value::SimpleString("PONG".into()), "alive in the pause");
    let during = rotations(&master);
    assert!(paused_at.elapsed() < Duration::from_secs(2), "read within the pause");
    assert_eq!(during, before, "nothing rotated while clients were paused");
    std::thread::sleep(Duration::from_millis(1600));
    assert!(rotations(&master) > before, "the timer rotated once the pause ended");
}

/// The timer's visits leave keys as idle as they are: LRU and LFU eviction must see an idle
/// windowed key as idle, and master and replica agree on it.
#[test]
fn the_timers_visits_leave_idle_keys_idle() {
    let (_server, mut con) = started_with_keys();
    write_each(&mut con, 0);
    std::thread::sleep(Duration::from_millis(2300));
    for (create, _) in KEYS {
        let Ok(redis::Value::Int(idle)) = call(&mut con, &["OBJECT", "IDLETIME", create[1]]) else {
            panic!("OBJECT IDLETIME {}", create[1])
        };
        assert!(idle >= 2, "{} idle {idle} s after 2.3 s of visits", create[1]);
    }
}

/// A visit that rotates nothing leaves the key unmodified: a transaction that watches it goes
/// through (and a client caching it keeps its copy). A value restored into a key is queued
/// for a visit at once; the WATCH comes in the same read as the RESTORE, before any visit.
#[test]
fn the_timers_visits_that_rotate_nothing_leave_watched_keys_alone() {
    let (_server, mut con) = started_with_keys();
    // Early in a span, so that none ends (a rotation, which does modify the keys) before the
    // transaction.
    wait_for_next_span(SPAN, 20);
    write_each(&mut con, 0);
    let mut restores = redis::pipe();
    for (create, _) in KEYS {
        let payload = dump_payload(&mut con, create[1]);
        restores.cmd("RESTORE").arg(format!("{}:restored", create[1])).arg(0).arg(payload).ignore();
    }
    restores.cmd("WATCH").arg(&KEYS.map(|(create, _)| format!("{}:restored", create[1])));
    let () = restores.query(&mut con).unwrap();
    // Three visits of the timer at least.
    std::thread::sleep(Duration::from_millis(400));
    let answer: Option<(String,)> = redis::pipe().atomic().cmd("PING").query(&mut con).unwrap();
    assert!(answer.is_some(), "a visit aborted a transaction watching restored keys");
}

/// The timers' queues follow the keys on the master and on a replica alike: a key is queued
/// while its value holds a generation and forgotten once none is left, and on a replica,
/// which rotates nothing, once its master's rotations emptied it (its queues are those a
/// promotion starts from). `INFO bf` shows each windowed type's queue.
#[test]
fn the_timers_queues_follow_the_keys_on_master_and_replica() {
    const KEYS_PER_TYPE: usize = 50;
    let master = Server::start();
    let mut on_master = master.connection();
    let replica = Server::start_with(&[], &["--replicaof", "127.0.0.1", &master.port.to_string()]);
    let mut on_replica = replica.connection();
    wait_in_sync(&mut on_master, &mut on_replica);
    let fields =
        ["window_timer_keys", "cms_window_timer_keys", "topk_window_timer_keys", "tdigest_window_timer_keys"];
    let queued = |con: &mut redis::Connection| -> Vec<i64> {
        fields
            .map(|field| {
                info_field(con, "bf", &format!("bf_{field}")).and_then(|v| v.parse().ok()).unwrap_or(-1)
            })
            .to_vec()
    };
    assert_eq!(queued(&mut on_master), [0; 4]);
    for n in 0..KEYS_PER_TYPE {
        let window = ["WINDOW", "1000", "GENERATIONS", "4"];
        ok(
            &mut on_master,
            &[&["BF.INSERT", &format!("f{n}"), "CAPACITY", "100"][..], &window, &["ITEMS", "x"]].concat(),
        );
        ok(&mut on_master, &[&["CMS.INITBYDIM", &format!("c{n}"), "10", "3"][..], &window].concat());
        ok(&mut on_master, &["CMS.INCRBY", &format!("c{n}"), "x", "1"]);
        ok(&mut on_master, &[&["TOPK.RESERVE", &format!("t{n}"), "2"][..], &window].concat());
        ok(&mut on_master, &["TOPK.ADD", &format!("t{n}"), "x"]);
        ok(&mut on_master, &[&["TDIGEST.CREATE", &format!("d{n}")][..], &window].concat());
        ok(&mut on_master, &["TDIGEST.ADD", &format!("d{n}"), "1"]);
    }
    let written = std::time::Instant::now();
    wait_in_sync(&mut on_master, &mut on_replica);
    let all = [KEYS_PER_TYPE as i64; 4];
    assert_eq!(queued(&mut on_master), all, "every key holds a generation");
    assert_eq!(queued(&mut on_replica), all, "the replica queues what its master's writes open");
    // Forgotten within the window and a span, a tick, and the replica's second between looks.
    let deadline = written + Duration::from_millis(1250 + 200 + 1000 + 1000);
    for (con, what) in [(&mut on_master, "master"), (&mut on_replica, "replica")] {
        while queued(con) != [0; 4] {
            assert!(std::time::Instant::now() < deadline, "{what}: {:?} still queued", queued(con));
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    assert_eq!(int(&mut on_replica, &["DBSIZE"]), 4 * KEYS_PER_TYPE as i64, "the keys stay, empty");
}

/// A key leaves its timer's queue when its value leaves it (DEL, UNLINK, expiry, the old
/// name of a RENAME) and with its database (FLUSHDB, FLUSHALL), on the master and on a
/// replica alike, not at its next due time, which for a day's window is hours away.
#[test]
fn keys_leave_the_timers_queue_with_their_values() {
    let master = Server::start();
    let mut on_master = master.connection();
    let replica = Server::start_with(&[], &["--replicaof", "127.0.0.1", &master.port.to_string()]);
    let mut on_replica = replica.connection();
    wait_in_sync(&mut on_master, &mut on_replica);
    let queued = |con: &mut redis::Connection| -> i64 {
        info_field(con, "bf", "bf_window_timer_keys").and_then(|value| value.parse().ok()).unwrap_or(-1)
    };
    let both =
        |on_master: &mut redis::Connection, on_replica: &mut redis::Connection, expected: i64, what: &str| {
            wait_in_sync(on_master, on_replica);
            let deadline = std::time::Instant::now() + Duration::from_secs(3);
            for (con, server) in [(on_master, "master"), (on_replica, "replica")] {
                while queued(con) != expected {
                    assert!(std::time::Instant::now() < deadline, "{server}, {what}: {} queued", queued(con));
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        };
    for n in 0..10 {
        ok(&mut on_master, &["BF.INSERT", &format!("f{n}"), "WINDOW", "86400000", "ITEMS", "x"]);
    }
    ok(&mut on_master, &["SELECT", "2"]);
    for n in 0..5 {
        ok(&mut on_master, &["BF.INSERT", &format!("g{n}"), "WINDOW", "86400000", "ITEMS", "x"]);
    }
    ok(&mut on_master, &["SELECT", "0"]);
    both(&mut on_master, &mut on_replica, 15, "written");
    assert_eq!(int(&mut on_master, &["DEL", "f0", "f1"]), 2);
    assert_eq!(int(&mut on_master, &["UNLINK", "f2"]), 1);
    both(&mut on_master, &mut on_replica, 12, "deleted");
    ok(&mut on_master, &["RENAME", "f3", "renamed"]);
    both(&mut on_master, &mut on_replica, 12, "renamed");
    assert_eq!(int(&mut on_master, &["PEXPIRE", "f4", "10"]), 1);
    both(&mut on_master, &mut on_replica, 11, "expired");
    ok(&mut on_master, &["FLUSHDB"]);
    both(&mut on_master, &mut on_replica, 5, "database 0 flushed");
    ok(&mut on_master, &["FLUSHALL"]);
    both(&mut on_master, &mut on_replica, 0, "all flushed");
}
