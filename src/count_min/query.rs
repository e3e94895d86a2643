//! CMS.QUERY and CMS.INFO.

use super::datatype::METRICS;
use super::error::CmsError;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use redbloom_core::count_min::CountMinSketch;

/// CMS.QUERY key item [item ...]: each item's estimate, the batch hashed and its counters
/// asked of the CPU before any is read.
pub fn query(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let sketch = key.get::<CountMinSketch>()?.ok_or(CmsError::KeyMissing)?;
    call.reply_array(call.argc() - 2);
    // Counts never pass i64::MAX (the widest cells stop there).
    sketch.query_all(call.args_from(2), |count| call.reply_integer(i64::try_from(count).unwrap_or(i64::MAX)));
    METRICS.count_lookups(call.argc() - 2, 0);
    Ok(())
}

/// CMS.INFO key: width, depth, the total count and the cell size, a flat array under RESP2
/// and a map under RESP3. Redis 8.12's RedisBloom added the cell size, for every sketch,
/// the default size included.
pub fn info(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let sketch = key.get::<CountMinSketch>()?.ok_or(CmsError::KeyMissing)?;
    let fields = [
        (c"width", sketch.width() as i64),
        (c"depth", sketch.depth() as i64),
        (c"count", sketch.count() as i64),
        (c"cell_size", sketch.cell_size().bytes() as i64),
    ];
    call.reply_map(fields.len());
    for (label, value) in fields {
        call.reply_simple(label);
        call.reply_integer(value);
    }
    Ok(())
}
