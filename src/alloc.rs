//! The module's global allocator: Redis's own, so that `used_memory`, `maxmemory` and
//! `MEMORY USAGE` see every byte, but asked through `RedisModule_TryAlloc` where the server
//! has it (7.0 and later). `RedisModule_Alloc` aborts the server when memory runs out;
//! `TryAlloc` returns null instead, which Rust's fallible paths (`try_reserve`,
//! `alloc_zeroed` in the bit array) turn into "ERR Insufficient memory to create filter".

use redis_module::raw;
use std::alloc::{GlobalAlloc, Layout};
use std::ptr;

pub struct RedisFallibleAlloc;

/// Bit arrays are read at random. On 4 KiB pages a large one costs a TLB miss and a page
/// walk per lookup on top of the cache miss; on 2 MiB pages its page tables fit in cache.
const HUGE_PAGE: usize = 2 << 20;

/// Asks the kernel for transparent huge pages behind the whole 2 MiB pages of a large
/// zeroed allocation, before it is first touched. It is only advice: where THP is off, or
/// Redis turned it off for the process (`disable-thp`, when THP is "always"), it does nothing.
fn advise_huge_pages(pointer: *mut u8, size: usize) {
    let start = (pointer as usize).next_multiple_of(HUGE_PAGE);
    let end = (pointer as usize + size) & !(HUGE_PAGE - 1);
    if end > start {
        // SAFETY: the range lies inside an allocation we own; madvise changes no contents.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

/// Redis's allocator (jemalloc) aligns every allocation to the largest power of two that
/// divides its size class, so rounding the size up to the alignment is enough.
fn aligned_size(layout: Layout) -> usize {
    (layout.size() + layout.align() - 1) & !(layout.align() - 1)
}

unsafe impl GlobalAlloc for RedisFallibleAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let size = aligned_size(layout);
        // SAFETY: the function pointers are filled in by RedisModule_Init before any module
        // code runs; a missing one means the server lacks the API, not a dangling pointer.
        unsafe {
            match (raw::RedisModule_TryAlloc, raw::RedisModule_Alloc) {
                (Some(try_alloc), _) => try_alloc(size).cast(),
                (None, Some(alloc)) => alloc(size).cast(),
                (None, None) => ptr::null_mut(),
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let size = aligned_size(layout);
        // SAFETY: as in `alloc`. calloc hands out fresh pages from the kernel for large sizes,
        // which are zero already: a 1 GB filter costs no memset and no RSS until it is used.
        unsafe {
            let try_calloc = raw::RedisModule_TryCalloc;
            let pointer: *mut u8 = match try_calloc {
                Some(try_calloc) => try_calloc(1, size).cast(),
                None => self.alloc(layout),
            };
            if pointer.is_null() {
                return pointer;
            }
            if size >= 2 * HUGE_PAGE {
                advise_huge_pages(pointer, size);
            }
            if try_calloc.is_none() {
                ptr::write_bytes(pointer, 0, size);
            }
            pointer
        }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, _layout: Layout) {
        // SAFETY: every pointer handed out above came from Redis's allocator.
        unsafe {
            if let Some(free) = raw::RedisModule_Free {
                free(pointer.cast());
            }
        }
    }
}
