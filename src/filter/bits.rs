//! The bit array of one sub-filter: a run of 512-bit blocks, each one cache line.
//!
//! Bit `i` of a block is bit `i % 8` of byte `i / 8` (little-endian words, least
//! significant bit first). That byte order is also the encoded form: saving a filter writes
//! these bytes as they are, which is why big-endian targets are refused at compile time.

use bitvec::prelude::{BitArray, Lsb0};
use std::alloc::{self, Layout as AllocLayout};
use std::ptr::NonNull;

#[cfg(not(target_endian = "little"))]
compile_error!("the encoded filter is the in-memory bit array; only little-endian targets are supported");

pub const BLOCK_BITS: u32 = 512;
pub const BLOCK_BYTES: usize = 64;

/// One cache line of bits. The alignment keeps every block inside a single line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct Block(BitArray<[u64; 8], Lsb0>);

const _: () = assert!(std::mem::size_of::<Block>() == BLOCK_BYTES);

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
}

/// Allocation of the bit array failed: the caller answers "insufficient memory".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocationFailed;

/// A fallibly allocated byte array, owned like a `Box<[u8]>`. Both layouts keep their bits
/// in one: [`BlockArray`] views it as 512-bit blocks, RedisBloom's layout
/// (`super::redisbloom`) as plain bytes.
pub struct ByteArray {
    pointer: NonNull<u8>,
    len: usize,
    /// How the memory goes back: to the global allocator, or to whoever handed it over.
    release: Release,
}

/// A function that frees memory handed over by its owner (Redis's `RedisModule_Free`).
pub type FreeFunction = unsafe extern "C" fn(*mut std::ffi::c_void);

#[derive(Clone, Copy)]
enum Release {
    /// Allocated here with this alignment, which freeing must name again.
    GlobalAllocator { align: usize },
    /// Taken over from another owner, freed by its function.
    Function(FreeFunction),
}

// SAFETY: ByteArray owns its allocation exclusively, like a Box<[u8]>.
unsafe impl Send for ByteArray {}
unsafe impl Sync for ByteArray {}

/// Arrays this module allocates are aligned to a cache line, so blocks never straddle two.
const ALIGNMENT: usize = BLOCK_BYTES;

impl ByteArray {
    /// Allocates `len` zeroed bytes, or fails without aborting.
    ///
    /// A `Vec` would abort the whole server when the allocator says no; this goes to the
    /// allocator directly and turns a null pointer into an error.
    pub fn try_zeroed(len: u64) -> Result<ByteArray, AllocationFailed> {
        let len = usize::try_from(len).map_err(|_| AllocationFailed)?;
        if len == 0 {
            return Ok(ByteArray::empty());
        }
        let layout = AllocLayout::from_size_align(len, ALIGNMENT).map_err(|_| AllocationFailed)?;
        // SAFETY: the layout has a non-zero size.
        let pointer = unsafe { alloc::alloc_zeroed(layout) };
        let pointer = NonNull::new(pointer).ok_or(AllocationFailed)?;
        Ok(ByteArray { pointer, len, release: Release::GlobalAllocator { align: ALIGNMENT } })
    }

    fn empty() -> ByteArray {
        ByteArray {
            pointer: NonNull::<Block>::dangling().cast(),
            len: 0,
            release: Release::GlobalAllocator { align: ALIGNMENT },
        }
    }

    /// A copy of `bytes` in an array of its own.
    pub fn try_copy_of(bytes: &[u8]) -> Result<ByteArray, AllocationFailed> {
        let mut copy = ByteArray::try_zeroed(bytes.len() as u64)?;
        copy.as_mut_slice().copy_from_slice(bytes);
        Ok(copy)
    }

    /// Takes over `len` bytes at `pointer`, which the caller hands over with the function
    /// that frees them, so that a buffer read from a file becomes a filter's bits without
    /// being copied. The bytes are only ever read and written as bytes: no alignment needed.
    ///
    /// # Safety
    /// `pointer` holds `len` initialised bytes, is owned by nobody else from now on, and is
    /// freed by calling `free` on it, once.
    pub unsafe fn take_over(pointer: NonNull<u8>, len: usize, free: FreeFunction) -> ByteArray {
        ByteArray { pointer, len, release: Release::Function(free) }
    }

