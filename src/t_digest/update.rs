//! TDIGEST.CREATE, RESET, ADD and MERGE: the writes, each replicated as it was sent.
//!
//! A digest buffers values as RedisBloom's does and compresses only when its node array fills,
//! at the same add on a master and its replicas, which see the same writes. Its record holds
//! every node (the core's `encoding`), and a compression depends only on which nodes there are,
//! so master, replica, AOF and restart hold the same digest bit for bit and answer alike.
//!
//! A windowed digest (`WINDOW ms`) is rotated by the master's clock before each write, the
//! rotation replicated ahead of the write. MERGE into a windowed digest takes windowed sources
//! of its window and generations and merges them span by span; a plain digest and a windowed
//! one do not merge either way (a plain digest would keep what the window forgets, and its
//! values have no time the window could forget them at).

use super::datatype::METRICS;
use super::error::TDigestError;
use super::held::{held, held_mut, Held, HeldMut};
use super::parse;
use crate::shared::call::Call;
use crate::shared::datatype::StoredValue;
use crate::shared::error::CommandError;
use crate::shared::keyspace::Key;
use crate::shared::metrics::{self, Measured};
use crate::shared::parse::is_keyword;
use crate::window::parse::among_options;
use crate::window::rotation::{free, rotate_for_merge, rotate_for_write, rotate_to_clock};
use redbloom_core::decode::Persistent;
use redbloom_core::t_digest::{
    AddError, MergeError, SizeError, TDigest, WindowMergeError, WindowTDigest, DEFAULT_COMPRESSION,
};
use redbloom_core::window::Schedule;

/// Values TDIGEST.ADD reads without allocating.
const FEW_VALUES: usize = 16;

/// TDIGEST.CREATE key [COMPRESSION compression] [WINDOW ms [GENERATIONS g]].
pub fn create(call: &Call) -> Result<(), CommandError> {
    let windowed =
        call.args_from(2).any(|word| is_keyword(word, "WINDOW") || is_keyword(word, "GENERATIONS"));
    if !windowed && call.argc() != 2 && call.argc() != 4 {
        return Err(CommandError::WrongArity);
    }
    let mut key = call.open_key_for_writing();
    if held(&key)?.is_some() {
        return Err(TDigestError::KeyExists.into());
    }
    let (compression, schedule) =
        if windowed { window_options(call)? } else { (plain_compression(call)?, None) };
    let size_error = |error| match error {
        SizeError::Invalid => TDigestError::CompressionNotPositive,
        SizeError::TooLarge | SizeError::OutOfMemory => {
            METRICS.count_refused_creation();
            TDigestError::AllocationFailed
        }
    };
    match schedule {
        None => {
            key.store(TDigest::new(compression, call.max_filter_bytes()).map_err(size_error)?)?;
            call.replicate_verbatim();
        }
        Some(schedule) => {
            let digest =
                WindowTDigest::new(compression, schedule, call.max_filter_bytes()).map_err(size_error)?;
            key.store(digest)?;
            // As it came, so that the digest starts at the epoch's span everywhere, then the
            // rotation to the master's clock.
            call.replicate_verbatim();
            if let Some(digest) = key.get_mut::<WindowTDigest>()? {
                rotate_to_clock(call, digest);
            }
        }
    }
    call.notify(c"tdigest.create");
    call.reply_ok();
    Ok(())
}

/// A plain digest's compression: `COMPRESSION c` as the fourth and last argument, or the
/// default.
fn plain_compression(call: &Call) -> Result<u64, CommandError> {
    if call.argc() != 4 {
        return Ok(DEFAULT_COMPRESSION);
    }
    // RedisBloom looks for the keyword in either place and reads the last word as the value.
    if !is_keyword(call.arg(2), "COMPRESSION") && !is_keyword(call.arg(3), "COMPRESSION") {
        return Err(TDigestError::WrongKeyword.into());
    }
    parse::compression(call.arg(3))
}

/// A windowed digest's options: `COMPRESSION c` and the window's, in any order.
fn window_options(call: &Call) -> Result<(u64, Option<Schedule>), CommandError> {
    let args = call.args();
    let mut compression = DEFAULT_COMPRESSION;
    let window = among_options(&args, 2, TDigestError::WrongKeyword.into(), |index| {
        if !is_keyword(args[index], "COMPRESSION") {
            return Ok(None);
        }
        compression = parse::compression(args.get(index + 1).ok_or(TDigestError::BadCompression)?)?;
        Ok(Some(2))
    })?;
    Ok((compression, window))
}

