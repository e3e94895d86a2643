//! The binary form of a filter, shared by RDB, AOF rewrite and SCANDUMP/LOADCHUNK.
//!
//! A filter is a header followed by its bit arrays. The header describes the chain; the bits
//! of all links, concatenated in link order, form one byte space that is cut into chunks of
//! at most [`CHUNK_BYTES`], never crossing a link boundary (see `format::Filter::chunks`).
//!
//! Header, all integers little-endian:
//! ```text
//! magic "RBLF" | version u8 = 1 | flags u8 = 0 | expansion u32 | link count u32
//! then per link: capacity u64 | error rate f64 | hashes u32 | blocks u64 | items u64
//!                | blocks per item u32
//! ```
//! Decoding trusts nothing: every field is range-checked, the links must form a chain this
//! module could have built, and every link's layout must fit its capacity and error rate
//! (within the bounds of `Layout::is_plausible_for`). Anything else is refused with an error
//! before memory is allocated, and so is a filter beyond the caller's memory budget.

use super::bits::BLOCK_BYTES;
use super::chain::{BloomFilter, FilterError, MAX_LINKS};
use super::params::{Layout, MAX_EXPANSION, MAX_USEFUL_ERROR_RATE, TIGHTENING_RATIO};
use super::sub_filter::SubFilter;
use crate::bytes::ByteArray;
use crate::decode::{DecodeError, Reader};

/// The first bytes of a header in this format. RedisBloom's headers start with an item count
/// instead, which could (rarely) look the same: see `Filter::decode_header`.
pub const MAGIC: &[u8; 4] = b"RBLF";
const VERSION: u8 = 1;
const FIXED_HEADER_BYTES: usize = 4 + 1 + 1 + 4 + 4;
const LINK_HEADER_BYTES: usize = 8 + 8 + 4 + 8 + 8 + 4;

/// The largest piece of bit array one SCANDUMP reply, AOF command or RDB string carries.
pub const CHUNK_BYTES: usize = 16 << 20;

impl From<FilterError> for DecodeError {
    fn from(error: FilterError) -> DecodeError {
        match error {
            FilterError::OutOfMemory => DecodeError::OutOfMemory,
            FilterError::TooLarge | FilterError::Full => DecodeError::TooLarge,
        }
    }
}

/// Where a chunk does not fit, in LOADCHUNK's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkError {
    /// The offset lies in no link.
    NoLink,
    /// The chunk starts in a link but runs past its end.
    TooBig,
}

/// The header of `filter`, in the layout above; its bits follow as chunks.
pub fn encode_header(filter: &BloomFilter) -> Vec<u8> {
    encode_chain_header(filter.expansion_factor(), filter.links())
}

/// The header of a chain of `links` growing by `expansion` (0: one link that does not grow),
/// as [`encode_header`] writes a filter's.
pub(crate) fn encode_chain_header(expansion: u32, links: &[SubFilter]) -> Vec<u8> {
    let mut header = Vec::with_capacity(FIXED_HEADER_BYTES + links.len() * LINK_HEADER_BYTES);
    header.extend_from_slice(MAGIC);
    header.push(VERSION);
    header.push(0);
    header.extend_from_slice(&expansion.to_le_bytes());
    header.extend_from_slice(&(links.len() as u32).to_le_bytes());
    for link in links {
        let layout = link.layout();
        header.extend_from_slice(&link.capacity().to_le_bytes());
        header.extend_from_slice(&link.error_rate().to_le_bytes());
        header.extend_from_slice(&layout.hashes.to_le_bytes());
        header.extend_from_slice(&layout.blocks.to_le_bytes());
        header.extend_from_slice(&link.items().to_le_bytes());
        header.extend_from_slice(&layout.blocks_per_item.to_le_bytes());
    }
    header
}

/// Zeroed bits of `len` bytes, for a link whose contents come later.
pub fn clear_bits(len: u64) -> Result<ByteArray, DecodeError> {
    ByteArray::try_zeroed(len).map_err(|_| DecodeError::OutOfMemory)
}

/// Builds the filter a header describes, the bits of each link, in order, from `bits`
/// (given the length the header says; [`clear_bits`] for a filter filled by its chunks), once
/// the header has been checked and held to the budget.
pub fn decode_header_with(
    header: &[u8],
    max_bytes: usize,
    bits: impl FnMut(u64) -> Result<ByteArray, DecodeError>,
) -> Result<BloomFilter, DecodeError> {
    parse_header(header)?.build(max_bytes, bits)
}

/// A header read and checked, before any memory is given to its filter.
pub struct ParsedHeader {
    expansion: u32,
    descriptions: Vec<LinkDescription>,
}

