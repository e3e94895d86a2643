//! Arguments as Redis reads them: integers, floats and keywords, over the arguments' bytes.

pub fn float(bytes: &[u8]) -> Option<f64> {
    let value: f64 = std::str::from_utf8(bytes).ok()?.parse().ok()?;
    (!value.is_nan()).then_some(value)
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