    pub fn try_clone(&self) -> Result<ByteArray, AllocationFailed> {
        ByteArray::try_copy_of(self.as_slice())
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `pointer` points at `len` initialised bytes owned by self (or dangles, well
        // aligned, with len 0, which slices allow).
        unsafe { std::slice::from_raw_parts(self.pointer.as_ptr(), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_slice`, and `&mut self` makes the borrow exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.pointer.as_ptr(), self.len) }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Asks the CPU to start loading the cache line holding byte `index`.
    #[inline]
    pub fn prefetch(&self, index: usize) {
        #[cfg(target_arch = "x86_64")]
        if index < self.len {
            // SAFETY: the address lies inside the allocation; prefetching has no other effect.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>(self.pointer.as_ptr().add(index).cast::<i8>());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = index;
    }
}

impl Drop for ByteArray {
    fn drop(&mut self) {
        match self.release {
            // SAFETY: handed over with the promise that `free` releases it (take_over).
            Release::Function(free) => unsafe { free(self.pointer.as_ptr().cast()) },
            Release::GlobalAllocator { align } if self.len > 0 => {
                // The layout was valid when allocating, so it still is.
                if let Ok(layout) = AllocLayout::from_size_align(self.len, align) {
                    // SAFETY: allocated in try_zeroed with this very layout.
                    unsafe { alloc::dealloc(self.pointer.as_ptr(), layout) }
                }
            }
            Release::GlobalAllocator { .. } => {}
        }
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

    pub fn try_clone(&self) -> Result<BlockArray, AllocationFailed> {
        Ok(BlockArray(self.0.try_clone()?))
    }

    pub fn as_slice(&self) -> &[Block] {
        // SAFETY: the bytes are 64-byte aligned (try_zeroed), a whole number of blocks long, and any byte
        // pattern is a valid Block (64 plain bytes, no padding: checked above).
        unsafe { std::slice::from_raw_parts(self.0.pointer.as_ptr().cast::<Block>(), self.len()) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [Block] {
        // SAFETY: as in `as_slice`, and `&mut self` makes the borrow exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.0.pointer.as_ptr().cast::<Block>(), self.len()) }
    }

    /// The bits as bytes, in the documented bit order.
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_slice()
    }

    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        self.0.as_mut_slice()
    }

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
        if (bytes.pointer.as_ptr() as usize).is_multiple_of(BLOCK_BYTES) {
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
    fn byte_arrays_of_any_length_start_clear() {
        for len in [0u64, 1, 8, 100, 4097] {
            let bytes = ByteArray::try_zeroed(len).unwrap();
            assert_eq!(bytes.as_slice().len() as u64, len);
            assert!(bytes.as_slice().iter().all(|&byte| byte == 0));
        }
    }

    #[test]
    fn a_buffer_taken_over_is_kept_and_freed_by_its_owner() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static FREED: AtomicUsize = AtomicUsize::new(0);
        unsafe extern "C" fn free(pointer: *mut std::ffi::c_void) {
            FREED.fetch_add(1, Ordering::SeqCst);
            // SAFETY: allocated below with this layout.
            unsafe { alloc::dealloc(pointer.cast(), AllocLayout::from_size_align(24, 1).unwrap()) }
        }
        // SAFETY: a fresh allocation, filled, then handed over with the function that frees it.
        let adopted = unsafe {
            let pointer = NonNull::new(alloc::alloc(AllocLayout::from_size_align(24, 1).unwrap())).unwrap();
            std::ptr::write_bytes(pointer.as_ptr(), 7, 24);
            ByteArray::take_over(pointer, 24, free)
        };
        assert_eq!(adopted.as_slice(), &[7; 24]);
        let copy = adopted.try_clone().unwrap();
        drop(adopted);
        assert_eq!(FREED.load(Ordering::SeqCst), 1);
        assert_eq!(copy.as_slice(), &[7; 24]);
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
