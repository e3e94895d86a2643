//! BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING]

use super::parse::{self, Creation};
use super::{BfError, Call};
use crate::config;
use crate::filter::{params, BloomFilter};

pub fn reserve(call: &Call) -> Result<(), BfError> {
    let creation = creation(call)?;
    let mut key = call.open_key_for_writing();
    if key.filter()?.is_some() {
        return Err(BfError::ItemExists);
    }
    let filter = BloomFilter::try_new(
        creation.capacity,
        creation.error_rate,
        creation.expansion,
        call.max_filter_bytes(),
    )
    .inspect_err(|_| log_refusal(&creation))?;
    key.store(filter)?;
    call.reply_ok();
    call.notify(c"bf.reserve");
    // The expansion may have come from this server's default: spell it out for replicas.
    let scaling = creation.scaling_args();
    let mut replicated: Vec<&[u8]> = vec![call.arg(1), call.arg(2), call.arg(3)];
    replicated.extend(scaling.iter().map(String::as_bytes));
    call.replicate("BF.RESERVE", &replicated);
    Ok(())
}

fn creation(call: &Call) -> Result<Creation, BfError> {
    let rate = parse::float(call.arg(2)).ok_or(BfError::BadErrorRate)?;
    let error_rate = parse::error_rate_in_range(rate, BfError::ErrorRateOutOfRange)?;
    let capacity = parse::integer(call.arg(3)).ok_or(BfError::BadCapacity)?;
    if !params::capacity_in_range(capacity) {
        return Err(BfError::CapacityOutOfRange);
    }
    // Options may come in any order and anything unknown is skipped: some clients send
    // the expansion number without its keyword.
    let mut expansion = None;
    let mut nonscaling = false;
    let mut index = 4;
    while index < call.argc() {
        let token = call.arg(index);
        if parse::is_keyword(token, "EXPANSION") {
            if index + 1 >= call.argc() {
                return Err(BfError::NoExpansion);
            }
            let value = parse::integer(call.arg(index + 1)).ok_or(BfError::BadExpansion)?;
            if !params::expansion_in_range(value) {
                return Err(BfError::ExpansionOutOfRange);
            }
            expansion = Some(value as u32);
            index += 2;
        } else {
            nonscaling |= parse::is_keyword(token, "NONSCALING");
            index += 1;
        }
    }
    let expansion = parse::scaling(expansion, nonscaling, config::defaults().expansion)?;
    Ok(Creation { capacity: capacity as u64, error_rate, expansion })
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
