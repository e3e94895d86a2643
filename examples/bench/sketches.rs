//! The sketches (CMS.*, TOPK.*, TDIGEST.*) against RedisBloom, in the same run: both modules
//! loaded in two servers at once, the work interleaved in short slices that take turns at
//! going first, since whole runs one after the other differ by up to 1.6x on a shared
//! machine. Server time per item comes from INFO commandstats; each figure is the median of
//! the slices.

use crate::common::Server;
use crate::workloads::{command, median, timed, Random};
use redis::Connection;
use std::fmt::Write;

/// Calls per slice: short, so that both servers see the same moments of the machine.
const SINGLE_CALLS: usize = 5_000;
const BATCH_CALLS: usize = 200;
const BATCH: usize = 100;

/// One workload: the command, the key it works on, and what each call sends after the key.
struct Workload {
    name: String,
    command: &'static str,
    key: &'static str,
    items_per_call: usize,
    calls: Vec<Vec<String>>,
}

/// One workload's medians: redbloom's and RedisBloom's server time per item.
pub struct Row {
    pub workload: String,
    pub redbloom_usec_per_item: f64,
    pub redisbloom_usec_per_item: f64,
}

impl Row {
    /// The medians of redbloom's and RedisBloom's samples, logged as they come.
    pub fn of_samples(workload: String, [ours, theirs]: [Vec<f64>; 2]) -> Row {
        let row =
            Row { workload, redbloom_usec_per_item: median(ours), redisbloom_usec_per_item: median(theirs) };
        eprintln!(
            "   {:<36} redbloom {:>8.3} µs  RedisBloom {:>8.3} µs  ratio {:.2}",
            row.workload,
            row.redbloom_usec_per_item,
            row.redisbloom_usec_per_item,
            row.ratio()
        );
        row
    }

    /// Above 1, redbloom is faster.
    pub fn ratio(&self) -> f64 {
        self.redisbloom_usec_per_item / self.redbloom_usec_per_item
    }
}

/// A skewed stream, as Top-K and Count-Min see in use: a few items often, most rarely.
pub fn skewed_item(random: &mut Random) -> String {
    let uniform = (random.next() >> 11) as f64 / (1u64 << 53) as f64;
    format!("item:{}", (uniform.powi(4) * 100_000.0) as u64)
}

fn value(random: &mut Random) -> String {
    // Log-normal-ish latencies, the values t-digests usually hold.
    let uniform = (random.next() >> 11) as f64 / (1u64 << 53) as f64;
    format!("{:.3}", (uniform * 6.0).exp())
}

fn workloads(random: &mut Random) -> Vec<Workload> {
    let mut list = Vec::new();
    let mut calls = |count: usize, per_call: usize, make: &mut dyn FnMut(&mut Random) -> Vec<String>| {
        (0..count).map(|_| (0..per_call).flat_map(|_| make(random)).collect()).collect::<Vec<Vec<String>>>()
    };
    // The floor: what every batch pays in both modules whatever the sketch (reading the
    // arguments, replying an integer per item), measured on a sketch of one counter (one row
    // hashed). The small sketch's batches are compared above it in the README.
    let both = [(1, SINGLE_CALLS), (BATCH, BATCH_CALLS)];
    let sketches = [
        ("small", "cms:small", &both[..]),
        ("large", "cms:large", &both[..]),
        ("floor 1x1", "cms:floor", &both[1..]),
    ];
    for (size, key, sizes) in sketches {
        for &(per_call, count) in sizes {
            list.push(Workload {
                name: format!("CMS.INCRBY {size} x{per_call}"),
                command: "CMS.INCRBY",
                key,
                items_per_call: per_call,
                calls: calls(count, per_call, &mut |random| vec![skewed_item(random), "1".into()]),
            });
            list.push(Workload {
                name: format!("CMS.QUERY {size} x{per_call}"),
                command: "CMS.QUERY",
                key,
                items_per_call: per_call,
                calls: calls(count, per_call, &mut |random| vec![skewed_item(random)]),
            });
        }
    }
    for (per_call, count) in [(1, SINGLE_CALLS), (BATCH, BATCH_CALLS)] {
        list.push(Workload {
            name: format!("TOPK.ADD x{per_call}"),
            command: "TOPK.ADD",
            key: "topk",
            items_per_call: per_call,
            calls: calls(count, per_call, &mut |random| vec![skewed_item(random)]),
        });
        list.push(Workload {
            name: format!("TOPK.QUERY x{per_call}"),
            command: "TOPK.QUERY",
            key: "topk",
            items_per_call: per_call,
            calls: calls(count, per_call, &mut |random| vec![skewed_item(random)]),
        });
        list.push(Workload {
            name: format!("TDIGEST.ADD x{per_call}"),
            command: "TDIGEST.ADD",
            key: "tdigest",
            items_per_call: per_call,
            calls: calls(count, per_call, &mut |random| vec![value(random)]),
        });
    }
    for quantiles in [1, 10] {
        list.push(Workload {
            name: format!("TDIGEST.QUANTILE x{quantiles}"),
            command: "TDIGEST.QUANTILE",
            key: "tdigest",
            items_per_call: quantiles,
            calls: calls(SINGLE_CALLS, quantiles, &mut |random| {
                vec![format!("{:.4}", (random.next() >> 11) as f64 / (1u64 << 53) as f64)]
            }),
        });
    }
    list
}

