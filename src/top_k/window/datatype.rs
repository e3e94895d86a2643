//! The `rbTOPKwnd` data type: one record per list (`shared::record_type`), a name RedisBloom
//! and older versions of this module refuse rather than misread. Windowed lists count with
//! the Top-K lists in `INFO bf`.

use crate::shared::key_timer::KeyTimer;
use crate::shared::metrics::Metrics;
use crate::shared::record_type::{record_type, RecordType};
use crate::top_k::datatype::METRICS;
use crate::window::rotation::visit;
use redbloom_core::top_k::window::WindowTopK;
use redis_module::native_types::RedisType;
use redis_module::raw;

pub static WINDOW_TYPE: RedisType = record_type::<WindowTopK>();

/// Visits the keys of windowed lists, so that idle ones rotate too.
pub static TIMER: KeyTimer = KeyTimer::new("windowed top-k", &WINDOW_TYPE, &METRICS, visit::<WindowTopK>);

impl RecordType for WindowTopK {
    const TYPE_NAME: &'static str = "rbTOPKwnd";
    const KIND: &'static str = "windowed top-k";

    fn redis_type() -> &'static RedisType {
        &WINDOW_TYPE
    }

    fn metrics() -> &'static Metrics {
        &METRICS
    }

    fn after_load(rdb: *mut raw::RedisModuleIO) {
        TIMER.note_loaded(rdb);
    }

    fn unlinked(ctx: *mut raw::RedisModuleKeyOptCtx) {
        TIMER.forget_unlinked(ctx);
    }
}
