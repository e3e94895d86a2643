//! BF.INFO and BF.DEBUG.

use super::error::BfError;
use super::held::{held, Held};
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::shared::parse::is_keyword;
use crate::window::rotation::read_time;
use redbloom_core::bloom::window::WindowFilter;
use redbloom_core::bloom::Filter;
use std::ffi::CStr;

/// One pair of BF.INFO: the keyword that asks for it alone, its label, and its value (nil
/// where the filter has none).
struct Field {
    name: &'static str,
    label: &'static CStr,
    value: Option<u64>,
}

const fn field(name: &'static str, label: &'static CStr, value: Option<u64>) -> Field {
    Field { name, label, value }
}

/// The five pairs every filter answers, in their order. go-redis refuses labels it does not
/// know, so nothing may be added to a plain filter's reply: new information needs a new
/// optional field.
fn plain_fields(filter: &Filter) -> [Field; 5] {
    [
        field("CAPACITY", c"Capacity", Some(filter.capacity())),
        field("SIZE", c"Size", Some(filter.reported_size())),
        field("FILTERS", c"Number of filters", Some(filter.link_count() as u64)),
        field("ITEMS", c"Number of items inserted", Some(filter.items())),
        field("EXPANSION", c"Expansion rate", filter.expansion().map(u64::from)),
    ]
}

/// A windowed filter's: the five pairs, then `Window` and `Generations`. Its `items` are those
/// of its live window, read by the master's clock; its size and filters, what it holds until
/// a rotation drops the generations expired.
fn windowed_fields(filter: &WindowFilter, items: u64) -> [Field; 7] {
    let params = filter.params();
    [
        field("CAPACITY", c"Capacity", Some(filter.capacity())),
        field("SIZE", c"Size", Some(filter.memory_bytes() as u64)),
        field("FILTERS", c"Number of filters", Some(filter.link_count() as u64)),
        field("ITEMS", c"Number of items inserted", Some(items)),
        field(
            "EXPANSION",
            c"Expansion rate",
            (params.expansion() > 0).then_some(u64::from(params.expansion())),
        ),
        field("WINDOW", c"Window", Some(params.window_ms())),
        field("GENERATIONS", c"Generations", Some(u64::from(params.generations()))),
    ]
}

/// Not among a plain filter's five pairs, so that its reply stays what clients parse: asked
/// for alone, the false-positive rate the filter has now (an extension of this module).
const ESTIMATE: (&str, &CStr) = ("ERROR", c"Estimated error rate");

/// BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION | ERROR | WINDOW | GENERATIONS]
pub fn info(call: &Call) -> Result<(), CommandError> {
    if call.argc() > 3 {
        return Err(CommandError::WrongArity);
    }
    let key = call.open_key();
    match held(&key)?.ok_or(CommandError::NotFound)? {
        Held::Plain(filter) => {
            reply_fields(call, &plain_fields(filter), Some(&|| filter.estimated_error_rate()))
        }
        Held::Windowed(filter) => {
            let items = filter.items_at(read_time(call, filter));
            reply_fields(call, &windowed_fields(filter, items), None)
        }
    }
}

/// Every pair, or the one asked for; `estimate` answers ERROR where the filter has one.
fn reply_fields(
    call: &Call,
    fields: &[Field],
    estimate: Option<&dyn Fn() -> f64>,
) -> Result<(), CommandError> {
    let reply_value = |value: Option<u64>| match value {
        Some(value) => call.reply_integer(value as i64),
        None => call.reply_null(),
    };
    if call.argc() == 2 {
        call.reply_map(fields.len());
        for field in fields {
            call.reply_simple(field.label);
            reply_value(field.value);
        }
        return Ok(());
    }
    let asked = call.arg(2);
    let found = fields.iter().find(|field| is_keyword(asked, field.name));
    let estimate = estimate.filter(|_| is_keyword(asked, ESTIMATE.0));
    let label = match (found, estimate) {
        (Some(field), _) => field.label,
        (None, Some(_)) => ESTIMATE.1,
        (None, None) => return Err(BfError::InvalidInfoField.into()),
    };
    if call.is_resp3() {
        call.reply_map(1);
        call.reply_simple(label);
    } else {
        call.reply_array(1);
    }
    match (found, estimate) {
        (Some(field), _) => reply_value(field.value),
        (None, Some(estimate)) => call.reply_double(estimate()),
        (None, None) => {}
    }
    Ok(())
}

/// BF.DEBUG key: for a plain filter, the item count, then one line per sub-filter; for a
/// windowed one, the window, then one line per generation it holds (expired ones too, until
/// a rotation drops them: what the memory holds, where BF.CARD answers by the clock).
pub fn debug(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    match held(&key)?.ok_or(CommandError::NotFound)? {
        Held::Plain(filter) => debug_plain(call, filter),
        Held::Windowed(filter) => debug_windowed(call, filter),
    }
    Ok(())
}

/// For RedisBloom's format the lines are RedisBloom's own; for this module's, `bits` counts
/// the blocked layout's bits and `hashes` the bits set per item over all its blocks.
fn debug_plain(call: &Call, filter: &Filter) {
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
}

fn debug_windowed(call: &Call, filter: &WindowFilter) {
    let params = filter.params();
    call.reply_array(1 + filter.generations().count());
    call.reply_bulk(
        format!(
            "window:{} generations:{} span:{} items:{} current:{}",
            params.window_ms(),
            params.generations(),
            params.span_ms(),
            filter.items(),
            filter.current_start_ms()
        )
        .as_bytes(),
    );
    for generation in filter.generations() {
        let line = format!(
            "generation start:{} items:{} links:{} bytes:{}",
            generation.start_ms,
            generation.value.latest_items(),
            generation.value.links().count(),
            generation.value.memory_bytes()
        );
        call.reply_bulk(line.as_bytes());
    }
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
