//! Arguments as Redis reads them: integers, floats and keywords, over the arguments' bytes.

use std::sync::OnceLock;

/// The server's reading of a double ([`float`]): set when the module loads
/// (`shared::server_double`); unset without a server (the unit tests, and the fuzz targets,
/// which compile these parsers alone), where Rust's reading stands for it.
static SERVER_READS: OnceLock<DoubleReader> = OnceLock::new();

/// Reads a double from an argument's bytes; `None` for text that is not one.
pub type DoubleReader = fn(&[u8]) -> Option<f64>;

/// Doubles that are not plain decimal text go to `reader` from now on.
pub fn read_doubles_with(reader: DoubleReader) {
    let _ = SERVER_READS.set(reader);
}

/// A double as the server reads one (`RedisModule_StringToDouble`, which RedisBloom calls):
/// no NaN, no leading space, and what else depends on the server. Redis 7 and 8 read C's
/// `strtod` forms, hexadecimal ones (`0x1p3`) included, and refuse a value out of range
/// (`1e400`, or `1e-400`, which would read as 0); Valkey 9 reads no hexadecimal (nor 8.1 built
/// with `fast_float`). Plain decimal text that reads as a finite number other than 0 reads
/// alike everywhere and is read here, fast (a TDIGEST.ADD reads hundreds); the rest is the
/// server's to answer.
pub fn float(bytes: &[u8]) -> Option<f64> {
    let read: Option<f64> = std::str::from_utf8(bytes).ok().and_then(|text| text.parse().ok());
    match (read, SERVER_READS.get()) {
        (Some(value), _) if value.is_finite() && (value != 0.0 || only_zero_digits(bytes)) => Some(value),
        (_, Some(server)) => server(bytes),
        (read, None) => read.filter(|value| !value.is_nan()),
    }
}

/// Whether the digits before any exponent are all 0: text that reads as 0 without
/// underflowing.
fn only_zero_digits(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .take_while(|&&byte| !byte.eq_ignore_ascii_case(&b'e'))
        .all(|byte| !matches!(byte, b'1'..=b'9'))
}

/// An integer as Redis reads one: an optional minus, no plus, no leading zeros, no "-0".
/// Read digit by digit (no UTF-8 check, no generic parser: a CMS.INCRBY of 100 pairs reads
/// 100 of these), accumulated below zero, where `i64::MIN` fits.
pub fn integer(bytes: &[u8]) -> Option<i64> {
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    match digits {
        [b'0'] if !negative => return Some(0),
        [b'1'..=b'9', ..] => {}
        _ => return None,
    }
    let mut below = 0i64;
    for &digit in digits {
        if !digit.is_ascii_digit() {
            return None;
        }
        below = below.checked_mul(10)?.checked_sub(i64::from(digit - b'0'))?;
    }
    if negative {
        Some(below)
    } else {
        below.checked_neg()
    }
}

pub fn is_keyword(bytes: &[u8], keyword: &str) -> bool {
    bytes.eq_ignore_ascii_case(keyword.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_read_as_redis_reads_them() {
        assert_eq!(integer(b"42"), Some(42));
        assert_eq!(integer(b"-7"), Some(-7));
        assert_eq!(integer(b"0"), Some(0));
        assert_eq!(integer(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(integer(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            "",
            "-",
            "+1",
            "007",
            "-0",
            "-01",
            "1.5",
            " 1",
            "1 ",
            "1e3",
            "9223372036854775808",
            "-9223372036854775809",
            "99999999999999999999",
            "12\u{0}",
        ] {
            assert_eq!(integer(bad.as_bytes()), None, "{bad:?}");
        }
    }

    /// Against the standard parser, over strings of the bytes that matter: whatever Rust
    /// reads as an i64 and is written canonically, and nothing else.
    #[test]
    fn integers_agree_with_the_standard_parser_on_canonical_text() {
        let alphabet = b"-+0123456789 .";
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 22) as usize;
            let text: Vec<u8> = (0..len)
                .map(|at| alphabet[((state >> (at * 3 % 60)) as usize + at) % alphabet.len()])
                .collect();
            let expected = std::str::from_utf8(&text)
                .ok()
                .and_then(|text| text.parse::<i64>().ok())
                .filter(|value| value.to_string().as_bytes() == text.as_slice());
            assert_eq!(integer(&text), expected, "{:?}", String::from_utf8_lossy(&text));
        }
        for value in [i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX] {
            assert_eq!(integer(value.to_string().as_bytes()), Some(value));
        }
    }
}
