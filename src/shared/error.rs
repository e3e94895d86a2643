//! Every error a command answers, with its exact text from the contracts (`bf-commands.md`,
//! `docs/cf-commands.md`).
//!
//! Clients compare these strings byte for byte. A message without a leading error code
//! (`Bad capacity`, `Nonscaling filters cannot expand`, ...) is sent as it is: its first
//! word becomes the error code, exactly as RedisBloom sends it.

use redbloom_core::bloom::encoding::ChunkError;
use redbloom_core::bloom::FilterError;
use redbloom_core::cuckoo::CuckooError;
use redbloom_core::decode::DecodeError;
use redbloom_core::top_k::Parameter;
use std::ffi::CStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandError {
    /// Answered with Redis's own arity error, naming the command.
    WrongArity,
    WrongType,
    NotFound,
    ItemExists,
    BadErrorRate,
    ErrorRateOutOfRange,
    BadCapacity,
    CapacityOutOfRange,
    NoExpansion,
    BadExpansion,
    ExpansionOutOfRange,
    NonScalingCannotExpand,
    InsufficientMemory,
    NonScalingFull,
    InsertBadErrorRate,
    InsertBadCapacity,
    InsertBadExpansion,
    UnknownArgument,
    /// FORMAT without one of its two words (an extension: RedisBloom has no FORMAT).
    BadFormat,
    InvalidInfoField,
    ScanDumpIteratorNotNumeric,
    LoadChunkIteratorNotNumeric,
    BadData,
    NoLink,
    ChunkTooBig,
    /// CF.*: RedisBloom's texts, most of them without an error code.
    CfCapacityTooSmall,
    CfBadMaxIterations,
    CfBadBucketSize,
    CfBadExpansion,
    CfMaxIterationsOutOfRange,
    CfBucketSizeOutOfRange,
    CfExpansionOutOfRange,
    CfFull,
    CfMaxExpansions,
    CfNotFound,
    CfCompactNotFound,
    CfInvalidPosition,
    CfInvalidHeader,
    CfCannotCreate,
    CfCannotLoadChunk,
    /// CF.RESERVE's ERROR (redbloom's): not a number in (0, 1).
    CfBadErrorRate,
    /// ERROR below what 32-bit fingerprints give.
    CfErrorRateTooSmall,
    /// WINDOW out of range (a windowed filter, this module's own).
    WindowOutOfRange,
    GenerationsOutOfRange,
    GenerationsWithoutWindow,
    /// BF.ROTATE from a client rather than from a master or the AOF.
    RotateNotReplayed,
    /// CMS.*: RedisBloom's texts (`docs/cms-commands.md`).
    CmsKeyExists,
    CmsKeyMissing,
    CmsInvalidWidth,
    CmsInvalidDepth,
    CmsInvalidOverestimation,
    CmsInvalidProbability,
    CmsInvalidDimensions,
    CmsInsufficientMemory,
    CmsBadNumber,
    CmsNegativeNumber,
    CmsIncrementOverflow,
    CmsInvalidNumkeys,
    CmsNumkeysNotPositive,
    CmsWrongNumberOfKeys,
    CmsWrongNumberOfKeysAndWeights,
    CmsInvalidWeight,
    CmsDimensionsDiffer,
    CmsMergeOverflow,
    /// TOPK.*: RedisBloom's texts (`docs/topk-commands.md`).
    TopKKeyExists,
    TopKKeyMissing,
    TopKInvalid(Parameter),
    TopKInsufficientMemory,
    TopKBadIncrement,
    TopKWithCountExpected,
    /// TDIGEST.*: RedisBloom's texts (`docs/tdigest-commands.md`).
    TDigestKeyExists,
    TDigestKeyMissing,
    TDigestWrongKeyword,
    TDigestBadCompression,
    TDigestCompressionNotPositive,
    TDigestAllocationFailed,
    TDigestMergeAllocationFailed,
    TDigestBadValue,
    TDigestValueNotFinite,
    TDigestOverflow,
    TDigestBadNumkeys,
    TDigestNumkeysNotPositive,
    TDigestBadQuantile,
    TDigestQuantileOutOfRange,
    TDigestBadCdf,
    TDigestBadRankValue,
    TDigestBadRank,
    TDigestNegativeRank,
    TDigestBadLowCut,
    TDigestBadHighCut,
    TDigestCutsOutOfRange,
    TDigestCutsOutOfOrder,
    /// A bug caught by the panic guard; the server lives on.
    Internal,
}

