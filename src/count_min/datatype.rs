//! The Count-Min sketch data type, RedisBloom's `CMSk-TYPE`: its record is RedisBloom's, so
//! an RDB holding sketches loads into either module. The callbacks are the sketches' shared
//! ones (`shared::sketch_type`).

use crate::shared::datatype::StoredValue;
use crate::shared::metrics::{Footprint, Measured, Metrics, Names};
use crate::shared::sketch_type::{sketch_methods, StoredSketch};
use redbloom_core::count_min::CountMinSketch;
use redbloom_core::decode::Persistent;
use redis_module::native_types::RedisType;

pub static COUNT_MIN_TYPE: RedisType =
    RedisType::new("CMSk-TYPE", CountMinSketch::ENCODING_VERSION, sketch_methods::<CountMinSketch>());

/// The `INFO bf` fields of Count-Min sketches.
pub static METRICS: Metrics = Metrics::new(Names {
    gauges: [Some(c"cms_sketches"), Some(c"cms_bytes"), None, None],
    adds: c"cms_increments",
    deletes: None,
    counters: [Some(c"cms_queries"), None, None, Some(c"cms_refused_creations")],
});

impl Measured for CountMinSketch {
    fn metrics() -> &'static Metrics {
        &METRICS
    }

    fn footprint(&self) -> Footprint {
        Footprint { bytes: self.memory_bytes() as i64, items: 0, sub_filters: 0 }
    }
}

impl StoredValue for CountMinSketch {
    const KIND: &'static str = "count-min sketch";

    fn data_types() -> &'static [&'static RedisType] {
        static TYPES: [&RedisType; 1] = [&COUNT_MIN_TYPE];
        &TYPES
    }

    fn data_type(&self) -> &'static RedisType {
        &COUNT_MIN_TYPE
    }

    fn freed_bytes(&self) -> usize {
        self.memory_bytes()
    }

    fn try_copy(&self) -> Option<CountMinSketch> {
        self.try_clone()
    }
}

impl StoredSketch for CountMinSketch {
    const TYPE_NAME: &'static str = "CMSk-TYPE";
}
