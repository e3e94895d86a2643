//! TOPK.RESERVE's defaults and parameters, TOPK.INCRBY's bound, and RedisBloom's texts for them.

/// TOPK.RESERVE's width when only k is given.
pub const DEFAULT_WIDTH: u32 = 8;
/// TOPK.RESERVE's depth when only k is given.
pub const DEFAULT_DEPTH: u32 = 7;
/// TOPK.RESERVE's decay when only k is given.
pub const DEFAULT_DECAY: f64 = 0.9;
/// The largest increment TOPK.INCRBY takes (RedisBloom's bound; this sketch takes any `u32`).
pub const MAX_INCREMENT: u32 = 100_000;
/// RedisBloom's answer to an increment that is not an integer in 0..=[`MAX_INCREMENT`], its
/// line continuation's spaces included.
pub const INCREMENT_ERROR: &str = "TopK: increment must be an integer greater or equal to 0                            and smaller or equal to 100,000";

/// A parameter of TOPK.RESERVE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parameter {
    /// Items kept: 1 to `u32::MAX`.
    K,
    /// Counters in a row: 1 to `u32::MAX`.
    Width,
    /// Rows: 1 to `u32::MAX`.
    Depth,
    /// Greater than 0, at most 1.
    Decay,
}

impl Parameter {
    /// RedisBloom's error for a value out of range (or not a number).
    pub fn error(self) -> &'static str {
        match self {
            Parameter::K => "TopK: invalid k",
            Parameter::Width => "TopK: invalid width",
            Parameter::Depth => "TopK: invalid depth",
            Parameter::Decay => "TopK: invalid decay value. must be '<= 1' & '> 0'",
        }
    }
}

/// Why a sketch could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeError {
    /// A parameter out of RedisBloom's range.
    Invalid(Parameter),
    /// Beyond the memory budget (RedisBloom answers "ERR Insufficient memory to create topk
    /// data structure" when its allocation fails).
    TooLarge,
    /// The allocator had no memory for it.
    OutOfMemory,
}
