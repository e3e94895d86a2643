//! The bit array of one sub-filter: a run of 512-bit blocks, each one cache line.
//!
//! Bit `i` of a block is bit `i % 8` of byte `i / 8` (little-endian words, least
//! significant bit first). That byte order is also the encoded form: saving a filter writes
//! these bytes as they are, which is why big-endian targets are refused at compile time.

use crate::bytes::{AllocationFailed, ByteArray, CACHE_LINE};
use bitvec::prelude::{BitArray, Lsb0};

#[cfg(not(target_endian = "little"))]
compile_error!("the encoded filter is the in-memory bit array; only little-endian targets are supported");

/// Bits in a block: one cache line's worth.
pub const BLOCK_BITS: u32 = 512;
/// Bytes in a block, [`BLOCK_BITS`] / 8, a whole [`CACHE_LINE`].
pub const BLOCK_BYTES: usize = 64;

/// One cache line of bits. The alignment keeps every block inside a single line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct Block(BitArray<[u64; 8], Lsb0>);

const _: () = assert!(std::mem::size_of::<Block>() == BLOCK_BYTES && BLOCK_BYTES == CACHE_LINE);

impl Block {
    /// Sets the given bits; answers whether any of them was clear before.
    #[inline]
    pub fn set_all(&mut self, positions: impl Iterator<Item = u32>) -> bool {
        let mut changed = false;
        for position in positions {
            let index = position as usize % BLOCK_BITS as usize;
            changed |= !self.0[index];
            self.0.set(index, true);
        }
        changed
    }

    /// Whether every given bit is set.
    #[inline]
    pub fn test_all(&self, mut positions: impl Iterator<Item = u32>) -> bool {
        positions.all(|position| self.0[position as usize % BLOCK_BITS as usize])
    }

    /// A block with the given bits set: an item's pattern, made once to test against the
    /// blocks of several filters ([`holds_pattern`](Self::holds_pattern)).
    #[inline]
    pub fn pattern(positions: impl Iterator<Item = u32>) -> Block {
        let mut words = [0u64; 8];
        for position in positions {
            let index = position as usize % BLOCK_BITS as usize;
            words[index / 64] |= 1 << (index % 64);
        }
        Block(BitArray::new(words))
    }

    /// Sets every bit of `pattern` here; answers whether any of them was clear before, as
    /// [`set_all`](Self::set_all) of the positions the pattern was made of does.
    #[inline]
    pub fn set_pattern(&mut self, pattern: &Block) -> bool {
        let mut missing = 0;
        for (word, wanted) in self.0.data.iter_mut().zip(&pattern.0.data) {
            missing |= wanted & !*word;
            *word |= wanted;
        }
        missing != 0
    }

    /// Whether every bit of `pattern` is set here: [`test_all`](Self::test_all) of the
    /// positions the pattern was made of, without an early exit but without a branch either.
    #[inline]
    pub fn holds_pattern(&self, pattern: &Block) -> bool {
        self.0.data.iter().zip(&pattern.0.data).fold(0, |missing, (word, wanted)| missing | (wanted & !word))
            == 0
    }
}

/// A zero-initialised, fallibly allocated array of blocks.
pub struct BlockArray(ByteArray);

impl BlockArray {
    /// Allocates `count` zeroed blocks, or fails without aborting.
    pub fn try_zeroed(count: u64) -> Result<BlockArray, AllocationFailed> {
        let bytes = count.checked_mul(BLOCK_BYTES as u64).ok_or(AllocationFailed)?;
        Ok(BlockArray(ByteArray::try_zeroed(bytes)?))
    }

    /// A copy, in an array allocated here and so aligned like any other.
    pub fn try_clone(&self) -> Result<BlockArray, AllocationFailed> {
        Ok(BlockArray(self.0.try_clone()?))
    }

    /// The blocks.
    // The cast to the more-aligned `Block` is sound: every `BlockArray` holds bytes that start
    // on a cache line, allocated so by `try_zeroed` (and `try_clone`) or checked, else copied,
    // by `from_bytes`. Clippy cannot see that through the `ByteArray`.
    #[allow(clippy::cast_ptr_alignment)]
    pub fn as_slice(&self) -> &[Block] {
        // SAFETY: the bytes are 64-byte aligned (try_zeroed), a whole number of blocks long, and any byte
        // pattern is a valid Block (64 plain bytes, no padding: checked above).
        unsafe { std::slice::from_raw_parts(self.0.as_slice().as_ptr().cast::<Block>(), self.len()) }
    }

    /// The blocks, writable.
    // Aligned for `Block` by construction: see `as_slice`.
    #[allow(clippy::cast_ptr_alignment)]
    pub fn as_mut_slice(&mut self) -> &mut [Block] {
        // SAFETY: as in `as_slice`, and `&mut self` makes the borrow exclusive.
        unsafe {
            std::slice::from_raw_parts_mut(self.0.as_mut_slice().as_mut_ptr().cast::<Block>(), self.len())
        }
    }

