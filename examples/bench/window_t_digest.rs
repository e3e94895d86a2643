//! Windowed t-digests against a plain one of the same compression (100), on one server, the
//! work interleaved in slices as for every windowed type (`window::compare`): TDIGEST.ADD of
//! one value and of a hundred, TDIGEST.QUANTILE of one fraction and of ten and TDIGEST.CDF,
//! each read once with no write between reads (what a dashboard polling a key sees) and once
//! right after a write (what a key written and read in turn sees: the window's digest made
//! again for every read).
//!
//! The windowed digest is an hour cut into 4 generations, in the steady state: 5 live
//! generations of 100,000 values each, made in process at the spans before this one (their
//! record given to RESTORE), against a plain digest of the same 500,000 values; and first the rank
//! error of both against the exact quantiles of those values.

use crate::common::{now_ms, Server};
use crate::window::{compare, Row, Workload};
use crate::workloads::{command, commandstat, median, Random};
use redbloom_core::decode::{Persistent, Record};
use redbloom_core::dump_payload::dump_payload;
use redbloom_core::t_digest::WindowTDigest;
use redbloom_core::window::Schedule;
use redis::Connection;

const WINDOW_MS: u64 = 3_600_000;
const GENERATIONS: u32 = 4;
const VALUES_PER_GENERATION: usize = 100_000;
const SINGLE_CALLS: usize = 2_000;
const BATCH_CALLS: usize = 100;
/// Reads each following a write, in a slice.
const READS_AFTER_WRITES: usize = 1_000;

fn value(random: &mut Random) -> f64 {
    // Latencies: a long tail over a floor.
    let unit = (random.next() >> 11) as f64 / (1u64 << 53) as f64;
    1.0 + 50.0 * (-(1.0 - unit).ln()).powf(1.5)
}

fn fraction(random: &mut Random) -> String {
    format!("{:.4}", (random.next() >> 11) as f64 / (1u64 << 53) as f64)
}

/// The windowed digest in its steady state, each live generation full, and a plain digest of
/// the same values; the values, sorted.
fn prepare(con: &mut Connection) -> Vec<f64> {
    let schedule = Schedule::new(WINDOW_MS, GENERATIONS).expect("the bench's schedule");
    let mut windowed = WindowTDigest::new(100, schedule, usize::MAX).expect("a windowed digest");
    let now = now_ms();
    let current = schedule.span_start(now);
    command(con, &["TDIGEST.CREATE", "plain", "COMPRESSION", "100"]);
    let mut random = Random(0x7D16_E575);
    let mut all = Vec::new();
    for age in (0..=u64::from(GENERATIONS)).rev() {
        windowed.rotate(current - age * schedule.span_ms());
        for _ in 0..VALUES_PER_GENERATION / 1000 {
            let values: Vec<f64> = (0..1000).map(|_| value(&mut random)).collect();
            windowed.add(&values).expect("values added");
            all.extend_from_slice(&values);
            let texts: Vec<String> = values.iter().map(f64::to_string).collect();
            let mut args = vec!["TDIGEST.ADD", "plain"];
            args.extend(texts.iter().map(String::as_str));
            command(con, &args);
        }
    }
    windowed.rotate(now);
    let mut record = Record::default();
    windowed.save_rdb(&mut record);
    let payload = dump_payload("rbTDIGwnd", WindowTDigest::ENCODING_VERSION, &record).expect("a payload");
    redis::cmd("RESTORE").arg("windowed").arg(0).arg(payload).query::<()>(con).expect("RESTORE");
    all.sort_by(f64::total_cmp);
    all
}

pub fn run(rounds: usize) -> Vec<Row> {
    let server = Server::start();
    let mut con = server.connection();
    let values = prepare(&mut con);
    rank_errors(&mut con, &values);
    let mut random = Random(0x00C0_FFEE);
    let mut calls = |count: usize, per_call: usize, make: fn(&mut Random) -> String| -> Vec<Vec<String>> {
        (0..count).map(|_| (0..per_call).map(|_| make(&mut random)).collect()).collect()
    };
    let text = |random: &mut Random| value(random).to_string();
    let workloads = [
        Workload {
            name: "TDIGEST.ADD",
            stat: "tdigest.add",
            per_call: 1,
            calls: calls(SINGLE_CALLS, 1, text),
        },
        Workload {
            name: "TDIGEST.ADD",
            stat: "tdigest.add",
            per_call: 100,
            calls: calls(BATCH_CALLS, 100, text),
        },
        Workload {
            name: "TDIGEST.QUANTILE",
            stat: "tdigest.quantile",
            per_call: 1,
            calls: calls(SINGLE_CALLS, 1, fraction),
        },
        Workload {
            name: "TDIGEST.QUANTILE",
            stat: "tdigest.quantile",
            per_call: 10,
            calls: calls(SINGLE_CALLS, 10, fraction),
        },
        Workload {
            name: "TDIGEST.CDF",
            stat: "tdigest.cdf",
            per_call: 1,
            calls: calls(SINGLE_CALLS, 1, text),
        },
    ];
    let mut rows = compare(&mut con, ["windowed", "plain"], &workloads, rounds);
    for (read, stat, per_call) in
        [("TDIGEST.QUANTILE", "tdigest.quantile", 1), ("TDIGEST.QUANTILE", "tdigest.quantile", 10)]
    {
        rows.push(after_writes(&mut con, read, stat, per_call, rounds, &mut random));
    }
    memory_over_adds(&mut con, &mut random);
    rows
}

