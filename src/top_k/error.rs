//! The TOPK.* error texts, RedisBloom's, exactly as `docs/topk-commands.md` lists them.

use crate::shared::error::CommandError;
use redbloom_core::top_k::Parameter;
use std::ffi::CStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopKError {
    KeyExists,
    KeyMissing,
    Invalid(Parameter),
    InsufficientMemory,
    BadIncrement,
    WithCountExpected,
}

impl TopKError {
    pub fn message(self) -> &'static CStr {
        match self {
            TopKError::KeyExists => c"TopK: key already exists",
            TopKError::KeyMissing => c"TopK: key does not exist",
            TopKError::Invalid(Parameter::K) => c"TopK: invalid k",
            TopKError::Invalid(Parameter::Width) => c"TopK: invalid width",
            TopKError::Invalid(Parameter::Depth) => c"TopK: invalid depth",
            TopKError::Invalid(Parameter::Decay) => c"TopK: invalid decay value. must be '<= 1' & '> 0'",
            TopKError::InsufficientMemory => c"ERR Insufficient memory to create topk data structure",
            TopKError::BadIncrement => {
                c"TopK: increment must be an integer greater or equal to 0                            and smaller or equal to 100,000"
            }
            TopKError::WithCountExpected => c"WITHCOUNT keyword expected",
        }
    }
}

impl From<TopKError> for CommandError {
    fn from(error: TopKError) -> CommandError {
        CommandError::Own(error.message())
    }
}

#[cfg(test)]
mod tests {
    use super::TopKError;
    use redbloom_core::top_k::{Parameter, INCREMENT_ERROR};

    /// The core states RedisBloom's Top-K texts beside the checks they describe.
    #[test]
    fn the_top_k_texts_are_the_cores() {
        let text = |error: TopKError| error.message().to_string_lossy().into_owned();
        for parameter in [Parameter::K, Parameter::Width, Parameter::Depth, Parameter::Decay] {
            assert_eq!(text(TopKError::Invalid(parameter)), parameter.error());
        }
        assert_eq!(text(TopKError::BadIncrement), INCREMENT_ERROR);
    }
}
