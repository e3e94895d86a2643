//! Properties of the whole core: no false negatives, the promised false-positive rate, and
//! encodings that round-trip exactly and refuse whatever they did not write.

use super::chain::MAX_LINKS;
use super::encoding::{self, ChunkError, DecodeError};
use super::{BloomFilter, FilterError};
use proptest::prelude::*;

const UNLIMITED: usize = usize::MAX;

/// Rebuilds a filter the way LOADCHUNK and RDB load do: header, then every chunk.
fn round_trip(filter: &BloomFilter) -> BloomFilter {
    let mut copy = encoding::decode_header(&encoding::encode_header(filter), UNLIMITED).unwrap();
    for (end, chunk) in encoding::chunks(filter) {
        encoding::write_chunk(&mut copy, end - chunk.len() as u64, chunk).unwrap();
    }
    copy
}

fn same_filter(a: &BloomFilter, b: &BloomFilter) -> bool {
    encoding::encode_header(a) == encoding::encode_header(b) && encoding::chunks(a).eq(encoding::chunks(b))
}

/// Adds `count` distinct items, `prefix`-tagged; answers how many were counted as new.
fn fill(filter: &mut BloomFilter, prefix: &str, count: u64) -> u64 {
    let mut added = 0;
    for n in 0..count {
        if filter.insert(format!("{prefix}{n}").as_bytes(), UNLIMITED).unwrap() {
            added += 1;
        }
    }
    added
}

/// False positives among `probes` items never added.
fn false_positives(filter: &BloomFilter, probes: u64) -> u64 {
    (0..probes).filter(|n| filter.contains(format!("absent:{n}").as_bytes())).count() as u64
}

/// Upper bound a measured rate may reach for a true rate `p` over `n` probes: p plus four
/// standard deviations, so that an honest filter fails this less than once in 30,000 runs.
fn allowed_false_positives(p: f64, n: u64) -> u64 {
    let mean = p * n as f64;
    (mean + 4.0 * (mean * (1.0 - p)).sqrt()).ceil() as u64
}

#[test]
fn non_scaling_filter_at_capacity_keeps_its_error_rate() {
    for &(capacity, rate) in &[(200_000u64, 0.01), (100_000, 0.001), (50_000, 0.1), (100_000, 0.0001)] {
        let mut filter = BloomFilter::try_new(capacity, rate, 0, UNLIMITED).unwrap();
        if rate < 0.001 {
            assert!(filter.links()[0].layout().blocks_per_item > 1, "meant to test several blocks per item");
        }
        // Fill to capacity exactly: count only the adds that answered 1.
        let mut n = 0;
        while filter.items() < capacity {
            let _ = filter.insert(format!("member:{n}").as_bytes(), UNLIMITED).unwrap();
            n += 1;
        }
        let probes = 400_000;
        let found = false_positives(&filter, probes);
        assert!(
            found <= allowed_false_positives(rate, probes),
            "rate {rate}: {found} false positives in {probes}"
        );
    }
}

#[test]
fn a_chain_of_many_links_keeps_the_requested_rate() {
    let rate = 0.01;
    let mut filter = BloomFilter::try_new(1000, rate, 2, UNLIMITED).unwrap();
    fill(&mut filter, "member:", 100_000);
    assert!(filter.links().len() >= 6, "{} links", filter.links().len());
    let probes = 400_000;
    let found = false_positives(&filter, probes);
    assert!(found <= allowed_false_positives(rate, probes), "{found} false positives");
}

#[test]
fn scaling_filter_holds_every_item_it_acknowledged() {
    let mut filter = BloomFilter::try_new(100, 0.001, 4, UNLIMITED).unwrap();
    let added = fill(&mut filter, "m", 50_000);
    assert_eq!(filter.items(), added);
    assert!((0..50_000).all(|n| filter.contains(format!("m{n}").as_bytes())));
}

#[test]
fn a_header_of_another_size_is_refused_by_a_chunk_that_does_not_fit() {
    let mut small = BloomFilter::try_new(100, 0.01, 2, UNLIMITED).unwrap();
    let big = BloomFilter::try_new(100_000, 0.01, 2, UNLIMITED).unwrap();
    let big_chunk = encoding::chunks(&big).next().unwrap().1;
    assert_eq!(encoding::write_chunk(&mut small, 0, big_chunk), Err(ChunkError::TooBig));
    assert_eq!(encoding::write_chunk(&mut small, 1 << 40, b"x"), Err(ChunkError::NoLink));
}

