//! Generations that pool their rates: batched streams keep the steady memory and the error
//! rate, what an older generation leaves goes to the next base, the pooled sum holds at every
//! add whatever the stream, a stream past its capacity takes about the memory of bases kept to
//! their capacity, the limit survives a reload, and records of earlier versions keep their
//! placement while those past the pool are refused.

use super::super::pool;
use super::*;
use crate::bloom::params::SIZING_MARGIN;
use crate::bloom::sub_filter::SubFilter;
use crate::bloom::BloomFilter;
use crate::bytes::ByteArray;
use crate::decode::DecodeError;

/// Adds `count` new items at `at`, numbered from `*next`.
fn batch(filter: &mut WindowFilter, next: &mut u64, count: u64, at: u64) {
    for _ in 0..count {
        add_at(filter, &member(*next), at).unwrap();
        *next += 1;
    }
}

/// The pooled sum and each base's cap, as an add leaves them: every generation at its base's
/// expected rate, plus its overflow's share of the rate if it opened one or is the current one
/// (at least that share if not); the current span's generation, not yet opened, and each one
/// still to come in the window at that share; all within every generation that can be alive at
/// the rates their layouts aim at.
fn assert_pool_holds(filter: &WindowFilter) {
    let params = filter.params();
    let overflow_share = params.overflow_error_rate() * SIZING_MARGIN;
    let current_start = filter.current_start_ms();
    let mut sum: f64 = filter
        .generations()
        .map(|generation| {
            let base = &generation.value.base;
            let rate = base.layout().expected_rate(base.items());
            let may_overflow = generation.value.overflow().is_some() || generation.start_ms == current_start;
            if may_overflow {
                rate + overflow_share
            } else {
                rate.max(overflow_share)
            }
        })
        .sum();
    // The older generations and the current span's, opened or not; the rest are to come.
    let live = filter.generations().filter(|generation| generation.start_ms != current_start).count() + 1;
    sum += (params.max_live_generations() as usize - live) as f64 * overflow_share;
    let aimed = (params.base_error_rate() + params.overflow_error_rate()) * SIZING_MARGIN;
    // A relative slack for the rounding of the sum.
    let bound = f64::from(params.max_live_generations()) * aimed * (1.0 + 1e-9);
    assert!(sum <= bound, "{sum} past {bound}");
    for generation in filter.generations() {
        let base = &generation.value.base;
        assert!(base.items() <= params.base_item_limit(base.capacity()), "{} items", base.items());
    }
}

fn plain_memory(capacity: u64) -> usize {
    let mut plain = BloomFilter::try_new(capacity, 0.01, 2, UNLIMITED).unwrap();
    for n in 0..capacity {
        plain.insert(&member(n), UNLIMITED).unwrap();
    }
    plain.memory_bytes()
}

/// A client that flushes 15,000 items per 3 s every 100 or 200 ms gives spans of 750 ms a
/// batch more or less than their share (3,500 or 4,000 items against a base of 3,985): each
/// of those opened an overflow when bases kept to their capacity (2.94 and 3.40 times a plain
/// filter). Whatever the phase of the flushes against the spans, from the first add on.
#[test]
fn batched_streams_keep_the_steady_memory_and_the_rate() {
    let (capacity, window) = (15_000u64, 3_000u64);
    let plain = plain_memory(capacity) as f64;
    for interval in [100u64, 200] {
        for phase in [0u64, 37, 150, 420, 733] {
            let mut filter = filter(window, DEFAULT_GENERATIONS, capacity, 0.01, 2);
            let from = filter.current_start_ms() + phase;
            let per_batch = capacity * interval / window;
            // Up to the end of a span, whose last millisecond is the worst instant: every live
            // generation as full as the stream makes it.
            let span = filter.params().span_ms();
            let end = (from + 4 * window) / span * span + span;
            let (mut next, mut peak) = (0, 0);
            for at in (from..end).step_by(interval as usize) {
                batch(&mut filter, &mut next, per_batch, at);
                peak = peak.max(filter.memory_bytes());
                assert_pool_holds(&filter);
            }
            let ratio = peak as f64 / plain;
            assert!(ratio <= 1.58, "every {interval} ms from {phase}: {ratio} times a plain filter");
            assert!(filter.generations().all(|generation| generation.value.overflow().is_none()));
            let worst = end - 1;
            let probes = 100_000;
            let found = false_positives(&filter, probes, worst);
            assert!(
                found <= allowed_false_positives(0.01, probes),
                "every {interval} ms from {phase}: {found}"
            );
        }
    }
}

