//! CMS.INITBYDIM and CMS.INITBYPROB.

use super::datatype::METRICS;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::shared::parse;
use redbloom_core::count_min::{dimensions, dimensions_for, CountMinSketch, InitError, SizeError};

impl From<InitError> for CommandError {
    fn from(error: InitError) -> CommandError {
        match error {
            InitError::Width => CommandError::CmsInvalidWidth,
            InitError::Depth => CommandError::CmsInvalidDepth,
            InitError::Overestimation => CommandError::CmsInvalidOverestimation,
            InitError::Probability => CommandError::CmsInvalidProbability,
            InitError::Dimensions => CommandError::CmsInvalidDimensions,
        }
    }
}

/// CMS.INITBYDIM key width depth.
pub fn by_dimensions(call: &Call) -> Result<(), CommandError> {
    create(call, |width, depth| {
        let width = parse::integer(width).ok_or(InitError::Width)?;
        let depth = parse::integer(depth).ok_or(InitError::Depth)?;
        dimensions(width, depth)
    })
}

/// CMS.INITBYPROB key error probability.
pub fn by_probability(call: &Call) -> Result<(), CommandError> {
    create(call, |error, probability| {
        let error = parse::float(error).ok_or(InitError::Overestimation)?;
        let probability = parse::float(probability).ok_or(InitError::Probability)?;
        dimensions_for(error, probability)
    })
}

/// Both commands: an existing key, of any type, is refused before the arguments are read, as
/// RedisBloom does; a sketch beyond `bf.max-filter-bytes` is refused before anything is allocated.
fn create(
    call: &Call,
    dimensions_of: impl FnOnce(&[u8], &[u8]) -> Result<(u64, u64), InitError>,
) -> Result<(), CommandError> {
    let mut key = call.open_key_for_writing();
    if !matches!(key.get::<CountMinSketch>(), Ok(None)) {
        return Err(CommandError::CmsKeyExists);
    }
    let (width, depth) = dimensions_of(call.arg(2), call.arg(3))?;
    let sketch = CountMinSketch::new(width, depth, call.max_filter_bytes()).map_err(|error| {
        METRICS.count_refused_creation();
        match error {
            SizeError::InvalidDimensions => CommandError::CmsInvalidDimensions,
            SizeError::TooLarge | SizeError::OutOfMemory => CommandError::CmsInsufficientMemory,
        }
    })?;
    key.store(sketch)?;
    call.replicate_verbatim();
    call.notify(if parse::is_keyword(call.arg(0), "cms.initbydim") {
        c"cms.initbydim"
    } else {
        c"cms.initbyprob"
    });
    call.reply_ok();
    Ok(())
}
