//! The window's distribution as the sum of its generations' own: what the window's digest is
//! cut from.
//!
//! A digest estimates how many of its values lie at or below any value by interpolating
//! between its centroids, which never overlap: a centroid's weight lies half below its mean
//! and half above, spread evenly to its neighbours' means, but a single value sits at its
//! mean (`td_cdf`'s picture, which [`Curve::of_centroids`] draws). Merging the generations'
//! centroids instead puts centroids of different generations side by side, each one's weight
//! then spread only as far as the next one of another generation: the window's digest, read
//! that way, misplaces quantiles wherever heavy centroids overlap (measured in the tests: on a
//! stream that does not drift, twice a plain digest's rank error and more). The sum of the
//! generations' curves is the window's count below any value, each generation estimated by its
//! own digest, and its errors, which differ in sign from one generation to the next, partly
//! cancel; [`Curve::centroids`] cuts it into centroids that do not overlap, as a digest of the
//! window's values would hold.
//!
//! Everything here is arithmetic on finite values and counts: no value is compared with a
//! NaN, and no step overflows, whatever the values' magnitudes (each value a convex
//! combination of two others).

use std::cell::Cell;
use std::f64::consts::PI;

use super::super::centroid::Centroid;
use super::super::digest::try_vec;
use super::super::reads::{Around, Merged, Walk};
use crate::bytes::AllocationFailed;

/// A value and how many observations lie at or below it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Point {
    value: f64,
    below: f64,
}

/// A cumulative count, piecewise linear: the count at or below a value grows linearly from one
/// point to the next, jumps where two points share a value, is 0 before the first point and
/// the last point's count after it.
///
/// Invariant: along the points, neither values nor counts decrease.
#[derive(Debug)]
pub(super) struct Curve {
    points: Vec<Point>,
}

impl Curve {
    /// The curve of a digest's compressed centroids (sorted by mean) between its minimum and
    /// maximum: a single value at its mean, a heavier centroid half below and half above its
    /// mean, and, where an end centroid is heavier than one, one of its values at the
    /// minimum (or maximum) and the rest spread to its mean, as `td_cdf` and `td_quantile`
    /// read them.
    pub(super) fn of_centroids(nodes: &[Centroid], min: f64, max: f64) -> Result<Curve, AllocationFailed> {
        let mut points = try_vec(2 * nodes.len() + 4)?;
        let (Some(first), Some(last)) = (nodes.first(), nodes.last()) else { return Ok(Curve { points }) };
        let mut rising = Rising::START;
        let mut push = |value, below| points.push(rising.to(value, below));
        push(min, 0.0);
        if first.weight > 1 {
            push(min, 1.0);
        }
        let mut below = 0.0;
        for node in nodes {
            let weight = node.weight as f64;
            if node.weight == 1 {
                push(node.mean, below);
                push(node.mean, below + 1.0);
            } else {
                push(node.mean, below + weight / 2.0);
            }
            below += weight;
        }
        if last.weight > 1 {
            push(max, below - 1.0);
        }
        push(max, below);
        Ok(Curve { points })
    }

    /// The observations the curve counts.
    pub(super) fn total(&self) -> f64 {
        self.points.last().map_or(0.0, |point| point.below)
    }

    /// The sum of `curves`: the count below each value of all of them. Summed in pairs, so that
    /// a point is copied about `log2` of the curves' number of times.
    pub(super) fn sum(curves: &[&Curve]) -> Result<Curve, AllocationFailed> {
        let mut level: Vec<Curve> = Vec::new();
        level.try_reserve_exact(curves.len().div_ceil(2)).map_err(|_| AllocationFailed)?;
        for pair in curves.chunks(2) {
            level.push(match pair {
                [a, b] => a.plus(b)?,
                [alone] => alone.plus(&Curve { points: Vec::new() })?,
                _ => Curve { points: Vec::new() },
            });
        }
        while level.len() > 1 {
            let mut next = Vec::new();
            next.try_reserve_exact(level.len().div_ceil(2)).map_err(|_| AllocationFailed)?;
            let mut curves = level.into_iter();
            while let Some(a) = curves.next() {
                next.push(match curves.next() {
                    Some(b) => a.plus(&b)?,
                    None => a,
                });
            }
            level = next;
        }
        Ok(level.pop().unwrap_or(Curve { points: Vec::new() }))
    }

    /// Where the curve reaches the count `rank`: the value, and how far into the jump at that
    /// value the count lies (0 where it does not jump there; 1 past the curve's total).
    pub(super) fn position_of(&self, rank: f64) -> Position {
        let reached = self.points.partition_point(|point| point.below < rank);
        let before = reached.checked_sub(1).and_then(|index| self.points.get(index));
        match (before, self.points.get(reached)) {
            (Some(a), Some(b)) if a.value == b.value => {
                let (left, right) = counts_at(&self.points, &mut self.first_at(b.value), b.value);
                Position { value: b.value, into_jump: unit((rank - left) / (right - left)) }
            }
            (Some(a), Some(b)) => Position {
                value: between(a.value, b.value, unit((rank - a.below) / (b.below - a.below))),
                into_jump: 0.0,
            },
            (None, Some(b)) => Position { value: b.value, into_jump: 0.0 },
            (_, None) => {
                Position { value: self.points.last().map_or(0.0, |point| point.value), into_jump: 1.0 }
            }
        }
    }

