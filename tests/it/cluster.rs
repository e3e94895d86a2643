//! Redis Cluster: three masters with one replica each, made by `redis-cli --cluster create` as
//! a user makes one. Filters written through a cluster-aware client move between masters with
//! `redis-cli --cluster reshard` (MIGRATE, which carries them as DUMP payloads) while the writes
//! go on, and survive a graceful failover and the death of a master, bit for bit.

use crate::harness::*;
use redis::cluster::{ClusterClient, ClusterConnection};
use redis::{Connection, Value};
use std::collections::BTreeMap;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

const FILTERS: usize = 300;
/// Past the largest first capacity below (100), so that every filter is a chain.
const MIN_ROUNDS: usize = 150;

fn filter_key(index: usize) -> String {
    format!("filter:{index}")
}

/// How each filter is created: scaling filters that grow several times during the test, in
/// both formats, and filters made by their first BF.ADD with the defaults.
fn creation(index: usize) -> Option<Vec<String>> {
    let key = filter_key(index);
    let args: &[&str] = match index % 3 {
        0 => &["BF.RESERVE", &key, "0.001", "40", "EXPANSION", "3"],
        1 => &["BF.RESERVE", &key, "0.01", "60", "FORMAT", "REDISBLOOM"],
        _ => return None,
    };
    Some(args.iter().map(std::string::ToString::to_string).collect())
}

struct Node {
    server: Server,
    id: String,
}

struct Cluster {
    nodes: Vec<Node>,
}

impl Cluster {
    fn start() -> Cluster {
        let servers: Vec<Server> = (0..6)
            .map(|_| {
                let bus_port = free_port().to_string();
                Server::start_with(
                    &[],
                    &[
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        "nodes.conf",
                        // Two cores run the other tests' servers beside these: at 1000 ms a
                        // busy node was once taken for failed in the middle of a reshard
                        // (CLUSTERDOWN, Redis 8.2.3 in CI). The failover waits this longer.
                        "--cluster-node-timeout",
                        "5000",
                        "--cluster-port",
                        &bus_port,
                    ],
                )
            })
            .collect();
        let addresses: Vec<String> =
            servers.iter().map(|server| format!("127.0.0.1:{}", server.port)).collect();
        let mut create = vec!["--cluster", "create"];
        create.extend(addresses.iter().map(String::as_str));
        create.extend(["--cluster-replicas", "1", "--cluster-yes"]);
        redis_cli(&create);
        let nodes = servers
            .into_iter()
            .map(|server| {
                let id = text(ok(&mut server.connection(), &["CLUSTER", "MYID"]));
                Node { server, id }
            })
            .collect();
        let cluster = Cluster { nodes };
        cluster.wait_until_settled(3);
        cluster
    }

