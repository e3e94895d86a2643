//! Time-windowed t-digests (`TDIGEST.CREATE key [COMPRESSION c] WINDOW ms [GENERATIONS g]`):
//! digests that answer about the values of the last window only, "p99 latency this minute".
//!
//! # Design
//! The window's generations are [`crate::window`]'s: time cut into spans of `ceil(ms / g)` on
//! a grid from the epoch, each span that receives values holding them in a generation of its
//! own, a plain [`TDigest`] of the window's compression, dropped once its span ended a window
//! ago. A value added at `t` is counted until `t + ms` at least and never after
//! `t + ms (1 + 1/g)`; at most `g + 1` generations are alive.
//!
//! Reads answer from the window's digest: the views (compressions) of the live generations
//! put together and compressed once more, at up to twice the compression (merging digests that
//! are compressions already loses more than a plain digest does, see
//! [`MERGE_COMPRESSION_FACTOR`] and [`merge_compression`]), so that its quantiles carry the
//! rank error of a plain digest fed the window's values (measured in the tests and by `make
//! bench`, against the exact quantiles of the window's values). Making it on every read would
//! cost a compression of every generation, so two things are kept beside the value, made on
//! the first read that needs them:
//!
//! - the older generations put together (they change only at a rotation): rebuilt on the
//!   first read after a rotation;
//! - the window's digest, that and the current generation's view: rebuilt on the first read
//!   after a write, from two runs of sorted centroids merged in order rather than `g + 1`
//!   digests.
//!
//! Neither is part of the value: the record holds the generations only, so a replica (never
//! read) builds neither, and both depend only on the generations, so every copy answers
//! alike. A master that reads between a generation's expiry and the rotation that drops it
//! (its timer's, or the next write's) puts the live generations together for that read
//! alone.
//!
//! A window of one generation answers from that generation itself: a windowed digest whose
//! values all fell in one span answers exactly as a plain digest given the same writes.
//!
//! # Memory
//! The current generation is a plain digest, whose node array grows to `6 c + 10` nodes
//! before it compresses. A rotation compresses the generation it closes (to the very digest
//! its reads saw), which then keeps about `c` nodes or fewer, and gives back the rest: a
//! window holds one full array and `g` compressed ones, well under `g + 1` plain digests.
//!
//! - [`encoding`](mod@encoding): the RDB record (`rbTDIGwnd`), its impl `Persistent`;
//! - [`merge`]: TDIGEST.MERGE of windowed digests, span by span.

mod encoding;
pub(super) mod merge;
#[cfg(test)]
mod tests;

use std::cell::OnceCell;
use std::cmp::Ordering;
use std::f64::consts::PI;
use std::ops::Deref;

use super::centroid::Centroid;

use super::digest::{capacity_for, memory_for, try_vec, AddError, SizeError, TDigest, TDigestInfo};
use super::nodes::canonical;
use super::MAX_COMPRESSION;
use crate::bytes::AllocationFailed;
use crate::window::{Generations, Rotation, Schedule, Stamped};

/// The window's digest merges the generations' views at up to this multiple of their
/// compression: each view is a compression already, and merging full generations at the same
/// compression again loses more than a plain digest of their values does (measured by `make
/// bench`: a mean rank error 1.6 times a plain digest's over five full generations); at twice
/// it, the window's quantiles carry a plain digest's rank error, for a view of about twice the
/// centroids. More is worse again (at four times: a mean rank error 1.15 times a plain
/// digest's, the largest 2.4 times): the generations' centroids, which overlap, then stay side
/// by side unmerged. That happens at twice too where a generation's centroids are heavier than
/// the window's scale allows at their place in it (small generations, or a distribution that
/// drifts), so the factor is lowered there ([`merge_compression`]).
const MERGE_COMPRESSION_FACTOR: u64 = 2;

/// A t-digest over a sliding window of time; see the [module documentation](self).
pub struct WindowTDigest {
    compression: u64,
    generations: Generations<TDigest>,
    /// The older generations' views put together when there are several, made by the first
    /// read after a rotation: the nodes of their compression.
    older: OnceCell<Part<Vec<Centroid>>>,
    /// Every generation put together (`older` and the current one), made by the first read
    /// after a write or a rotation.
    window: OnceCell<TDigest>,
}

/// The window's digest a read answers from: kept with the value, or made for one read (a
/// master's read that skips generations expired since the last rotation).
pub enum WindowContents<'a> {
    /// Kept with the value (or a plain digest itself), until its next write or rotation.
    Kept(&'a TDigest),
    /// Made for this read alone.
    ForThisRead(TDigest),
}

