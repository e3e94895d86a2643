//! A cuckoo filter's binary forms: the SCANDUMP header and the chunks that follow it (also
//! what the AOF holds), and the RDB record. For 8-bit fingerprints they are RedisBloom's, byte
//! for byte. Wider filters, which RedisBloom cannot hold, add their width where RedisBloom
//! refuses it: two more header bytes (its CF.LOADCHUNK wants exactly 38) and a data type of
//! their own, whose record is the width and then RedisBloom's fields.
//!
//! Everything read is checked before it is kept: a header must describe sub-filters this code
//! can serve (power-of-two bucket counts, each within the memory budget, a chain that can
//! only come from growth), and a chunk must land inside one sub-filter.

use super::filter::MAX_COUNT;
use super::params::MAX_BUCKETS;
use super::{CuckooFilter, SubFilter, Width, MAX_BUCKET_SIZE, MAX_SUB_FILTERS};
use crate::bytes::ByteArray;
use crate::decode::DecodeError;
use crate::decode::RdbSource;

/// RedisBloom's header.
pub const HEADER_BYTES: usize = 38;
/// The header of a filter wider than RedisBloom's: its own, then the fingerprint bits (u16).
pub const WIDE_HEADER_BYTES: usize = HEADER_BYTES + 2;
/// The largest chunk SCANDUMP hands out, as in RedisBloom 2.8.2.
pub const CHUNK_BYTES: usize = 16 << 20;
/// RedisBloom's RDB encoding: version 4 added the deletes, the bucket size, the iterations,
/// the expansion and a bucket count per sub-filter.
pub const NEWEST_REDISBLOOM_VERSION: i32 = 4;
/// The encoding of wide filters' records: the fingerprint bits, then version 4's fields.
pub const WIDE_VERSION: i32 = 1;
/// Older records assume these.
const OLD_BUCKET_SIZE: u16 = 2;
const OLD_MAX_ITERATIONS: u16 = 20;
const OLD_EXPANSION: u16 = 1;

/// A SCANDUMP header, as long as the filter's width needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    bytes: [u8; WIDE_HEADER_BYTES],
    len: usize,
}

impl Header {
    /// The header's bytes: [`HEADER_BYTES`] for an 8-bit filter, [`WIDE_HEADER_BYTES`] for a
    /// wider one.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// The fields every encoding carries before the sub-filters.
struct Fields {
    items: u64,
    first_buckets: u64,
    deletes: u64,
    sub_filters: u64,
    bucket_size: u64,
    max_iterations: u64,
    expansion: u64,
    width: Width,
}

impl Fields {
    /// Checks the fields and names the bucket count of every sub-filter.
    fn sub_filter_buckets(&self, max_bytes: usize) -> Result<Vec<u64>, DecodeError> {
        let malformed = DecodeError::Malformed;
        if self.sub_filters == 0 || self.sub_filters > MAX_SUB_FILTERS as u64 {
            return Err(malformed("no sub-filter, or too many"));
        }
        if !(1..=u64::from(MAX_BUCKET_SIZE)).contains(&self.bucket_size) {
            return Err(malformed("bucket size out of range"));
        }
        if !(1..=u64::from(u16::MAX)).contains(&self.max_iterations) {
            return Err(malformed("iterations out of range"));
        }
        // RedisBloom rounds the expansion up to a power of two; a chain of several sub-filters
        // with expansion 0 cannot have grown, and its later ones would have no buckets.
        let grows = self.expansion.is_power_of_two() && self.expansion <= u64::from(super::MAX_EXPANSION);
        if !(grows || self.expansion == 0 && self.sub_filters == 1) {
            return Err(malformed("expansion out of range"));
        }
        if !self.first_buckets.is_power_of_two() || self.first_buckets >= MAX_BUCKETS {
            return Err(malformed("bucket count not a power of two"));
        }
        let bucket_bytes = self.bucket_bytes();
        let mut buckets = Vec::new();
        let mut total_bytes = 0u64;
        let mut current = self.first_buckets;
        for index in 0..self.sub_filters {
            if index > 0 {
                current = current.checked_mul(self.expansion).ok_or(DecodeError::TooLarge)?;
            }
            if current >= MAX_BUCKETS {
                return Err(DecodeError::TooLarge);
            }
            let bytes = current.checked_mul(bucket_bytes).ok_or(DecodeError::TooLarge)?;
            total_bytes = total_bytes.checked_add(bytes).ok_or(DecodeError::TooLarge)?;
            if total_bytes > max_bytes as u64 {
                return Err(DecodeError::TooLarge);
            }
            buckets.push(current);
        }
        // INFO answers the counts as signed integers (a count of 2^63 answered
        // -9223372036854775808), and a filter never counts past them.
        if self.items > MAX_COUNT || self.deletes > MAX_COUNT {
            return Err(malformed("more items or deletes than a filter counts"));
        }
        Ok(buckets)
    }

