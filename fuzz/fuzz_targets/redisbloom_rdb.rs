//! RedisBloom's RDB record, as `rdb_load` reads it for encoding versions 0 to 4. Input: the
//! version, then values, each a tag (0 unsigned, 1 double, 2 string) and its bytes (8, 8, or
//! a 2-byte length and the string). Whatever loads is a working filter whose dump header
//! decodes to the same filter.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redbloom_fuzz::core::bloom::redisbloom::encoding::load_rdb;
use redbloom_fuzz::core::bloom::Filter;
use redbloom_fuzz::core::bytes::ByteArray;
use redbloom_fuzz::core::decode::DecodeError;
use redbloom_fuzz::core::decode::RdbSource;
use redbloom_fuzz::FUZZ_BUDGET;

struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn tagged<const N: usize>(&mut self, tag: u8) -> Result<[u8; N], DecodeError> {
        let short = DecodeError::Malformed("short read");
        let (&found, rest) = self.0.split_first().ok_or(short)?;
        let (value, rest) = rest.split_first_chunk::<N>().ok_or(short)?;
        if found != tag {
            return Err(short);
        }
        self.0 = rest;
        Ok(*value)
    }
}

impl RdbSource for Input<'_> {
    fn unsigned(&mut self) -> Result<u64, DecodeError> {
        self.tagged(0).map(u64::from_le_bytes)
    }

    fn signed(&mut self) -> Result<i64, DecodeError> {
        Err(DecodeError::Malformed("no signed value in a Bloom filter's record"))
    }

    fn double(&mut self) -> Result<f64, DecodeError> {
        self.tagged(1).map(f64::from_le_bytes)
    }

    fn bytes(&mut self) -> Result<ByteArray, DecodeError> {
        let len = usize::from(u16::from_le_bytes(self.tagged(2)?));
        if self.0.len() < len {
            return Err(DecodeError::Malformed("short read"));
        }
        let (bytes, rest) = self.0.split_at(len);
        self.0 = rest;
        ByteArray::try_copy_of(bytes).map_err(|_| DecodeError::OutOfMemory)
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&version, record)) = data.split_first() else { return };
    let Ok(chain) = load_rdb(i32::from(version % 6), &mut Input(record), FUZZ_BUDGET) else { return };
    let mut filter = Filter::RedisBloom(chain);
    let header = filter.encode_header();
    let copy = Filter::decode_header(&header, FUZZ_BUDGET).expect("a loaded filter's own header");
    assert_eq!(copy.encode_header(), header);
    let _ = filter.insert(b"probe", || FUZZ_BUDGET);
    let _ = filter.contains(b"another");
});
