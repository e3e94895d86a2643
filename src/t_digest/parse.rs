//! The numbers TDIGEST.* takes, read as RedisBloom reads them: values and fractions as C's
//! `strtod` reads a double (a value beyond the doubles is not a number; `inf` is one, which the
//! commands then judge), counts and ranks as Redis reads an integer.

use super::error::TDigestError;
use crate::shared::error::CommandError;
use crate::shared::parse;

/// A double, or `None` for text that is not one (NaN included, and a number too large for a
/// double, which `strtod` reports as out of range).
pub fn double(bytes: &[u8]) -> Option<f64> {
    let value = parse::float(bytes)?;
    if value.is_infinite() {
        let digits = bytes.strip_prefix(b"-").or_else(|| bytes.strip_prefix(b"+")).unwrap_or(bytes);
        let spelled = digits.eq_ignore_ascii_case(b"inf") || digits.eq_ignore_ascii_case(b"infinity");
        return spelled.then_some(value);
    }
    Some(value)
}

/// A compression: a positive integer.
pub fn compression(bytes: &[u8]) -> Result<u64, CommandError> {
    let value = parse::integer(bytes).ok_or(TDigestError::BadCompression)?;
    u64::try_from(value).ok().filter(|&value| value > 0).ok_or(TDigestError::CompressionNotPositive.into())
}
