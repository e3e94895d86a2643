//! The binary form of a windowed filter, shared by RDB, AOF rewrite and SCANDUMP/LOADCHUNK,
//! in the same shape as a plain filter's: a header, then the bit arrays of every link of
//! every generation (generations oldest first, each one's base link then its overflow's links)
//! as one byte space cut into chunks of at most [`CHUNK_BYTES`] that never cross a link. The
//! dump protocol of plain filters therefore carries it; the header differs, its magic tells
//! them apart, and the iterators carry a mark of the generations held
//! ([`WindowFilter::marked_iterator`]), since a rotation moves the chunks.
//!
//! Header, all integers little-endian:
//! ```text
//! magic "RBLW" | version u8 = 2 | flags u8 (bit 0: the generations pool their rates)
//! | window ms u64 | generations u32 | capacity u64 | error rate f64 | expansion u32
//! | current span start ms u64 | generation count u32
//! then per generation, oldest first:
//!   start ms u64 | latest items u64
//!   | base header length u32 | base header | overflow header length u32 (0: none) | overflow header
//! ```
//! where the base header is a non-scaling plain filter's of one link and the overflow header a
//! plain filter's (see [`crate::bloom::encoding`]). Version 1, which this module wrote before
//! generations had an overflow, has one chain header per generation instead
//! (`chain header length u32 | chain header`, its first link at half the generation's rate);
//! it is read as that link for the base and the links after it for the overflow. A filter
//! whose generations pool their rates ([`pool`](super::pool), flag bit 0, only where they
//! scale) writes base links holding up to [`WindowParams::base_item_limit`] items; a version
//! that knows no flags refuses it rather than place its items otherwise. Times are
//! absolute (milliseconds since the epoch), so that a filter loaded after a downtime longer
//! than its window forgets, at its first rotation, what expired meanwhile.
//!
//! The RDB record ([`Persistent`]) is the header as one string, then each link's bits as
//! one string, in the order above.
//!
//! Decoding trusts nothing: the parameters must be ones [`WindowParams::new`] accepts; the
//! span starts must lie on the span grid, rise strictly, and belong to generations a
//! rotation to the current span would have kept; each chain header must decode (the plain
//! filter's checks), scale as the window says, and the links of a generation keep at most its
//! share of the error rate (their capacities may differ: a later version may size generations
//! otherwise); where generations pool their rates, their sum is within the bound an add
//! keeps; every generation is held to what is left of the memory budget before
//! its bits are allocated.

use super::filter::WindowFilter;
use super::generation::{Generation, Layouts};
use super::params::WindowParams;
use super::pool;
use crate::bloom::chain::{BloomFilter, MAX_LINKS};
use crate::bloom::encoding::{self, ChunkError, CHUNK_BYTES};
use crate::bloom::format::locate;
use crate::bloom::sub_filter::SubFilter;
use crate::bytes::ByteArray;
use crate::decode::{DecodeError, Persistent, RdbSink, RdbSource, Reader};
use crate::window::{Generations, MAX_TIME_MS};

/// The first bytes of a windowed filter's header. A plain filter's starts with `RBLF` (or,
/// in RedisBloom's format, with an item count): LOADCHUNK looks here first.
pub const MAGIC: &[u8; 4] = b"RBLW";
/// The header this version writes.
const VERSION: u8 = 2;
/// The header before generations had an overflow: still read.
const VERSION_ONE_CHAIN: u8 = 1;
/// Flag: the generations pool their rates.
const FLAG_POOLED: u8 = 1;
const FIXED_HEADER_BYTES: usize = 4 + 1 + 1 + 8 + 4 + 8 + 8 + 4 + 8 + 4;
const GENERATION_HEADER_BYTES: usize = 8 + 8 + 4 + 4;
/// The longest chain header a generation can have: the plain header of a full chain.
const MAX_CHAIN_HEADER_BYTES: usize = 4 + 1 + 1 + 4 + 4 + MAX_LINKS * (8 + 8 + 4 + 8 + 8 + 4);
/// A dump iterator's bits for the position (4 TiB of bits), and above them the layout's mark,
/// within a positive 64-bit integer.
const POSITION_BITS: u32 = 42;
const POSITION_MASK: u64 = (1 << POSITION_BITS) - 1;
const MARK_BITS: u32 = 21;