    /// The count at `position` of another curve (one of those summed into it): from the left
    /// of its value, and as far into its jump there as the position says.
    pub(super) fn rank_at(&self, position: Position) -> f64 {
        let (left, right) = counts_at(&self.points, &mut self.first_at(position.value), position.value);
        left + position.into_jump * (right - left)
    }

    /// The count from the left at `value`, as the sum's walk reads it ([`counts_at`]).
    #[inline]
    fn left_count(&self, value: f64) -> f64 {
        left_count_at(&self.points, self.first_at(value), value)
    }

    /// The count from the right at `value`, as the sum's walk reads it ([`counts_at`]).
    fn right_count(&self, value: f64) -> f64 {
        counts_at(&self.points, &mut self.first_at(value), value).1
    }

    /// [`left_count`](Self::left_count) at the value of point `index`.
    #[inline]
    fn left_count_at_point(&self, index: usize) -> f64 {
        left_count_at(&self.points, run_start(&self.points, index), self.points[index].value)
    }

    /// The index of the first point at or after `value`.
    #[inline]
    fn first_at(&self, value: f64) -> usize {
        self.points.partition_point(|point| point.value < value)
    }

    fn plus(&self, other: &Curve) -> Result<Curve, AllocationFailed> {
        // Each value gives at most as many points as the two curves have at it.
        let mut points = try_vec(self.points.len() + other.points.len())?;
        points.extend(Summed::new(self, other));
        Ok(Curve { points })
    }

    /// The curve cut into centroids ([`cut`]).
    pub(super) fn centroids(&self, compression: u64) -> Result<Vec<Centroid>, AllocationFailed> {
        cut(self.points.iter().copied(), self.total(), compression)
    }

    /// The sum of two curves cut into centroids, without making the sum.
    pub(super) fn centroids_of_sum(
        &self,
        other: &Curve,
        compression: u64,
    ) -> Result<Vec<Centroid>, AllocationFailed> {
        cut(Summed::new(self, other), self.total() + other.total(), compression)
    }
}

/// Counts past this are no longer exact halves in a double: there the centroids made one by
/// one might not be those of the whole cut, which [`SummedCut::new`] leaves to it.
const EXACT_COUNTS: f64 = (1u64 << 52) as f64;

/// The cut of two curves' sum ([`Curve::centroids_of_sum`]) where a read asks for a few of
/// its centroids (a quantile, right after a write): each centroid made where it is asked for,
/// from the cut's ranks and a walk of a few points of the sum, found by binary searches,
/// instead of a walk over every point (about 460 for a window of compression 100). Each is
/// the whole cut's centroid, to the bit: a walk from any point that counts less than the
/// rank sought meets the same points as one from the start, and the centroids never
/// decrease along the ranks (see [`between`]), so none depends on the one before.
pub(super) struct SummedCut<'a> {
    older: &'a Curve,
    current: &'a Curve,
    /// The ranks the cut is made at ([`Scale::cuts`]); none for an empty sum.
    cuts: Vec<f64>,
    /// The first and last centroids' means, once made: a CDF reads both for every value.
    ends: [Cell<Option<f64>>; 2],
}