#[test]
fn a_budget_refuses_large_headers_before_allocating() {
    let filter = BloomFilter::try_new(1_000_000, 0.01, 2, UNLIMITED).unwrap();
    let header = encoding::encode_header(&filter);
    assert_eq!(encoding::decode_header(&header, 1024).err(), Some(DecodeError::TooLarge));
}

#[test]
fn chunks_never_exceed_the_limit_nor_cross_links() {
    let mut filter = BloomFilter::try_new(20_000_000, 0.01, 2, UNLIMITED).unwrap();
    fill(&mut filter, "x", 10);
    let chunks: Vec<_> = encoding::chunks(&filter).map(|(end, c)| (end, c.len())).collect();
    assert!(chunks.len() >= 2);
    assert!(chunks.iter().all(|&(_, len)| len <= encoding::CHUNK_BYTES));
    assert_eq!(chunks.last().unwrap().0 as usize, filter.bits_bytes());
    let first = encoding::chunk_at(&filter, 0).unwrap();
    assert_eq!(first.len(), encoding::CHUNK_BYTES);
    assert!(encoding::chunk_at(&filter, filter.bits_bytes() as u64).is_none());
}

#[test]
fn growth_that_the_budget_refuses_leaves_the_filter_usable() {
    let mut filter = BloomFilter::try_new(10, 0.01, 2, 256).unwrap();
    let mut refused = false;
    for n in 0..1000 {
        match filter.insert(format!("{n}").as_bytes(), 256) {
            Err(FilterError::TooLarge) => refused = true,
            Err(other) => panic!("{other:?}"),
            Ok(_) => {}
        }
    }
    assert!(refused);
    assert!(same_filter(&filter, &round_trip(&filter)));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_false_negatives_and_exact_round_trips(
        capacity in 1u64..500,
        rate in 0.0001f64..0.25,
        expansion in 0u32..5,
        items in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..24), 0..600),
    ) {
        let mut filter = BloomFilter::try_new(capacity, rate, expansion, UNLIMITED).unwrap();
        let mut acknowledged = Vec::new();
        for item in &items {
            match filter.insert(item, UNLIMITED) {
                Ok(_) => acknowledged.push(item),
                Err(FilterError::Full) => prop_assert_eq!(expansion, 0),
                Err(FilterError::TooLarge) => prop_assert_eq!(filter.links().len(), MAX_LINKS),
                Err(other) => prop_assert!(false, "{:?}", other),
            }
        }
        for item in &acknowledged {
            prop_assert!(filter.contains(item));
        }
        let copy = round_trip(&filter);
        prop_assert!(same_filter(&filter, &copy));
        for item in &acknowledged {
            prop_assert!(copy.contains(item));
        }
    }

    #[test]
    fn corrupt_headers_are_refused_or_describe_a_valid_filter(
        capacity in 1u64..10_000,
        expansion in 0u32..4,
        grow in 0u64..3000,
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
        cut in any::<usize>(),
    ) {
        let mut filter = BloomFilter::try_new(capacity, 0.01, expansion, UNLIMITED).unwrap();
        for n in 0..grow {
            if filter.insert(&n.to_le_bytes(), UNLIMITED).is_err() {
                break;
            }
        }
        let header = encoding::encode_header(&filter);
        let mut corrupt = header.clone();
        for (at, mask) in flips {
            let at = at % corrupt.len();
            corrupt[at] ^= mask.max(1);
        }
        // Whatever decodes must be a filter that re-encodes to exactly what was read.
        if let Ok(decoded) = encoding::decode_header(&corrupt, 1 << 30) {
            prop_assert_eq!(encoding::encode_header(&decoded), corrupt);
        }
        let truncated = &header[..cut % header.len()];
        prop_assert!(encoding::decode_header(truncated, UNLIMITED).is_err());
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_decoder(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = encoding::decode_header(&bytes, 1 << 30);
    }
}
