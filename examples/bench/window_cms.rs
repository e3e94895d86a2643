//! Windowed Count-Min sketches against plain ones of the same dimensions, on one server
//! ([`window::compare`]): CMS.INCRBY and CMS.QUERY of one item and of a hundred, on a sketch
//! created with `WINDOW` (an hour, 4 generations: nothing rotates during the bench) and on a
//! plain one, 100,000 by 5 (2 MB each); then a sketch of a 1-second window, which rotates
//! every 250 ms while the bench runs, against the same plain one.

use crate::window::{self, Row, Workload};
use crate::workloads::{command, Random};

const WIDTH: &str = "100000";
const DEPTH: &str = "5";
/// Distinct items the calls draw from.
const ITEMS: u64 = 1_000_000;
const SINGLE_CALLS: usize = 2_000;
const BATCH_CALLS: usize = 40;
const BATCH: usize = 100;

pub fn run(rounds: usize) -> Vec<Row> {
    let server = crate::common::Server::start();
    let mut con = server.connection();
    command(&mut con, &["CMS.INITBYDIM", "plain", WIDTH, DEPTH]);
    command(&mut con, &["CMS.INITBYDIM", "windowed", WIDTH, DEPTH, "WINDOW", "3600000", "GENERATIONS", "4"]);
    command(&mut con, &["CMS.INITBYDIM", "rotating", WIDTH, DEPTH, "WINDOW", "1000", "GENERATIONS", "4"]);
    let mut random = Random(0x00C0_FFEE);
    let mut calls = |count: usize, per_call: usize, increments: bool| -> Vec<Vec<String>> {
        (0..count)
            .map(|_| {
                (0..per_call)
                    .flat_map(|_| {
                        let item = format!("item:{}", random.next() % ITEMS);
                        if increments {
                            vec![item, "1".to_string()]
                        } else {
                            vec![item]
                        }
                    })
                    .collect()
            })
            .collect()
    };
    let workloads = [
        Workload { name: "CMS.INCRBY", stat: "cms.incrby", per_call: 1, calls: calls(SINGLE_CALLS, 1, true) },
        Workload {
            name: "CMS.INCRBY",
            stat: "cms.incrby",
            per_call: BATCH,
            calls: calls(BATCH_CALLS, BATCH, true),
        },
        Workload { name: "CMS.QUERY", stat: "cms.query", per_call: 1, calls: calls(SINGLE_CALLS, 1, false) },
        Workload {
            name: "CMS.QUERY",
            stat: "cms.query",
            per_call: BATCH,
            calls: calls(BATCH_CALLS, BATCH, false),
        },
    ];
    let mut rows = window::compare(&mut con, ["windowed", "plain"], &workloads, rounds);
    let rotating = window::compare(&mut con, ["rotating", "plain"], &workloads, rounds);
    rows.extend(
        rotating.into_iter().map(|row| Row { workload: format!("{} (1 s window)", row.workload), ..row }),
    );
    rows
}
