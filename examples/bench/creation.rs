//! Creating values against RedisBloom, interleaved as the sketches are (`sketches`): services
//! that keep one filter or sketch per user, tenant or endpoint create them all the time, often
//! with the first add (BF.INSERT). Each call creates a key of its own; server time per call
//! from INFO commandstats, the median of the slices.

use crate::common::Server;
use crate::sketches::Row;
use crate::workloads::{command, commandstat};
use redis::{Connection, ConnectionLike};

/// Creations per slice, each of a new key.
const CALLS: usize = 2_000;
const PIPELINE: usize = 500;

/// A creating command: its name in the table, and its arguments around the key.
struct Creation {
    name: &'static str,
    command: &'static str,
    after_key: &'static [&'static str],
}

const CREATIONS: [Creation; 6] = [
    Creation { name: "BF.RESERVE 0.01 1000", command: "BF.RESERVE", after_key: &["0.01", "1000"] },
    Creation {
        name: "BF.INSERT new key, 1 item",
        command: "BF.INSERT",
        after_key: &["CAPACITY", "1000", "ITEMS", "item"],
    },
    Creation { name: "CF.RESERVE 1000", command: "CF.RESERVE", after_key: &["1000"] },
    Creation { name: "CMS.INITBYPROB 0.001 0.01", command: "CMS.INITBYPROB", after_key: &["0.001", "0.01"] },
    Creation { name: "TOPK.RESERVE 10", command: "TOPK.RESERVE", after_key: &["10"] },
    Creation { name: "TDIGEST.CREATE", command: "TDIGEST.CREATE", after_key: &[] },
];

/// Server time per call of `CALLS` creations of new keys named from `prefix`.
fn slice(con: &mut Connection, creation: &Creation, prefix: &str) -> f64 {
    command(con, &["CONFIG", "RESETSTAT"]);
    let keys: Vec<String> = (0..CALLS).map(|n| format!("{prefix}:{n}")).collect();
    for group in keys.chunks(PIPELINE) {
        let mut pipe = redis::pipe();
        for key in group {
            pipe.cmd(creation.command).arg(key).arg(creation.after_key);
        }
        con.req_packed_commands(&pipe.get_packed_pipeline(), 0, group.len()).expect("pipeline");
    }
    commandstat(con, &creation.command.to_lowercase())
}

pub fn run(rounds: usize) -> Vec<Row> {
    let servers = [Server::start(), Server::start_redisbloom(&[])];
    let mut connections: Vec<Connection> = servers.iter().map(Server::connection).collect();
    let mut rows = Vec::new();
    for (index, creation) in CREATIONS.iter().enumerate() {
        let mut samples = [Vec::new(), Vec::new()];
        for round in 0..rounds * 2 {
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for server in order {
                let prefix = format!("created:{index}:{round}");
                samples[server].push(slice(&mut connections[server], creation, &prefix));
            }
        }
        rows.push(Row::of_samples(format!("{} (µs/call)", creation.name), samples));
    }
    drop(servers);
    rows
}
