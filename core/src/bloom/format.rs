//! A filter in either format: this module's cache-line-blocked one, or RedisBloom's, kept
//! for filters taken over from RedisBloom or meant to go back to it. Commands, type
//! callbacks and encodings see only [`Filter`]; the format is chosen once per call, and the
//! per-item work runs in code specialised for it.
//!
//! Both formats share the dump protocol: a header, then the bit arrays of all links,
//! concatenated in link order, as one byte space cut into chunks of at most
//! [`CHUNK_BYTES`](encoding::CHUNK_BYTES) that never cross a link boundary (RedisBloom 2.8
//! cuts its dumps the same way). Only the header differs.

use super::chain::{BloomFilter, FilterError};
use super::encoding::{self, ChunkError};
use super::hash::ItemHash;
use super::redisbloom;
use super::redisbloom::link::Link;
use super::sub_filter::SubFilter;
use crate::bytes::ByteArray;
use crate::decode::DecodeError;

/// Which layout and hashing a filter has: this module's, or RedisBloom's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One cache line per item (see `params`): the default.
    Redbloom,
    /// RedisBloom's classic layout and hashing, byte for byte.
    RedisBloom,
}

impl Format {
    /// The word that names it: in `FORMAT`, which BF.RESERVE and BF.INSERT take (an extension
    /// of this module), and in the `bf.format` config.
    pub fn name(self) -> &'static str {
        match self {
            Format::Redbloom => "REDBLOOM",
            Format::RedisBloom => "REDISBLOOM",
        }
    }

    /// The format a word names, in any case.
    pub fn named(word: &[u8]) -> Option<Format> {
        [Format::Redbloom, Format::RedisBloom]
            .into_iter()
            .find(|format| word.eq_ignore_ascii_case(format.name().as_bytes()))
    }
}

/// A Bloom filter in either [`Format`].
pub enum Filter {
    /// This module's cache-line-blocked chain.
    Redbloom(BloomFilter),
    /// RedisBloom's chain of classic links, kept byte for byte.
    RedisBloom(redisbloom::Chain),
}

/// What both chains offer the batch commands.
trait Scalable {
    type Hash;
    fn hash(&self, item: &[u8]) -> Self::Hash;
    fn prefetch(&self, hash: &Self::Hash);
    fn contains_hash(&self, hash: &Self::Hash) -> bool;
    fn insert_hash(
        &mut self,
        hash: &Self::Hash,
        max_bytes: impl FnOnce() -> usize,
    ) -> Result<bool, FilterError>;
}

impl Scalable for BloomFilter {
    type Hash = ItemHash;
    #[inline]
    fn hash(&self, item: &[u8]) -> ItemHash {
        ItemHash::of(item)
    }
    #[inline]
    fn prefetch(&self, hash: &ItemHash) {
        BloomFilter::prefetch(self, hash);
    }
    #[inline]
    fn contains_hash(&self, hash: &ItemHash) -> bool {
        BloomFilter::contains_hash(self, hash)
    }
    #[inline]
    fn insert_hash(
        &mut self,
        hash: &ItemHash,
        max_bytes: impl FnOnce() -> usize,
    ) -> Result<bool, FilterError> {
        BloomFilter::insert_hash(self, hash, max_bytes)
    }
}

impl Scalable for redisbloom::Chain {
    type Hash = crate::murmur::HashPair;
    #[inline]
    fn hash(&self, item: &[u8]) -> Self::Hash {
        redisbloom::Chain::hash(self, item)
    }
    #[inline]
    fn prefetch(&self, hash: &Self::Hash) {
        redisbloom::Chain::prefetch(self, hash);
    }
    #[inline]
    fn contains_hash(&self, hash: &Self::Hash) -> bool {
        redisbloom::Chain::contains_hash(self, hash)
    }
    #[inline]
    fn insert_hash(
        &mut self,
        hash: &Self::Hash,
        max_bytes: impl FnOnce() -> usize,
    ) -> Result<bool, FilterError> {
        redisbloom::Chain::insert_hash(self, hash, max_bytes)
    }
}

