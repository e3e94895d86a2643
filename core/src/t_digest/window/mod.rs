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
//! Reads answer from the window's digest, cut from the live generations' curves summed
//! ([`curve`]): each generation's digest estimates how many of its values lie below any value,
//! the sum of those is the window's, and the window's digest is that sum cut into centroids
//! that do not overlap, at [`WINDOW_COMPRESSION_FACTOR`] times the compression. Merging the
//! generations' centroids instead (as this module did before) leaves centroids of different
//! generations side by side, which misplaces quantiles wherever heavy ones overlap: on a stream
//! that does not drift, twice a plain digest's rank error and more. Summed, the generations'
//! own errors partly cancel, and the window's quantiles carry about the rank error of a plain
//! digest fed the window's values, mostly less (measured in the tests and by `make bench`,
//! against the exact quantiles of the window's values). Making it on every read would sum every
//! generation, so two things are kept beside the value, made on the first read that needs them:
//!
//! - the older generations' part: one generation's curve, or the curves of several summed
//!   (they change only at a rotation), cut as the window's digest is and kept as the curve of
//!   those centroids: about twice as many points as one digest has, however many generations;
//!   made again by the first read after a rotation;
//! - the window's digest, cut from that curve and the current generation's summed as the cut
//!   walks them (about 460 points at compression 100): made again by the second read after a
//!   write. The first one, where it asks for few values (a quantile, a CDF, a rank), makes only
//!   the centroids those values are read from, each found by binary searches
//!   ([`curve::SummedCut`], the very centroids of the whole cut), so that a key written and
//!   read in turn does not pay for the whole cut at every read.
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
//! its reads saw), which then keeps about `c` nodes or fewer (102 at `c` = 100, 22 at 10), and
//! gives back the rest: a
//! window holds one full array and `g` compressed ones, well under `g + 1` plain digests.
//!
//! - [`encoding`](mod@encoding): the RDB record (`rbTDIGwnd`), its impl `Persistent`;
//! - [`merge`]: TDIGEST.MERGE of windowed digests, span by span;
//! - [`curve`]: the generations' estimated counts, summed and cut into the window's digest;
//! - [`trimmed_mean`](mod@trimmed_mean): `TDIGEST.TRIMMED_MEAN` of a window, from the generations'
//!   own centroids.

mod curve;
mod encoding;
pub(super) mod merge;
#[cfg(test)]
mod tests;
mod trimmed_mean;

use std::cell::{Cell, OnceCell};
use std::ops::Deref;

use self::curve::{Curve, SummedCut};
use self::trimmed_mean::Trimming;
use super::digest::{capacity_for, memory_for, AddError, SizeError, TDigest, TDigestInfo};
use super::reads::Centroids;
use super::MAX_COMPRESSION;
use crate::bytes::AllocationFailed;
use crate::window::{Generations, Rotation, Schedule, Stamped};

/// The window's digest is cut from the sum of the generations' curves at this multiple of
/// their compression. Its centroids sample that curve, and reads interpolate between them:
/// the finer the cut, the closer the reads follow the curve, for more centroids to walk.
/// Measured in process against the exact quantiles (compression 100, latencies, five full
/// generations of 10,000 values, three streams): the mean rank error over the window's
/// values, against a plain digest's, is 1.35-1.43 times at twice the compression (73
/// centroids; a plain digest holds 60), 1.20-1.26 at three times (101), 1.11-1.18 at four
/// (128) and 1.01-1.07 at eight (229); the largest error at four times 0.98-1.01 times a
/// plain digest's. The generations' centroids merged at twice the compression, as before,
/// gave 1.07-1.23 and 1.24-1.61. A read right after a write took 7.7, 8.4, 8.8 and 10.6 µs
/// at two, three, four and eight times (7.6 merged; a plain digest 6.0-6.6). Those were
/// measured while a digest merged as RedisBloom's; since its generations merge at
/// `MERGE_SCALE` (2) times the compression, four times is twice their scale, and on `make
/// bench`'s window stream (five generations of 100,000 values) the window's mean rank error is
/// 0.00224 against a plain digest's 0.00219 (largest 0.00405 against 0.00630); eight times
/// gave 0.00163 for twice the centroids every read walks.
const WINDOW_COMPRESSION_FACTOR: u64 = 4;

