//! The `rbCMSwind` data type: one record per sketch (`shared::record_type`), a name RedisBloom
//! and older versions of this module refuse rather than misread. Windowed sketches count with
//! the Count-Min sketches in `INFO bf`.

use crate::count_min::datatype::METRICS;
use crate::shared::key_timer::KeyTimer;
use crate::shared::metrics::Metrics;
use crate::shared::record_type::{record_type, RecordType};
use crate::window::rotation::visit;
use redbloom_core::count_min::window::WindowedCountMin;
use redis_module::native_types::RedisType;
use redis_module::raw;

pub static WINDOW_TYPE: RedisType = record_type::<WindowedCountMin>();

/// Visits the keys of windowed sketches, so that idle ones rotate too.
pub static TIMER: KeyTimer =
    KeyTimer::new("windowed count-min sketch", &WINDOW_TYPE, &METRICS, visit::<WindowedCountMin>);

impl RecordType for WindowedCountMin {
    const TYPE_NAME: &'static str = "rbCMSwind";
    const KIND: &'static str = "windowed count-min sketch";

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