/// TDIGEST.RESET key: empties the digest, keeping its compression (and its window).
pub fn reset(call: &Call) -> Result<(), CommandError> {
    let mut key = call.open_key_for_writing();
    match held_mut(&mut key)?.ok_or(TDigestError::KeyMissing)? {
        HeldMut::Plain(digest) => measured(digest, |digest| {
            digest.reset();
            Ok(())
        })?,
        HeldMut::Windowed(digest) => measured(digest, |digest| {
            let dropped = digest.reset();
            let bytes = dropped.iter().map(|generation| generation.value.memory_bytes()).sum();
            free(dropped, bytes);
            Ok(())
        })?,
    }
    call.replicate_verbatim();
    call.notify(c"tdigest.reset");
    call.reply_ok();
    Ok(())
}

/// Runs a write on `value`, following it in the metrics.
fn measured<V: Measured>(
    value: &mut V,
    write: impl FnOnce(&mut V) -> Result<(), CommandError>,
) -> Result<(), CommandError> {
    let before = value.footprint();
    write(value)?;
    metrics::changed(before, value);
    Ok(())
}

/// TDIGEST.ADD key value [value ...]: every value is read before any is added, and the add is
/// all or nothing.
pub fn add(call: &Call) -> Result<(), CommandError> {
    let mut key = call.open_key_for_writing();
    // One lookup: the key is checked before the values, as RedisBloom does.
    let digest = held_mut(&mut key)?.ok_or(TDigestError::KeyMissing)?;
    // A few values, the common call, are read onto the stack: no allocation per call.
    let count = call.argc() - 2;
    let mut few = [0.0; FEW_VALUES];
    let mut many = Vec::new();
    let values: &mut [f64] = if count <= FEW_VALUES {
        &mut few[..count]
    } else {
        many.try_reserve_exact(count).map_err(|_| TDigestError::AllocationFailed)?;
        many.resize(count, 0.0);
        &mut many
    };
    for (slot, text) in values.iter_mut().zip(call.args_from(2)) {
        let value = parse::double(text).ok_or(TDigestError::BadValue)?;
        if !value.is_finite() {
            return Err(TDigestError::ValueNotFinite.into());
        }
        *slot = value;
    }
    let values = &*values;
    match digest {
        HeldMut::Plain(digest) => measured(digest, |digest| digest.add(values).map_err(add_error))?,
        HeldMut::Windowed(digest) => {
            rotate_for_write(call, digest);
            measured(digest, |digest| digest.add(values).map_err(add_error))?;
        }
    }
    METRICS.count_adds(values.len());
    call.replicate_verbatim();
    call.notify(c"tdigest.add");
    call.reply_ok();
    Ok(())
}

fn add_error(error: AddError) -> CommandError {
    match error {
        AddError::NotFinite => TDigestError::ValueNotFinite,
        AddError::Overflow => TDigestError::Overflow,
        AddError::OutOfMemory => TDigestError::AllocationFailed,
    }
    .into()
}

/// TDIGEST.MERGE destination numkeys source [source ...] [COMPRESSION compression] [OVERRIDE]:
/// the destination becomes a new digest of the sources (and of itself, when it exists and
/// OVERRIDE is absent). RedisBloom's checks, in its order; the options are found by search
/// among the words after the sources, as there. A windowed destination takes windowed
/// sources, span by span ([`merge_windowed`]).
pub fn merge(call: &Call) -> Result<(), CommandError> {
    let mut destination = call.open_key_for_writing();
    let (exists, windowed) = match held(&destination)? {
        Some(Held::Windowed(_)) => (true, true),
        found => (found.is_some(), false),
    };
    let count = crate::shared::parse::integer(call.arg(2)).ok_or(TDigestError::BadNumkeys)?;
    let count =
        usize::try_from(count).ok().filter(|&count| count > 0).ok_or(TDigestError::NumkeysNotPositive)?;
    let first_source = 3;
    let after_sources = first_source + count;
    if after_sources > call.argc() {
        return Err(CommandError::WrongArity);
    }
    let options: Vec<&[u8]> = call.args_from(after_sources).collect();
    let compression_at = options.iter().position(|word| is_keyword(word, "COMPRESSION"));
    let replace = options.iter().any(|word| is_keyword(word, "OVERRIDE"));
    if !options.is_empty() && compression_at.is_none() && !replace {
        return Err(TDigestError::WrongKeyword.into());
    }
    let compression = match compression_at {
        Some(at) => Some(parse::compression(options.get(at + 1).ok_or(CommandError::WrongArity)?)?),
        None => None,
    };
    let keys: Vec<_> = (first_source..after_sources).filter_map(|index| call.open_key_at(index)).collect();
    if windowed {
        return merge_windowed(call, &mut destination, &keys, replace, compression);
    }
    if !exists {
        if let Some(sources) = all_windowed(&keys)? {
            return merge_into_new_window(call, &mut destination, &sources, compression);
        }
    }
    let mut sources: Vec<&TDigest> = Vec::with_capacity(count);
    for key in &keys {
        match held(key)?.ok_or(TDigestError::KeyMissing)? {
            Held::Plain(digest) => sources.push(digest),
            Held::Windowed(_) => return Err(TDigestError::WindowedSource.into()),
        }
    }
    let kept = if exists && !replace { destination.get::<TDigest>()? } else { None };
    let merged = TDigest::merge(kept, &sources, compression, call.max_filter_bytes()).map_err(merge_error)?;
    drop(sources);
    store_merged(call, &mut destination, merged)
}

