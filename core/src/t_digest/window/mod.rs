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
//! put together and compressed once more, a digest of the same compression as a plain one
//! fed the window's values, so that its quantiles carry the same rank error (measured in the
//! tests, against the exact quantiles of the window's values). Making it on every read would
//! cost a compression of every generation, so two digests are kept beside the value, made
//! on the first read that needs them:
//!
//! - the older generations put together (which change only at a rotation): rebuilt on the
//!   first read after a rotation;
//! - the window's digest, that and the current generation: rebuilt on the first read after a
//!   write, from two compressed digests rather than `g + 1`.
//!
//! A window of one generation answers from that generation itself: a windowed digest whose
//! values all fell in one span answers exactly as a plain digest given the same writes.
//!
//! Neither is part of the value: the record holds the generations only, so a replica (never
//! read) builds neither, and both depend only on the generations, so every copy answers
//! alike. A master that reads between a generation's expiry and the rotation that drops it
//! (its timer's, or the next write's) puts the live generations together for that read
//! alone.
//!
//! # Memory
//! The current generation is a plain digest, whose node array grows to `6 c + 10` nodes
//! before it compresses. A rotation compresses the generation it closes (to the very digest
//! its reads saw), which then keeps about `c` nodes or fewer, and gives back the rest: a
//! window holds one full array and `g` compressed ones, well under `g + 1` plain digests.
//!
//! - [`encoding`](mod@encoding): the RDB record (`rbTDIGwnd`), its impl `Persistent`.

mod encoding;
#[cfg(test)]
mod tests;

use std::cell::OnceCell;
use std::ops::Deref;

use super::digest::{capacity_for, memory_for, AddError, SizeError, TDigest, TDigestInfo};
use super::nodes::Nodes;
use super::MAX_COMPRESSION;
use crate::bytes::AllocationFailed;
use crate::window::{Generations, Rotation, Schedule, Stamped};

/// A t-digest over a sliding window of time; see the [module documentation](self).
pub struct WindowTDigest {
    compression: u64,
    generations: Generations<TDigest>,
    /// The older generations put together when there are several, made by the first read
    /// after a rotation.
    older: OnceCell<TDigest>,
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
            return Ok(match live.as_slice() {
                [alone] => WindowContents::Kept(alone),
                parts => WindowContents::ForThisRead(self.put_together(parts)?),
            });
        }
        let older: Option<&TDigest> = match self.generations.older() {
            [] => None,
            [alone] => Some(&alone.value),
            many => Some(if let Some(older) = self.older.get() {
                older
            } else {
                let parts: Vec<&TDigest> = many.iter().map(|g| &g.value).collect();
                let older = self.put_together(&parts)?;
                self.older.get_or_init(|| older)
            }),
        };
        let parts: Vec<&TDigest> =
            older.into_iter().chain(self.generations.current().map(|current| &current.value)).collect();
        if let [alone] = parts.as_slice() {
            return Ok(WindowContents::Kept(alone));
        }
        if let Some(window) = self.window.get() {
            return Ok(WindowContents::Kept(window));
        }
        let window = self.put_together(&parts)?;
        Ok(WindowContents::Kept(self.window.get_or_init(|| window)))
    }

    /// A digest of the nodes of every part's view, its bounds and observations theirs:
    /// compressed by its own first read, as a plain digest of those values would be.
    fn put_together(&self, parts: &[&TDigest]) -> Result<TDigest, AllocationFailed> {
        let capacity = capacity_for(self.compression).unwrap_or(usize::MAX);
        let mut len = 0;
        for part in parts {
            len += part.view()?.nodes.len();
        }
        let mut nodes = Nodes::with_room_for(len, capacity)?;
        let (mut min, mut max, mut observations, mut compressions) = (f64::MAX, -f64::MAX, 0i64, 0i64);
        for part in parts {
            for &node in &part.view()?.nodes {
                // Room for every node was made above.
                nodes.push(node, capacity)?;
            }
            min = min.min(part.min);
            max = max.max(part.max);
            observations = observations.saturating_add(part.observations);
            compressions = compressions.saturating_add(part.total_compressions);
        }
        Ok(TDigest::from_parts(self.compression, capacity, min, max, nodes, observations, compressions))
    }

    /// TDIGEST.INFO's fields: the window's digest's, its total compressions those of the
    /// generations, its memory that of every generation.
    pub fn info(&self, now_ms: Option<u64>) -> Result<TDigestInfo, AllocationFailed> {
        let contents = self.contents(now_ms)?;
        Ok(TDigestInfo { memory_usage: self.memory_bytes(), ..contents.info()? })
    }

    /// A copy; `None` without memory for it.
    pub fn try_copy(&self) -> Option<WindowTDigest> {
        let generations = self.generations.try_map(TDigest::try_copy).ok()?;
        Some(WindowTDigest::from_generations(self.compression, generations))
    }
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