/// The limit of the second base of a window, by what the first holds: a first base that
/// overflowed leaves it only the rounding of its layout (the rest is kept for the three to
/// come); a light one leaves it room for its cap; a full one that never opened its overflow
/// leaves it that overflow's share.
#[test]
fn what_an_older_generation_leaves_goes_to_the_next_base() {
    let capacity = filter(1000, 4, 20_000, 0.01, 2).params().generation_capacity();
    let most = capacity + capacity / 16;
    let limit_after = |first_items: u64| {
        let mut filter = filter(1000, 4, 20_000, 0.01, 2);
        let start = filter.current_start_ms();
        batch(&mut filter, &mut 0, first_items, start);
        filter.rotate(start + 250);
        let older = filter.generations.older();
        let base = &older[0].value.base;
        (
            older[0].value.overflow.is_some(),
            pool::base_limit(filter.params(), older, base.layout(), base.capacity()),
        )
    };
    let (overflowed, after_overflow) = limit_after(most + 100);
    assert!(overflowed);
    assert!(after_overflow < capacity + capacity / 100, "{after_overflow} after an overflow ({capacity})");
    assert_eq!(limit_after(capacity / 2), (false, most), "after a light one");
    let (overflowed, after_full) = limit_after(capacity);
    assert!(!overflowed && after_full > after_overflow + capacity / 100, "{after_full} after a full one");
}

/// A small generator for the uneven streams below (no dependency for one test).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % bound
    }
}

/// Spans of anything from nothing to half again their share, some idle, and windows that are
/// not a whole number of spans (so that generations expire in the middle of one): after every
/// batch the live bases' rates sum within the bound, no base passes its cap, and the record
/// loads. Some bases borrow, and some are held short of their capacity by those that did.
#[test]
fn the_pooled_rates_hold_at_every_add() {
    let (mut borrowed, mut held_short) = (false, false);
    for (window, g, seed) in [(1000u64, 4u32, 1u64), (1000, 3, 2), (1400, 6, 3), (1000, 1, 4)] {
        let capacity = 2_000;
        let mut filter = filter(window, g, capacity, 0.01, 2);
        let span = filter.params().span_ms();
        let share = capacity * span / window;
        let mut random = Lcg(seed);
        let (mut next, mut at) = (0, filter.current_start_ms());
        for _ in 0..60 {
            let items = share * random.below(16) / 10;
            let batches = 1 + random.below(4);
            for part in 0..batches {
                batch(&mut filter, &mut next, items / batches, at + part * span / batches);
                assert_pool_holds(&filter);
            }
            // And at the instant of the next rotation, which drops a generation in the middle of
            // a span where the window is not a whole number of spans.
            if let Some(rotation) = filter.next_rotation_ms().filter(|&rotation| rotation < at + span) {
                batch(&mut filter, &mut next, share / 4, rotation.max(at));
                assert_pool_holds(&filter);
            }
            // Its own record loads: the load checks the sum as the adds kept it.
            assert!(WindowFilter::decode_header(&filter.encode_header(), UNLIMITED).is_ok());
            for generation in filter.generations() {
                let base = &generation.value.base;
                borrowed |= base.items() > base.capacity();
                held_short |= base.items() < base.capacity() && generation.value.overflow().is_some();
            }
            at += span;
        }
        assert!(filter.totals_hold());
    }
    assert!(borrowed && held_short, "borrowed {borrowed}, held short {held_short}");
}

/// A steady stream past the capacity. From a first span that is full, every base takes at
/// least its capacity before its overflow opens (none is held short by others that borrowed),
/// and the peak memory is no more than that of bases kept to their capacity. From a first span
/// that is light (the filter made late in a span), what it left was lent, and once it is
/// dropped its room recurs each window: one base per window is held short. Its overflow's
/// first link takes the shortfall on top of a share, so that the generation holds as much
/// before a second link: over every start phase and 1.02 to 4 times the capacity, peak memory
/// at most 1.072 times (with an overflow of one share, 1.23 times between 1.7 and 2.1 times
/// the capacity, where the held generation grew a second link).
#[test]
fn a_stream_past_its_capacity_takes_about_the_memory_of_bases_kept_to_capacity() {
    for (phase, most_ratio) in [(0u64, 1.0f64), (100, 1.08), (200, 1.08)] {
        for excess in [1.02f64, 1.05, 1.1, 1.3, 1.7, 2.0, 2.1, 3.0] {
            let mut pooled = filter(1000, 4, 2_000, 0.01, 2);
            let mut fixed = filter(1000, 4, 2_000, 0.01, 2);
            fixed.pooled = false;
            let per_window = (2_000.0 * excess) as u64;
            let from = pooled.current_start_ms() + phase;
            let (mut pooled_peak, mut fixed_peak) = (0, 0);
            for n in 0..per_window * 8 {
                let now = from + n * 1000 / per_window;
                add_at(&mut pooled, &member(n), now).unwrap();
                add_at(&mut fixed, &member(n), now).unwrap();
                pooled_peak = pooled_peak.max(pooled.memory_bytes());
                fixed_peak = fixed_peak.max(fixed.memory_bytes());
                if phase == 0 {
                    for generation in
                        pooled.generations().filter(|generation| generation.value.overflow().is_some())
                    {
                        let base = &generation.value.base;
                        assert!(base.items() >= base.capacity(), "{excess}: {} items", base.items());
                    }
                }
                assert_pool_holds(&pooled);
            }
            let ratio = pooled_peak as f64 / fixed_peak as f64;
            assert!(ratio <= most_ratio, "{excess} from {phase}: {ratio} times the memory");
        }
    }
}

