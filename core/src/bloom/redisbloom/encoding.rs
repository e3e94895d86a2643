//! RedisBloom's two stored forms of a filter, read strictly and written byte for byte as
//! RedisBloom writes them.
//!
//! **The dump header** (first reply of BF.SCANDUMP, first BF.LOADCHUNK of an AOF rewrite),
//! packed, little-endian:
//! ```text
//! items u64 | link count u32 | options u32 | growth u32
//! then per link: bytes u64 | bits u64 | items u64 | error f64 | bits per entry f64
//!                | hashes u32 | capacity u64 | n2 u8
//! ```
//! Versions before growth existed wrote no growth and a 32-bit capacity; both are read. The
//! bit arrays follow in chunks, each inside one link (at most 16 MiB from RedisBloom 2.8,
//! 10 MB before; LOADCHUNK takes either).
//!
//! **The RDB value** (encoding versions 0 to 4): unsigned and double values in Redis's RDB
//! encoding, read through [`RdbSource`]: items, link count, options (version 2 on), growth
//! (version 4 on); per link: capacity, error, hashes, bits per entry, bits and n2 (version 1
//! on; version 0 derives the bits from capacity and bits per entry), the bit array, items.
//!
//! Every description is checked (see `LinkFields::check` and `ChainFields`) and the whole
//! filter held to the caller's memory budget before its memory is allocated.

use super::chain::{Chain, ChainFields, MAX_LINKS};
use super::link::{Link, LinkFields};
use crate::bytes::ByteArray;
use crate::decode::{DecodeError, RdbSource, Reader};

/// The highest RDB encoding version RedisBloom has written.
pub const NEWEST_RDB_VERSION: i32 = 4;

const HEADER_BYTES: usize = 8 + 4 + 4 + 4;
const LINK_BYTES: usize = 8 + 8 + 8 + 8 + 8 + 4 + 8 + 1;
const OLD_HEADER_BYTES: usize = 8 + 4 + 4;
const OLD_LINK_BYTES: usize = 8 + 8 + 8 + 8 + 8 + 4 + 4 + 1;
/// The growth of filters from before growth was stored.
const OLD_GROWTH: u32 = 2;

/// The dump header of `chain`, in the current layout above (growth and 64-bit capacities).
pub fn encode_header(chain: &Chain) -> Vec<u8> {
    let fields = chain.fields();
    let mut header = Vec::with_capacity(HEADER_BYTES + chain.links().len() * LINK_BYTES);
    header.extend_from_slice(&fields.items.to_le_bytes());
    header.extend_from_slice(&(chain.links().len() as u32).to_le_bytes());
    header.extend_from_slice(&fields.options.to_le_bytes());
    header.extend_from_slice(&fields.growth.to_le_bytes());
    for link in chain.links() {
        let link = link.fields();
        header.extend_from_slice(&link.bytes.to_le_bytes());
        header.extend_from_slice(&link.bits.to_le_bytes());
        header.extend_from_slice(&link.items.to_le_bytes());
        header.extend_from_slice(&link.error.to_le_bytes());
        header.extend_from_slice(&link.bpe.to_le_bytes());
        header.extend_from_slice(&link.hashes.to_le_bytes());
        header.extend_from_slice(&link.entries.to_le_bytes());
        header.push(link.n2);
    }
    header
}

