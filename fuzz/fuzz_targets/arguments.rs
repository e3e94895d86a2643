//! The argument parsers of BF.RESERVE, BF.INSERT, CF.RESERVE and CF.INSERT, and the window
//! options a sketch's creation ends with (`WINDOW ms [GENERATIONS g]`), on arbitrary argument
//! lists (pieces of the input split at zero bytes). What they accept must be within
//! the documented ranges.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redbloom_fuzz::bloom::parse::{self, Creation};
use redbloom_fuzz::core::bloom::params::{MAX_CAPACITY, MAX_EXPANSION, MAX_USEFUL_ERROR_RATE};
use redbloom_fuzz::core::bloom::Format;
use redbloom_fuzz::core::cuckoo::{CuckooParams, MAX_BUCKET_SIZE, MAX_EXPANSION as MAX_CUCKOO_EXPANSION};
use redbloom_fuzz::cuckoo::parse as cuckoo_parse;
use redbloom_fuzz::core::window::{MAX_GENERATIONS, MAX_WINDOW_MS, MIN_GENERATIONS, MIN_WINDOW_MS};
use redbloom_fuzz::shared::error::CommandError;
use redbloom_fuzz::shared::parse as primitives;
use redbloom_fuzz::window::parse::trailing;
use redbloom_fuzz::split_args;

const DEFAULTS: Creation = Creation::plain(100, 0.01, 2, Format::Redbloom);

fn check(creation: Creation) {
    assert!((1..=MAX_CAPACITY).contains(&creation.capacity));
    assert!(creation.error_rate > 0.0 && creation.error_rate <= MAX_USEFUL_ERROR_RATE);
    assert!(creation.expansion <= MAX_EXPANSION);
    // A growth is recorded only beside NONSCALING, and is one an EXPANSION may name.
    assert!(creation
        .nonscaling_growth
        .is_none_or(|growth| creation.expansion == 0 && (1..=MAX_EXPANSION).contains(&growth)));
}

fuzz_target!(|data: &[u8]| {
    let pieces = split_args(data);
    for command in [&b"BF.RESERVE"[..], b"BF.INSERT"] {
        let mut args = vec![command, b"key"];
        args.extend(&pieces);
        let parsed = if command == b"BF.RESERVE" {
            parse::reserve(&args, DEFAULTS)
        } else {
            parse::insert(&args, DEFAULTS)
        };
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
    let mut args = vec![&b"CF.RESERVE"[..], b"key"];
    args.extend(&pieces);
    if let Ok(params) = cuckoo_parse::reserve(&args, CuckooParams::default()) {
        assert!((1..=MAX_BUCKET_SIZE).contains(&params.bucket_size) && params.max_iterations >= 1);
        assert!(params.expansion <= MAX_CUCKOO_EXPANSION);
        assert!(params.capacity >= 2 * u64::from(params.bucket_size));
    }
    args[0] = b"CF.INSERT";
    if let Ok(insert) = cuckoo_parse::insert(&args, CuckooParams::default()) {
        assert!(insert.first_item >= 3 && insert.first_item < args.len(), "INSERT needs an item");
        assert!(insert.params.capacity >= 2 * u64::from(insert.params.bucket_size));
        let error_given = args[2..insert.first_item].iter().any(|arg| arg.eq_ignore_ascii_case(b"ERROR"));
        assert!(error_given || insert.params.width.is_redisbloom(), "only ERROR widens fingerprints");
    }
    if let Ok(Some(schedule)) = trailing(&pieces, 0, CommandError::WrongArity) {
        assert!((MIN_WINDOW_MS..=MAX_WINDOW_MS).contains(&schedule.window_ms()));
        assert!((MIN_GENERATIONS..=MAX_GENERATIONS).contains(&schedule.generations()));
        assert!(u64::from(schedule.generations()) <= schedule.window_ms());
    }
    for piece in &pieces {
        let _ = primitives::integer(piece);
        let _ = primitives::float(piece);
    }
});
