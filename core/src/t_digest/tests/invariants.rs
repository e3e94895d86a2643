//! What holds for any digest built by adds, not only the pinned ones: answers that rise in order,
//! merges within bounds, records that load back, reads that change nothing, the quicksort's order.

use super::*;
use proptest::prelude::*;

#[test]
fn reads_change_nothing() {
    let digest = spread_digest();
    assert!(digest.nodes.len() > digest.info().unwrap().merged_nodes, "values are buffered");
    let (before, info) = (tokens(&digest), digest.info().unwrap());
    let _ = digest.quantiles(&QUANTILES).unwrap();
    let _ = digest.cdfs(&POINTS).unwrap();
    let _ = digest.ranks(&POINTS).unwrap();
    let _ = digest.by_rev_ranks(&RANKS).unwrap();
    let _ = digest.trimmed_mean(0.2, 0.4).unwrap();
    let _ = TDigest::merge(None, &[&digest], None, BUDGET).unwrap();
    assert_eq!((tokens(&digest), digest.info().unwrap()), (before, info));
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
        prop_assert_eq!(copy.info().unwrap(), digest.info().unwrap());
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

proptest! {
    /// The digest is its set of nodes: the same values added in any order, in any batches,
    /// with compressions at other moments, leave the same record whenever the compressions
    /// saw the same sets, and a digest loaded from a record answers as the one saved.
    #[test]
    fn the_order_of_the_nodes_changes_nothing(
        values in proptest::collection::vec(prop_oneof![(-5i32..5).prop_map(f64::from), -1e3..1e3_f64], 0..200),
        seed in any::<u64>(),
    ) {
        // Fewer values than the capacity: no compression, one set of nodes in any order.
        let mut shuffled = values.clone();
        let mut state = seed | 1;
        for i in (1..shuffled.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            shuffled.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let one = digest(100, &[&values]);
        let other = digest(100, &shuffled.chunks(7).collect::<Vec<_>>());
        prop_assert_eq!(tokens(&one), tokens(&other));
        let qs = [0.0, 0.1, 0.5, 0.9, 1.0];
        let (a, b) = (one.quantiles(&qs).unwrap(), other.quantiles(&qs).unwrap());
        prop_assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())));
        prop_assert_eq!(one.info().unwrap(), other.info().unwrap());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// What a replica after a full sync, or a restart, does: the digest saved and loaded in the
    /// middle of the writes ends as the one that never was, bit for bit, and answers alike.
    #[test]
    fn a_reload_between_writes_changes_nothing(
        compression in 1u64..60,
        batches in prop::collection::vec(prop::collection::vec(prop_oneof![(-20i32..20).prop_map(f64::from), -1e6..1e6_f64], 1..150), 2..12),
        at in 0usize..12,
    ) {
        let mut kept = TDigest::new(compression, BUDGET).unwrap();
        let mut reloaded = TDigest::new(compression, BUDGET).unwrap();
        for (index, batch) in batches.iter().enumerate() {
            if index == at % batches.len() {
                let mut saved = Record::default();
                reloaded.save_rdb(&mut saved);
                reloaded = TDigest::load_rdb(0, &mut saved, BUDGET).unwrap();
            }
            kept.add(batch).unwrap();
            reloaded.add(batch).unwrap();
            if index % 3 == 0 {
                let _ = kept.quantiles(&[0.5]).unwrap();
            }
        }
        prop_assert_eq!(tokens(&kept), tokens(&reloaded));
        prop_assert_eq!(kept.info().unwrap(), reloaded.info().unwrap());
        let qs = [0.0, 0.01, 0.3, 0.5, 0.99, 1.0];
        let (a, b) = (kept.quantiles(&qs).unwrap(), reloaded.quantiles(&qs).unwrap());
        prop_assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()), "{:?} {:?}", a, b);
    }
}
