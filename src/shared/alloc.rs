//! The module's global allocator: Redis's own, so that `used_memory`, `maxmemory` and
//! `MEMORY USAGE` see every byte, but asked through `RedisModule_TryAlloc` where the server
//! has it (7.0 and later). `RedisModule_Alloc` aborts the server when memory runs out;
//! `TryAlloc` returns null instead, which Rust's fallible paths (`try_reserve`,
//! `alloc_zeroed` in the bit array) turn into "ERR Insufficient memory to create filter".

use super::config;
use redis_module::raw;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

pub struct RedisFallibleAlloc;

/// Redis's allocator aligns a block to the largest power of two dividing its size, up to 16
/// (jemalloc with Redis's 8-byte quantum; libc malloc gives 16 always): sizes are rounded up
/// to the alignment for anything up to this. Larger alignments are made by hand, padding the
/// block: a byte array asks for one only when the allocator's own block did not start on a
/// cache line (`ByteArray::try_zeroed` in the core).
const ROUNDED_ALIGN: usize = 16;

/// Bit arrays are read at random. On 4 KiB pages a large one costs a TLB miss and a page
/// walk per lookup on top of the cache miss; on 2 MiB pages its page tables fit in cache.
const HUGE_PAGE: usize = 2 << 20;

/// The allocator's own functions, as Redis exports them. `TryAlloc` is missing before Redis
/// 7.0 and `TryCalloc` before 7.4; `Alloc` and `Free` are always there once the module is
/// loaded. (`Calloc` is not used: it aborts the server where memory runs out.)
struct RedisFunctions {
    allocate: Option<unsafe extern "C" fn(usize) -> *mut c_void>,
    allocate_zeroed: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    free: Option<unsafe extern "C" fn(*mut c_void)>,
}

fn redis_functions() -> RedisFunctions {
    // SAFETY: the pointers are written once by RedisModule_Init, before any module code runs.
    unsafe {
        RedisFunctions {
            allocate: raw::RedisModule_TryAlloc.or(raw::RedisModule_Alloc),
            allocate_zeroed: raw::RedisModule_TryCalloc,
            free: raw::RedisModule_Free,
        }
    }
}

/// Zeroed allocations from this size on are zeroed by the kernel, lazily (see
/// [`zero_lazily`]), on every server version.
const LAZY_ZEROING_FROM: usize = 1 << 20;

/// Where the server has no `TryCalloc` (7.0, 7.2), zeroed allocations from this size on are
/// zeroed lazily too: written by hand, every page of a new value was touched at its creation
/// (a 56 KB Count-Min sketch took 35 µs to create on 7.0, RedisBloom 2.5 µs, whose calloc
/// leaves the allocator's fresh pages to the kernel). Four pages: below, at most a few pages
/// are written, against a system call.
const LAZY_ZEROING_WITHOUT_CALLOC_FROM: usize = 16 << 10;

impl RedisFunctions {
    /// `size` bytes, zeroed if asked; null when memory is short.
    unsafe fn get(&self, size: usize, zeroed: bool) -> *mut u8 {
        unsafe {
            let lazy_from = if self.allocate_zeroed.is_some() {
                LAZY_ZEROING_FROM
            } else {
                LAZY_ZEROING_WITHOUT_CALLOC_FROM
            };
            match (zeroed, self.allocate_zeroed, self.allocate) {
                (true, _, Some(alloc)) if size >= lazy_from => {
                    let pointer: *mut u8 = alloc(size).cast();
                    if !pointer.is_null() {
                        advise_huge_pages(pointer, size);
                        zero_lazily(pointer, size);
                    }
                    pointer
                }
                (true, Some(calloc), _) => {
                    let pointer: *mut u8 = calloc(1, size).cast();
                    if !pointer.is_null() {
                        advise_huge_pages(pointer, size);
                    }
                    pointer
                }
                (true, None, Some(alloc)) => {
                    let pointer: *mut u8 = alloc(size).cast();
                    if !pointer.is_null() {
                        advise_huge_pages(pointer, size);
                        ptr::write_bytes(pointer, 0, size);
                    }
                    pointer
                }
                (false, _, Some(alloc)) => alloc(size).cast(),
                _ => ptr::null_mut(),
            }
        }
    }
}

/// Zeroes a large allocation without touching it: the whole pages inside it are given back
/// to the kernel (`MADV_DONTNEED`), which maps a zero page on their first access, and only
/// the partial pages at its ends are written. Clearing 1 GB by hand stalls the server for
/// about half a second and makes it all resident at once; this takes microseconds and the
/// memory becomes resident as the filter's bits are written.
///
/// Why it is safe: `MADV_DONTNEED` guarantees zero-filled pages on the next access in
/// private anonymous mappings, which is where the allocators Redis is built with (jemalloc,
/// libc malloc, tcmalloc) take their memory in their ordinary set-up, and none of them keeps
/// its own data inside a block it handed out. The allocator still counts the whole block
/// (`used_memory`, `maxmemory` and `MEMORY USAGE` see all of it), and when the block is
/// freed it treats it as used memory, as it would any other. Where that guarantee may not
/// hold (see [`lazy_zeroing_is_sound`]), or the kernel refuses the advice, the block is
/// written instead.
unsafe fn zero_lazily(pointer: *mut u8, size: usize) {
    let page = page_size();
    let begin = pointer as usize;
    let (start, end) = (begin.next_multiple_of(page), (begin + size) / page * page);
    unsafe {
        // SAFETY: [start, end) lies inside the block we own; the advice only drops contents.
        if lazy_zeroing_is_sound()
            && end > start
            && libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) == 0
        {
            ptr::write_bytes(pointer, 0, start - begin);
            ptr::write_bytes(pointer.add(end - begin), 0, begin + size - end);
        } else {
            ptr::write_bytes(pointer, 0, size);
        }
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096).max(1)
}