    /// Bytes of a bucket (at most 65535 slots of 4 bytes: no overflow, checked or not).
    fn bucket_bytes(&self) -> u64 {
        self.bucket_size * self.width.bytes() as u64
    }

    fn filter(&self, sub_filters: Vec<SubFilter>) -> CuckooFilter {
        CuckooFilter {
            sub_filters,
            bucket_size: self.bucket_size as u16,
            max_iterations: self.max_iterations as u16,
            expansion: self.expansion as u16,
            width: self.width,
            items: self.items,
            deletes: self.deletes,
        }
    }
}

impl CuckooFilter {
    /// The SCANDUMP header, little-endian: items, buckets of the first sub-filter, deletes
    /// and sub-filters as u64, then bucket size, iterations and expansion as u16; for a wide
    /// filter, then its fingerprint bits as u16.
    pub fn header(&self) -> Header {
        let mut bytes = [0u8; WIDE_HEADER_BYTES];
        let words = [self.items, self.first_buckets(), self.deletes, self.sub_filters.len() as u64];
        for (index, word) in words.iter().enumerate() {
            bytes[index * 8..index * 8 + 8].copy_from_slice(&word.to_le_bytes());
        }
        let halves = [self.bucket_size, self.max_iterations, self.expansion, self.width.bits()];
        for (index, half) in halves.iter().enumerate() {
            bytes[32 + index * 2..34 + index * 2].copy_from_slice(&half.to_le_bytes());
        }
        let len = if self.width.is_redisbloom() { HEADER_BYTES } else { WIDE_HEADER_BYTES };
        Header { bytes, len }
    }

    /// The width a header is of: RedisBloom's 38 bytes, or 40 naming 16 or 32 bits (8-bit
    /// filters have RedisBloom's header only, so that each filter has one form). `None` for
    /// anything else, which RedisBloom calls an invalid header too.
    pub fn header_width(header: &[u8]) -> Option<Width> {
        match (header.len(), header) {
            (HEADER_BYTES, _) => Some(Width::Eight),
            (WIDE_HEADER_BYTES, [.., low, high]) => {
                Width::from_bits(u64::from(u16::from_le_bytes([*low, *high])))
                    .filter(|width| !width.is_redisbloom())
            }
            _ => None,
        }
    }

    /// An empty filter of the header's shape, whose slots the chunks then fill.
    pub fn from_header(header: &[u8], max_bytes: usize) -> Result<CuckooFilter, DecodeError> {
        let width = CuckooFilter::header_width(header)
            .ok_or(DecodeError::Malformed("a header is 38 bytes, or 40 naming 16- or 32-bit fingerprints"))?;
        let word = |index: usize| {
            u64::from_le_bytes(header[index * 8..index * 8 + 8].try_into().unwrap_or_default())
        };
        let half = |offset: usize| u64::from(u16::from_le_bytes([header[offset], header[offset + 1]]));
        let fields = Fields {
            items: word(0),
            first_buckets: word(1),
            deletes: word(2),
            sub_filters: word(3),
            bucket_size: half(32),
            max_iterations: half(34),
            expansion: half(36),
            width,
        };
        let buckets = fields.sub_filter_buckets(max_bytes)?;
        let bucket_bytes = fields.bucket_bytes() as usize;
        let mut sub_filters = Vec::new();
        sub_filters.try_reserve_exact(buckets.len()).map_err(|_| DecodeError::OutOfMemory)?;
        for buckets in buckets {
            sub_filters
                .push(SubFilter::try_new(buckets, bucket_bytes).map_err(|_| DecodeError::OutOfMemory)?);
        }
        Ok(fields.filter(sub_filters))
    }

