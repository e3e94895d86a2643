//! Austin Appleby's MurmurHash2 (32-bit) and MurmurHash64A, the hashes RedisBloom's
//! filters are built on, and the pair of values its double hashing derives from them.
//!
//! Both hashes read the item in little-endian words, which is also how RedisBloom reads them
//! on the x86-64 and ARM64 servers that wrote the data.

/// The two values of RedisBloom's double hashing: probe `i` is `(a + i * b) mod m`, computed
/// in wrapping 64-bit arithmetic whichever hash width made them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HashPair {
    /// The first hash: where probe 0 lands.
    pub a: u64,
    /// The second hash, seeded with `a`: the step between probes.
    pub b: u64,
}

/// Seeds RedisBloom starts from: `b` is seeded with `a`.
const SEED_64: u64 = 0xc6a4_a793_5bd1_e995;
const SEED_32: u32 = 0x9747_b28c;

impl HashPair {
    /// Filters whose options carry the 64-bit flag (every filter RedisBloom 1.1 and later
    /// creates).
    pub fn wide(item: &[u8]) -> HashPair {
        let a = murmur64a(item, SEED_64);
        HashPair { a, b: murmur64a(item, a) }
    }

    /// Filters from before the 64-bit flag, or loaded with it cleared.
    pub fn narrow(item: &[u8]) -> HashPair {
        let a = murmur2(item, SEED_32);
        HashPair { a: u64::from(a), b: u64::from(murmur2(item, a)) }
    }
}

