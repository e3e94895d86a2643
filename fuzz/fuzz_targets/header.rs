//! The header decoder of either format, as RDB load, RESTORE and LOADCHUNK's first call use
//! it: whatever it accepts must describe a working filter that encodes back to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redbloom_fuzz::core::bloom::Filter;
use redbloom_fuzz::FUZZ_BUDGET;

fuzz_target!(|data: &[u8]| {
    let Ok(mut filter) = Filter::decode_header(data, FUZZ_BUDGET) else { return };
    let encoded = filter.encode_header();
    // RedisBloom's older header layout is read but written in the current one.
    if encoded != data {
        let again = Filter::decode_header(&encoded, FUZZ_BUDGET).expect("own header");
        assert_eq!(again.encode_header(), encoded);
    }
    let bytes: usize = filter.chunks().map(|(_, chunk)| chunk.len()).sum();
    assert_eq!(bytes, filter.bits_bytes());
    let _ = filter.insert(b"probe", || FUZZ_BUDGET);
    let _ = filter.contains(b"another");
    let _ = filter.try_clone();
});