/// Whether a header is a windowed filter's (the rest is checked by decoding it).
pub fn is_window_header(header: &[u8]) -> bool {
    header.starts_with(MAGIC)
}

impl WindowFilter {
    /// The first piece of a dump: the header above.
    pub fn encode_header(&self) -> Vec<u8> {
        let chains: Vec<(Vec<u8>, Vec<u8>)> = self
            .generations()
            .map(|generation| {
                let overflow = generation.value.overflow().map(encoding::encode_header).unwrap_or_default();
                let base = std::slice::from_ref(generation.value.base());
                (encoding::encode_chain_header(0, base), overflow)
            })
            .collect();
        let chain_bytes: usize = chains.iter().map(|(base, overflow)| base.len() + overflow.len()).sum();
        let mut header =
            Vec::with_capacity(FIXED_HEADER_BYTES + chains.len() * GENERATION_HEADER_BYTES + chain_bytes);
        let params = &self.params;
        header.extend_from_slice(MAGIC);
        header.push(VERSION);
        header.push(if self.pooled { FLAG_POOLED } else { 0 });
        header.extend_from_slice(&params.window_ms().to_le_bytes());
        header.extend_from_slice(&params.generations().to_le_bytes());
        header.extend_from_slice(&params.capacity().to_le_bytes());
        header.extend_from_slice(&params.error_rate().to_le_bytes());
        header.extend_from_slice(&params.expansion().to_le_bytes());
        header.extend_from_slice(&self.current_start_ms().to_le_bytes());
        header.extend_from_slice(&(chains.len() as u32).to_le_bytes());
        for (generation, (base, overflow)) in self.generations().zip(&chains) {
            header.extend_from_slice(&generation.start_ms.to_le_bytes());
            header.extend_from_slice(&generation.value.latest_items().to_le_bytes());
            for chain in [base, overflow] {
                header.extend_from_slice(&(chain.len() as u32).to_le_bytes());
                header.extend_from_slice(chain);
            }
        }
        header
    }

    /// Builds the filter a header describes, bits all clear, for its chunks to fill.
    pub fn decode_header(header: &[u8], max_bytes: usize) -> Result<WindowFilter, DecodeError> {
        WindowFilter::decode_header_with(header, max_bytes, encoding::clear_bits)
    }

