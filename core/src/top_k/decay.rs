//! `HeavyKeeper`'s decay, drawn from the sketch's own generator instead of libc's `rand()`, and in
//! time that does not grow with the increment.
//!
//! RedisBloom hits a bucket of another fingerprint once per unit of increment: each hit
//! decrements its count with probability `decay^count`, and the hit that takes it to zero hands
//! the bucket to the item, with the hits still to come as its count. The same law is sampled
//! here by skipping: while a decrement is unlikely (probability under one half) the number of
//! hits until the next one is drawn at once (a geometric number); while it is likely, the
//! number of decrements in a row until the next miss is drawn at once. Either way each draw
//! settles many hits, so a row takes a few dozen draws where RedisBloom takes the increment's
//! worth of `rand()` calls (a count whose probability is zero in `f64` needs none at all).
//! Except near a decay of 1: while the probability is far from both 0 and 1, for thousands
//! of counts in a row when the decay is 0.9999 or closer, a draw settles a few hits and one
//! decrement, and a large increment on a large count costs about as many draws as decrements.
//!
//! Every value a draw depends on is computed with `+ - * /` and `sqrt` alone, which IEEE 754
//! rounds the same everywhere, never with the platform's `ln` or `pow`: a master and its
//! replica on different C libraries or CPUs draw the same decrements.

/// splitmix64's increment, the golden ratio in 64 bits.
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// A splitmix64 generator: its whole state is one `u64`, saved with the sketch, and every state
/// (a seed, or the stale pointer a RedisBloom record holds in its place) starts a good sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Rng(pub(super) u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1], in steps of 2^-53: never 0, whose logarithm is infinite.
    fn uniform(&mut self) -> f64 {
        const STEP: f64 = 1.0 / 9_007_199_254_740_992.0;
        ((self.next_u64() >> 11) + 1) as f64 * STEP
    }
}

/// Terms of the `atanh` series: |s| <= 0.172 makes the 13th below 2^-70 of the sum.
const SERIES_TERMS: u32 = 13;

/// `ln((1 + s) / (1 - s))`, i.e. `2 atanh(s)`, for |s| <= 0.18.
fn ln_ratio(s: f64) -> f64 {
    let square = s * s;
    let mut sum = 0.0;
    for term in (0..SERIES_TERMS).rev() {
        sum = sum * square + 1.0 / f64::from(2 * term + 1);
    }
    2.0 * s * sum
}

/// The natural logarithm of a positive finite `x`, to within a few units in the last place.
pub(super) fn ln(x: f64) -> f64 {
    const TWO_TO_54: f64 = 18_014_398_509_481_984.0;
    const MANTISSA: u64 = (1 << 52) - 1;
    const ONE_BITS: u64 = 0x3ff0_0000_0000_0000;
    let (x, mut exponent) = if x < f64::MIN_POSITIVE { (x * TWO_TO_54, -54) } else { (x, 0) };
    let bits = x.to_bits();
    exponent += ((bits >> 52) & 0x7ff) as i32 - 1023;
    let mut mantissa = f64::from_bits((bits & MANTISSA) | ONE_BITS);
    if mantissa > std::f64::consts::SQRT_2 {
        mantissa *= 0.5;
        exponent += 1;
    }
    // mantissa - 1 is exact (Sterbenz); the series then converges fast.
    ln_ratio((mantissa - 1.0) / (mantissa + 1.0)) + f64::from(exponent) * std::f64::consts::LN_2
}

/// `ln(1 - p)` for `p` in (0, 1), exact in relative terms even for a tiny `p`, where `1 - p`
/// would round to 1.
fn ln_complement(p: f64) -> f64 {
    if p < 0.25 {
        ln_ratio(-p / (2.0 - p))
    } else {
        ln(1.0 - p)
    }
}

/// What the hits of one row did to a bucket of another fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Decayed {
    /// The bucket keeps its fingerprint, with this count.
    Kept(u32),
    /// The count reached zero: the bucket is the item's now, with this count.
    Taken(u32),
}

/// The decay of one sketch: `decay^count` for any count, and the logarithm the run lengths need.
/// Derived from the decay alone, so rebuilt whenever a sketch is made or loaded (RedisBloom
/// keeps its table of powers in memory only, and a sketch it loads never decays again).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Decay {
    /// `decay^(2^i)`.
    powers: [f64; 32],
    /// `decay^count` for the counts most hits meet, as [`Decay::probability`] computes it
    /// for any count: a lookup instead of a product per hit.
    small: [f64; SMALL_COUNTS],
    /// `ln(decay)`: 0 for a decay of 1, negative otherwise.
    logarithm: f64,
}

/// Counts below this have their probability in a table.
const SMALL_COUNTS: usize = 256;

