//! RDB encoding versions older than the ones written now, in DUMP payloads built by hand from
//! the published layouts: RedisBloom's 0 to 3, and this module's chunked version 100.

use super::redisbloom::{add, assert_same_answers, assert_same_filter, create, restore, Kind};
use crate::harness::*;
use redis::Connection;

/// A value of a module's RDB record.
enum Field {
    Unsigned(u64),
    Double(f64),
    Bytes(Vec<u8>),
}

fn rdb_length(value: u64) -> Vec<u8> {
    match value {
        0..=63 => vec![value as u8],
        64..=16383 => vec![0x40 | (value >> 8) as u8, value as u8],
        _ if u32::try_from(value).is_ok() => [&[0x80u8][..], &(value as u32).to_be_bytes()].concat(),
        _ => [&[0x81u8][..], &value.to_be_bytes()].concat(),
    }
}

/// A DUMP payload for a module value: `template` (a DUMP of an `MBbloom--` value) gives the
/// type's id and the RDB version; the encoding version and the fields are `version`'s.
fn payload(template: &[u8], version: u32, fields: &[Field]) -> Vec<u8> {
    let mut out = template[..10].to_vec();
    let id = (u64::from_be_bytes(out[2..10].try_into().unwrap()) & !0x3FF) | u64::from(version);
    out[2..10].copy_from_slice(&id.to_be_bytes());
    for field in fields {
        match field {
            Field::Unsigned(value) => out.extend([&[2u8][..], &rdb_length(*value)].concat()),
            Field::Double(value) => out.extend([&[4u8][..], &value.to_le_bytes()].concat()),
            Field::Bytes(bytes) => out.extend([&[5u8][..], &rdb_length(bytes.len() as u64), bytes].concat()),
        }
    }
    out.push(0);
    out.extend_from_slice(&template[template.len() - 10..]);
    with_valid_checksum(out)
}

/// A RedisBloom dump header, as the tests read it (the published layout, current version).
#[derive(Clone, Debug)]
struct Header {
    items: u64,
    options: u32,
    growth: u32,
    links: Vec<LinkHeader>,
}

#[derive(Clone, Copy, Debug)]
struct LinkHeader {
    bytes: u64,
    bits: u64,
    items: u64,
    error: f64,
    bpe: f64,
    hashes: u32,
    entries: u64,
    n2: u8,
}

impl Header {
    fn parse(bytes: &[u8]) -> Header {
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let count = u32_at(8) as usize;
        assert_eq!(bytes.len(), 20 + 53 * count);
        let links = (0..count)
            .map(|n| {
                let at = 20 + 53 * n;
                LinkHeader {
                    bytes: u64_at(at),
                    bits: u64_at(at + 8),
                    items: u64_at(at + 16),
                    error: f64::from_bits(u64_at(at + 24)),
                    bpe: f64::from_bits(u64_at(at + 32)),
                    hashes: u32_at(at + 40),
                    entries: u64_at(at + 44),
                    n2: bytes[at + 52],
                }
            })
            .collect();
        Header { items: u64_at(0), options: u32_at(12), growth: u32_at(16), links }
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = self.items.to_le_bytes().to_vec();
        for value in [self.links.len() as u32, self.options, self.growth] {
            out.extend_from_slice(&value.to_le_bytes());
        }
        for link in &self.links {
            for value in [link.bytes, link.bits, link.items, link.error.to_bits(), link.bpe.to_bits()] {
                out.extend_from_slice(&value.to_le_bytes());
            }
            out.extend_from_slice(&link.hashes.to_le_bytes());
            out.extend_from_slice(&link.entries.to_le_bytes());
            out.push(link.n2);
        }
        out
    }
}

/// The record RedisBloom writes at encoding `version`, from the published field order, for a
/// filter given by its dump header and bits.
fn record(header: &Header, bits: &[u8], version: u32) -> Vec<Field> {
    let mut fields = vec![Field::Unsigned(header.items), Field::Unsigned(header.links.len() as u64)];
    if version >= 2 {
        fields.push(Field::Unsigned(header.options.into()));
    }
    if version >= 4 {
        fields.push(Field::Unsigned(header.growth.into()));
    }
    let mut offset = 0;
    for link in &header.links {
        fields.extend([
            Field::Unsigned(link.entries),
            Field::Double(link.error),
            Field::Unsigned(link.hashes.into()),
        ]);
        fields.push(Field::Double(link.bpe));
        if version >= 1 {
            fields.extend([Field::Unsigned(link.bits), Field::Unsigned(link.n2.into())]);
        }
        let end = offset + link.bytes as usize;
        fields.extend([Field::Bytes(bits[offset..end].to_vec()), Field::Unsigned(link.items)]);
        offset = end;
    }
    fields
}

/// A filter made on RedisBloom from a header of its own choosing (BF.LOADCHUNK), then filled.
fn load_header(con: &mut Connection, key: &str, header: &Header, items: &[Vec<u8>]) {
    let bytes: u64 = header.links.iter().map(|link| link.bytes).sum();
    let mut pairs = vec![(1i64, header.encode())];
    pairs.push((1 + bytes as i64, vec![0; bytes as usize]));
    loadchunks(con, key, &pairs);
    add(con, key, items);
}

