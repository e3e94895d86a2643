//! The TDIGEST.* reads: MIN, MAX, QUANTILE, CDF, RANK, REVRANK, BYRANK, BYREVRANK,
//! `TRIMMED_MEAN` and INFO. Each checks its key before its arguments, as RedisBloom does, and
//! changes nothing (RedisBloom merges the digest's buffer on reads; here a read answers from a
//! compressed view of the digest, kept until its next write). A windowed digest answers from
//! its window's digest (`super::held::read`): on a master, of the generations its clock keeps;
//! the first QUANTILE, CDF, RANK or BYRANK (and reverses) after a write asking for a few
//! values, from the centroids they read alone (`answer_each`).

use super::datatype::METRICS;
use super::error::TDigestError;
use super::held::{held, read, Held};
use super::parse;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::shared::keyspace::Key;
use crate::window::rotation::read_time;
use redbloom_core::bytes::AllocationFailed;
use redbloom_core::t_digest::{TDigest, TDigestInfo, WindowContents, WindowTDigest};

/// The digest a read of `key` answers from: a plain one, or a windowed one's window.
fn digest_of<'a>(call: &Call, key: &'a Key) -> Result<WindowContents<'a>, CommandError> {
    let held = held(key)?.ok_or(TDigestError::KeyMissing)?;
    let now = match held {
        Held::Plain(_) => None,
        Held::Windowed(digest) => read_time(call, digest),
    };
    read(held, now)
}

fn reply_doubles(call: &Call, values: &[f64]) {
    call.reply_array(values.len());
    for &value in values {
        call.reply_double(value);
    }
}

/// TDIGEST.MIN key.
pub fn min(call: &Call) -> Result<(), CommandError> {
    let [min, _] = bounds(call)?;
    call.reply_double(min);
    Ok(())
}

/// TDIGEST.MAX key.
pub fn max(call: &Call) -> Result<(), CommandError> {
    let [_, max] = bounds(call)?;
    call.reply_double(max);
    Ok(())
}

/// The smallest and largest values of the digest at the call's key (NaN for none).
fn bounds(call: &Call) -> Result<[f64; 2], CommandError> {
    let key = call.open_key();
    match held(&key)?.ok_or(TDigestError::KeyMissing)? {
        Held::Plain(digest) => Ok([digest.min(), digest.max()]),
        Held::Windowed(digest) => {
            digest.bounds(read_time(call, digest)).map_err(|_| TDigestError::AllocationFailed.into())
        }
    }
}

/// The arguments from position 2 on, each read by `read`, stopping at the first refused.
fn arguments<T>(
    call: &Call,
    read: impl Fn(&[u8]) -> Result<T, CommandError>,
) -> Result<Vec<T>, CommandError> {
    call.args_from(2).map(read).collect()
}

/// A read of one answer per argument from position 2 on: the key checked first, then every
/// argument (`parse`), answered by `plain` of a plain digest, or by `windowed` of a windowed
/// one at its read time (which makes only what few answers read, right after a write).
fn answer_each<A, T>(
    call: &Call,
    parse: impl Fn(&[u8]) -> Result<A, CommandError>,
    plain: impl FnOnce(&TDigest, &[A]) -> Result<Vec<T>, AllocationFailed>,
    windowed: impl FnOnce(&WindowTDigest, Option<u64>, &[A]) -> Result<Vec<T>, AllocationFailed>,
) -> Result<Vec<T>, CommandError> {
    let key = call.open_key();
    let held = held(&key)?.ok_or(TDigestError::KeyMissing)?;
    let arguments = arguments(call, parse)?;
    let answers = match held {
        Held::Plain(digest) => plain(digest, &arguments),
        Held::Windowed(digest) => windowed(digest, read_time(call, digest), &arguments),
    };
    let answers = answers.map_err(|_| TDigestError::AllocationFailed)?;
    METRICS.count_lookups(answers.len(), 0);
    Ok(answers)
}

/// TDIGEST.QUANTILE key quantile [quantile ...].
pub fn quantile(call: &Call) -> Result<(), CommandError> {
    let parse = |text: &[u8]| {
        let quantile = parse::double(text).ok_or(TDigestError::BadQuantile)?;
        if (0.0..=1.0).contains(&quantile) {
            Ok(quantile)
        } else {
            Err(TDigestError::QuantileOutOfRange.into())
        }
    };
    let values = answer_each(call, parse, TDigest::quantiles, WindowTDigest::quantiles)?;
    reply_doubles(call, &values);
    Ok(())
}