impl Deref for WindowContents<'_> {
    type Target = TDigest;

    fn deref(&self) -> &TDigest {
        match self {
            WindowContents::Kept(digest) => digest,
            WindowContents::ForThisRead(digest) => digest,
        }
    }
}

/// Whether a windowed digest of `compression` on `schedule` fits `max_bytes` with every
/// generation that can be alive at its full node array; its capacity if so.
fn checked_capacity(compression: u64, schedule: &Schedule, max_bytes: usize) -> Result<usize, SizeError> {
    if compression == 0 {
        return Err(SizeError::Invalid);
    }
    if compression > MAX_COMPRESSION {
        return Err(SizeError::TooLarge);
    }
    let capacity = capacity_for(compression).ok_or(SizeError::TooLarge)?;
    let window_bytes = memory_for(capacity).checked_mul(schedule.max_live_generations() as usize);
    if window_bytes.is_none_or(|bytes| bytes > max_bytes) {
        return Err(SizeError::TooLarge);
    }
    Ok(capacity)
}

impl WindowTDigest {
    /// An empty windowed digest, its current span at the epoch (its creator rotates it to the
    /// clock), if `g + 1` full generations fit `max_bytes`.
    pub fn new(compression: u64, schedule: Schedule, max_bytes: usize) -> Result<WindowTDigest, SizeError> {
        checked_capacity(compression, &schedule, max_bytes)?;
        let generations = Generations::new(schedule).map_err(|_| SizeError::OutOfMemory)?;
        Ok(WindowTDigest::from_generations(compression, generations))
    }

    fn from_generations(compression: u64, generations: Generations<TDigest>) -> WindowTDigest {
        WindowTDigest { compression, generations, older: OnceCell::new(), window: OnceCell::new() }
    }

    /// The compression of every generation and of the window's digest.
    pub fn compression(&self) -> u64 {
        self.compression
    }

    /// The window and its generations.
    pub fn schedule(&self) -> &Schedule {
        self.generations.schedule()
    }

    /// Whether a rotation to `at_ms` would change anything (see
    /// [`Generations::rotates_at`](crate::window::Generations::rotates_at)): most writes
    /// rotate nothing, and need not pay a rotation's bookkeeping to learn it.
    pub fn rotates_at(&self, at_ms: u64) -> bool {
        self.generations.rotates_at(at_ms)
    }

    /// Whether some generation has expired at `now_ms` though no rotation dropped it yet:
    /// only then does a read by that clock answer otherwise than a read of every generation.
    pub fn holds_expired(&self, now_ms: u64) -> bool {
        self.generations.holds_expired(now_ms)
    }

    /// The generations held (expired ones a rotation has not dropped yet included).
    pub fn generations(&self) -> &Generations<TDigest> {
        &self.generations
    }

    /// Observations held, in every generation (what `INFO bf` counts).
    pub fn observations(&self) -> i64 {
        self.generations
            .iter()
            .fold(0i64, |sum, generation| sum.saturating_add(generation.value.observations))
    }

    /// The bytes of every generation's node array, and the 8 a plain digest counts beside its
    /// own: a window of one generation reports what a plain digest of its values does.
    pub fn memory_bytes(&self) -> usize {
        let header = memory_for(0);
        self.generations.iter().fold(header, |sum, generation| sum + (generation.value.node_bytes() - header))
    }

    /// Moves to `now_ms` (see [`Generations::rotate`]): the generation the move closes is
    /// compressed, as every copy of the value does at the same rotation, and the expired
    /// ones are handed back for the caller to free. Allocates nothing but the smaller array
    /// a compression moves into, when there is memory for it.
    pub fn rotate(&mut self, now_ms: u64) -> Rotation<TDigest> {
        let closing = self.generations.current().map(|current| current.start_ms);
        let rotation = self.generations.rotate(now_ms);
        if let (true, Some(closed_start)) = (rotation.advanced, closing) {
            if let Some(closed) =
                self.generations.older_mut().last_mut().filter(|g| g.start_ms == closed_start)
            {
                closed.value.compress();
            }
        }
        if rotation.changed() {
            self.forget_contents();
        }
        rotation
    }

    /// Whether a rotation to `now_ms` would close or drop a generation.
    pub fn needs_rotation(&self, now_ms: u64) -> bool {
        self.generations.needs_rotation(now_ms)
    }

    /// Empties every generation (TDIGEST.RESET), handing them back; the window stays.
    pub fn reset(&mut self) -> Vec<Stamped<TDigest>> {
        self.forget_contents();
        self.generations.clear()
    }

    fn forget_contents(&mut self) {
        self.older.take();
        self.window.take();
    }

