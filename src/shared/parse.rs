//! Arguments as Redis reads them: integers, floats and keywords, over the arguments' bytes.

pub fn float(bytes: &[u8]) -> Option<f64> {
    let value: f64 = std::str::from_utf8(bytes).ok()?.parse().ok()?;
    (!value.is_nan()).then_some(value)
}

/// An integer as Redis reads one: an optional minus, no plus, no leading zeros, no "-0".
pub fn integer(bytes: &[u8]) -> Option<i64> {
    let digits = bytes.strip_prefix(b"-").unwrap_or(bytes);
    let canonical = match digits {
        [b'0'] => bytes.len() == 1,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !canonical {
        return None;
    }
    std::str::from_utf8(bytes).ok()?.parse().ok()
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
        for bad in ["", "-", "+1", "007", "-0", "1.5", " 1", "1e3", "99999999999999999999"] {
            assert_eq!(integer(bad.as_bytes()), None, "{bad:?}");
        }
    }
}
