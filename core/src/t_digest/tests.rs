//! The t-digest's behaviour. Every number pinned here is RedisBloom 2.8.2's answer, each read
//! on a digest that no earlier read compressed (RedisBloom's reads compress the digest they
//! read; here they change nothing), and every record pinned here is one it saved.

// The pinned numbers are RedisBloom's replies as it printed them (17 significant digits).
#![allow(clippy::unreadable_literal, clippy::excessive_precision)]

use proptest::prelude::*;

use super::centroid::Centroid;
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

#[test]
fn values_of_every_kind_answer_as_redisbloom() {
    let digest = spread_digest();
    assert_same(
        &digest.quantiles(&QUANTILES).unwrap(),
        &[
            0.0,
            0.0,
            1.284126984126984,
            14.908249784659899,
            36.621507826103418,
            71.861032400628432,
            107.32758168422123,
            129.29009632592906,
            142.55059523809524,
            143.85714285714286,
            144.0,
        ],
    );
    assert_same(
        &digest.cdfs(&POINTS).unwrap(),
        &[
            0.0,
            0.00066666666666666664,
            0.0081546391752577319,
            0.017661501567976391,
            0.3472591253588696,
            0.50098958389196124,
            0.69888253001235334,
            0.9993333333333333,
            0.9996666666666667,
            1.0,
        ],
    );
    assert_eq!(digest.ranks(&POINTS).unwrap(), [-1, 1, 12, 26, 521, 751, 1048, 1499, 1499, 1500]);
    assert_eq!(digest.rev_ranks(&POINTS).unwrap(), [1500, 1499, 1488, 1474, 979, 749, 452, 1, 0, -1]);
    assert_same(
        &digest.by_ranks(&RANKS).unwrap(),
        &[
            0.0,
            0.0,
            0.14285714285714285,
            0.81428571428571428,
            9.9697485054627926,
            48.554973996992878,
            95.397206145229319,
            98.826170668984233,
            143.85714285714286,
            144.0,
            f64::INFINITY,
        ],
    );
    assert_same(
        &digest.by_rev_ranks(&RANKS).unwrap(),
        &[
            144.0,
            143.85714285714286,
            143.71428571428572,
            142.9708994708995,
            134.13838298768297,
            95.301957130680563,
            48.461860154733351,
            45.04671128586569,
            0.0,
            0.0,
            f64::NEG_INFINITY,
        ],
    );
    assert_same(
        &[
            digest.trimmed_mean(0.1, 0.9).unwrap(),
            digest.trimmed_mean(0.0, 1.0).unwrap(),
            digest.trimmed_mean(0.33, 0.34).unwrap(),
        ],
        &[71.984026107967949, 71.978571428571456, 47.344494047619044],
    );
    assert_eq!(
        digest.info(),
        TDigestInfo {
            compression: 50,
            capacity: 310,
            merged_nodes: 29,
            unmerged_nodes: 57,
            merged_weight: 1443,
            unmerged_weight: 57,
            observations: 1500,
            total_compressions: 5,
            memory_usage: 4968,
        }
    );
    assert_eq!(tokens(&digest), SPREAD_RECORD.split_whitespace().collect::<Vec<_>>().join(" "));
}

