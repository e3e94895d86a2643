//! A filter of either format under a random sequence of adds and lookups, with growth and a
//! memory budget: never a false negative, counts that match the adds, and an exact round trip
//! through the encoding at the end.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redbloom_fuzz::core::bloom::{Filter, FilterError, Format};

fuzz_target!(|data: &[u8]| {
    let Some((setup, operations)) = data.split_first_chunk::<4>() else { return };
    let capacity = 1 + u64::from(setup[0]) * 3;
    let error_rate = [0.25, 0.1, 0.01, 0.001, 1e-6, 1e-12][setup[1] as usize % 6];
    let expansion = u32::from(setup[2] % 5);
    let format = if setup[2] & 0x80 == 0 { Format::Redbloom } else { Format::RedisBloom };
    let budget = 4096 + usize::from(setup[3]) * 1024;
    let Ok(mut filter) = Filter::try_new(format, capacity, error_rate, expansion, budget) else { return };
    let mut added = Vec::new();
    let mut counted = 0u64;
    for item in operations.chunks(3) {
        if item[0] & 1 == 0 {
            match filter.insert(item, || budget) {
                Ok(new) => {
                    counted += u64::from(new);
                    added.push(item);
                }
                Err(FilterError::Full) => assert_eq!(expansion, 0),
                Err(FilterError::TooLarge) | Err(FilterError::OutOfMemory) => {}
            }
        } else {
            let _ = filter.contains(item);
        }
    }
    assert_eq!(filter.items(), counted);
    assert!(added.iter().all(|item| filter.contains(item)));
    let mut copy = Filter::decode_header(&filter.encode_header(), usize::MAX).expect("own header");
    for (end, chunk) in filter.chunks() {
        copy.write_chunk(end - chunk.len() as u64, chunk).expect("own chunk");
    }
    assert!(added.iter().all(|item| copy.contains(item)));
});
