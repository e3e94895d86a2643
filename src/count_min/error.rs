//! The CMS.* error texts, RedisBloom's (2.8.2's, and those Redis 8.12's added), and this
//! module's own for windowed sketches, exactly as `docs/cms-commands.md` lists them.

use crate::shared::error::CommandError;
use redbloom_core::count_min::window::{WindowMergeError, WriteError};
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
    NegativeWindowedIncrement,
    WindowedWithPlain,
    WindowsDiffer,
    SourceAhead,
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
            // This module's own, for windowed sketches (RedisBloom has none).
            CmsError::NegativeWindowedIncrement => c"CMS: a windowed sketch takes no negative increment",
            CmsError::WindowedWithPlain => c"CMS: windowed and plain sketches do not merge together",
            CmsError::WindowsDiffer => c"CMS: window/generations is not equal",
            CmsError::SourceAhead => c"CMS: a source's window is ahead of the destination's clock",
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

impl From<WriteError> for CommandError {
    fn from(error: WriteError) -> CommandError {
        CommandError::from(match error {
            WriteError::Negative => CmsError::NegativeWindowedIncrement,
            WriteError::OutOfMemory => CmsError::InsufficientMemory,
        })
    }
}

impl From<WindowMergeError> for CommandError {
    fn from(error: WindowMergeError) -> CommandError {
        match error {
            WindowMergeError::Plain(error) => error.into(),
            WindowMergeError::Schedule => CmsError::WindowsDiffer.into(),
            WindowMergeError::Ahead => CmsError::SourceAhead.into(),
            WindowMergeError::OutOfMemory => CmsError::InsufficientMemory.into(),
        }
    }
}
