//! The CF.* family's error texts, exactly as `docs/cf-commands.md` and RedisBloom word them,
//! most without an error code (the first word becomes it); the texts the BF.* family answers
//! too are `shared::error`'s.

use crate::shared::error::CommandError;
use redbloom_core::cuckoo::CuckooError;
use std::ffi::CStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CfError {
    CapacityTooSmall,
    BadMaxIterations,
    BadBucketSize,
    BadExpansion,
    MaxIterationsOutOfRange,
    BucketSizeOutOfRange,
    ExpansionOutOfRange,
    Full,
    MaxExpansions,
    NotFound,
    CompactNotFound,
    InvalidPosition,
    InvalidHeader,
    CannotCreate,
    CannotLoadChunk,
    /// CF.RESERVE's ERROR (redbloom's): not a number in (0, 1).
    BadErrorRate,
    /// ERROR below what 32-bit fingerprints give.
    ErrorRateTooSmall,
    /// WINDOW or GENERATIONS (redbloom's, for the other types) among the options.
    NoWindow,
}

impl CfError {
    pub fn message(self) -> &'static CStr {
        match self {
            CfError::CapacityTooSmall => c"Capacity must be at least (BucketSize * 2)",
            CfError::BadMaxIterations => c"Couldn't parse MAXITERATIONS",
            CfError::BadBucketSize => c"Couldn't parse BUCKETSIZE",
            CfError::BadExpansion => c"Couldn't parse EXPANSION",
            CfError::MaxIterationsOutOfRange => {
                c"MAXITERATIONS: value must be an integer between 1 and 65535, inclusive."
            }
            CfError::BucketSizeOutOfRange => {
                c"BUCKETSIZE: value must be an integer between 1 and 255, inclusive."
            }
            CfError::ExpansionOutOfRange => {
                c"EXPANSION: value must be an integer between 0 and 32768, inclusive."
            }
            CfError::Full => c"Filter is full",
            CfError::MaxExpansions => c"Maximum expansions reached",
            CfError::NotFound => c"Not found",
            CfError::CompactNotFound => c"Cuckoo filter was not found",
            CfError::InvalidPosition => c"Invalid position",
            CfError::InvalidHeader => c"Invalid header",
            CfError::CannotCreate => c"Couldn't create filter!",
            CfError::CannotLoadChunk => c"Couldn't load chunk!",
            CfError::BadErrorRate => c"ERROR: value must be a number between 0 and 1, exclusive.",
            CfError::ErrorRateTooSmall => {
                c"ERROR: below 2 * bucket size / 4294967295, the best 32-bit fingerprints reach."
            }
            CfError::NoWindow => c"WINDOW: cuckoo filters do not forget; a windowed Bloom filter does (BF.RESERVE ... WINDOW ms)",
        }
    }
}

impl From<CfError> for CommandError {
    fn from(error: CfError) -> CommandError {
        CommandError::Own(error.message())
    }
}

impl From<CuckooError> for CommandError {
    fn from(_: CuckooError) -> CommandError {
        CommandError::InsufficientMemory
    }
}

#[cfg(test)]
mod tests {
    use super::CfError;
    use redbloom_core::cuckoo::{MAX_BUCKET_SIZE, MAX_EXPANSION};

    /// The contract spells some bounds out in its texts: they must be the bounds the parsers
    /// check, which the core states.
    #[test]
    fn the_bounds_in_the_texts_are_the_bounds_checked() {
        let text = |error: CfError| error.message().to_string_lossy().into_owned();
        let between = |min: u64, max: u64| format!("between {min} and {max}, inclusive.");
        assert!(text(CfError::BucketSizeOutOfRange).ends_with(&between(1, u64::from(MAX_BUCKET_SIZE))));
        assert!(text(CfError::ExpansionOutOfRange).ends_with(&between(0, u64::from(MAX_EXPANSION))));
        assert!(text(CfError::MaxIterationsOutOfRange).ends_with(&between(1, u64::from(u16::MAX))));
        assert!(text(CfError::ErrorRateTooSmall).contains(&format!("/ {},", u32::MAX)));
    }
}