    fn live(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|node| node.server.port != 0)
    }

    fn node(&self, id: &str) -> &Node {
        self.nodes.iter().find(|node| node.id == id).unwrap_or_else(|| panic!("no node {id}"))
    }

    /// Every live node sees the cluster as up, with `replicas` healthy replicas, and agrees
    /// on who owns every slot.
    fn wait_until_settled(&self, replicas: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let views: Vec<(String, Vec<Listed>)> = self.live().map(view).collect();
            let settled = views.iter().all(|(info, _)| info.contains("cluster_state:ok"))
                && self.live().all(replica_in_step)
                && views.iter().all(|(_, nodes)| {
                    nodes.iter().filter(|node| node.is("slave") && !node.is("fail")).count() == replicas
                })
                && views.windows(2).all(|pair| slot_owners(&pair[0].1) == slot_owners(&pair[1].1));
            if settled {
                return;
            }
            assert!(Instant::now() < deadline, "the cluster did not settle: {views:?}");
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// The healthy masters that hold slots, each with its healthy replica if it has one.
    fn masters(&self) -> Vec<(String, Option<String>)> {
        let (_, nodes) = view(self.live().next().expect("a live node"));
        let healthy = |node: &&Listed| !node.is("fail");
        nodes
            .iter()
            .filter(healthy)
            .filter(|node| node.is("master") && !node.slots.is_empty())
            .map(|master| {
                let replica = nodes.iter().filter(healthy).find(|node| node.master == master.id);
                (master.id.clone(), replica.map(|replica| replica.id.clone()))
            })
            .collect()
    }

    /// The node that owns `key` now, from CLUSTER SLOTS.
    fn owner(&self, key: &str) -> &Node {
        let mut con = self.live().next().expect("a live node").server.connection();
        let slot = int(&mut con, &["CLUSTER", "KEYSLOT", key]);
        let Value::Array(ranges) = ok(&mut con, &["CLUSTER", "SLOTS"]) else { panic!("CLUSTER SLOTS") };
        for range in ranges {
            let Value::Array(fields) = range else { continue };
            let (Value::Int(first), Value::Int(last)) = (&fields[0], &fields[1]) else { continue };
            if (*first..=*last).contains(&slot) {
                let Value::Array(master) = &fields[2] else { panic!("{fields:?}") };
                return self.node(&text(master[2].clone()));
            }
        }
        panic!("no owner for slot {slot}");
    }

    fn client(&self) -> ClusterConnection {
        let addresses: Vec<String> =
            self.live().map(|node| format!("redis://127.0.0.1:{}", node.server.port)).collect();
        ClusterClient::new(addresses).expect("cluster client").get_connection().expect("cluster connection")
    }

    /// Moves `slots` slots from one master to another, as an operator does, with MIGRATE.
    fn reshard(&self, from: &str, to: &str, slots: usize) {
        let entry = format!("127.0.0.1:{}", self.node(from).server.port);
        redis_cli(&[
            "--cluster",
            "reshard",
            &entry,
            "--cluster-from",
            from,
            "--cluster-to",
            to,
            "--cluster-slots",
            &slots.to_string(),
            "--cluster-yes",
        ]);
    }
}

/// A replica is linked to its master and not in a full sync. Valkey 9 carries slot moves to
/// replicas, and a replica still in its first sync when a reshard starts can keep a moved
/// slot open; so the test, as a careful operator would, reshards only after that sync.
fn replica_in_step(node: &Node) -> bool {
    let info = text(ok(&mut node.server.connection(), &["INFO", "replication"]));
    info.contains("role:master")
        || (info.contains("master_link_status:up") && info.contains("master_sync_in_progress:0"))
}

fn redis_cli(args: &[&str]) -> String {
    let output =
        Command::new("redis-cli").args(args).output().expect("redis-cli runs (make test installs it)");
    let text =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "redis-cli {args:?}:\n{text}");
    text
}

