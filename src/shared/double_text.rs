//! A double spelled as C's `printf("%.17g")` spells it with glibc: how Redis before 7.2 sends
//! a double to a RESP2 client. glibc works in multi-precision arithmetic, about 4,000
//! instructions a double, three quarters of a ten-quantile TDIGEST.QUANTILE; the same bytes
//! take about 250 here, on the stack.
//!
//! The digits are exact: the value's 17 significant digits, rounded half to even as glibc
//! rounds them. Values from about 1e-6 to 1e17, what replies mostly hold, are scaled in
//! 128-bit integers; the rest are left to Rust's own exact formatting (`{:.16e}`), about
//! 1,500 instructions.

use std::fmt::Write;

/// The significant digits of `%.17g`.
const DIGITS: usize = 17;

/// The longest spelling, `-1.2345678901234567e-308`, is 24 bytes; the digits are copied in
/// whole blocks of 17 wherever they go, which may reach past the spelling's end.
const CAPACITY: usize = 40;

/// `%.17g`'s text of one double, held on the stack.
pub struct DoubleText {
    bytes: [u8; CAPACITY],
    len: usize,
}

impl DoubleText {
    /// The bytes glibc's `snprintf(buf, n, "%.17g", value)` writes. `None` only if Rust's
    /// formatting of a double ever took another shape than `d.dddde[-]x`.
    pub fn printf_g17(value: f64) -> Option<DoubleText> {
        let mut text = DoubleText { bytes: [0; CAPACITY], len: 0 };
        if value.is_sign_negative() {
            text.append(b"-");
        }
        if value.is_nan() {
            text.append(b"nan");
        } else if value.is_infinite() {
            text.append(b"inf");
        } else if value == 0.0 {
            text.append(b"0");
        } else {
            let decimal = Decimal::scaled(value.abs()).or_else(|| Decimal::formatted(value.abs()))?;
            text.spell(&decimal);
        }
        Some(text)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// `%g`'s choice: plain notation for decimal exponents from -4 to 16, scientific outside;
    /// trailing zeros of the fraction dropped in both, and the point with them.
    fn spell(&mut self, decimal: &Decimal) {
        let digits = &decimal.digits;
        let significant = DIGITS - digits[..DIGITS].iter().rev().take_while(|&&digit| digit == b'0').count();
        let start = self.len;
        match decimal.exponent {
            exponent @ 0..=16 => {
                let whole = exponent as usize + 1;
                self.place(start, &digits[..DIGITS]);
                if significant > whole {
                    self.place(start + whole, b".");
                    self.place(start + whole + 1, &digits[whole..whole + DIGITS]);
                    self.len = start + significant + 1;
                } else {
                    self.len = start + whole;
                }
            }
            exponent @ -4..=-1 => {
                let first_digit = start + 1 + exponent.unsigned_abs() as usize;
                self.place(start, b"0.0000");
                self.place(first_digit, &digits[..DIGITS]);
                self.len = first_digit + significant;
            }
            exponent => {
                self.place(start, &digits[..1]);
                self.place(start + 1, b".");
                self.place(start + 2, &digits[1..DIGITS]);
                self.len = start + if significant > 1 { significant + 1 } else { 1 };
                self.append(if exponent < 0 { b"e-" } else { b"e+" });
                let magnitude = exponent.unsigned_abs() as usize;
                if magnitude >= 100 {
                    self.append(&DIGIT_PAIRS[magnitude / 100][1..]);
                }
                self.append(&DIGIT_PAIRS[magnitude % 100]);
            }
        }
    }

    /// Copies `bytes` to offset `at`, leaving the length as it is. Every offset spelling
    /// takes fits in CAPACITY; one that did not would be dropped, never a panic.
    fn place(&mut self, at: usize, bytes: &[u8]) {
        if let Some(slot) = self.bytes.get_mut(at..at + bytes.len()) {
            slot.copy_from_slice(bytes);
        }
    }

    fn append(&mut self, bytes: &[u8]) {
        self.place(self.len, bytes);
        self.len = (self.len + bytes.len()).min(CAPACITY);
    }
}

/// "00" to "99", for writing digits two at a time.
const DIGIT_PAIRS: [[u8; 2]; 100] = {
    let mut pairs = [[0; 2]; 100];
    let mut pair = 0;
    while pair < 100 {
        pairs[pair] = [b'0' + (pair / 10) as u8, b'0' + (pair % 10) as u8];
        pair += 1;
    }
    pairs
};

/// 10^0 to 10^22, the scales [`Decimal::scaled`] multiplies by: a 53-bit significand times
/// 10^22 (under 2^74) stays below 2^128.
const POWERS_OF_TEN: [u128; 23] = {
    let mut powers = [1; 23];
    let mut power = 1;
    while power < 23 {
        powers[power] = powers[power - 1] * 10;
        power += 1;
    }
    powers
};

/// 10^16 and 10^17: the bounds of 17 digits.
const SMALLEST_17_DIGITS: u64 = 10_000_000_000_000_000;
const TOO_MANY_DIGITS: u64 = 100_000_000_000_000_000;

/// A positive finite double rounded to 17 significant digits: `d.dddd × 10^exponent`.
struct Decimal {
    /// The 17 digits in ASCII, then zeros, so that a block of 17 can be copied from any of
    /// them.
    digits: [u8; 2 * DIGITS],
    exponent: i32,
}

impl Decimal {
    /// Exactly, in integers: `value × 10^(16 - exponent)`, a 53-bit significand times a power
    /// of ten, shifted by the binary exponent, with the remainder to round by. `None` for a
    /// subnormal value or one whose decimal exponent is below -6 or above 16, where that
    /// product or shift does not fit in 128 bits.
    fn scaled(value: f64) -> Option<Decimal> {
        let bits = value.to_bits();
        let biased = (bits >> 52) as i32;
        if biased == 0 {
            return None;
        }
        let significand = u128::from(bits & ((1 << 52) - 1) | 1 << 52);
        let binary_exponent = biased - 1075;
        // value is in [2^floor_log2, 2^(floor_log2 + 1)), so its decimal exponent is this
        // guess or the next; 78913 / 2^18 is log10(2) closely enough for every double.
        let floor_log2 = biased - 1023;
        let guess = (floor_log2 * 78913) >> 18;
        if !(DIGITS as i32 - POWERS_OF_TEN.len() as i32..DIGITS as i32).contains(&guess) {
            return None;
        }
        let scaled_at = |exponent: i32| -> (u128, u128, u128) {
            let product = significand * POWERS_OF_TEN[(DIGITS as i32 - 1 - exponent) as usize];
            if binary_exponent >= 0 {
                // Only from 2^52 to 2^57: a product under 2^57, shifted by at most 4.
                (product << binary_exponent, 0, 1)
            } else {
                let shift = binary_exponent.unsigned_abs();
                (product >> shift, product & ((1 << shift) - 1), 1 << (shift - 1))
            }
        };
        let (mut exponent, (mut quotient, mut remainder, mut half)) = (guess, scaled_at(guess));
        if quotient >= u128::from(TOO_MANY_DIGITS) {
            if guess == DIGITS as i32 - 1 {
                return None;
            }
            exponent = guess + 1;
            (quotient, remainder, half) = scaled_at(exponent);
        }
        let mut rounded = quotient as u64;
        if remainder > half || (remainder == half && rounded % 2 == 1) {
            rounded += 1;
        }
        if rounded == TOO_MANY_DIGITS {
            rounded = SMALLEST_17_DIGITS;
            exponent += 1;
        }
        let mut digits = [b'0'; 2 * DIGITS];
        let below_first = rounded % SMALLEST_17_DIGITS;
        digits[0] = b'0' + (rounded / SMALLEST_17_DIGITS) as u8;
        digits[1..9].copy_from_slice(&eight_digits((below_first / 100_000_000) as u32));
        digits[9..DIGITS].copy_from_slice(&eight_digits((below_first % 100_000_000) as u32));
        Some(Decimal { digits, exponent })
    }

