//! The cuckoo filter's behaviour: sizing, growth, eviction, wide fingerprints, limits and rates.

use super::*;

const BUDGET: usize = 1 << 30;
const LIMITS: Limits = Limits { max_bytes: BUDGET, max_sub_filters: DEFAULT_MAX_SUB_FILTERS };

fn filter(capacity: u64, bucket_size: u16, max_iterations: u16, expansion: u16) -> CuckooFilter {
    CuckooFilter::try_new(
        CuckooParams { capacity, bucket_size, max_iterations, expansion, ..CuckooParams::default() },
        BUDGET,
    )
    .unwrap()
}

fn item(text: &str) -> CuckooHash {
    CuckooHash::of(text.as_bytes(), Width::Eight)
}

#[test]
fn buckets_are_the_next_power_of_two_of_capacity_over_bucket_size() {
    for (capacity, bucket_size, buckets) in
        [(4, 2, 2), (7, 2, 4), (100, 2, 64), (1025, 2, 512), (10, 3, 4), (10, 1, 16), (510, 255, 2)]
    {
        assert_eq!(filter(capacity, bucket_size, 20, 1).first_buckets(), buckets, "{capacity}/{bucket_size}");
    }
    assert_eq!(filter(1024, 2, 20, 1).size(), 1080);
    assert_eq!(filter(8, 2, 20, 3).expansion(), 4);
}

#[test]
fn an_item_fits_twice_the_bucket_size_then_the_filter_grows() {
    let mut fixed = filter(1024, 2, 20, 0);
    let same = item("x");
    for _ in 0..4 {
        assert_eq!(fixed.insert(same, LIMITS), Inserted::Added);
    }
    assert_eq!(fixed.insert(same, LIMITS), Inserted::NoRoom);
    assert_eq!((fixed.items(), fixed.count(same)), (4, 4));

    let mut growing = filter(1024, 2, 20, 2);
    for _ in 0..5 {
        assert_eq!(growing.insert(same, LIMITS), Inserted::Added);
    }
    assert_eq!(growing.sub_filters().len(), 2);
    assert_eq!(growing.sub_filters()[1].buckets(), 1024);
}

const WIDTHS: [Width; 3] = Width::NARROWEST_FIRST;

fn of_width(width: Width, capacity: u64, bucket_size: u16, expansion: u16) -> CuckooFilter {
    CuckooFilter::try_new(
        CuckooParams { capacity, bucket_size, max_iterations: DEFAULT_MAX_ITERATIONS, expansion, width },
        BUDGET,
    )
    .unwrap()
}

/// Adds `prefix0`, `prefix1`, ... until the filter has no room; answers how many it took.
fn fill(filter: &mut CuckooFilter, prefix: &str) -> usize {
    let mut added = 0;
    while filter.insert(filter.hash(format!("{prefix}{added}").as_bytes()), LIMITS) == Inserted::Added {
        added += 1;
    }
    added
}

#[test]
fn a_failed_eviction_changes_nothing() {
    for width in WIDTHS {
        let mut full = of_width(width, 64, 2, 0);
        let mut added = 0;
        loop {
            let before: Vec<u8> = full.sub_filters()[0].bytes().to_vec();
            if full.insert(full.hash(format!("item{added}").as_bytes()), LIMITS) == Inserted::NoRoom {
                assert_eq!(full.sub_filters()[0].bytes(), &before[..], "{width:?}");
                break;
            }
            added += 1;
        }
        for index in 0..added {
            assert!(full.contains(full.hash(format!("item{index}").as_bytes())), "{width:?} item{index}");
        }
    }
}

#[test]
fn wide_filters_store_whole_slots_and_delete_through_a_compaction() {
    for width in WIDTHS {
        let mut chain = of_width(width, 4, 1, 1);
        let items: Vec<CuckooHash> = (0..40).map(|n| chain.hash(format!("i{n}").as_bytes())).collect();
        for &each in &items {
            assert_eq!(chain.insert(each, LIMITS), Inserted::Added);
        }
        assert_eq!(chain.sub_filters()[0].bytes().len(), 4 * width.bytes());
        let occupied =
            chain.sub_filters()[0].bytes().chunks(width.bytes()).filter(|s| s.iter().any(|&b| b != 0));
        assert_eq!(occupied.count(), 4, "{width:?}: every slot holds one fingerprint");
        let filters_before = chain.sub_filters().len();
        for &each in &items[..6] {
            assert!(chain.delete(each));
        }
        assert!(chain.sub_filters().len() < filters_before, "{width:?}: compacted");
        assert_eq!(chain.items(), 34);
        assert!(items[6..].iter().all(|&each| chain.contains(each) && chain.count(each) >= 1));
        assert!(!chain.delete(chain.hash(b"never added")));
    }
}

