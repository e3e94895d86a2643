//! Properties of the whole core, in both formats: no false negatives, the promised
//! false-positive rate, and encodings that round-trip exactly and refuse whatever they did
//! not write.

use super::encoding::ChunkError;
use super::{chain, redisbloom, BloomFilter, Filter, FilterError, Format};
use crate::decode::DecodeError;
use proptest::prelude::*;

const UNLIMITED: usize = usize::MAX;
const FORMATS: [Format; 2] = [Format::Redbloom, Format::RedisBloom];

fn new(format: Format, capacity: u64, rate: f64, expansion: u32) -> Filter {
    Filter::try_new(format, capacity, rate, expansion, UNLIMITED).unwrap()
}

fn blocked(capacity: u64, rate: f64, expansion: u32) -> BloomFilter {
    BloomFilter::try_new(capacity, rate, expansion, UNLIMITED).unwrap()
}

fn longest_chain(format: Format) -> usize {
    match format {
        Format::Redbloom => chain::MAX_LINKS,
        Format::RedisBloom => redisbloom::chain::MAX_LINKS,
    }
}

/// Rebuilds a filter the way LOADCHUNK and RDB load do: header, then every chunk.
fn round_trip(filter: &Filter) -> Filter {
    let mut copy = Filter::decode_header(&filter.encode_header(), UNLIMITED).unwrap();
    for (end, chunk) in filter.chunks() {
        copy.write_chunk(end - chunk.len() as u64, chunk).unwrap();
    }
    copy
}

fn same_filter(a: &Filter, b: &Filter) -> bool {
    a.encode_header() == b.encode_header() && a.chunks().eq(b.chunks())
}

/// Adds `count` distinct items, `prefix`-tagged; answers how many were counted as new.
fn fill(filter: &mut Filter, prefix: &str, count: u64) -> u64 {
    let mut added = 0;
    for n in 0..count {
        if filter.insert(format!("{prefix}{n}").as_bytes(), || UNLIMITED).unwrap() {
            added += 1;
        }
    }
    added
}

/// False positives among `probes` items never added.
fn false_positives(filter: &Filter, probes: u64) -> u64 {
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
        let mut chain = blocked(capacity, rate, 0);
        if rate < 0.001 {
            assert!(chain.links()[0].layout().blocks_per_item > 1, "meant to test several blocks per item");
        }
        // Fill to capacity exactly: count only the adds that answered 1.
        let mut n = 0;
        while chain.items() < capacity {
            let _ = chain.insert(format!("member:{n}").as_bytes(), UNLIMITED).unwrap();
            n += 1;
        }
        let filter = Filter::Redbloom(chain);
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
    for format in FORMATS {
        let mut filter = new(format, 1000, rate, 2);
        fill(&mut filter, "member:", 100_000);
        assert!(filter.link_count() >= 6, "{format:?}: {} links", filter.link_count());
        let probes = 400_000;
        let found = false_positives(&filter, probes);
        assert!(found <= allowed_false_positives(rate, probes), "{format:?}: {found} false positives");
    }
}

#[test]
fn scaling_filter_holds_every_item_it_acknowledged() {
    for format in FORMATS {
        let mut filter = new(format, 100, 0.001, 4);
        let added = fill(&mut filter, "m", 50_000);
        assert_eq!(filter.items(), added);
        assert!((0..50_000).all(|n| filter.contains(format!("m{n}").as_bytes())), "{format:?}");
    }
}

#[test]
fn a_header_of_another_size_is_refused_by_a_chunk_that_does_not_fit() {
    for format in FORMATS {
        let mut small = new(format, 100, 0.01, 2);
        let big = new(format, 100_000, 0.01, 2);
        let big_chunk = big.chunks().next().unwrap().1;
        assert_eq!(small.write_chunk(0, big_chunk), Err(ChunkError::TooBig));
        assert_eq!(small.write_chunk(1 << 40, b"x"), Err(ChunkError::NoLink));
    }
}

#[test]
fn a_budget_refuses_large_headers_before_allocating() {
    for format in FORMATS {
        let header = new(format, 1_000_000, 0.01, 2).encode_header();
        assert_eq!(Filter::decode_header(&header, 1024).err(), Some(DecodeError::TooLarge));
    }
}

