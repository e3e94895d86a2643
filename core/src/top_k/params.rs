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

/// What TOPK.RESERVE fixes of a sketch, checked: the items kept, the counters in a row, the
/// rows, and the decay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    pub(super) k: u32,
    pub(super) width: u32,
    pub(super) depth: u32,
    pub(super) decay: f64,
}

impl Shape {
    /// RedisBloom's checks of TOPK.RESERVE's parameters (k, width and depth at least 1 and at
    /// most `u32::MAX`; decay in (0, 1]).
    pub(super) fn checked(k: u64, width: u64, depth: u64, decay: f64) -> Result<Shape, Parameter> {
        let dimension =
            |value: u64, parameter| u32::try_from(value).ok().filter(|&value| value >= 1).ok_or(parameter);
        let k = dimension(k, Parameter::K)?;
        let width = dimension(width, Parameter::Width)?;
        let depth = dimension(depth, Parameter::Depth)?;
        if !(decay > 0.0 && decay <= 1.0) {
            return Err(Parameter::Decay);
        }
        Ok(Shape { k, width, depth, decay })
    }

    /// Items kept.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Counters in a row.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Rows.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The probability base of a decrement: `decay^count`.
    pub fn decay(&self) -> f64 {
        self.decay
    }
}