/// The first read after a write that asks for this many values or fewer makes only the
/// centroids it reads ([`SummedCut`]); one asking for more makes the window's whole digest.
/// Measured in process (five full generations at compression 100, a value added before
/// each read, two runs): the whole digest and a read of it took 6.8-8.0 µs whatever the
/// values asked for; one, three, six, ten, twelve and sixteen values made from the cut 3.6,
/// 4.2, 4.8-5.1, 5.9-6.4, 6.3-6.4 and 7.4-7.7 (a plain digest's read after an add 2.5-2.7).
const FEW_ASKED: usize = 12;

/// A t-digest over a sliding window of time; see the [module documentation](self).
pub struct WindowTDigest {
    compression: u64,
    generations: Generations<TDigest>,
    /// The older generations' part of the window ([`older_part`](Self::older_part)), made by
    /// the first read after a rotation.
    older: OnceCell<Part<Curve>>,
    /// Every generation put together (`older` and the current one), made by the first read
    /// after a write or a rotation that [`with_summed_cut`](Self::with_summed_cut) leaves to
    /// it.
    window: OnceCell<TDigest>,
    /// What `TRIMMED_MEAN` reads of the same generations, made by its first call after a
    /// write or a rotation.
    trimming: OnceCell<Trimming>,
    /// Whether a read answered from the cut, its centroids made one by one, since the last
    /// write or rotation: the next read makes the window's whole digest and keeps it, so that
    /// reads with no write between them walk a kept digest.
    read_from_cut: Cell<bool>,
}

/// The digest a read answers from: a plain digest itself, or a window's digest, kept with the
/// value or made for one read (a master's read that skips generations expired since the last
/// rotation), with the generations it was cut from.
pub struct WindowContents<'a> {
    digest: Contents<'a>,
    /// The generations the digest was cut from; none when it is a digest of its own (a plain
    /// digest, or a window's one generation).
    cut_from: Vec<&'a TDigest>,
    /// Where the curves of `cut_from` are kept, when the digest is.
    trimming: Option<&'a OnceCell<Trimming>>,
}

enum Contents<'a> {
    /// Kept with the value (or a plain digest itself), until its next write or rotation.
    Kept(&'a TDigest),
    /// Made for this read alone.
    ForThisRead(TDigest),
}

impl<'a> WindowContents<'a> {
    /// A digest that answers for itself: a plain one, or a window's only generation.
    pub fn plain(digest: &'a TDigest) -> WindowContents<'a> {
        WindowContents { digest: Contents::Kept(digest), cut_from: Vec::new(), trimming: None }
    }

    /// `TDIGEST.TRIMMED_MEAN`: the digest's own, or, of a window of several generations, from
    /// the generations' centroids, whose means are the observations' own
    /// ([`trimmed_mean`](mod@trimmed_mean)). Named as the digest's, which it stands for.
    pub fn trimmed_mean(&self, low: f64, high: f64) -> Result<f64, AllocationFailed> {
        if self.cut_from.is_empty() {
            return self.digest().trimmed_mean(low, high);
        }
        let Some(kept) = self.trimming else {
            return Trimming::of(&self.cut_from)?.mean(&self.cut_from, low, high);
        };
        let trimming = if let Some(trimming) = kept.get() {
            trimming
        } else {
            let trimming = Trimming::of(&self.cut_from)?;
            kept.get_or_init(|| trimming)
        };
        trimming.mean(&self.cut_from, low, high)
    }

    fn digest(&self) -> &TDigest {
        match &self.digest {
            Contents::Kept(digest) => digest,
            Contents::ForThisRead(digest) => digest,
        }
    }
}

impl Deref for WindowContents<'_> {
    type Target = TDigest;

    fn deref(&self) -> &TDigest {
        self.digest()
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
        let generations = Generations::new(schedule);
        Ok(WindowTDigest::from_generations(compression, generations))
    }

    /// The generations' observations together, or `None` past `i64::MAX`: what a load refuses,
    /// and so what a merge must refuse too (each span within it is not enough).
    fn total_observations(generations: &Generations<TDigest>) -> Option<i64> {
        generations.iter().try_fold(0i64, |sum, generation| sum.checked_add(generation.value.observations()))
    }