#[test]
fn chunks_never_exceed_the_limit_nor_cross_links() {
    let limit = super::encoding::CHUNK_BYTES;
    for format in FORMATS {
        let mut filter = new(format, 20_000_000, 0.01, 2);
        fill(&mut filter, "x", 10);
        let chunks: Vec<_> = filter.chunks().map(|(end, c)| (end, c.len())).collect();
        assert!(chunks.len() >= 2);
        assert!(chunks.iter().all(|&(_, len)| len <= limit));
        assert_eq!(chunks.last().unwrap().0 as usize, filter.bits_bytes());
        assert_eq!(filter.chunk_at(0).unwrap().len(), limit);
        assert!(filter.chunk_at(filter.bits_bytes() as u64).is_none());
    }
}

#[test]
fn growth_that_the_budget_refuses_leaves_the_filter_usable() {
    for format in FORMATS {
        let mut filter = Filter::try_new(format, 10, 0.01, 2, 256).unwrap();
        let mut refused = false;
        for n in 0..1000 {
            match filter.insert(format!("{n}").as_bytes(), || 256) {
                Err(FilterError::TooLarge) => refused = true,
                Err(other) => panic!("{other:?}"),
                Ok(_) => {}
            }
        }
        assert!(refused, "{format:?}");
        assert!(same_filter(&filter, &round_trip(&filter)));
    }
}

#[test]
fn each_format_decodes_as_itself() {
    for format in FORMATS {
        let filter = new(format, 1000, 0.01, 2);
        assert_eq!(round_trip(&filter).format(), format);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_false_negatives_and_exact_round_trips(
        redisbloom_format in any::<bool>(),
        capacity in 1u64..500,
        rate in 0.0001f64..0.25,
        expansion in 0u32..5,
        items in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..24), 0..600),
    ) {
        let format = if redisbloom_format { Format::RedisBloom } else { Format::Redbloom };
        let mut filter = new(format, capacity, rate, expansion);
        let mut acknowledged = Vec::new();
        for item in &items {
            match filter.insert(item, || UNLIMITED) {
                Ok(_) => acknowledged.push(item),
                Err(FilterError::Full) => prop_assert_eq!(expansion, 0),
                Err(FilterError::TooLarge) => prop_assert_eq!(filter.link_count(), longest_chain(format)),
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
        redisbloom_format in any::<bool>(),
        capacity in 1u64..10_000,
        expansion in 0u32..4,
        grow in 0u64..3000,
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
        cut in any::<usize>(),
    ) {
        let format = if redisbloom_format { Format::RedisBloom } else { Format::Redbloom };
        let mut filter = new(format, capacity, 0.01, expansion);
        for n in 0..grow {
            if filter.insert(&n.to_le_bytes(), || UNLIMITED).is_err() {
                break;
            }
        }
        let header = filter.encode_header();
        let mut corrupt = header.clone();
        for (at, mask) in flips {
            let at = at % corrupt.len();
            corrupt[at] ^= mask.max(1);
        }
        // Whatever decodes must be a filter that re-encodes to exactly what was read.
        if let Ok(mut decoded) = Filter::decode_header(&corrupt, 1 << 30) {
            prop_assert_eq!(decoded.encode_header(), corrupt);
            let _ = decoded.insert(b"probe", || 1 << 30);
        }
        let truncated = &header[..cut % header.len()];
        prop_assert!(Filter::decode_header(truncated, UNLIMITED).is_err());
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_decoder(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(mut filter) = Filter::decode_header(&bytes, 1 << 30) {
            let _ = filter.insert(b"probe", || 1 << 30);
        }
    }
}

#[test]
fn the_fill_estimates_the_error_rate_a_filter_has() {
    for format in FORMATS {
        for (capacity, rate) in [(20_000u64, 0.01), (20_000, 0.001)] {
            let mut filter = new(format, capacity, rate, 2);
            assert_eq!(filter.estimated_error_rate(), 0.0, "{format:?}: an empty filter");
            // Twice the planned items: two links, and a rate the estimate must follow.
            fill(&mut filter, "member:", capacity * 2);
            let estimate = filter.estimated_error_rate();
            let measured = false_positives(&filter, 400_000) as f64 / 400_000.0;
            assert!(
                estimate > measured * 0.7 && estimate < measured * 1.4 + 1e-4,
                "{format:?} at {rate}: estimated {estimate}, measured {measured}"
            );
        }
    }
}