impl<'a> SummedCut<'a> {
    /// The cut of `older` and `current` summed at `compression`; `None` past
    /// [`EXACT_COUNTS`] observations.
    pub(super) fn new(
        older: &'a Curve,
        current: &'a Curve,
        compression: u64,
    ) -> Result<Option<SummedCut<'a>>, AllocationFailed> {
        let total = (older.total() + current.total()).round();
        // A NaN total is refused too.
        if total.is_nan() || total >= EXACT_COUNTS {
            return Ok(None);
        }
        let cuts = if total < 1.0 { Vec::new() } else { Scale::new(total, compression).cuts()? };
        Ok(Some(SummedCut { older, current, cuts, ends: [Cell::new(None), Cell::new(None)] }))
    }

    /// The observations the cut holds.
    pub(super) fn total(&self) -> i64 {
        self.cuts.last().map_or(0, |&total| total as i64)
    }

    /// The largest magnitude of any value of the sum: its centroids' means lie within.
    pub(super) fn magnitude(&self) -> f64 {
        [self.older, self.current]
            .iter()
            .flat_map(|curve| [curve.points.first(), curve.points.last()])
            .flatten()
            .fold(0.0, |magnitude: f64, point| magnitude.max(point.value.abs()))
    }

    /// The middle rank of centroid `index`, where its mean is read.
    fn middle(&self, index: usize) -> f64 {
        0.5 * (self.cuts[index] + self.cuts[index + 1])
    }

    /// A walk of the sum from its last value (of either curve) that counts less than `rank`
    /// from the left: ranks from `rank` on read the same values as on a walk from the start.
    /// Found among the older part's points first, and then among the current generation's
    /// points between that one and the next older one only: past the next, the sum counts
    /// `rank` or more.
    fn walk_toward(&self, rank: f64) -> RankWalk<Summed<'a>> {
        let (older, current) = (&self.older.points, &self.current.points);
        // A binary search among the older points, each probe's value placed among the current
        // points by a search of its own, within where the probes before placed theirs: at the
        // end, `low..high` are the current points from the last older point that counts less
        // than `rank` (`found - 1`) to the next.
        let (mut found, mut high) = (0, older.len());
        let (mut low, mut placed_until) = (0, current.len());
        while found < high {
            let probe = found + (high - found) / 2;
            let value = older[probe].value;
            let within = current.get(low..placed_until).unwrap_or_default();
            let placed = low + within.partition_point(|point| point.value < value);
            if reaches(self.older.left_count_at_point(probe), current, placed, value, rank) {
                (high, placed_until) = (probe, placed);
            } else {
                (found, low) = (probe + 1, placed);
            }
        }
        let high = placed_until;
        let from = found.checked_sub(1).map(|index| older[index].value);
        // The first older point at or after a value of `low..high`: those lie from `from` on
        // and before the next older point.
        let older_first_at = |value: f64| match from {
            Some(from) if value == from => run_start(older, found - 1),
            _ => found,
        };
        let reached = low
            + first_where(high.saturating_sub(low), |offset| {
                let index = low + offset;
                let value = current[index].value;
                reaches(self.current.left_count_at_point(index), older, older_first_at(value), value, rank)
            });
        // The walk starts at the last value that counts less than `rank`: a current point's,
        // else `from`, else the start.
        let next = match reached.checked_sub(1).filter(|&index| index >= low) {
            Some(index) => [older_first_at(current[index].value), run_start(current, index)],
            None if found > 0 => [run_start(older, found - 1), low],
            None => [0, 0],
        };
        RankWalk::new(Summed::from(self.older, self.current, next))
    }
}

/// The first of `0..len` where `reached` holds (`len` where none does), `reached` false and
/// then true along it.
fn first_where(len: usize, reached: impl Fn(usize) -> bool) -> usize {
    let (mut low, mut high) = (0, len);
    while low < high {
        let probe = low + (high - low) / 2;
        if reached(probe) {
            high = probe;
        } else {
            low = probe + 1;
        }
    }
    low
}

impl Merged for SummedCut<'_> {
    fn len(&self) -> usize {
        self.cuts.len().saturating_sub(1)
    }

    fn mean(&self, index: usize) -> f64 {
        let made = || self.centroids_from(index).next().map_or(f64::NAN, |centroid| centroid.mean);
        let end = match index {
            0 => &self.ends[0],
            _ if index + 1 == self.len() => &self.ends[1],
            _ => return made(),
        };
        if let Some(mean) = end.get() {
            return mean;
        }
        let mean = made();
        end.set(Some(mean));
        mean
    }

    fn weight(&self, index: usize) -> f64 {
        match (self.cuts.get(index), self.cuts.get(index + 1)) {
            (Some(start), Some(end)) => end - start,
            _ => f64::NAN,
        }
    }

    /// The walk's `weight_so_far` at pair `p` is the middle rank of centroid `p`: the weights
    /// are whole, their halves exact, so the sums of a walk from the start are too.
    fn pair_passing(&self, index: f64, walk: &mut Walk) -> Option<[Centroid; 2]> {
        let pairs = self.len().saturating_sub(1);
        let from = walk.position.min(pairs);
        let low = from + first_where(pairs - from, |offset| self.middle(from + offset + 1) > index);
        walk.position = low;
        if self.len() > 0 {
            walk.weight_so_far = self.middle(low);
        }
        if low == pairs {
            return None;
        }
        let mut centroids = self.centroids_from(low);
        Some([centroids.next()?, centroids.next()?])
    }

    /// The first centroid whose mean reaches `value` is guessed from the sum's count at
    /// `value` (its middle rank the first past it), and the means from the one before it
    /// decide: a walk back where that one reaches `value` too, on where it does not.
    fn around(&self, value: f64, scale: f64) -> Around {
        let count = self.older.left_count(value / scale) + self.current.left_count(value / scale);
        let mut start = first_where(self.len(), |index| self.middle(index) >= count).saturating_sub(1);
        loop {
            let mut before = self.cuts.get(start).copied().unwrap_or_default();
            let mut below: Option<Centroid> = None;
            let mut centroids = (start..).zip(self.centroids_from(start));
            let Some((index, reaching)) = centroids.find(|(_, centroid)| {
                let under = centroid.mean * scale < value;
                if under {
                    before += centroid.weight as f64;
                    below = Some(*centroid);
                }
                !under
            }) else {
                // Every mean below `value` (the caller's checks leave none such).
                return Around::Past;
            };
            match below {
                None if start > 0 => start -= 1,
                Some(left) if reaching.mean * scale > value => {
                    return Around::Between { before: before - left.weight as f64, left, right: reaching };
                }
                _ if reaching.mean * scale > value || index + 1 == self.len() => return Around::Past,
                _ => {
                    return Around::Equal {
                        before,
                        equal: self.cuts[self.past_run(index, value, scale)] - before,
                    }
                }
            }
        }
    }
}