    /// Adds each value to the current span's generation (TDIGEST.ADD), opening it for the
    /// span's first values; all or nothing: when a value is not finite, the window's
    /// observations would pass `i64::MAX` or there is no memory, nothing changes (no
    /// generation is opened either).
    pub fn add(&mut self, values: &[f64]) -> Result<(), AddError> {
        if !values.iter().all(|value| value.is_finite()) {
            return Err(AddError::NotFinite);
        }
        let count = i64::try_from(values.len()).map_err(|_| AddError::Overflow)?;
        self.observations().checked_add(count).ok_or(AddError::Overflow)?;
        if let Some(current) = self.generations.current_mut() {
            current.value.add(values)?;
        } else {
            // The budget was checked for every generation when the value was created.
            let mut opened = TDigest::new(self.compression, usize::MAX).map_err(|_| AddError::OutOfMemory)?;
            opened.add(values)?;
            self.generations.current_or_open(|| Ok::<_, AddError>(opened))?;
        }
        self.window.take();
        Ok(())
    }

    /// The window's digest, which every read answers from: of every generation held
    /// (`now_ms` `None`, a replica's read), or of those alive at `now_ms` (a master's). A
    /// window of one generation answers from it, as a plain digest of its values.
    pub fn contents(&self, now_ms: Option<u64>) -> Result<WindowContents<'_>, AllocationFailed> {
        if let Some(now) = now_ms.filter(|&now| self.generations.holds_expired(now)) {
            let live: Vec<&TDigest> = self.generations.live(Some(now)).map(|g| &g.value).collect();
            if let [alone] = live.as_slice() {
                return Ok(WindowContents::Kept(alone));
            }
            return Ok(WindowContents::ForThisRead(self.put_together(&views_of(&live)?)?));
        }
        let older = self.generations.older();
        let digests: Vec<&TDigest> =
            older.iter().map(|g| &g.value).chain(self.generations.current().map(|g| &g.value)).collect();
        if let [alone] = digests.as_slice() {
            return Ok(WindowContents::Kept(alone));
        }
        if let Some(window) = self.window.get() {
            return Ok(WindowContents::Kept(window));
        }
        let window = match self.generations.current() {
            Some(current) if older.len() > 1 => {
                let older = self.older_together(older)?;
                let current = &current.value;
                let current = Part { totals: Totals::of(current), nodes: current.view()?.nodes.as_slice() };
                self.put_together(&[Part { totals: older.totals, nodes: &older.nodes }, current])?
            }
            _ => self.put_together(&views_of(&digests)?)?,
        };
        Ok(WindowContents::Kept(self.window.get_or_init(|| window)))
    }

    /// The older generations' views put together and compressed (at up to twice the compression),
    /// kept until the next rotation.
    fn older_together(&self, older: &[Stamped<TDigest>]) -> Result<&Part<Vec<Centroid>>, AllocationFailed> {
        if let Some(together) = self.older.get() {
            return Ok(together);
        }
        let digests: Vec<&TDigest> = older.iter().map(|g| &g.value).collect();
        let parts = views_of(&digests)?;
        let merged = self.put_together(&parts)?;
        let view = &merged.view()?.nodes;
        let mut nodes = try_vec(view.len())?;
        nodes.extend_from_slice(view);
        let together = Part { totals: Totals::sum(&parts), nodes };
        Ok(self.older.get_or_init(|| together))
    }

    /// A digest for reads of the parts' nodes, compressed at once, at up to twice the window's
    /// compression ([`merge_compression`]).
    fn put_together(&self, parts: &[Part<&[Centroid]>]) -> Result<TDigest, AllocationFailed> {
        let totals = Totals::sum(parts);
        let nodes = in_order(parts)?;
        Ok(TDigest::read_only(
            merge_compression(self.compression, &nodes, totals.observations),
            capacity_for(self.compression).unwrap_or(usize::MAX),
            [totals.min, totals.max],
            nodes,
            totals.observations,
            totals.compressions,
        ))
    }

    /// TDIGEST.INFO's fields: the window's digest's, its total compressions those of the
    /// generations, its memory that of every generation.
    pub fn info(&self, now_ms: Option<u64>) -> Result<TDigestInfo, AllocationFailed> {
        let contents = self.contents(now_ms)?;
        Ok(TDigestInfo {
            compression: self.compression,
            memory_usage: self.memory_bytes(),
            ..contents.info()?
        })
    }

    /// A copy; `None` without memory for it.
    pub fn try_copy(&self) -> Option<WindowTDigest> {
        let generations = self.generations.try_map(TDigest::try_copy).ok()?;
        Some(WindowTDigest::from_generations(self.compression, generations))
    }
}

/// What a part of the window brings to its digest: its totals, and nodes sorted by mean.
struct Part<N> {
    totals: Totals,
    nodes: N,
}

