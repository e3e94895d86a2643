//! The sketch: `depth` rows of `width` counters of 1, 2, 4 or 8 bytes, RedisBloom's hashing,
//! Redis 8.12's increments (negative ones too, each refused whole when a counter or the total
//! would leave its range), its queries and its checked weighted merge.

use super::cell::{with_cell, Cell, CellSize};
use crate::bytes::ByteArray;
use crate::murmur::{murmur2, murmur2_each, Columns};

/// Cells whose cache lines a batch asks for before it touches the first: a few more misses
/// than a core keeps in flight, on the stack so that a batch allocates nothing.
const WINDOW: usize = 32;
/// Counters up to this size likely sit in the core's own cache, where asking for their lines
/// costs more than it saves: batches on them take the plain path. (Measured on 200,000
/// items: at 256 KiB of counters the paths are even, at 1 MiB the window saves 15%, at
/// 16 MiB half the time.)
const CACHED_BYTES: usize = 256 << 10;
/// The largest total: CMS.INFO replies it as a RESP integer.
const MAX_COUNT: u64 = i64::MAX as u64;

/// Why a sketch could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeError {
    /// A width or depth of 0.
    InvalidDimensions,
    /// Counters beyond the memory budget, or more bytes than an address holds.
    TooLarge,
    /// The allocator had no memory for it.
    OutOfMemory,
}

/// Why an increment was refused; the sketch is as it was before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncrementError {
    /// One of the item's counters would pass its cell's maximum, or the total `i64::MAX`:
    /// RedisBloom 8.12 answers `CMS: INCRBY overflow` for the item.
    Overflow,
    /// One of the item's counters, or the total, would go below 0: `CMS: INCRBY underflow`.
    Underflow,
}

/// Why a merge changed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeError {
    /// A source of another width or depth: RedisBloom answers `CMS: width/depth is not
    /// equal`, checking each source as it reads it.
    Dimensions,
    /// A source of another cell size (checked after its width and depth): `CMS: cell size is
    /// not equal`.
    CellSize,
    /// A counter of the result outside its cell's range, a total count below 0, or a product
    /// or partial sum beyond `i64`: `CMS: MERGE overflow`.
    Overflow,
}

/// One source of a merge.
#[derive(Clone, Copy)]
pub enum MergeSource<'a> {
    /// Another sketch.
    Sketch(&'a CountMinSketch),
    /// The destination itself, as it was before the merge (CMS.MERGE may name the
    /// destination among its sources). Two references to one sketch, one of them
    /// exclusive, cannot exist; the caller names the destination with this instead.
    Destination,
}

/// A Count-Min sketch as RedisBloom keeps it: `depth` rows of `width` counters, row after
/// row, each `cell_size` bytes little-endian; the total of all increments; nothing else.
///
/// Row `i` counts an item in counter `murmur2(item, seed i) % width`. A query answers the
/// least of the item's `depth` counters, never below the item's true count.
pub struct CountMinSketch {
    /// Its width, and how a row's column is taken ([`cell`]).
    columns: Columns,
    depth: usize,
    cell_size: CellSize,
    /// Sum of every increment (or, after a merge, the weighted sum of the sources' totals),
    /// within `0..=i64::MAX`.
    count: u64,
    /// `width * depth` counters of `cell_size` bytes, each within the cell's maximum.
    counters: ByteArray,
}

/// The cell an item lands in, in `row` of a sketch of these `columns`.
#[inline]
pub(super) fn cell(item: &[u8], row: usize, columns: Columns) -> usize {
    // RedisBloom seeds each row's hash with the row number, as a 32-bit seed.
    columns.of(murmur2(item, row as u32)) + row * columns.width
}

/// Rows hashed together ([`four_cells`]).
const ROWS_AT_ONCE: usize = 4;

/// The item's cells in the four rows from `first` on, as [`cell`] finds them, hashed together
/// ([`murmur2_each`]): for a short item a third of the instructions of hashing row by row.
#[allow(clippy::inline_always, reason = "out of line, the rows' hashes go through memory (murmur2_each)")]
#[inline(always)]
fn four_cells(item: &[u8], first: usize, columns: Columns) -> [usize; ROWS_AT_ONCE] {
    let seed = first as u32;
    let hashes = murmur2_each(item, [seed, seed.wrapping_add(1), seed.wrapping_add(2), seed.wrapping_add(3)]);
    let mut cells = [0; ROWS_AT_ONCE];
    for (offset, (cell, hash)) in cells.iter_mut().zip(hashes).enumerate() {
        *cell = columns.of(hash) + (first + offset) * columns.width;
    }
    cells
}

