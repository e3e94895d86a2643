//! The t-digest data type, RedisBloom's `TDIS-TYPE`: its record is RedisBloom's, so an RDB
//! holding t-digests loads into either module. The callbacks are every record type's
//! (`shared::record_type`).

use crate::shared::metrics::{Footprint, Metrics, Names};
use crate::shared::record_type::{record_type, RecordType};
use redbloom_core::decode::Persistent;
use redbloom_core::t_digest::TDigest;
use redis_module::native_types::RedisType;

pub static T_DIGEST_TYPE: RedisType = record_type::<TDigest>();

/// The `INFO bf` fields of t-digests: a sketch's, and the observations they hold.
pub static METRICS: Metrics = Metrics::new(Names {
    values: c"tdigest_digests",
    bytes: c"tdigest_bytes",
    items: Some(c"tdigest_observations"),
    adds: c"tdigest_adds",
    lookups: c"tdigest_queries",
    refused_creations: c"tdigest_refused_creations",
    timed_keys: Some(c"tdigest_window_timer_keys"),
    ..Names::SKETCH
});

impl RecordType for TDigest {
    const TYPE_NAME: &'static str = "TDIS-TYPE";
    const KIND: &'static str = "t-digest";

    fn redis_type() -> &'static RedisType {
        &T_DIGEST_TYPE
    }

    fn metrics() -> &'static Metrics {
        &METRICS
    }

    fn footprint(&self) -> Footprint {
        Footprint { bytes: self.memory_bytes() as i64, items: self.observations(), sub_filters: 0 }
    }
}