impl Decay {
    /// The powers of `decay`, a number in (0, 1].
    pub(super) fn new(decay: f64) -> Decay {
        let mut powers = [0.0; 32];
        let mut power = decay;
        for slot in &mut powers {
            *slot = power;
            power *= power;
        }
        let mut decay = Decay { powers, small: [1.0; SMALL_COUNTS], logarithm: ln(decay) };
        for count in 0..SMALL_COUNTS {
            decay.small[count] = decay.product(count as u32);
        }
        decay
    }

    /// `decay^count`, the probability that a hit decrements a bucket of `count`: 1 only for a
    /// decay of 1, 0 once the power underflows.
    pub(super) fn probability(&self, count: u32) -> f64 {
        match self.small.get(count as usize) {
            Some(&probability) => probability,
            None => self.product(count),
        }
    }

    /// `decay^count` as a product of the powers of two that make up `count`.
    fn product(&self, count: u32) -> f64 {
        let mut probability = 1.0;
        let mut rest = count;
        let mut bit = 0;
        while rest != 0 && probability != 0.0 {
            if rest & 1 == 1 {
                probability *= self.powers[bit];
            }
            rest >>= 1;
            bit += 1;
        }
        probability
    }

    /// `hits` hits, in order, on a bucket of another fingerprint holding `count` (at least 1).
    /// TOPK.ADD's single hit is inlined into the row loop, every other case is not: a call
    /// cost about as much as the hit.
    #[inline]
    pub(super) fn hit(&self, count: u32, hits: u32, rng: &mut Rng) -> Decayed {
        if hits == 1 {
            // One hit decrements with the probability itself, one draw.
            let probability = self.probability(count);
            let decrements = probability >= 1.0 || (probability > 0.0 && rng.uniform() < probability);
            return match (decrements, count) {
                (true, 1) => Decayed::Taken(1),
                (true, _) => Decayed::Kept(count - 1),
                (false, _) => Decayed::Kept(count),
            };
        }
        self.hit_many(count, hits, rng)
    }

    /// [`hit`](Self::hit) of more than one hit, by skipping (see the module's comment).
    #[inline(never)]
    fn hit_many(&self, count: u32, hits: u32, rng: &mut Rng) -> Decayed {
        let mut count = count;
        let mut left = u64::from(hits);
        while left > 0 {
            let probability = self.probability(count);
            if probability == 0.0 {
                break;
            }
            if probability == 1.0 {
                // A decay of 1: every hit decrements, nothing is drawn.
                return if left >= u64::from(count) {
                    Decayed::Taken((left - u64::from(count) + 1) as u32)
                } else {
                    Decayed::Kept(count - left as u32)
                };
            }
            if probability < 0.5 {
                // Hits up to and including the next decrement: geometric, P(more than g) =
                // (1 - p)^g, by inversion.
                let misses = ln(rng.uniform()) / ln_complement(probability);
                if misses >= left as f64 {
                    break;
                }
                left -= misses as u64 + 1;
                count -= 1;
            } else {
                let cap = left.min(u64::from(count));
                let run = self.run(count, cap, rng.uniform());
                count -= run as u32;
                left -= run;
                if count > 0 && left > 0 {
                    // The run ended on a miss, which took a hit.
                    left -= 1;
                }
            }
            if count == 0 {
                // The last decrement's hit is the item's first.
                return Decayed::Taken((left + 1) as u32);
            }
        }
        Decayed::Kept(count)
    }

