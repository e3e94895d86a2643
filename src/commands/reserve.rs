//! BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING] [FORMAT f]

use super::parse::{self, Creation};
use super::{BfError, Call};
use crate::config;

pub fn reserve(call: &Call) -> Result<(), BfError> {
    let parsed = parse::reserve(&call.args(), config::defaults())?;
    let creation = parsed.creation.ok_or(BfError::Internal)?;
    if let Some(asked) = parsed.capped_rate {
        config::log_capped(asked);
    }
    let mut key = call.open_key_for_writing();
    if key.filter()?.is_some() {
        return Err(BfError::ItemExists);
    }
    let filter = creation.try_build(call.max_filter_bytes()).inspect_err(|_| log_refusal(&creation))?;
    key.store(filter)?;
    call.reply_ok();
    call.notify(c"bf.reserve");
    // The expansion and format may have come from this server's defaults: spell them out.
    let parameters = creation.reserve_args();
    let mut replicated: Vec<&[u8]> = vec![call.arg(1)];
    replicated.extend(parameters.iter().map(String::as_bytes));
    call.replicate("BF.RESERVE", &replicated);
    Ok(())
}

/// A refused creation is worth a line in the log: the client only sees "insufficient memory".
pub fn log_refusal(creation: &Creation) {
    redis_module::logging::log_notice(format!(
        "redbloom: refused a filter of capacity {} at error rate {}: it exceeds bf.max-filter-bytes ({}) or available memory",
        creation.capacity,
        creation.error_rate,
        config::max_filter_bytes()
    ));
}