/// Builds the filter a dump header describes, the bits of each link, in order, from `bits`
/// (given the length the header says; `clear_bits` for a filter filled by its chunks), once
/// the header has been checked and held to the budget.
pub fn decode_header_with(
    header: &[u8],
    max_bytes: usize,
    mut bits: impl FnMut(u64) -> Result<ByteArray, DecodeError>,
) -> Result<Chain, DecodeError> {
    let link_count =
        header.get(8..12).map(|bytes| u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]));
    let link_count = link_count.ok_or(DecodeError::Malformed("header is truncated"))? as usize;
    if link_count == 0 || link_count > MAX_LINKS {
        return Err(DecodeError::Malformed("impossible number of links"));
    }
    let old = if header.len() == HEADER_BYTES + link_count * LINK_BYTES {
        false
    } else if header.len() == OLD_HEADER_BYTES + link_count * OLD_LINK_BYTES {
        true
    } else {
        return Err(DecodeError::Malformed("header length does not match its link count"));
    };
    let mut reader = Reader(header);
    let items = reader.u64()?;
    let _ = reader.u32()?;
    let options = reader.u32()?;
    let growth = if old { OLD_GROWTH } else { reader.u32()? };
    let chain = ChainFields { items, options, growth };
    chain.check(link_count as u64).map_err(DecodeError::Malformed)?;

    let mut links: Vec<LinkFields> = Vec::with_capacity(link_count);
    for _ in 0..link_count {
        let bytes = reader.u64()?;
        let bits = reader.u64()?;
        let link_items = reader.u64()?;
        let error = reader.f64()?;
        let bpe = reader.f64()?;
        let hashes = reader.u32()?;
        let entries = if old { u64::from(reader.u32()?) } else { reader.u64()? };
        let n2 = reader.u8()?;
        let link = LinkFields { entries, error, bpe, hashes, bits, n2, bytes, items: link_items };
        chain.check_link(&link, links.last()).map_err(DecodeError::Malformed)?;
        // A dump header's link holds every bit of its bytes, as RedisBloom checks (only the
        // first version's RDB records, not dumps, kept fewer).
        if bytes.checked_mul(8) != Some(bits) {
            return Err(DecodeError::Malformed("a link's bits are not its bytes'"));
        }
        links.push(link);
    }
    check_items(&chain, links.iter())?;
    let total_bytes = links
        .iter()
        .try_fold(0usize, |sum, link| usize::try_from(link.bytes).ok()?.checked_add(sum))
        .ok_or(DecodeError::TooLarge)?;
    if total_bytes > max_bytes {
        return Err(DecodeError::TooLarge);
    }
    let mut built = Vec::new();
    built.try_reserve_exact(link_count).map_err(|_| DecodeError::OutOfMemory)?;
    for link in links {
        let data = bits(link.bytes)?;
        built.push(
            Link::with_bits(link, data)
                .ok_or(DecodeError::Malformed("a link's bits do not match its header"))?,
        );
    }
    Ok(Chain::from_links(chain, built))
}

fn check_items<'a>(
    chain: &ChainFields,
    mut links: impl Iterator<Item = &'a LinkFields>,
) -> Result<(), DecodeError> {
    let sum = links.try_fold(0u64, |sum, link| sum.checked_add(link.items));
    if sum != Some(chain.items) {
        return Err(DecodeError::Malformed("item count does not match the links"));
    }
    Ok(())
}

/// Reads a RedisBloom RDB value of encoding `version`. Every link is checked before it is
/// kept, and the bytes of all links so far are held to `max_bytes`.
pub fn load_rdb(version: i32, source: &mut impl RdbSource, max_bytes: usize) -> Result<Chain, DecodeError> {
    if !(0..=NEWEST_RDB_VERSION).contains(&version) {
        return Err(DecodeError::Malformed("unknown RedisBloom encoding version"));
    }
    let items = source.unsigned()?;
    let link_count = source.unsigned()?;
    let options = if version >= 2 { narrow(source.unsigned()?)? } else { 0 };
    let growth = if version >= 4 { narrow(source.unsigned()?)? } else { OLD_GROWTH };
    let chain = ChainFields { items, options, growth };
    chain.check(link_count).map_err(DecodeError::Malformed)?;

    let mut links: Vec<Link> = Vec::new();
    links.try_reserve_exact(link_count as usize).map_err(|_| DecodeError::OutOfMemory)?;
    let mut bytes_so_far = 0usize;
    for _ in 0..link_count {
        let entries = source.unsigned()?;
        let error = source.double()?;
        let hashes = narrow(source.unsigned()?)?;
        let bpe = source.double()?;
        let (bits, n2) = if version == 0 {
            ((entries as f64 * bpe) as u64, 0)
        } else {
            let bits = source.unsigned()?;
            let n2 =
                u8::try_from(source.unsigned()?).map_err(|_| DecodeError::Malformed("n2 out of range"))?;
            (bits, n2)
        };
        let data = source.bytes()?;
        let fields = LinkFields { entries, error, bpe, hashes, bits, n2, bytes: data.len() as u64, items: 0 };
        chain.check_link(&fields, links.last().map(Link::fields)).map_err(DecodeError::Malformed)?;
        bytes_so_far = bytes_so_far.checked_add(data.len()).ok_or(DecodeError::TooLarge)?;
        if bytes_so_far > max_bytes {
            return Err(DecodeError::TooLarge);
        }
        let mut link =
            Link::with_bits(fields, data).ok_or(DecodeError::Malformed("bit array of another size"))?;
        link.set_items(source.unsigned()?).map_err(DecodeError::Malformed)?;
        links.push(link);
    }
    check_items(&chain, links.iter().map(Link::fields))?;
    Ok(Chain::from_links(chain, links))
}