/// Whether `MADV_DONTNEED` zeroes this process's heap, decided once:
/// - not where the allocator was told to take explicit huge pages or a shared file
///   (glibc's `hugetlb` tunable, tcmalloc's `TCMALLOC_MEMFS_MALLOC_PATH`), where the advice
///   rounds to huge pages or brings back the file's contents;
/// - only where a probe shows it: some emulators (QEMU in user mode) accept the advice and
///   discard nothing, which jemalloc also checks for at start-up.
fn lazy_zeroing_is_sound() -> bool {
    static SOUND: OnceLock<bool> = OnceLock::new();
    *SOUND.get_or_init(|| {
        let explicit_huge_pages = std::env::var("GLIBC_TUNABLES")
            .is_ok_and(|tunables| tunables.contains("hugetlb"))
            || std::env::var_os("TCMALLOC_MEMFS_MALLOC_PATH").is_some();
        !explicit_huge_pages && advice_zeroes_a_page()
    })
}

/// Maps one private anonymous page, fills it, advises it away, and reads it back.
fn advice_zeroes_a_page() -> bool {
    let page = page_size();
    // SAFETY: a fresh private anonymous mapping of one page, used only here and unmapped.
    unsafe {
        let mapping = libc::mmap(
            ptr::null_mut(),
            page,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if mapping == libc::MAP_FAILED {
            return false;
        }
        let bytes = std::slice::from_raw_parts_mut(mapping.cast::<u8>(), page);
        bytes.fill(0xA5);
        let zeroed = libc::madvise(mapping, page, libc::MADV_DONTNEED) == 0
            && std::ptr::read_volatile(&raw const bytes[page / 2]) == 0
            && bytes.iter().all(|&byte| byte == 0);
        libc::munmap(mapping, page);
        zeroed
    }
}

/// Set once any huge-page advice was given: until then, frees have nothing to undo.
static HUGE_PAGES_ADVISED: AtomicBool = AtomicBool::new(false);

/// Where `bf.huge-pages` is on, asks the kernel for transparent huge pages behind the whole
/// 2 MiB pages of a large zeroed allocation (a bit array), before it is first touched. Only advice: where THP is
/// off, or Redis turned it off for the process (`disable-thp`), nothing changes.
fn advise_huge_pages(pointer: *mut u8, size: usize) {
    if size < 2 * HUGE_PAGE || !config::huge_pages() {
        return;
    }
    let start = (pointer as usize).next_multiple_of(HUGE_PAGE);
    let end = (pointer as usize + size) & !(HUGE_PAGE - 1);
    if end > start {
        HUGE_PAGES_ADVISED.store(true, Ordering::Relaxed);
        // SAFETY: the range lies inside an allocation we own; madvise changes no contents.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

/// Undoes [`advise_huge_pages`] before the range goes back to the allocator, which would
/// otherwise hand it on, huge pages and their copy-on-write cost included, to unrelated data.
/// Only once some advice was given: each call splits a mapping, for nothing otherwise.
fn forget_huge_page_advice(pointer: *mut u8, size: usize) {
    if size < 2 * HUGE_PAGE || !HUGE_PAGES_ADVISED.load(Ordering::Relaxed) {
        return;
    }
    let start = (pointer as usize).next_multiple_of(HUGE_PAGE);
    let end = (pointer as usize + size) & !(HUGE_PAGE - 1);
    if end > start {
        // SAFETY: as in advise_huge_pages.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_NOHUGEPAGE) };
    }
}

/// An over-aligned allocation: `align` and a word extra, the returned pointer moved up to
/// the alignment by `align - shortfall` bytes (at least a word), and the shortfall stored in
/// the word just before it.
const HEADER: usize = std::mem::size_of::<usize>();

unsafe fn allocate(layout: Layout, zeroed: bool) -> *mut u8 {
    let functions = redis_functions();
    unsafe {
        if layout.align() <= ROUNDED_ALIGN {
            return functions.get(layout.size().next_multiple_of(layout.align()), zeroed);
        }
        let Some(total) = layout.size().checked_add(layout.align() + HEADER) else {
            return ptr::null_mut();
        };
        let base = functions.get(total, zeroed);
        if base.is_null() {
            return base;
        }
        let offset = (base as usize + HEADER).next_multiple_of(layout.align()) - base as usize;
        let aligned = base.add(offset);
        // 0 for a block the allocator aligned already (jemalloc aligns its large blocks to
        // pages): a zeroed block holds it, and leaving it unwritten leaves a fresh page
        // untouched. Writing it made every new sketch fault a page in at its creation.
        let shortfall = layout.align() - offset;
        if shortfall != 0 || !zeroed {
            aligned.sub(HEADER).cast::<usize>().write_unaligned(shortfall);
        }
        aligned
    }
}

unsafe impl GlobalAlloc for RedisFallibleAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe { allocate(layout, false) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // Large blocks are zeroed lazily (`zero_lazily`); small ones by TryCalloc where the
        // server has it (7.4 and later), else here.
        unsafe { allocate(layout, true) }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        let Some(free) = redis_functions().free else { return };
        // SAFETY: `pointer` came from `allocate` with this layout; the huge-page advice is
        // undone over the very block it was given on.
        unsafe {
            if layout.align() <= ROUNDED_ALIGN {
                forget_huge_page_advice(pointer, layout.size().next_multiple_of(layout.align()));
                free(pointer.cast());
            } else {
                let shortfall = pointer.sub(HEADER).cast::<usize>().read_unaligned();
                let base = pointer.sub(layout.align() - shortfall);
                forget_huge_page_advice(base, layout.size() + layout.align() + HEADER);
                free(base.cast());
            }
        }
    }
}