    fn from_generations(compression: u64, generations: Generations<TDigest>) -> WindowTDigest {
        WindowTDigest {
            compression,
            generations,
            older: OnceCell::new(),
            window: OnceCell::new(),
            trimming: OnceCell::new(),
            read_from_cut: Cell::new(false),
        }
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

    /// When a rotation will next close or drop a generation; `None` when there is no
    /// generation ([`Generations::next_rotation_ms`](crate::window::Generations::next_rotation_ms)).
    pub fn next_rotation_ms(&self) -> Option<u64> {
        self.generations.next_rotation_ms()
    }

    /// When the current span's generation closes, while no write has opened it
    /// ([`Generations::unopened_closes_ms`](crate::window::Generations::unopened_closes_ms)).
    pub fn unopened_closes_ms(&self) -> Option<u64> {
        self.generations.unopened_closes_ms()
    }

    /// Empties every generation (TDIGEST.RESET), handing them back; the window stays.
    pub fn reset(&mut self) -> Vec<Stamped<TDigest>> {
        self.forget_contents();
        self.generations.clear()
    }

    fn forget_contents(&mut self) {
        self.older.take();
        self.forget_window();
    }

    /// Drops what is kept of the window's digest for reads: a write to the current
    /// generation changes it, not the older generations' sum.
    fn forget_window(&mut self) {
        self.window.take();
        self.trimming.take();
        self.read_from_cut.set(false);
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
        self.forget_window();
        Ok(())
    }

    /// The window's digest, which every read answers from (or, for the first few values
    /// asked after a write, its centroids they read: [`quantiles`](Self::quantiles)): of
    /// every generation held (`now_ms` `None`, a replica's read), or of those alive at
    /// `now_ms` (a master's). A window of one generation answers from it, as a plain digest
    /// of its values.
    pub fn contents(&self, now_ms: Option<u64>) -> Result<WindowContents<'_>, AllocationFailed> {
        if let Some(now) = now_ms.filter(|&now| self.generations.holds_expired(now)) {
            let live: Vec<&TDigest> = self.generations.live(Some(now)).map(|g| &g.value).collect();
            if let [alone] = live.as_slice() {
                return Ok(WindowContents::plain(alone));
            }
            let parts = parts_of(&live)?;
            let digest = Contents::ForThisRead(self.put_together(&borrowed(&parts))?);
            return Ok(WindowContents { digest, cut_from: live, trimming: None });
        }
        let older = self.generations.older();
        let digests: Vec<&TDigest> =
            older.iter().map(|g| &g.value).chain(self.generations.current().map(|g| &g.value)).collect();
        if let [alone] = digests.as_slice() {
            return Ok(WindowContents::plain(alone));
        }
        let window = if let Some(window) = self.window.get() {
            window
        } else {
            let window = match self.generations.current() {
                Some(current) if !older.is_empty() => {
                    let older = self.older_part(older)?;
                    let current = Part::of(&current.value)?;
                    self.put_together(&[older.borrowed(), current.borrowed()])?
                }
                _ => self.put_together(&borrowed(&parts_of(&digests)?))?,
            };
            self.window.get_or_init(|| window)
        };
        Ok(WindowContents {
            digest: Contents::Kept(window),
            cut_from: digests,
            trimming: Some(&self.trimming),
        })
    }

    /// The older generations' part of the window, kept until the next rotation: one
    /// generation's curve, or several generations' curves summed and cut as the window's
    /// digest is, as the curve of that cut (about twice as many points as one digest's curve,
    /// however many generations).
    fn older_part(&self, older: &[Stamped<TDigest>]) -> Result<&Part<Curve>, AllocationFailed> {
        if let Some(part) = self.older.get() {
            return Ok(part);
        }
        let part = if let [alone] = older {
            Part::of(&alone.value)?
        } else {
            let digests: Vec<&TDigest> = older.iter().map(|g| &g.value).collect();
            let parts = parts_of(&digests)?;
            let curves: Vec<&Curve> = parts.iter().map(|part| &part.curve).collect();
            let totals = Totals::sum(&parts);
            let cut = Curve::sum(&curves)?.centroids(self.window_compression())?;
            Part { totals, curve: Curve::of_centroids(&cut, totals.min, totals.max)? }
        };
        Ok(self.older.get_or_init(|| part))
    }

    /// The older generations and the current one, where the window's digest read at `now_ms`
    /// would be made of the older part and the current generation (as [`contents`](Self::contents)
    /// makes it: no generation expired unrotated, some older, a current one) and is not kept
    /// yet: what a read right after a write finds, and answers without making that digest.
    fn unmade_parts(&self, now_ms: Option<u64>) -> Option<(&[Stamped<TDigest>], &Stamped<TDigest>)> {
        let expired = now_ms.is_some_and(|now| self.generations.holds_expired(now));
        let older = self.generations.older();
        let kept = self.window.get().is_some();
        self.generations
            .current()
            .filter(|_| !expired && !kept && !older.is_empty())
            .map(|current| (older, current))
    }