    /// As [`decode_header`](Self::decode_header), each link's bits, in order, from `bits`
    /// (given the length the header says), once the generation has been checked and held to
    /// what is left of the budget: an RDB's strings become the filter's bits without a copy.
    pub fn decode_header_with(
        header: &[u8],
        max_bytes: usize,
        mut bits: impl FnMut(u64) -> Result<ByteArray, DecodeError>,
    ) -> Result<WindowFilter, DecodeError> {
        let mut reader = Reader(header);
        if reader.take(4)? != MAGIC {
            return Err(DecodeError::Malformed("not a windowed filter header"));
        }
        let version = reader.u8()?;
        if version != VERSION && version != VERSION_ONE_CHAIN {
            return Err(DecodeError::Malformed("unknown encoding version"));
        }
        let flags = reader.u8()?;
        if flags & !FLAG_POOLED != 0 {
            return Err(DecodeError::Malformed("unknown flags"));
        }
        let pooled = flags == FLAG_POOLED;
        let params = read_params(&mut reader)?;
        if pooled && (version == VERSION_ONE_CHAIN || params.expansion() == 0) {
            return Err(DecodeError::Malformed("pooled rates where generations cannot pool them"));
        }
        let schedule = *params.schedule();
        let current_start_ms = reader.u64()?;
        if current_start_ms != schedule.span_start(current_start_ms) {
            return Err(DecodeError::Malformed("current span is off the span grid"));
        }
        if current_start_ms > MAX_TIME_MS {
            return Err(DecodeError::Malformed("current span beyond any clock"));
        }
        let count = reader.u32()? as usize;
        if count > params.max_live_generations() as usize {
            return Err(DecodeError::Malformed("more generations than can be alive"));
        }

        // Built as the rotations that made it: each generation opened at its span, then the
        // current span set. The starts are checked first, so that no rotation drops anything.
        let mut generations = Generations::new(schedule);
        let mut used_bytes = 0usize;
        let mut previous_start = None;
        for _ in 0..count {
            let start_ms = reader.u64()?;
            let latest = reader.u64()?;
            check_start(&params, current_start_ms, start_ms, previous_start)?;
            previous_start = Some(start_ms);
            let budget = max_bytes.saturating_sub(used_bytes);
            let (base, overflow) = if version == VERSION_ONE_CHAIN {
                let chain = chain(&mut reader, budget, &mut bits, std::convert::identity)?
                    .ok_or(DecodeError::Malformed("a generation without links"))?;
                if chain.expansion_factor() != params.expansion() {
                    return Err(DecodeError::Malformed("a generation scales otherwise than its window"));
                }
                chain.split_first()?
            } else {
                let most_base_items =
                    |capacity| if pooled { params.base_item_limit(capacity) } else { capacity };
                let base = chain(&mut reader, budget, &mut bits, most_base_items)?
                    .ok_or(DecodeError::Malformed("a generation without links"))?;
                let overflow_budget = budget.saturating_sub(base.bits_bytes());
                let overflow = chain(&mut reader, overflow_budget, &mut bits, std::convert::identity)?;
                if base.expansion_factor() != 0
                    || overflow
                        .as_ref()
                        .is_some_and(|overflow| overflow.expansion_factor() != params.expansion())
                {
                    return Err(DecodeError::Malformed("a generation scales otherwise than its window"));
                }
                // Never more than one link: the header of a chain that does not grow has one,
                // or is refused above. Were there more, the record is refused, not cut.
                let (base, None) = base.split_first()? else {
                    return Err(DecodeError::Malformed("a base with links after it"));
                };
                (base, overflow)
            };
            let generation = Generation { base, overflow: overflow.map(Box::new), latest };
            check_generation(&params, &generation)?;
            used_bytes += generation.bits_bytes();
            generations.rotate(start_ms);
            generations.current_or_open(|| Ok::<_, DecodeError>(generation))?;
        }
        if !reader.0.is_empty() {
            return Err(DecodeError::Malformed("trailing bytes after the last generation"));
        }
        generations.rotate(current_start_ms);
        if pooled && !pool::holds_within_bound(&params, &generations) {
            return Err(DecodeError::Malformed("generations past the error rate they pool"));
        }
        Ok(WindowFilter::assembled(params, generations, Layouts::default(), pooled))
    }

    /// The dump iterator for `position` (a byte offset plus one, as a plain filter's iterator
    /// is), marked with the generations held now ([`MARK_BITS`] above [`POSITION_BITS`]): a
    /// rotation that drops one shifts every chunk after it, so a dump, or a load, that spans
    /// such a rotation must fail rather than put chunks where other bits were. Unmarked for a
    /// filter whose positions take the mark's bits.
    pub fn marked_iterator(&self, position: u64) -> u64 {
        if self.positions_take_the_mark() {
            return position;
        }
        self.layout_mark() << POSITION_BITS | position
    }