#[test]
fn equal_means_sort_and_merge_as_redisbloom() {
    let digest = duplicates_digest();
    assert_same(
        &digest.quantiles(&QUANTILES).unwrap(),
        &[
            0.0,
            0.0,
            0.0,
            0.0,
            0.77292020373514447,
            2.0508066742672493,
            3.2333229235309289,
            3.96976647398844,
            4.0,
            4.0,
            4.0,
        ],
    );
    assert_same(
        &digest.cdfs(&POINTS).unwrap(),
        &[0.0, 0.072806171648987464, 0.29375176653476537, 0.60381769865623314, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    );
    assert_eq!(digest.ranks(&POINTS).unwrap(), [-1, 75, 305, 626, 1037, 1037, 1037, 1037, 1037, 1037]);
    assert_eq!(digest.rev_ranks(&POINTS).unwrap(), [1037, 961, 732, 411, -1, -1, -1, -1, -1, -1]);
    assert_same(
        &digest.by_ranks(&RANKS).unwrap(),
        &[0.0, 0.0, 0.0, 0.0, 0.0, 1.9736177712044578, 4.0, 4.0, f64::INFINITY, f64::INFINITY, f64::INFINITY],
    );
    assert_same(
        &digest.by_rev_ranks(&RANKS).unwrap(),
        &[
            4.0,
            4.0,
            4.0,
            4.0,
            3.9715144508670526,
            2.1238232041915115,
            0.0,
            0.0,
            -f64::INFINITY,
            -f64::INFINITY,
            -f64::INFINITY,
        ],
    );
    assert_same(
        &[
            digest.trimmed_mean(0.1, 0.9).unwrap(),
            digest.trimmed_mean(0.0, 1.0).unwrap(),
            digest.trimmed_mean(0.33, 0.34).unwrap(),
        ],
        &[2.0219398315282793, 2.0163934426229506, 0.77419354838709686],
    );
    let info = digest.info();
    assert_eq!((info.merged_nodes, info.unmerged_nodes, info.total_compressions), (17, 109, 8));
    assert_eq!(tokens(&digest), DUPLICATES_RECORD.split_whitespace().collect::<Vec<_>>().join(" "));
}

#[test]
fn ten_values_answer_as_redisbloom() {
    let digest = digest(100, &[&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]]);
    assert_same(
        &digest.by_ranks(&[0, 1, 9, 10, 11]).unwrap(),
        &[1.0, 2.0, 10.0, f64::INFINITY, f64::INFINITY],
    );
    assert_same(
        &digest.by_rev_ranks(&[0, 1, 9, 10, 11]).unwrap(),
        &[10.0, 9.0, 1.0, f64::NEG_INFINITY, f64::NEG_INFINITY],
    );
    assert_eq!(digest.ranks(&[0.0, 1.0, 5.0, 10.0, 11.0]).unwrap(), [-1, 0, 4, 9, 10]);
    assert_eq!(digest.rev_ranks(&[0.0, 1.0, 5.0, 10.0, 11.0]).unwrap(), [10, 9, 5, 0, -1]);
    assert_same(&digest.cdfs(&[0.0, 1.0, 5.5, 10.0, 11.0]).unwrap(), &[0.0, 0.05, 0.5, 0.95, 1.0]);
    // A descending pair starts a new walk over the centroids.
    assert_same(&digest.quantiles(&[0.0, 0.1, 0.5, 0.3, 1.0]).unwrap(), &[1.0, 2.0, 6.0, 4.0, 10.0]);
}

#[test]
fn an_empty_digest_answers_redisblooms_sentinels() {
    let mut digest = spread_digest();
    digest.reset();
    for empty in [TDigest::new(DEFAULT_COMPRESSION, BUDGET).unwrap(), digest] {
        assert_same(&empty.quantiles(&[0.0, 0.5, 1.0]).unwrap(), &[f64::NAN; 3]);
        assert_same(&empty.cdfs(&[1.0]).unwrap(), &[f64::NAN]);
        assert_eq!(empty.ranks(&[1.0]).unwrap(), [-2]);
        assert_eq!(empty.rev_ranks(&[1.0]).unwrap(), [-2]);
        assert_same(&empty.by_ranks(&[0, 1]).unwrap(), &[f64::NAN; 2]);
        assert_same(&empty.by_rev_ranks(&[0, 1]).unwrap(), &[f64::NAN; 2]);
        assert!(empty.trimmed_mean(0.1, 0.9).unwrap().is_nan());
        assert!(empty.min().is_nan() && empty.max().is_nan());
        let info = empty.info();
        assert_eq!(
            (info.merged_nodes, info.unmerged_nodes, info.observations, info.total_compressions),
            (0, 0, 0, 0)
        );
    }
}

