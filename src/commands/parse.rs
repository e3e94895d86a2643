//! Argument parsing shared by the commands that create filters.

use super::{BfError, Call};
use crate::config::Defaults;
use crate::filter::params;

/// Everything needed to create a filter.
#[derive(Debug, Clone, Copy)]
pub struct Creation {
    pub capacity: u64,
    pub error_rate: f64,
    /// 0 for non-scaling.
    pub expansion: u32,
}

impl From<Defaults> for Creation {
    fn from(defaults: Defaults) -> Creation {
        Creation {
            capacity: defaults.capacity,
            error_rate: defaults.error_rate,
            expansion: defaults.expansion,
        }
    }
}

impl Creation {
    // The arguments that recreate exactly this filter on a replica. Rust prints an f64 with
    // the fewest digits that parse back to the same value, so the rate survives exactly.

    /// `EXPANSION n` or `NONSCALING`, which BF.RESERVE and BF.INSERT both take.
    pub fn scaling_args(&self) -> Vec<String> {
        if self.expansion == 0 {
            vec!["NONSCALING".to_string()]
        } else {
            vec!["EXPANSION".to_string(), self.expansion.to_string()]
        }
    }

    /// Every parameter, in BF.INSERT's syntax.
    pub fn insert_args(&self) -> Vec<String> {
        let mut args = vec![
            "CAPACITY".to_string(),
            self.capacity.to_string(),
            "ERROR".to_string(),
            self.error_rate.to_string(),
        ];
        args.extend(self.scaling_args());
        args
    }

    /// Every parameter, in BF.RESERVE's syntax (after the key).
    pub fn reserve_args(&self) -> Vec<String> {
        let mut args = vec![self.error_rate.to_string(), self.capacity.to_string()];
        args.extend(self.scaling_args());
        args
    }
}

pub fn float(bytes: &[u8]) -> Option<f64> {
    let value: f64 = std::str::from_utf8(bytes).ok()?.parse().ok()?;
    (!value.is_nan()).then_some(value)
}

/// An integer as Redis reads one: an optional minus, no plus, no leading zeros, no "-0".
pub fn integer(bytes: &[u8]) -> Option<i64> {
    let digits = bytes.strip_prefix(b"-").unwrap_or(bytes);
    let canonical = match digits {
        [b'0'] => bytes.len() == 1,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !canonical {
        return None;
    }
    std::str::from_utf8(bytes).ok()?.parse().ok()
}

pub fn is_keyword(bytes: &[u8], keyword: &str) -> bool {
    bytes.eq_ignore_ascii_case(keyword.as_bytes())
}

/// A valid error rate, capped at 0.25 with a log line, or `out_of_range` when outside (0, 1).
pub fn error_rate_in_range(rate: f64, out_of_range: BfError) -> Result<f64, BfError> {
    let checked = params::checked_error_rate(rate).ok_or(out_of_range)?;
    if checked != rate {
        redis_module::logging::log_notice(format!("redbloom: error rate {rate} capped to {checked}"));
    }
    Ok(checked)
}

/// The options of BF.INSERT, before the key is looked at.
pub struct InsertOptions {
    /// `None` for NOCREATE.
    pub creation: Option<Creation>,
    pub first_item: usize,
}

pub fn insert_options(call: &Call, defaults: Defaults) -> Result<InsertOptions, BfError> {
    let mut creation = Creation::from(defaults);
    let mut expansion_given = None;
    let mut nocreate = false;
    let mut nonscaling = false;
    let mut index = 2;
    let first_item = loop {
        if index >= call.argc() {
            return Err(BfError::WrongArity);
        }
        let token = call.arg(index);
        let value = || {
            if index + 1 < call.argc() {
                Ok(call.arg(index + 1))
            } else {
                Err(BfError::WrongArity)
            }
        };
        if is_keyword(token, "CAPACITY") {
            let capacity = integer(value()?).filter(|&c| params::capacity_in_range(c));
            creation.capacity = capacity.ok_or(BfError::InsertBadCapacity)? as u64;
            index += 2;
        } else if is_keyword(token, "ERROR") {
            let rate = float(value()?).ok_or(BfError::InsertBadErrorRate)?;
            creation.error_rate = error_rate_in_range(rate, BfError::InsertBadErrorRate)?;
            index += 2;
        } else if is_keyword(token, "EXPANSION") {
            let expansion = integer(value()?).filter(|&e| params::expansion_in_range(e));
            expansion_given = Some(expansion.ok_or(BfError::InsertBadExpansion)? as u32);
            index += 2;
        } else if is_keyword(token, "NOCREATE") {
            nocreate = true;
            index += 1;
        } else if is_keyword(token, "NONSCALING") {
            nonscaling = true;
            index += 1;
        } else if is_keyword(token, "ITEMS") {
            break index + 1;
        } else {
            return Err(BfError::UnknownArgument);
        }
    };
    if first_item >= call.argc() {
        return Err(BfError::WrongArity);
    }
    creation.expansion = scaling(expansion_given, nonscaling, defaults.expansion)?;
    Ok(InsertOptions { creation: (!nocreate).then_some(creation), first_item })
}

/// The expansion a new filter gets from EXPANSION and NONSCALING, which contradict each
/// other when both are given with a non-zero expansion.
pub fn scaling(expansion: Option<u32>, nonscaling: bool, default: u32) -> Result<u32, BfError> {
    match (expansion, nonscaling) {
        (Some(expansion), true) if expansion > 0 => Err(BfError::NonScalingCannotExpand),
        (_, true) => Ok(0),
        (Some(expansion), false) => Ok(expansion),
        (None, false) => Ok(default),
    }
}
