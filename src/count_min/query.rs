//! CMS.QUERY and CMS.INFO. A master reads a windowed sketch by its own clock (the generations
//! it has expired count nothing); a replica, what its master's rotations left.

use super::datatype::METRICS;
use super::error::CmsError;
use super::held::{held, Held};
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::window::rotation::read_time;

/// CMS.QUERY key item [item ...]: each item's estimate, the batch hashed and its counters
/// asked of the CPU before any is read.
pub fn query(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let sketch = held(&key)?.ok_or(CmsError::KeyMissing)?;
    call.reply_array(call.argc() - 2);
    // Counts never pass i64::MAX (the widest cells stop there).
    let answer = |count: u64| call.reply_integer(i64::try_from(count).unwrap_or(i64::MAX));
    match sketch {
        Held::Plain(sketch) => sketch.query_all(call.args_from(2), answer),
        Held::Windowed(sketch) => sketch.query_all(call.args_from(2), read_time(call, sketch), answer),
    }
    METRICS.count_lookups(call.argc() - 2, 0);
    Ok(())
}

/// CMS.INFO key: width, depth, the total count and the cell size, a flat array under RESP2
/// and a map under RESP3. Redis 8.12's RedisBloom added the cell size, for every sketch,
/// the default size included. A windowed sketch's count is its live window's, and `window`
/// and `generations` follow.
pub fn info(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let (width, depth, count, cell_size, window) = match held(&key)?.ok_or(CmsError::KeyMissing)? {
        Held::Plain(sketch) => (sketch.width(), sketch.depth(), sketch.count(), sketch.cell_size(), None),
        Held::Windowed(sketch) => (
            sketch.width(),
            sketch.depth(),
            sketch.count(read_time(call, sketch)),
            sketch.cell_size(),
            Some(*sketch.schedule()),
        ),
    };
    let fields = [
        (c"width", width as i64),
        (c"depth", depth as i64),
        (c"count", count as i64),
        (c"cell_size", cell_size.bytes() as i64),
    ];
    let window_fields = window.map(|schedule| {
        [(c"Window", schedule.window_ms() as i64), (c"Generations", i64::from(schedule.generations()))]
    });
    call.reply_map(fields.len() + window_fields.map_or(0, |fields| fields.len()));
    for (label, value) in fields.into_iter().chain(window_fields.into_iter().flatten()) {
        call.reply_simple(label);
        call.reply_integer(value);
    }
    Ok(())
}