/// The bounds and counts of a part of the window.
#[derive(Clone, Copy)]
struct Totals {
    min: f64,
    max: f64,
    observations: i64,
    compressions: i64,
}

impl Totals {
    fn of(digest: &TDigest) -> Totals {
        Totals {
            min: digest.min,
            max: digest.max,
            observations: digest.observations,
            compressions: digest.total_compressions,
        }
    }

    fn sum<N>(parts: &[Part<N>]) -> Totals {
        let none = Totals { min: f64::MAX, max: -f64::MAX, observations: 0, compressions: 0 };
        parts.iter().fold(none, |sum, part| Totals {
            min: sum.min.min(part.totals.min),
            max: sum.max.max(part.totals.max),
            observations: sum.observations.saturating_add(part.totals.observations),
            compressions: sum.compressions.saturating_add(part.totals.compressions),
        })
    }
}

/// Each digest with the nodes of its view.
fn views_of<'a>(digests: &[&'a TDigest]) -> Result<Vec<Part<&'a [Centroid]>>, AllocationFailed> {
    let mut parts = Vec::new();
    parts.try_reserve_exact(digests.len()).map_err(|_| AllocationFailed)?;
    for &digest in digests {
        parts.push(Part { totals: Totals::of(digest), nodes: digest.view()?.nodes.as_slice() });
    }
    Ok(parts)
}

/// The parts' nodes in one array sorted by mean: two runs merged in order (what a read after
/// a write puts together: the older generations' and the current one's), more sorted.
fn in_order<N: AsRef<[Centroid]>>(parts: &[Part<N>]) -> Result<Vec<Centroid>, AllocationFailed> {
    let mut together = try_vec(parts.iter().map(|part| part.nodes.as_ref().len()).sum())?;
    if let [first, second] = parts {
        let (mut first, mut second) =
            (first.nodes.as_ref().iter().peekable(), second.nodes.as_ref().iter().peekable());
        loop {
            let next = match (first.peek(), second.peek()) {
                (Some(a), Some(b)) if canonical(a, b) == Ordering::Greater => second.next(),
                (Some(_), _) => first.next(),
                (None, _) => second.next(),
            };
            let Some(&node) = next else { break };
            together.push(node);
        }
    } else {
        together.extend(parts.iter().flat_map(|part| part.nodes.as_ref().iter()));
        together.sort_unstable_by(canonical);
    }
    Ok(together)
}

impl std::fmt::Debug for WindowTDigest {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("WindowTDigest")
            .field("compression", &self.compression)
            .field("generations", &self.generations)
            .finish_non_exhaustive()
    }
}

/// The compression the window's digest merges `nodes` (sorted, `observations` in all) at:
/// [`MERGE_COMPRESSION_FACTOR`] times the window's, lowered (to the window's at least) to the
/// largest at which every node of more than one value would be a centroid the window's scale
/// allows where it lies: a node's weight times the compression over `2π N ln N`, at most
/// `q (1 - q)` at either of its edges, as [`TDigest::compress`] asks of a merge. Finer than
/// that, those nodes cannot be split and stay side by side with the lighter ones they
/// overlap, and interpolating between them misplaces quantiles. A node of more than one value
/// at either end (a digest's ends are single values unless TDIGEST.MERGE or a record made
/// them heavier) has no room, and keeps the window's own compression.
///
/// Measured in process against the exact quantiles (99 fractions, reads between writes,
/// compression 100, a window of 1.2 s in 4 generations, 100 streams of 300 uniform values per
/// 85 ms): on a stream drifting by 40 a step, a mean rank error 1.12 times a plain digest's
/// over the window's values, and no stream whose largest error passed twice a plain digest's
/// and 0.005, where twice the compression gave 1.64 times and 4 such streams; on five full
/// generations of 1,000 to 100,000 latencies each it chooses twice the compression, as
/// before, but for a current generation of 30,000 beside generations of 1,000, where the
/// largest error went from 2.3-2.6 to 0.9-1.3 times a plain digest's.
fn merge_compression(compression: u64, nodes: &[Centroid], observations: i64) -> u64 {
    let most = compression.saturating_mul(MERGE_COMPRESSION_FACTOR);
    let total = observations as f64;
    if total <= 1.0 {
        return most;
    }
    let scale = 2.0 * PI * total * total.ln();
    let mut limit = most as f64;
    let mut below = 0.0;
    for node in nodes {
        let weight = node.weight as f64;
        if weight > 1.0 {
            let (start, end) = (below / total, (below + weight) / total);
            let room = (start * (1.0 - start)).min(end * (1.0 - end));
            limit = limit.min(room * scale / weight);
        }
        below += weight;
    }
    // A float to integer cast saturates (NaN gives 0), and the clamp keeps the window's own.
    (limit as u64).min(most).max(compression)
}