#[test]
fn one_observation_is_never_merged_and_survives_a_reload() {
    // RedisBloom 2.8.2 compresses nothing of one observation: every interpolating read
    // answers NaN, and a rank is its cast of NaN.
    let one = digest(100, &[&[5.5]]);
    assert_same(&one.quantiles(&[0.0, 0.5, 1.0]).unwrap(), &[f64::NAN; 3]);
    assert_same(&one.cdfs(&[5.5, 4.0, 6.0]).unwrap(), &[f64::NAN; 3]);
    assert_eq!(one.ranks(&[5.5, 4.0, 6.0]).unwrap(), [i64::MIN, -1, 1]);
    assert_eq!(one.rev_ranks(&[5.5]).unwrap(), [i64::MIN]);
    assert_same(&one.by_ranks(&[0, 1]).unwrap(), &[5.5, f64::INFINITY]);
    assert!(one.trimmed_mean(0.1, 0.9).unwrap().is_nan());
    assert_eq!((one.min(), one.max()), (5.5, 5.5));
    assert_eq!(tokens(&one), ONE_RECORD);

    // RedisBloom loads its own record as a node of mean 0 and weight 0; the bounds keep the
    // value, which comes back here.
    let loaded = load(ONE_RECORD).unwrap();
    assert_eq!(tokens(&loaded), ONE_RECORD);
    let (mut loaded, mut direct) = (loaded, one);
    loaded.add(&[6.5, 7.5]).unwrap();
    direct.add(&[6.5, 7.5]).unwrap();
    assert_eq!(tokens(&loaded), tokens(&direct));
}

#[test]
fn a_node_of_no_weight_in_a_redisbloom_record_answers_as_redisbloom() {
    // RedisBloom's record of the one-observation record reloaded, then 7, 8 and 9 added: the
    // lost value is a centroid of mean 0 and weight 0.
    let digest = load(
        "d4059000000000000 d4014000000000000 d4022000000000000 s610 s4 s0 s1 d4010000000000000 d0000000000000000 \
         d0000000000000000 d401c000000000000 d4020000000000000 d4022000000000000 \
         d0000000000000000 d3ff0000000000000 d3ff0000000000000 d3ff0000000000000",
    )
    .unwrap();
    assert_same(&digest.quantiles(&[0.0, 0.1, 0.5, 0.9, 1.0]).unwrap(), &[7.0, 7.0, 9.0, 9.0, 9.0]);
    assert_same(&digest.cdfs(&[5.0, 7.0, 8.5]).unwrap(), &[0.0, 0.125, 0.5]);
    assert_eq!(digest.ranks(&[5.0, 7.0, 8.5]).unwrap(), [0, 0, 2]);
    assert_eq!((digest.min(), digest.trimmed_mean(0.0, 1.0).unwrap()), (5.0, 8.0));
}

#[test]
fn merge_takes_redisblooms_compression_and_destination() {
    let (values, duplicates) = (spread(), duplicates());
    let a = digest(50, &[&values[..700]]);
    let b = digest(20, &[&duplicates]);
    let destination = digest(10, &[&values[1000..1100]]);

    // The destination exists and no OVERRIDE: merged first, its compression kept.
    let merged = TDigest::merge(Some(&destination), &[&a, &b], None, BUDGET).unwrap();
    let info = merged.info();
    assert_eq!(
        (info.compression, info.merged_nodes, info.unmerged_nodes, info.merged_weight),
        (10, 11, 13, 800)
    );
    assert_eq!((info.unmerged_weight, info.total_compressions), (1037, 2));
    assert_same(
        &merged.quantiles(&[0.0, 0.1, 0.5, 0.9, 1.0]).unwrap(),
        &[0.0, 0.3711108719924181, 16.219321007048627, 110.56272647135077, 143.85714285714286],
    );
    assert_same(
        &merged.cdfs(&[1.0, 2.5, 70.0]).unwrap(),
        &[0.16932850495329113, 0.23737783500058959, 0.7567733492821217],
    );

    // OVERRIDE: the largest of the sources' compressions.
    let merged = TDigest::merge(None, &[&a, &b], None, BUDGET).unwrap();
    assert_eq!(
        (merged.info().compression, merged.info().merged_nodes, merged.info().total_compressions),
        (50, 26, 1)
    );
    assert_same(
        &merged.quantiles(&[0.0, 0.1, 0.5, 0.9, 1.0]).unwrap(),
        &[0.0, 0.26453288646837048, 6.059224790709254, 107.94151554434676, 143.85714285714286],
    );
    assert_same(
        &merged.cdfs(&[1.0, 2.5, 70.0]).unwrap(),
        &[0.17784224054748754, 0.3616597834378491, 0.79317964543430564],
    );

    // COMPRESSION given.
    let merged = TDigest::merge(Some(&destination), &[&a, &b], Some(30), BUDGET).unwrap();
    assert_eq!((merged.info().capacity, merged.info().merged_nodes), (190, 22));
    assert_same(
        &merged.quantiles(&[0.0, 0.1, 0.5, 0.9, 1.0]).unwrap(),
        &[0.0, 0.32842527198845273, 7.1166701886520984, 109.99951693845173, 143.85714285714286],
    );
    assert_same(
        &merged.cdfs(&[1.0, 2.5, 70.0]).unwrap(),
        &[0.16902475123906238, 0.299585491977365, 0.77631313728468376],
    );

    assert_eq!(TDigest::merge(None, &[&a], Some(0), BUDGET).unwrap_err(), MergeError::Invalid);
    assert_eq!(
        TDigest::merge(None, &[&a], Some(MAX_COMPRESSION + 1), BUDGET).unwrap_err(),
        MergeError::TooLarge
    );
    assert_eq!(TDigest::merge(None, &[&a], Some(1000), 1000).unwrap_err(), MergeError::TooLarge);
}

