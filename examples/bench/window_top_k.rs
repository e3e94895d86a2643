//! Windowed Top-K against plain Top-K of the same k, width, depth and decay (the sketches
//! bench's shape: 50, 2000, 7, 0.925), on one server, interleaved ([`window::compare`]): both
//! filled with the same 100,000 skewed items, then TOPK.ADD, TOPK.QUERY (one item and a
//! hundred a call) and TOPK.LIST. The windowed list has a window of an hour in 4 generations
//! (one generation while the bench runs); the writes also run on one of a second in 4
//! generations, which rotates every 250 ms while they run and keeps the generations they
//! wrote (the cost of a window in its steady state: reads of older generations for items not
//! in the list, and a recount of the list at each rotation).

use crate::common::Server;
use crate::sketches::skewed_item;
use crate::window::{self, Row, Workload};
use crate::workloads::{command, Random};

const SHAPE: [&str; 4] = ["50", "2000", "7", "0.925"];
const SINGLE_CALLS: usize = 2_000;
const BATCH_CALLS: usize = 40;
const BATCH: usize = 100;

fn fill(con: &mut redis::Connection, key: &str) {
    let mut random = Random(0x5EED_CAFE);
    for _ in 0..100 {
        let items: Vec<String> = (0..1000).map(|_| skewed_item(&mut random)).collect();
        let mut args = vec!["TOPK.ADD", key];
        args.extend(items.iter().map(String::as_str));
        command(con, &args);
    }
}

fn reserve(con: &mut redis::Connection, key: &str, window: &[&str]) {
    let mut args = vec!["TOPK.RESERVE", key];
    args.extend(SHAPE);
    args.extend(window);
    command(con, &args);
}

pub fn run(rounds: usize) -> Vec<Row> {
    let server = Server::start();
    let mut con = server.connection();
    reserve(&mut con, "plain", &[]);
    reserve(&mut con, "windowed", &["WINDOW", "3600000", "GENERATIONS", "4"]);
    reserve(&mut con, "second", &["WINDOW", "1000", "GENERATIONS", "4"]);
    for key in ["plain", "windowed", "second"] {
        fill(&mut con, key);
    }
    let mut random = Random(0xB10B_5EED);
    let mut calls = |count: usize, per_call: usize| -> Vec<Vec<String>> {
        (0..count).map(|_| (0..per_call).map(|_| skewed_item(&mut random)).collect()).collect()
    };
    let writes = [
        Workload { name: "TOPK.ADD", stat: "topk.add", per_call: 1, calls: calls(SINGLE_CALLS, 1) },
        Workload { name: "TOPK.ADD", stat: "topk.add", per_call: BATCH, calls: calls(BATCH_CALLS, BATCH) },
    ];
    let reads = [
        Workload { name: "TOPK.QUERY", stat: "topk.query", per_call: 1, calls: calls(SINGLE_CALLS, 1) },
        Workload {
            name: "TOPK.QUERY",
            stat: "topk.query",
            per_call: BATCH,
            calls: calls(BATCH_CALLS, BATCH),
        },
        Workload { name: "TOPK.LIST", stat: "topk.list", per_call: 1, calls: vec![Vec::new(); SINGLE_CALLS] },
    ];
    let mut rows = window::compare(&mut con, ["windowed", "plain"], &writes, rounds);
    rows.extend(window::compare(&mut con, ["windowed", "plain"], &reads, rounds));
    // A window of a second: the writes keep all of its generations alive.
    let steady = window::compare(&mut con, ["second", "plain"], &writes, rounds);
    rows.extend(
        steady.into_iter().map(|row| Row { workload: format!("{} (1 s window)", row.workload), ..row }),
    );
    // Items drawn evenly from a million: nearly every add is of an item not listed, which a
    // windowed list counts in every older generation too.
    let uniform: Vec<Vec<String>> =
        (0..SINGLE_CALLS).map(|_| vec![format!("item:{}", random.next() % 1_000_000)]).collect();
    let uniform = [Workload { name: "TOPK.ADD", stat: "topk.add", per_call: 1, calls: uniform }];
    let steady = window::compare(&mut con, ["second", "plain"], &uniform, rounds);
    rows.extend(
        steady
            .into_iter()
            .map(|row| Row { workload: format!("{} (1 s window, uniform items)", row.workload), ..row }),
    );
    rows
}
