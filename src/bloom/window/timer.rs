//! What the windowed filters' `KeyTimer` does to a key: memory of expired generations comes
//! back even from keys no command touches, and their readers on a replica stop seeing them.

use super::rotation::rotate_to;
use crate::shared::clock::now_ms;
use crate::shared::key_timer::Visit;
use crate::shared::keyspace::Key;
use redbloom_core::bloom::window::WindowFilter;
use redis_module::raw;

/// Rotates a filter that is due, replicating the rotation: what [`super::datatype::TIMER`]
/// does to each key it visits.
pub fn visit(ctx: *mut raw::RedisModuleCtx, key: &mut Key, name: *mut raw::RedisModuleString) -> Visit {
    let Ok(Some(filter)) = key.get_mut::<WindowFilter>() else {
        return Visit::Gone;
    };
    let now = now_ms();
    if filter.needs_rotation(now) && rotate_to(filter, now) {
        let at = now.to_string();
        // SAFETY: the timer's live context and key; "sb" is a string and a buffer with its length.
        unsafe {
            if let Some(replicate) = raw::RedisModule_Replicate {
                replicate(ctx, c"BF.ROTATE".as_ptr(), c"sb".as_ptr(), name, at.as_ptr(), at.len());
            }
        }
    }
    Visit::Kept
}