/// The limit is kept by the filter, not written: a filter rebuilt from its record in the
/// middle of a span, or after a generation expired in the middle of one (a window of 1,000 ms
/// in 27 spans of 38 expires them 12 ms into a span), places what follows as the one that was
/// not, bit for bit.
#[test]
fn a_reload_in_the_middle_of_a_span_places_items_alike() {
    let mut kept = filter(1000, 27, 30_000, 0.01, 2);
    let mut reloaded_often = filter(1000, 27, 30_000, 0.01, 2);
    let mut at = kept.current_start_ms();
    let mut random = Lcg(7);
    let (mut next, mut borrowed) = (0, false);
    for step in 0..1_500u64 {
        // A third of the batches land on the instant of the next rotation: a drop, or a span.
        at = match kept.next_rotation_ms() {
            Some(rotation) if random.below(3) == 0 => rotation.max(at),
            _ => at + 1 + random.below(40),
        };
        // Light and heavy stretches of a few spans each: the heavy ones borrow what the light lent.
        let count =
            if (at / 500).is_multiple_of(2) { 200 + random.below(400) } else { 600 + random.below(400) };
        let first = next;
        batch(&mut kept, &mut next, count, at);
        next = first;
        batch(&mut reloaded_often, &mut next, count, at);
        match random.below(4) {
            0 => reloaded_often = reloaded(&reloaded_often),
            1 => {
                let record = &mut record_of(&reloaded_often);
                reloaded_often =
                    WindowFilter::load_rdb(WindowFilter::ENCODING_VERSION, record, UNLIMITED).unwrap();
            }
            _ => {}
        }
        borrowed |= kept
            .generations()
            .any(|generation| generation.value.base.items() > generation.value.base.capacity());
        assert!(same(&kept, &reloaded_often), "step {step}");
    }
    assert!(borrowed);
}

/// Only generations that can open an overflow pool, and only at rates the sizing does not
/// raise to its floor (1e-20): there a base at its capacity is already past the rate it would
/// pool, and every base would be held empty.
#[test]
fn only_scaling_generations_at_sized_rates_pool() {
    assert!(filter(1000, 4, 2_000, 0.01, 2).pooled);
    assert!(!filter(1000, 4, 2_000, 0.01, 0).pooled);
    let mut tiny = filter(1000, 4, 2_000, 1e-20, 2);
    assert!(!tiny.pooled);
    let start = tiny.current_start_ms();
    batch(&mut tiny, &mut 0, 100, start);
    assert!(tiny.generations().all(|generation| generation.value.overflow().is_none()));
}

/// A record that does not say its bases pool (an earlier version's, or a master's of that
/// version) keeps each base to its capacity, and its records keep saying so.
#[test]
fn a_filter_of_an_earlier_version_keeps_its_placement() {
    let mut filter = filter(1000, 4, 2_000, 0.01, 2);
    filter.pooled = false;
    let header = filter.encode_header();
    assert_eq!(header[5], 0);
    let mut loaded = WindowFilter::decode_header(&header, UNLIMITED).unwrap();
    let from = loaded.current_start_ms();
    let mut next = 0;
    // 550 items a span against bases of 532: each opens an overflow at its capacity.
    for span in 0..8 {
        batch(&mut loaded, &mut next, 550, from + span * 250);
    }
    assert!(loaded.generations().all(|generation| {
        generation.value.base.items() == generation.value.base.capacity()
            && generation.value.overflow().is_some()
    }));
    assert_eq!(loaded.encode_header()[5], 0);
    assert!(!reloaded(&loaded).pooled);
}

/// A record whose bases claim more than the pool allows is refused: one base past its cap,
/// or every base at its cap together past the bound.
#[test]
fn records_past_the_pool_are_refused() {
    let mut filter = filter(1000, 4, 2_000, 0.01, 2);
    let from = filter.current_start_ms();
    let mut next = 0;
    for span in 0..5 {
        batch(&mut filter, &mut next, 400, from + span * 250);
    }
    assert!(WindowFilter::decode_header(&filter.encode_header(), UNLIMITED).is_ok());
    let with_items = |filter: &WindowFilter, items: &dyn Fn(&SubFilter) -> u64| {
        let mut copy = filter.try_clone().unwrap();
        for generation in copy.generations.iter_mut() {
            let base = &generation.value.base;
            let bits = ByteArray::try_zeroed(base.byte_len() as u64).unwrap();
            let items = items(base);
            generation.value.base =
                SubFilter::restore(base.capacity(), base.error_rate(), base.layout(), items, bits).unwrap();
        }
        copy.encode_header()
    };
    let limit = |base: &SubFilter| filter.params().base_item_limit(base.capacity());
    let refused = |header: Vec<u8>| {
        matches!(WindowFilter::decode_header(&header, UNLIMITED), Err(DecodeError::Malformed(_)))
    };
    assert!(refused(with_items(&filter, &|base| limit(base) + 1)), "a base past its cap");
    assert!(refused(with_items(&filter, &limit)), "every base at its cap");
    assert!(!refused(with_items(&filter, &SubFilter::capacity)), "every base at its capacity");
}
