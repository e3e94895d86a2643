//! The t-digest data type, RedisBloom's `TDIS-TYPE`: its record is RedisBloom's, so an RDB
//! holding t-digests loads into either module. The callbacks are the sketches' shared ones
//! (`shared::sketch_type`).

use crate::shared::datatype::StoredValue;
use crate::shared::metrics::{Footprint, Measured, Metrics, Names};
use crate::shared::sketch_type::{sketch_methods, StoredSketch};
use redbloom_core::decode::Persistent;
use redbloom_core::t_digest::TDigest;
use redis_module::native_types::RedisType;

pub static T_DIGEST_TYPE: RedisType =
    RedisType::new("TDIS-TYPE", TDigest::ENCODING_VERSION, sketch_methods::<TDigest>());

/// The `INFO bf` fields of t-digests.
pub static METRICS: Metrics = Metrics::new(Names {
    gauges: [Some(c"tdigest_digests"), Some(c"tdigest_bytes"), Some(c"tdigest_observations"), None],
    adds: c"tdigest_adds",
    deletes: None,
    counters: [Some(c"tdigest_queries"), None, None, Some(c"tdigest_refused_creations")],
});

impl Measured for TDigest {
    fn metrics() -> &'static Metrics {
        &METRICS
    }

    fn footprint(&self) -> Footprint {
        Footprint { bytes: self.memory_bytes() as i64, items: self.observations(), sub_filters: 0 }
    }
}

impl StoredValue for TDigest {
    const KIND: &'static str = "t-digest";

    fn data_types() -> &'static [&'static RedisType] {
        static TYPES: [&RedisType; 1] = [&T_DIGEST_TYPE];
        &TYPES
    }

    fn data_type(&self) -> &'static RedisType {
        &T_DIGEST_TYPE
    }

    fn freed_bytes(&self) -> usize {
        self.memory_bytes()
    }

    fn try_copy(&self) -> Option<TDigest> {
        self.try_clone()
    }
}

impl StoredSketch for TDigest {
    const TYPE_NAME: &'static str = "TDIS-TYPE";
}