impl SummedCut<'_> {
    /// The first centroid after `index`, whose mean is `value` (multiplied by `scale`), of
    /// another mean. Guessed from the sum's count just above `value` (its middle rank the
    /// first past it) and checked by the means on either side of the guess, else found by a
    /// binary search: a value many observations share has a long run of centroids at it,
    /// which a walk would make one by one.
    fn past_run(&self, index: usize, value: f64, scale: f64) -> usize {
        let above = self.older.right_count(value / scale) + self.current.right_count(value / scale);
        let at_value = |index: usize| self.mean(index) * scale == value;
        let guess = first_where(self.len(), |index| self.middle(index) > above).max(index + 1);
        if at_value(guess - 1) && (guess == self.len() || !at_value(guess)) {
            return guess;
        }
        let after = index + 1;
        after + first_where(self.len() - after, |offset| !at_value(after + offset))
    }

    /// Centroids `index` on, their means made along one walk of the sum.
    fn centroids_from(&self, index: usize) -> impl Iterator<Item = Centroid> + '_ {
        let mut walk = None;
        (index..self.len()).map(move |at| {
            let middle = self.middle(at);
            let walk = walk.get_or_insert_with(|| self.walk_toward(middle));
            Centroid { mean: walk.value_at(middle), weight: (self.cuts[at + 1] - self.cuts[at]) as i64 }
        })
    }
}

/// The last point of a curve being made, each next one kept from going back in value or count
/// from it (a record's means may stray past its bounds by a rounding). Kept apart from the
/// points: read back from their array, each point waited on the store of the one before, and
/// making a digest's curve took about a sixth of a windowed quantile right after a write.
struct Rising(Point);

impl Rising {
    /// Below every point: the first one is kept as it is.
    const START: Rising = Rising(Point { value: f64::NEG_INFINITY, below: f64::NEG_INFINITY });

    /// The next point, at `value` and `below` or where the last one was.
    #[inline]
    fn to(&mut self, value: f64, below: f64) -> Point {
        let last = self.0;
        self.0 = Point {
            value: if value < last.value { last.value } else { value },
            below: if below < last.below { last.below } else { below },
        };
        self.0
    }
}

/// Where a curve reaches a count ([`Curve::position_of`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Position {
    value: f64,
    into_jump: f64,
}

/// The points of the sum of two curves, in order: at every value either has a point at, both
/// counts from the left and, where either jumps, from the right.
struct Summed<'a> {
    mine: &'a [Point],
    theirs: &'a [Point],
    my_next: usize,
    their_next: usize,
    /// The count from the right at the last value, where it jumped.
    jumped: Option<Point>,
}

impl<'a> Summed<'a> {
    fn new(mine: &'a Curve, theirs: &'a Curve) -> Summed<'a> {
        Summed::from(mine, theirs, [0, 0])
    }

    /// The points of the sum from a value on, given the first point of each curve at or after
    /// it (`[mine, theirs]`; 0 and 0 for the start).
    fn from(mine: &'a Curve, theirs: &'a Curve, [my_next, their_next]: [usize; 2]) -> Summed<'a> {
        Summed { mine: &mine.points, theirs: &theirs.points, my_next, their_next, jumped: None }
    }
}

impl Iterator for Summed<'_> {
    type Item = Point;

    /// Inlined into the cut's walk: out of line, each point came back through memory, and a
    /// read right after a write took 1.64 times a plain digest's in process, against 1.53
    /// inlined (five full generations of 100,000 values, three runs each).
    #[allow(clippy::inline_always, reason = "measured, as the comment says")]
    #[inline(always)]
    fn next(&mut self) -> Option<Point> {
        if let Some(point) = self.jumped.take() {
            return Some(point);
        }
        let value = match (self.mine.get(self.my_next), self.theirs.get(self.their_next)) {
            (Some(a), Some(b)) => {
                if a.value <= b.value {
                    a.value
                } else {
                    b.value
                }
            }
            (Some(a), None) => a.value,
            (None, Some(b)) => b.value,
            (None, None) => return None,
        };
        let (my_left, my_right) = counts_at(self.mine, &mut self.my_next, value);
        let (their_left, their_right) = counts_at(self.theirs, &mut self.their_next, value);
        let (left, right) = (my_left + their_left, my_right + their_right);
        if right > left {
            self.jumped = Some(Point { value, below: right });
        }
        Some(Point { value, below: left })
    }
}