/// TDIGEST.CDF key value [value ...].
pub fn cdf(call: &Call) -> Result<(), CommandError> {
    let parse = |text: &[u8]| parse::double(text).ok_or(TDigestError::BadCdf.into());
    let fractions = answer_each(call, parse, TDigest::cdfs, WindowTDigest::cdfs)?;
    reply_doubles(call, &fractions);
    Ok(())
}

/// TDIGEST.RANK key value [value ...].
pub fn rank(call: &Call) -> Result<(), CommandError> {
    ranks(call, false)
}

/// TDIGEST.REVRANK key value [value ...].
pub fn rev_rank(call: &Call) -> Result<(), CommandError> {
    ranks(call, true)
}

fn ranks(call: &Call, reverse: bool) -> Result<(), CommandError> {
    let parse = |text: &[u8]| parse::double(text).ok_or(TDigestError::BadRankValue.into());
    let plain = if reverse { TDigest::rev_ranks } else { TDigest::ranks };
    let windowed = |digest: &WindowTDigest, now, values: &[f64]| digest.ranks(now, values, reverse);
    let ranks = answer_each(call, parse, plain, windowed)?;
    call.reply_array(ranks.len());
    for rank in ranks {
        call.reply_integer(rank);
    }
    Ok(())
}

/// TDIGEST.BYRANK key rank [rank ...].
pub fn by_rank(call: &Call) -> Result<(), CommandError> {
    by_ranks(call, false)
}

/// TDIGEST.BYREVRANK key rank [rank ...].
pub fn by_rev_rank(call: &Call) -> Result<(), CommandError> {
    by_ranks(call, true)
}

fn by_ranks(call: &Call, reverse: bool) -> Result<(), CommandError> {
    let parse = |text: &[u8]| {
        let rank = crate::shared::parse::integer(text).ok_or(TDigestError::BadRank)?;
        u64::try_from(rank).map_err(|_| TDigestError::NegativeRank.into())
    };
    let plain = if reverse { TDigest::by_rev_ranks } else { TDigest::by_ranks };
    let windowed = |digest: &WindowTDigest, now, ranks: &[u64]| digest.by_ranks(now, ranks, reverse);
    let values = answer_each(call, parse, plain, windowed)?;
    reply_doubles(call, &values);
    Ok(())
}

/// `TDIGEST.TRIMMED_MEAN key low_cut_percentile high_cut_percentile`.
pub fn trimmed_mean(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let digest = digest_of(call, &key)?;
    let low = parse::double(call.arg(2)).ok_or(TDigestError::BadLowCut)?;
    let high = parse::double(call.arg(3)).ok_or(TDigestError::BadHighCut)?;
    if !(0.0..=1.0).contains(&low) || !(0.0..=1.0).contains(&high) {
        return Err(TDigestError::CutsOutOfRange.into());
    }
    if low >= high {
        return Err(TDigestError::CutsOutOfOrder.into());
    }
    let mean = digest.trimmed_mean(low, high).map_err(|_| TDigestError::AllocationFailed)?;
    METRICS.count_lookups(1, 0);
    call.reply_double(mean);
    Ok(())
}

/// TDIGEST.INFO key: nine pairs, a flat array under RESP2 and a map under RESP3, of the digest
/// as a read sees it (RedisBloom's shows what its last read left): see the contract. A
/// windowed digest's are its window's, then `Window` and `Generations`.
pub fn info(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let (info, window) = match held(&key)?.ok_or(TDigestError::KeyMissing)? {
        Held::Plain(digest) => (digest.info(), None),
        Held::Windowed(digest) => {
            let schedule = digest.schedule();
            (
                digest.info(read_time(call, digest)),
                Some([schedule.window_ms(), u64::from(schedule.generations())]),
            )
        }
    };
    let info: TDigestInfo = info.map_err(|_| TDigestError::AllocationFailed)?;
    let fields = [
        (c"Compression", info.compression as i64),
        (c"Capacity", info.capacity as i64),
        (c"Merged nodes", info.merged_nodes as i64),
        (c"Unmerged nodes", info.unmerged_nodes as i64),
        (c"Merged weight", info.merged_weight),
        (c"Unmerged weight", info.unmerged_weight),
        (c"Observations", info.observations),
        (c"Total compressions", info.total_compressions),
        (c"Memory usage", info.memory_usage as i64),
    ];
    let window_fields = window.map(|[window_ms, generations]| {
        [(c"Window", window_ms as i64), (c"Generations", generations as i64)]
    });
    call.reply_map(fields.len() + window_fields.map_or(0, |fields| fields.len()));
    for (label, value) in fields.into_iter().chain(window_fields.into_iter().flatten()) {
        call.reply_simple(label);
        call.reply_integer(value);
    }
    Ok(())
}
