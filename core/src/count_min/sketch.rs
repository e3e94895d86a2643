//! The sketch: `depth` rows of `width` 32-bit counters, RedisBloom's hashing, its saturating
//! increments, its queries and its checked weighted merge.

use crate::bytes::ByteArray;
use crate::murmur::murmur2;

/// Bytes of one counter, in every record RedisBloom 2.8 writes.
pub(super) const COUNTER_BYTES: usize = 4;

/// What CMS.INCRBY's count of an item is after its increment when one of the item's
/// counters is full: RedisBloom answers `CMS: INCRBY overflow` for that item instead of the
/// count, though the increment happened (the counters stay full, the total grew).
pub const SATURATED: u32 = u32::MAX;

/// Cells whose cache lines a batch asks for before it touches the first: a few more misses
/// than a core keeps in flight, on the stack so that a batch allocates nothing.
const WINDOW: usize = 32;
/// Counters up to this size likely sit in the core's own cache, where asking for their lines
/// costs more than it saves: batches on them take the plain path. (Measured on 200,000
/// items: at 256 KiB of counters the paths are even, at 1 MiB the window saves 15%, at
/// 16 MiB half the time.)
const CACHED_BYTES: usize = 256 << 10;

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

/// Why a merge changed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeError {
    /// A source of another width or depth: RedisBloom answers `CMS: width/depth is not
    /// equal`, checking each source as it reads it.
    Dimensions,
    /// A counter of the result outside 0..=`u32::MAX`, a total count below 0, or a product
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

/// A Count-Min sketch as RedisBloom 2.8 keeps it: `depth` rows of `width` counters, row after
/// row, each counter 32 bits little-endian; the total of all increments; nothing else.
///
/// Row `i` counts an item in counter `murmur2(item, seed i) % width`. A query answers the
/// least of the item's `depth` counters, never below the item's true count.
pub struct CountMinSketch {
    width: usize,
    depth: usize,
    /// Sum of every increment (or, after a merge, the weighted sum of the sources' totals),
    /// wrapping as RedisBloom's `size_t` does.
    count: u64,
    /// `width * depth` counters. The bytes may have come from a file unaligned, so they are
    /// read and written as bytes.
    counters: ByteArray,
}

/// The cell an item lands in, in `row` of a sketch of this `width`.
#[inline]
fn cell(item: &[u8], row: usize, width: usize) -> usize {
    // RedisBloom seeds each row's hash with the row number, as a 32-bit seed.
    let hash = murmur2(item, row as u32);
    (hash as usize % width) + row * width
}

impl CountMinSketch {
    /// An empty sketch of `width * depth` counters, refused when they take more than
    /// `max_bytes`.
    pub fn new(width: u64, depth: u64, max_bytes: usize) -> Result<CountMinSketch, SizeError> {
        if width == 0 || depth == 0 {
            return Err(SizeError::InvalidDimensions);
        }
        let bytes = bytes_for(width, depth, COUNTER_BYTES).ok_or(SizeError::TooLarge)?;
        if bytes > max_bytes {
            return Err(SizeError::TooLarge);
        }
        let counters = ByteArray::try_zeroed(bytes as u64).map_err(|_| SizeError::OutOfMemory)?;
        Ok(CountMinSketch::from_parts(width as usize, depth as usize, 0, counters))
    }

    /// A sketch of counters already checked: `counters` holds `width * depth` of them.
    pub(super) fn from_parts(width: usize, depth: usize, count: u64, counters: ByteArray) -> CountMinSketch {
        debug_assert_eq!(Some(counters.len()), bytes_for(width as u64, depth as u64, COUNTER_BYTES));
        CountMinSketch { width, depth, count, counters }
    }

    /// Counters per row.
    pub fn width(&self) -> u64 {
        self.width as u64
    }

    /// Rows.
    pub fn depth(&self) -> u64 {
        self.depth as u64
    }

    /// The sum of every increment (CMS.INFO's `count`), modulo 2^64: RedisBloom replies it as
    /// a signed integer, so past `i64::MAX` it shows negative.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The counters, row after row, as they are saved.
    pub(super) fn counter_bytes(&self) -> &[u8] {
        self.counters.as_slice()
    }