/// `points` (a curve's, counting `total`) cut into centroids that do not overlap, as
/// RedisBloom's compression at `compression` would leave a digest of values so distributed
/// (this crate's digests merge finer, at `MERGE_SCALE` times theirs)
/// ([`Scale::cuts`]), each centroid's mean the value at its middle rank. Not the mean of the
/// values the curve puts there: reads interpolate between centroids as points of the curve
/// at their middle ranks, and where the values are skewed (a latency's tail) the mean lies
/// off it.
fn cut(
    points: impl Iterator<Item = Point>,
    total: f64,
    compression: u64,
) -> Result<Vec<Centroid>, AllocationFailed> {
    let total = total.round();
    if total < 1.0 || total.is_nan() {
        return Ok(Vec::new());
    }
    let cuts = Scale::new(total, compression).cuts()?;
    let mut centroids = try_vec(cuts.len().saturating_sub(1))?;
    let mut walk = RankWalk::new(points);
    for pair in cuts.windows(2) {
        let &[start, end] = pair else { break };
        centroids.push(Centroid { mean: walk.value_at(0.5 * (start + end)), weight: (end - start) as i64 });
    }
    Ok(centroids)
}

/// Where [`cut`] cuts, for `total` observations at `compression`.
struct Scale {
    total: f64,
    compression: f64,
}

impl Scale {
    fn new(total: f64, compression: u64) -> Scale {
        Scale { total, compression: compression as f64 }
    }

    /// The ranks to cut at, from 0 to the total.
    ///
    /// A compression bounds a merged centroid at fraction `q` to `q (1 - q) growth total`
    /// observations, `growth = 2π ln(total) / compression` (at both its edges, as RedisBloom's
    /// `td_compress` merges; [`TDigest::compress`](super::super::TDigest::compress) merges at
    /// `MERGE_SCALE` times the compression). The lower half: while
    /// that is less than one observation, one each; then centroids between fractions whose
    /// odds `q / (1 - q)` grow by `1 + growth` from one cut to the next, which weigh at most
    /// that at their lower edge (the tighter one below the middle), floored to whole
    /// observations. The upper half is its mirror image, and a middle centroid wider than
    /// the last one below it is halved. The odds are a chain of one multiplication a cut,
    /// where bounding each centroid from where the last ended would put a division and a
    /// square root in it.
    ///
    /// That is about `2 / growth` cuts at the ends and `2 ln(total) / ln(1 + growth)` between,
    /// `compression (1 + 1 / ln total) / π` where the growth is small: below the node array of
    /// one generation (`6 c + 10` at four times `c`), which the memory budget admitted. Where
    /// the compression is tiny and the total huge (1 and 10^18), a few dozen.
    fn cuts(&self) -> Result<Vec<f64>, AllocationFailed> {
        let (total, half) = (self.total, (self.total / 2.0).floor());
        let growth = 2.0 * PI * total.ln() / self.compression;
        let mut lower = Vec::new();
        let ones = (1.0 / growth).ceil().min(half);
        let mut rank = 0.0;
        while rank <= ones {
            push_fallibly(&mut lower, rank)?;
            rank += 1.0;
        }
        let mut last = ones;
        if ones < half {
            let (mut odds, factor) = (ones / (total - ones), 1.0 + growth);
            loop {
                odds *= factor;
                let share = total * (odds / (1.0 + odds));
                // Not `!(share <= half)`: `share` is NaN once the odds overflow.
                if share.is_nan() {
                    break;
                }
                let rank = floor_of_count(share);
                if rank > half {
                    break;
                }
                if rank > last {
                    push_fallibly(&mut lower, rank)?;
                    last = rank;
                }
            }
        }
        let mut cuts = try_vec(2 * lower.len() + 1)?;
        cuts.extend_from_slice(&lower);
        let widest_below =
            lower.len().checked_sub(2).and_then(|index| lower.get(index)).map_or(1.0, |&rank| last - rank);
        if total - 2.0 * last > widest_below && half > last {
            cuts.push(half);
        }
        for &mirrored in lower.iter().rev() {
            let cut = total - mirrored;
            if cuts.last().is_none_or(|&last| cut > last) {
                cuts.push(cut);
            }
        }
        Ok(cuts)
    }
}

/// `count.floor()` for a count that is not negative, below 2^64: a conversion and back,
/// where `floor` is a call into the C library unless the CPU has SSE4.1 (about a twentieth
/// of a windowed quantile right after a write went there).
fn floor_of_count(count: f64) -> f64 {
    count as u64 as f64
}

/// Pushes `item`, growing `vec` (by doubling, from 64) without an abort.
fn push_fallibly<T>(vec: &mut Vec<T>, item: T) -> Result<(), AllocationFailed> {
    if vec.len() == vec.capacity() {
        vec.try_reserve(vec.len().max(64)).map_err(|_| AllocationFailed)?;
    }
    vec.push(item);
    Ok(())
}

/// The counts of `points` just below and just above `value`, which no point before `next`
/// reaches; moves `next` past the points at `value`: up to two stepped over, and where more
/// follow (a value many observations share), the rest found by a binary search rather than
/// walked.
#[inline]
fn counts_at(points: &[Point], next: &mut usize, value: f64) -> (f64, f64) {
    let at = *next;
    let left = left_count_at(points, at, value);
    if points.get(at).is_none_or(|point| point.value != value) {
        return (left, left);
    }
    // Most runs are a point or two (a single value's curve jumps at it): stepped over.
    let after = &points[at + 1..];
    let more = match after {
        [] => 0,
        [next, ..] if next.value != value => 0,
        [_] => 1,
        [_, next, ..] if next.value != value => 1,
        _ => after.partition_point(|point| point.value == value),
    };
    *next = at + 1 + more;
    (left, points[at + more].below)
}