#[test]
fn sizes_are_redisblooms_and_the_budget_comes_first() {
    let info = TDigest::new(DEFAULT_COMPRESSION, BUDGET).unwrap().info();
    assert_eq!((info.compression, info.capacity, info.memory_usage), (100, 610, 9768));
    let info = TDigest::new(1, BUDGET).unwrap().info();
    assert_eq!((info.capacity, info.memory_usage), (16, 264));
    assert_eq!(TDigest::new(1, BUDGET).unwrap().memory_bytes(), 264);
    assert_eq!(TDigest::new(0, BUDGET).unwrap_err(), SizeError::Invalid);
    // RedisBloom keeps the capacity in an int: beyond it, its capacity wraps.
    assert_eq!(MAX_COMPRESSION * 6 + 10, 2_147_483_644);
    assert_eq!(TDigest::new(MAX_COMPRESSION + 1, usize::MAX).unwrap_err(), SizeError::TooLarge);
    assert_eq!(TDigest::new(1_000_000_000, usize::MAX).unwrap_err(), SizeError::TooLarge);
    assert_eq!(TDigest::new(MAX_COMPRESSION, BUDGET).unwrap_err(), SizeError::TooLarge);
    assert_eq!(TDigest::new(100, 9767).unwrap_err(), SizeError::TooLarge);
    assert!(TDigest::new(100, 9768).is_ok());
}

#[test]
fn an_add_that_fails_changes_nothing() {
    let mut digest = spread_digest();
    let before = tokens(&digest);
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(digest.add(&[1.0, 2.0, bad]), Err(AddError::NotFinite));
    }
    assert_eq!(tokens(&digest), before);
    assert_eq!(digest.info().observations, 1500);

    // Observations at the edge of i64 (2^63 - 1024, the largest double below 2^63), as only
    // a record can hold them.
    let mut full = load(
        "d4059000000000000 d3ff0000000000000 d4000000000000000 s610 s2 s0 s1 d43dfffffffffffff d0000000000000000 \
         d3ff0000000000000 d4000000000000000 d43cfffffffffffff d43cfffffffffffff",
    )
    .unwrap();
    assert_eq!(full.observations(), i64::MAX - 1023);
    let before = tokens(&full);
    assert_eq!(full.add(&[1.0; 1024]), Err(AddError::Overflow));
    assert_eq!(tokens(&full), before);
    assert_eq!(TDigest::merge(None, &[&full, &full], None, BUDGET).unwrap_err(), MergeError::Overflow);
}

#[test]
fn a_full_node_array_fails_the_add_whole() {
    // A record can claim every node merged, which no compression reduces (a weight that no
    // merge takes): RedisBloom answers "overflow detected" after keeping what it added.
    let means: Vec<String> = (0..16).map(|i| format!("d{:016x}", f64::from(i).to_bits())).collect();
    let weights: Vec<String> = (0..16).map(|_| format!("d{:016x}", 1e15_f64.to_bits())).collect();
    let mut full = load(&format!(
        "d3ff0000000000000 d0000000000000000 d402e000000000000 s16 s16 s0 s0 d{:016x} d0000000000000000 {} {}",
        1.6e16_f64.to_bits(),
        means.join(" "),
        weights.join(" ")
    ))
    .unwrap();
    let before = tokens(&full);
    assert_eq!(full.add(&[1.0, 2.0]), Err(AddError::Overflow));
    assert_eq!(tokens(&full), before);
}