/// The same sketches on either server, filled alike: a small (40 KB) and a large (32 MB)
/// Count-Min sketch, one of a single counter (the floor), a Top-K of 50, a t-digest of
/// 100,000 values.
fn prepare(con: &mut Connection) {
    command(con, &["FLUSHALL"]);
    command(con, &["CMS.INITBYDIM", "cms:small", "2000", "5"]);
    command(con, &["CMS.INITBYDIM", "cms:floor", "1", "1"]);
    command(con, &["CMS.INITBYDIM", "cms:large", "1000000", "8"]);
    command(con, &["TOPK.RESERVE", "topk", "50", "2000", "7", "0.925"]);
    command(con, &["TDIGEST.CREATE", "tdigest", "COMPRESSION", "100"]);
    let mut random = Random(0x5EED_CAFE);
    for _ in 0..100 {
        let items: Vec<String> = (0..1000).map(|_| skewed_item(&mut random)).collect();
        let mut args = vec!["TOPK.ADD", "topk"];
        args.extend(items.iter().map(String::as_str));
        command(con, &args);
        let values: Vec<String> = (0..1000).map(|_| value(&mut random)).collect();
        let mut args = vec!["TDIGEST.ADD", "tdigest"];
        args.extend(values.iter().map(String::as_str));
        command(con, &args);
    }
}

pub fn run(rounds: usize) -> Vec<Row> {
    let mut servers = [("redbloom", Server::start()), ("RedisBloom", Server::start_redisbloom(&[]))];
    let mut connections: Vec<Connection> =
        servers.iter_mut().map(|(_, server)| server.connection()).collect();
    for con in &mut connections {
        prepare(con);
    }
    let mut random = Random(0xB10B_5EED);
    let workloads = workloads(&mut random);
    let mut rows = Vec::new();
    for workload in &workloads {
        let mut samples = [Vec::new(), Vec::new()];
        // Each round runs a slice on both servers; the first to go alternates.
        for round in 0..rounds * 2 {
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for index in order {
                let (usec_per_call, _) = timed(
                    &mut connections[index],
                    &workload.command.to_lowercase(),
                    workload.key,
                    &workload.calls,
                    &[workload.command],
                    workload.items_per_call,
                );
                samples[index].push(usec_per_call / workload.items_per_call as f64);
            }
        }
        rows.push(Row::of_samples(workload.name.clone(), samples));
    }
    drop(servers);
    rows
}

/// The Markdown table the README quotes.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| workload | redbloom µs/item | RedisBloom µs/item | RedisBloom ÷ redbloom |\n|---|---|---|---|\n",
    );
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {:.3} | {:.3} | {:.2} |",
            row.workload,
            row.redbloom_usec_per_item,
            row.redisbloom_usec_per_item,
            row.ratio()
        );
    }
    out
}