/// Hashes the whole batch and asks for its cache lines first, so that the memory loads of a
/// batch overlap instead of queueing one after another.
fn hash_batch<'a, F: Scalable>(filter: &F, items: impl Iterator<Item = &'a [u8]>) -> Vec<F::Hash> {
    let hashes: Vec<F::Hash> = items.map(|item| filter.hash(item)).collect();
    for hash in &hashes {
        filter.prefetch(hash);
    }
    hashes
}

fn contains_each<'a, F: Scalable>(
    filter: &F,
    items: impl Iterator<Item = &'a [u8]>,
    mut answer: impl FnMut(bool),
) {
    for hash in &hash_batch(filter, items) {
        answer(filter.contains_hash(hash));
    }
}

fn insert_each<'a, F: Scalable>(
    filter: &mut F,
    items: impl Iterator<Item = &'a [u8]>,
    mut max_bytes: impl FnMut() -> usize,
    mut answer: impl FnMut(Result<bool, FilterError>),
) {
    for hash in &hash_batch(filter, items) {
        let result = filter.insert_hash(hash, &mut max_bytes);
        let stop = result.is_err();
        answer(result);
        if stop {
            break;
        }
    }
}

/// Calls `$body` with `$chain` bound to whichever chain `$filter` holds.
macro_rules! either {
    ($filter:expr, $chain:ident => $body:expr) => {
        match $filter {
            Filter::Redbloom($chain) => $body,
            Filter::RedisBloom($chain) => $body,
        }
    };
}

impl Filter {
    /// A new filter; see `BloomFilter::try_new` and `redisbloom::Chain::try_new`.
    pub fn try_new(
        format: Format,
        capacity: u64,
        error_rate: f64,
        expansion: u32,
        max_bytes: usize,
    ) -> Result<Filter, FilterError> {
        Ok(match format {
            Format::Redbloom => {
                Filter::Redbloom(BloomFilter::try_new(capacity, error_rate, expansion, max_bytes)?)
            }
            Format::RedisBloom => {
                Filter::RedisBloom(redisbloom::Chain::try_new(capacity, error_rate, expansion, max_bytes)?)
            }
        })
    }

    /// Records the growth a non-scaling filter was given beside NONSCALING, as RedisBloom's
    /// header does ([`redisbloom::Chain::record_growth`]); this module's format records none.
    pub fn record_growth(&mut self, growth: u32) {
        if let Filter::RedisBloom(chain) = self {
            chain.record_growth(growth);
        }
    }

    /// Which format the filter is in.
    pub fn format(&self) -> Format {
        match self {
            Filter::Redbloom(_) => Format::Redbloom,
            Filter::RedisBloom(_) => Format::RedisBloom,
        }
    }

    /// A deep copy; only [`FilterError::OutOfMemory`] can refuse it.
    pub fn try_clone(&self) -> Result<Filter, FilterError> {
        Ok(match self {
            Filter::Redbloom(chain) => Filter::Redbloom(chain.try_clone()?),
            Filter::RedisBloom(chain) => Filter::RedisBloom(chain.try_clone()?),
        })
    }

    /// Whether the item (probably) was added: `false` is certain.
    pub fn contains(&self, item: &[u8]) -> bool {
        either!(self, chain => chain.contains_hash(&chain.hash(item)))
    }