    /// TDIGEST.MIN and TDIGEST.MAX of the window read at `now_ms` (NaN for no value), as
    /// [`contents`](Self::contents) answers: of the generations' bounds alone where its digest
    /// is not kept and would be made of the older part and the current generation, as
    /// after a write.
    pub fn bounds(&self, now_ms: Option<u64>) -> Result<[f64; 2], AllocationFailed> {
        let Some((older, current)) = self.unmade_parts(now_ms) else {
            let whole = self.contents(now_ms)?;
            return Ok([whole.min(), whole.max()]);
        };
        let older = self.older_part(older)?;
        let totals = Totals::sum_of([older.totals, Totals::of(&current.value)].into_iter());
        Ok(if totals.observations > 0 { [totals.min, totals.max] } else { [f64::NAN; 2] })
    }

    /// TDIGEST.QUANTILE of the window read at `now_ms`: what [`contents`](Self::contents)
    /// answers, made from the window's cut where only a few centroids are read.
    pub fn quantiles(&self, now_ms: Option<u64>, quantiles: &[f64]) -> Result<Vec<f64>, AllocationFailed> {
        self.answer(
            now_ms,
            quantiles.len(),
            |cut, _| cut.quantiles(quantiles),
            |whole| whole.quantiles(quantiles),
        )
    }

    /// TDIGEST.BYRANK (`reverse`: BYREVRANK) of the window read at `now_ms`, as
    /// [`quantiles`](Self::quantiles) answers.
    pub fn by_ranks(
        &self,
        now_ms: Option<u64>,
        ranks: &[u64],
        reverse: bool,
    ) -> Result<Vec<f64>, AllocationFailed> {
        let of_cut =
            |cut: &Centroids<'_, SummedCut<'_>>, observations| cut.by_ranks(ranks, reverse, observations);
        let of_whole =
            |whole: &TDigest| if reverse { whole.by_rev_ranks(ranks) } else { whole.by_ranks(ranks) };
        self.answer(now_ms, ranks.len(), of_cut, of_whole)
    }

    /// TDIGEST.CDF of the window read at `now_ms`, as [`quantiles`](Self::quantiles) answers.
    pub fn cdfs(&self, now_ms: Option<u64>, values: &[f64]) -> Result<Vec<f64>, AllocationFailed> {
        self.answer(now_ms, values.len(), |cut, _| cut.cdfs(values), |whole| whole.cdfs(values))
    }

    /// TDIGEST.RANK (`reverse`: REVRANK) of the window read at `now_ms`, as
    /// [`quantiles`](Self::quantiles) answers.
    pub fn ranks(
        &self,
        now_ms: Option<u64>,
        values: &[f64],
        reverse: bool,
    ) -> Result<Vec<i64>, AllocationFailed> {
        let of_cut =
            |cut: &Centroids<'_, SummedCut<'_>>, observations| cut.ranks(values, reverse, observations);
        let of_whole = |whole: &TDigest| if reverse { whole.rev_ranks(values) } else { whole.ranks(values) };
        self.answer(now_ms, values.len(), of_cut, of_whole)
    }

    /// The answers to `asked` values: `of_cut` of the window's centroids made one by one
    /// ([`with_summed_cut`](Self::with_summed_cut)) where they are, else `of_whole` of the
    /// window's digest; none for no value.
    fn answer<T>(
        &self,
        now_ms: Option<u64>,
        asked: usize,
        of_cut: impl FnOnce(&Centroids<'_, SummedCut<'_>>, i64) -> Result<Vec<T>, AllocationFailed>,
        of_whole: impl FnOnce(&TDigest) -> Result<Vec<T>, AllocationFailed>,
    ) -> Result<Vec<T>, AllocationFailed> {
        if asked == 0 {
            return Ok(Vec::new());
        }
        match self.with_summed_cut(now_ms, asked, of_cut)? {
            Some(answers) => Ok(answers),
            None => of_whole(&*self.contents(now_ms)?),
        }
    }