    /// The position an iterator names, where it was made while the filter held the generations
    /// it holds now, or carries no mark (an earlier version's iterator); `None` where they
    /// changed since.
    pub fn position_of(&self, iterator: u64) -> Option<u64> {
        let mark = iterator >> POSITION_BITS;
        if self.positions_take_the_mark() || mark == 0 {
            return Some(iterator);
        }
        (mark == self.layout_mark()).then_some(iterator & POSITION_MASK)
    }

    /// Whether an iterator names the header: position 1, whatever its mark.
    pub fn is_header_iterator(iterator: u64) -> bool {
        iterator & POSITION_MASK == 1
    }

    /// Which generations the byte space holds: the oldest one's span, counted from the epoch (a
    /// rotation can only drop the oldest), or the current span's while none is held; never 0.
    fn layout_mark(&self) -> u64 {
        let oldest = self.generations().next().map_or(self.current_start_ms(), |oldest| oldest.start_ms);
        (oldest / self.params.schedule().span_ms()) % ((1 << MARK_BITS) - 1) + 1
    }

    fn positions_take_the_mark(&self) -> bool {
        (self.bits_bytes() as u64).saturating_add(1) > POSITION_MASK
    }

    /// The chunks in order, each with the offset just past its end.
    pub fn chunks(&self) -> impl Iterator<Item = (u64, &[u8])> {
        let mut end = 0u64;
        self.link_bytes().flat_map(|link| link.chunks(CHUNK_BYTES)).map(move |chunk| {
            end += chunk.len() as u64;
            (end, chunk)
        })
    }

    /// The chunks as writable slices, in the order [`chunks`](Self::chunks) yields them.
    pub fn chunks_mut(&mut self) -> impl Iterator<Item = &mut [u8]> {
        self.link_bytes_mut().flat_map(|link| link.chunks_mut(CHUNK_BYTES))
    }

    /// The chunk that starts at `offset` in the byte space, or `None` past the end.
    pub fn chunk_at(&self, offset: u64) -> Option<&[u8]> {
        let (link, start) = locate(self.link_bytes(), offset)?;
        let end = link.len().min(start + CHUNK_BYTES);
        link.get(start..end)
    }

    /// Writes a chunk received from LOADCHUNK at `offset`.
    pub fn write_chunk(&mut self, offset: u64, data: &[u8]) -> Result<(), ChunkError> {
        let (link, start) = locate(self.link_bytes_mut(), offset).ok_or(ChunkError::NoLink)?;
        let target = link.get_mut(start..start.saturating_add(data.len())).ok_or(ChunkError::TooBig)?;
        target.copy_from_slice(data);
        Ok(())
    }
}

fn read_params(reader: &mut Reader) -> Result<WindowParams, DecodeError> {
    let window_ms = reader.u64()?;
    let generations = reader.u32()?;
    let capacity = reader.u64()?;
    let error_rate = reader.f64()?;
    let expansion = reader.u32()?;
    let params = WindowParams::new(window_ms, generations, capacity, error_rate, expansion)
        .map_err(|_| DecodeError::Malformed("window parameters out of range"))?;
    // `new` caps the rate; a stored rate is one it kept, bit for bit.
    if params.error_rate() != error_rate {
        return Err(DecodeError::Malformed("error rate out of range"));
    }
    Ok(params)
}

/// A chain header of its length's prefix, and the filter it describes with its bits from
/// `bits`, within `max_bytes`, a link sized for `capacity` items holding at most
/// `most_items(capacity)`; `None` for a length of 0.
fn chain(
    reader: &mut Reader,
    max_bytes: usize,
    bits: &mut impl FnMut(u64) -> Result<ByteArray, DecodeError>,
    most_items: impl Fn(u64) -> u64,
) -> Result<Option<BloomFilter>, DecodeError> {
    let len = reader.u32()? as usize;
    if len == 0 {
        return Ok(None);
    }
    if len > MAX_CHAIN_HEADER_BYTES {
        return Err(DecodeError::Malformed("chain header too long"));
    }
    let parsed = encoding::parse_header_with(reader.take(len)?, most_items)?;
    Ok(Some(parsed.build(max_bytes, bits)?))
}

