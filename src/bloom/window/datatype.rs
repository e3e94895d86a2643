//! The `rbBF-wind` data type: one record per filter (`shared::record_type`), a name RedisBloom
//! and older versions of this module refuse rather than misread. Windowed filters count with
//! the Bloom filters in `INFO bf`.

use crate::bloom::datatype::METRICS;
use crate::shared::key_timer::KeyTimer;
use crate::shared::metrics::{Footprint, Metrics};
use crate::shared::record_type::{record_type, RecordType};
use crate::window::rotation::visit;
use redbloom_core::bloom::window::WindowFilter;
use redis_module::native_types::RedisType;
use redis_module::raw;

pub static WINDOW_TYPE: RedisType = record_type::<WindowFilter>();

/// Visits the keys of windowed filters, so that idle ones rotate too.
pub static TIMER: KeyTimer =
    KeyTimer::new("windowed Bloom filter", &WINDOW_TYPE, &METRICS, visit::<WindowFilter>);

impl RecordType for WindowFilter {
    const TYPE_NAME: &'static str = "rbBF-wind";
    const KIND: &'static str = "windowed Bloom filter";

    fn redis_type() -> &'static RedisType {
        &WINDOW_TYPE
    }

    fn metrics() -> &'static Metrics {
        &METRICS
    }

    fn footprint(&self) -> Footprint {
        let (bytes, items, links) = self.totals();
        Footprint { bytes: bytes as i64, items: items as i64, sub_filters: links as i64 }
    }

    fn after_load(rdb: *mut raw::RedisModuleIO) {
        TIMER.note_loaded(rdb);
    }

    fn unlinked(ctx: *mut raw::RedisModuleKeyOptCtx) {
        TIMER.forget_unlinked(ctx);
    }
}
