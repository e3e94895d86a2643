//! Reads, INFO and records pinned to RedisBloom 2.8.2's to the bit: proof that sorting, merging,
//! the empty and one-value sentinels and TDIGEST.MERGE's options are its algorithm, not a look-alike.

// The pinned numbers are RedisBloom's replies as it printed them (17 significant digits).
#![allow(clippy::unreadable_literal, clippy::excessive_precision)]

use super::*;
use crate::t_digest::rank_error::rank_errors;

/// The digest and a copy loaded from its record.
fn reloaded(digest: &TDigest) -> TDigest {
    let mut saved = Record::default();
    digest.save_rdb(&mut saved);
    TDigest::load_rdb(0, &mut saved, BUDGET).unwrap()
}

#[test]
fn values_of_every_kind_answer_as_redisbloom() {
    // RedisBloom's record of the spread writes (its save compresses them) answers here as it
    // does there, and so does that record saved again by this module.
    let theirs = load(SPREAD_RECORD).unwrap();
    for digest in [&theirs, &reloaded(&theirs)] {
        spread_answers_are_redisblooms(digest);
    }
    // This module's digest of the same writes merges finer (`MERGE_SCALE`): 48 centroids where
    // RedisBloom's read leaves 29, and quantiles nearer the exact ones.
    let digest = spread_digest();
    let mut sorted = spread();
    sorted.sort_by(f64::total_cmp);
    let (ours, redisblooms) = (rank_errors(&digest, &sorted).0, rank_errors(&theirs, &sorted).0);
    assert!(ours < redisblooms, "mean rank error {ours} against RedisBloom's {redisblooms}");
    // INFO shows the view, as RedisBloom's INFO after a read does, but for the compressions:
    // those of the stored digest; the memory is the array's room for its nodes.
    assert_eq!(
        digest.info().unwrap(),
        TDigestInfo {
            compression: 50,
            capacity: 310,
            merged_nodes: 48,
            unmerged_nodes: 0,
            merged_weight: 1500,
            unmerged_weight: 0,
            observations: 1500,
            total_compressions: 5,
            memory_usage: 256 * 16 + 8,
        }
    );
    assert_eq!(digest.nodes.len(), 173);
    assert_eq!(tokens(&reloaded(&digest)), tokens(&digest));
    assert_eq!(reloaded(&digest).info().unwrap(), digest.info().unwrap());
}

fn spread_answers_are_redisblooms(digest: &TDigest) {
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
}

