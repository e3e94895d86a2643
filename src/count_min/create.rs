//! CMS.INITBYDIM and CMS.INITBYPROB.

use super::datatype::METRICS;
use super::error::CmsError;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::shared::parse;
use redbloom_core::count_min::{dimensions, dimensions_for, CountMinSketch, InitError, SizeError};

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
        return Err(CmsError::KeyExists.into());
    }
    let (width, depth) = dimensions_of(call.arg(2), call.arg(3))?;
    let sketch = CountMinSketch::new(width, depth, call.max_filter_bytes()).map_err(|error| {
        METRICS.count_refused_creation();
        match error {
            SizeError::InvalidDimensions => CmsError::InvalidDimensions,
            SizeError::TooLarge | SizeError::OutOfMemory => CmsError::InsufficientMemory,
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
