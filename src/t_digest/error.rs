//! The TDIGEST.* error texts, RedisBloom's, exactly as `docs/tdigest-commands.md` lists them;
//! and this module's own for windowed digests, which RedisBloom does not have.

use crate::shared::error::CommandError;
use std::ffi::CStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TDigestError {
    KeyExists,
    KeyMissing,
    WrongKeyword,
    BadCompression,
    CompressionNotPositive,
    AllocationFailed,
    MergeAllocationFailed,
    BadValue,
    ValueNotFinite,
    Overflow,
    BadNumkeys,
    NumkeysNotPositive,
    BadQuantile,
    QuantileOutOfRange,
    BadCdf,
    BadRankValue,
    BadRank,
    NegativeRank,
    BadLowCut,
    BadHighCut,
    CutsOutOfRange,
    CutsOutOfOrder,
    PlainIntoWindowed,
    WindowedSource,
    ScheduleDiffers,
    SourceAhead,
}

impl TDigestError {
    pub fn message(self) -> &'static CStr {
        match self {
            TDigestError::KeyExists => c"ERR T-Digest: key already exists",
            TDigestError::KeyMissing => c"ERR T-Digest: key does not exist",
            TDigestError::WrongKeyword => c"ERR T-Digest: wrong keyword",
            TDigestError::BadCompression => c"ERR T-Digest: error parsing compression parameter",
            TDigestError::CompressionNotPositive => {
                c"ERR T-Digest: compression parameter needs to be a positive integer"
            }
            TDigestError::AllocationFailed => c"ERR T-Digest: allocation failed",
            TDigestError::MergeAllocationFailed => c"ERR T-Digest: allocation of destination digest failed",
            TDigestError::BadValue => c"ERR T-Digest: error parsing val parameter",
            TDigestError::ValueNotFinite => c"ERR T-Digest: val parameter needs to be a finite number",
            TDigestError::Overflow => c"ERR T-Digest: overflow detected",
            TDigestError::BadNumkeys => c"ERR T-Digest: error parsing numkeys",
            TDigestError::NumkeysNotPositive => c"ERR T-Digest: numkeys needs to be a positive integer",
            TDigestError::BadQuantile => c"ERR T-Digest: error parsing quantile",
            TDigestError::QuantileOutOfRange => c"ERR T-Digest: quantile should be in [0,1]",
            TDigestError::BadCdf => c"ERR T-Digest: error parsing cdf",
            TDigestError::BadRankValue => c"ERR T-Digest: error parsing value",
            TDigestError::BadRank => c"ERR T-Digest: error parsing rank",
            TDigestError::NegativeRank => c"ERR T-Digest: rank needs to be non negative",
            TDigestError::BadLowCut => c"ERR T-Digest: error parsing low_cut_percentile",
            TDigestError::BadHighCut => c"ERR T-Digest: error parsing high_cut_percentile",
            TDigestError::CutsOutOfRange => {
                c"ERR T-Digest: low_cut_percentile and high_cut_percentile should be in [0,1]"
            }
            TDigestError::CutsOutOfOrder => {
                c"ERR T-Digest: low_cut_percentile should be lower than high_cut_percentile"
            }
            TDigestError::PlainIntoWindowed => {
                c"ERR T-Digest: a windowed t-digest merges only windowed t-digests (a plain digest's values have no time)"
            }
            TDigestError::WindowedSource => {
                c"ERR T-Digest: a windowed t-digest cannot be a merge source (a plain digest does not forget)"
            }
            TDigestError::ScheduleDiffers => c"ERR T-Digest: window/generations is not equal",
            TDigestError::SourceAhead => c"ERR T-Digest: a source's window is ahead of the destination's clock",
        }
    }
}

impl From<TDigestError> for CommandError {
    fn from(error: TDigestError) -> CommandError {
        CommandError::Own(error.message())
    }
}