/// RedisBloom's sizing of a link, as the published format describes it, for headers given
/// to the real RedisBloom.
fn sized_link(entries: u64, error: f64, rounded: bool) -> LinkHeader {
    let bpe = (error.ln() / 0.480_453_013_918_201).abs();
    let wanted = entries as f64 * bpe;
    let (modulus, n2, entries) = if rounded {
        let n2 = (((wanted.to_bits() >> 52) & 0x7ff) - 1022) as u8;
        let modulus = 1u64 << n2;
        (modulus, n2, entries + ((modulus as f64 - wanted) as u64 as f64 / bpe) as u64)
    } else {
        (wanted as u64, 0, entries)
    };
    let bytes = modulus.div_ceil(64) * 8;
    // RedisBloom's approximation of ln(2), not the exact constant.
    #[allow(clippy::approx_constant)]
    let hashes = (0.693_147_180_559_945 * bpe).ceil() as u32;
    LinkHeader { bytes, bits: bytes * 8, items: 0, error, bpe, hashes, entries, n2 }
}

/// Encoding versions 0 to 3 come from RedisBloom versions that cannot be run here; their
/// payloads are built from the published format, for filters the real RedisBloom made (or
/// took from a header) and answers for, and restored into this module.
#[test]
fn older_encoding_versions_load_and_answer_as_redisbloom() {
    let theirs = Server::start_redisbloom(&["--rdbcompression", "no"]);
    let ours = Server::start();
    let (mut their_con, mut our_con) = (theirs.connection(), ours.connection());
    let mut chain = Kind { key: "chain", reserve: &["0.01", "10"], items: numbered("c", 20_000) };
    create(&mut their_con, &mut chain);
    let template = dump_payload(&mut their_con, "chain");
    let pairs = scandump(&mut their_con, "chain");
    let header = Header::parse(&pairs[0].1);
    let bits: Vec<u8> = pairs[1..].iter().flat_map(|(_, data)| data.clone()).collect();
    // The payload builder writes exactly what RedisBloom writes at its current version.
    assert!(payload(&template, 4, &record(&header, &bits, 4)) == template, "the builder is off");

    // Versions 2 and 3: options stored, growth (always 2 then) not.
    for version in [2, 3] {
        let key = format!("v{version}");
        restore(&mut our_con, &key, &payload(&template, version, &record(&header, &bits, version))).unwrap();
        loadchunks(&mut their_con, &key, &pairs);
        assert_same_filter(&mut their_con, &mut our_con, &key, &chain.items);
    }

    // Versions 0 and 1: no options, so 32-bit hashing; version 1 stores each link's size,
    // version 0 derives it from capacity and bits per entry, which a link whose size is a
    // whole number of 64-bit words shares with the layouts RedisBloom writes.
    let mut entries = 300;
    while !((entries as f64 * sized_link(entries, 0.005, false).bpe) as u64).is_multiple_of(64) {
        entries += 1;
    }
    let items = numbered("old", entries as usize / 2);
    for (version, rounded) in [(0, false), (1, false), (1, true)] {
        let key = format!("v{version}-{rounded}");
        let mut link = sized_link(entries, 0.005, rounded);
        let old = Header { items: 0, options: 0, growth: 2, links: vec![link] };
        // RedisBloom takes a header without the no-rounding option only with a rounded link;
        // with it, the link answers as an unrounded one of version 0 or 1 would.
        let given = Header { options: u32::from(!rounded), ..old.clone() };
        load_header(&mut their_con, &key, &given, &items);
        let pairs = scandump(&mut their_con, &key);
        let bits: Vec<u8> = pairs[1..].iter().flat_map(|(_, data)| data.clone()).collect();
        link.items = items.len() as u64;
        let filled = Header { items: link.items, links: vec![link], ..old };
        let fields = record(&filled, &bits, version);
        restore(&mut our_con, &key, &payload(&template, version, &fields)).unwrap();
        assert_same_answers(&mut their_con, &mut our_con, &key, &items);
        assert!(scandump(&mut our_con, &key)[1..] == pairs[1..], "{key}: bits differ");
    }
}

/// An RDB value of the earlier encoding version (100: the bits in chunks of at most 16 MiB)
/// still loads, into the very same filter.
#[test]
fn the_chunked_encoding_version_still_loads() {
    let server = Server::start();
    let mut con = server.connection();
    ok(&mut con, &["BF.RESERVE", "k", "0.0001", "9000000"]);
    madd_all(&mut con, "k", (0..5000).map(|n| format!("v{n}")));
    let current = dump_payload(&mut con, "k");
    let pieces = scandump(&mut con, "k");
    assert!(pieces.len() >= 3, "meant to test a filter of several chunks");
    let fields: Vec<Field> = pieces.iter().map(|(_, data)| Field::Bytes(data.clone())).collect();
    let chunked = payload(&current, 100, &fields);
    assert_ne!(chunked, current);
    call_bytes(&mut con, &[b"RESTORE", b"old", b"0", &chunked]).expect("a version-100 payload");
    assert_eq!(digest(&mut con, "old"), digest(&mut con, "k"));
    assert_eq!(count_present(&mut con, "old", (0..5000).map(|n| format!("v{n}"))), 5000);
}
