//! `HeavyKeeper`'s counters: `depth` rows of `width` buckets, RedisBloom's `Bucket`s
//! (fingerprint, then count, both `u32` little-endian), and the counting of one item in them.
//! The plain sketch has one such array; the windowed sketch one per generation.

use super::decay::{Decay, Decayed, Rng};
use super::params::Shape;
use crate::bytes::{AllocationFailed, ByteArray};
use crate::murmur::{murmur2, murmur2_each, Columns};
use crate::window::MAX_GENERATIONS;

/// RedisBloom's `Bucket`: fingerprint, then count.
const BUCKET_BYTES: usize = 8;
/// The seed of an item's fingerprint (`GA` in RedisBloom); row `i` is hashed with seed `i`.
const FINGERPRINT_SEED: u32 = 1919;

/// An item's fingerprint.
pub(super) fn fingerprint(item: &[u8]) -> u32 {
    murmur2(item, FINGERPRINT_SEED)
}

/// The index of the item's bucket in `row` (RedisBloom computes the row's offset in 32 bits,
/// which wraps only for sketches of more than 32 GiB; this never wraps).
pub(super) fn bucket_index(item: &[u8], row: u32, width: u32) -> usize {
    row as usize * width as usize + (murmur2(item, row) % width) as usize
}

/// Buckets a batch asks the CPU for ahead of its adds, and the most rows whose indexes are
/// computed ahead.
pub(super) const PREFETCH_BUCKETS: usize = 64;

/// The item's fingerprint, and the indexes of its buckets in the rows of `rows` (as many as
/// it holds, from row 0), as [`fingerprint`] and [`bucket_index`] find them: the fingerprint
/// and the first seven rows hashed together, further rows four at a time
/// ([`murmur2_each`]), a row's column taken without dividing ([`Columns`]).
#[inline]
pub(super) fn hash_item(item: &[u8], width: u32, rows: &mut [usize]) -> u32 {
    let columns = Columns::new(width as usize);
    let first = murmur2_each(item, [FINGERPRINT_SEED, 0, 1, 2, 3, 4, 5, 6]);
    let (fingerprint, first_rows) = (first[0], &first[1..]);
    for (row, (index, &hash)) in rows.iter_mut().zip(first_rows).enumerate() {
        *index = row * width as usize + columns.of(hash);
    }
    let mut row = first_rows.len();
    while row + 4 <= rows.len() {
        let seed = row as u32;
        let hashes = murmur2_each(item, [seed, seed + 1, seed + 2, seed + 3]);
        for (offset, hash) in hashes.into_iter().enumerate() {
            rows[row + offset] = (row + offset) * width as usize + columns.of(hash);
        }
        row += 4;
    }
    for (row, index) in rows.iter_mut().enumerate().skip(row) {
        *index = bucket_index(item, row as u32, width);
    }
    fingerprint
}

/// Rows whose indexes one item's reader computes ahead ([`rows_of`]): as deep as sketches
/// usually are (RedisBloom's default is 7). A buffer as large as a batch's took a call to
/// `memset` to clear, a twentieth of a single TOPK.ADD's own instructions.
pub(super) const ITEM_ROWS: usize = 16;

/// The item's fingerprint, and the indexes of its buckets in the first rows, as many as
/// `buffer` holds, computed once for a reader of several rows or generations; the rows past
/// them are hashed where they are read ([`row_index`]).
pub(super) fn rows_of<'r>(
    item: &[u8],
    (width, depth): (u32, u32),
    buffer: &'r mut [usize; ITEM_ROWS],
) -> (u32, &'r [usize]) {
    let rows = &mut buffer[..ITEM_ROWS.min(depth as usize)];
    (hash_item(item, width, rows), rows)
}

/// The item's bucket in `row`: from `rows`, the indexes [`hashed_in_batches`] computed, or
/// hashed here where it computed none (a depth beyond what it hashes ahead).
pub(super) fn row_index(rows: &[usize], item: &[u8], row: u32, width: u32) -> usize {
    rows.get(row as usize).copied().unwrap_or_else(|| bucket_index(item, row, width))
}