    /// Rust's exact formatting, `d.dddddddddddddddde[-]x`, read back.
    fn formatted(value: f64) -> Option<Decimal> {
        let mut text = StackText { bytes: [0; 32], len: 0 };
        write!(text, "{value:.16e}").ok()?;
        let text = &text.bytes[..text.len];
        let (mantissa, exponent) = text.split_at(text.iter().position(|&byte| byte == b'e')?);
        let [first, b'.', fraction @ ..] = mantissa else {
            return None;
        };
        let mut digits = [b'0'; 2 * DIGITS];
        digits[0] = *first;
        digits[1..DIGITS].copy_from_slice(fraction.get(..DIGITS - 1)?);
        let exponent = std::str::from_utf8(exponent.get(1..)?).ok()?.parse().ok()?;
        Some(Decimal { digits, exponent })
    }
}

/// A number below 10^8 as eight ASCII digits, leading zeros included.
fn eight_digits(value: u32) -> [u8; 8] {
    let (high, low) = ((value / 10_000) as usize, (value % 10_000) as usize);
    let mut digits = [0; 8];
    for (slot, pair) in digits.chunks_exact_mut(2).zip([high / 100, high % 100, low / 100, low % 100]) {
        slot.copy_from_slice(&DIGIT_PAIRS[pair]);
    }
    digits
}

/// What `write!` fills: a fixed buffer, refusing what does not fit.
struct StackText {
    bytes: [u8; 32],
    len: usize,
}

impl Write for StackText {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        let end = self.len + text.len();
        self.bytes.get_mut(self.len..end).ok_or(std::fmt::Error)?.copy_from_slice(text.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glibc(value: f64) -> Vec<u8> {
        let mut buffer = [0u8; 64];
        // SAFETY: the buffer's length is passed, and the format takes one double.
        let len =
            unsafe { libc::snprintf(buffer.as_mut_ptr().cast(), buffer.len(), c"%.17g".as_ptr(), value) };
        buffer[..len as usize].to_vec()
    }

    fn ours(value: f64) -> Vec<u8> {
        DoubleText::printf_g17(value).map(|text| text.as_bytes().to_vec()).unwrap_or_default()
    }

    fn assert_as_glibc(value: f64) {
        let (ours, glibc) = (ours(value), glibc(value));
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&glibc),
            "{value:e} (bits {:#018x})",
            value.to_bits()
        );
    }

