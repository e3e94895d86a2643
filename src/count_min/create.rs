//! CMS.INITBYDIM and CMS.INITBYPROB, each with Redis 8.12's optional `CELL_SIZE`, and this
//! module's `WINDOW ms [GENERATIONS g]`, which makes a windowed sketch.

use super::datatype::METRICS;
use super::error::CmsError;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::shared::parse;
use crate::window::parse::among_options;
use crate::window::rotation::rotate_to_clock;
use redbloom_core::count_min::window::WindowedCountMin;
use redbloom_core::count_min::{dimensions, dimensions_for, CellSize, CountMinSketch, InitError, SizeError};
use redbloom_core::window::Schedule;

/// `CMS.INITBYDIM key width depth [CELL_SIZE size] [WINDOW ms [GENERATIONS g]]`.
pub fn by_dimensions(call: &Call) -> Result<(), CommandError> {
    // RedisBloom reads and checks each argument in turn: a width out of range is refused
    // before a depth that is no number, which stands here as a depth of 0.
    create(call, |width, depth| {
        let width = parse::integer(width).ok_or(InitError::Width)?;
        dimensions(width, parse::integer(depth).unwrap_or(0))
    })
}

/// `CMS.INITBYPROB key error probability [CELL_SIZE size] [WINDOW ms [GENERATIONS g]]`.
pub fn by_probability(call: &Call) -> Result<(), CommandError> {
    // As for the width: an error out of range is refused before a probability that is no
    // number, which stands here as NaN, refused as out of range.
    create(call, |error, probability| {
        let error = parse::float(error).ok_or(InitError::Overestimation)?;
        dimensions_for(error, parse::float(probability).unwrap_or(f64::NAN))
    })
}

/// Both commands, in RedisBloom 8.12's order: the argument count (4, or 6 with the cell
/// size, unless window options are among them); an existing key, of any type, before any
/// argument is read; the dimensions; then the cell size and the window, each option checked
/// as it is read. A sketch beyond `bf.max-filter-bytes` (a windowed one: with every
/// generation it may come to hold) is refused before anything is allocated.
fn create(
    call: &Call,
    dimensions_of: impl FnOnce(&[u8], &[u8]) -> Result<(u64, u64), InitError>,
) -> Result<(), CommandError> {
    let windowed = call
        .args_from(4)
        .any(|arg| parse::is_keyword(arg, "WINDOW") || parse::is_keyword(arg, "GENERATIONS"));
    if !windowed && call.argc() != 4 && call.argc() != 6 {
        return Err(CommandError::WrongArity);
    }
    let mut key = call.open_key_for_writing();
    if !key.is_empty() {
        return Err(CmsError::KeyExists.into());
    }
    let (width, depth) = dimensions_of(call.arg(2), call.arg(3))?;
    let (cell_size, window) = options(call, windowed)?;
    let refused = |error: SizeError| {
        METRICS.count_refused_creation();
        match error {
            SizeError::InvalidDimensions => CmsError::InvalidDimensions,
            SizeError::TooLarge | SizeError::OutOfMemory => CmsError::InsufficientMemory,
        }
    };
    match window {
        None => {
            let sketch =
                CountMinSketch::new(width, depth, cell_size, call.max_filter_bytes()).map_err(refused)?;
            key.store(sketch)?;
            call.replicate_verbatim();
        }
        Some(schedule) => {
            let sketch = WindowedCountMin::new(width, depth, cell_size, schedule, call.max_filter_bytes())
                .map_err(refused)?;
            key.store(sketch)?;
            call.replicate_verbatim();
            let sketch = key.get_mut::<WindowedCountMin>()?.ok_or(CommandError::Internal)?;
            rotate_to_clock(call, sketch);
        }
    }
    call.notify(if parse::is_keyword(call.arg(0), "cms.initbydim") {
        c"cms.initbydim"
    } else {
        c"cms.initbyprob"
    });
    call.reply_ok();
    Ok(())
}

/// The options after the dimensions: without window options, RedisBloom's two arguments,
/// `CELL_SIZE size` whatever the keyword; with them, `CELL_SIZE size` among them in any
/// order. The default size where none is given.
fn options(call: &Call, windowed: bool) -> Result<(CellSize, Option<Schedule>), CommandError> {
    if !windowed {
        let size = if call.argc() == 6 { cell_size(call.arg(4), call.arg(5))? } else { CellSize::DEFAULT };
        return Ok((size, None));
    }
    let args = call.args();
    let mut size = CellSize::DEFAULT;
    let window = among_options(&args, 4, CmsError::UnknownArgument.into(), |index| {
        if !parse::is_keyword(args[index], "CELL_SIZE") {
            return Ok(None);
        }
        size = cell_size(args[index], args.get(index + 1).copied().unwrap_or_default())?;
        Ok(Some(2))
    })?;
    Ok((size, window))
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
