//! The argument parsers of BF.RESERVE and BF.INSERT, on arbitrary argument lists (pieces of
//! the input split at zero bytes). What they accept must be within the documented ranges.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redbloom_fuzz::parse::{self, Creation};
use redbloom_fuzz::filter::params::{MAX_CAPACITY, MAX_EXPANSION, MAX_USEFUL_ERROR_RATE};
use redbloom_fuzz::filter::Format;
use redbloom_fuzz::split_args;

const DEFAULTS: Creation = Creation { capacity: 100, error_rate: 0.01, expansion: 2, format: Format::Redbloom };

fn check(creation: Creation) {
    assert!((1..=MAX_CAPACITY).contains(&creation.capacity));
    assert!(creation.error_rate > 0.0 && creation.error_rate <= MAX_USEFUL_ERROR_RATE);
    assert!(creation.expansion <= MAX_EXPANSION);
}

fuzz_target!(|data: &[u8]| {
    let pieces = split_args(data);
    for command in [&b"BF.RESERVE"[..], b"BF.INSERT"] {
        let mut args = vec![command, b"key"];
        args.extend(&pieces);
        let parsed = if command == b"BF.RESERVE" { parse::reserve(&args, DEFAULTS) } else { parse::insert(&args, DEFAULTS) };
        if let Ok(parsed) = parsed {
            if let Some(creation) = parsed.creation {
                check(creation);
            }
            assert!(parsed.first_item <= args.len());
            if command == b"BF.INSERT" {
                assert!(parsed.first_item < args.len(), "INSERT needs an item");
            }
        }
    }
    for piece in &pieces {
        let _ = parse::integer(piece);
        let _ = parse::float(piece);
    }
});