    /// The SCANDUMP chunk at `iterator` (at least 1: byte `iterator - 1` of the sub-filters'
    /// slots laid end to end) and the iterator after it; `None` past the end. A sub-filter of
    /// at most [`CHUNK_BYTES`] is one chunk, whichever of its bytes the iterator names, as in
    /// RedisBloom.
    pub fn chunk(&self, iterator: u64) -> Option<(u64, &[u8])> {
        let mut offset = iterator.checked_sub(1)?;
        for sub_filter in &self.sub_filters {
            let bytes = sub_filter.bytes();
            if offset < bytes.len() as u64 {
                let chunk = if bytes.len() <= CHUNK_BYTES {
                    bytes
                } else {
                    let start = offset as usize;
                    &bytes[start..(start + CHUNK_BYTES).min(bytes.len())]
                };
                return Some((iterator + chunk.len() as u64, chunk));
            }
            offset -= bytes.len() as u64;
        }
        None
    }

    /// Writes a chunk that SCANDUMP answered with `iterator`: its bytes end just before
    /// byte `iterator - 1` and must lie inside one sub-filter. False, and nothing written,
    /// otherwise.
    pub fn load_chunk(&mut self, iterator: u64, data: &[u8]) -> bool {
        let Some(mut start) = iterator.checked_sub(1 + data.len() as u64) else { return false };
        if data.is_empty() {
            return false;
        }
        for sub_filter in &mut self.sub_filters {
            let len = sub_filter.slots.len() as u64;
            if start < len {
                if start + data.len() as u64 > len {
                    return false;
                }
                let start = start as usize;
                sub_filter.slots.as_mut_slice()[start..start + data.len()].copy_from_slice(data);
                return true;
            }
            start -= len;
        }
        false
    }

    /// Writes the RDB record through `unsigned` and `bytes`: RedisBloom's version-4 layout,
    /// after the fingerprint bits for a wide filter (see [`WIDE_VERSION`]).
    pub fn save_rdb(&self, mut unsigned: impl FnMut(u64), mut bytes: impl FnMut(&[u8])) {
        if !self.width.is_redisbloom() {
            unsigned(u64::from(self.width.bits()));
        }
        let header = [
            self.sub_filters.len() as u64,
            self.first_buckets(),
            self.items,
            self.deletes,
            u64::from(self.bucket_size),
            u64::from(self.max_iterations),
            u64::from(self.expansion),
        ];
        header.into_iter().for_each(&mut unsigned);
        for sub_filter in &self.sub_filters {
            unsigned(sub_filter.buckets);
            bytes(sub_filter.bytes());
        }
    }

    /// Reads an RDB record of RedisBloom's `version` (0 to 4; ours writes version 4's
    /// layout). Each sub-filter's slots are kept as read.
    pub fn load_rdb(
        version: i32,
        source: &mut impl RdbSource,
        max_bytes: usize,
    ) -> Result<CuckooFilter, DecodeError> {
        if !(0..=NEWEST_REDISBLOOM_VERSION).contains(&version) {
            return Err(DecodeError::Malformed("unknown cuckoo filter encoding version"));
        }
        CuckooFilter::load_fields(version, Width::Eight, source, max_bytes)
    }

    /// Reads the RDB record of a wide filter, of encoding `version`.
    pub fn load_wide_rdb(
        version: i32,
        source: &mut impl RdbSource,
        max_bytes: usize,
    ) -> Result<CuckooFilter, DecodeError> {
        if version != WIDE_VERSION {
            return Err(DecodeError::Malformed("unknown wide cuckoo filter encoding version"));
        }
        let width = Width::from_bits(source.unsigned()?)
            .filter(|width| !width.is_redisbloom())
            .ok_or(DecodeError::Malformed("no such fingerprint width"))?;
        CuckooFilter::load_fields(NEWEST_REDISBLOOM_VERSION, width, source, max_bytes)
    }

