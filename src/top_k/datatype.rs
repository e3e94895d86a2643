//! The Top-K data type, RedisBloom's `TopK-TYPE`: its record is RedisBloom's (the decay's
//! generator rides in bytes RedisBloom's loader ignores), so an RDB holding Top-K lists loads
//! into either module. The callbacks are the sketches' shared ones (`shared::sketch_type`).

use crate::shared::datatype::StoredValue;
use crate::shared::metrics::{Footprint, Measured, Metrics, Names};
use crate::shared::sketch_type::{sketch_methods, StoredSketch};
use redbloom_core::decode::Persistent;
use redbloom_core::top_k::TopK;
use redis_module::native_types::RedisType;

pub static TOP_K_TYPE: RedisType =
    RedisType::new("TopK-TYPE", TopK::ENCODING_VERSION, sketch_methods::<TopK>());

/// The `INFO bf` fields of Top-K lists.
pub static METRICS: Metrics = Metrics::new(Names {
    gauges: [Some(c"topk_sketches"), Some(c"topk_bytes"), None, None],
    adds: c"topk_adds",
    deletes: None,
    counters: [Some(c"topk_queries"), None, None, Some(c"topk_refused_creations")],
});

impl Measured for TopK {
    fn metrics() -> &'static Metrics {
        &METRICS
    }

    fn footprint(&self) -> Footprint {
        Footprint { bytes: self.memory_bytes() as i64, items: 0, sub_filters: 0 }
    }
}

impl StoredValue for TopK {
    const KIND: &'static str = "top-k";

    fn data_types() -> &'static [&'static RedisType] {
        static TYPES: [&RedisType; 1] = [&TOP_K_TYPE];
        &TYPES
    }

    fn data_type(&self) -> &'static RedisType {
        &TOP_K_TYPE
    }

    fn freed_bytes(&self) -> usize {
        self.memory_bytes()
    }

    fn try_copy(&self) -> Option<TopK> {
        self.try_clone()
    }
}

impl StoredSketch for TopK {
    const TYPE_NAME: &'static str = "TopK-TYPE";
}