impl CommandError {
    #[allow(clippy::too_many_lines)] // one line per error: the table is the point
    pub fn message(self) -> &'static CStr {
        match self {
            CommandError::WrongArity => c"ERR wrong number of arguments",
            CommandError::WrongType => c"WRONGTYPE Operation against a key holding the wrong kind of value",
            CommandError::NotFound => c"ERR not found",
            CommandError::ItemExists => c"ERR item exists",
            CommandError::BadErrorRate => c"ERR bad error rate",
            CommandError::ErrorRateOutOfRange => c"ERR error rate must be in the range (0.000000, 1.000000)",
            CommandError::BadCapacity => c"ERR bad capacity",
            CommandError::CapacityOutOfRange => c"ERR capacity must be in the range [1, 1073741824]",
            CommandError::NoExpansion => c"ERR no expansion",
            CommandError::BadExpansion => c"ERR bad expansion",
            CommandError::ExpansionOutOfRange => c"ERR expansion must be in the range [0, 32768]",
            CommandError::NonScalingCannotExpand => c"Nonscaling filters cannot expand",
            CommandError::InsufficientMemory => c"ERR Insufficient memory to create filter",
            CommandError::NonScalingFull => c"ERR non scaling filter is full",
            CommandError::InsertBadErrorRate => c"Bad error rate",
            CommandError::InsertBadCapacity => c"Bad capacity",
            CommandError::InsertBadExpansion => c"Bad expansion",
            CommandError::UnknownArgument => c"Unknown argument received",
            CommandError::BadFormat => c"ERR format must be REDBLOOM or REDISBLOOM",
            CommandError::InvalidInfoField => c"Invalid information value",
            CommandError::ScanDumpIteratorNotNumeric => c"Second argument must be numeric",
            CommandError::LoadChunkIteratorNotNumeric => c"ERR Second argument must be numeric",
            CommandError::BadData => c"ERR received bad data",
            CommandError::NoLink => c"ERR invalid offset - no link found",
            CommandError::ChunkTooBig => c"ERR invalid chunk - Too big for current filter",
            CommandError::CfCapacityTooSmall => c"Capacity must be at least (BucketSize * 2)",
            CommandError::CfBadMaxIterations => c"Couldn't parse MAXITERATIONS",
            CommandError::CfBadBucketSize => c"Couldn't parse BUCKETSIZE",
            CommandError::CfBadExpansion => c"Couldn't parse EXPANSION",
            CommandError::CfMaxIterationsOutOfRange => {
                c"MAXITERATIONS: value must be an integer between 1 and 65535, inclusive."
            }
            CommandError::CfBucketSizeOutOfRange => {
                c"BUCKETSIZE: value must be an integer between 1 and 255, inclusive."
            }
            CommandError::CfExpansionOutOfRange => {
                c"EXPANSION: value must be an integer between 0 and 32768, inclusive."
            }
            CommandError::CfFull => c"Filter is full",
            CommandError::CfMaxExpansions => c"Maximum expansions reached",
            CommandError::CfNotFound => c"Not found",
            CommandError::CfCompactNotFound => c"Cuckoo filter was not found",
            CommandError::CfInvalidPosition => c"Invalid position",
            CommandError::CfInvalidHeader => c"Invalid header",
            CommandError::CfCannotCreate => c"Couldn't create filter!",
            CommandError::CfCannotLoadChunk => c"Couldn't load chunk!",
            CommandError::CfBadErrorRate => c"ERROR: value must be a number between 0 and 1, exclusive.",
            CommandError::CfErrorRateTooSmall => {
                c"ERROR: below 2 * bucket size / 4294967295, the best 32-bit fingerprints reach."
            }
            CommandError::WindowOutOfRange => c"ERR window must be an integer of milliseconds in [1, 1099511627776]",
            CommandError::GenerationsOutOfRange => {
                c"ERR generations must be an integer in [1, 64], at most the window in milliseconds"
            }
            CommandError::GenerationsWithoutWindow => c"ERR GENERATIONS needs WINDOW",
            CommandError::RotateNotReplayed => c"ERR BF.ROTATE is sent by a master to its replicas and the AOF",
            CommandError::CmsKeyExists => c"CMS: key already exists",
            CommandError::CmsKeyMissing => c"CMS: key does not exist",
            CommandError::CmsInvalidWidth => c"CMS: invalid width",
            CommandError::CmsInvalidDepth => c"CMS: invalid depth",
            CommandError::CmsInvalidOverestimation => c"CMS: invalid overestimation value",
            CommandError::CmsInvalidProbability => c"CMS: invalid prob value",
            CommandError::CmsInvalidDimensions => c"CMS: invalid init arguments",
            CommandError::CmsInsufficientMemory => c"CMS: Insufficient memory to create the key",
            CommandError::CmsBadNumber => c"CMS: Cannot parse number",
            CommandError::CmsNegativeNumber => c"CMS: Number cannot be negative",
            CommandError::CmsIncrementOverflow => c"CMS: INCRBY overflow",
            CommandError::CmsInvalidNumkeys => c"CMS: invalid numkeys",
            CommandError::CmsNumkeysNotPositive => c"CMS: Number of keys must be positive",
            CommandError::CmsWrongNumberOfKeys => c"CMS: wrong number of keys",
            CommandError::CmsWrongNumberOfKeysAndWeights => c"CMS: wrong number of keys/weights",
            CommandError::CmsInvalidWeight => c"CMS: invalid weight value",
            CommandError::CmsDimensionsDiffer => c"CMS: width/depth is not equal",
            CommandError::CmsMergeOverflow => c"CMS: MERGE overflow",
            CommandError::TopKKeyExists => c"TopK: key already exists",
            CommandError::TopKKeyMissing => c"TopK: key does not exist",
            CommandError::TopKInvalid(Parameter::K) => c"TopK: invalid k",
            CommandError::TopKInvalid(Parameter::Width) => c"TopK: invalid width",
            CommandError::TopKInvalid(Parameter::Depth) => c"TopK: invalid depth",
            CommandError::TopKInvalid(Parameter::Decay) => c"TopK: invalid decay value. must be '<= 1' & '> 0'",
            CommandError::TopKInsufficientMemory => c"ERR Insufficient memory to create topk data structure",
            CommandError::TopKBadIncrement => {
                c"TopK: increment must be an integer greater or equal to 0                            and smaller or equal to 100,000"
            }
            CommandError::TopKWithCountExpected => c"WITHCOUNT keyword expected",
            CommandError::TDigestKeyExists => c"ERR T-Digest: key already exists",
            CommandError::TDigestKeyMissing => c"ERR T-Digest: key does not exist",
            CommandError::TDigestWrongKeyword => c"ERR T-Digest: wrong keyword",
            CommandError::TDigestBadCompression => c"ERR T-Digest: error parsing compression parameter",
            CommandError::TDigestCompressionNotPositive => {
                c"ERR T-Digest: compression parameter needs to be a positive integer"
            }
            CommandError::TDigestAllocationFailed => c"ERR T-Digest: allocation failed",
            CommandError::TDigestMergeAllocationFailed => c"ERR T-Digest: allocation of destination digest failed",
            CommandError::TDigestBadValue => c"ERR T-Digest: error parsing val parameter",
            CommandError::TDigestValueNotFinite => c"ERR T-Digest: val parameter needs to be a finite number",
            CommandError::TDigestOverflow => c"ERR T-Digest: overflow detected",
            CommandError::TDigestBadNumkeys => c"ERR T-Digest: error parsing numkeys",
            CommandError::TDigestNumkeysNotPositive => c"ERR T-Digest: numkeys needs to be a positive integer",
            CommandError::TDigestBadQuantile => c"ERR T-Digest: error parsing quantile",
            CommandError::TDigestQuantileOutOfRange => c"ERR T-Digest: quantile should be in [0,1]",
            CommandError::TDigestBadCdf => c"ERR T-Digest: error parsing cdf",
            CommandError::TDigestBadRankValue => c"ERR T-Digest: error parsing value",
            CommandError::TDigestBadRank => c"ERR T-Digest: error parsing rank",
            CommandError::TDigestNegativeRank => c"ERR T-Digest: rank needs to be non negative",
            CommandError::TDigestBadLowCut => c"ERR T-Digest: error parsing low_cut_percentile",
            CommandError::TDigestBadHighCut => c"ERR T-Digest: error parsing high_cut_percentile",
            CommandError::TDigestCutsOutOfRange => {
                c"ERR T-Digest: low_cut_percentile and high_cut_percentile should be in [0,1]"
            }
            CommandError::TDigestCutsOutOfOrder => {
                c"ERR T-Digest: low_cut_percentile should be lower than high_cut_percentile"
            }
            CommandError::Internal => c"ERR internal error in redbloom, see the server log",
        }
    }
}

