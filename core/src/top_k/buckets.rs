//! `HeavyKeeper`'s counters: `depth` rows of `width` buckets, RedisBloom's `Bucket`s
//! (fingerprint, then count, both `u32` little-endian), and the counting of one item in them.
//! The plain sketch has one such array; the windowed sketch one per generation.

use super::decay::{Decay, Decayed, Rng};
use crate::bytes::{AllocationFailed, ByteArray};
use crate::murmur::murmur2;

/// RedisBloom's `Bucket`: fingerprint, then count.
pub(super) const BUCKET_BYTES: usize = 8;
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

fn read_u32(bytes: &[u8], offset: usize) -> u32 {
    let mut word = [0; 4];
    word.copy_from_slice(&bytes[offset..offset + 4]);
    u32::from_le_bytes(word)
}

/// The buckets of a sketch or of a generation.
pub(super) struct Buckets(pub(super) ByteArray);

impl Buckets {
    /// `width * depth` empty buckets.
    pub(super) fn try_zeroed(width: u64, depth: u64) -> Result<Buckets, AllocationFailed> {
        Ok(Buckets(ByteArray::try_zeroed(width * depth * BUCKET_BYTES as u64)?))
    }

    fn bucket(&self, index: usize) -> (u32, u32) {
        let bytes = self.0.as_slice();
        let offset = index * BUCKET_BYTES;
        (read_u32(bytes, offset), read_u32(bytes, offset + 4))
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

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    pub(super) fn try_clone(&self) -> Result<Buckets, AllocationFailed> {
        Ok(Buckets(self.0.try_clone()?))
    }
}
