//! CMS.INCRBY and CMS.MERGE, on plain and windowed sketches.

use super::datatype::METRICS;
use super::error::CmsError;
use super::held::{held, held_mut, Held, HeldMut};
use crate::shared::call::Call;
use crate::shared::datatype::StoredValue;
use crate::shared::error::CommandError;
use crate::shared::keyspace::Key;
use crate::shared::metrics;
use crate::shared::parse;
use crate::shared::record_type::RecordType;
use crate::window::rotation::{rotate_for_merge, rotate_for_write};
use redbloom_core::count_min::window::{WindowSource, WindowedCountMin};
use redbloom_core::count_min::{CountMinSketch, IncrementError, MergeSource};

/// CMS.INCRBY key item increment [item increment ...]: every pair is read before anything
/// changes. An increment may be negative (Redis 8.12); one that would take a counter or the
/// total out of range is refused, with nothing changed, and answered RedisBloom's overflow or
/// underflow error in its place in the array, while the other pairs are applied. A windowed
/// sketch is rotated to the master's clock first, and takes no negative increment.
pub fn increment(call: &Call) -> Result<(), CommandError> {
    if !call.argc().is_multiple_of(2) {
        return Err(CommandError::WrongArity);
    }
    let mut key = call.open_key_for_writing();
    let sketch = held_mut(&mut key)?.ok_or(CmsError::KeyMissing)?;
    let increment_of = |text: &[u8]| match parse::integer(text) {
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
    match sketch {
        HeldMut::Plain(sketch) if pairs == 1 => {
            // One pair needs no list, nor the batch's prefetching.
            let by = increment_of(call.arg(3))?;
            call.reply_array(1);
            reply(sketch.increment(call.arg(2), by));
        }
        HeldMut::Plain(sketch) => {
            let list = pair_list(call, increment_of)?;
            call.reply_array(list.len());
            sketch.increment_all(&list, reply);
        }
        HeldMut::Windowed(sketch) if pairs == 1 => {
            let by = increment_of(call.arg(3))?;
            rotate_for_write(call, sketch);
            open_span(sketch, std::iter::once(by))?;
            call.reply_array(1);
            reply(sketch.increment(call.arg(2), by)?);
        }
        HeldMut::Windowed(sketch) => {
            let list = pair_list(call, increment_of)?;
            rotate_for_write(call, sketch);
            open_span(sketch, list.iter().map(|&(_, by)| by))?;
            call.reply_array(list.len());
            sketch.increment_all(&list, reply)?;
        }
    }
    METRICS.count_adds(pairs);
    call.replicate_verbatim();
    call.notify(c"cms.incrby");
    Ok(())
}

/// A windowed write's first step, before anything is answered: its increments checked, and
/// the span's generation opened (its memory followed in `INFO bf`).
fn open_span(
    sketch: &mut WindowedCountMin,
    increments: impl Iterator<Item = i64>,
) -> Result<(), CommandError> {
    if sketch.generations().current().is_some() {
        return Ok(sketch.prepare_write(increments)?);
    }
    let before = sketch.footprint();
    sketch.prepare_write(increments)?;
    metrics::changed(before, sketch);
    Ok(())
}

/// The (item, increment) pairs, each increment read by `increment_of`.
fn pair_list<'a>(
    call: &Call<'a>,
    increment_of: impl Fn(&[u8]) -> Result<i64, CmsError>,
) -> Result<Vec<(&'a [u8], i64)>, CmsError> {
    let pairs = call.pairs_from(2);
    let mut list = Vec::with_capacity(pairs.len());
    for (item, increment) in pairs {
        list.push((item, increment_of(increment)?));
    }
    Ok(list)
}

/// CMS.MERGE destination numkeys source [source ...] [WEIGHTS weight [weight ...]]: the
/// destination, which must exist with the sources' width, depth and cell size, becomes the
/// weighted sum of the sources (it may be one of them). RedisBloom's checks, in its order.
/// A windowed destination takes windowed sources of its window and generations, span by
/// span, at its current span once rotated to the master's clock; plain and windowed
/// sketches do not mix.
pub fn merge(call: &Call) -> Result<(), CommandError> {
    let mut destination = call.open_key_for_writing();
    let windowed = match held(&destination)?.ok_or(CmsError::KeyMissing)? {
        Held::Plain(_) => false,
        Held::Windowed(_) => true,
    };
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
            // Each source's shape is checked in its turn, windowed sketches too, so that a
            // merge with several faults answers the first as a plain one does.
            let shape = |held| match held {
                Held::Plain(sketch) => (false, sketch.width(), sketch.depth(), sketch.cell_size()),
                Held::Windowed(sketch) => (true, sketch.width(), sketch.depth(), sketch.cell_size()),
            };
            let source = shape(held(&key)?.ok_or(CmsError::KeyMissing)?);
            let target = held(&destination)?.map(shape).ok_or(CmsError::KeyMissing)?;
            if source.0 != target.0 {
                return Err(CmsError::WindowedWithPlain.into());
            }
            if (source.1, source.2) != (target.1, target.2) {
                return Err(CmsError::DimensionsDiffer.into());
            }
            if source.3 != target.3 {
                return Err(CmsError::CellSizesDiffer.into());
            }
        }
        sources.push((key, is_destination, weight));
    }
    if windowed {
        merge_windowed(call, &mut destination, &sources)?;
    } else {
        merge_plain(&mut destination, &sources)?;
    }
    call.replicate_verbatim();
    call.notify(c"cms.merge");
    call.reply_ok();
    Ok(())
}

/// The sources, checked: (key, whether it is the destination, weight).
type Sources = [(Key, bool, i64)];

/// The sources as a merge of sketches of type `V` takes them: each the destination (as
/// `destination`), or the sketch in its key (wrapped by `sketch`), with its weight.
fn merge_list<'a, V: StoredValue + 'a, S: Copy>(
    sources: &'a Sources,
    destination: S,
    sketch: impl Fn(&'a V) -> S,
) -> Result<Vec<(S, i64)>, CommandError> {
    let mut merged = Vec::with_capacity(sources.len());
    for (key, is_destination, weight) in sources {
        let source =
            if *is_destination { destination } else { sketch(key.get::<V>()?.ok_or(CmsError::KeyMissing)?) };
        merged.push((source, *weight));
    }
    Ok(merged)
}

fn merge_plain(destination: &mut Key, sources: &Sources) -> Result<(), CommandError> {
    let merged = merge_list(sources, MergeSource::Destination, MergeSource::Sketch)?;
    let sketch = destination.get_mut::<CountMinSketch>()?.ok_or(CmsError::KeyMissing)?;
    sketch.merge(&merged)?;
    Ok(())
}

fn merge_windowed(call: &Call, destination: &mut Key, sources: &Sources) -> Result<(), CommandError> {
    let merged = merge_list(sources, WindowSource::Destination, WindowSource::Sketch)?;
    let sketch = destination.get_mut::<WindowedCountMin>()?.ok_or(CmsError::KeyMissing)?;
    rotate_for_merge(call, sketch);
    let before = sketch.footprint();
    sketch.merge(&merged)?;
    metrics::changed(before, sketch);
    Ok(())
}
