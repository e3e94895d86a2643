//! A module value as a DUMP payload: the bytes `RESTORE key ttl payload` takes. The sketches'
//! AOF rewrite writes one RESTORE per key, as RedisBloom does for them, so that an AOF of
//! either module replays on the other.
//!
//! The payload is what Redis's DUMP writes for a module value: the module type (RDB type 7,
//! "module 2": every value carries an opcode), the type's 64-bit id (its nine-character name
//! and encoding version), the record's values, the EOF opcode, then a two-byte RDB version
//! and a CRC-64 (Jones) of everything before it.

use crate::decode::{Record, RecordValue};

/// RDB version 9 (Redis 5): every server this module runs on restores payloads of this
/// version or older, and module records have not changed since.
const RDB_VERSION: u16 = 9;
const RDB_TYPE_MODULE_2: u8 = 7;
const OPCODE_EOF: u64 = 0;
const OPCODE_UNSIGNED: u64 = 2;
const OPCODE_DOUBLE: u64 = 4;
const OPCODE_STRING: u64 = 5;

/// The characters of a module type name, each standing for its 6-bit position.
/// (Redis's own set: a name outside it was never registered.)
const NAME_CHARACTERS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The payload of a value of `type_name` (nine characters of Redis's type-name set), saved as
/// `record` at `encoding_version`; `None` for a name Redis would not have registered.
pub fn dump_payload(type_name: &str, encoding_version: i32, record: &Record) -> Option<Vec<u8>> {
    let id = type_id(type_name, encoding_version)?;
    let mut payload = vec![RDB_TYPE_MODULE_2];
    push_length(&mut payload, id);
    for value in &record.0 {
        match value {
            RecordValue::Unsigned(value) => {
                push_length(&mut payload, OPCODE_UNSIGNED);
                push_length(&mut payload, *value);
            }
            // Redis saves a signed value as the unsigned one of the same bits, and loads it so.
            RecordValue::Signed(value) => {
                push_length(&mut payload, OPCODE_UNSIGNED);
                push_length(&mut payload, *value as u64);
            }
            RecordValue::Double(value) => {
                push_length(&mut payload, OPCODE_DOUBLE);
                payload.extend_from_slice(&value.to_le_bytes());
            }
            RecordValue::Bytes(bytes) => {
                push_length(&mut payload, OPCODE_STRING);
                push_length(&mut payload, bytes.len() as u64);
                payload.extend_from_slice(bytes);
            }
        }
    }
    push_length(&mut payload, OPCODE_EOF);
    payload.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let checksum = crc64_jones(&payload);
    payload.extend_from_slice(&checksum.to_le_bytes());
    Some(payload)
}

/// The 64-bit id Redis gives a module type: its name in 54 bits, then 10 of version.
fn type_id(type_name: &str, encoding_version: i32) -> Option<u64> {
    let version = u64::try_from(encoding_version).ok().filter(|&version| version < 1024)?;
    if type_name.len() != 9 {
        return None;
    }
    let mut id = 0u64;
    for character in type_name.bytes() {
        let position = NAME_CHARACTERS.iter().position(|&known| known == character)?;
        id = (id << 6) | position as u64;
    }
    Some((id << 10) | version)
}

/// RDB's length encoding: 6 bits in one byte, 14 bits in two, then 32 or 64 bits after a
/// marker byte, big-endian.
fn push_length(out: &mut Vec<u8>, value: u64) {
    if value < 1 << 6 {
        out.push(value as u8);
    } else if value < 1 << 14 {
        out.push(0x40 | (value >> 8) as u8);
        out.push(value as u8);
    } else if let Ok(value) = u32::try_from(value) {
        out.push(0x80);
        out.extend_from_slice(&value.to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&value.to_be_bytes());
    }
}

/// Redis's CRC-64: the Jones polynomial, reflected, starting from 0, no final xor.
fn crc64_jones(bytes: &[u8]) -> u64 {
    const REFLECTED_POLYNOMIAL: u64 = 0x95ac_9329_ac4b_c9b5;
    static TABLE: std::sync::OnceLock<[u64; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table = [0u64; 256];
        for (byte, entry) in table.iter_mut().enumerate() {
            let mut crc = byte as u64;
            for _ in 0..8 {
                crc = if crc & 1 == 1 { (crc >> 1) ^ REFLECTED_POLYNOMIAL } else { crc >> 1 };
            }
            *entry = crc;
        }
        table
    });
    bytes.iter().fold(0u64, |crc, &byte| table[((crc ^ u64::from(byte)) & 0xff) as usize] ^ (crc >> 8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksum_is_redis_crc64() {
        // The check value Redis's own crc64 test asserts.
        assert_eq!(crc64_jones(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }

    #[test]
    fn lengths_take_the_shortest_form() {
        let encoded = |value| {
            let mut out = Vec::new();
            push_length(&mut out, value);
            out
        };
        assert_eq!(encoded(63), [63]);
        assert_eq!(encoded(64), [0x40, 64]);
        assert_eq!(encoded(16_383), [0x7f, 0xff]);
        assert_eq!(encoded(16_384), [0x80, 0, 0, 0x40, 0]);
        assert_eq!(encoded(1 << 32), [0x81, 0, 0, 0, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn type_ids_refuse_what_redis_would_not_register() {
        assert!(type_id("CMSk-TYPE", 0).is_some());
        assert!(type_id("CMSk-TYP", 0).is_none());
        assert!(type_id("CMSk TYPE", 0).is_none());
        assert!(type_id("CMSk-TYPE", 1024).is_none());
        assert!(type_id("CMSk-TYPE", -1).is_none());
        assert_ne!(type_id("CMSk-TYPE", 0), type_id("CMSk-TYPE", 1));
    }
}
