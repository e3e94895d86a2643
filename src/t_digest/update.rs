//! TDIGEST.CREATE, RESET, ADD and MERGE: the writes, each replicated as it was sent.
//!
//! A digest buffers values as RedisBloom's does and compresses only when its node array fills,
//! at the same add on a master and its replicas, which see the same writes. Its record holds
//! every node (the core's `encoding`), and a compression depends only on which nodes there are,
//! so master, replica, AOF and restart hold the same digest bit for bit and answer alike.

use super::datatype::METRICS;
use super::error::TDigestError;
use super::parse;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::shared::metrics;
use crate::shared::parse::is_keyword;
use redbloom_core::t_digest::{AddError, MergeError, SizeError, TDigest, DEFAULT_COMPRESSION};

/// Values TDIGEST.ADD reads without allocating.
const FEW_VALUES: usize = 16;

/// TDIGEST.CREATE key [COMPRESSION compression].
pub fn create(call: &Call) -> Result<(), CommandError> {
    if call.argc() != 2 && call.argc() != 4 {
        return Err(CommandError::WrongArity);
    }
    let mut key = call.open_key_for_writing();
    if key.get::<TDigest>()?.is_some() {
        return Err(TDigestError::KeyExists.into());
    }
    let compression = if call.argc() == 4 {
        // RedisBloom looks for the keyword in either place and reads the last word as the value.
        if !is_keyword(call.arg(2), "COMPRESSION") && !is_keyword(call.arg(3), "COMPRESSION") {
            return Err(TDigestError::WrongKeyword.into());
        }
        parse::compression(call.arg(3))?
    } else {
        DEFAULT_COMPRESSION
    };
    let digest = TDigest::new(compression, call.max_filter_bytes()).map_err(|error| match error {
        SizeError::Invalid => TDigestError::CompressionNotPositive,
        SizeError::TooLarge | SizeError::OutOfMemory => {
            METRICS.count_refused_creation();
            TDigestError::AllocationFailed
        }
    })?;
    key.store(digest)?;
    call.replicate_verbatim();
    call.notify(c"tdigest.create");
    call.reply_ok();
    Ok(())
}

/// TDIGEST.RESET key: empties the digest, keeping its compression.
pub fn reset(call: &Call) -> Result<(), CommandError> {
    let mut key = call.open_key_for_writing();
    let digest = key.get_mut::<TDigest>()?.ok_or(TDigestError::KeyMissing)?;
    let before = metrics::Measured::footprint(&*digest);
    digest.reset();
    metrics::changed(before, &*digest);
    call.replicate_verbatim();
    call.notify(c"tdigest.reset");
    call.reply_ok();
    Ok(())
}

/// TDIGEST.ADD key value [value ...]: every value is read before any is added, and the add is
/// all or nothing.
pub fn add(call: &Call) -> Result<(), CommandError> {
    let mut key = call.open_key_for_writing();
    // One lookup: the key is checked before the values, as RedisBloom does.
    let digest = key.get_mut::<TDigest>()?.ok_or(TDigestError::KeyMissing)?;
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
    let before = metrics::Measured::footprint(&*digest);
    digest.add(values).map_err(|error| match error {
        AddError::NotFinite => TDigestError::ValueNotFinite,
        AddError::Overflow => TDigestError::Overflow,
        AddError::OutOfMemory => TDigestError::AllocationFailed,
    })?;
    metrics::changed(before, &*digest);
    METRICS.count_adds(values.len());
    call.replicate_verbatim();
    call.notify(c"tdigest.add");
    call.reply_ok();
    Ok(())
}

/// TDIGEST.MERGE destination numkeys source [source ...] [COMPRESSION compression] [OVERRIDE]:
/// the destination becomes a new digest of the sources (and of itself, when it exists and
/// OVERRIDE is absent). RedisBloom's checks, in its order; the options are found by search
/// among the words after the sources, as there.
pub fn merge(call: &Call) -> Result<(), CommandError> {
    let mut destination = call.open_key_for_writing();
    let exists = destination.get::<TDigest>()?.is_some();
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
    let mut sources = Vec::with_capacity(count);
    for key in &keys {
        sources.push(key.get::<TDigest>()?.ok_or(TDigestError::KeyMissing)?);
    }
    let kept = if exists && !replace { destination.get::<TDigest>()? } else { None };
    let merged =
        TDigest::merge(kept, &sources, compression, call.max_filter_bytes()).map_err(
            |error| match error {
                MergeError::Invalid => TDigestError::CompressionNotPositive,
                MergeError::TooLarge | MergeError::OutOfMemory => TDigestError::MergeAllocationFailed,
                MergeError::Overflow => TDigestError::Overflow,
            },
        )?;
    drop(sources);
    destination.store(merged)?;
    call.replicate_verbatim();
    call.notify(c"tdigest.merge");
    call.reply_ok();
    Ok(())
}
