//! TDIGEST.MERGE into a windowed digest, from windowed digests of its window and generations:
//! span by span, each of the result's generations the plain merge (`TDigest::merge`) of the
//! destination's generation of that span (unless `OVERRIDE`) and the sources', in the
//! command's order, at the plain merge's compression: `COMPRESSION`'s, else the destination's
//! unless `OVERRIDE`, else the largest of the sources'. A digest with no generation in a span
//! takes part in that span's merge as an empty digest, as an empty plain digest takes part in
//! a plain merge (it may add a compression), so that a window whose values all fell in the current
//! span merges exactly as plain digests of the same values do.
//!
//! The destination's current span (the master rotated it to its clock, and replicated that)
//! is the merge's time, as for Count-Min's windowed merge: generations expired by then are
//! left out, and a source's open generation becomes a closed one of the result when its span
//! is older (compressed, as a rotation leaves a closed generation). The sources are only read,
//! so a replica, holding the same values, computes the same result.
//!
//! A merge into a missing key makes a new windowed digest, as a plain merge makes a plain
//! one: of the first source's window, at the latest of the sources' current spans (a time the
//! sources give, so that a replica merges at the same one; the master rotates the result to
//! its clock afterwards), at `COMPRESSION`'s compression or the largest of the sources'.

use super::{checked_capacity, WindowTDigest};
use crate::bytes::AllocationFailed;
use crate::t_digest::digest::{MergeError, TDigest};
use crate::window::Generations;

/// Why a windowed merge made no digest; the destination is as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowMergeError {
    /// What a plain merge refuses: a compression of 0, beyond the maximum or the memory
    /// budget (for every generation that can be alive), no memory, or too many observations.
    Plain(MergeError),
    /// A source of another window or generations.
    Schedule,
    /// A source whose current span is later than the destination's (a clock set back).
    Ahead,
}

impl From<AllocationFailed> for WindowMergeError {
    fn from(_: AllocationFailed) -> WindowMergeError {
        WindowMergeError::Plain(MergeError::OutOfMemory)
    }
}

impl WindowTDigest {
    /// The merge of `sources` (at least one) into a new digest; see the [module
    /// documentation](self).
    pub fn merged_into_new(
        sources: &[&WindowTDigest],
        compression: Option<u64>,
        max_bytes: usize,
    ) -> Result<WindowTDigest, WindowMergeError> {
        let Some(&first) = sources.first() else {
            return Err(WindowMergeError::Schedule);
        };
        let compression = compression
            .or(sources.iter().map(|source| source.compression).max())
            .unwrap_or(first.compression);
        let mut destination = WindowTDigest::new(compression, *first.schedule(), max_bytes)
            .map_err(|error| WindowMergeError::Plain(error.into()))?;
        let latest = sources.iter().map(|source| source.generations.current_start_ms()).max();
        destination.generations.rotate(latest.unwrap_or_default());
        WindowTDigest::merged(&destination, true, sources, Some(compression), max_bytes)
    }

    /// The merge of `sources` into `destination` (kept in the result unless `replace`),
    /// span by span; see the [module documentation](self).
    pub fn merged(
        destination: &WindowTDigest,
        replace: bool,
        sources: &[&WindowTDigest],
        compression: Option<u64>,
        max_bytes: usize,
    ) -> Result<WindowTDigest, WindowMergeError> {
        let now = destination.generations.current_start_ms();
        let schedule = *destination.schedule();
        let compression = compression
            .or((!replace).then_some(destination.compression))
            .or(sources.iter().map(|source| source.compression).max())
            .unwrap_or(destination.compression);
        checked_capacity(compression, &schedule, max_bytes)
            .map_err(|error| WindowMergeError::Plain(error.into()))?;
        for source in sources {
            if *source.schedule() != schedule {
                return Err(WindowMergeError::Schedule);
            }
            if source.generations.current_start_ms() > now {
                return Err(WindowMergeError::Ahead);
            }
        }
        let inputs: Vec<&WindowTDigest> =
            (!replace).then_some(destination).into_iter().chain(sources.iter().copied()).collect();
        let mut starts: Vec<u64> = inputs
            .iter()
            .flat_map(|digest| digest.generations.iter())
            .filter(|generation| schedule.expiry_ms(generation.start_ms) > now)
            .map(|generation| generation.start_ms)
            .collect();
        starts.sort_unstable();
        starts.dedup();
        let plain = WindowMergeError::Plain;
        let mut generations = Generations::new(schedule);
        let empty = TDigest::new(compression, max_bytes).map_err(|error| plain(error.into()))?;
        for &start in &starts {
            let parts: Vec<&TDigest> = inputs
                .iter()
                .map(|digest| {
                    digest
                        .generations
                        .iter()
                        .find(|generation| generation.start_ms == start)
                        .map_or(&empty, |generation| &generation.value)
                })
                .collect();
            let mut merged = TDigest::merge(None, &parts, Some(compression), max_bytes).map_err(plain)?;
            if start != now {
                merged.compress();
            }
            // The live spans laid on the grid as rotations would have: none expires before
            // `now`, so no rotation here drops one.
            generations.rotate(start);
            generations.current_or_open(|| Ok::<_, WindowMergeError>(merged))?;
        }
        generations.rotate(now);
        if WindowTDigest::total_observations(&generations).is_none() {
            return Err(plain(MergeError::Overflow));
        }
        Ok(WindowTDigest::from_generations(compression, generations))
    }
}
