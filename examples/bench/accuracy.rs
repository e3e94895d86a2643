//! The t-digest's accuracy against RedisBloom's: the same streams of 100,000 values fed to
//! this module's core and to RedisBloom 2.8.2 through a real server, one value per ADD, one
//! per ADD with a QUANTILE read every 1,000 (RedisBloom's reads compress its digest), and
//! batches of 100; then the quantiles 0.001 to 0.999 of each, scored by their rank error: how
//! far the fraction asked is from the ranks the answer covers in the exact, sorted stream.

use crate::common::Server;
use crate::workloads::Random;
use redbloom_core::t_digest::TDigest;
use redis::Connection;
use std::fmt::Write;
use std::path::Path;

const VALUES: usize = 100_000;
const READ_EVERY: usize = 1_000;
const BATCH: usize = 100;
/// Commands sent to RedisBloom before their replies are read.
const PIPELINE: usize = 1_000;

/// One stream fed one way: the mean and worst rank error of either module.
pub struct Row {
    pub stream: &'static str,
    pub feeding: &'static str,
    pub redbloom: (f64, f64),
    pub redisbloom: (f64, f64),
}

fn uniform(random: &mut Random) -> f64 {
    (random.next() >> 11) as f64 / (1u64 << 53) as f64
}

fn normal(random: &mut Random) -> f64 {
    let (u, v) = (uniform(random).max(f64::MIN_POSITIVE), uniform(random));
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

fn streams() -> Vec<(&'static str, Vec<f64>)> {
    let mut random = Random(0xACC0_5EED);
    vec![
        ("uniform", (0..VALUES).map(|_| uniform(&mut random) * 1000.0).collect()),
        ("normal", (0..VALUES).map(|_| normal(&mut random)).collect()),
        ("lognormal", (0..VALUES).map(|_| normal(&mut random).exp()).collect()),
        ("ascending", (0..VALUES).map(|i| i as f64).collect()),
        ("descending", (0..VALUES).map(|i| (VALUES - i) as f64).collect()),
        ("integers with ties", (0..VALUES).map(|_| (random.next() % 1000) as f64).collect()),
    ]
}

const FEEDINGS: [&str; 3] = ["single adds", "single adds, a read every 1,000", "batches of 100"];

fn fractions() -> Vec<f64> {
    (1..1000).map(|i| f64::from(i) / 1000.0).collect()
}

/// Mean and worst rank error of `answers` to `fractions` in `sorted`.
fn rank_errors(sorted: &[f64], fractions: &[f64], answers: &[f64]) -> (f64, f64) {
    let n = sorted.len() as f64;
    let errors: Vec<f64> = fractions
        .iter()
        .zip(answers)
        .map(|(&q, &value)| {
            let below = sorted.partition_point(|&v| v < value) as f64 / n;
            let up_to = sorted.partition_point(|&v| v <= value) as f64 / n;
            (below - q).max(q - up_to).max(0.0)
        })
        .collect();
    (errors.iter().sum::<f64>() / errors.len() as f64, errors.iter().copied().fold(0.0, f64::max))
}

fn ours(values: &[f64], feeding: usize, fractions: &[f64]) -> Vec<f64> {
    let mut digest = TDigest::new(100, usize::MAX).expect("a digest of compression 100");
    let per_call = if feeding == 2 { BATCH } else { 1 };
    for (index, chunk) in values.chunks(per_call).enumerate() {
        digest.add(chunk).expect("finite values");
        if feeding == 1 && (index + 1).is_multiple_of(READ_EVERY) {
            let _ = digest.quantiles(&[0.5]);
        }
    }
    digest.quantiles(fractions).expect("memory for the answers")
}

fn theirs(con: &mut Connection, values: &[f64], feeding: usize, fractions: &[f64]) -> Vec<f64> {
    redis::cmd("DEL").arg("accuracy").query::<()>(con).expect("DEL");
    redis::cmd("TDIGEST.CREATE").arg("accuracy").query::<()>(con).expect("TDIGEST.CREATE");
    let per_call = if feeding == 2 { BATCH } else { 1 };
    let calls: Vec<&[f64]> = values.chunks(per_call).collect();
    for (slice_index, slice) in calls.chunks(PIPELINE).enumerate() {
        let mut pipe = redis::pipe();
        for (offset, chunk) in slice.iter().enumerate() {
            let mut add = redis::cmd("TDIGEST.ADD");
            add.arg("accuracy");
            for value in *chunk {
                // Shortest round-trip form: RedisBloom's strtod reads the very double.
                add.arg(value.to_string());
            }
            pipe.add_command(add).ignore();
            let index = slice_index * PIPELINE + offset;
            if feeding == 1 && (index + 1).is_multiple_of(READ_EVERY) {
                pipe.cmd("TDIGEST.QUANTILE").arg("accuracy").arg("0.5").ignore();
            }
        }
        pipe.query::<()>(con).expect("TDIGEST.ADD");
    }
    let mut quantile = redis::cmd("TDIGEST.QUANTILE");
    quantile.arg("accuracy");
    for q in fractions {
        quantile.arg(q.to_string());
    }
    let answers: Vec<String> = quantile.query(con).expect("TDIGEST.QUANTILE");
    answers.iter().map(|text| text.parse().unwrap_or(f64::NAN)).collect()
}

pub fn run() -> Vec<Row> {
    let server = Server::start_redisbloom(&[]);
    let mut con = server.connection();
    let fractions = fractions();
    let mut rows = Vec::new();
    for (stream, values) in streams() {
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        for (feeding, name) in FEEDINGS.iter().enumerate() {
            let row = Row {
                stream,
                feeding: name,
                redbloom: rank_errors(&sorted, &fractions, &ours(&values, feeding, &fractions)),
                redisbloom: rank_errors(&sorted, &fractions, &theirs(&mut con, &values, feeding, &fractions)),
            };
            eprintln!(
                "   {:<20} {:<32} mean {:.6} / {:.6}  worst {:.6} / {:.6}",
                row.stream, row.feeding, row.redbloom.0, row.redisbloom.0, row.redbloom.1, row.redisbloom.1
            );
            rows.push(row);
        }
    }
    rows
}

/// The Markdown table, with the means over every case last.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| stream | feeding | redbloom mean | RedisBloom mean | redbloom worst | RedisBloom worst |\n\
         |---|---|---|---|---|---|\n",
    );
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {:.6} | {:.6} | {:.6} | {:.6} |",
            row.stream, row.feeding, row.redbloom.0, row.redisbloom.0, row.redbloom.1, row.redisbloom.1
        );
    }
    let count = rows.len().max(1) as f64;
    let (ours, theirs) =
        rows.iter().fold((0.0, 0.0), |(a, b), row| (a + row.redbloom.0, b + row.redisbloom.0));
    let worst = |of: fn(&Row) -> f64| rows.iter().map(of).fold(0.0, f64::max);
    let _ = writeln!(
        out,
        "| all | mean of means, worst of worsts | {:.6} | {:.6} | {:.6} | {:.6} |",
        ours / count,
        theirs / count,
        worst(|row| row.redbloom.1),
        worst(|row| row.redisbloom.1)
    );
    out
}

/// Measures, prints the table, and writes it beside the JSON report.
pub fn report(json: &Path) {
    eprintln!("== t-digest accuracy, redbloom's core and RedisBloom on the same streams");
    let table = table(&run());
    println!("{table}");
    std::fs::write(json.with_file_name("tdigest-accuracy.md"), table).expect("writing the accuracy table");
}
