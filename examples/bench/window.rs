//! Windowed values against plain ones of the same size, on one server, the work interleaved in
//! short slices ([`compare`]), with their memory: here BF.EXISTS, BF.MEXISTS, BF.ADD and
//! BF.MADD on a filter reserved with `WINDOW` (an hour, 4 generations) and on a plain filter
//! of the same capacity and rate, both half full; each windowed sketch's file its family's.
//! Server time per item from INFO commandstats, the median of the slices.

use crate::common::Server;
use crate::workloads::{command, median, timed, Random};
use std::fmt::Write;

const CAPACITY: u64 = 1_000_000;
const SINGLE_CALLS: usize = 2_000;
const BATCH_CALLS: usize = 40;
const BATCH: usize = 100;

/// One workload's medians: the windowed filter's and the plain one's server time per item.
pub struct Row {
    pub workload: String,
    pub windowed_usec_per_item: f64,
    pub plain_usec_per_item: f64,
    /// The windowed key's MEMORY USAGE over the plain one's, after the workload.
    pub memory_ratio: f64,
}

fn fill(con: &mut redis::Connection, key: &str) {
    for start in (0..CAPACITY / 2).step_by(1000) {
        let items: Vec<String> = (start..start + 1000).map(|i| format!("member:{i}")).collect();
        let mut args = vec!["BF.MADD", key];
        args.extend(items.iter().map(String::as_str));
        command(con, &args);
    }
}

pub fn run(rounds: usize) -> Vec<Row> {
    let server = Server::start();
    let mut con = server.connection();
    let capacity = CAPACITY.to_string();
    command(&mut con, &["BF.RESERVE", "plain", "0.01", &capacity]);
    command(
        &mut con,
        &["BF.RESERVE", "windowed", "0.01", &capacity, "WINDOW", "3600000", "GENERATIONS", "4"],
    );
    fill(&mut con, "plain");
    fill(&mut con, "windowed");
    let mut random = Random(0x00C0_FFEE);
    let mut calls = |count: usize, per_call: usize| -> Vec<Vec<String>> {
        (0..count)
            .map(|_| (0..per_call).map(|_| format!("member:{}", random.next() % CAPACITY)).collect())
            .collect()
    };
    let workloads = [
        Workload { name: "BF.EXISTS", stat: "bf.exists", per_call: 1, calls: calls(SINGLE_CALLS, 1) },
        Workload {
            name: "BF.MEXISTS",
            stat: "bf.mexists",
            per_call: BATCH,
            calls: calls(BATCH_CALLS, BATCH),
        },
        Workload { name: "BF.ADD", stat: "bf.add", per_call: 1, calls: calls(SINGLE_CALLS, 1) },
        Workload { name: "BF.MADD", stat: "bf.madd", per_call: BATCH, calls: calls(BATCH_CALLS, BATCH) },
    ];
    compare(&mut con, ["windowed", "plain"], &workloads, rounds)
}

/// One command's calls, each the command, the key, then the call's arguments.
pub struct Workload {
    pub name: &'static str,
    /// Its name in INFO commandstats.
    pub stat: &'static str,
    /// Items per call: the table is per item.
    pub per_call: usize,
    pub calls: Vec<Vec<String>>,
}

/// Each workload on the windowed key and the plain one, interleaved in `rounds * 2` slices
/// (the order alternating), with each key's MEMORY USAGE after the workload; the medians.
pub fn compare(
    con: &mut redis::Connection,
    [windowed, plain]: [&str; 2],
    workloads: &[Workload],
    rounds: usize,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for workload in workloads {
        let mut samples = [Vec::new(), Vec::new()];
        for round in 0..rounds * 2 {
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for index in order {
                let key = [windowed, plain][index];
                let (usec, _) =
                    timed(con, workload.stat, key, &workload.calls, &[workload.name], workload.per_call);
                samples[index].push(usec / workload.per_call as f64);
            }
        }
        let [windowed_usec, plain_usec] = samples;
        let row = Row {
            workload: format!("{} x{}", workload.name, workload.per_call),
            windowed_usec_per_item: median(windowed_usec),
            plain_usec_per_item: median(plain_usec),
            memory_ratio: memory_usage(con, windowed) as f64 / memory_usage(con, plain).max(1) as f64,
        };
        eprintln!(
            "   {:<22} windowed {:>7.3} us/item  plain {:>7.3} us/item  windowed / plain {:.2}  memory {:.2}",
            row.workload,
            row.windowed_usec_per_item,
            row.plain_usec_per_item,
            row.windowed_usec_per_item / row.plain_usec_per_item,
            row.memory_ratio,
        );
        rows.push(row);
    }
    rows
}

fn memory_usage(con: &mut redis::Connection, key: &str) -> u64 {
    redis::cmd("MEMORY").arg("USAGE").arg(key).query(con).unwrap_or(0)
}

/// The Markdown table the README quotes.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| workload | windowed µs/item | plain µs/item | windowed ÷ plain | memory windowed ÷ plain |\n|---|---|---|---|---|\n",
    );
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {:.3} | {:.3} | {:.2} | {:.2} |",
            row.workload,
            row.windowed_usec_per_item,
            row.plain_usec_per_item,
            row.windowed_usec_per_item / row.plain_usec_per_item,
            row.memory_ratio
        );
    }
    out
}