    /// The bits as bytes, in the documented bit order.
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_slice()
    }

    /// The bits as writable bytes, in the same order: where a dump's chunks are loaded.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        self.0.as_mut_slice()
    }

    /// Length in bytes, [`BLOCK_BYTES`] per block.
    pub fn byte_len(&self) -> usize {
        self.0.len()
    }

    fn len(&self) -> usize {
        self.0.len() / BLOCK_BYTES
    }

    /// Asks the CPU to start loading a block that will be needed soon.
    #[inline]
    pub fn prefetch(&self, index: usize) {
        self.0.prefetch(index.saturating_mul(BLOCK_BYTES));
    }

    /// Blocks made of bytes read already: kept as they are where they lie on a cache-line
    /// boundary (a large buffer from the allocator does), copied into an aligned array
    /// otherwise. `None` when they are not a whole number of blocks, or on a failed copy.
    pub fn from_bytes(bytes: ByteArray) -> Option<BlockArray> {
        if !bytes.len().is_multiple_of(BLOCK_BYTES) {
            return None;
        }
        if (bytes.as_slice().as_ptr() as usize).is_multiple_of(BLOCK_BYTES) {
            return Some(BlockArray(bytes));
        }
        ByteArray::try_copy_of(bytes.as_slice()).ok().map(BlockArray)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_clear_and_remembers_what_was_set() {
        let mut array = BlockArray::try_zeroed(3).unwrap();
        assert!(array.as_bytes().iter().all(|&byte| byte == 0));
        let block = &mut array.as_mut_slice()[1];
        assert!(!block.test_all([5u32, 300].into_iter()));
        assert!(block.set_all([5u32, 300].into_iter()));
        assert!(!block.set_all([5u32, 300].into_iter()), "setting again changes nothing");
        assert!(block.test_all([300u32, 5].into_iter()));
        assert!(!block.test_all([5u32, 6].into_iter()));
    }

    #[test]
    fn a_pattern_is_held_exactly_where_its_bits_all_are() {
        let mut array = BlockArray::try_zeroed(1).unwrap();
        let block = &mut array.as_mut_slice()[0];
        block.set_all([3u32, 64, 511].into_iter());
        for positions in [vec![3u32, 64], vec![511, 3, 64], vec![3, 65], vec![0], vec![]] {
            let pattern = Block::pattern(positions.iter().copied());
            assert_eq!(block.holds_pattern(&pattern), block.test_all(positions.into_iter()));
        }
    }

    #[test]
    fn setting_a_pattern_sets_and_answers_as_setting_its_bits() {
        let mut array = BlockArray::try_zeroed(2).unwrap();
        let [by_pattern, by_bits] = array.as_mut_slice() else { panic!("two blocks") };
        for positions in [vec![3u32, 64, 511], vec![3, 64], vec![3, 65, 200], vec![], vec![0, 511]] {
            let pattern = Block::pattern(positions.iter().copied());
            assert_eq!(by_pattern.set_pattern(&pattern), by_bits.set_all(positions.into_iter()));
            assert_eq!(by_pattern.0, by_bits.0);
        }
    }

    #[test]
    fn bit_order_is_the_documented_one() {
        let mut array = BlockArray::try_zeroed(2).unwrap();
        array.as_mut_slice()[1].set_all([9u32].into_iter());
        let bytes = array.as_bytes();
        assert_eq!(bytes.len(), 128);
        assert_eq!(bytes[64 + 1], 0b10);
        assert_eq!(bytes.iter().filter(|&&byte| byte != 0).count(), 1);
    }

    #[test]
    fn blocks_are_cache_line_aligned() {
        let array = BlockArray::try_zeroed(5).unwrap();
        assert_eq!(array.as_bytes().as_ptr() as usize % 64, 0);
    }

    #[test]
    fn an_impossible_size_is_an_error_not_an_abort() {
        assert!(BlockArray::try_zeroed(u64::MAX / 2).is_err());
        assert!(BlockArray::try_zeroed(1 << 50).is_err());
        assert!(ByteArray::try_zeroed(u64::MAX).is_err());
    }

    #[test]
    fn clones_are_equal_and_independent() {
        let mut array = BlockArray::try_zeroed(2).unwrap();
        array.as_mut_slice()[0].set_all([1u32].into_iter());
        let mut copy = array.try_clone().unwrap();
        assert_eq!(copy.as_bytes(), array.as_bytes());
        copy.as_mut_slice()[1].set_all([2u32].into_iter());
        assert_ne!(copy.as_bytes(), array.as_bytes());
    }
}
