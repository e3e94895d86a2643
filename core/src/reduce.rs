//! `x % d` for a divisor fixed for many `x`, by two multiplications instead of a division
//! (Lemire, Kaser and Kurz, "Faster Remainder by Direct Computation", 2019). A sketch takes
//! every row's hash modulo its width, and a 32-bit division costs some 25 cycles of latency
//! where the two multiplications cost a few: the answer is the same to the bit for every
//! 32-bit `x` and nonzero `d`, which RedisBloom's `%` computes.

/// A nonzero 32-bit divisor, ready to reduce by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Modulus {
    divisor: u32,
    /// `ceil(2^64 / divisor)`, which wraps to 0 for a divisor of 1 (and every remainder is 0).
    multiplier: u64,
}

impl Modulus {
    /// `None` for 0, by which nothing divides.
    pub fn new(divisor: u32) -> Option<Modulus> {
        let multiplier = (u64::MAX / u64::from(divisor).max(1)).wrapping_add(1);
        (divisor > 0).then_some(Modulus { divisor, multiplier })
    }

    /// `x % divisor`.
    #[inline]
    pub fn reduce(self, x: u32) -> u32 {
        let fraction = self.multiplier.wrapping_mul(u64::from(x));
        ((u128::from(fraction) * u128::from(self.divisor)) >> 64) as u32
    }

    /// The divisor it reduces by.
    pub fn divisor(self) -> u32 {
        self.divisor
    }
}

#[cfg(test)]
mod tests {
    use super::Modulus;
    use proptest::prelude::*;

    #[test]
    fn the_ends_reduce_as_the_remainder() {
        let divisors = [1, 2, 3, 7, 2000, 65_535, 65_536, 1 << 31, u32::MAX - 1, u32::MAX];
        let values = [0, 1, 2, 1999, 2000, 2001, u32::MAX / 2, u32::MAX - 1, u32::MAX];
        for divisor in divisors {
            let modulus = Modulus::new(divisor).unwrap();
            for x in values {
                assert_eq!(modulus.reduce(x), x % divisor, "{x} % {divisor}");
            }
        }
        assert_eq!(Modulus::new(0), None);
    }

    proptest! {
        #[test]
        fn any_value_reduces_as_the_remainder(x in any::<u32>(), divisor in 1..=u32::MAX) {
            prop_assert_eq!(Modulus::new(divisor).unwrap().reduce(x), x % divisor);
        }
    }
}