/// Hands each item, in order, to `each` with its increment, fingerprint and the indexes of its
/// buckets (see [`row_index`]). The items are hashed a few at a time and their buckets asked of
/// the CPU (`prefetch(state, index)`) before any of them is handed over, so that their cache
/// misses overlap.
pub(super) fn hashed_in_batches<'a, S>(
    state: &mut S,
    items: impl IntoIterator<Item = (&'a [u8], u32)>,
    (width, depth): (u32, u32),
    prefetch: impl Fn(&S, usize),
    mut each: impl FnMut(&mut S, &'a [u8], u32, u32, &[usize]),
) {
    let rows_per_item = depth as usize;
    if rows_per_item > PREFETCH_BUCKETS {
        for (item, increment) in items {
            each(state, item, increment, fingerprint(item), &[]);
        }
        return;
    }
    let per_batch = PREFETCH_BUCKETS / rows_per_item;
    let mut batch: [(&[u8], u32, u32); PREFETCH_BUCKETS] = [(&[], 0, 0); PREFETCH_BUCKETS];
    let mut indexes = [0usize; PREFETCH_BUCKETS];
    let mut items = items.into_iter();
    loop {
        let mut len = 0;
        for (item, increment) in items.by_ref().take(per_batch) {
            let rows = &mut indexes[len * rows_per_item..(len + 1) * rows_per_item];
            batch[len] = (item, increment, hash_item(item, width, rows));
            for &index in rows.iter() {
                prefetch(state, index);
            }
            len += 1;
        }
        if len == 0 {
            return;
        }
        for (position, &(item, increment, fingerprint)) in batch[..len].iter().enumerate() {
            let rows = &indexes[position * rows_per_item..(position + 1) * rows_per_item];
            each(state, item, increment, fingerprint, rows);
        }
    }
}

/// The most bucket arrays [`Buckets::summed_estimate`] reads in one walk over the rows: every
/// generation a window keeps alive.
const ARRAYS_PER_WALK: usize = MAX_GENERATIONS as usize + 1;

/// The buckets of a sketch or of a generation.
pub(super) struct Buckets(pub(super) ByteArray);

impl Buckets {
    /// The bytes of a sketch's buckets (`None` past `u64`, which no checked shape reaches).
    pub(super) fn bytes_for(shape: &Shape) -> Option<u64> {
        u64::from(shape.width).checked_mul(u64::from(shape.depth))?.checked_mul(BUCKET_BYTES as u64)
    }

    /// `width * depth` empty buckets.
    pub(super) fn try_zeroed(shape: &Shape) -> Result<Buckets, AllocationFailed> {
        Ok(Buckets(ByteArray::try_zeroed(Buckets::bytes_for(shape).ok_or(AllocationFailed)?)?))
    }

    /// The bucket's fingerprint and count, read as one word (one bounds check, one load).
    fn bucket(&self, index: usize) -> (u32, u32) {
        let offset = index * BUCKET_BYTES;
        let mut word = [0; BUCKET_BYTES];
        word.copy_from_slice(&self.0.as_slice()[offset..offset + BUCKET_BYTES]);
        let word = u64::from_le_bytes(word);
        (word as u32, (word >> 32) as u32)
    }

    fn set_bucket(&mut self, index: usize, fingerprint: u32, count: u32) {
        let offset = index * BUCKET_BYTES;
        let bytes = &mut self.0.as_mut_slice()[offset..offset + BUCKET_BYTES];
        bytes[..4].copy_from_slice(&fingerprint.to_le_bytes());
        bytes[4..].copy_from_slice(&count.to_le_bytes());
    }

    /// Asks the CPU for the bucket at `index`.
    pub(super) fn prefetch(&self, index: usize) {
        self.0.prefetch(index * BUCKET_BYTES);
    }

    /// Counts the item `increment` times in its bucket of each row (`index_of(row)`): a bucket
    /// of the item grows by the increment (saturating where RedisBloom's `u32` would wrap); an
    /// empty one becomes the item's; one of another item decays as `powers` draws it from
    /// `rng`. Answers the item's largest count among the buckets it holds now.
    pub(super) fn count(
        &mut self,
        powers: &Decay,
        rng: &mut Rng,
        (fingerprint, increment): (u32, u32),
        depth: u32,
        index_of: impl Fn(u32) -> usize,
    ) -> u32 {
        let mut max_count = 0;
        for row in 0..depth {
            let index = index_of(row);
            let (owner, count) = self.bucket(index);
            let count = if count == 0 {
                increment
            } else if owner == fingerprint {
                count.saturating_add(increment)
            } else {
                match powers.hit(count, increment, rng) {
                    Decayed::Kept(count) => {
                        self.set_bucket(index, owner, count);
                        continue;
                    }
                    Decayed::Taken(count) => count,
                }
            };
            self.set_bucket(index, fingerprint, count);
            max_count = max_count.max(count);
        }
        max_count
    }

    /// The counts of the item's buckets (`index_of(row)` in each row) that hold its
    /// fingerprint.
    pub(super) fn counts_of<'a>(
        &'a self,
        fingerprint: u32,
        depth: u32,
        index_of: impl Fn(u32) -> usize + 'a,
    ) -> impl Iterator<Item = u32> + 'a {
        (0..depth)
            .map(move |row| self.bucket(index_of(row)))
            .filter(move |&(owner, _)| owner == fingerprint)
            .map(|(_, count)| count)
    }

    /// `HeavyKeeper`'s estimate of the item: its largest bucket count, 0 when it holds none.
    pub(super) fn estimate(&self, fingerprint: u32, depth: u32, index_of: impl Fn(u32) -> usize) -> u32 {
        self.counts_of(fingerprint, depth, index_of).max().unwrap_or(0)
    }

    /// [`estimate`](Self::estimate), every row's index hashed ahead (`rows`, one per row): a
    /// windowed add of an item not listed reads the item's buckets in every older generation,
    /// and through the general walk each read cost about 24 instructions, here about 10.
    fn estimate_ahead(&self, fingerprint: u32, rows: &[usize]) -> u32 {
        let mut largest = 0;
        for &index in rows {
            let (owner, count) = self.bucket(index);
            if owner == fingerprint {
                largest = largest.max(count);
            }
        }
        largest
    }

    /// The item's estimates in each of `arrays`, summed, `rows` the indexes of its buckets
    /// hashed ahead from row 0 (see [`row_index`]): array by array where they are all of them.
    /// Otherwise, where rows past those are each a hash of their own, each index is found once
    /// for every array, the arrays read a walk's worth at a time: a window's generations in
    /// one walk (whose room for every generation there can be, set up for each read, was a
    /// tenth of a windowed add of a shallow sketch).
    pub(super) fn summed_estimate<'a>(
        arrays: impl IntoIterator<Item = &'a Buckets>,
        (fingerprint, item): (u32, &[u8]),
        (width, depth): (u32, u32),
        rows: &[usize],
    ) -> u64 {
        let index_of = |row| row_index(rows, item, row, width);
        if rows.len() == depth as usize {
            return arrays.into_iter().map(|array| u64::from(array.estimate_ahead(fingerprint, rows))).sum();
        }
        let mut arrays = arrays.into_iter().peekable();
        let mut sum = 0;
        while arrays.peek().is_some() {
            let mut walk: [Option<&Buckets>; ARRAYS_PER_WALK] = [None; ARRAYS_PER_WALK];
            let mut largest = [0u32; ARRAYS_PER_WALK];
            for (slot, array) in walk.iter_mut().zip(arrays.by_ref()) {
                *slot = Some(array);
            }
            for row in 0..depth {
                let index = index_of(row);
                for (array, largest) in walk.iter().map_while(|array| *array).zip(&mut largest) {
                    let (owner, count) = array.bucket(index);
                    if owner == fingerprint {
                        *largest = (*largest).max(count);
                    }
                }
            }
            sum += largest.iter().map(|&count| u64::from(count)).sum::<u64>();
        }
        sum
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    pub(super) fn try_clone(&self) -> Result<Buckets, AllocationFailed> {
        Ok(Buckets(self.0.try_clone()?))
    }
}