fn text(value: Value) -> String {
    match value {
        Value::BulkString(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Value::SimpleString(text) | Value::VerbatimString { text, .. } => text,
        other => panic!("expected text, got {other:?}"),
    }
}

/// One line of CLUSTER NODES.
#[derive(Debug)]
struct Listed {
    id: String,
    flags: Vec<String>,
    master: String,
    slots: Vec<String>,
}

impl Listed {
    fn parse(line: &str) -> Listed {
        let fields: Vec<&str> = line.split(' ').collect();
        Listed {
            id: fields[0].to_string(),
            flags: fields[2].split(',').map(str::to_string).collect(),
            master: fields[3].to_string(),
            slots: fields[8..].iter().map(std::string::ToString::to_string).collect(),
        }
    }

    fn is(&self, flag: &str) -> bool {
        self.flags.iter().any(|own| own == flag)
    }
}

/// Who owns each slot range, in a CLUSTER NODES listing. A slot being moved also appears in
/// brackets (`[1444->-id]`); that says where it goes, not who owns it.
fn slot_owners(nodes: &[Listed]) -> Vec<String> {
    let mut owners: Vec<String> = nodes
        .iter()
        .flat_map(|node| {
            let ranges = node.slots.iter().filter(|range| !range.starts_with('['));
            ranges.map(move |range| format!("{range}={}", node.id))
        })
        .collect();
    owners.sort();
    owners
}

fn cluster_call(con: &mut ClusterConnection, args: &[String]) -> redis::RedisResult<Value> {
    let mut command = redis::cmd(&args[0]);
    for arg in &args[1..] {
        command.arg(arg);
    }
    command.query(con)
}

/// A node's CLUSTER INFO, and its CLUSTER NODES listing.
fn view(node: &Node) -> (String, Vec<Listed>) {
    let mut con = node.server.connection();
    let info = text(ok(&mut con, &["CLUSTER", "INFO"]));
    let nodes = text(ok(&mut con, &["CLUSTER", "NODES"])).lines().map(Listed::parse).collect();
    (info, nodes)
}

/// Adds items to every filter, round after round, until told to stop; answers the items each
/// filter acknowledged, in order, and the errors met.
fn write_until(
    mut con: ClusterConnection,
    stop: &AtomicBool,
    rounds: &AtomicUsize,
    first_round: usize,
) -> (Vec<Vec<String>>, Vec<String>) {
    let mut acknowledged = vec![Vec::new(); FILTERS];
    let mut errors = Vec::new();
    let mut round = first_round;
    // Enough rounds for every filter to grow past its first sub-filter.
    while !stop.load(Ordering::Relaxed) || round < first_round + MIN_ROUNDS {
        for (index, items) in acknowledged.iter_mut().enumerate() {
            let item = format!("item-{round}-{index}");
            match redis::cmd("BF.ADD").arg(filter_key(index)).arg(&item).query::<Value>(&mut con) {
                Ok(_) => items.push(item),
                Err(error) => errors.push(format!("BF.ADD {} {item}: {error}", filter_key(index))),
            }
        }
        round += 1;
        rounds.store(round, Ordering::Relaxed);
    }
    (acknowledged, errors)
}

/// Every acknowledged item answers 1, through the cluster, from whichever node owns it now.
fn assert_all_present(cluster: &Cluster, acknowledged: &[Vec<String>]) {
    let mut con = cluster.client();
    for (index, items) in acknowledged.iter().enumerate() {
        let answers: Vec<i64> =
            redis::cmd("BF.MEXISTS").arg(filter_key(index)).arg(items).query(&mut con).unwrap();
        let missing = answers.iter().filter(|&&answer| answer != 1).count();
        assert_eq!(missing, 0, "{}: {missing} of {} acknowledged items lost", filter_key(index), items.len());
    }
}

/// The digest each filter has on a single server given the same commands: what every owner
/// in the cluster must hold, bit for bit.
fn reference_digests(acknowledged: &[Vec<String>]) -> Vec<String> {
    let reference = Server::start();
    let mut con = reference.connection();
    (0..FILTERS)
        .map(|index| {
            let key = filter_key(index);
            if let Some(args) = creation(index) {
                ok(&mut con, &args.iter().map(String::as_str).collect::<Vec<_>>());
            }
            let _: Value = redis::cmd("BF.MADD").arg(&key).arg(&acknowledged[index]).query(&mut con).unwrap();
            digest(&mut con, &key)
        })
        .collect()
}

fn assert_digests(cluster: &Cluster, expected: &[String], moment: &str) {
    let mut connections: BTreeMap<u16, Connection> = BTreeMap::new();
    for (index, expected) in expected.iter().enumerate() {
        let key = filter_key(index);
        let owner = cluster.owner(&key);
        let con = connections.entry(owner.server.port).or_insert_with(|| owner.server.connection());
        assert_eq!(&digest(con, &key), expected, "{key} on its owner {moment}");
    }
}

fn wait_for_master(node: &Node) {
    let role = || match ok(&mut node.server.connection(), &["ROLE"]) {
        Value::Array(fields) => text(fields[0].clone()),
        other => panic!("ROLE: {other:?}"),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while role() != "master" {
        assert!(Instant::now() < deadline, "{} was not promoted", node.id);
        thread::sleep(Duration::from_millis(50));
    }
}

/// The replica has everything its master wrote: their replication offsets agree.
fn wait_for_replica_in_sync(master: &Node, replica: &Node) {
    let offset = |node: &Node| {
        let info = text(ok(&mut node.server.connection(), &["INFO", "replication"]));
        let line = info.lines().find(|line| line.starts_with("master_repl_offset:")).expect("offset");
        line["master_repl_offset:".len()..].trim().to_string()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while offset(master) != offset(replica) {
        assert!(Instant::now() < deadline, "{} did not catch up with {}", replica.id, master.id);
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn filters_survive_resharding_and_failover_bit_for_bit() {
    let mut cluster = Cluster::start();
    let mut con = cluster.client();
    for index in 0..FILTERS {
        if let Some(args) = creation(index) {
            cluster_call(&mut con, &args).expect("creation through the cluster");
        }
    }
    let owners_before: Vec<String> =
        (0..FILTERS).map(|index| cluster.owner(&filter_key(index)).id.clone()).collect();

    // Writes go on while slots holding filters move between masters, twice.
    let stop = Arc::new(AtomicBool::new(false));
    let rounds = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (stop, rounds, con) = (stop.clone(), rounds.clone(), cluster.client());
        thread::spawn(move || write_until(con, &stop, &rounds, 0))
    };
    let masters = cluster.masters();
    assert_eq!(masters.len(), 3, "{masters:?}");
    let rounds_before = rounds.load(Ordering::Relaxed);
    cluster.reshard(&masters[0].0, &masters[1].0, 3000);
    // redis-cli reshards only a cluster whose nodes agree on who owns what.
    cluster.wait_until_settled(3);
    cluster.reshard(&masters[1].0, &masters[2].0, 4000);
    let rounds_during = rounds.load(Ordering::Relaxed) - rounds_before;
    stop.store(true, Ordering::Relaxed);
    let (mut acknowledged, errors) = writer.join().expect("writer");
    assert!(errors.is_empty(), "{} writes failed during resharding, first: {}", errors.len(), errors[0]);
    assert!(rounds_during >= 2, "only {rounds_during} rounds of writes ran while resharding");
    cluster.wait_until_settled(3);
    let moved =
        (0..FILTERS).filter(|&index| cluster.owner(&filter_key(index)).id != owners_before[index]).count();
    assert!(moved >= FILTERS / 10, "only {moved} filters changed owner");
    assert_all_present(&cluster, &acknowledged);
    for index in 0..FILTERS {
        let key = filter_key(index);
        let links = match ok(&mut cluster.owner(&key).server.connection(), &["BF.INFO", &key, "FILTERS"]) {
            Value::Array(fields) if fields.len() == 1 => fields[0].clone(),
            other => other,
        };
        assert!(matches!(links, Value::Int(links) if links >= 2), "{key}: {links:?} sub-filters");
    }
    assert_digests(&cluster, &reference_digests(&acknowledged), "after resharding");
    eprintln!(
        "{moved} of {FILTERS} filters moved while {rounds_during} rounds of BF.ADD went on, {} items in all",
        acknowledged.iter().map(Vec::len).sum::<usize>()
    );

    // A graceful failover of the busiest master, then more writes to the new one.
    let busiest = |cluster: &Cluster| {
        let masters = cluster.masters();
        masters
            .iter()
            .filter_map(|(id, replica)| Some((id.clone(), replica.clone()?)))
            .max_by_key(|(id, _)| {
                (0..FILTERS).filter(|&index| &cluster.owner(&filter_key(index)).id == id).count()
            })
            .expect("a master with a replica")
    };
    let (master, replica) = busiest(&cluster);
    ok(&mut cluster.node(&replica).server.connection(), &["CLUSTER", "FAILOVER"]);
    wait_for_master(cluster.node(&replica));
    cluster.wait_until_settled(3);
    assert!(cluster.masters().iter().any(|(id, _)| id == &replica), "{replica} does not serve slots");
    let mut con = cluster.client();
    for (index, items) in acknowledged.iter_mut().enumerate() {
        let item = format!("after-failover-{index}");
        let _: Value = redis::cmd("BF.ADD").arg(filter_key(index)).arg(&item).query(&mut con).unwrap();
        items.push(item);
    }
    let expected = reference_digests(&acknowledged);
    assert_all_present(&cluster, &acknowledged);
    assert_digests(&cluster, &expected, &format!("after {master} failed over to {replica}"));

    // A master killed: its replica, once in sync, takes over with every filter.
    let (master, replica) = busiest(&cluster);
    wait_for_replica_in_sync(cluster.node(&master), cluster.node(&replica));
    let victim = cluster.nodes.iter_mut().find(|node| node.id == master).expect("master");
    victim.server.kill();
    victim.server.port = 0;
    wait_for_master(cluster.node(&replica));
    cluster.wait_until_settled(2);
    assert_all_present(&cluster, &acknowledged);
    assert_digests(&cluster, &expected, &format!("after {master} was killed and {replica} took over"));
}

/// The sketches in a cluster: a merge of sources in the destination's slot works, one of
/// sources in other slots is refused (CROSSSLOT: the merges declare their source keys, which
/// RedisBloom does not), and every kind moves with its slot when the cluster reshards, bit for
/// bit; a windowed Bloom filter too.
#[test]
fn sketches_merge_within_a_slot_and_move_with_it() {
    let cluster = Cluster::start();
    let mut con = cluster.client();
    let keys = ["{s}cms", "{s}cms:2", "{s}topk", "{s}td", "{s}td:2", "{s}window"];
    for command in [
        "CMS.INITBYDIM {s}cms 100 4",
        "CMS.INITBYDIM {s}cms:2 100 4",
        "CMS.INCRBY {s}cms a 3 b 4",
        "CMS.INCRBY {s}cms:2 a 1",
        "CMS.MERGE {s}cms:2 2 {s}cms {s}cms:2 WEIGHTS 2 1",
        "TOPK.RESERVE {s}topk 3 20 3 0.9",
        "TOPK.ADD {s}topk a b a c d a",
        "TDIGEST.CREATE {s}td",
        "TDIGEST.ADD {s}td 1 2 3 4 5",
        "TDIGEST.MERGE {s}td:2 1 {s}td",
        "CMS.INITBYDIM {t}cms 100 4",
        "BF.RESERVE {s}window 0.01 1000 WINDOW 86400000",
        "BF.MADD {s}window a b c",
    ] {
        let args: Vec<String> = command.split_whitespace().map(str::to_string).collect();
        cluster_call(&mut con, &args).unwrap_or_else(|error| panic!("{command}: {error}"));
    }
    let owner = cluster.owner("{s}cms");
    let mut owner_con = owner.server.connection();
    for merge in [
        &["CMS.MERGE", "{s}cms", "1", "{t}cms"][..],
        &["TDIGEST.MERGE", "{s}td", "1", "{t}td"],
    ] {
        let error = err(&mut owner_con, merge);
        assert!(error.starts_with("CROSSSLOT"), "{merge:?}: {error}");
    }
    let digests: Vec<String> = keys.iter().map(|key| digest(&mut owner_con, key)).collect();
    let from = owner.id.clone();
    let to = cluster.masters().into_iter().map(|(id, _)| id).find(|id| *id != from).expect("another master");
    // `{s}` hashes to slot 3828, in the first master's 0-5460: its first 4000 slots move.
    cluster.reshard(&from, &to, 4000);
    cluster.wait_until_settled(3);
    let new_owner = cluster.owner("{s}cms");
    assert_ne!(new_owner.id, from, "the slot moved");
    let mut new_con = new_owner.server.connection();
    let moved: Vec<String> = keys.iter().map(|key| digest(&mut new_con, key)).collect();
    assert_eq!(moved, digests, "after MIGRATE");
    let mut con = cluster.client();
    let counts: Vec<i64> = redis::cmd("CMS.QUERY").arg("{s}cms:2").arg("a").arg("b").query(&mut con).unwrap();
    assert_eq!(counts, [7, 8]);
    let found: Vec<i64> = redis::cmd("BF.MEXISTS").arg("{s}window").arg(&["a", "b", "c"]).query(&mut con).unwrap();
    assert_eq!(found, [1, 1, 1], "the windowed filter's items, after MIGRATE");
}