/// The count of `points` just below `value`, `at` the first point at or after it: as
/// [`counts_at`] reads it.
#[inline]
fn left_count_at(points: &[Point], at: usize, value: f64) -> f64 {
    let Some(point) = points.get(at) else {
        return points.last().map_or(0.0, |point| point.below);
    };
    let before = at.checked_sub(1).and_then(|index| points.get(index));
    match before {
        _ if point.value == value => before.map_or(0.0, |_| point.below),
        Some(before) => {
            before.below + fraction(before.value, point.value, value) * (point.below - before.below)
        }
        None => 0.0,
    }
}

/// Whether `base + left_count_at(points, at, value)` reaches `rank`, to the bit: where
/// `value` lies between two points, that count lies between theirs (the interpolation is
/// monotone, and so is each rounding), which decide without its division unless `rank` lies
/// between them too (a search's last probe or two).
#[inline]
fn reaches(base: f64, points: &[Point], at: usize, value: f64, rank: f64) -> bool {
    if let (Some(before), Some(point)) =
        (at.checked_sub(1).and_then(|index| points.get(index)), points.get(at))
    {
        if point.value != value {
            let ends = [before.below, before.below + (point.below - before.below)];
            if base + ends[0].min(ends[1]) >= rank {
                return true;
            }
            if base + ends[0].max(ends[1]) < rank {
                return false;
            }
        }
    }
    base + left_count_at(points, at, value) >= rank
}

/// The first of the points at the value of point `index`: up to two stepped back over, more
/// by a binary search (as [`counts_at`] finds the last).
#[inline]
fn run_start(points: &[Point], index: usize) -> usize {
    let value = points[index].value;
    let before = &points[..index];
    match before {
        [.., last] if last.value != value => index,
        [] | [_] => 0,
        [.., previous, _] if previous.value != value => index - 1,
        _ => before.partition_point(|point| point.value < value),
    }
}

/// How far `value` lies from `from` to `to` (`from < to`), in `[0, 1]`; halved first, so that
/// no difference of two finite values overflows.
fn fraction(from: f64, to: f64, value: f64) -> f64 {
    unit((value * 0.5 - from * 0.5) / (to * 0.5 - from * 0.5))
}

/// `fraction` kept in `[0, 1]`, NaN as 0.
fn unit(fraction: f64) -> f64 {
    if fraction >= 0.0 {
        fraction.min(1.0)
    } else {
        0.0
    }
}

/// The value `fraction` of the way from `from` to `to` (`from <= to`), kept between them. It
/// never decreases as `fraction` grows (each step rounds monotonically; halved first, so
/// that no difference of two finite values overflows), and so neither do the window's
/// centroids along the ranks they are cut at: each one can be made alone.
fn between(from: f64, to: f64, fraction: f64) -> f64 {
    // The ends as they are: a sum's rounding could miss `to`, and turn -0 into 0.
    if fraction <= 0.0 || from.to_bits() == to.to_bits() {
        return from;
    }
    if fraction >= 1.0 {
        return to;
    }
    // Half the way added twice: twice the half would overflow where the two differ by more
    // than the largest double.
    let half = (to * 0.5 - from * 0.5) * fraction;
    let value = from + half + half;
    if value < from {
        from
    } else if value > to {
        to
    } else {
        value
    }
}

/// A sweep of ascending ranks through a curve's points: `start` and `end` the segment the
/// ranks reached lie in (or the last one).
struct RankWalk<P> {
    points: P,
    start: Option<Point>,
    end: Option<Point>,
}

impl<P: Iterator<Item = Point>> RankWalk<P> {
    fn new(mut points: P) -> RankWalk<P> {
        let start = points.next();
        let end = points.next();
        RankWalk { points, start, end }
    }

