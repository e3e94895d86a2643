//! Where a digest stops and what it refuses: sizes and budgets checked before allocating, adds
//! that fail whole, extreme values that stay finite, and records hostile, foreign or very heavy.

use super::*;

#[test]
fn sizes_are_redisblooms_and_the_budget_comes_first() {
    // The capacity is RedisBloom's; the memory is what the node array holds, which grows with
    // the nodes (RedisBloom allocates the capacity whole: 9768 bytes for compression 100).
    let info = TDigest::new(DEFAULT_COMPRESSION, BUDGET).unwrap().info().unwrap();
    assert_eq!((info.compression, info.capacity, info.memory_usage), (100, 610, 8));
    let info = TDigest::new(1, BUDGET).unwrap().info().unwrap();
    assert_eq!((info.capacity, info.memory_usage), (16, 8));
    assert_eq!(TDigest::new(1, BUDGET).unwrap().memory_bytes(), 8);
    assert_eq!(digest(1, &[&[1.0, 2.0]]).memory_bytes(), 16 * 16 + 8);
    assert_eq!(digest(100, &[&[1.0; 17]]).memory_bytes(), 32 * 16 + 8);
    let full = digest(100, &[&vec![1.0; 5000]]);
    assert!(full.memory_bytes() <= 610 * 16 + 8, "never beyond the capacity");
    // A digest of a huge compression holding a hundred values takes kilobytes.
    let values: Vec<f64> = (0..100).map(f64::from).collect();
    let huge = digest(10_000_000, &[&values]);
    assert_eq!(huge.info().unwrap().memory_usage, 128 * 16 + 8);
    let mut reset = huge.try_clone().unwrap();
    reset.reset();
    assert_eq!(reset.memory_bytes(), 8, "RESET gives the array back");
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
    assert_eq!(digest.info().unwrap().observations, 1500);

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
    // A record can fill the node array with nodes no compression merges: of one observation or
    // less in all, which RedisBloom's compression leaves as they are. The first value goes in,
    // the second finds the array full: RedisBloom answers "overflow detected" after keeping the
    // first.
    let means: Vec<String> = (0..15).map(|i| format!("d{:016x}", f64::from(i).to_bits())).collect();
    let weights: Vec<String> = (0..15).map(|_| format!("d{:016x}", 0.0_f64.to_bits())).collect();
    let mut full = load(&format!(
        "d3ff0000000000000 d0000000000000000 d402c000000000000 s16 s15 s0 s0 d0000000000000000 d0000000000000000 {} {}",
        means.join(" "),
        weights.join(" ")
    ))
    .unwrap();
    let before = (tokens(&full), full.info().unwrap());
    assert_eq!(full.add(&[1.0, 2.0]), Err(AddError::Overflow));
    assert_eq!((tokens(&full), full.info().unwrap()), before);
}

