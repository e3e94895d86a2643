//! The t-digest's behaviour. Every number pinned here is RedisBloom 2.8.2's answer, each read
//! on a digest that no earlier read compressed (RedisBloom's reads compress the digest they
//! read; here they change nothing), and every record pinned here is one it saved.
//!
//! This file holds what the topic files share: the digests they read, the records RedisBloom
//! saved of them, and the way a record is written down and compared.

mod accuracy;
mod invariants;
mod records_and_limits;
mod redisbloom_answers;

use super::*;
use crate::decode::{DecodeError, Persistent, Record, RecordValue};

const BUDGET: usize = 1 << 30;

fn digest(compression: u64, batches: &[&[f64]]) -> TDigest {
    let mut digest = TDigest::new(compression, BUDGET).unwrap();
    for batch in batches {
        digest.add(batch).unwrap();
    }
    digest
}

/// 1500 values, of 1009 distinct ones, in no order.
fn spread() -> Vec<f64> {
    (0..1500).map(|i| f64::from((i * 7919) % 1009) / 7.0).collect()
}

/// 1037 values, of 6 distinct ones: centroids of equal means, whose order the sort decides.
fn duplicates() -> Vec<f64> {
    (0..997).map(|i| f64::from(i % 5)).chain(std::iter::repeat_n(2.5, 40)).collect()
}

fn spread_digest() -> TDigest {
    let values = spread();
    digest(50, &[&values[..700], &values[700..1100], &values[1100..]])
}

fn duplicates_digest() -> TDigest {
    let values = duplicates();
    digest(20, &[&values[..300], &values[300..]])
}

/// A record as `s<signed>` and `d<hex bits>` tokens, as the pinned ones are written.
fn tokens(digest: &TDigest) -> String {
    let mut record = Record::default();
    digest.save_rdb(&mut record);
    record
        .0
        .iter()
        .map(|value| match value {
            RecordValue::Signed(value) => format!("s{value}"),
            RecordValue::Double(value) => format!("d{:016x}", value.to_bits()),
            other => panic!("{other:?}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn record(tokens: &str) -> Record {
    Record(
        tokens
            .split_whitespace()
            .map(|token| match token.split_at(1) {
                ("s", value) => RecordValue::Signed(value.parse().unwrap()),
                ("d", bits) => RecordValue::Double(f64::from_bits(u64::from_str_radix(bits, 16).unwrap())),
                _ => panic!("{token}"),
            })
            .collect(),
    )
}

fn load(tokens: &str) -> Result<TDigest, DecodeError> {
    TDigest::load_rdb(0, &mut record(tokens), BUDGET)
}

/// Equal to the bit, NaN equal to NaN.
#[track_caller]
fn assert_same(ours: &[f64], theirs: &[f64]) {
    assert_eq!(ours.len(), theirs.len());
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        assert!(
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            "{i}: ours {a:e}, RedisBloom's {b:e}"
        );
    }
}

const QUANTILES: [f64; 11] = [0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0];
const POINTS: [f64; 10] = [-1.0, 0.0, 1.0, 2.5, 50.5, 72.0, 100.0, 143.9, 144.0, 200.0];
const RANKS: [u64; 11] = [0, 1, 2, 10, 100, 500, 1000, 1036, 1498, 1499, 1500];

const SPREAD_RECORD: &str = "d4049000000000000 d0000000000000000 d4062000000000000 s310 s29 s0 s6 d4097700000000000 \
    d0000000000000000 d0000000000000000 d0000000000000000 d3fc2492492492492 d3fcb6db6db6db6db d3fe2492492492492 \
    d3fef3cf3cf3cf3cf d3ffbefbefbefbefc d400a0b8c82e320b8 d4017baebaebaebb0 d40261d0662af4f87 d40330d65bf8c214f \
    d403f118b5de64d1a d4047ac1861861861 d4050b08f08f08f0a d4055eeb2c1d85009 d405a905ba61d14b5 d405df02f71aaff04 \
    d4060164924924925 d4060d117d9d6a88e d40614625d51f86f0 d40619283a83a83a9 d4061c00000000000 d4061dc30c30c30c4 \
    d4061e92492492492 d4061f24924924925 d4061f6db6db6db6e d4061f6db6db6db6e d4061fb6db6db6db7 d4062000000000000 \
    d3ff0000000000000 d3ff0000000000000 d3ff0000000000000 d4000000000000000 d4010000000000000 d4018000000000000 \
    d4022000000000000 d4033000000000000 d4042000000000000 d404f800000000000 d4059400000000000 d4062800000000000 \
    d4068000000000000 d406c200000000000 d406be00000000000 d4064c00000000000 d405bc00000000000 d4052000000000000 \
    d4047000000000000 d403d000000000000 d4034000000000000 d4024000000000000 d4018000000000000 d4008000000000000 \
    d4000000000000000 d3ff0000000000000 d3ff0000000000000 d3ff0000000000000 d3ff0000000000000";

const DUPLICATES_RECORD: &str = "d4034000000000000 d0000000000000000 d4010000000000000 s130 s13 s0 s9 \
    d4090340000000000 d0000000000000000 d0000000000000000 d0000000000000000 d0000000000000000 d0000000000000000 \
    d0000000000000000 d0000000000000000 d3fe8c6318c6318c8 d3fff3e7cf9f3e7d0 d4007596a90892fc5 d400f8d4fdf3b645b \
    d4010000000000000 d4010000000000000 d4010000000000000 d3ff0000000000000 d4000000000000000 d4018000000000000 \
    d3ff0000000000000 d404b000000000000 d4055c00000000000 d406b200000000000 d406fc00000000000 d406a200000000000 \
    d405f400000000000 d4048000000000000 d4040000000000000 d3ff0000000000000";

/// RedisBloom's record of a digest of one observation, 5.5: a count and a weight, no node.
const ONE_RECORD: &str =
    "d4059000000000000 d4016000000000000 d4016000000000000 s610 s0 s1 s0 d0000000000000000 d3ff0000000000000";