#[test]
fn extreme_values_keep_every_answer_finite() {
    // RedisBloom merges 1e308 into -1e308 as an infinite mean, then a NaN one.
    let mut digest = TDigest::new(DEFAULT_COMPRESSION, BUDGET).unwrap();
    for _ in 0..20 {
        digest.add(&[1e308, 1e308, -1e308, f64::MAX, -f64::MAX, 0.0].repeat(50)).unwrap();
    }
    let mut record = Record::default();
    digest.save_rdb(&mut record);
    assert!(record.0.iter().all(|value| !matches!(value, RecordValue::Double(x) if !x.is_finite())));
    let quantiles = digest.quantiles(&[0.0, 0.01, 0.3, 0.5, 0.7, 0.99, 1.0, 0.2]).unwrap();
    assert!(quantiles.iter().all(|q| q.is_finite()), "{quantiles:?}");
    assert!(quantiles.windows(2).take(6).all(|pair| pair[0] <= pair[1]), "{quantiles:?}");
    let cdfs = digest.cdfs(&[-f64::MAX, -1e308, -1e300, 0.0, 1e300, 1e308, f64::MAX]).unwrap();
    assert!(cdfs.iter().all(|c| (0.0..=1.0).contains(c)), "{cdfs:?}");
    assert!(cdfs.windows(2).all(|pair| pair[0] <= pair[1]), "{cdfs:?}");
    assert!(digest.ranks(&[0.0, 1e308]).unwrap().iter().all(|&rank| (0..=6000).contains(&rank)));
    assert!(digest.trimmed_mean(0.1, 0.9).unwrap().is_finite());
    assert!(digest.by_ranks(&[1, 3000, 5999]).unwrap().iter().all(|v| v.is_finite()));
}

#[test]
fn reads_change_nothing() {
    let digest = spread_digest();
    assert!(digest.info().unmerged_nodes > 0);
    let (before, info) = (tokens(&digest), digest.info());
    let _ = digest.quantiles(&QUANTILES).unwrap();
    let _ = digest.cdfs(&POINTS).unwrap();
    let _ = digest.ranks(&POINTS).unwrap();
    let _ = digest.by_rev_ranks(&RANKS).unwrap();
    let _ = digest.trimmed_mean(0.2, 0.4).unwrap();
    let _ = TDigest::merge(None, &[&digest], None, BUDGET).unwrap();
    assert_eq!((tokens(&digest), digest.info()), (before, info));
}

#[test]
fn a_redisbloom_record_loads_and_answers() {
    // TDIGEST.CREATE e COMPRESSION 7, TDIGEST.ADD e 1 2 3, DUMP e.
    let digest = load(
        "d401c000000000000 d3ff0000000000000 d4008000000000000 s52 s3 s0 s1 d4008000000000000 d0000000000000000 \
         d3ff0000000000000 d4000000000000000 d4008000000000000 d3ff0000000000000 d3ff0000000000000 d3ff0000000000000",
    )
    .unwrap();
    assert_eq!((digest.info().capacity, digest.info().merged_nodes, digest.observations()), (52, 3, 3));
    assert_same(&digest.quantiles(&[0.0, 0.5, 1.0]).unwrap(), &[1.0, 2.0, 3.0]);
    assert!(TDigest::load_rdb(1, &mut record(SPREAD_RECORD), BUDGET).is_err());
}

