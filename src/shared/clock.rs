//! The server's clock, for values that change with time: who may decide by it, and what it
//! reads. A master decides; a replica, and a replay of the AOF, apply what their master
//! decided, so that every copy of a value goes through the same states.

use super::call::Call;
use redis_module::raw;

/// This server's clock, in milliseconds since the epoch.
pub fn now_ms() -> u64 {
    // SAFETY: a plain read of the server's clock.
    let now = unsafe { raw::RedisModule_Milliseconds.map_or(0, |f| f()) };
    u64::try_from(now).unwrap_or(0)
}

/// Whether this call may decide by this server's clock: a master's own client, not a replica
/// and not what a master or the AOF sends.
pub fn decides(call: &Call) -> bool {
    !call.replayed() && !call.is_replica()
}
