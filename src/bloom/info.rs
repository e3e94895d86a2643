//! BF.INFO and BF.DEBUG.

use super::window;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::shared::parse::is_keyword;
use redbloom_core::bloom::Filter;
use std::ffi::CStr;

/// The five pairs of BF.INFO, in their order. go-redis refuses labels it does not know, so
/// nothing may be added here: new information needs a new optional field.
const FIELDS: [(&str, &CStr); 5] = [
    ("CAPACITY", c"Capacity"),
    ("SIZE", c"Size"),
    ("FILTERS", c"Number of filters"),
    ("ITEMS", c"Number of items inserted"),
    ("EXPANSION", c"Expansion rate"),
];

/// Not among the five pairs, so that the plain reply stays what clients parse: asked for
/// alone, the false-positive rate the filter has now (an extension of this module).
const ESTIMATE: (&str, &CStr) = ("ERROR", c"Estimated error rate");

/// A windowed filter's two pairs after the five.
const WINDOW_FIELDS: [(&str, &CStr); 2] = [("WINDOW", c"Window"), ("GENERATIONS", c"Generations")];

/// BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION | ERROR | WINDOW | GENERATIONS]
pub fn info(call: &Call) -> Result<(), CommandError> {
    if call.argc() > 3 {
        return Err(CommandError::WrongArity);
    }
    let key = call.open_key();
    if window::holds(&key) {
        return window_info(call, &key);
    }
    let filter = key.get::<Filter>()?.ok_or(CommandError::NotFound)?;
    if call.argc() == 2 {
        call.reply_map(FIELDS.len());
        for (index, (_, label)) in FIELDS.iter().enumerate() {
            call.reply_simple(label);
            reply_value(call, filter, index);
        }
        return Ok(());
    }
    let asked = call.arg(2);
    let field = FIELDS.iter().position(|(name, _)| is_keyword(asked, name));
    let estimate = is_keyword(asked, ESTIMATE.0);
    let label = match field {
        Some(index) => FIELDS[index].1,
        None if estimate => ESTIMATE.1,
        None => return Err(CommandError::InvalidInfoField),
    };
    if call.is_resp3() {
        call.reply_map(1);
        call.reply_simple(label);
    } else {
        call.reply_array(1);
    }
    match field {
        Some(index) => reply_value(call, filter, index),
        None => call.reply_double(filter.estimated_error_rate()),
    }
    Ok(())
}

/// BF.INFO of a windowed filter: the five pairs, then `Window` and `Generations`.
fn window_info(call: &Call, key: &crate::shared::keyspace::Key) -> Result<(), CommandError> {
    let values = window::info_values(key)?;
    let labels = FIELDS.iter().chain(WINDOW_FIELDS.iter());
    let reply = |value: Option<i64>| match value {
        Some(value) => call.reply_integer(value),
        None => call.reply_null(),
    };
    if call.argc() == 2 {
        call.reply_map(values.len());
        for ((_, label), value) in labels.zip(values) {
            call.reply_simple(label);
            reply(value);
        }
        return Ok(());
    }
    let asked = call.arg(2);
    let (index, (_, label)) =
        labels.enumerate().find(|(_, (name, _))| is_keyword(asked, name)).ok_or(CommandError::InvalidInfoField)?;
    if call.is_resp3() {
        call.reply_map(1);
        call.reply_simple(label);
    } else {
        call.reply_array(1);
    }
    reply(values[index]);
    Ok(())
}

fn reply_value(call: &Call, filter: &Filter, field: usize) {
    let value = match field {
        0 => Some(filter.capacity()),
        1 => Some(filter.reported_size()),
        2 => Some(filter.link_count() as u64),
        3 => Some(filter.items()),
        _ => filter.expansion().map(u64::from),
    };
    match value {
        Some(value) => call.reply_integer(value as i64),
        None => call.reply_null(),
    }
}

/// BF.DEBUG key: the item count, then one line per sub-filter. For RedisBloom's format the
/// lines are RedisBloom's own; for this module's, `bits` counts the blocked layout's bits
/// and `hashes` the bits set per item over all its blocks.
pub fn debug(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    if window::holds(&key) {
        return window::debug(call, &key);
    }
    let filter = key.get::<Filter>()?.ok_or(CommandError::NotFound)?;
    call.reply_array(1 + filter.link_count());
    call.reply_bulk(format!("size:{}", filter.items()).as_bytes());
    let line = |bytes: u64, bits: u64, hashes: u32, width: u32, capacity: u64, items: u64, rate: f64| {
        let rate = format_like_printf_g(rate);
        format!("bytes:{bytes} bits:{bits} hashes:{hashes} hashwidth:{width} capacity:{capacity} size:{items} ratio:{rate}")
    };
    match filter {
        Filter::Redbloom(chain) => {
            for link in chain.links() {
                let layout = link.layout();
                let (bytes, hashes) = (link.byte_len() as u64, layout.bits_per_item_set());
                let text =
                    line(bytes, layout.bits(), hashes, 64, link.capacity(), link.items(), link.error_rate());
                call.reply_bulk(text.as_bytes());
            }
        }
        Filter::RedisBloom(chain) => {
            for link in chain.links() {
                let f = link.fields();
                let text = line(f.bytes, f.bits, f.hashes, chain.hash_width(), f.entries, f.items, f.error);
                call.reply_bulk(text.as_bytes());
            }
        }
    }
    Ok(())
}

/// C's `%g`: six significant digits, trailing zeros dropped, scientific notation when the
/// exponent is below -4 or at least 6. RedisBloom prints the ratio this way.
fn format_like_printf_g(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return value.to_string();
    }
    let scientific = format!("{value:.5e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..6).contains(&exponent) {
        trim_fraction(&format!("{value:.*}", (5 - exponent) as usize)).to_string()
    } else {
        let mantissa = trim_fraction(mantissa);
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    }
}

fn trim_fraction(number: &str) -> &str {
    if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    }
}

#[cfg(test)]
mod tests {
    use super::format_like_printf_g;

    #[test]
    fn formats_like_printf() {
        assert_eq!(format_like_printf_g(0.01), "0.01");
        assert_eq!(format_like_printf_g(0.005), "0.005");
        assert_eq!(format_like_printf_g(0.000_078_125), "7.8125e-05");
        assert_eq!(format_like_printf_g(0.0001), "0.0001");
        assert_eq!(format_like_printf_g(0.25), "0.25");
        assert_eq!(format_like_printf_g(1.0 / 3.0), "0.333333");
        assert_eq!(format_like_printf_g(1e-10), "1e-10");
    }
}