    /// RedisBloom's fields of `version`, for a filter of `width`.
    fn load_fields(
        version: i32,
        width: Width,
        source: &mut impl RdbSource,
        max_bytes: usize,
    ) -> Result<CuckooFilter, DecodeError> {
        let sub_filters = source.unsigned()?;
        let first_buckets = source.unsigned()?;
        let items = source.unsigned()?;
        let current = version >= NEWEST_REDISBLOOM_VERSION;
        let mut fields = Fields {
            items,
            first_buckets,
            deletes: 0,
            sub_filters,
            bucket_size: u64::from(OLD_BUCKET_SIZE),
            max_iterations: u64::from(OLD_MAX_ITERATIONS),
            expansion: u64::from(OLD_EXPANSION),
            width,
        };
        if current {
            fields.deletes = source.unsigned()?;
            fields.bucket_size = source.unsigned()?;
            fields.max_iterations = source.unsigned()?;
            fields.expansion = source.unsigned()?;
        }
        // Before version 4 every sub-filter had the first one's size: expansion 1 says so.
        let expected = fields.sub_filter_buckets(max_bytes)?;
        let mut loaded = Vec::new();
        loaded.try_reserve_exact(expected.len()).map_err(|_| DecodeError::OutOfMemory)?;
        for buckets in expected {
            if current && source.unsigned()? != buckets {
                return Err(DecodeError::Malformed("a sub-filter's bucket count does not follow the chain"));
            }
            let slots: ByteArray = source.bytes()?;
            if slots.len() as u64 != buckets * fields.bucket_bytes() {
                return Err(DecodeError::Malformed("a sub-filter's slots are of another size"));
            }
            loaded.push(SubFilter { buckets, slots });
        }
        Ok(fields.filter(loaded))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{CuckooParams, Inserted, Limits, DEFAULT_MAX_SUB_FILTERS};
    use super::*;

    const BUDGET: usize = 1 << 30;
    const LIMITS: Limits = Limits { max_bytes: BUDGET, max_sub_filters: DEFAULT_MAX_SUB_FILTERS };

    fn grown() -> CuckooFilter {
        grown_of(Width::Eight)
    }

    fn grown_of(width: Width) -> CuckooFilter {
        let mut filter = CuckooFilter::try_new(
            CuckooParams { capacity: 8, bucket_size: 2, max_iterations: 7, expansion: 2, width },
            BUDGET,
        )
        .unwrap();
        for index in 0..30 {
            assert_eq!(
                filter.insert(filter.hash(format!("item{index}").as_bytes()), LIMITS),
                Inserted::Added
            );
        }
        filter
    }

    #[test]
    fn the_header_is_redisbloom_s() {
        let filter = grown();
        let header = filter.header();
        let header = header.as_bytes();
        assert_eq!(header.len(), HEADER_BYTES);
        let words: Vec<u64> =
            (0..4).map(|i| u64::from_le_bytes(header[i * 8..i * 8 + 8].try_into().unwrap())).collect();
        assert_eq!(words, [30, 4, 0, filter.sub_filters().len() as u64]);
        assert_eq!(&header[32..], &[2, 0, 7, 0, 2, 0]);
    }

    #[test]
    fn scandump_and_loadchunk_rebuild_the_filter() {
        for (width, header_bytes) in [
            (Width::Eight, HEADER_BYTES),
            (Width::Sixteen, WIDE_HEADER_BYTES),
            (Width::ThirtyTwo, WIDE_HEADER_BYTES),
        ] {
            let filter = grown_of(width);
            assert_eq!(filter.header().as_bytes().len(), header_bytes);
            let mut copy = CuckooFilter::from_header(filter.header().as_bytes(), BUDGET).unwrap();
            let mut iterator = 1;
            let mut offsets = Vec::new();
            while let Some((next, chunk)) = filter.chunk(iterator) {
                offsets.push((next, chunk.len()));
                assert!(copy.load_chunk(next, chunk));
                iterator = next;
            }
            let bytes = width.bytes() as u64;
            let expected =
                [(1 + 8 * bytes, 8 * bytes), (1 + 24 * bytes, 16 * bytes), (1 + 56 * bytes, 32 * bytes)];
            let offsets: Vec<(u64, u64)> = offsets.iter().map(|&(next, len)| (next, len as u64)).collect();
            assert_eq!(offsets, expected, "{width:?}");
            assert_eq!(copy.header(), filter.header());
            for (mine, theirs) in copy.sub_filters().iter().zip(filter.sub_filters()) {
                assert_eq!(mine.bytes(), theirs.bytes());
            }
            for index in 0..30 {
                assert!(copy.contains(copy.hash(format!("item{index}").as_bytes())), "{width:?} item{index}");
            }
        }
        let filter = grown();
        let mut copy = CuckooFilter::from_header(filter.header().as_bytes(), BUDGET).unwrap();
        assert_eq!(filter.chunk(5).map(|(next, chunk)| (next, chunk.len())), Some((13, 8)));
        assert!(!copy.load_chunk(12, &[1; 8]), "straddles two sub-filters");
        assert!(!copy.load_chunk(1000, &[1; 8]), "past the end");
    }

    /// An RDB record as values, for `load_rdb`.
    struct Record(Vec<Result<u64, Vec<u8>>>);

    impl RdbSource for Record {
        fn unsigned(&mut self) -> Result<u64, DecodeError> {
            match self.0.remove(0) {
                Ok(value) => Ok(value),
                Err(_) => Err(DecodeError::Malformed("a string where a number was")),
            }
        }

        fn signed(&mut self) -> Result<i64, DecodeError> {
            Err(DecodeError::Malformed("no signed here"))
        }

        fn double(&mut self) -> Result<f64, DecodeError> {
            Err(DecodeError::Malformed("no double here"))
        }

        fn bytes(&mut self) -> Result<ByteArray, DecodeError> {
            match self.0.remove(0) {
                Err(bytes) => ByteArray::try_copy_of(&bytes).map_err(|_| DecodeError::OutOfMemory),
                Ok(_) => Err(DecodeError::Malformed("a number where a string was")),
            }
        }
    }

    fn record_of(filter: &CuckooFilter) -> Vec<Result<u64, Vec<u8>>> {
        let values = std::cell::RefCell::new(Vec::new());
        filter.save_rdb(
            |value| values.borrow_mut().push(Ok(value)),
            |bytes| values.borrow_mut().push(Err(bytes.to_vec())),
        );
        values.into_inner()
    }

    #[test]
    fn rdb_records_of_every_version_load_and_a_record_without_sub_filters_does_not() {
        let filter = grown();
        let loaded = CuckooFilter::load_rdb(4, &mut Record(record_of(&filter)), BUDGET).unwrap();
        assert_eq!(loaded.header(), filter.header());

        // Version 2: filters, buckets, items, then each sub-filter's slots, all of one size.
        let old = |sub_filters: u64| {
            let mut values = vec![Ok(sub_filters), Ok(4), Ok(3)];
            values.extend((0..sub_filters).map(|_| Err(vec![0u8; 8])));
            CuckooFilter::load_rdb(2, &mut Record(values), BUDGET)
        };
        let two = old(2).unwrap();
        assert_eq!((two.sub_filters().len(), two.bucket_size(), two.expansion()), (2, 2, 1));
        assert!(old(0).is_err());
    }

    #[test]
    fn a_wide_record_is_its_width_then_redisbloom_s_fields() {
        for width in [Width::Sixteen, Width::ThirtyTwo] {
            let filter = grown_of(width);
            let record = record_of(&filter);
            assert_eq!(record[0], Ok(u64::from(width.bits())));
            assert_eq!(record[1..8], record_of(&grown())[..7], "{width:?}: the same fields as 8 bits");
            let loaded =
                CuckooFilter::load_wide_rdb(WIDE_VERSION, &mut Record(record.clone()), BUDGET).unwrap();
            assert_eq!(loaded.header(), filter.header());
            assert!((0..30).all(|n| loaded.contains(loaded.hash(format!("item{n}").as_bytes()))));
            assert!(
                CuckooFilter::load_wide_rdb(WIDE_VERSION + 1, &mut Record(record.clone()), BUDGET).is_err()
            );
            // Read as RedisBloom's, the width is taken for the sub-filter count and the slots
            // do not match: refused, not misread.
            assert!(CuckooFilter::load_rdb(4, &mut Record(record), BUDGET).is_err());
        }
        let mut eight_bits = record_of(&grown());
        eight_bits.insert(0, Ok(8));
        assert!(CuckooFilter::load_wide_rdb(WIDE_VERSION, &mut Record(eight_bits), BUDGET).is_err());
    }

    /// A header's counts go no further than INFO's signed integers (a count of 2^63 answered
    /// `-9223372036854775808`); a filter loaded at the limit counts no further, and its own
    /// record loads.
    #[test]
    fn counts_stop_where_info_can_answer_them() {
        let filter = grown();
        let with = |items: u64, deletes: u64| {
            let mut header = filter.header().as_bytes().to_vec();
            header[..8].copy_from_slice(&items.to_le_bytes());
            header[16..24].copy_from_slice(&deletes.to_le_bytes());
            CuckooFilter::from_header(&header, BUDGET)
        };
        assert!(with(MAX_COUNT + 1, 0).is_err());
        assert!(with(u64::MAX, 0).is_err());
        assert!(with(0, MAX_COUNT + 1).is_err());
        let mut loaded = with(MAX_COUNT, MAX_COUNT).unwrap();
        let (kept, gone) = (loaded.hash(b"kept"), loaded.hash(b"gone"));
        assert_eq!(loaded.insert(kept, LIMITS), Inserted::Added);
        assert_eq!(loaded.insert(gone, LIMITS), Inserted::Added);
        assert_eq!(loaded.items(), MAX_COUNT);
        assert!(loaded.delete(gone));
        assert_eq!(loaded.items(), MAX_COUNT - 1);
        assert!(loaded.deletes() <= MAX_COUNT);
        let record = record_of(&loaded);
        assert!(CuckooFilter::load_rdb(NEWEST_REDISBLOOM_VERSION, &mut Record(record), BUDGET).is_ok());
    }

    #[test]
    fn headers_that_describe_no_servable_filter_are_refused() {
        let good = grown().header().as_bytes().to_vec();
        let with = |offset: usize, bytes: &[u8]| {
            let mut header = good.clone();
            header[offset..offset + bytes.len()].copy_from_slice(bytes);
            CuckooFilter::from_header(&header, BUDGET).err()
        };
        assert!(with(24, &0u64.to_le_bytes()).is_some(), "no sub-filter");
        assert!(with(8, &3u64.to_le_bytes()).is_some(), "buckets not a power of two");
        assert!(with(8, &(1u64 << 40).to_le_bytes()).is_some(), "beyond the budget");
        assert!(with(36, &0u16.to_le_bytes()).is_some(), "expansion 0 with three sub-filters");
        assert!(with(36, &3u16.to_le_bytes()).is_some(), "expansion not a power of two");
        assert!(with(32, &0u16.to_le_bytes()).is_some(), "bucket size 0");
        assert!(with(34, &0u16.to_le_bytes()).is_some(), "no iterations");
        assert!(CuckooFilter::from_header(&good[..37], BUDGET).is_err());

        let wide = grown_of(Width::Sixteen).header().as_bytes().to_vec();
        let decoded_width = |bits: u16| {
            let mut header = wide.clone();
            header[38..].copy_from_slice(&bits.to_le_bytes());
            CuckooFilter::from_header(&header, BUDGET).map(|filter| filter.width())
        };
        assert_eq!(decoded_width(16), Ok(Width::Sixteen));
        assert_eq!(decoded_width(32), Ok(Width::ThirtyTwo));
        for refused in [0, 8, 24, 64] {
            assert!(decoded_width(refused).is_err(), "{refused} bits");
        }
        assert!(CuckooFilter::from_header(&wide[..39], BUDGET).is_err());
        // 2^55 buckets of 255 32-bit slots: bytes beyond u64, refused rather than wrapped.
        let mut huge = grown_of(Width::ThirtyTwo).header().as_bytes().to_vec();
        huge[8..16].copy_from_slice(&(1u64 << 55).to_le_bytes());
        huge[24..32].copy_from_slice(&1u64.to_le_bytes());
        huge[32..34].copy_from_slice(&255u16.to_le_bytes());
        assert_eq!(CuckooFilter::from_header(&huge, usize::MAX).err(), Some(DecodeError::TooLarge));
    }
}