    /// Answers for each item, in order.
    pub fn contains_each<'a>(&self, items: impl Iterator<Item = &'a [u8]>, answer: impl FnMut(bool)) {
        either!(self, chain => contains_each(chain, items, answer));
    }

    /// Adds an item: `Ok(true)` when it was not (probably) present, `Ok(false)` when it
    /// already tested present and nothing changed. The budget is asked for only on growth.
    pub fn insert(&mut self, item: &[u8], max_bytes: impl FnOnce() -> usize) -> Result<bool, FilterError> {
        either!(self, chain => chain.insert_hash(&chain.hash(item), max_bytes))
    }

    /// Adds each item in order, answering for each, and stops after the first error.
    pub fn insert_each<'a>(
        &mut self,
        items: impl Iterator<Item = &'a [u8]>,
        max_bytes: impl FnMut() -> usize,
        answer: impl FnMut(Result<bool, FilterError>),
    ) {
        either!(self, chain => insert_each(chain, items, max_bytes, answer));
    }

    /// Items added (adds that answered 1).
    pub fn items(&self) -> u64 {
        either!(self, chain => chain.items())
    }

    /// Items the links were sized for, together.
    pub fn capacity(&self) -> u64 {
        either!(self, chain => chain.capacity())
    }

    /// Number of links (sub-filters) in the chain.
    pub fn link_count(&self) -> usize {
        either!(self, chain => chain.links().len())
    }

    /// `None` for a non-scaling filter.
    pub fn expansion(&self) -> Option<u32> {
        either!(self, chain => chain.expansion())
    }

    /// Bytes of bit arrays alone.
    pub fn bits_bytes(&self) -> usize {
        either!(self, chain => chain.bits_bytes())
    }

    /// Everything the filter holds allocated: what MEMORY USAGE reports.
    pub fn memory_bytes(&self) -> usize {
        either!(self, chain => chain.memory_bytes())
    }

    /// The `Size` of BF.INFO: the memory held, or for RedisBloom's format the figure
    /// RedisBloom itself reports for it.
    pub fn reported_size(&self) -> u64 {
        match self {
            Filter::Redbloom(chain) => chain.memory_bytes() as u64,
            Filter::RedisBloom(chain) => chain.reported_size(),
        }
    }

    /// The false-positive rate the filter has now, estimated from how full its bits are:
    /// what tells when a filter that took more items than planned should be rebuilt.
    /// A probe is a false positive when any link says yes; a link says yes when all the bits
    /// it tests are set, which for bits set with probability `f` is `f^k`. Each link's fill is
    /// measured on at most [`FILL_SAMPLE_LINES`] cache lines spread over it, so the estimate
    /// costs about a millisecond of server time (1.3 ms measured on a 1 GB filter) whatever
    /// the filter's size.
    pub fn estimated_error_rate(&self) -> f64 {
        let miss_everywhere: f64 = match self {
            Filter::Redbloom(chain) => chain
                .links()
                .iter()
                .map(|link| {
                    let layout = link.layout();
                    // Blocks fill unevenly: average the per-block rate, not the fill.
                    let per_block = sampled_lines(link.bytes())
                        .map(|line| fill(set_bits(line), line.len()).powi(layout.hashes as i32))
                        .fold((0.0, 0usize), |(sum, count), rate| (sum + rate, count + 1));
                    let per_block = per_block.0 / per_block.1.max(1) as f64;
                    1.0 - per_block.powi(layout.blocks_per_item as i32)
                })
                .product(),
            Filter::RedisBloom(chain) => chain
                .links()
                .iter()
                .map(|link| {
                    // Probes land anywhere in a classic filter: one fill for the whole link.
                    let (set, bytes) = sampled_lines(link.bytes())
                        .fold((0, 0), |(set, bytes), line| (set + set_bits(line), bytes + line.len()));
                    1.0 - fill(set, bytes).powi(link.fields().hashes as i32)
                })
                .product(),
        };
        1.0 - miss_everywhere
    }

    /// The first piece of a dump: the header in the filter's own format.
    pub fn encode_header(&self) -> Vec<u8> {
        match self {
            Filter::Redbloom(chain) => encoding::encode_header(chain),
            Filter::RedisBloom(chain) => redisbloom::encoding::encode_header(chain),
        }
    }

    /// Builds the filter a header of either format describes, bits all clear. A header that
    /// starts with this module's magic is read as one of ours; should that fail, as
    /// RedisBloom's, whose first bytes (an item count) could in principle look the same.
    pub fn decode_header(header: &[u8], max_bytes: usize) -> Result<Filter, DecodeError> {
        Filter::decode_header_with(header, max_bytes, encoding::clear_bits)
    }

    /// As [`decode_header`](Self::decode_header), each link's bits, in order, from `bits`
    /// (given the length the header says), once the header has been checked and held to the
    /// budget: an RDB's strings become the filter's bits without a copy.
    pub fn decode_header_with(
        header: &[u8],
        max_bytes: usize,
        bits: impl FnMut(u64) -> Result<ByteArray, DecodeError>,
    ) -> Result<Filter, DecodeError> {
        if header.starts_with(encoding::MAGIC) {
            return match encoding::parse_header(header) {
                Ok(parsed) => parsed.build(max_bytes, bits).map(Filter::Redbloom),
                Err(error) => redisbloom::encoding::decode_header_with(header, max_bytes, bits)
                    .map(Filter::RedisBloom)
                    .map_err(|_| error),
            };
        }
        redisbloom::encoding::decode_header_with(header, max_bytes, bits).map(Filter::RedisBloom)
    }

    /// Each link's bits, in link order.
    pub fn link_bytes(&self) -> Box<dyn Iterator<Item = &[u8]> + '_> {
        match self {
            Filter::Redbloom(chain) => Box::new(chain.links().iter().map(SubFilter::bytes)),
            Filter::RedisBloom(chain) => Box::new(chain.links().iter().map(Link::bytes)),
        }
    }

    fn link_bytes_mut(&mut self) -> Box<dyn Iterator<Item = &mut [u8]> + '_> {
        match self {
            Filter::Redbloom(chain) => Box::new(chain.links_mut().iter_mut().map(SubFilter::bytes_mut)),
            Filter::RedisBloom(chain) => Box::new(chain.links_mut().iter_mut().map(Link::bytes_mut)),
        }
    }

    /// The chunks in order, each with the offset just past its end.
    pub fn chunks(&self) -> impl Iterator<Item = (u64, &[u8])> {
        let mut end = 0u64;
        self.link_bytes().flat_map(|link| link.chunks(encoding::CHUNK_BYTES)).map(move |chunk| {
            end += chunk.len() as u64;
            (end, chunk)
        })
    }

    /// The chunks as writable slices, in the order [`chunks`](Self::chunks) yields them.
    pub fn chunks_mut(&mut self) -> impl Iterator<Item = &mut [u8]> {
        self.link_bytes_mut().flat_map(|link| link.chunks_mut(encoding::CHUNK_BYTES))
    }

    /// The chunk that starts at `offset` in the byte space, or `None` past the end.
    pub fn chunk_at(&self, offset: u64) -> Option<&[u8]> {
        let (link, start) = locate(self.link_bytes(), offset)?;
        let end = link.len().min(start + encoding::CHUNK_BYTES);
        Some(&link[start..end])
    }

    /// Writes a chunk received from LOADCHUNK at `offset`.
    pub fn write_chunk(&mut self, offset: u64, data: &[u8]) -> Result<(), ChunkError> {
        let (link, start) = locate(self.link_bytes_mut(), offset).ok_or(ChunkError::NoLink)?;
        let target = link.get_mut(start..start.saturating_add(data.len())).ok_or(ChunkError::TooBig)?;
        target.copy_from_slice(data);
        Ok(())
    }
}

/// The most cache lines of one link read to measure its fill.
pub const FILL_SAMPLE_LINES: usize = 4096;

/// Cache lines spread evenly over `bytes`, all of them for a small link.
fn sampled_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let lines = bytes.len().div_ceil(64);
    let step = lines.div_ceil(FILL_SAMPLE_LINES).max(1);
    bytes.chunks(64).step_by(step)
}

fn set_bits(bytes: &[u8]) -> u64 {
    bytes.iter().map(|byte| u64::from(byte.count_ones())).sum()
}

/// The share of set bits among `bytes` bytes.
fn fill(set_bits: u64, bytes: usize) -> f64 {
    set_bits as f64 / (bytes as f64 * 8.0).max(1.0)
}

/// The link holding byte `offset` of the byte space, and the offset inside it; windowed
/// filters chunk their generations' links the same way.
pub(super) fn locate<L: AsRef<[u8]>>(links: impl Iterator<Item = L>, offset: u64) -> Option<(L, usize)> {
    let mut start = 0u64;
    for link in links {
        let len = link.as_ref().len() as u64;
        if offset < start + len {
            return Some((link, (offset - start) as usize));
        }
        start += len;
    }
    None
}