    /// Whether `other` has this sketch's width and depth, as every source of a merge must.
    pub fn same_dimensions(&self, other: &CountMinSketch) -> bool {
        (self.width, self.depth) == (other.width, other.depth)
    }

    /// Adds `by` to the item's counter in every row (each saturating at `u32::MAX`) and to the
    /// total (wrapping), and answers the item's count after it: [`SATURATED`] means
    /// RedisBloom answers an overflow error for the item.
    pub fn increment(&mut self, item: &[u8], by: u64) -> u32 {
        let mut least = u32::MAX;
        for row in 0..self.depth {
            least = least.min(self.add(cell(item, row, self.width), by));
        }
        self.count = self.count.wrapping_add(by);
        least
    }

    /// CMS.INCRBY's items, in order, each answered to `counted` as [`increment`] answers it;
    /// later items see the earlier ones' increments, as in RedisBloom.
    ///
    /// On a large sketch every row of an item is a cache miss. The cells of the next 32
    /// (item, row) pairs are hashed and their lines asked of the CPU before the
    /// first of them is updated, so that their misses overlap instead of following each
    /// other; a window spans several items when the depth is small, and part of one when it
    /// is large. The update itself is [`increment`]'s, row by row.
    ///
    /// [`increment`]: CountMinSketch::increment
    pub fn increment_all<'a>(
        &mut self,
        items: impl IntoIterator<Item = (&'a [u8], u64)>,
        mut counted: impl FnMut(u32),
    ) {
        if self.counters.len() <= CACHED_BYTES {
            for (item, by) in items {
                counted(self.increment(item, by));
            }
            return;
        }
        let mut cells = Cells::new(items.into_iter(), self.width, self.depth);
        let mut window = [(0, 0); WINDOW];
        let (mut row, mut least) = (0, u32::MAX);
        loop {
            let filled = cells.fill(&self.counters, &mut window);
            if filled == 0 {
                return;
            }
            for &(cell, by) in window.iter().take(filled) {
                least = least.min(self.add(cell, by));
                row += 1;
                if row == self.depth {
                    self.count = self.count.wrapping_add(by);
                    counted(least);
                    (row, least) = (0, u32::MAX);
                }
            }
        }
    }

    /// Adds `by` to counter `cell` and answers the sum. RedisBloom's add wraps and then
    /// saturates where it wrapped: a saturating add, whatever the size of `by`.
    #[inline]
    fn add(&mut self, cell: usize, by: u64) -> u32 {
        let sum = u32::try_from(u64::from(self.counter(cell)).saturating_add(by)).unwrap_or(u32::MAX);
        self.set_counter(cell, sum);
        sum
    }

    /// The item's count: the least of its counters. Never below the item's true count; above
    /// it when other items share all of its counters.
    pub fn query(&self, item: &[u8]) -> u32 {
        (0..self.depth).map(|row| self.counter(cell(item, row, self.width))).fold(u32::MAX, u32::min)
    }