    /// The value and its neighbours, a few steps down and up, of both signs.
    fn assert_around(value: f64) {
        let mut down = value;
        let mut up = value;
        for _ in 0..4 {
            for value in [down, up] {
                assert_as_glibc(value);
                assert_as_glibc(-value);
            }
            down = down.next_down();
            up = up.next_up();
        }
    }

    #[test]
    fn edges_are_spelled_as_glibc_spells_them() {
        let edges = [
            0.0,
            f64::from_bits(1),
            f64::from_bits(0x000f_ffff_ffff_ffff),
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::EPSILON,
            1e-7,
            1e-6,
            1e-5,
            1e-4,
            1e-3,
            0.1,
            0.5,
            1.0 / 3.0,
            2.0 / 3.0,
            1.0,
            2.0,
            10.0,
            123_456.789,
            9_007_199_254_740_992.0,
            1e15,
            1e16,
            1e17,
            1e18,
            1e22,
            1e23,
            1e100,
            1e-100,
            1e-300,
            1e308,
        ];
        for value in edges {
            assert_around(value);
        }
        for integer in [1u64, 7, 10, 99, 100, 1000, 65_535, 1 << 32, 999_999_999_999_999, (1 << 53) - 1] {
            assert_around(integer as f64);
        }
        // 17 nines and the values just below 10^k round up to a new power of ten; where
        // that crosses 1e-4 or 1e17 the notation changes with it.
        for exponent in -320..=308 {
            let power: f64 = format!("1e{exponent}").parse().unwrap_or(0.0);
            let nines: f64 = format!("9.99999999999999999e{exponent}").parse().unwrap_or(0.0);
            assert_around(power);
            assert_around(nines);
        }
    }

    #[test]
    fn infinities_and_nans_of_both_signs() {
        for value in
            [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN, f64::from_bits(0x7ff0_0000_0000_0001)]
        {
            assert_as_glibc(value);
            assert_as_glibc(-value);
        }
        assert_eq!(ours(-f64::NAN), b"-nan");
        assert_eq!(ours(-0.0), b"-0");
    }

    /// An odd significand over 2^k has k decimals, the last a 5: where it has 18 significant
    /// digits the 17th is a tie, which glibc rounds to even. Only such values tie (from 1e-8
    /// to 1e17): an integer above 2^53 is even.
    #[test]
    fn ties_round_to_even() {
        let mut ties = 0;
        for power in 1..=25 {
            let five_to_the = 5u64.pow(power);
            let first = (SMALLEST_17_DIGITS * 10).div_ceil(five_to_the) | 1;
            let last = ((TOO_MANY_DIGITS * 10 - 1) / five_to_the).min((1 << 53) - 1);
            let step = (last.saturating_sub(first) / 64).max(2) & !1;
            for significand in (first..=last).step_by(step as usize).chain([last | 1, (last - 1) | 1]) {
                if !(first..=last).contains(&significand) {
                    continue;
                }
                let value = significand as f64 / (1u64 << power) as f64;
                let exact = format!("{value:.40e}");
                let digits = exact.split('e').next().unwrap_or("").replace('.', "");
                assert_eq!(digits.trim_end_matches('0').len(), 18, "{exact}");
                ties += 1;
                assert_around(value);
            }
        }
        assert!(ties > 1000, "{ties} ties");
    }

    /// Successive xorshift64 states: random bit patterns.
    fn random_bits(seed: u64) -> impl Iterator<Item = u64> {
        std::iter::successors(Some(seed), |&state| {
            let state = state ^ state << 13;
            let state = state ^ state >> 7;
            Some(state ^ state << 17)
        })
    }

    /// Doubles of either sign from about 1e-9 to 1e19: the integer path's range and its edges,
    /// where replies mostly are.
    fn near_one(bits: u64) -> f64 {
        let exponent = 1023 - 30 + bits % 95;
        f64::from_bits(bits & 1 << 63 | exponent << 52 | (bits >> 12))
    }

    #[test]
    fn the_integer_path_agrees_with_rusts_formatting() {
        let mut taken = 0;
        for value in random_bits(0x9e37_79b9_7f4a_7c15).take(200_000).map(near_one) {
            if let Some(scaled) = Decimal::scaled(value.abs()) {
                taken += 1;
                let formatted =
                    Decimal::formatted(value.abs()).map(|decimal| (decimal.digits, decimal.exponent));
                assert_eq!(Some((scaled.digits, scaled.exponent)), formatted, "{value:e}");
            }
        }
        assert!(taken > 100_000, "{taken} values took the integer path");
    }

    #[test]
    fn random_doubles_are_spelled_as_glibc_spells_them() {
        for bits in random_bits(0x2545_f491_4f6c_dd1d).take(300_000) {
            assert_as_glibc(f64::from_bits(bits));
        }
        for bits in random_bits(0x1234_5678_9abc_def1).take(200_000) {
            assert_as_glibc(near_one(bits));
        }
    }
}
