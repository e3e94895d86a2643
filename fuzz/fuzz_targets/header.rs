//! The header decoder, as RDB load, RESTORE and LOADCHUNK's first call use it: whatever it
//! accepts must describe a working filter that encodes back to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redbloom_fuzz::filter::encoding;
use redbloom_fuzz::FUZZ_BUDGET;

fuzz_target!(|data: &[u8]| {
    let Ok(mut filter) = encoding::decode_header(data, FUZZ_BUDGET) else { return };
    assert_eq!(encoding::encode_header(&filter), data);
    let bytes: usize = encoding::chunks(&filter).map(|(_, chunk)| chunk.len()).sum();
    assert_eq!(bytes, filter.bits_bytes());
    let _ = filter.insert(b"probe", FUZZ_BUDGET);
    let _ = filter.contains(b"another");
    let _ = filter.try_clone();
});