/// `value` (a counter, or the total) changed by `by`, if it stays within `0..=max`. Every value
/// and every `max` is at most `i64::MAX`, so one comparison of the wrapping sum tells both
/// ways out: a sum past `max` cannot wrap, and one below 0 wraps past it.
#[inline]
fn changed(value: u64, by: i64, max: u64) -> Result<u64, IncrementError> {
    let sum = value.wrapping_add(by as u64);
    if sum <= max {
        Ok(sum)
    } else if by < 0 {
        Err(IncrementError::Underflow)
    } else {
        Err(IncrementError::Overflow)
    }
}

impl CountMinSketch {
    /// An empty sketch of `width * depth` counters of `cell_size`, refused when they take more
    /// than `max_bytes`.
    pub fn new(
        width: u64,
        depth: u64,
        cell_size: CellSize,
        max_bytes: usize,
    ) -> Result<CountMinSketch, SizeError> {
        if width == 0 || depth == 0 {
            return Err(SizeError::InvalidDimensions);
        }
        let bytes = bytes_for(width, depth, cell_size).ok_or(SizeError::TooLarge)?;
        if bytes > max_bytes {
            return Err(SizeError::TooLarge);
        }
        let counters = ByteArray::try_zeroed(bytes as u64).map_err(|_| SizeError::OutOfMemory)?;
        Ok(CountMinSketch::from_parts(width as usize, depth as usize, cell_size, 0, counters))
    }

    /// A sketch of counters already checked: `counters` holds `width * depth` of them, each
    /// within the cell's maximum, and `count` is at most `i64::MAX`.
    pub(super) fn from_parts(
        width: usize,
        depth: usize,
        cell_size: CellSize,
        count: u64,
        counters: ByteArray,
    ) -> CountMinSketch {
        debug_assert_eq!(Some(counters.len()), bytes_for(width as u64, depth as u64, cell_size));
        debug_assert!(count <= MAX_COUNT);
        CountMinSketch { columns: Columns::new(width), depth, cell_size, count, counters }
    }

    /// Counters per row.
    pub fn width(&self) -> u64 {
        self.columns.width as u64
    }

    /// Rows.
    pub fn depth(&self) -> u64 {
        self.depth as u64
    }

    /// Bytes per counter.
    pub fn cell_size(&self) -> CellSize {
        self.cell_size
    }

    /// The sum of every increment (CMS.INFO's `count`), at most `i64::MAX`.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The counters, row after row, as they are saved.
    pub(super) fn counter_bytes(&self) -> &[u8] {
        self.counters.as_slice()
    }

    /// As [`counter_bytes`](Self::counter_bytes), writable: the caller keeps every counter
    /// within its cell's maximum.
    pub(super) fn counter_bytes_mut(&mut self) -> &mut [u8] {
        self.counters.as_mut_slice()
    }

    /// Sets the total, which the caller keeps within `0..=i64::MAX`.
    pub(super) fn set_count(&mut self, count: u64) {
        debug_assert!(count <= MAX_COUNT);
        self.count = count;
    }

    /// Sets every counter and the total to 0.
    pub(super) fn clear(&mut self) {
        self.counters.as_mut_slice().fill(0);
        self.count = 0;
    }

    /// An empty sketch of the same dimensions and cell size, or `None` when there is no
    /// memory for it.
    pub(super) fn try_empty_like(&self) -> Option<CountMinSketch> {
        let counters = ByteArray::try_zeroed(self.counters.len() as u64).ok()?;
        Some(CountMinSketch { counters, count: 0, ..*self })
    }

    /// Its rows' columns, for [`cell`].
    pub(super) fn columns(&self) -> Columns {
        self.columns
    }

    /// Whether `other` has this sketch's width and depth, as every source of a merge must.
    pub fn same_dimensions(&self, other: &CountMinSketch) -> bool {
        (self.columns.width, self.depth) == (other.columns.width, other.depth)
    }

