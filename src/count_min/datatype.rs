//! The Count-Min sketch data type, RedisBloom's `CMSk-TYPE`: its record is RedisBloom's, so
//! an RDB holding sketches loads into either module. The callbacks are every record type's
//! (`shared::record_type`).

use crate::shared::metrics::{Metrics, Names};
use crate::shared::record_type::{record_type, RecordType};
use redbloom_core::count_min::CountMinSketch;
use redis_module::native_types::RedisType;

pub static COUNT_MIN_TYPE: RedisType = record_type::<CountMinSketch>();

/// The `INFO bf` fields of Count-Min sketches.
pub static METRICS: Metrics = Metrics::new(Names {
    values: c"cms_sketches",
    bytes: c"cms_bytes",
    adds: c"cms_increments",
    lookups: c"cms_queries",
    refused_creations: c"cms_refused_creations",
    timed_keys: Some(c"cms_window_timer_keys"),
    ..Names::SKETCH
});

impl RecordType for CountMinSketch {
    const TYPE_NAME: &'static str = "CMSk-TYPE";
    const KIND: &'static str = "count-min sketch";

    fn redis_type() -> &'static RedisType {
        &COUNT_MIN_TYPE
    }

    fn metrics() -> &'static Metrics {
        &METRICS
    }
}
