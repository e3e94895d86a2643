//! The Top-K data type, RedisBloom's `TopK-TYPE`: its record is RedisBloom's (the decay's
//! generator rides in bytes RedisBloom's loader ignores), so an RDB holding Top-K lists loads
//! into either module. The callbacks are every record type's (`shared::record_type`).

use crate::shared::metrics::{Metrics, Names};
use crate::shared::record_type::{record_type, RecordType};
use redbloom_core::top_k::TopK;
use redis_module::native_types::RedisType;

pub static TOP_K_TYPE: RedisType = record_type::<TopK>();

/// The `INFO bf` fields of Top-K lists.
pub static METRICS: Metrics = Metrics::new(Names {
    values: c"topk_sketches",
    bytes: c"topk_bytes",
    adds: c"topk_adds",
    lookups: c"topk_queries",
    refused_creations: c"topk_refused_creations",
    timed_keys: Some(c"topk_window_timer_keys"),
    ..Names::SKETCH
});

impl RecordType for TopK {
    const TYPE_NAME: &'static str = "TopK-TYPE";
    const KIND: &'static str = "top-k";

    fn redis_type() -> &'static RedisType {
        &TOP_K_TYPE
    }

    fn metrics() -> &'static Metrics {
        &METRICS
    }
}