/// MurmurHash64A. The length enters as a 32-bit int would (RedisBloom passes an `int`);
/// items are far shorter than 2 GiB, so that is the plain length.
pub fn murmur64a(key: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (key.len() as u64).wrapping_mul(M);
    let mut words = key.chunks_exact(8);
    for word in &mut words {
        let mut k =
            u64::from_le_bytes([word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        for (index, &byte) in tail.iter().enumerate() {
            h ^= u64::from(byte) << (8 * index);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^ (h >> R)
}

/// MurmurHash2, 32-bit: [`murmur2_each`] of one seed.
pub fn murmur2(key: &[u8], seed: u32) -> u32 {
    let [hash] = murmur2_each(key, [seed]);
    hash
}

/// [`murmur2`] of one key under `N` seeds at once, as a sketch's rows hash it. A word's mixing
/// does not depend on the seed, so it is done once for all of them; each seed's state then
/// takes two operations a word, and the `N` states go through the CPU side by side.
///
/// Always inlined: out of line, the states went through memory on their way back, and a
/// 100-item CMS.QUERY on a 2000x5 sketch was slower than hashing row by row (in process it
/// was faster); inlined, the states stay in registers and the call is a third faster.
#[allow(clippy::inline_always, reason = "measured through the server, as the comment says")]
#[inline(always)]
pub fn murmur2_each<const N: usize>(key: &[u8], seeds: [u32; N]) -> [u32; N] {
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let mut hashes = seeds.map(|seed| seed ^ key.len() as u32);
    let mut words = key.chunks_exact(4);
    for word in &mut words {
        let mut k = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        for h in &mut hashes {
            *h = h.wrapping_mul(M) ^ k;
        }
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        let bytes =
            tail.iter().enumerate().fold(0, |bytes, (index, &byte)| bytes ^ (u32::from(byte) << (8 * index)));
        for h in &mut hashes {
            *h = (*h ^ bytes).wrapping_mul(M);
        }
    }
    hashes.map(|mut h| {
        h ^= h >> 13;
        h = h.wrapping_mul(M);
        h ^ (h >> 15)
    })
}

/// A row's column for a hash, `hash % width` as RedisBloom's sketches take it: by Lemire's
/// fastmod where the width fits 32 bits (two multiplications, exact for every 32-bit hash)
/// instead of a division per row, which cost a small Count-Min's 100-item CMS.QUERY a tenth
/// of its time.
#[derive(Clone, Copy)]
pub struct Columns {
    /// The width.
    pub width: usize,
    /// `2^64 / width` rounded up, for a width of 1 to `u32::MAX`.
    factor: Option<u64>,
}

impl Columns {
    /// The columns of rows `width` wide (at least 1).
    pub fn new(width: usize) -> Columns {
        let factor = u32::try_from(width)
            .ok()
            .filter(|&width| width > 0)
            .map(|width| (u64::MAX / u64::from(width)).wrapping_add(1));
        Columns { width, factor }
    }

    /// `hash % width`.
    #[inline]
    pub fn of(self, hash: u32) -> usize {
        match self.factor {
            Some(factor) => {
                ((u128::from(factor.wrapping_mul(u64::from(hash))) * self.width as u128) >> 64) as usize
            }
            None => hash as usize % self.width,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_input_with_seed_zero_hashes_to_zero() {
        assert_eq!(murmur2(b"", 0), 0);
        assert_eq!(murmur64a(b"", 0), 0);
    }

    #[test]
    fn every_tail_length_is_hashed_and_differs() {
        let data = b"0123456789abcdef";
        let wide: Vec<u64> = (0..=16).map(|len| murmur64a(&data[..len], SEED_64)).collect();
        let narrow: Vec<u32> = (0..=16).map(|len| murmur2(&data[..len], SEED_32)).collect();
        for i in 0..wide.len() {
            for j in i + 1..wide.len() {
                assert_ne!(wide[i], wide[j]);
                assert_ne!(narrow[i], narrow[j]);
            }
        }
    }

    /// MurmurHash2 as Austin Appleby wrote it, word by word and one seed at a time: what
    /// RedisBloom's C computes.
    fn reference_murmur2(key: &[u8], seed: u32) -> u32 {
        const M: u32 = 0x5bd1_e995;
        let mut h = seed ^ key.len() as u32;
        let mut words = key.chunks_exact(4);
        for word in &mut words {
            let mut k = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
            k = k.wrapping_mul(M);
            k ^= k >> 24;
            k = k.wrapping_mul(M);
            h = h.wrapping_mul(M) ^ k;
        }
        let tail = words.remainder();
        if !tail.is_empty() {
            for (index, &byte) in tail.iter().enumerate() {
                h ^= u32::from(byte) << (8 * index);
            }
            h = h.wrapping_mul(M);
        }
        h ^= h >> 13;
        h = h.wrapping_mul(M);
        h ^ (h >> 15)
    }

    #[test]
    fn many_seeds_at_once_hash_as_each_alone() {
        let data: Vec<u8> = (0..64u32).map(|i| (i.wrapping_mul(167) ^ 0x5a) as u8).collect();
        for len in 0..=data.len() {
            let key = &data[..len];
            let seeds = [0, 1, 2, 3, 1919, u32::MAX, 0x9747_b28c];
            let together = murmur2_each(key, seeds);
            for (seed, hash) in seeds.into_iter().zip(together) {
                assert_eq!(hash, reference_murmur2(key, seed), "length {len}, seed {seed}");
                assert_eq!(murmur2(key, seed), hash);
            }
        }
    }

    proptest::proptest! {
        /// A row's column is RedisBloom's `hash % width`, whichever way it is computed.
        #[test]
        fn columns_are_the_remainder_of_the_hash(hash in proptest::prelude::any::<u32>(), width in 1usize..=u32::MAX as usize) {
            proptest::prop_assert_eq!(Columns::new(width).of(hash), hash as usize % width);
        }
    }

    #[test]
    fn columns_are_the_remainder_at_the_edges() {
        for width in
            [1, 2, 3, 7, 2000, 1 << 31, (1 << 31) + 1, u32::MAX as usize - 1, u32::MAX as usize, 1 << 33]
        {
            let below = u32::try_from(width - 1).unwrap_or(u32::MAX);
            for hash in [0, 1, below, below.saturating_add(1), u32::MAX - 1, u32::MAX] {
                assert_eq!(Columns::new(width).of(hash), hash as usize % width, "{hash} % {width}");
            }
        }
    }
}
