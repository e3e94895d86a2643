//! Fallibly allocated byte arrays, which every filter's bits and slots live in: a failed
//! allocation is an error the caller answers, never an abort of the server.

use std::alloc::{self, Layout as AllocLayout};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};

/// An allocation failed: the caller answers "insufficient memory".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocationFailed;

/// A fallibly allocated byte array, owned like a `Box<[u8]>`. Every filter keeps its bits or
/// slots in one: the Bloom filter's blocked layout views it as 512-bit blocks, RedisBloom's
/// layouts as plain bytes.
pub struct ByteArray {
    pointer: NonNull<u8>,
    /// The length, and in its top bit [`UNPADDED`] (lengths never reach it: an allocation
    /// is at most `isize::MAX` bytes).
    len_and_unpadded: usize,
    /// How the memory goes back: to whoever handed it over, by this function; to the global
    /// allocator, with the layout it was allocated with ([`UNPADDED`]), where there is none.
    /// One word: a windowed filter holds an array for every generation that can be alive.
    taken_over_from: Option<FreeFunction>,
}

/// A function that frees memory handed over by its owner (Redis's `RedisModule_Free`).
pub type FreeFunction = unsafe extern "C" fn(*mut std::ffi::c_void);

// SAFETY: ByteArray owns its allocation exclusively, like a Box<[u8]>.
unsafe impl Send for ByteArray {}
unsafe impl Sync for ByteArray {}

/// Arrays allocated here start on a cache line, so that a block or bucket laid out from the
/// start never straddles two.
pub const CACHE_LINE: usize = 64;
const ALIGNMENT: usize = CACHE_LINE;

/// The alignment every allocator gives any block (16 in Redis's jemalloc and in libc malloc).
/// An array is first asked for at this alignment, in whole cache lines: jemalloc puts a block
/// of such a size on a cache line anyway (its size classes from 64 bytes on hold whole lines
/// when the size asked does, and its large blocks start on a page), and such a block is kept
/// as it came.
/// Asked for at [`ALIGNMENT`], the module's allocator pads it (by 72 bytes, see the Redis
/// glue), which for a size the allocator has a class of (every power of two: each cuckoo
/// filter, many sketches) costs the next class, a quarter more memory than the array.
const NATURAL_ALIGNMENT: usize = 16;

/// Set in [`ByteArray::len_and_unpadded`] when the array's block was allocated at
/// [`NATURAL_ALIGNMENT`] (and started on a cache line), clear when at [`ALIGNMENT`]: it
/// is freed with the layout it was allocated with.
const UNPADDED: usize = 1 << (usize::BITS - 1);

/// Arrays from this size on are large blocks (jemalloc's start at 16 KiB), which an allocator
/// either always or never starts on a cache line: after one that did not, large arrays are
/// asked for at [`ALIGNMENT`] at once, rather than allocated, zeroed and freed for nothing
/// each time (libc malloc maps large blocks with a 16-byte header).
const LARGE: usize = 16 << 10;
static LARGE_BLOCKS_MAY_START_ON_A_LINE: AtomicBool = AtomicBool::new(true);

/// The layout an array of `len` bytes is first asked for with ([`NATURAL_ALIGNMENT`]).
fn natural_layout(len: usize) -> Option<AllocLayout> {
    AllocLayout::from_size_align(len.checked_next_multiple_of(CACHE_LINE)?, NATURAL_ALIGNMENT).ok()
}

/// Only for the dangling pointer of an empty array, which must be aligned as a full one is.
#[repr(C, align(64))]
struct CacheLine([u8; CACHE_LINE]);

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
        let natural = natural_layout(len).ok_or(AllocationFailed)?;
        let large = len >= LARGE;
        if !large || LARGE_BLOCKS_MAY_START_ON_A_LINE.load(Ordering::Relaxed) {
            // SAFETY: the layout has a non-zero size.
            let pointer = NonNull::new(unsafe { alloc::alloc_zeroed(natural) }).ok_or(AllocationFailed)?;
            if (pointer.as_ptr() as usize).is_multiple_of(ALIGNMENT) {
                return Ok(ByteArray { pointer, len_and_unpadded: len | UNPADDED, taken_over_from: None });
            }
            if large {
                LARGE_BLOCKS_MAY_START_ON_A_LINE.store(false, Ordering::Relaxed);
            }
            // SAFETY: allocated just above with this layout.
            unsafe { alloc::dealloc(pointer.as_ptr(), natural) };
        }
        let aligned = AllocLayout::from_size_align(len, ALIGNMENT).map_err(|_| AllocationFailed)?;
        // SAFETY: the layout has a non-zero size.
        let pointer = NonNull::new(unsafe { alloc::alloc_zeroed(aligned) }).ok_or(AllocationFailed)?;
        Ok(ByteArray { pointer, len_and_unpadded: len, taken_over_from: None })
    }

    fn empty() -> ByteArray {
        ByteArray {
            pointer: NonNull::<CacheLine>::dangling().cast(),
            len_and_unpadded: 0,
            taken_over_from: None,
        }
    }

    /// The layout the array was allocated with, for one allocated here.
    fn allocated_layout(&self) -> Option<AllocLayout> {
        if self.len_and_unpadded & UNPADDED != 0 {
            natural_layout(self.len())
        } else {
            AllocLayout::from_size_align(self.len(), ALIGNMENT).ok()
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
        debug_assert!(len & UNPADDED == 0, "no allocation is that long");
        ByteArray { pointer, len_and_unpadded: len, taken_over_from: Some(free) }
    }

    /// A copy allocated here, so on a cache line even when `self` was taken over.
    pub fn try_clone(&self) -> Result<ByteArray, AllocationFailed> {
        ByteArray::try_copy_of(self.as_slice())
    }

    /// The whole array.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `pointer` points at `len` initialised bytes owned by self (or dangles, well
        // aligned, with len 0, which slices allow).
        unsafe { std::slice::from_raw_parts(self.pointer.as_ptr(), self.len()) }
    }

    /// The whole array, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_slice`, and `&mut self` makes the borrow exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.pointer.as_ptr(), self.len()) }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len_and_unpadded & !UNPADDED
    }

    /// Whether the array has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Asks the CPU to start loading the cache line holding byte `index`.
    #[inline]
    pub fn prefetch(&self, index: usize) {
        #[cfg(target_arch = "x86_64")]
        if index < self.len() {
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
        match self.taken_over_from {
            // SAFETY: handed over with the promise that `free` releases it (take_over).
            Some(free) => unsafe { free(self.pointer.as_ptr().cast()) },
            None if !self.is_empty() => {
                // The layout was valid when allocating, so it still is.
                if let Some(layout) = self.allocated_layout() {
                    // SAFETY: allocated in try_zeroed with this very layout.
                    unsafe { alloc::dealloc(self.pointer.as_ptr(), layout) }
                }
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_arrays_of_any_length_start_clear() {
        for len in [0u64, 1, 8, 100, 4096, 4097, 20_000, 1 << 20] {
            let bytes = ByteArray::try_zeroed(len).unwrap();
            assert_eq!(bytes.as_slice().len() as u64, len);
            assert_eq!(bytes.as_slice().as_ptr() as usize % CACHE_LINE, 0, "{len}");
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
}