    /// `read` of the window's centroids (and its observations) made one by one from the cut
    /// of its older part and current generation summed, which answers as the whole cut would
    /// ([`SummedCut`]), for the first read since the last write or rotation, when it asks for
    /// [`FEW_ASKED`] values or fewer; `None` for the others, which read the window's digest,
    /// kept from the second one on, and where the cut is not two such parts or could differ:
    /// a window of one generation (a plain digest's answers), with no current generation (no
    /// write in the current span yet), read on a master past a generation's expiry that no
    /// rotation has dropped yet (a digest made for that read), whose digest is kept already,
    /// of one observation or less, of 2^52 or more, or of values near the doubles' ends.
    fn with_summed_cut<T>(
        &self,
        now_ms: Option<u64>,
        asked: usize,
        read: impl FnOnce(&Centroids<'_, SummedCut<'_>>, i64) -> Result<T, AllocationFailed>,
    ) -> Result<Option<T>, AllocationFailed> {
        let Some((older, current)) = self.unmade_parts(now_ms).filter(|_| asked <= FEW_ASKED) else {
            return Ok(None);
        };
        if self.read_from_cut.replace(true) {
            return Ok(None);
        }
        let older = self.older_part(older)?;
        let current = Part::of(&current.value)?;
        let totals = Totals::sum(&[older.borrowed(), current.borrowed()]);
        // The window's digest of one observation compresses as a plain one does.
        if totals.observations <= 1 {
            return Ok(None);
        }
        let Some(cut) = SummedCut::new(&older.curve, &current.curve, self.window_compression())? else {
            return Ok(None);
        };
        let merged_weight = totals.observations.max(cut.total());
        let centroids = Centroids::of(&cut, merged_weight, [totals.min, totals.max], cut.magnitude());
        if !centroids.unscaled() {
            return Ok(None);
        }
        read(&centroids, totals.observations).map(Some)
    }

    /// The compression the window's digest is cut at.
    fn window_compression(&self) -> u64 {
        self.compression.saturating_mul(WINDOW_COMPRESSION_FACTOR)
    }

    /// A digest for reads of the parts' values: their curves summed and cut into centroids at
    /// [`WINDOW_COMPRESSION_FACTOR`] times the window's compression (two parts, the usual
    /// older generations and current one, summed as the cut walks them).
    fn put_together(&self, parts: &[Part<&Curve>]) -> Result<TDigest, AllocationFailed> {
        let totals = Totals::sum(parts);
        let compression = self.window_compression();
        let nodes = if let [older, current] = parts {
            older.curve.centroids_of_sum(current.curve, compression)?
        } else {
            let curves: Vec<&Curve> = parts.iter().map(|part| part.curve).collect();
            Curve::sum(&curves)?.centroids(compression)?
        };
        Ok(TDigest::read_only(
            compression,
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

/// What a part of the window brings to its digest: its totals, and its values' curve.
struct Part<C> {
    totals: Totals,
    curve: C,
}

impl Part<Curve> {
    /// A digest's part: its view's curve.
    fn of(digest: &TDigest) -> Result<Part<Curve>, AllocationFailed> {
        // Every node of the view: a compression merges them all, or (a digest of one
        // observation) none, whose node still counts in the window.
        let nodes = digest.view()?.nodes.as_slice();
        Ok(Part { totals: Totals::of(digest), curve: Curve::of_centroids(nodes, digest.min, digest.max)? })
    }

    fn borrowed(&self) -> Part<&Curve> {
        Part { totals: self.totals, curve: &self.curve }
    }
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

    fn sum<C>(parts: &[Part<C>]) -> Totals {
        Totals::sum_of(parts.iter().map(|part| part.totals))
    }

    fn sum_of(totals: impl Iterator<Item = Totals>) -> Totals {
        let none = Totals { min: f64::MAX, max: -f64::MAX, observations: 0, compressions: 0 };
        totals.fold(none, |sum, part| Totals {
            min: sum.min.min(part.min),
            max: sum.max.max(part.max),
            observations: sum.observations.saturating_add(part.observations),
            compressions: sum.compressions.saturating_add(part.compressions),
        })
    }
}

/// The parts, borrowed.
fn borrowed(parts: &[Part<Curve>]) -> Vec<Part<&Curve>> {
    parts.iter().map(Part::borrowed).collect()
}

/// Each digest's part.
fn parts_of(digests: &[&TDigest]) -> Result<Vec<Part<Curve>>, AllocationFailed> {
    let mut parts = Vec::new();
    parts.try_reserve_exact(digests.len()).map_err(|_| AllocationFailed)?;
    for &digest in digests {
        parts.push(Part::of(digest)?);
    }
    Ok(parts)
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
