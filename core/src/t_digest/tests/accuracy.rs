//! What RedisBloom's reads do to its accuracy. Its reads compress the digest they read, and a
//! stream read between writes then merges into other centroids than here, where reads change
//! nothing. Compressions at reads do not make a digest more accurate: every 1,000 values they
//! move the mean rank error either way by about 2% from stream to stream, and more often they
//! raise it.

use super::*;
use crate::t_digest::rank_error::{rank_errors, Random};

/// Values of one stream kind: what `make bench`'s accuracy table feeds both modules.
fn stream(kind: &str, random: &mut Random, len: usize) -> Vec<f64> {
    let normal = |random: &mut Random| {
        let (u, v) = (random.unit().max(f64::MIN_POSITIVE), random.unit());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    };
    (0..len)
        .map(|_| match kind {
            "uniform" => random.unit() * 1000.0,
            "normal" => normal(random),
            "lognormal" => normal(random).exp(),
            _ => (random.unit() * 1000.0).floor(),
        })
        .collect()
}

/// The mean rank error of a digest fed `values` one at a time, compressed after every
/// `compress_every` of them (as a RedisBloom read would) or never (`None`).
fn mean_rank_error(values: &[f64], compress_every: Option<usize>) -> f64 {
    let mut digest = TDigest::new(DEFAULT_COMPRESSION, BUDGET).unwrap();
    for (index, &value) in values.iter().enumerate() {
        digest.add(&[value]).unwrap();
        if compress_every.is_some_and(|every| (index + 1) % every == 0) {
            digest.compress();
        }
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    rank_errors(&digest, &sorted).0
}

/// The table of docs/tdigest-commands.md: per stream kind, the mean rank error of 40 streams of
/// 100,000 values fed one at a time, against the same streams with a compression every 100,
/// 500 or 1,000 values, printed by `cargo test -p redbloom-core --release
/// compressions_at_reads_do_not_make_a_digest_more_accurate -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement: prints the table of compressions at reads"]
fn compressions_at_reads_do_not_make_a_digest_more_accurate() {
    const STREAMS: u64 = 40;
    let intervals = [None, Some(100), Some(500), Some(1000)];
    println!("| stream | no read | a read every 100 | every 500 | every 1,000 |");
    println!("|---|---|---|---|---|");
    for kind in ["uniform", "normal", "lognormal", "integers with ties"] {
        let mut sums = [0.0; 4];
        for seed in 0..STREAMS {
            let values = stream(kind, &mut Random(0x5eed_0001 + seed * 7919), 100_000);
            for (sum, every) in sums.iter_mut().zip(intervals) {
                *sum += mean_rank_error(&values, every) / STREAMS as f64;
            }
        }
        let [none, hundred, five_hundred, thousand] = sums;
        println!(
            "| {kind} | {none:.6} | {:+.1}% | {:+.1}% | {:+.1}% |",
            100.0 * (hundred / none - 1.0),
            100.0 * (five_hundred / none - 1.0),
            100.0 * (thousand / none - 1.0)
        );
        assert!(hundred > none, "{kind}: compressing every 100 values made the digest more accurate");
    }
}