impl From<CuckooError> for CommandError {
    fn from(_: CuckooError) -> CommandError {
        CommandError::InsufficientMemory
    }
}

impl From<FilterError> for CommandError {
    fn from(error: FilterError) -> CommandError {
        match error {
            FilterError::Full => CommandError::NonScalingFull,
            FilterError::TooLarge | FilterError::OutOfMemory => CommandError::InsufficientMemory,
        }
    }
}

impl From<DecodeError> for CommandError {
    fn from(error: DecodeError) -> CommandError {
        match error {
            DecodeError::Malformed(_) => CommandError::BadData,
            DecodeError::TooLarge | DecodeError::OutOfMemory => CommandError::InsufficientMemory,
        }
    }
}

impl From<ChunkError> for CommandError {
    fn from(error: ChunkError) -> CommandError {
        match error {
            ChunkError::NoLink => CommandError::NoLink,
            ChunkError::TooBig => CommandError::ChunkTooBig,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CommandError;
    use redbloom_core::bloom::params::{MAX_CAPACITY, MAX_EXPANSION, MIN_CAPACITY};
    use redbloom_core::cuckoo::{MAX_BUCKET_SIZE, MAX_EXPANSION as MAX_CUCKOO_EXPANSION};

    /// The contract spells some bounds out in its texts: they must be the bounds the parsers
    /// check, which the core states.
    #[test]
    fn the_bounds_in_the_texts_are_the_bounds_checked() {
        let text = |error: CommandError| error.message().to_string_lossy().into_owned();
        assert!(
            text(CommandError::CapacityOutOfRange).ends_with(&format!("[{MIN_CAPACITY}, {MAX_CAPACITY}]"))
        );
        assert!(text(CommandError::ExpansionOutOfRange).ends_with(&format!("[0, {MAX_EXPANSION}]")));
        let between = |min: u64, max: u64| format!("between {min} and {max}, inclusive.");
        assert!(text(CommandError::CfBucketSizeOutOfRange).ends_with(&between(1, u64::from(MAX_BUCKET_SIZE))));
        assert!(
            text(CommandError::CfExpansionOutOfRange).ends_with(&between(0, u64::from(MAX_CUCKOO_EXPANSION)))
        );
        assert!(text(CommandError::CfMaxIterationsOutOfRange).ends_with(&between(1, u64::from(u16::MAX))));
        assert!(text(CommandError::CfErrorRateTooSmall).contains(&format!("/ {},", u32::MAX)));
    }

    /// The core states RedisBloom's Top-K texts beside the checks they describe.
    #[test]
    fn the_top_k_texts_are_the_cores() {
        use redbloom_core::top_k::{Parameter, INCREMENT_ERROR};
        let text = |error: CommandError| error.message().to_string_lossy().into_owned();
        for parameter in [Parameter::K, Parameter::Width, Parameter::Depth, Parameter::Decay] {
            assert_eq!(text(CommandError::TopKInvalid(parameter)), parameter.error());
        }
        assert_eq!(text(CommandError::TopKBadIncrement), INCREMENT_ERROR);
    }
}