/// Tiny compressions holding ever more observations: the finer merge leaves their few nodes
/// full far sooner than RedisBloom's merge, so a compression that leaves no room merges again
/// as RedisBloom's. `TDIGEST.CREATE d COMPRESSION c`, `TDIGEST.ADD d 1 .. 5000`, then
/// `TDIGEST.MERGE d 2 d d` until it answers `overflow detected`: RedisBloom 2.8.2 refuses the
/// 25th merge at compression 1 and the 32nd at 2 (where the observations would pass 2^63);
/// without the second merge, this module refused the 15th and the 26th.
#[test]
fn a_tiny_compression_takes_about_as_many_observations_as_redisblooms() {
    let values: Vec<f64> = (1..=5000).map(f64::from).collect();
    for (compression, refused) in [(1, 24), (2, 32)] {
        let mut digest = digest(compression, &[&values]);
        let mut refused_at = None;
        for merge in 1..=40 {
            match TDigest::merge(Some(&digest), &[&digest, &digest], None, BUDGET) {
                Ok(merged) => digest = merged,
                Err(error) => {
                    assert_eq!(error, MergeError::Overflow);
                    refused_at = Some(merge);
                    break;
                }
            }
        }
        assert_eq!(refused_at, Some(refused), "compression {compression}");
    }
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
fn a_redisbloom_record_loads_and_answers() {
    // TDIGEST.CREATE e COMPRESSION 7, TDIGEST.ADD e 1 2 3, DUMP e.
    let digest = load(
        "d401c000000000000 d3ff0000000000000 d4008000000000000 s52 s3 s0 s1 d4008000000000000 d0000000000000000 \
         d3ff0000000000000 d4000000000000000 d4008000000000000 d3ff0000000000000 d3ff0000000000000 d3ff0000000000000",
    )
    .unwrap();
    assert_eq!(
        (digest.info().unwrap().capacity, digest.info().unwrap().merged_nodes, digest.observations()),
        (52, 3, 3)
    );
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
    let cases: [(&str, &str, &str); 19] = [
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
        (
            "d3ff0000000000000 d4000000000000000 s610",
            "d4000000000000000 d3ff0000000000000 s610",
            "min above max",
        ),
        (
            "d3ff0000000000000 d4000000000000000 d3ff",
            "d3ff0000000000000 d4008000000000000 d3ff",
            "a mean above the maximum",
        ),
    ];
    for (from, to, why) in cases {
        let hostile = good.replacen(from, to, 1);
        assert_ne!(hostile, good, "{why}");
        assert!(load(&hostile).is_err(), "{why}: {hostile}");
    }
    // What RedisBloom's records may hold still loads: a mean past a bound by a rounding, and
    // centroids that lost to truncated fractional weights (2 of 4 here).
    let rounded = good.replacen(
        "d3ff0000000000000 d4000000000000000 d3ff",
        "d3ff0000000000000 d4000000000000001 d3ff",
        1,
    );
    assert!(load(&rounded).is_ok());
    assert!(load(&good.replacen("s1 d4000000000000000 d0", "s1 d4010000000000000 d0", 1)).is_ok());
    // A buffer of nodes of no weight, as RedisBloom's merges of digests that lost their value
    // leave, loads; one naming more than a thousand does not (nor more than the capacity).
    let buffered = |compression: &str, capacity: usize, nodes: usize| {
        format!("{compression} d4016000000000000 d4016000000000000 s{capacity} s0 s{nodes} s0 d0000000000000000 d3ff0000000000000")
    };
    assert!(load(&buffered("d4059000000000000", 610, 1)).is_ok());
    assert!(load(&buffered("d4059000000000000", 610, 3)).is_ok());
    // RedisBloom 2.8.2's own: TDIGEST.ADD one 5, DEBUG RELOAD, TDIGEST.MERGE m3 3 one one one.
    let merged_lost_values =
        "d4059000000000000 d0000000000000000 d0000000000000000 s610 s0 s3 s0 d0000000000000000 d0000000000000000";
    assert!(load(merged_lost_values).is_ok());
    assert!(load(&buffered("d4059000000000000", 610, 611)).is_err());
    assert!(load(&buffered("d40c3880000000000", 60010, 1024)).is_ok());
    assert!(load(&buffered("d40c3880000000000", 60010, 1025)).is_err());
    let truncated = good.rsplit_once(' ').unwrap().0;
    assert!(load(truncated).is_err());
    // The budget is checked before anything is allocated, or even read past the compression.
    assert_eq!(
        TDigest::load_rdb(0, &mut record("d41cdcd6500000000"), BUDGET).unwrap_err(),
        DecodeError::TooLarge
    );
    assert_eq!(TDigest::load_rdb(0, &mut record(good), 9767).unwrap_err(), DecodeError::TooLarge);
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

/// A record whose centroids weigh a little more than its merged weight (doubles past 2^53
/// round; RedisBloom's records may say so, and a load accepts it within the roundings): after
/// a compression leaves fewer centroids, the digest's own record still loads, and saves again
/// the same. (Saved with the loaded count, the excess stayed and outgrew what a load of fewer
/// centroids accepts: a server could not load its own RDB.)
#[test]
fn an_excess_of_weight_a_load_accepted_never_makes_an_unloadable_record() {
    const NODES: i64 = 20;
    let weight = 1i64 << 56;
    let merged_weight = (NODES * weight - 4096) as f64;
    let nodes: Vec<(f64, f64)> = (1..=NODES).map(|mean| (mean as f64, weight as f64)).collect();
    let mut digest = load_centroids(100.0, [1.0, NODES as f64], &nodes, merged_weight).unwrap();
    digest.compress();
    assert!(digest.info().unwrap().merged_nodes < 10, "the compression merged centroids");
    let saved = tokens(&digest);
    let loaded = load(&saved).unwrap();
    assert_eq!(tokens(&loaded), saved);
}

/// A digest merged into itself past 2^53 observations, where weights saved as doubles round:
/// every record it saves loads, saves again the same, and goes on loading after further
/// writes and compressions (the roundings do not pile up across saves and loads).
#[test]
fn records_past_2_to_the_53_load_and_keep_loading() {
    let mut digest = spread_digest();
    for _ in 0..48 {
        digest = TDigest::merge(None, &[&digest, &digest], None, BUDGET).unwrap();
    }
    assert!(digest.observations() > 1 << 53);
    for round in 0..40 {
        let saved = tokens(&digest);
        let loaded = load(&saved).unwrap_or_else(|error| panic!("round {round}: {error:?}"));
        assert_eq!(tokens(&loaded), saved, "round {round}: reloaded, another record");
        digest = loaded;
        let values: Vec<f64> = (0..700).map(|i| f64::from(i * (round + 3) % 997)).collect();
        digest.add(&values).unwrap();
        if round % 3 == 0 {
            digest = TDigest::merge(None, &[&digest], Some(20 + round as u64), BUDGET).unwrap();
        }
    }
}

/// A mean a load accepts just past a bound (a rounding's worth) stays within what a load
/// accepts through every compression: merged into a node of no weight, RedisBloom's form
/// rounded one unit further, and the digest's own record was refused (a restart would fail).
#[test]
fn a_mean_at_the_edge_of_what_a_load_accepts_never_passes_it() {
    // A maximum and a weight where the edge, merged into a node of no weight, rounds up.
    let (max, weight) = (1.622_901_694_889_702, 13.0);
    let edge = max + (max * (1.0 / (1u64 << 32) as f64) + f64::MIN_POSITIVE);
    assert!(edge * weight / weight > edge);
    let nodes: Vec<(f64, f64)> =
        [(-1.0, 1.0), (0.0, 0.0), (edge, weight)].into_iter().chain([(5.0, 0.0); 12]).collect();
    let mut digest = load_centroids(1.0, [-1.0, max], &nodes, 1000.0).unwrap();
    // The add compresses first (the node array is full): the node of no weight takes the edge.
    digest.add(&[-1.0]).unwrap();
    let saved = tokens(&digest);
    assert_eq!(tokens(&load(&saved).unwrap()), saved);
}

/// RedisBloom 2.8.2 merges two values lost to reloads (nodes of mean 0 and weight 0) into a
/// node of mean `0 * 0 / 0`: TDIGEST.ADD a 1 and b 2, DEBUG RELOAD, TDIGEST.MERGE m 2 a b,
/// TDIGEST.ADD m 3 4 saves this record, which RedisBloom loads and answers 4 to QUANTILE 0.5.
/// Its RDB must load here too (a server that refused it could not start): the node loads as
/// the lost value it merged. A weighted node's NaN mean is still refused.
#[test]
fn redisblooms_merge_of_two_lost_values_loads() {
    let nan = format!("d{:016x}", f64::NAN.to_bits());
    let record = format!(
        "d4059000000000000 d0000000000000000 d4010000000000000 s610 s3 s0 s1 d4000000000000000 \
         d0000000000000000 {nan} d4008000000000000 d4010000000000000 d0000000000000000 \
         d3ff0000000000000 d3ff0000000000000"
    );
    let digest = load(&record).unwrap();
    assert_same(&digest.quantiles(&[0.5]).unwrap(), &[4.0]);
    assert_eq!(tokens(&load(&tokens(&digest)).unwrap()), tokens(&digest));
    let weighted = record.replacen("s1 d4000000000000000", "s1 d4008000000000000", 1).replacen(
        "d0000000000000000 d3ff0000000000000 d3ff",
        "d3ff0000000000000 d3ff0000000000000 d3ff",
        1,
    );
    assert_eq!(load(&weighted).unwrap_err(), DecodeError::Malformed("a centroid's mean that is not finite"));
}

/// Centroids far heavier than the merged weight are refused however heavy: summed with a
/// saturating add they stopped at `i64::MAX`, within the roundings' allowance of a merged
/// weight near it, and answered CDFs above 1 and ranks of `i64::MIN`.
#[test]
fn centroids_heavier_than_any_count_are_refused() {
    let merged_weight = (i64::MAX - 1023) as f64;
    let heavy = |nodes: i64, weight: f64| {
        let centroids: Vec<(f64, f64)> = (1..=nodes).map(|mean| (mean as f64, weight)).collect();
        load_centroids(100.0, [1.0, nodes as f64], &centroids, merged_weight)
    };
    assert!(heavy(8, 4.6e18).is_err(), "eight centroids of 2^62 against one merged weight near 2^63");
    assert!(heavy(1, merged_weight).is_ok());
}

/// Loads the record of a digest at `compression` between `bounds` holding the merged
/// centroids `nodes` (mean, weight) of `merged_weight` in all, and no buffer.
fn load_centroids(
    compression: f64,
    [min, max]: [f64; 2],
    nodes: &[(f64, f64)],
    merged_weight: f64,
) -> Result<TDigest, DecodeError> {
    let mut values = vec![
        RecordValue::Double(compression),
        RecordValue::Double(min),
        RecordValue::Double(max),
        RecordValue::Signed(6 * compression as i64 + 10),
        RecordValue::Signed(nodes.len() as i64),
        RecordValue::Signed(0),
        RecordValue::Signed(0),
        RecordValue::Double(merged_weight),
        RecordValue::Double(0.0),
    ];
    values.extend(nodes.iter().map(|&(mean, _)| RecordValue::Double(mean)));
    values.extend(nodes.iter().map(|&(_, weight)| RecordValue::Double(weight)));
    TDigest::load_rdb(0, &mut Record(values.into()), BUDGET)
}
