//! The BF.* family's error texts, exactly as the contract (`docs/bf-commands.md`) and
//! RedisBloom word them; the texts the CF.* family answers too are `shared::error`'s, and the
//! window grammar's `window::error`'s.

use crate::shared::error::CommandError;
use crate::window::error::WindowError;
use redbloom_core::bloom::encoding::ChunkError;
use redbloom_core::bloom::window::ParamError;
use redbloom_core::bloom::FilterError;
use std::ffi::CStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BfError {
    BadErrorRate,
    ErrorRateOutOfRange,
    BadCapacity,
    CapacityOutOfRange,
    NoExpansion,
    BadExpansion,
    ExpansionOutOfRange,
    NonScalingCannotExpand,
    NonScalingFull,
    InsertBadExpansion,
    /// FORMAT without one of its two words (an extension: RedisBloom has no FORMAT).
    BadFormat,
    /// `FORMAT REDISBLOOM` named together with `WINDOW`: RedisBloom has no windowed filters, so
    /// the filter could not be in its format.
    WindowInRedisBloomFormat,
    InvalidInfoField,
    ScanDumpIteratorNotNumeric,
    LoadChunkIteratorNotNumeric,
    NoLink,
    ChunkTooBig,
    /// A windowed filter's SCANDUMP or LOADCHUNK whose iterator was made before a rotation
    /// dropped a generation, which moved every chunk after it (an extension).
    DumpRotated,
    LoadRotated,
}

impl BfError {
    pub fn message(self) -> &'static CStr {
        match self {
            BfError::BadErrorRate => c"ERR bad error rate",
            BfError::ErrorRateOutOfRange => c"ERR error rate must be in the range (0.000000, 1.000000)",
            BfError::BadCapacity => c"ERR bad capacity",
            BfError::CapacityOutOfRange => c"ERR capacity must be in the range [1, 1073741824]",
            BfError::NoExpansion => c"ERR no expansion",
            BfError::BadExpansion => c"ERR bad expansion",
            BfError::ExpansionOutOfRange => c"ERR expansion must be in the range [0, 32768]",
            BfError::NonScalingCannotExpand => c"Nonscaling filters cannot expand",
            BfError::NonScalingFull => c"ERR non scaling filter is full",
            BfError::InsertBadExpansion => c"Bad expansion",
            BfError::BadFormat => c"ERR format must be REDBLOOM or REDISBLOOM",
            BfError::WindowInRedisBloomFormat => c"ERR FORMAT REDISBLOOM does not apply to a WINDOW filter",
            BfError::InvalidInfoField => c"Invalid information value",
            BfError::ScanDumpIteratorNotNumeric => c"Second argument must be numeric",
            BfError::LoadChunkIteratorNotNumeric => c"ERR Second argument must be numeric",
            BfError::NoLink => c"ERR invalid offset - no link found",
            BfError::ChunkTooBig => c"ERR invalid chunk - Too big for current filter",
            BfError::DumpRotated => {
                c"ERR the window dropped a generation since this dump began: start it again from 0"
            }
            BfError::LoadRotated => {
                c"ERR the window dropped a generation since this load began: load the dump again"
            }
        }
    }
}

impl From<BfError> for CommandError {
    fn from(error: BfError) -> CommandError {
        CommandError::Own(error.message())
    }
}

impl From<FilterError> for CommandError {
    fn from(error: FilterError) -> CommandError {
        match error {
            FilterError::Full => BfError::NonScalingFull.into(),
            FilterError::TooLarge | FilterError::OutOfMemory => CommandError::InsufficientMemory,
        }
    }
}

impl From<ChunkError> for CommandError {
    fn from(error: ChunkError) -> CommandError {
        match error {
            ChunkError::NoLink => BfError::NoLink.into(),
            ChunkError::TooBig => BfError::ChunkTooBig.into(),
        }
    }
}

impl From<ParamError> for CommandError {
    fn from(error: ParamError) -> CommandError {
        match error {
            ParamError::Window => WindowError::WindowOutOfRange.into(),
            ParamError::Generations => WindowError::GenerationsOutOfRange.into(),
            ParamError::Capacity => BfError::CapacityOutOfRange.into(),
            ParamError::ErrorRate => BfError::ErrorRateOutOfRange.into(),
            ParamError::Expansion => BfError::ExpansionOutOfRange.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::BfError;
    use redbloom_core::bloom::params::{MAX_CAPACITY, MAX_EXPANSION, MIN_CAPACITY};

    /// The contract spells some bounds out in its texts: they must be the bounds the parsers
    /// check, which the core states.
    #[test]
    fn the_bounds_in_the_texts_are_the_bounds_checked() {
        let text = |error: BfError| error.message().to_string_lossy().into_owned();
        assert!(text(BfError::CapacityOutOfRange).ends_with(&format!("[{MIN_CAPACITY}, {MAX_CAPACITY}]")));
        assert!(text(BfError::ExpansionOutOfRange).ends_with(&format!("[0, {MAX_EXPANSION}]")));
    }
}