    /// Adds `by` (which may be negative) to the item's counter in every row and to the total,
    /// and answers the item's count after it: the least of its counters. Refused, with
    /// nothing changed, when a counter would leave its cell's range or the total
    /// `0..=i64::MAX`.
    pub fn increment(&mut self, item: &[u8], by: i64) -> Result<u64, IncrementError> {
        with_cell!(self.cell_size, C => self.increment_in::<C>(item, by))
    }

    fn increment_in<C: Cell>(&mut self, item: &[u8], by: i64) -> Result<u64, IncrementError> {
        // The total is checked first, as RedisBloom 8.12 checks it.
        let count = changed(self.count, by, MAX_COUNT)?;
        let mut least = u64::MAX;
        let mut row = 0;
        while row < self.depth {
            let (cells, rows) = if row + ROWS_AT_ONCE <= self.depth {
                (four_cells(item, row, self.columns), ROWS_AT_ONCE)
            } else {
                ([cell(item, row, self.columns), 0, 0, 0], 1)
            };
            for &at in &cells[..rows] {
                match self.step::<C>(at, by) {
                    Ok(value) => least = least.min(value),
                    Err(refused) => {
                        self.undo::<C>(item, row, by);
                        return Err(refused);
                    }
                }
                row += 1;
            }
        }
        self.count = count;
        Ok(least)
    }

    /// Adds `by` to counter `at` and answers its value; a counter that would leave its range
    /// is left alone, and the caller puts back the item's rows before it, so that a refused
    /// increment changes nothing (RedisBloom 8.12 undoes them the same way).
    #[inline]
    fn step<C: Cell>(&mut self, at: usize, by: i64) -> Result<u64, IncrementError> {
        let counters = self.counters.as_mut_slice();
        let value = changed(C::get(counters, at), by, C::MAX)?;
        C::set(counters, at, value);
        Ok(value)
    }

    /// Puts back the item's counters in the rows before `row`. A refusal is rare, so they are
    /// hashed again rather than remembered, out of line so that the loop over rows stays small.
    #[cold]
    #[inline(never)]
    fn undo<C: Cell>(&mut self, item: &[u8], row: usize, by: i64) {
        let counters = self.counters.as_mut_slice();
        for earlier in 0..row {
            let at = cell(item, earlier, self.columns);
            C::set(counters, at, C::get(counters, at).wrapping_sub(by as u64));
        }
    }

    /// CMS.INCRBY's items, in order, each answered to `counted` as [`increment`] answers it;
    /// later items see the earlier ones' increments, and a refused item changes nothing but
    /// does not stop the others, as in RedisBloom.
    ///
    /// On a large sketch every row of an item is a cache miss. The cells of the next 32
    /// (item, row) pairs are hashed and their lines asked of the CPU before the
    /// first of them is updated, so that their misses overlap instead of following each
    /// other; a window spans several items when the depth is small, and part of one when it
    /// is large. The update itself is [`increment`]'s, row by row.
    ///
    /// [`increment`]: CountMinSketch::increment
    pub fn increment_all(
        &mut self,
        items: &[(&[u8], i64)],
        counted: impl FnMut(Result<u64, IncrementError>),
    ) {
        with_cell!(self.cell_size, C => self.increment_all_in::<C>(items, counted));
    }

