//! The memory system's floor on this machine: random cache-line reads over a buffer of a
//! filter's size, one at a time (each address depends on the read before, as a lone lookup
//! waits for its miss) and in batches of 100 whose addresses are known first and prefetched
//! (as BF.MEXISTS and BF.MADD do). Every workload is measured against it in docs/performance.md.

use std::hint::black_box;
use std::time::Instant;

const LINE: usize = 64;
const READS: usize = 2_000_000;
const BATCH: usize = 100;

pub struct Floor {
    pub bytes: usize,
    pub dependent_ns: f64,
    pub batched_ns: f64,
}

pub fn measure(bytes: usize) -> Floor {
    let lines = bytes / LINE;
    // Each line's first word holds the next line of one random cycle through all of them
    // (Sattolo's shuffle), so a walk never settles into a part of the buffer that fits a cache.
    let mut next: Vec<u32> = (0..lines as u32).collect();
    let mut random = 0x9E37_79B9_7F4A_7C15u64;
    let mut below = |bound: usize| {
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        (random % bound as u64) as usize
    };
    for i in (1..lines).rev() {
        next.swap(i, below(i));
    }
    let mut buffer = vec![0u64; bytes / 8];
    for (line, target) in next.iter().enumerate() {
        buffer[line * LINE / 8] = u64::from(*target);
    }
    drop(next);

    let started = Instant::now();
    let mut line = 0usize;
    for _ in 0..READS {
        line = buffer[line * LINE / 8] as usize;
    }
    black_box(line);
    let dependent_ns = started.elapsed().as_nanos() as f64 / READS as f64;

    let started = Instant::now();
    let mut sum = 0u64;
    let mut addresses = [0usize; BATCH];
    for _ in 0..READS / BATCH {
        for address in &mut addresses {
            *address = below(lines) * LINE / 8;
            prefetch(&buffer, *address);
        }
        for &address in &addresses {
            sum = sum.wrapping_add(buffer[address]);
        }
    }
    black_box(sum);
    let batched_ns = started.elapsed().as_nanos() as f64 / READS as f64;
    Floor { bytes, dependent_ns, batched_ns }
}

fn prefetch(buffer: &[u64], index: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the address lies inside the buffer; prefetching has no other effect.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(buffer.as_ptr().add(index).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (buffer, index);
}