#[test]
fn hostile_records_are_refused() {
    let good = "d4059000000000000 d3ff0000000000000 d4000000000000000 s610 s2 s0 s1 d4000000000000000 d0000000000000000 \
                d3ff0000000000000 d4000000000000000 d3ff0000000000000 d3ff0000000000000";
    assert!(load(good).is_ok());
    let nan = format!("d{:016x}", f64::NAN.to_bits());
    let inf = format!("d{:016x}", f64::INFINITY.to_bits());
    let cases: [(&str, &str, &str); 17] = [
        ("d4059000000000000", "d0000000000000000", "a compression of 0"),
        ("d4059000000000000", "d3ff8000000000000", "a compression of 1.5"),
        ("d4059000000000000", &nan, "a NaN compression"),
        ("d3ff0000000000000", &inf, "an infinite minimum"),
        ("s610", "s611", "a capacity off the formula"),
        ("s610", "s-1", "a negative capacity"),
        ("s2 s0", "s611 s0", "more merged nodes than the capacity"),
        ("s2 s0", "s-2 s0", "negative nodes"),
        ("s2 s0", "s2 s609", "more nodes than the capacity"),
        ("s2 s0", "s2 s1", "a buffer in a digest of two observations"),
        ("s1 d4000", "s-1 d4000", "negative compressions"),
        ("s1 d4000000000000000", "s1 d43e0000000000000", "a merged weight of 2^63"),
        ("s1 d4000000000000000", "s1 dbff0000000000000", "a negative merged weight"),
        ("d3ff0000000000000 d4000000000000000 d3ff", &format!("{nan} d4000000000000000 d3ff"), "a NaN mean"),
        ("d3ff0000000000000 d3ff0000000000000", "dbff0000000000000 d3ff0000000000000", "a negative weight"),
        (
            "d3ff0000000000000 d3ff0000000000000",
            "d4000000000000000 d3ff0000000000000",
            "weights beyond the merged one",
        ),
        (
            "s1 d4000000000000000 d0000000000000000",
            "s1 d4000000000000000 d3ff0000000000000",
            "a buffer's weight, no node",
        ),
    ];
    for (from, to, why) in cases {
        let hostile = good.replacen(from, to, 1);
        assert_ne!(hostile, good, "{why}");
        assert!(load(&hostile).is_err(), "{why}: {hostile}");
    }
    let truncated = good.rsplit_once(' ').unwrap().0;
    assert!(load(truncated).is_err());
    // The budget is checked before anything is allocated, or even read past the compression.
    assert_eq!(
        TDigest::load_rdb(0, &mut record("d41cdcd6500000000"), BUDGET).unwrap_err(),
        DecodeError::TooLarge
    );
    assert_eq!(TDigest::load_rdb(0, &mut record(good), 9767).unwrap_err(), DecodeError::TooLarge);
}

/// Digests built by adds, with the values that built them.
fn digests() -> impl Strategy<Value = (TDigest, Vec<f64>)> {
    digests_of(1..120)
}

