//! TOPK.QUERY, TOPK.COUNT, TOPK.LIST and TOPK.INFO: reads, which change nothing. A master
//! reads a windowed list by its own clock (the generations it has expired count nothing); a
//! replica, what its master's rotations left.

use super::datatype::METRICS;
use super::error::TopKError;
use super::held::{held, Held};
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::window::rotation::read_time;

/// TOPK.QUERY key item [item ...]: whether each item is in the list.
pub fn query(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let sketch = held(&key)?.ok_or(TopKError::KeyMissing)?;
    let now = match sketch {
        Held::Plain(_) => None,
        Held::Windowed(sketch) => read_time(call, sketch),
    };
    call.reply_array(call.argc() - 2);
    let mut found = 0;
    for item in call.args_from(2) {
        let listed = match sketch {
            Held::Plain(sketch) => sketch.query(item),
            Held::Windowed(sketch) => sketch.query(item, now),
        };
        found += usize::from(listed);
        call.reply_bool(listed);
    }
    METRICS.count_lookups(call.argc() - 2, found);
    Ok(())
}

/// TOPK.COUNT key item [item ...]: each item's estimated count (of a windowed list, summed
/// over its live generations). A read here (RedisBloom flags it a write, so its read-only
/// replicas refuse it).
pub fn count(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let sketch = held(&key)?.ok_or(TopKError::KeyMissing)?;
    let now = match sketch {
        Held::Plain(_) => None,
        Held::Windowed(sketch) => read_time(call, sketch),
    };
    call.reply_array(call.argc() - 2);
    for item in call.args_from(2) {
        let count = match sketch {
            Held::Plain(sketch) => sketch.count(item),
            Held::Windowed(sketch) => sketch.count(item, now),
        };
        call.reply_integer(i64::try_from(count).unwrap_or(i64::MAX));
    }
    METRICS.count_lookups(call.argc() - 2, 0);
    Ok(())
}

/// TOPK.LIST key [WITHCOUNT]: the list by count, highest first. RedisBloom takes any
/// beginning of WITHCOUNT, in any case, for the keyword; so does this.
pub fn list(call: &Call) -> Result<(), CommandError> {
    let with_count = match call.argc() {
        2 => false,
        3 => {
            let word = call.arg(2);
            if word.len() > b"WITHCOUNT".len() || !b"WITHCOUNT"[..word.len()].eq_ignore_ascii_case(word) {
                return Err(TopKError::WithCountExpected.into());
            }
            true
        }
        _ => return Err(CommandError::WrongArity),
    };
    let key = call.open_key();
    let listed = match held(&key)?.ok_or(TopKError::KeyMissing)? {
        Held::Plain(sketch) => sketch.list(),
        Held::Windowed(sketch) => sketch.list(read_time(call, sketch)),
    };
    let listed = listed.map_err(|_| TopKError::InsufficientMemory)?;
    call.reply_array(listed.len() * if with_count { 2 } else { 1 });
    for (item, count) in listed {
        match item {
            Some(item) => call.reply_bulk(as_redisbloom_replies(item)),
            None => call.reply_null(),
        }
        if with_count {
            call.reply_integer(count as i64);
        }
    }
    Ok(())
}

/// An item as LIST and the expelled replies send it: RedisBloom keeps items as C strings and
/// replies them so, cut at the first NUL (`a\0b` is listed as `a`); QUERY and COUNT still
/// match the whole bytes.
pub(super) fn as_redisbloom_replies(item: &[u8]) -> &[u8] {
    item.iter().position(|&byte| byte == 0).map_or(item, |end| &item[..end])
}

/// TOPK.INFO key: k, width, depth and decay, a flat array under RESP2 and a map under RESP3;
/// of a windowed list, then `Window` (ms) and `Generations`.
pub fn info(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let (shape, window) = match held(&key)?.ok_or(TopKError::KeyMissing)? {
        Held::Plain(sketch) => (sketch.shape(), None),
        Held::Windowed(sketch) => {
            let schedule = sketch.schedule();
            (sketch.shape(), Some((schedule.window_ms(), schedule.generations())))
        }
    };
    call.reply_map(if window.is_some() { 6 } else { 4 });
    for (label, value) in [(c"k", shape.k()), (c"width", shape.width()), (c"depth", shape.depth())] {
        call.reply_simple(label);
        call.reply_integer(i64::from(value));
    }
    call.reply_simple(c"decay");
    call.reply_double(shape.decay());
    if let Some((window_ms, generations)) = window {
        call.reply_simple(c"Window");
        call.reply_integer(i64::try_from(window_ms).unwrap_or(i64::MAX));
        call.reply_simple(c"Generations");
        call.reply_integer(i64::from(generations));
    }
    Ok(())
}