/// Reads each right after a one-value add, on either key in turn, interleaved in `rounds * 2`
/// slices; the reads' server time per item, median of the slices.
fn after_writes(
    con: &mut Connection,
    read: &str,
    stat: &str,
    per_call: usize,
    rounds: usize,
    random: &mut Random,
) -> Row {
    let mut samples = [Vec::new(), Vec::new()];
    for round in 0..rounds * 2 {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for index in order {
            let key = ["windowed", "plain"][index];
            command(con, &["CONFIG", "RESETSTAT"]);
            let mut pipe = redis::pipe();
            for _ in 0..READS_AFTER_WRITES {
                pipe.cmd("TDIGEST.ADD").arg(key).arg(value(random)).ignore();
                let reads = pipe.cmd(read).arg(key);
                for _ in 0..per_call {
                    reads.arg(fraction(random));
                }
                reads.ignore();
            }
            pipe.query::<()>(con).expect("adds and reads");
            samples[index].push(commandstat(con, stat) / per_call as f64);
        }
    }
    let [windowed, plain] = samples;
    let row = Row {
        workload: format!("{read} x{per_call} after an add"),
        windowed_usec_per_item: median(windowed),
        plain_usec_per_item: median(plain),
        memory_ratio: memory_usage(con, "windowed") as f64 / memory_usage(con, "plain").max(1) as f64,
    };
    eprintln!(
        "   {:<36} windowed {:>7.3} us/item  plain {:>7.3} us/item  windowed / plain {:.2}  memory {:.2}",
        row.workload,
        row.windowed_usec_per_item,
        row.plain_usec_per_item,
        row.windowed_usec_per_item / row.plain_usec_per_item,
        row.memory_ratio,
    );
    row
}

/// Either key's memory (TDIGEST.INFO's, its node arrays) over 5,000 adds of one value, read
/// after every tenth: a digest's array grows until it compresses, so one instant's ratio says
/// little; the largest and the mean do.
fn memory_over_adds(con: &mut Connection, random: &mut Random) {
    let mut samples = [Vec::new(), Vec::new()];
    for _ in 0..500 {
        for (index, key) in ["windowed", "plain"].into_iter().enumerate() {
            let mut pipe = redis::pipe();
            for _ in 0..10 {
                pipe.cmd("TDIGEST.ADD").arg(key).arg(value(random)).ignore();
            }
            pipe.query::<()>(con).expect("adds");
            let info: Vec<redis::Value> = redis::cmd("TDIGEST.INFO").arg(key).query(con).expect("INFO");
            let bytes = info.chunks(2).find_map(|pair| match pair {
                [redis::Value::SimpleString(label), redis::Value::Int(bytes)] if label == "Memory usage" => {
                    Some(*bytes as f64)
                }
                _ => None,
            });
            samples[index].push(bytes.expect("Memory usage"));
        }
    }
    let largest = |samples: &[f64]| samples.iter().copied().fold(0.0, f64::max);
    let mean = |samples: &[f64]| samples.iter().sum::<f64>() / samples.len() as f64;
    let [windowed, plain] = samples;
    eprintln!(
        "   memory over 5,000 adds (node arrays, bytes): windowed largest {:.0} mean {:.0}, plain largest {:.0} \
         mean {:.0}; windowed / plain: largest {:.2}, mean {:.2} (g + 1 = {})",
        largest(&windowed),
        mean(&windowed),
        largest(&plain),
        mean(&plain),
        largest(&windowed) / largest(&plain),
        mean(&windowed) / mean(&plain),
        GENERATIONS + 1,
    );
}

fn memory_usage(con: &mut Connection, key: &str) -> u64 {
    redis::cmd("MEMORY").arg("USAGE").arg(key).query(con).unwrap_or(0)
}

/// The rank error of either key's quantiles (999 fractions) against the exact ones of the
/// values both hold, `sorted`: how far the fraction of values at or below each answer is from
/// the fraction asked for; mean and largest.
fn rank_errors(con: &mut Connection, sorted: &[f64]) {
    let fractions: Vec<f64> = (1..1000).map(|i| f64::from(i) / 1000.0).collect();
    let mut errors = |key: &str| {
        let answers: Vec<f64> =
            redis::cmd("TDIGEST.QUANTILE").arg(key).arg(&fractions).query(con).expect("QUANTILE");
        let errors: Vec<f64> = fractions
            .iter()
            .zip(answers)
            .map(|(&fraction, answer)| {
                let below = sorted.partition_point(|&value| value < answer);
                let at_or_below = sorted.partition_point(|&value| value <= answer);
                ((below + at_or_below) as f64 / 2.0 / sorted.len() as f64 - fraction).abs()
            })
            .collect();
        (errors.iter().sum::<f64>() / errors.len() as f64, errors.iter().copied().fold(0.0, f64::max))
    };
    let ((windowed_mean, windowed_max), (plain_mean, plain_max)) = (errors("windowed"), errors("plain"));
    eprintln!(
        "   rank error of TDIGEST.QUANTILE over the window's {} values (999 fractions): windowed mean \
         {windowed_mean:.5} max {windowed_max:.5}, plain digest of the same values mean {plain_mean:.5} \
         max {plain_max:.5}",
        sorted.len()
    );
}
