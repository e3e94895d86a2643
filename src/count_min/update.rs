//! CMS.INCRBY and CMS.MERGE.

use super::datatype::METRICS;
use super::error::CmsError;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::shared::parse;
use redbloom_core::count_min::{CountMinSketch, IncrementError, MergeSource};

/// CMS.INCRBY key item increment [item increment ...]: every pair is read before anything
/// changes. An increment may be negative (Redis 8.12); one that would take a counter or the
/// total out of range is refused, with nothing changed, and answered RedisBloom's overflow or
/// underflow error in its place in the array, while the other pairs are applied.
pub fn increment(call: &Call) -> Result<(), CommandError> {
    if !call.argc().is_multiple_of(2) {
        return Err(CommandError::WrongArity);
    }
    let mut key = call.open_key_for_writing();
    let sketch = key.get_mut::<CountMinSketch>()?.ok_or(CmsError::KeyMissing)?;
    let increment_at = |index: usize| match parse::integer(call.arg(index + 1)) {
        // RedisBloom 8.12 refuses the one increment whose size is no i64.
        Some(i64::MIN) => Err(CmsError::InvalidIncrement),
        Some(by) => Ok(by),
        None => Err(CmsError::BadNumber),
    };
    let reply = |counted: Result<u64, IncrementError>| match counted {
        Ok(count) => call.reply_integer(i64::try_from(count).unwrap_or(i64::MAX)),
        Err(refused) => call.reply_error(refused.into()),
    };
    let pairs = (call.argc() - 2) / 2;
    if pairs == 1 {
        // One pair needs no list, nor the batch's prefetching.
        let by = increment_at(2)?;
        call.reply_array(1);
        reply(sketch.increment(call.arg(2), by));
    } else {
        let mut list = Vec::with_capacity(pairs);
        for index in (2..call.argc()).step_by(2) {
            list.push((call.arg(index), increment_at(index)?));
        }
        call.reply_array(list.len());
        sketch.increment_all(&list, reply);
    }
    METRICS.count_adds(pairs);
    call.replicate_verbatim();
    call.notify(c"cms.incrby");
    Ok(())
}

/// CMS.MERGE destination numkeys source [source ...] [WEIGHTS weight [weight ...]]: the
/// destination, which must exist with the sources' width, depth and cell size, becomes the
/// weighted sum of the sources (it may be one of them). RedisBloom's checks, in its order.
pub fn merge(call: &Call) -> Result<(), CommandError> {
    let mut destination = call.open_key_for_writing();
    if destination.get::<CountMinSketch>()?.is_none() {
        return Err(CmsError::KeyMissing.into());
    }
    let count = parse::integer(call.arg(2)).ok_or(CmsError::InvalidNumkeys)?;
    let count = usize::try_from(count).ok().filter(|&count| count > 0).ok_or(CmsError::NumkeysNotPositive)?;
    let first_source: usize = 3;
    let after_sources = first_source.checked_add(count).ok_or(CmsError::WrongNumberOfKeys)?;
    // RedisBloom looks for the keyword among every argument from the first source on, so a
    // source named `weights` is taken for it.
    let keyword_at = (first_source..call.argc()).find(|&index| parse::is_keyword(call.arg(index), "WEIGHTS"));
    let weights_at = match keyword_at {
        None if call.argc() == after_sources => None,
        None => return Err(CmsError::WrongNumberOfKeys.into()),
        Some(at) if at == after_sources && call.argc() == after_sources + 1 + count => Some(at + 1),
        Some(_) => return Err(CmsError::WrongNumberOfKeysAndWeights.into()),
    };
    let mut sources = Vec::with_capacity(count);
    for index in 0..count {
        let weight = match weights_at {
            Some(first_weight) => {
                parse::integer(call.arg(first_weight + index)).ok_or(CmsError::InvalidWeight)?
            }
            None => 1,
        };
        let key = call.open_key_at(first_source + index).ok_or(CmsError::WrongNumberOfKeys)?;
        let is_destination = key.holds_same_value_as(&destination);
        if !is_destination {
            let source = key.get::<CountMinSketch>()?.ok_or(CmsError::KeyMissing)?;
            let target = destination.get::<CountMinSketch>()?.ok_or(CmsError::KeyMissing)?;
            if !source.same_dimensions(target) {
                return Err(CmsError::DimensionsDiffer.into());
            }
            if source.cell_size() != target.cell_size() {
                return Err(CmsError::CellSizesDiffer.into());
            }
        }
        sources.push((key, is_destination, weight));
    }
    let mut merged = Vec::with_capacity(count);
    for (key, is_destination, weight) in &sources {
        let source = if *is_destination {
            MergeSource::Destination
        } else {
            MergeSource::Sketch(key.get::<CountMinSketch>()?.ok_or(CmsError::KeyMissing)?)
        };
        merged.push((source, *weight));
    }
    let sketch = destination.get_mut::<CountMinSketch>()?.ok_or(CmsError::KeyMissing)?;
    sketch.merge(&merged)?;
    call.replicate_verbatim();
    call.notify(c"cms.merge");
    call.reply_ok();
    Ok(())
}