/// Reads and checks a header: everything but the memory budget.
pub fn parse_header(header: &[u8]) -> Result<ParsedHeader, DecodeError> {
    parse_header_with(header, std::convert::identity)
}

/// As [`parse_header`], a link sized for `capacity` items holding at most
/// `most_items(capacity)`: a windowed filter's base link may take more than its capacity.
pub(crate) fn parse_header_with(
    header: &[u8],
    most_items: impl Fn(u64) -> u64,
) -> Result<ParsedHeader, DecodeError> {
    let mut reader = Reader(header);
    if reader.take(4)? != MAGIC {
        return Err(DecodeError::Malformed("not a redbloom filter header"));
    }
    if reader.u8()? != VERSION {
        return Err(DecodeError::Malformed("unknown encoding version"));
    }
    if reader.u8()? != 0 {
        return Err(DecodeError::Malformed("unknown flags"));
    }
    let expansion = reader.u32()?;
    let link_count = reader.u32()? as usize;
    if expansion > MAX_EXPANSION {
        return Err(DecodeError::Malformed("expansion out of range"));
    }
    if link_count == 0 || link_count > MAX_LINKS || (expansion == 0 && link_count != 1) {
        return Err(DecodeError::Malformed("impossible number of links"));
    }
    if reader.0.len() != link_count * LINK_HEADER_BYTES {
        return Err(DecodeError::Malformed("header length does not match its link count"));
    }

    let mut descriptions = Vec::with_capacity(link_count);
    for _ in 0..link_count {
        let capacity = reader.u64()?;
        let error_rate = reader.f64()?;
        let (hashes, blocks, items) = (reader.u32()?, reader.u64()?, reader.u64()?);
        let layout = Layout { blocks, hashes, blocks_per_item: reader.u32()? };
        let description = LinkDescription { capacity, error_rate, layout, items };
        descriptions.push(description);
    }
    // The chain first: it is cheap and refuses most garbage before any floating point.
    check_chain(&descriptions, expansion)?;
    for description in &descriptions {
        description.check(most_items(description.capacity))?;
    }
    Ok(ParsedHeader { expansion, descriptions })
}

impl ParsedHeader {
    /// The filter, held to `max_bytes` before any bits are asked of `bits`.
    pub fn build(
        self,
        max_bytes: usize,
        mut bits: impl FnMut(u64) -> Result<ByteArray, DecodeError>,
    ) -> Result<BloomFilter, DecodeError> {
        let ParsedHeader { expansion, descriptions } = self;
        let total_bytes = descriptions
            .iter()
            .try_fold(0usize, |sum, link| {
                usize::try_from(link.layout.blocks).ok()?.checked_mul(BLOCK_BYTES)?.checked_add(sum)
            })
            .ok_or(DecodeError::TooLarge)?;
        if total_bytes > max_bytes {
            return Err(DecodeError::TooLarge);
        }
        let mut links = Vec::new();
        links.try_reserve_exact(descriptions.len()).map_err(|_| DecodeError::OutOfMemory)?;
        for link in &descriptions {
            let data = bits(link.layout.bits() / 8)?;
            let restored = SubFilter::restore(link.capacity, link.error_rate, link.layout, link.items, data);
            links.push(restored.ok_or(DecodeError::Malformed("a link's bits do not match its header"))?);
        }
        Ok(BloomFilter::from_links(links, expansion))
    }
}

struct LinkDescription {
    capacity: u64,
    error_rate: f64,
    layout: Layout,
    items: u64,
}

impl LinkDescription {
    fn check(&self, most_items: u64) -> Result<(), DecodeError> {
        if self.capacity == 0 {
            return Err(DecodeError::Malformed("zero capacity"));
        }
        if !(self.error_rate > 0.0 && self.error_rate <= MAX_USEFUL_ERROR_RATE) {
            return Err(DecodeError::Malformed("error rate out of range"));
        }
        if self.items > most_items {
            return Err(DecodeError::Malformed("more items than capacity"));
        }
        if !self.layout.is_plausible_for(self.capacity, self.error_rate) {
            return Err(DecodeError::Malformed("layout does not match capacity and error rate"));
        }
        Ok(())
    }
}

fn check_chain(links: &[LinkDescription], expansion: u32) -> Result<(), DecodeError> {
    for pair in links.windows(2) {
        let (older, newer) = (&pair[0], &pair[1]);
        let grown = older.capacity.checked_mul(u64::from(expansion));
        if grown != Some(newer.capacity)
            || newer.error_rate != older.error_rate * TIGHTENING_RATIO
            || older.items != older.capacity
        {
            return Err(DecodeError::Malformed("links do not form a chain"));
        }
    }
    Ok(())
}