fn narrow(value: u64) -> Result<u32, DecodeError> {
    u32::try_from(value).map_err(|_| DecodeError::Malformed("value out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bloom::redisbloom::link::{OPTION_FORCE_64, OPTION_NO_ROUND, OPTION_NO_SCALING};
    use crate::bloom::FilterError;

    const UNLIMITED: usize = usize::MAX;

    fn decode_header(header: &[u8], max_bytes: usize) -> Result<Chain, DecodeError> {
        decode_header_with(header, max_bytes, crate::bloom::encoding::clear_bits)
    }

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
    }

    fn insert_all(chain: &mut Chain, items: &[&[u8]]) {
        for item in items {
            let hash = chain.hash(item);
            assert_eq!(chain.insert_hash(&hash, || UNLIMITED), Ok(true));
        }
    }

    const ITEMS: [&[u8]; 3] =
        [b"hello", b"redbloom", b"\x00\xff\x00\xff\x00\xff\x00\xff\x00\xff\x00\xff\x00\xffx"];

    /// What the real RedisBloom 2.8.2 dumped after `BF.RESERVE k 0.01 10 NONSCALING` and a
    /// BF.MADD of ITEMS: its header, and the bits its hashing set.
    #[test]
    fn dumps_what_redisbloom_dumped_after_the_same_commands() {
        let mut chain = Chain::try_new(10, 0.01, 0, UNLIMITED).unwrap();
        insert_all(&mut chain, &ITEMS);
        let header = "0300000000000000010000000d000000020000001000000000000000800000000000000003000000000000007b14ae47e17a843f88168ac58c2b2340070000000a0000000000000000";
        assert_eq!(encode_header(&chain), hex(header));
        assert_eq!(chain.links()[0].bytes(), hex("22020202000222222020000202020202"));
    }

    /// The same, with the 64-bit option cleared in the header given to RedisBloom's
    /// BF.LOADCHUNK (its 32-bit MurmurHash2 hashing), then the same BF.MADD.
    #[test]
    fn hashes_narrow_filters_as_redisbloom_does() {
        let header = "03000000000000000100000009000000020000001000000000000000800000000000000003000000000000007b14ae47e17a843f88168ac58c2b2340070000000a0000000000000000";
        let mut chain = decode_header(&hex(header), UNLIMITED).unwrap();
        insert_all(&mut chain, &ITEMS);
        assert_eq!(chain.items(), 6);
        assert_eq!(chain.links()[0].bytes(), hex("559580c0008000a01008008000840280"));
    }

    /// A dump header whose link names more bytes than its bits fill is refused, as RedisBloom
    /// refuses it (its chunks then fit nowhere, and RedisBloom reads the filter back nowhere).
    #[test]
    fn a_header_whose_bytes_are_not_its_bits_is_refused() {
        let header = hex("0300000000000000010000000d000000020000001000000000000000800000000000000003000000000000007b14ae47e17a843f88168ac58c2b2340070000000a0000000000000000");
        assert!(decode_header(&header, UNLIMITED).is_ok());
        let mut wider = header.clone();
        wider[20] = 17;
        assert_eq!(
            decode_header(&wider, UNLIMITED).err(),
            Some(DecodeError::Malformed("a link's bits are not its bytes'"))
        );
    }

    /// A chain of three links or more, as RedisBloom's BF.RESERVE makes it, or with sizes
    /// rounded to powers of two as versions before 1.1 made them.
    fn grown_chain(growth: u32, rounded: bool) -> Chain {
        let mut chain = Chain::try_new(50, 0.01, growth, UNLIMITED).unwrap();
        if rounded {
            let fields = ChainFields { options: OPTION_FORCE_64, ..*chain.fields() };
            let link = LinkFields::sized(50, 0.005, fields.options).unwrap();
            chain = Chain::from_links(fields, vec![Link::try_new(link).unwrap()]);
        }
        for n in 0..2000u32 {
            let hash = chain.hash(&n.to_le_bytes());
            chain.insert_hash(&hash, || UNLIMITED).unwrap();
        }
        assert!(chain.links().len() >= 3);
        chain
    }

    fn same(a: &Chain, b: &Chain) -> bool {
        encode_header(a) == encode_header(b)
            && a.links().iter().zip(b.links()).all(|(x, y)| x.bytes() == y.bytes())
    }

    #[test]
    fn headers_round_trip_in_the_current_and_the_old_layout() {
        for (growth, rounded) in [(3, false), (2, true), (2, false)] {
            let chain = grown_chain(growth, rounded);
            let header = encode_header(&chain);
            assert_eq!(encode_header(&decode_header(&header, UNLIMITED).unwrap()), header);
            // The layout before growth was stored: no growth, 32-bit capacities.
            let mut old = header[..16].to_vec();
            for link in header[HEADER_BYTES..].chunks(LINK_BYTES) {
                old.extend_from_slice(&link[..48]);
                old.push(link[52]);
            }
            assert_eq!(old.len(), OLD_HEADER_BYTES + chain.links().len() * OLD_LINK_BYTES);
            match decode_header(&old, UNLIMITED) {
                Ok(decoded) => assert_eq!(encode_header(&decoded), header),
                // Filters then always grew by 2: a growth of 3 breaks the chain.
                Err(error) => {
                    assert_eq!(growth, 3);
                    assert_eq!(error, DecodeError::Malformed("links do not form a chain"));
                }
            }
        }
    }

    /// An RDB record as a list of values, read back by the loader.
    #[derive(Clone, Debug)]
    enum Value {
        Unsigned(u64),
        Double(f64),
        Bytes(Vec<u8>),
    }

    struct Values(std::collections::VecDeque<Value>);

    impl RdbSource for Values {
        fn unsigned(&mut self) -> Result<u64, DecodeError> {
            match self.0.pop_front() {
                Some(Value::Unsigned(value)) => Ok(value),
                _ => Err(DecodeError::Malformed("short read")),
            }
        }
        fn signed(&mut self) -> Result<i64, DecodeError> {
            Err(DecodeError::Malformed("no signed here"))
        }

        fn double(&mut self) -> Result<f64, DecodeError> {
            match self.0.pop_front() {
                Some(Value::Double(value)) => Ok(value),
                _ => Err(DecodeError::Malformed("short read")),
            }
        }
        fn bytes(&mut self) -> Result<ByteArray, DecodeError> {
            match self.0.pop_front() {
                Some(Value::Bytes(bytes)) => {
                    ByteArray::try_copy_of(&bytes).map_err(|_| DecodeError::OutOfMemory)
                }
                _ => Err(DecodeError::Malformed("short read")),
            }
        }
    }

    /// The record RedisBloom writes at `version` (from the published field order).
    fn record(chain: &Chain, version: i32) -> Vec<Value> {
        let fields = chain.fields();
        let mut values = vec![Value::Unsigned(fields.items), Value::Unsigned(chain.links().len() as u64)];
        if version >= 2 {
            values.push(Value::Unsigned(u64::from(fields.options)));
        }
        if version >= 4 {
            values.push(Value::Unsigned(u64::from(fields.growth)));
        }
        for link in chain.links() {
            let f = link.fields();
            values.extend([
                Value::Unsigned(f.entries),
                Value::Double(f.error),
                Value::Unsigned(u64::from(f.hashes)),
            ]);
            values.push(Value::Double(f.bpe));
            if version >= 1 {
                values.extend([Value::Unsigned(f.bits), Value::Unsigned(u64::from(f.n2))]);
            }
            values.extend([Value::Bytes(link.bytes().to_vec()), Value::Unsigned(f.items)]);
        }
        values
    }

    fn load(values: Vec<Value>, version: i32, budget: usize) -> Result<Chain, DecodeError> {
        let mut source = Values(values.into());
        let chain = load_rdb(version, &mut source, budget)?;
        assert!(source.0.is_empty(), "values left unread");
        Ok(chain)
    }

    /// A filter of the very first version: 32-bit hashes, no options stored, and `entries *
    /// bits per entry` as its bit count, over whole bytes.
    fn first_version_chain() -> Chain {
        let mut link = LinkFields::sized(300, 0.005, OPTION_NO_ROUND).unwrap();
        link.bits = (link.entries as f64 * link.bpe) as u64;
        link.bytes = link.bits.div_ceil(8);
        assert_ne!(link.bits % 64, 0, "meant to test an unaligned bit count");
        let fields = ChainFields { items: 0, options: 0, growth: OLD_GROWTH };
        let mut chain = Chain::from_links(fields, vec![Link::try_new(link).unwrap()]);
        for n in 0..300u32 {
            let hash = chain.hash(&n.to_le_bytes());
            chain.insert_hash(&hash, || UNLIMITED).unwrap();
        }
        chain
    }

    #[test]
    fn every_encoding_version_loads_what_it_stored() {
        let cases = [
            (0, first_version_chain()),
            (1, first_version_chain()),
            (2, grown_chain(2, true)),
            (3, grown_chain(2, false)),
            (4, grown_chain(7, false)),
            (4, grown_chain(3, true)),
        ];
        for (version, chain) in cases {
            let loaded = load(record(&chain, version), version, UNLIMITED).unwrap();
            assert!(same(&loaded, &chain), "version {version}");
        }
    }

    #[test]
    fn corrupt_records_are_refused() {
        let chain = grown_chain(2, false);
        let good = record(&chain, 4);
        assert!(load(good.clone(), 4, UNLIMITED).is_ok());
        let mut refused = 0;
        for index in 0..good.len() {
            for change in 0..4 {
                let mut values = good.clone();
                values[index] = match (&values[index], change) {
                    (Value::Unsigned(v), 0) => Value::Unsigned(v + 1),
                    (Value::Unsigned(v), 1) => Value::Unsigned(v.wrapping_sub(1)),
                    (Value::Unsigned(_), 2) => Value::Unsigned(u64::MAX),
                    (Value::Double(v), 0) => Value::Double(v * 2.0),
                    (Value::Double(_), 1) => Value::Double(f64::NAN),
                    (Value::Double(_), 2) => Value::Double(0.0),
                    (Value::Bytes(b), 0) => Value::Bytes(b[1..].to_vec()),
                    (Value::Bytes(b), 1) => Value::Bytes([b.as_slice(), &[0; 8]].concat()),
                    (_, _) => Value::Bytes(vec![]),
                };
                match load(values, 4, UNLIMITED) {
                    Err(_) => refused += 1,
                    // Some items counts are not checkable from the record alone.
                    Ok(loaded) => assert_eq!(loaded.links().len(), chain.links().len()),
                }
            }
            let truncated = good[..index].to_vec();
            assert!(load_rdb(4, &mut Values(truncated.into()), UNLIMITED).is_err());
        }
        assert!(refused > good.len() * 3, "only {refused} refused");
        assert_eq!(load(good, 4, 1000).err(), Some(DecodeError::TooLarge));
        assert!(load(record(&chain, 4), 5, UNLIMITED).is_err());
    }

    #[test]
    fn any_stored_growth_loads_and_one_that_cannot_grow_refuses_the_add() {
        for growth in [100_000u32, u32::MAX, 0] {
            let mut chain = Chain::try_new(3, 0.01, 2, UNLIMITED).unwrap();
            insert_all(&mut chain, &ITEMS);
            let mut header = encode_header(&chain);
            header[16..20].copy_from_slice(&growth.to_le_bytes());
            let mut loaded = decode_header(&header, UNLIMITED).unwrap();
            assert_eq!(loaded.expansion(), Some(growth));
            let fresh = (0..1000u32)
                .map(u32::to_le_bytes)
                .find(|item| !loaded.contains_hash(&loaded.hash(item)))
                .unwrap();
            let hash = loaded.hash(&fresh);
            // A growth of 0 makes no next link; 100,000 makes one of 300,000 items (about
            // 400 KB), over this budget, and u32::MAX one of 17 GB.
            let result = loaded.insert_hash(&hash, || 1 << 16);
            assert_eq!(result, Err(FilterError::TooLarge), "growth {growth}");
            assert_eq!(loaded.items(), 3, "a refused add changes nothing");
            if growth != u32::MAX {
                assert_eq!(loaded.insert_hash(&hash, || 1 << 20).is_ok(), growth > 0, "growth {growth}");
            }
        }
    }

    #[test]
    fn sizes_past_any_machine_are_not_made() {
        assert_eq!(LinkFields::sized(u64::MAX / 4, 0.5, OPTION_NO_ROUND | OPTION_FORCE_64), None);
        assert_eq!(LinkFields::sized(1 << 62, 1e-300, OPTION_FORCE_64), None);
        assert!(LinkFields::sized(1 << 30, 1e-9, OPTION_FORCE_64).is_some());
    }

    #[test]
    fn impossible_chains_are_refused() {
        let chain = grown_chain(2, false);
        let header = encode_header(&chain);
        let with = |at: usize, bytes: &[u8]| {
            let mut corrupt = header.clone();
            corrupt[at..at + bytes.len()].copy_from_slice(bytes);
            decode_header(&corrupt, UNLIMITED).err()
        };
        let options = OPTION_NO_ROUND | OPTION_FORCE_64;
        assert!(with(12, &(options | 2).to_le_bytes()).is_some(), "unknown option");
        assert!(with(12, &(options | OPTION_NO_SCALING).to_le_bytes()).is_some(), "non-scaling with links");
        assert!(with(16, &1u32.to_le_bytes()).is_some(), "links that did not grow by the growth");
        assert!(with(0, &1u64.to_le_bytes()).is_some(), "items do not add up");
        assert!(with(8, &0u32.to_le_bytes()).is_some(), "no links");
        assert!(with(8, &5000u32.to_le_bytes()).is_some(), "too many links");
        assert!(decode_header(&header[..header.len() - 1], UNLIMITED).is_err());
        assert!(decode_header(&[], UNLIMITED).is_err());
    }
}