    /// CMS.QUERY's items, in order, each answered to `answer` as [`query`] answers it, their
    /// cells asked of the CPU a window ahead of the reads as in [`increment_all`].
    ///
    /// [`query`]: CountMinSketch::query
    /// [`increment_all`]: CountMinSketch::increment_all
    pub fn query_all<'a>(&self, items: impl IntoIterator<Item = &'a [u8]>, mut answer: impl FnMut(u32)) {
        if self.counters.len() <= CACHED_BYTES {
            for item in items {
                answer(self.query(item));
            }
            return;
        }
        let mut cells = Cells::new(items.into_iter().map(|item| (item, ())), self.width, self.depth);
        let mut window = [(0, ()); WINDOW];
        let (mut row, mut least) = (0, u32::MAX);
        loop {
            let filled = cells.fill(&self.counters, &mut window);
            if filled == 0 {
                return;
            }
            for &(cell, ()) in window.iter().take(filled) {
                least = least.min(self.counter(cell));
                row += 1;
                if row == self.depth {
                    answer(least);
                    (row, least) = (0, u32::MAX);
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
        let same = |source: &MergeSource<'_>| match source {
            MergeSource::Sketch(sketch) => self.same_dimensions(sketch),
            MergeSource::Destination => true,
        };
        if !sources.iter().all(|(source, _)| same(source)) {
            return Err(MergeError::Dimensions);
        }
        let cells = self.width * self.depth;
        let count = self.merged_count(sources).ok_or(MergeError::Overflow)?;
        if !(0..cells).all(|cell| self.merged_counter(sources, cell).is_some()) {
            return Err(MergeError::Overflow);
        }
        for cell in 0..cells {
            if let Some(counter) = self.merged_counter(sources, cell) {
                self.set_counter(cell, counter);
            }
        }
        self.count = count;
        Ok(())
    }

    /// The weighted sum at `cell`, or `None` when a step leaves `i64` or the sum leaves
    /// the counters' range.
    fn merged_counter(&self, sources: &[(MergeSource<'_>, i64)], cell: usize) -> Option<u32> {
        let mut sum = 0i64;
        for &(source, weight) in sources {
            let counter = match source {
                MergeSource::Sketch(sketch) => sketch.counter(cell),
                MergeSource::Destination => self.counter(cell),
            };
            sum = sum.checked_add(i64::from(counter).checked_mul(weight)?)?;
        }
        u32::try_from(sum).ok()
    }

    /// The weighted sum of the totals, or `None` when a product or a partial sum leaves
    /// `i64`, or the sum is negative. A total past `i64::MAX` overflows with any weight but 0.
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

    /// Counter `cell`. Cells are below `width * depth`, which the array holds: the `None` of
    /// `get` never happens.
    #[inline]
    fn counter(&self, cell: usize) -> u32 {
        let start = cell * COUNTER_BYTES;
        self.counters
            .as_slice()
            .get(start..start + COUNTER_BYTES)
            .and_then(|bytes| <[u8; COUNTER_BYTES]>::try_from(bytes).ok())
            .map_or(0, u32::from_le_bytes)
    }

    #[inline]
    fn set_counter(&mut self, cell: usize, value: u32) {
        let start = cell * COUNTER_BYTES;
        if let Some(bytes) = self.counters.as_mut_slice().get_mut(start..start + COUNTER_BYTES) {
            bytes.copy_from_slice(&value.to_le_bytes());
        }
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

/// Bytes of `width * depth` counters of `counter_bytes` each, if an address can hold them.
pub(super) fn bytes_for(width: u64, depth: u64, counter_bytes: usize) -> Option<usize> {
    let bytes = width.checked_mul(depth)?.checked_mul(counter_bytes as u64)?;
    usize::try_from(bytes).ok()
}

/// The cells of a stream of items, every row of one item after another, each with the
/// item's payload (its increment, or nothing for a query).
struct Cells<'a, I, P> {
    /// Fused: a window that ends with the items may be followed by one more `fill`.
    items: std::iter::Fuse<I>,
    /// The item being hashed, with its payload and the next row to hash.
    current: Option<(&'a [u8], P, usize)>,
    width: usize,
    depth: usize,
}

impl<'a, I: Iterator<Item = (&'a [u8], P)>, P: Copy> Cells<'a, I, P> {
    fn new(items: I, width: usize, depth: usize) -> Self {
        Cells { items: items.fuse(), current: None, width, depth }
    }

    /// Fills `window` with the next cells, asking the CPU for each cell's line as it is
    /// hashed; answers how many (0 once every item's rows are out). By the time the caller
    /// reads the first cell, the other lines of the window are on their way.
    fn fill(&mut self, counters: &ByteArray, window: &mut [(usize, P); WINDOW]) -> usize {
        let mut filled = 0;
        for slot in window.iter_mut() {
            let (item, payload, row) = match self.current {
                Some((item, payload, row)) if row < self.depth => (item, payload, row),
                _ => match self.items.next() {
                    Some((item, payload)) => (item, payload, 0),
                    None => break,
                },
            };
            let cell = cell(item, row, self.width);
            counters.prefetch(cell * COUNTER_BYTES);
            *slot = (cell, payload);
            self.current = Some((item, payload, row + 1));
            filled += 1;
        }
        filled
    }
}