/// Centroids of equal means and different weights meet here: RedisBloom's quicksort orders
/// them by where they were, this module by weight (`nodes::canonical`), so that the digest is
/// its set of nodes; and at compression 20 a second compression of RedisBloom's compressed
/// digest (past about e^(2 × 20 / 2π), 580 observations, at this module's finer scale) merges
/// more. So neither the digest built here from
/// the same values nor RedisBloom's record loaded here answers RedisBloom's numbers to the bit
/// (as they did while this module sorted as RedisBloom and kept its record): both answer within
/// the t-digest's accuracy, no worse than RedisBloom against the exact answers, and a record
/// of this module loads back as the digest saved.
#[test]
fn equal_means_sort_and_merge_within_redisblooms_accuracy() {
    // RedisBloom's answers, pinned.
    let their_quantiles = [
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
    ];
    let their_cdfs =
        [0.0, 0.072806171648987464, 0.29375176653476537, 0.60381769865623314, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
    let their_ranks = [-1, 75, 305, 626, 1037, 1037, 1037, 1037, 1037, 1037];
    let their_trimmed = [2.0219398315282793, 2.0163934426229506];

    let mut values = duplicates();
    values.sort_by(f64::total_cmp);
    // The distance of `q` from the ranks `value` covers in the values.
    let rank_error = |q: f64, value: f64| {
        let n = values.len() as f64;
        let below = values.iter().filter(|&&v| v < value).count() as f64 / n;
        let up_to = values.iter().filter(|&&v| v <= value).count() as f64 / n;
        (below - q).max(q - up_to).max(0.0)
    };
    let errors = |answers: &[f64]| -> Vec<f64> {
        QUANTILES.iter().zip(answers).map(|(&q, &v)| rank_error(q, v)).collect()
    };
    let theirs = errors(&their_quantiles);
    let their_worst = theirs.iter().copied().fold(0.0, f64::max);
    let their_mean = theirs.iter().sum::<f64>() / theirs.len() as f64;
    let built = duplicates_digest();
    for digest in [&built, &load(DUPLICATES_RECORD).unwrap()] {
        let ours = errors(&digest.quantiles(&QUANTILES).unwrap());
        let (worst, mean) = (ours.iter().copied().fold(0.0, f64::max), ours.iter().sum::<f64>() / 11.0);
        assert!(
            mean <= their_mean * 2.0 && worst <= their_worst * 2.0,
            "ours {ours:?}, RedisBloom's {theirs:?}"
        );
        for (ours, theirs) in digest.cdfs(&POINTS).unwrap().iter().zip(their_cdfs) {
            assert!((ours - theirs).abs() <= 0.05, "CDF {ours} against {theirs}");
        }
        for (ours, theirs) in digest.ranks(&POINTS).unwrap().iter().zip(their_ranks) {
            assert!((ours - theirs).abs() <= 52, "rank {ours} against {theirs}");
        }
        // Wide cuts agree; a cut of 1% falls inside one centroid, whose mean is any of its
        // values (RedisBloom's 0.77 and the exact 1 alike).
        let trimmed = [(0.1, 0.9), (0.0, 1.0)].map(|(low, high)| digest.trimmed_mean(low, high).unwrap());
        for (ours, theirs) in trimmed.iter().zip(their_trimmed) {
            assert!((ours - theirs).abs() <= 0.05 * 4.0, "trimmed mean {ours} against {theirs}");
        }
        assert!((0.0..=4.0).contains(&digest.trimmed_mean(0.33, 0.34).unwrap()));
        assert_eq!(digest.observations(), 1037);
        assert_eq!(tokens(&reloaded(digest)), tokens(digest));
        assert_same(&reloaded(digest).quantiles(&QUANTILES).unwrap(), &digest.quantiles(&QUANTILES).unwrap());
    }
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
        let info = empty.info().unwrap();
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
    // RedisBloom's record of it keeps a count and a weight, no node (ONE_RECORD); this
    // module's keeps the node, as a centroid, which RedisBloom loads and answers from.
    assert_eq!(
        tokens(&one),
        "d4059000000000000 d4016000000000000 d4016000000000000 s610 s1 s0 s0 d3ff0000000000000 \
         d0000000000000000 d4016000000000000 d3ff0000000000000"
    );
    assert_eq!(one.info().unwrap().unmerged_nodes, 1, "INFO as RedisBloom's: nothing merged");

    // RedisBloom loads its own record as a node of mean 0 and weight 0; the bounds keep the
    // value, which comes back here.
    let loaded = load(ONE_RECORD).unwrap();
    assert_eq!(tokens(&loaded), tokens(&one));
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
    let mut all = [&values[..700], &duplicates[..], &values[1000..1100]].concat();
    all.sort_by(f64::total_cmp);
    // RedisBloom's answers, to the bit before this module sorted equal means by weight (`b`
    // is full of them) and merged finer (`MERGE_SCALE`): now as near the exact ones, to
    // within twice RedisBloom's error or 5% of the values (at compression 10 a centroid may
    // hold a tenth of them).
    let near = |merged: &TDigest, quantiles: [f64; 5], cdfs: [f64; 3]| {
        let qs = [0.0, 0.1, 0.5, 0.9, 1.0];
        let n = all.len() as f64;
        let error = |q: f64, value: f64| {
            let below = all.iter().filter(|&&v| v < value).count() as f64 / n;
            let up_to = all.iter().filter(|&&v| v <= value).count() as f64 / n;
            (below - q).max(q - up_to).max(0.0)
        };
        for ((&q, ours), theirs) in qs.iter().zip(merged.quantiles(&qs).unwrap()).zip(quantiles) {
            assert!(error(q, ours) <= (2.0 * error(q, theirs)).max(0.05), "{q}: {ours} against {theirs}");
        }
        for ((&x, ours), theirs) in
            [1.0, 2.5, 70.0].iter().zip(merged.cdfs(&[1.0, 2.5, 70.0]).unwrap()).zip(cdfs)
        {
            let below = all.iter().filter(|&&v| v < x).count() as f64 / n;
            let exact = below + all.iter().filter(|&&v| v == x).count() as f64 / n / 2.0;
            let limit = (2.0 * (theirs - exact).abs()).max(0.05);
            assert!((ours - exact).abs() <= limit, "CDF {ours} against {theirs}, exactly {exact}");
        }
        assert_eq!((merged.min(), merged.max()), (quantiles[0], quantiles[4]));
    };

    // The destination exists and no OVERRIDE: merged first, its compression kept.
    let merged = TDigest::merge(Some(&destination), &[&a, &b], None, BUDGET).unwrap();
    let info = merged.info().unwrap();
    assert_eq!(
        (info.compression, info.merged_nodes, info.unmerged_nodes, info.merged_weight),
        (10, 16, 0, 1837)
    );
    // The merge's own compressions; RedisBloom's INFO after a read (11 centroids and 13 nodes
    // buffered before it) counts 3.
    assert_eq!((info.unmerged_weight, info.total_compressions), (0, 2));
    near(
        &merged,
        [0.0, 0.3711108719924181, 16.219321007048627, 110.56272647135077, 143.85714285714286],
        [0.16932850495329113, 0.23737783500058959, 0.7567733492821217],
    );

    // OVERRIDE: the largest of the sources' compressions.
    let merged = TDigest::merge(None, &[&a, &b], None, BUDGET).unwrap();
    assert_eq!(
        (
            merged.info().unwrap().compression,
            merged.info().unwrap().merged_nodes,
            merged.info().unwrap().total_compressions
        ),
        // RedisBloom's read leaves 26 centroids: it merges coarser, and the order of its equal
        // means differs.
        (50, 42, 1)
    );
    near(
        &merged,
        [0.0, 0.26453288646837048, 6.059224790709254, 107.94151554434676, 143.85714285714286],
        [0.17784224054748754, 0.3616597834378491, 0.79317964543430564],
    );

    // COMPRESSION given.
    let merged = TDigest::merge(Some(&destination), &[&a, &b], Some(30), BUDGET).unwrap();
    assert_eq!((merged.info().unwrap().capacity, merged.info().unwrap().merged_nodes), (190, 34));
    near(
        &merged,
        [0.0, 0.32842527198845273, 7.1166701886520984, 109.99951693845173, 143.85714285714286],
        [0.16902475123906238, 0.299585491977365, 0.77631313728468376],
    );

    assert_eq!(TDigest::merge(None, &[&a], Some(0), BUDGET).unwrap_err(), MergeError::Invalid);
    assert_eq!(
        TDigest::merge(None, &[&a], Some(MAX_COMPRESSION + 1), BUDGET).unwrap_err(),
        MergeError::TooLarge
    );
    assert_eq!(TDigest::merge(None, &[&a], Some(1000), 1000).unwrap_err(), MergeError::TooLarge);
}
