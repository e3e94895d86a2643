//! Windowed filters against plain ones of the same size, on one server, the work interleaved
//! in short slices: BF.EXISTS, BF.MEXISTS, BF.ADD and BF.MADD on a filter reserved with
//! `WINDOW` (an hour, 4 generations) and on a plain filter of the same capacity and rate, both
//! half full. Server time per item from INFO commandstats, the median of the slices; the
//! issue's bound is 2x.

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
    command(&mut con, &["BF.RESERVE", "windowed", "0.01", &capacity, "WINDOW", "3600000", "GENERATIONS", "4"]);
    fill(&mut con, "plain");
    fill(&mut con, "windowed");
    let mut random = Random(0x00C0_FFEE);
    let mut calls = |count: usize, per_call: usize| -> Vec<Vec<String>> {
        (0..count)
            .map(|_| (0..per_call).map(|_| format!("member:{}", random.next() % CAPACITY)).collect())
            .collect()
    };
    let workloads = [
        ("BF.EXISTS", "bf.exists", 1, calls(SINGLE_CALLS, 1)),
        ("BF.MEXISTS", "bf.mexists", BATCH, calls(BATCH_CALLS, BATCH)),
        ("BF.ADD", "bf.add", 1, calls(SINGLE_CALLS, 1)),
        ("BF.MADD", "bf.madd", BATCH, calls(BATCH_CALLS, BATCH)),
    ];
    let mut rows = Vec::new();
    for (name, stat, per_call, calls) in &workloads {
        let mut samples = [Vec::new(), Vec::new()];
        for round in 0..rounds * 2 {
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for index in order {
                let key = ["windowed", "plain"][index];
                let (usec, _) = timed(&mut con, stat, key, calls, &[name], *per_call);
                samples[index].push(usec / *per_call as f64);
            }
        }
        let [windowed, plain] = samples;
        let row = Row {
            workload: format!("{name} x{per_call}"),
            windowed_usec_per_item: median(windowed),
            plain_usec_per_item: median(plain),
        };
        eprintln!(
            "   {:<16} windowed {:>7.3} us/item  plain {:>7.3} us/item  windowed / plain {:.2}",
            row.workload,
            row.windowed_usec_per_item,
            row.plain_usec_per_item,
            row.windowed_usec_per_item / row.plain_usec_per_item
        );
        rows.push(row);
    }
    rows
}

/// The Markdown table the README quotes.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from("| workload | windowed µs/item | plain µs/item | windowed ÷ plain |\n|---|---|---|---|\n");
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {:.3} | {:.3} | {:.2} |",
            row.workload,
            row.windowed_usec_per_item,
            row.plain_usec_per_item,
            row.windowed_usec_per_item / row.plain_usec_per_item
        );
    }
    out
}
