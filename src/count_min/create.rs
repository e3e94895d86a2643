//! CMS.INITBYDIM and CMS.INITBYPROB, each with Redis 8.12's optional `CELL_SIZE`.

use super::datatype::METRICS;
use super::error::CmsError;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::shared::parse;
use redbloom_core::count_min::{dimensions, dimensions_for, CellSize, CountMinSketch, InitError, SizeError};

/// `CMS.INITBYDIM key width depth [CELL_SIZE size]`.
pub fn by_dimensions(call: &Call) -> Result<(), CommandError> {
    create(call, |width, depth| {
        let width = parse::integer(width).ok_or(InitError::Width)?;
        let depth = parse::integer(depth).ok_or(InitError::Depth)?;
        dimensions(width, depth)
    })
}

/// `CMS.INITBYPROB key error probability [CELL_SIZE size]`.
pub fn by_probability(call: &Call) -> Result<(), CommandError> {
    create(call, |error, probability| {
        let error = parse::float(error).ok_or(InitError::Overestimation)?;
        let probability = parse::float(probability).ok_or(InitError::Probability)?;
        dimensions_for(error, probability)
    })
}

/// Both commands, in RedisBloom 8.12's order: the argument count (4, or 6 with the cell
/// size); an existing key, of any type, before any argument is read; the dimensions; then
/// the cell size. A sketch beyond `bf.max-filter-bytes` is refused before anything is
/// allocated.
fn create(
    call: &Call,
    dimensions_of: impl FnOnce(&[u8], &[u8]) -> Result<(u64, u64), InitError>,
) -> Result<(), CommandError> {
    if call.argc() != 4 && call.argc() != 6 {
        return Err(CommandError::WrongArity);
    }
    let mut key = call.open_key_for_writing();
    if !matches!(key.get::<CountMinSketch>(), Ok(None)) {
        return Err(CmsError::KeyExists.into());
    }
    let (width, depth) = dimensions_of(call.arg(2), call.arg(3))?;
    let cell_size = if call.argc() == 6 { cell_size(call.arg(4), call.arg(5))? } else { CellSize::DEFAULT };
    let sketch = CountMinSketch::new(width, depth, cell_size, call.max_filter_bytes()).map_err(|error| {
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

/// `CELL_SIZE size`: the keyword in any case, the size an integer of 1, 2, 4 or 8.
fn cell_size(keyword: &[u8], size: &[u8]) -> Result<CellSize, CmsError> {
    if !parse::is_keyword(keyword, "CELL_SIZE") {
        return Err(CmsError::UnknownArgument);
    }
    parse::integer(size)
        .and_then(|size| u64::try_from(size).ok())
        .and_then(CellSize::from_bytes)
        .ok_or(CmsError::InvalidCellSize)
}