/// A generation keeps at most its share of the window's rate: its base link at most what this
/// version gives one (it may be stricter, never looser), and its overflow, whose links' rates
/// halve, at most what the base leaves (twice its first link's), or a first link at the very
/// rate this version opens one at. The two agree but where rates are subnormal (a record's
/// rate of about 10^-321), whose halving rounds up: there the first alone refused an overflow
/// this version had opened, and the filter's own record (found by the `sketches` fuzz target).
/// Only a scaling window has an overflow. Its latest adds are among its items.
fn check_generation(params: &WindowParams, generation: &Generation) -> Result<(), DecodeError> {
    let first_rate = |filter: &BloomFilter| filter.links().first().map_or(0.0, SubFilter::error_rate);
    let base_rate = generation.base.error_rate();
    let overflow_rate = generation.overflow.as_deref().map_or(0.0, first_rate);
    let overflow_fits = 2.0 * overflow_rate <= params.generation_error_rate() - base_rate
        || overflow_rate <= params.overflow_first_link_error_rate();
    if base_rate > params.base_error_rate()
        || !overflow_fits
        || (params.expansion() == 0 && generation.overflow.is_some())
    {
        return Err(DecodeError::Malformed("a generation is looser than its window allows"));
    }
    if generation.latest > generation.items() {
        return Err(DecodeError::Malformed("more latest items than items in a generation"));
    }
    Ok(())
}

/// A generation's start must lie on the grid, after the previous one's, and belong to a
/// generation that the rotation which set the current span kept (one that expires after it):
/// that is what bounds the generations alive, and so the filter's error rate.
fn check_start(
    params: &WindowParams,
    current_start_ms: u64,
    start_ms: u64,
    previous: Option<u64>,
) -> Result<(), DecodeError> {
    let schedule = params.schedule();
    if start_ms != schedule.span_start(start_ms) {
        return Err(DecodeError::Malformed("a generation is off the span grid"));
    }
    if previous.is_some_and(|previous| start_ms <= previous) {
        return Err(DecodeError::Malformed("generations out of order"));
    }
    if start_ms > current_start_ms {
        return Err(DecodeError::Malformed("a generation after the current span"));
    }
    if schedule.expiry_ms(start_ms) <= current_start_ms {
        return Err(DecodeError::Malformed("a generation expired before the current span"));
    }
    Ok(())
}

/// The windowed filter's own RDB record, not RedisBloom's: RedisBloom has no such filter.
/// Its version numbers its layout; the module stores it under whichever type and encoding
/// version it registers for windowed filters.
impl Persistent for WindowFilter {
    /// 2 since generations have an overflow; records of version 1 are read too.
    const ENCODING_VERSION: i32 = 2;

    fn load_rdb(
        encoding_version: i32,
        source: &mut impl RdbSource,
        max_bytes: usize,
    ) -> Result<WindowFilter, DecodeError> {
        if !(1..=Self::ENCODING_VERSION).contains(&encoding_version) {
            return Err(DecodeError::Malformed("unknown encoding version"));
        }
        let header = source.bytes()?;
        let bits = |len: u64| {
            let bytes = source.bytes()?;
            if bytes.len() as u64 != len {
                return Err(DecodeError::Malformed("a link's length does not match its header"));
            }
            Ok(bytes)
        };
        WindowFilter::decode_header_with(header.as_slice(), max_bytes, bits)
    }

    fn save_rdb(&self, sink: &mut impl RdbSink) {
        sink.bytes(&self.encode_header());
        for link in self.link_bytes() {
            sink.bytes(link);
        }
    }

    fn memory_bytes(&self) -> usize {
        WindowFilter::memory_bytes(self)
    }

    fn try_clone(&self) -> Option<WindowFilter> {
        WindowFilter::try_clone(self).ok()
    }
}