    fn increment_all_in<C: Cell>(
        &mut self,
        items: &[(&[u8], i64)],
        mut counted: impl FnMut(Result<u64, IncrementError>),
    ) {
        if self.counters.len() <= CACHED_BYTES {
            for &(item, by) in items {
                counted(self.increment_in::<C>(item, by));
            }
            return;
        }
        // The window holds each cell's item by its place in `items`: as small as a cell, so
        // that a batch of one item costs little more to set up than the cells it hashes.
        let mut cells =
            Cells::new(items.iter().enumerate().map(|(at, &(item, _))| (item, at)), self.columns, self.depth);
        let mut window = [(0, 0); WINDOW];
        // The item under way: its increment, and the total after it or why it was refused.
        let (mut by, mut under_way) = (0, Err(IncrementError::Overflow));
        let (mut row, mut least) = (0, u64::MAX);
        loop {
            let filled = cells.fill::<C>(&self.counters, &mut window);
            if filled == 0 {
                return;
            }
            for &(at, index) in window.iter().take(filled) {
                if row == 0 {
                    // Every index is one of `items`: the 0 never happens.
                    by = items.get(index).map_or(0, |&(_, by)| by);
                    under_way = changed(self.count, by, MAX_COUNT);
                }
                if under_way.is_ok() {
                    match self.step::<C>(at, by) {
                        Ok(value) => least = least.min(value),
                        Err(refused) => {
                            if let Some(&(item, _)) = items.get(index) {
                                self.undo::<C>(item, row, by);
                            }
                            under_way = Err(refused);
                        }
                    }
                }
                row += 1;
                if row == self.depth {
                    counted(under_way.map(|count| {
                        self.count = count;
                        least
                    }));
                    (row, least) = (0, u64::MAX);
                }
            }
        }
    }

    /// The item's count: the least of its counters. Never below the item's true count; above
    /// it when other items share all of its counters.
    pub fn query(&self, item: &[u8]) -> u64 {
        with_cell!(self.cell_size, C => self.query_in::<C>(item))
    }

    fn query_in<C: Cell>(&self, item: &[u8]) -> u64 {
        let counters = self.counters.as_slice();
        let mut least = u64::MAX;
        let mut row = 0;
        while row + ROWS_AT_ONCE <= self.depth {
            for at in four_cells(item, row, self.columns) {
                least = least.min(C::get(counters, at));
            }
            row += ROWS_AT_ONCE;
        }
        for row in row..self.depth {
            least = least.min(C::get(counters, cell(item, row, self.columns)));
        }
        least
    }