fn digests_of(compressions: std::ops::Range<u64>) -> impl Strategy<Value = (TDigest, Vec<f64>)> {
    let value = prop_oneof![(-20i32..20).prop_map(f64::from), -1e6..1e6_f64, Just(3.25)];
    (compressions, prop::collection::vec(prop::collection::vec(value, 0..400), 0..6)).prop_map(
        |(compression, batches)| {
            let mut digest = TDigest::new(compression, BUDGET).unwrap();
            for batch in &batches {
                digest.add(batch).unwrap();
            }
            (digest, batches.concat())
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn quantiles_rise_with_the_fraction((digest, _) in digests(), mut qs in prop::collection::vec(0.0..=1.0_f64, 1..20)) {
        qs.sort_by(f64::total_cmp);
        let run = digest.quantiles(&qs).unwrap();
        let one_by_one: Vec<f64> = qs.iter().flat_map(|&q| digest.quantiles(&[q]).unwrap()).collect();
        if digest.observations() > 1 {
            prop_assert!(run.windows(2).all(|pair| pair[0] <= pair[1]), "{:?}", run);
            prop_assert!(one_by_one.windows(2).all(|pair| pair[0] <= pair[1]), "{:?}", one_by_one);
            prop_assert!(run.iter().all(|&v| digest.min() <= v && v <= digest.max()));
        }
    }

    #[test]
    fn cdfs_and_ranks_rise_with_the_value((digest, _) in digests(), mut values in prop::collection::vec(-30.0..30.0_f64, 1..20)) {
        values.sort_by(f64::total_cmp);
        let cdfs = digest.cdfs(&values).unwrap();
        let ranks = digest.ranks(&values).unwrap();
        let rev_ranks = digest.rev_ranks(&values).unwrap();
        if digest.observations() > 1 {
            prop_assert!(cdfs.windows(2).all(|pair| pair[0] <= pair[1]), "{:?}", cdfs);
            prop_assert!(ranks.windows(2).all(|pair| pair[0] <= pair[1]), "{:?}", ranks);
            prop_assert!(rev_ranks.windows(2).all(|pair| pair[0] >= pair[1]), "{:?}", rev_ranks);
            prop_assert!(ranks.iter().all(|&rank| (-1..=digest.observations()).contains(&rank)));
        }
    }

    #[test]
    fn ranks_and_values_of_ranks_agree((digest, _) in digests()) {
        let n = digest.observations();
        prop_assume!(n > 1);
        let ranks: Vec<u64> = (0..=n as u64 + 1).collect();
        let values = digest.by_ranks(&ranks).unwrap();
        let reverse = digest.by_rev_ranks(&ranks).unwrap();
        prop_assert!(values.windows(2).all(|pair| pair[0] <= pair[1]), "{:?}", values);
        prop_assert!(reverse.windows(2).all(|pair| pair[0] >= pair[1]), "{:?}", reverse);
        prop_assert_eq!((values[0], reverse[0]), (digest.min(), digest.max()));
        // The rank of the value of a rank is that rank's neighbourhood: the centroids keep
        // observations to within the weight of the largest.
        let finite = &values[..n as usize];
        let back = digest.ranks(finite).unwrap();
        let slack = n / 4 + 2;
        for (rank, back) in ranks.iter().zip(&back) {
            prop_assert!((*rank as i64 - back).abs() <= slack, "rank {} came back as {}", rank, back);
        }
    }

    #[test]
    fn a_merge_answers_as_the_digest_of_all_values((a, a_values) in digests_of(1..500), (b, b_values) in digests_of(1..500)) {
        let merged = TDigest::merge(None, &[&a, &b], None, BUDGET).unwrap();
        prop_assert_eq!(merged.observations(), a.observations() + b.observations());
        prop_assert_eq!(merged.compression(), a.compression().max(b.compression()));
        let mut all = [a_values, b_values].concat();
        all.sort_by(f64::total_cmp);
        prop_assume!(all.len() > 1);
        prop_assert_eq!((merged.min(), merged.max()), (all[0], all[all.len() - 1]));
        // Every quantile's true rank is within a tenth of the way (and three values) of its
        // fraction, when the compression keeps centroids below about 7% of the values (at
        // compression c, the middle ones hold up to pi * ln(n) / 2c of them).
        prop_assume!(a.compression().min(b.compression()) >= 200);
        let qs = [0.1, 0.25, 0.5, 0.75, 0.9];
        let (n, slack) = (all.len() as f64, 0.1 + 3.0 / all.len() as f64);
        for (q, value) in qs.iter().zip(merged.quantiles(&qs).unwrap()) {
            let below = all.iter().filter(|&&v| v < value).count() as f64 / n;
            let up_to = all.iter().filter(|&&v| v <= value).count() as f64 / n;
            prop_assert!(up_to >= q - slack && below <= q + slack, "q {} gave {}", q, value);
        }
    }

    #[test]
    fn a_saved_digest_loads_back_the_same((digest, _) in digests()) {
        let mut saved = Record::default();
        digest.save_rdb(&mut saved);
        let loaded = TDigest::load_rdb(0, &mut saved.clone(), BUDGET).unwrap();
        prop_assert_eq!(tokens(&loaded), tokens(&digest));
        let qs = [0.0, 0.1, 0.5, 0.9, 1.0];
        let (ours, theirs) = (loaded.quantiles(&qs).unwrap(), digest.quantiles(&qs).unwrap());
        prop_assert!(ours.iter().zip(&theirs).all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())));
        let copy = digest.try_clone().unwrap();
        prop_assert_eq!(tokens(&copy), tokens(&digest));
        prop_assert_eq!(copy.info(), digest.info());
    }

    #[test]
    fn reads_leave_the_record_as_it_was((digest, _) in digests(), values in prop::collection::vec(-30.0..30.0_f64, 1..5)) {
        let before = tokens(&digest);
        let _ = digest.quantiles(&[0.5, 0.1]).unwrap();
        let _ = digest.cdfs(&values).unwrap();
        let _ = digest.rev_ranks(&values).unwrap();
        let _ = digest.by_ranks(&[1, 2]).unwrap();
        let _ = digest.trimmed_mean(0.0, 0.5).unwrap();
        prop_assert_eq!(tokens(&digest), before);
    }

    #[test]
    fn any_record_loads_or_is_refused_and_never_panics(
        header in prop::collection::vec(prop_oneof![
            any::<i64>().prop_map(RecordValue::Signed),
            (0i64..20).prop_map(RecordValue::Signed),
            any::<f64>().prop_map(RecordValue::Double),
            (0u32..4).prop_map(|v| RecordValue::Double(f64::from(v))),
        ], 0..40),
    ) {
        let mut record = Record([RecordValue::Double(1.0), RecordValue::Double(0.0), RecordValue::Double(1.0), RecordValue::Signed(16)]
            .into_iter().chain(header).collect());
        if let Ok(mut digest) = TDigest::load_rdb(0, &mut record, BUDGET) {
            let _ = digest.quantiles(&[0.0, 0.5, 1.0]).unwrap();
            let _ = digest.cdfs(&[0.0, 1.0]).unwrap();
            let _ = digest.ranks(&[0.5]).unwrap();
            let _ = digest.trimmed_mean(0.1, 0.9).unwrap();
            let _ = digest.add(&[1.0; 40]);
            let _ = tokens(&digest);
        }
    }
}

