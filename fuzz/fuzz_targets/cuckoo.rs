//! Every cuckoo-filter decoder: the CF.LOADCHUNK header and chunks, and the RDB record of
//! RedisBloom's encoding versions 0 to 4, and both for wide fingerprints. Input: a mode byte
//! (taken modulo 4), then
//! - mode 0: a 38-byte header, then chunks, each an iterator (8 bytes), a 2-byte length and
//!   the data;
//! - mode 1: the RDB version, then values, each a tag (0 unsigned, 2 string) and its bytes
//!   (8, or a 2-byte length and the string);
//! - mode 2: as mode 0 with a 40-byte (wide) header;
//! - mode 3: as mode 1, read as a wide filter's record.
//!
//! Whatever loads is a working filter: it takes items, finds them, deletes them, compacts, and
//! its SCANDUMP rebuilds it byte for byte.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redbloom_fuzz::core::bytes::ByteArray;
use redbloom_fuzz::core::cuckoo::encoding::{HEADER_BYTES, WIDE_HEADER_BYTES};
use redbloom_fuzz::core::cuckoo::{CuckooFilter, CuckooHash, Inserted, Limits, DEFAULT_MAX_SUB_FILTERS};
use redbloom_fuzz::core::decode::DecodeError;
use redbloom_fuzz::core::decode::RdbSource;

/// Below the other targets' budget: each run zeroes, copies and compacts whole filters, and
/// small ones keep the fuzzer fast.
const FUZZ_BUDGET: usize = 1 << 20;

struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn take(&mut self, len: usize) -> Option<&[u8]> {
        (self.0.len() >= len).then(|| {
            let (taken, rest) = self.0.split_at(len);
            self.0 = rest;
            taken
        })
    }

    fn tagged(&mut self, tag: u8) -> Result<&[u8], DecodeError> {
        let short = DecodeError::Malformed("short read");
        if self.take(1).ok_or(short)? != [tag] {
            return Err(short);
        }
        let len = if tag == 0 {
            8
        } else {
            usize::from(u16::from_le_bytes(self.take(2).ok_or(short)?.try_into().unwrap()))
        };
        self.take(len).ok_or(short)
    }
}

impl RdbSource for Input<'_> {
    fn unsigned(&mut self) -> Result<u64, DecodeError> {
        self.tagged(0).map(|bytes| u64::from_le_bytes(bytes.try_into().unwrap()))
    }

    fn signed(&mut self) -> Result<i64, DecodeError> {
        Err(DecodeError::Malformed("no signed value in a cuckoo filter's record"))
    }

    fn double(&mut self) -> Result<f64, DecodeError> {
        Err(DecodeError::Malformed("no double in a cuckoo filter's record"))
    }

    fn bytes(&mut self) -> Result<ByteArray, DecodeError> {
        let bytes = self.tagged(2)?;
        ByteArray::try_copy_of(bytes).map_err(|_| DecodeError::OutOfMemory)
    }
}

fn from_chunks(input: &mut Input, header_bytes: usize) -> Option<CuckooFilter> {
    let mut filter = CuckooFilter::from_header(input.take(header_bytes)?, FUZZ_BUDGET).ok()?;
    while let Some(iterator) = input.take(8) {
        let iterator = u64::from_le_bytes(iterator.try_into().unwrap());
        let Some(len) = input.take(2) else { break };
        let len = usize::from(u16::from_le_bytes(len.try_into().unwrap()));
        let Some(data) = input.take(len) else { break };
        let _ = filter.load_chunk(iterator, data);
    }
    Some(filter)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let mut input = Input(rest);
    let filter = match mode % 4 {
        0 => from_chunks(&mut input, HEADER_BYTES),
        2 => from_chunks(&mut input, WIDE_HEADER_BYTES),
        rdb => {
            let Some(&version) = input.take(1).and_then(|v| v.first()) else { return };
            if rdb == 1 {
                CuckooFilter::load_rdb(i32::from(version % 6), &mut input, FUZZ_BUDGET).ok()
            } else {
                CuckooFilter::load_wide_rdb(i32::from(version % 3), &mut input, FUZZ_BUDGET).ok()
            }
        }
    };
    let Some(mut filter) = filter else { return };

    let mut copy = CuckooFilter::from_header(filter.header().as_bytes(), FUZZ_BUDGET)
        .expect("a loaded filter's own header");
    let mut iterator = 1;
    while let Some((next, chunk)) = filter.chunk(iterator) {
        assert!(copy.load_chunk(next, chunk), "a chunk SCANDUMP gave back");
        iterator = next;
    }
    assert_eq!(copy.header(), filter.header());

    let items: Vec<CuckooHash> = (0..64u32).map(|n| filter.hash(&n.to_le_bytes())).collect();
    for &item in &items {
        if filter.insert(item, Limits { max_bytes: FUZZ_BUDGET, max_sub_filters: DEFAULT_MAX_SUB_FILTERS })
            == Inserted::Added
        {
            assert!(filter.contains(item));
            assert!(filter.count(item) >= 1);
        }
    }
    for &item in &items {
        let _ = filter.delete(item);
    }
    filter.compact(true);
    assert!(filter.data_bytes() <= FUZZ_BUDGET);
});