    /// CMS.QUERY's items, in order, each answered to `answer` as [`query`] answers it, their
    /// cells asked of the CPU a window ahead of the reads as in [`increment_all`].
    ///
    /// [`query`]: CountMinSketch::query
    /// [`increment_all`]: CountMinSketch::increment_all
    pub fn query_all<'a>(&self, items: impl IntoIterator<Item = &'a [u8]>, answer: impl FnMut(u64)) {
        with_cell!(self.cell_size, C => self.query_all_in::<C>(items.into_iter(), answer));
    }

    fn query_all_in<'a, C: Cell>(&self, items: impl Iterator<Item = &'a [u8]>, mut answer: impl FnMut(u64)) {
        if self.counters.len() <= CACHED_BYTES {
            for item in items {
                answer(self.query_in::<C>(item));
            }
            return;
        }
        let mut cells = Cells::new(items.map(|item| (item, ())), self.columns, self.depth);
        let mut window = [(0, ()); WINDOW];
        let (mut row, mut least) = (0, u64::MAX);
        loop {
            let filled = cells.fill::<C>(&self.counters, &mut window);
            if filled == 0 {
                return;
            }
            for &(at, ()) in window.iter().take(filled) {
                least = least.min(C::get(self.counters.as_slice(), at));
                row += 1;
                if row == self.depth {
                    answer(least);
                    (row, least) = (0, u64::MAX);
                }
            }
        }
    }

    /// CMS.MERGE: every counter becomes the weighted sum of the sources' counters, and the
    /// total the weighted sum of their totals, as RedisBloom computes them. Everything is
    /// checked first, in 64-bit signed arithmetic, and nothing changes on an error.
    ///
    /// A weight may be negative or 0. The destination's own counters count only where it is
    /// named among the sources ([`MergeSource::Destination`]); otherwise they are replaced.
    /// Each counter depends only on the counters at its own position, so the destination is
    /// read and written in place.
    pub fn merge(&mut self, sources: &[(MergeSource<'_>, i64)]) -> Result<(), MergeError> {
        for (source, _) in sources {
            if let MergeSource::Sketch(sketch) = source {
                if !self.same_dimensions(sketch) {
                    return Err(MergeError::Dimensions);
                }
                if sketch.cell_size != self.cell_size {
                    return Err(MergeError::CellSize);
                }
            }
        }
        let count = self.merged_count(sources).ok_or(MergeError::Overflow)?;
        with_cell!(self.cell_size, C => self.merge_in::<C>(sources))?;
        self.count = count;
        Ok(())
    }

    fn merge_in<C: Cell>(&mut self, sources: &[(MergeSource<'_>, i64)]) -> Result<(), MergeError> {
        let cells = self.columns.width * self.depth;
        if !(0..cells).all(|cell| self.merged_counter::<C>(sources, cell).is_some()) {
            return Err(MergeError::Overflow);
        }
        for cell in 0..cells {
            if let Some(counter) = self.merged_counter::<C>(sources, cell) {
                C::set(self.counters.as_mut_slice(), cell, counter);
            }
        }
        Ok(())
    }

    /// The weighted sum at `cell`, or `None` when a step leaves `i64` or the sum leaves
    /// the cell's range.
    fn merged_counter<C: Cell>(&self, sources: &[(MergeSource<'_>, i64)], cell: usize) -> Option<u64> {
        let mut sum = 0i64;
        for &(source, weight) in sources {
            let counters = match source {
                MergeSource::Sketch(sketch) => sketch.counters.as_slice(),
                MergeSource::Destination => self.counters.as_slice(),
            };
            let counter = i64::try_from(C::get(counters, cell)).ok()?;
            sum = sum.checked_add(counter.checked_mul(weight)?)?;
        }
        u64::try_from(sum).ok().filter(|&sum| sum <= C::MAX)
    }

    /// The weighted sum of the totals, or `None` when a product or a partial sum leaves
    /// `i64`, or the sum is negative: so it never passes `i64::MAX`, as RedisBloom 8.12 caps it.
    fn merged_count(&self, sources: &[(MergeSource<'_>, i64)]) -> Option<u64> {
        let mut sum = 0i64;
        for &(source, weight) in sources {
            let count = match source {
                MergeSource::Sketch(sketch) => sketch.count,
                MergeSource::Destination => self.count,
            };
            let product = i64::try_from(i128::from(count) * i128::from(weight)).ok()?;
            sum = sum.checked_add(product)?;
        }
        u64::try_from(sum).ok()
    }

    /// The memory held: the struct and its counters.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<CountMinSketch>() + self.counters.len()
    }

    /// A copy, or `None` when there is no memory for it.
    pub fn try_clone(&self) -> Option<CountMinSketch> {
        let counters = self.counters.try_clone().ok()?;
        Some(CountMinSketch { counters, ..*self })
    }
}

/// Bytes of `width * depth` counters of `cell_size`, if an address can hold them.
pub(super) fn bytes_for(width: u64, depth: u64, cell_size: CellSize) -> Option<usize> {
    let bytes = width.checked_mul(depth)?.checked_mul(cell_size.bytes() as u64)?;
    usize::try_from(bytes).ok()
}

/// The cells of a stream of items, every row of one item after another, each with the
/// item's payload (its increment, or nothing for a query).
struct Cells<'a, I, P> {
    /// Fused: a window that ends with the items may be followed by one more `fill`.
    items: std::iter::Fuse<I>,
    /// The item being hashed, with its payload and the next row to hash.
    current: Option<(&'a [u8], P, usize)>,
    columns: Columns,
    depth: usize,
}

impl<'a, I: Iterator<Item = (&'a [u8], P)>, P: Copy> Cells<'a, I, P> {
    fn new(items: I, columns: Columns, depth: usize) -> Self {
        Cells { items: items.fuse(), current: None, columns, depth }
    }

    /// Fills `window` with the next cells, asking the CPU for each cell's line as it is
    /// hashed; answers how many (0 once every item's rows are out). By the time the caller
    /// reads the first cell, the other lines of the window are on their way.
    fn fill<C: Cell>(&mut self, counters: &ByteArray, window: &mut [(usize, P); WINDOW]) -> usize {
        let mut filled = 0;
        for slot in window.iter_mut() {
            let (item, payload, row) = match self.current {
                Some((item, payload, row)) if row < self.depth => (item, payload, row),
                _ => match self.items.next() {
                    Some((item, payload)) => (item, payload, 0),
                    None => break,
                },
            };
            let cell = cell(item, row, self.columns);
            counters.prefetch(cell * C::BYTES);
            *slot = (cell, payload);
            self.current = Some((item, payload, row + 1));
            filled += 1;
        }
        filled
    }
}