/// A merge's result stored in its destination, the command replicated as it came and
/// notified, and answered.
fn store_merged(call: &Call, destination: &mut Key, merged: impl StoredValue) -> Result<(), CommandError> {
    destination.store(merged)?;
    call.replicate_verbatim();
    call.notify(c"tdigest.merge");
    call.reply_ok();
    Ok(())
}

/// TDIGEST.MERGE into a windowed digest: every source a windowed digest (checked before the
/// destination is rotated to the master's clock), merged span by span at the destination's
/// current span (the core's `WindowTDigest::merged`).
fn merge_windowed(
    call: &Call,
    destination: &mut Key,
    keys: &[Key],
    replace: bool,
    compression: Option<u64>,
) -> Result<(), CommandError> {
    for key in keys {
        if let Held::Plain(_) = held(key)?.ok_or(TDigestError::KeyMissing)? {
            return Err(TDigestError::PlainIntoWindowed.into());
        }
    }
    rotate_for_merge(call, destination.get_mut::<WindowTDigest>()?.ok_or(TDigestError::KeyMissing)?);
    let kept = destination.get::<WindowTDigest>()?.ok_or(TDigestError::KeyMissing)?;
    let mut sources: Vec<&WindowTDigest> = Vec::with_capacity(keys.len());
    for key in keys {
        sources.push(key.get::<WindowTDigest>()?.ok_or(TDigestError::KeyMissing)?);
    }
    let merged = WindowTDigest::merged(kept, replace, &sources, compression, call.max_filter_bytes())
        .map_err(window_merge_error)?;
    drop(sources);
    store_merged(call, destination, merged)
}

/// The sources, when every one is a windowed digest; an error where one is missing.
fn all_windowed(keys: &[Key]) -> Result<Option<Vec<&WindowTDigest>>, CommandError> {
    let mut sources = Vec::with_capacity(keys.len());
    for key in keys {
        match held(key)?.ok_or(TDigestError::KeyMissing)? {
            Held::Windowed(digest) => sources.push(digest),
            Held::Plain(_) => return Ok(None),
        }
    }
    Ok(Some(sources))
}

/// TDIGEST.MERGE of windowed digests into a missing key: a new windowed digest of their
/// window, merged at a span the sources give (the core's `WindowTDigest::merged_into_new`),
/// so that a replica makes the same one, then rotated to the master's clock.
fn merge_into_new_window(
    call: &Call,
    destination: &mut Key,
    sources: &[&WindowTDigest],
    compression: Option<u64>,
) -> Result<(), CommandError> {
    let merged = WindowTDigest::merged_into_new(sources, compression, call.max_filter_bytes())
        .map_err(window_merge_error)?;
    store_merged(call, destination, merged)?;
    if let Some(digest) = destination.get_mut::<WindowTDigest>()? {
        rotate_for_merge(call, digest);
    }
    Ok(())
}

/// A windowed merge's refusal.
fn window_merge_error(error: WindowMergeError) -> TDigestError {
    match error {
        WindowMergeError::Plain(error) => merge_error(error),
        WindowMergeError::Schedule => TDigestError::ScheduleDiffers,
        WindowMergeError::Ahead => TDigestError::SourceAhead,
    }
}

/// A plain merge's refusal, as RedisBloom words it.
fn merge_error(error: MergeError) -> TDigestError {
    match error {
        MergeError::Invalid => TDigestError::CompressionNotPositive,
        MergeError::TooLarge | MergeError::OutOfMemory => TDigestError::MergeAllocationFailed,
        MergeError::Overflow => TDigestError::Overflow,
    }
}
