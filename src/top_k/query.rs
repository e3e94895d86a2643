//! TOPK.QUERY, TOPK.COUNT, TOPK.LIST and TOPK.INFO: reads, which change nothing.

use super::datatype::METRICS;
use super::error::TopKError;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use redbloom_core::top_k::TopK;

/// TOPK.QUERY key item [item ...]: whether each item is in the list.
pub fn query(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let sketch = key.get::<TopK>()?.ok_or(TopKError::KeyMissing)?;
    call.reply_array(call.argc() - 2);
    let mut found = 0;
    for item in call.args_from(2) {
        let listed = sketch.query(item);
        found += usize::from(listed);
        call.reply_bool(listed);
    }
    METRICS.count_lookups(call.argc() - 2, found);
    Ok(())
}

/// TOPK.COUNT key item [item ...]: each item's estimated count. A read here (RedisBloom flags
/// it a write, so its read-only replicas refuse it).
pub fn count(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let sketch = key.get::<TopK>()?.ok_or(TopKError::KeyMissing)?;
    call.reply_array(call.argc() - 2);
    for item in call.args_from(2) {
        call.reply_integer(sketch.count(item) as i64);
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
    let sketch = key.get::<TopK>()?.ok_or(TopKError::KeyMissing)?;
    let listed = sketch.list().map_err(|_| TopKError::InsufficientMemory)?;
    call.reply_array(listed.len() * if with_count { 2 } else { 1 });
    for (item, count) in listed {
        match item {
            Some(item) => call.reply_bulk(item),
            None => call.reply_null(),
        }
        if with_count {
            call.reply_integer(count as i64);
        }
    }
    Ok(())
}

/// TOPK.INFO key: k, width, depth and decay, a flat array under RESP2 and a map under RESP3.
pub fn info(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let sketch = key.get::<TopK>()?.ok_or(TopKError::KeyMissing)?;
    call.reply_map(4);
    for (label, value) in [(c"k", sketch.k()), (c"width", sketch.width()), (c"depth", sketch.depth())] {
        call.reply_simple(label);
        call.reply_integer(i64::from(value));
    }
    call.reply_simple(c"decay");
    call.reply_double(sketch.decay());
    Ok(())
}