    /// How many hits in a row, at most `cap` (at most the count), decrement a bucket of
    /// `count`, drawn from `uniform`: the first `m` all do with probability `decay^S(m)`, where
    /// `S(m) = m count - m (m - 1) / 2`, so the run is the largest `m` with `S(m) < L`,
    /// `L = ln(uniform) / ln(decay)`.
    fn run(&self, count: u32, cap: u64, uniform: f64) -> u64 {
        let limit = ln(uniform) / self.logarithm;
        // Exact in u128, then rounded: monotone in m, as the search needs.
        let sum = |m: u64| {
            let (m, count) = (u128::from(m), u128::from(count));
            (m * count - m * m.saturating_sub(1) / 2) as f64
        };
        let b = 2.0 * f64::from(count) + 1.0;
        let discriminant = b * b - 8.0 * limit;
        let mut run = if discriminant <= 0.0 {
            cap
        } else {
            // The smaller root of m^2 - b m + 2L, in the form without cancellation.
            let root = 4.0 * limit / (b + discriminant.sqrt());
            ((root.ceil() - 1.0).max(0.0) as u64).min(cap)
        };
        while run > 0 && sum(run) >= limit {
            run -= 1;
        }
        while run < cap && sum(run + 1) < limit {
            run += 1;
        }
        run
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_logarithm_is_accurate_over_the_whole_range() {
        for x in [
            1e-310,
            1e-300,
            2.5e-17,
            1e-9,
            0.1,
            0.5,
            std::f64::consts::FRAC_1_SQRT_2,
            0.9,
            0.999_999_9,
            1.0,
            1.5,
            7.0,
            1e300,
        ] {
            let error = (ln(x) - x.ln()).abs();
            assert!(error <= 4.0 * f64::EPSILON * x.ln().abs().max(1.0), "{x}: {} vs {}", ln(x), x.ln());
        }
        for p in [1e-300_f64, 1e-17, 1e-9, 0.1, 0.2499, 0.25, 0.4999] {
            let expected = (-p).ln_1p();
            assert!((ln_complement(p) - expected).abs() <= 4.0 * f64::EPSILON * expected.abs(), "{p}");
        }
    }

    #[test]
    fn probabilities_are_powers_of_the_decay() {
        let decay = Decay::new(0.9);
        for count in [0, 1, 2, 3, 100, 255, 256, 1000, 7000] {
            let expected = 0.9f64.powi(count as i32);
            let probability = decay.probability(count);
            assert!((probability - expected).abs() <= 1e-13 * expected, "{count}");
        }
        assert_eq!(decay.probability(u32::MAX), 0.0);
        assert_eq!(Decay::new(1.0).probability(u32::MAX), 1.0);
    }

    /// Hit by hit, as RedisBloom does it, from the same generator's uniforms.
    fn hit_by_hit(decay: f64, mut count: u32, hits: u32, rng: &mut Rng) -> Decayed {
        for left in (1..=hits).rev() {
            if rng.uniform() <= decay.powi(count as i32) {
                count -= 1;
                if count == 0 {
                    return Decayed::Taken(left);
                }
            }
        }
        Decayed::Kept(count)
    }

    /// The mean count left and the share of takeovers, over many trials.
    fn summary(mut sample: impl FnMut(&mut Rng) -> Decayed) -> (f64, f64) {
        let mut rng = Rng(7);
        let trials = 20_000;
        let (mut total, mut taken) = (0.0, 0.0);
        for _ in 0..trials {
            match sample(&mut rng) {
                Decayed::Kept(count) => total += f64::from(count),
                Decayed::Taken(count) => {
                    taken += 1.0;
                    total -= f64::from(count);
                }
            }
        }
        (total / f64::from(trials), taken / f64::from(trials))
    }

    #[test]
    fn skipping_draws_the_law_of_hit_by_hit() {
        for (decay, count, hits) in
            [(0.9, 5, 20), (0.9, 30, 1000), (0.99, 60, 200), (0.999, 400, 700), (0.5, 2, 6), (0.98, 3, 2)]
        {
            let table = Decay::new(decay);
            let fast = summary(|rng| table.hit(count, hits, rng));
            let slow = summary(|rng| hit_by_hit(decay, count, hits, rng));
            let scale = f64::from(count.max(hits));
            assert!((fast.0 - slow.0).abs() < 0.03 * scale, "{decay} {count} {hits}: {fast:?} {slow:?}");
            assert!((fast.1 - slow.1).abs() < 0.02, "{decay} {count} {hits}: {fast:?} {slow:?}");
        }
    }

    #[test]
    fn a_decay_of_one_decrements_on_every_hit() {
        let table = Decay::new(1.0);
        let mut rng = Rng(1);
        assert_eq!(table.hit(5, 3, &mut rng), Decayed::Kept(2));
        assert_eq!(table.hit(5, 5, &mut rng), Decayed::Taken(1));
        assert_eq!(table.hit(5, 9, &mut rng), Decayed::Taken(5));
        assert_eq!(rng, Rng(1), "nothing drawn");
    }

    #[test]
    fn a_count_beyond_the_decay_costs_no_draw() {
        let table = Decay::new(0.9);
        let mut rng = Rng(3);
        assert_eq!(table.hit(10_000, u32::MAX, &mut rng), Decayed::Kept(10_000));
        assert_eq!(rng, Rng(3));
    }

    /// Draws are bounded by the decrements while a decrement is unlikely and by the misses
    /// while it is likely, both at most about `min(count, 745 / -ln(decay))` whatever the
    /// increment (past that count the probability is 0 in `f64`): a few hundred for usual
    /// decays. Only a decay within about 1e-6 of 1 and a count of billions makes millions.
    #[test]
    fn huge_increments_take_few_draws() {
        for (decay, counts) in [
            (0.5, &[1, 50, 5000, 1 << 20, u32::MAX][..]),
            (0.9, &[1, 50, 5000, 1 << 20, u32::MAX]),
            (0.999, &[1, 50, 5000, 1 << 20, u32::MAX]),
            (0.999_999, &[1, 50, 5000, 1 << 30, u32::MAX]),
            (1.0 - 1e-12, &[1, 50, 5000, 1 << 20]),
        ] {
            let table = Decay::new(decay);
            for &count in counts {
                let mut rng = Rng(11);
                let mut counting = Rng(11);
                let outcome = table.hit(count, u32::MAX, &mut rng);
                let mut draws = 0u64;
                while counting != rng {
                    counting.next_u64();
                    draws += 1;
                }
                assert!(draws < 20_000, "{decay} {count}: {draws} draws, {outcome:?}");
            }
        }
    }
}