    /// The value at rank `rank` (above every rank asked before): where the curve reaches that
    /// count, or the middle of the values where it stays at it (between two single values, a
    /// centroid of both is at neither).
    fn value_at(&mut self, rank: f64) -> f64 {
        while self.end.is_some_and(|end| end.below < rank) {
            let Some(next) = self.points.next() else { break };
            self.start = self.end.replace(next);
        }
        match (self.start, self.end) {
            (Some(_), Some(end)) if end.below == rank => {
                let first = end.value;
                let mut last = first;
                for next in self.points.by_ref() {
                    self.start = self.end.replace(next);
                    if next.below > rank {
                        break;
                    }
                    last = next.value;
                }
                between(first, last, 0.5)
            }
            (Some(start), Some(end)) if end.below > start.below => {
                between(start.value, end.value, unit((rank - start.below) / (end.below - start.below)))
            }
            (_, Some(end)) => end.value,
            (start, None) => start.map_or(f64::NAN, |point| point.value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(mean: f64, weight: i64) -> Centroid {
        Centroid { mean, weight }
    }

    fn counts(curve: &Curve) -> Vec<(f64, f64)> {
        curve.points.iter().map(|point| (point.value, point.below)).collect()
    }

    #[test]
    fn a_digests_curve_spreads_centroids_and_keeps_single_values_whole() {
        let curve = Curve::of_centroids(&[node(1.0, 1), node(4.0, 6), node(9.0, 1)], 1.0, 9.0).unwrap();
        assert_eq!(
            counts(&curve),
            [(1.0, 0.0), (1.0, 0.0), (1.0, 1.0), (4.0, 4.0), (9.0, 7.0), (9.0, 8.0), (9.0, 8.0)]
        );
        let heavy_ends = Curve::of_centroids(&[node(2.0, 4), node(6.0, 4)], 0.0, 10.0).unwrap();
        assert_eq!(
            counts(&heavy_ends),
            [(0.0, 0.0), (0.0, 1.0), (2.0, 2.0), (6.0, 6.0), (10.0, 7.0), (10.0, 8.0)]
        );
        assert!(Curve::of_centroids(&[], 0.0, 1.0).unwrap().points.is_empty());
    }

    #[test]
    fn curves_add_up_value_by_value() {
        let a = Curve { points: vec![Point { value: 0.0, below: 0.0 }, Point { value: 10.0, below: 10.0 }] };
        let b = Curve { points: vec![Point { value: 5.0, below: 0.0 }, Point { value: 5.0, below: 4.0 }] };
        let sum = Curve::sum(&[&a, &b]).unwrap();
        assert_eq!(counts(&sum), [(0.0, 0.0), (5.0, 5.0), (5.0, 9.0), (10.0, 14.0)]);
        let three = Curve::sum(&[&a, &b, &a]).unwrap();
        assert_eq!(three.total(), 24.0);
        assert_eq!(counts(&Curve::sum(&[&b]).unwrap()), counts(&b));
    }

    #[test]
    fn centroids_cut_the_curve_by_the_scale_and_hold_every_observation() {
        // 10,000 values evenly between 0 and 10,000.
        let even = Curve {
            points: vec![Point { value: 0.0, below: 0.0 }, Point { value: 10_000.0, below: 10_000.0 }],
        };
        let centroids = even.centroids(100).unwrap();
        assert_eq!(centroids.iter().map(|c| c.weight).sum::<i64>(), 10_000);
        assert_eq!(centroids.first().map(|c| c.weight), Some(1));
        assert_eq!(centroids.last().map(|c| c.weight), Some(1));
        assert!(centroids.windows(2).all(|pair| pair[0].mean < pair[1].mean));
        // Each centroid's mean is the middle of its ranks, as the values are even.
        let mut below = 0;
        for centroid in &centroids {
            let middle = below as f64 + centroid.weight as f64 / 2.0;
            assert!((centroid.mean - middle).abs() < 1e-6, "{centroid:?} at {below}");
            below += centroid.weight;
        }
        // About `compression / π` (42 here), and more at a finer cut.
        assert!((20..200).contains(&centroids.len()), "{}", centroids.len());
        let finer = even.centroids(400).unwrap();
        assert!(finer.len() > 2 * centroids.len(), "{} against {}", finer.len(), centroids.len());
    }

    #[test]
    fn values_at_the_ends_of_the_doubles_overflow_nothing() {
        let nodes = [node(-f64::MAX, 1), node(0.0, 5), node(f64::MAX, 1)];
        let curve = Curve::of_centroids(&nodes, -f64::MAX, f64::MAX).unwrap();
        let sum = Curve::sum(&[&curve, &curve]).unwrap();
        let centroids = sum.centroids(100).unwrap();
        assert_eq!(centroids.iter().map(|c| c.weight).sum::<i64>(), 14);
        assert!(centroids.iter().all(|c| c.mean.is_finite()), "{centroids:?}");
        assert_eq!(centroids.first().map(|c| c.mean), Some(-f64::MAX));
        assert_eq!(centroids.last().map(|c| c.mean), Some(f64::MAX));
    }

    /// Between values of both signs near the doubles' ends the gap is past the largest
    /// double: the window's centroids still spread between them, not all at the upper end.
    #[test]
    fn centroids_spread_between_values_further_apart_than_the_largest_double() {
        assert!((between(-1.5e308, 1.5e308, 0.6) / 3e307 - 1.0).abs() < 1e-12);
        assert_eq!(between(-f64::MAX, f64::MAX, 0.5), 0.0);
        assert_eq!(between(-0.0, -0.0, 0.5).to_bits(), (-0.0f64).to_bits());
        assert_eq!(between(0.1, 0.7, 1.0), 0.7);
        let curve =
            Curve::of_centroids(&[node(-1.5e308, 100), node(1.5e308, 100)], -1.5e308, 1.5e308).unwrap();
        let centroids = curve.centroids_of_sum(&curve, 400).unwrap();
        let means: Vec<f64> = centroids.iter().map(|c| c.mean).collect();
        assert!(means[means.len() / 2].abs() < 1e307, "{means:?}");
        // As many at either end: the values are symmetric.
        let at = |end: f64| means.iter().filter(|&&mean| mean == end).count();
        assert_eq!(at(1.5e308), at(-1.5e308), "{means:?}");
        assert!(means.windows(2).all(|pair| pair[0] <= pair[1]));
    }

    #[test]
    fn counts_beyond_a_doubles_whole_numbers_are_cut_without_a_hang() {
        // Two digests of about 2^62 observations each: the count is exact no more.
        let nodes = [node(-1.0, 1), node(0.0, 1 << 62), node(1.0, 1)];
        let curve = Curve::of_centroids(&nodes, -1.0, 1.0).unwrap();
        let centroids = Curve::sum(&[&curve, &curve]).unwrap().centroids(400).unwrap();
        let total = centroids.iter().fold(0i64, |sum, c| sum.saturating_add(c.weight));
        assert!((total as f64 / 2f64.powi(63) - 1.0).abs() < 1e-9, "{total}");
        assert!(centroids.len() < 1000, "{}", centroids.len());
        assert!(centroids.windows(2).all(|pair| pair[0].mean <= pair[1].mean));
    }

    #[test]
    fn a_rank_where_the_curve_stays_flat_is_at_the_middle_of_the_flat() {
        // Two single values, 1 and 3: the count stays 1 from one to the other.
        let points =
            [(1.0, 0.0), (1.0, 1.0), (3.0, 1.0), (3.0, 2.0)].map(|(value, below)| Point { value, below });
        let mut walk = RankWalk::new(points.iter().copied());
        assert_eq!([0.5, 1.0, 1.5].map(|rank| walk.value_at(rank)), [1.0, 2.0, 3.0]);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// A compressed digest's centroids (sorted by mean, singletons and heavier ones, and
        /// the weights of 0 a record may hold) and bounds usually beyond its ends, sometimes
        /// within them (a record's, by a rounding or by design).
        fn digest() -> impl Strategy<Value = (Vec<Centroid>, f64, f64)> {
            (prop::collection::vec((-1e6f64..1e6, 0i64..2000), 1..60), -10.0f64..100.0, -10.0f64..100.0)
                .prop_map(|(mut nodes, below, above)| {
                    nodes.sort_by(|a, b| a.0.total_cmp(&b.0));
                    let nodes: Vec<Centroid> =
                        nodes.into_iter().map(|(mean, weight)| node(mean, weight)).collect();
                    let (first, last) = (nodes[0].mean, nodes[nodes.len() - 1].mean);
                    (nodes, first - below, last + above)
                })
        }

        proptest! {
            #[test]
            fn a_cut_of_summed_digests_holds_every_observation_in_order(
                digests in prop::collection::vec(digest(), 1..6),
                compression in 1u64..2000,
            ) {
                let curves: Vec<Curve> =
                    digests.iter().map(|(nodes, min, max)| Curve::of_centroids(nodes, *min, *max).unwrap()).collect();
                let all: Vec<&Curve> = curves.iter().collect();
                let centroids = Curve::sum(&all).unwrap().centroids(compression).unwrap();
                let total: i64 = digests.iter().flat_map(|(nodes, _, _)| nodes.iter().map(|node| node.weight)).sum();
                prop_assert_eq!(centroids.iter().map(|c| c.weight).sum::<i64>(), total);
                prop_assert!(centroids.iter().all(|c| c.weight >= 1));
                prop_assert!(centroids.windows(2).all(|pair| pair[0].mean <= pair[1].mean));
                let values = || {
                    digests.iter().flat_map(|(nodes, min, max)| nodes.iter().map(|node| node.mean).chain([*min, *max]))
                };
                let (lowest, highest) = (values().fold(f64::MAX, f64::min), values().fold(-f64::MAX, f64::max));
                prop_assert!(centroids.iter().all(|c| (lowest..=highest).contains(&c.mean)), "{:?}", centroids);
                // About `compression / π` and a few at the ends; never more than observations.
                let most = compression as usize + 64;
                prop_assert!(centroids.len() <= most.min(total as usize), "{} of {}", centroids.len(), total);
                if let [first, second, ..] = all.as_slice() {
                    let summed = Curve::sum(&[first, second]).unwrap().centroids(compression).unwrap();
                    prop_assert_eq!(&first.centroids_of_sum(second, compression).unwrap(), &summed);
                    // Each centroid made alone is the whole cut's, to the bit.
                    let cut = SummedCut::new(first, second, compression).unwrap().unwrap();
                    prop_assert_eq!(cut.len(), summed.len());
                    for (index, centroid) in summed.iter().enumerate() {
                        prop_assert_eq!(cut.mean(index).to_bits(), centroid.mean.to_bits(), "centroid {}", index);
                        prop_assert_eq!(cut.weight(index), centroid.weight as f64);
                    }
                    prop_assert!(cut.mean(summed.len()).is_nan());
                }
            }
        }
    }
}
