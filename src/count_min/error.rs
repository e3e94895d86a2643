//! The CMS.* error texts, RedisBloom's (2.8.2's, and those Redis 8.12's added), exactly as
//! `docs/cms-commands.md` lists them.

use crate::shared::error::CommandError;
use redbloom_core::count_min::{IncrementError, InitError, MergeError};
use std::ffi::CStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmsError {
    KeyExists,
    KeyMissing,
    InvalidWidth,
    InvalidDepth,
    InvalidOverestimation,
    InvalidProbability,
    InvalidDimensions,
    InsufficientMemory,
    UnknownArgument,
    InvalidCellSize,
    BadNumber,
    InvalidIncrement,
    IncrementOverflow,
    IncrementUnderflow,
    InvalidNumkeys,
    NumkeysNotPositive,
    WrongNumberOfKeys,
    WrongNumberOfKeysAndWeights,
    InvalidWeight,
    DimensionsDiffer,
    CellSizesDiffer,
    MergeOverflow,
}

impl CmsError {
    pub fn message(self) -> &'static CStr {
        match self {
            CmsError::KeyExists => c"CMS: key already exists",
            CmsError::KeyMissing => c"CMS: key does not exist",
            CmsError::InvalidWidth => c"CMS: invalid width",
            CmsError::InvalidDepth => c"CMS: invalid depth",
            CmsError::InvalidOverestimation => c"CMS: invalid overestimation value",
            CmsError::InvalidProbability => c"CMS: invalid prob value",
            CmsError::InvalidDimensions => c"CMS: invalid init arguments",
            CmsError::InsufficientMemory => c"CMS: Insufficient memory to create the key",
            CmsError::UnknownArgument => c"CMS: unknown argument",
            CmsError::InvalidCellSize => c"CMS: CELL_SIZE must be 1, 2, 4 or 8",
            CmsError::BadNumber => c"CMS: Cannot parse number",
            CmsError::InvalidIncrement => c"CMS: invalid increment",
            CmsError::IncrementOverflow => c"CMS: INCRBY overflow",
            CmsError::IncrementUnderflow => c"CMS: INCRBY underflow",
            CmsError::InvalidNumkeys => c"CMS: invalid numkeys",
            CmsError::NumkeysNotPositive => c"CMS: Number of keys must be positive",
            CmsError::WrongNumberOfKeys => c"CMS: wrong number of keys",
            CmsError::WrongNumberOfKeysAndWeights => c"CMS: wrong number of keys/weights",
            CmsError::InvalidWeight => c"CMS: invalid weight value",
            CmsError::DimensionsDiffer => c"CMS: width/depth is not equal",
            CmsError::CellSizesDiffer => c"CMS: cell size is not equal",
            CmsError::MergeOverflow => c"CMS: MERGE overflow",
        }
    }
}

impl From<CmsError> for CommandError {
    fn from(error: CmsError) -> CommandError {
        CommandError::Own(error.message())
    }
}

impl From<InitError> for CommandError {
    fn from(error: InitError) -> CommandError {
        CommandError::from(match error {
            InitError::Width => CmsError::InvalidWidth,
            InitError::Depth => CmsError::InvalidDepth,
            InitError::Overestimation => CmsError::InvalidOverestimation,
            InitError::Probability => CmsError::InvalidProbability,
            InitError::Dimensions => CmsError::InvalidDimensions,
        })
    }
}

impl From<IncrementError> for CommandError {
    fn from(error: IncrementError) -> CommandError {
        CommandError::from(match error {
            IncrementError::Overflow => CmsError::IncrementOverflow,
            IncrementError::Underflow => CmsError::IncrementUnderflow,
        })
    }
}

impl From<MergeError> for CommandError {
    fn from(error: MergeError) -> CommandError {
        CommandError::from(match error {
            MergeError::Dimensions => CmsError::DimensionsDiffer,
            MergeError::CellSize => CmsError::CellSizesDiffer,
            MergeError::Overflow => CmsError::MergeOverflow,
        })
    }
}