/// The view kept between reads is dropped by every write: reads between writes answer what a
/// digest never read answers.
#[test]
fn reads_between_writes_answer_as_without_them() {
    let values = spread();
    let quantiles = [0.0, 0.1, 0.5, 0.9, 1.0];
    let mut read = TDigest::new(50, BUDGET).unwrap();
    for chunk in values.chunks(97) {
        read.add(chunk).unwrap();
        let _ = read.quantiles(&quantiles).unwrap();
        let _ = read.cdfs(&[3.0]).unwrap();
    }
    let unread = digest(50, &values.chunks(97).collect::<Vec<_>>());
    assert_eq!(read.quantiles(&quantiles).unwrap(), unread.quantiles(&quantiles).unwrap());
    assert_eq!(read.ranks(&[10.0, 100.0]).unwrap(), unread.ranks(&[10.0, 100.0]).unwrap());
    read.reset();
    assert!(read.quantiles(&[0.5]).unwrap()[0].is_nan(), "a reset digest is empty to reads");
}

/// Past 2^53 observations the saved weights (doubles) are rounded: the record still loads, as
/// the fuzzer found it did not (60 merges of a digest into itself, RedisBloom's too).
#[test]
fn a_digest_heavier_than_doubles_hold_exactly_loads_back() {
    let mut heavy = digest(100, &[&[1.0, 2.0, 3.0]]);
    for _ in 0..60 {
        heavy = TDigest::merge(Some(&heavy), &[&heavy], None, BUDGET).unwrap();
    }
    heavy.add(&[4.0]).unwrap();
    heavy.compress();
    let mut record = Record::default();
    heavy.save_rdb(&mut record);
    let loaded = TDigest::load_rdb(0, &mut record.clone(), BUDGET).unwrap();
    let mut again = Record::default();
    loaded.save_rdb(&mut again);
    assert_eq!(again, record);
    assert_eq!(loaded.quantiles(&[0.5]).unwrap(), heavy.quantiles(&[0.5]).unwrap());
}

proptest! {
    /// Inserting a few buffered nodes into sorted centroids leaves RedisBloom's quicksort order:
    /// with distinct means the only order, and with equal ones the quicksort itself.
    #[test]
    fn insertion_after_sorted_centroids_orders_as_the_quicksort(
        centroids in proptest::collection::vec((0u8..40, 1i64..5), 0..60),
        buffer in proptest::collection::vec((0u8..40, 1i64..5), 0..12),
    ) {
        let mut merged: Vec<Centroid> =
            centroids.iter().map(|&(mean, weight)| Centroid { mean: f64::from(mean) / 4.0, weight }).collect();
        merged.sort_by(|a, b| a.mean.total_cmp(&b.mean));
        let sorted = merged.len();
        merged.extend(buffer.iter().map(|&(mean, weight)| Centroid { mean: f64::from(mean) / 4.0 + 0.01, weight }));
        let mut expected = merged.clone();
        super::sort::sort(&mut expected);
        super::sort::sort_after(&mut merged, sorted);
        let key = |nodes: &[Centroid]| nodes.iter().map(|node| (node.mean.to_bits(), node.weight)).collect::<Vec<_>>();
        prop_assert_eq!(key(&merged), key(&expected));
    }
}
