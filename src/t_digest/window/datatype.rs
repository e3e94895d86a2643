//! The `rbTDIGwnd` data type: one record per windowed digest (`shared::record_type`), a name
//! RedisBloom and older versions of this module refuse rather than misread. Windowed digests
//! count with the t-digests in `INFO bf`.

use crate::shared::key_timer::KeyTimer;
use crate::shared::metrics::{Footprint, Metrics};
use crate::shared::record_type::{record_type, RecordType};
use crate::t_digest::datatype::METRICS;
use crate::window::rotation::visit;
use redbloom_core::t_digest::WindowTDigest;
use redis_module::native_types::RedisType;
use redis_module::raw;

pub static WINDOW_T_DIGEST_TYPE: RedisType = record_type::<WindowTDigest>();

/// Visits the keys of windowed digests, so that idle ones rotate too.
pub static TIMER: KeyTimer =
    KeyTimer::new("windowed t-digest", &WINDOW_T_DIGEST_TYPE, &METRICS, visit::<WindowTDigest>);

impl RecordType for WindowTDigest {
    const TYPE_NAME: &'static str = "rbTDIGwnd";
    const KIND: &'static str = "windowed t-digest";

    fn redis_type() -> &'static RedisType {
        &WINDOW_T_DIGEST_TYPE
    }

    fn metrics() -> &'static Metrics {
        &METRICS
    }

    fn footprint(&self) -> Footprint {
        Footprint { bytes: self.memory_bytes() as i64, items: self.observations(), sub_filters: 0 }
    }

    fn after_load(rdb: *mut raw::RedisModuleIO) {
        TIMER.note_loaded(rdb);
    }

    fn unlinked(ctx: *mut raw::RedisModuleKeyOptCtx) {
        TIMER.forget_unlinked(ctx);
    }
}