#[test]
fn the_sub_filter_limit_and_the_budget_stop_growth() {
    for width in WIDTHS {
        let budget = 64 * width.bytes();
        let params = CuckooParams { capacity: 4, bucket_size: 1, max_iterations: 1, expansion: 4, width };
        let mut small_budget = CuckooFilter::try_new(params, budget).unwrap();
        let same = small_budget.hash(b"same");
        let mut added = 0;
        while small_budget.insert(same, Limits { max_bytes: budget, ..LIMITS }) == Inserted::Added {
            added += 1;
        }
        assert!(small_budget.data_bytes() <= budget && added > 0, "{width:?}");
        assert_eq!(small_budget.sub_filters().len(), 2, "{width:?}: 4 buckets, then 16; 64 more would pass");
        let mut limited = CuckooFilter::try_new(params, BUDGET).unwrap();
        while limited.insert(same, Limits { max_sub_filters: 3, ..LIMITS }) == Inserted::Added {}
        assert_eq!(limited.sub_filters().len(), 3, "{width:?}");
        let huge = CuckooParams { capacity: u64::MAX, width, ..CuckooParams::default() };
        assert!(CuckooFilter::try_new(huge, usize::MAX).is_err(), "{width:?}");
    }
}

/// The bound that `ERROR` promises, measured: per sub-filter, however full. A filter
/// filled until it refuses an item, then a growing one with several sub-filters, probed
/// with items never added.
#[test]
fn filters_of_the_width_chosen_for_a_rate_stay_within_it_per_sub_filter() {
    let measure = |filter: &CuckooFilter, probes: usize| {
        let hits =
            (0..probes).filter(|n| filter.contains(filter.hash(format!("absent{n}").as_bytes()))).count();
        hits as f64 / probes as f64
    };
    for rate in [0.05, 0.01, 1e-3, 1e-4, 1e-6] {
        let (width, bucket_size) = Width::for_error_rate(rate, None, 1 << 12).unwrap();
        let probes = (200.0 / rate).clamp(200_000.0, 2_000_000.0) as usize;
        let mut full = of_width(width, 1 << 14, bucket_size, 0);
        let added = fill(&mut full, "member");
        let measured = measure(&full, probes);
        eprintln!(
            "rate {rate}: {width:?} x {bucket_size}, refused at {added} items, measured {measured:.2e}"
        );
        assert!(measured <= rate, "rate {rate}: measured {measured}");

        let mut chain = of_width(width, 1 << 12, bucket_size, 1);
        for n in 0..3 << 12 {
            assert_eq!(chain.insert(chain.hash(format!("member{n}").as_bytes()), LIMITS), Inserted::Added);
        }
        let sub_filters = chain.sub_filters().len();
        let measured = measure(&chain, probes);
        eprintln!("   {sub_filters} sub-filters: measured {measured:.2e}");
        assert!(sub_filters >= 3 && measured <= rate * sub_filters as f64, "rate {rate}: {measured}");
    }
}

/// The loads `ERROR` weighs bucket sizes by, against a filter of 2^20 slots.
#[test]
fn sub_filters_fill_at_least_as_far_as_the_choice_assumes() {
    for (bucket_size, load) in fingerprint::LOAD_AT_FIRST_REFUSAL {
        for prefix in ["a", "b", "c"] {
            let mut filter = of_width(Width::Eight, 1 << 20, bucket_size, 0);
            let refused_at = fill(&mut filter, prefix) as f64 / f64::from(1 << 20);
            eprintln!("bucket size {bucket_size}, items {prefix}: {refused_at:.3}");
            assert!(refused_at >= load, "bucket size {bucket_size}: {refused_at} < {load}");
        }
    }
}
