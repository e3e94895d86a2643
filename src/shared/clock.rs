//! The server's clock, for values that change with time: who may decide by it, and what it
//! reads. A master decides; a replica, and a replay of the AOF, apply what their master
//! decided, so that every copy of a value goes through the same states.

use super::call::Call;
use redis_module::raw;
use std::sync::OnceLock;

/// This server's clock, in milliseconds since the epoch.
pub fn now_ms() -> u64 {
    // SAFETY: a plain read of the server's clock.
    let now = unsafe { raw::RedisModule_Milliseconds.map_or(0, |f| f()) };
    u64::try_from(now).unwrap_or(0)
}

/// A time this server's clock has not reached yet, read for a few nanoseconds: the kernel's
/// coarse clock (the same clock, as of its last tick) and twice its resolution. A windowed
/// value that has nothing to rotate or forget even then answers without reading the clock or
/// asking who decides (both cost about a fifth of a lookup); only the last milliseconds
/// before its next change take the precise path. `u64::MAX` (always the precise path) where
/// the coarse clock cannot be read.
pub fn not_yet_ms() -> u64 {
    static MARGIN_MS: OnceLock<Option<u64>> = OnceLock::new();
    // Twice the resolution, and one more for each of the two readings' whole milliseconds.
    let margin = MARGIN_MS.get_or_init(|| coarse_ms(libc::clock_getres).map(|resolution| 2 * resolution + 2));
    match (*margin, coarse_ms(libc::clock_gettime)) {
        (Some(margin), Some(now)) => now.saturating_add(margin),
        _ => u64::MAX,
    }
}

/// What `read` (`clock_gettime` or `clock_getres`) answers of the coarse clock, in whole
/// milliseconds.
fn coarse_ms(read: unsafe extern "C" fn(libc::clockid_t, *mut libc::timespec) -> libc::c_int) -> Option<u64> {
    let mut time = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a plain read of the kernel's clock into a timespec of ours.
    if unsafe { read(libc::CLOCK_REALTIME_COARSE, &raw mut time) } != 0 {
        return None;
    }
    u64::try_from(time.tv_sec)
        .ok()?
        .checked_mul(1000)?
        .checked_add(u64::try_from(time.tv_nsec).ok()? / 1_000_000)
}

/// Whether this call may decide by this server's clock: a master's own client, not a replica
/// and not what a master or the AOF sends.
pub fn decides(call: &Call) -> bool {
    !call.replayed() && !call.is_replica()
}

#[cfg(test)]
mod tests {
    use super::not_yet_ms;
    use std::time::{SystemTime, UNIX_EPOCH};

    #[test]
    fn the_coarse_bound_is_never_behind_the_clock_and_close_to_it() {
        for _ in 0..1000 {
            let bound = not_yet_ms();
            let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
            assert!(bound >= now && bound < now + 1000, "{bound} against {now}");
        }
    }
}
