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
use std::ffi::CStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BfError {
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
    /// A bug caught by the panic guard; the server lives on.
    Internal,
}

impl BfError {
    pub fn message(self) -> &'static CStr {
        match self {
            BfError::WrongArity => c"ERR wrong number of arguments",
            BfError::WrongType => c"WRONGTYPE Operation against a key holding the wrong kind of value",
            BfError::NotFound => c"ERR not found",
            BfError::ItemExists => c"ERR item exists",
            BfError::BadErrorRate => c"ERR bad error rate",
            BfError::ErrorRateOutOfRange => c"ERR error rate must be in the range (0.000000, 1.000000)",
            BfError::BadCapacity => c"ERR bad capacity",
            BfError::CapacityOutOfRange => c"ERR capacity must be in the range [1, 1073741824]",
            BfError::NoExpansion => c"ERR no expansion",
            BfError::BadExpansion => c"ERR bad expansion",
            BfError::ExpansionOutOfRange => c"ERR expansion must be in the range [0, 32768]",
            BfError::NonScalingCannotExpand => c"Nonscaling filters cannot expand",
            BfError::InsufficientMemory => c"ERR Insufficient memory to create filter",
            BfError::NonScalingFull => c"ERR non scaling filter is full",
            BfError::InsertBadErrorRate => c"Bad error rate",
            BfError::InsertBadCapacity => c"Bad capacity",
            BfError::InsertBadExpansion => c"Bad expansion",
            BfError::UnknownArgument => c"Unknown argument received",
            BfError::BadFormat => c"ERR format must be REDBLOOM or REDISBLOOM",
            BfError::InvalidInfoField => c"Invalid information value",
            BfError::ScanDumpIteratorNotNumeric => c"Second argument must be numeric",
            BfError::LoadChunkIteratorNotNumeric => c"ERR Second argument must be numeric",
            BfError::BadData => c"ERR received bad data",
            BfError::NoLink => c"ERR invalid offset - no link found",
            BfError::ChunkTooBig => c"ERR invalid chunk - Too big for current filter",
            BfError::CfCapacityTooSmall => c"Capacity must be at least (BucketSize * 2)",
            BfError::CfBadMaxIterations => c"Couldn't parse MAXITERATIONS",
            BfError::CfBadBucketSize => c"Couldn't parse BUCKETSIZE",
            BfError::CfBadExpansion => c"Couldn't parse EXPANSION",
            BfError::CfMaxIterationsOutOfRange => {
                c"MAXITERATIONS: value must be an integer between 1 and 65535, inclusive."
            }
            BfError::CfBucketSizeOutOfRange => {
                c"BUCKETSIZE: value must be an integer between 1 and 255, inclusive."
            }
            BfError::CfExpansionOutOfRange => {
                c"EXPANSION: value must be an integer between 0 and 32768, inclusive."
            }
            BfError::CfFull => c"Filter is full",
            BfError::CfMaxExpansions => c"Maximum expansions reached",
            BfError::CfNotFound => c"Not found",
            BfError::CfCompactNotFound => c"Cuckoo filter was not found",
            BfError::CfInvalidPosition => c"Invalid position",
            BfError::CfInvalidHeader => c"Invalid header",
            BfError::CfCannotCreate => c"Couldn't create filter!",
            BfError::CfCannotLoadChunk => c"Couldn't load chunk!",
            BfError::CfBadErrorRate => c"ERROR: value must be a number between 0 and 1, exclusive.",
            BfError::CfErrorRateTooSmall => {
                c"ERROR: below 2 * bucket size / 4294967295, the best 32-bit fingerprints reach."
            }
            BfError::Internal => c"ERR internal error in redbloom, see the server log",
        }
    }
}

impl From<CuckooError> for BfError {
    fn from(_: CuckooError) -> BfError {
        BfError::InsufficientMemory
    }
}

impl From<FilterError> for BfError {
    fn from(error: FilterError) -> BfError {
        match error {
            FilterError::Full => BfError::NonScalingFull,
            FilterError::TooLarge | FilterError::OutOfMemory => BfError::InsufficientMemory,
        }
    }
}

impl From<DecodeError> for BfError {
    fn from(error: DecodeError) -> BfError {
        match error {
            DecodeError::Malformed(_) => BfError::BadData,
            DecodeError::TooLarge | DecodeError::OutOfMemory => BfError::InsufficientMemory,
        }
    }
}

impl From<ChunkError> for BfError {
    fn from(error: ChunkError) -> BfError {
        match error {
            ChunkError::NoLink => BfError::NoLink,
            ChunkError::TooBig => BfError::ChunkTooBig,
        }
    }
}
