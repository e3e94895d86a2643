//! One sub-filter in RedisBloom's layout: a classic Bloom filter over one bit array, probe
//! `i` at bit `(a + i * b) mod m`, bit `x` being bit `x % 8` of byte `x / 8`.
//!
//! Its fields are RedisBloom's, kept as they were stored, because they are written back out
//! unchanged (SCANDUMP, AOF) and reported by BF.DEBUG:
//! - `entries`: the capacity; for power-of-two filters raised to what the rounded size holds;
//! - `bpe`: bits per entry, `-ln(error) / ln(2)^2`;
//! - `hashes`: `ceil(ln(2) * bpe)`;
//! - `bits`: the bit count; `bytes * 8` in every version but the first, which kept
//!   `entries * bpe` here;
//! - `n2`: 0, or the exponent of the power-of-two size that probes are taken modulo.
//!
//! Invariant (checked by [`LinkFields::check`] before anything is allocated, and met by
//! [`LinkFields::sized`]): the modulus is at least 1 and at most the bit array's length in
//! bits, so every probe lands inside the array.

use crate::bytes::{AllocationFailed, ByteArray};
use crate::murmur::HashPair;

/// RedisBloom's approximations of ln(2)^2 and ln(2). The layout of a filter depends on the
/// exact values, so these are the ones it uses, not the precise constants.
const LN2_SQUARED: f64 = 0.480_453_013_918_201;
#[allow(clippy::approx_constant)]
const LN2: f64 = 0.693_147_180_559_945;

/// RedisBloom's options, as stored with every filter. This one: a link's size is what its
/// capacity and rate call for, over whole 64-bit words, not rounded up to a power of two.
pub const OPTION_NO_ROUND: u32 = 1;
/// Option: items are hashed with the 64-bit MurmurHash64A, not the 32-bit MurmurHash2.
pub const OPTION_FORCE_64: u32 = 4;
/// Option: the filter never grows; once full, it refuses new items.
pub const OPTION_NO_SCALING: u32 = 8;
/// Every option this module knows; a stored filter with any other is refused.
pub const KNOWN_OPTIONS: u32 = OPTION_NO_ROUND | OPTION_FORCE_64 | OPTION_NO_SCALING;

/// Most probes per item accepted from stored data: what an error rate at the bottom of the
/// f64 range needs (about 1075), with room.
pub const MAX_HASHES: u32 = 1100;

/// A link's stored description: everything but its bits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkFields {
    /// Capacity in items; for power-of-two links, raised to what the rounded size holds.
    pub entries: u64,
    /// The false-positive rate the link was sized for.
    pub error: f64,
    /// Bits per entry, `-ln(error) / ln(2)^2` with RedisBloom's constant.
    pub bpe: f64,
    /// Probes per item, `ceil(ln(2) * bpe)`.
    pub hashes: u32,
    /// The bit count as stored: `bytes * 8`, but `entries * bpe` in the first version's links.
    pub bits: u64,
    /// 0, or the exponent of the power-of-two size probes are taken modulo.
    pub n2: u8,
    /// Length of the bit array in bytes.
    pub bytes: u64,
    /// Items added to this link.
    pub items: u64,
}

/// What a description may be refused for; the decoders add context.
pub type FieldError = &'static str;

/// Bits per entry for a rate of `error`, computed as RedisBloom computes it.
pub fn bits_per_entry(error: f64) -> f64 {
    (error.ln() / LN2_SQUARED).abs()
}

/// Probes per item for `bpe` bits per entry: a whole number, left as an `f64` so that callers
/// check its range before narrowing it.
pub fn hashes_for(bpe: f64) -> f64 {
    (LN2 * bpe).ceil()
}

impl LinkFields {
    /// The link RedisBloom creates for `entries` items at `error` under `options`, or `None`
    /// for sizes no machine could hold and for the empty bit arrays RedisBloom would make of
    /// rates near 1 (which this module never asks for: it caps rates at 0.25).
    pub fn sized(entries: u64, error: f64, options: u32) -> Option<LinkFields> {
        if entries == 0 || !(error > 0.0 && error < 1.0) {
            return None;
        }
        let bpe = bits_per_entry(error);
        let wanted_bits = entries as f64 * bpe;
        // Far past any real filter, and where the sizes below would overflow.
        if wanted_bits.is_nan() || wanted_bits >= (1u64 << 60) as f64 {
            return None;
        }
        let (modulus, n2, entries) = if options & OPTION_NO_ROUND != 0 {
            (wanted_bits as u64, 0u8, entries)
        } else {
            // The next power of two above the wanted size; the room it adds holds more items.
            if wanted_bits < 1.0 {
                return None;
            }
            let n2 = binary_exponent(wanted_bits) as u8 + 1;
            let modulus = 1u64 << n2;
            let spare_bits = (modulus as f64 - wanted_bits) as u64;
            let spare_items = (spare_bits as f64 / bpe) as u64;
            (modulus, n2, entries.checked_add(spare_items)?)
        };
        let bytes = modulus.div_ceil(64) * 8;
        let hashes = hashes_for(bpe);
        if bytes == 0 || hashes > f64::from(MAX_HASHES) {
            return None;
        }
        Some(LinkFields { entries, error, bpe, hashes: hashes as u32, bits: bytes * 8, n2, bytes, items: 0 })
    }

    /// The bit count probes are taken modulo; 0 for a size exponent past 63, which `check`
    /// refuses.
    pub fn modulus(&self) -> u64 {
        match self.n2 {
            0 => self.bits,
            n2 => 1u64.checked_shl(u32::from(n2)).unwrap_or(0),
        }
    }

    /// Refuses a description that no version of RedisBloom could have written, before any
    /// memory is given to it. The derived fields must agree with `entries` and `error` as
    /// RedisBloom computes them: `hashes` exactly from the stored `bpe` (RedisBloom 2.8
    /// checks the same), `bpe` and the size with a little tolerance for a server whose
    /// floating point differs in the last bits.
    pub fn check(&self) -> Result<(), FieldError> {
        if !(self.error > 0.0 && self.error < 1.0) {
            return Err("error rate out of range");
        }
        if self.entries == 0 {
            return Err("zero capacity");
        }
        if self.items > self.entries {
            return Err("more items than capacity");
        }
        let bpe = bits_per_entry(self.error);
        let bpe_matches = (self.bpe - bpe).abs() <= bpe * 1e-9;
        if !bpe_matches {
            return Err("bits per entry do not match the error rate");
        }
        if f64::from(self.hashes) != hashes_for(self.bpe) {
            return Err("hash count does not match the error rate");
        }
        if self.hashes > MAX_HASHES || self.n2 > 63 {
            return Err("hash count or size exponent out of range");
        }
        let modulus = self.modulus();
        let array_bits = self.bytes.checked_mul(8).ok_or("size out of range")?;
        if modulus == 0 || modulus > array_bits || self.bits > array_bits {
            return Err("size does not match the bit array");
        }
        // The size must be the one the capacity and rate call for: `entries * bpe` bits
        // rounded up to a 64-bit word, or (power-of-two filters) the power of two above it,
        // into which `entries` was then raised.
        let wanted = self.entries as f64 * self.bpe;
        let (low, high) = if self.n2 > 0 {
            if self.bits != array_bits || self.bytes != modulus.div_ceil(64) * 8 {
                return Err("size does not match the power of two");
            }
            (modulus as f64 / 2.0, modulus as f64)
        } else {
            // The first version kept `entries * bpe` itself in `bits`, over whole bytes.
            if array_bits - self.bits >= 64 {
                return Err("size does not match the bit array");
            }
            (self.bits as f64 - 64.0, self.bits as f64 + 1.0)
        };
        if !(wanted * (1.0 + 1e-9) >= low && wanted * (1.0 - 1e-9) <= high) {
            return Err("size does not match capacity and error rate");
        }
        Ok(())
    }
}

/// The exponent of `value` in base 2 (C's `logb`), for a finite value of at least 1.
fn binary_exponent(value: f64) -> u32 {
    ((value.to_bits() >> 52) & 0x7ff) as u32 - 1023
}

/// One sub-filter: its stored description and its bits.
pub struct Link {
    fields: LinkFields,
    modulus: u64,
    bits: ByteArray,
}

impl Link {
    /// A link with clear bits for a description that passed [`LinkFields::check`] or came
    /// from [`LinkFields::sized`].
    pub fn try_new(fields: LinkFields) -> Result<Link, AllocationFailed> {
        Link::with_bits(fields, ByteArray::try_zeroed(fields.bytes)?).ok_or(AllocationFailed)
    }

    /// A link of a checked description and its bits, read already; `None` when their length
    /// is not the description's.
    pub fn with_bits(fields: LinkFields, bits: ByteArray) -> Option<Link> {
        (bits.len() as u64 == fields.bytes).then(|| Link { fields, modulus: fields.modulus(), bits })
    }

    /// A deep copy, bits included.
    pub fn try_clone(&self) -> Result<Link, AllocationFailed> {
        Ok(Link { fields: self.fields, modulus: self.modulus, bits: self.bits.try_clone()? })
    }

    fn probes(&self, hash: &HashPair) -> impl Iterator<Item = u64> + '_ {
        let HashPair { a, b } = *hash;
        (0..u64::from(self.fields.hashes)).map(move |i| a.wrapping_add(i.wrapping_mul(b)) % self.modulus)
    }

    /// Whether every probe of the item lands on a set bit.
    #[inline]
    pub fn contains(&self, hash: &HashPair) -> bool {
        let bits = self.bits.as_slice();
        self.probes(hash).all(|bit| bits[(bit >> 3) as usize] & (1 << (bit & 7)) != 0)
    }

    /// Sets the item's bits and counts it. The chain calls it only for an item that tested
    /// absent everywhere, as RedisBloom does.
    pub fn insert(&mut self, hash: &HashPair) {
        let HashPair { a, b } = *hash;
        let modulus = self.modulus;
        let bits = self.bits.as_mut_slice();
        for i in 0..u64::from(self.fields.hashes) {
            let bit = a.wrapping_add(i.wrapping_mul(b)) % modulus;
            bits[(bit >> 3) as usize] |= 1 << (bit & 7);
        }
        self.fields.items += 1;
    }

    /// Starts loading the cache lines of the item's probes.
    #[inline]
    pub fn prefetch(&self, hash: &HashPair) {
        for bit in self.probes(hash) {
            self.bits.prefetch((bit >> 3) as usize);
        }
    }

    /// The item count stored after the bits in an RDB record.
    pub fn set_items(&mut self, items: u64) -> Result<(), FieldError> {
        if items > self.fields.entries {
            return Err("more items than capacity");
        }
        self.fields.items = items;
        Ok(())
    }

    /// Whether the link holds `entries` items: the chain adds no more to it.
    pub fn is_full(&self) -> bool {
        self.fields.items >= self.fields.entries
    }

    /// The stored description, its item count included.
    pub fn fields(&self) -> &LinkFields {
        &self.fields
    }

    /// The bit array, `fields().bytes` long: bit `x` is bit `x % 8` of byte `x / 8`.
    pub fn bytes(&self) -> &[u8] {
        self.bits.as_slice()
    }

    /// The bit array, writable: where a dump's chunks are loaded.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.bits.as_mut_slice()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CREATED: u32 = OPTION_NO_ROUND | OPTION_FORCE_64;

    #[test]
    fn sizes_as_redisbloom_reports_them() {
        // BF.DEBUG of the real RedisBloom 2.8.2 after BF.RESERVE k 0.01 100 (first link at
        // 0.005) and with NONSCALING (0.01).
        let link = LinkFields::sized(100, 0.005, CREATED).unwrap();
        assert_eq!((link.bytes, link.bits, link.hashes, link.entries, link.n2), (144, 1152, 8, 100, 0));
        let link = LinkFields::sized(100, 0.01, CREATED).unwrap();
        assert_eq!((link.bytes, link.bits, link.hashes), (120, 960, 7));
        let link = LinkFields::sized(1, 0.495, CREATED).unwrap();
        assert_eq!((link.bytes, link.bits, link.hashes), (8, 64, 2));
    }

    #[test]
    fn rounded_links_are_a_power_of_two_and_hold_more_items() {
        let link = LinkFields::sized(1000, 0.01, OPTION_FORCE_64).unwrap();
        assert_eq!(link.modulus(), 16384);
        assert_eq!(link.bytes, 2048);
        assert!(link.entries > 1000 && (link.entries as f64 * link.bpe) <= 16384.0);
        assert_eq!(link.check(), Ok(()));
    }

    #[test]
    fn every_sized_link_passes_the_check() {
        for options in [CREATED, OPTION_FORCE_64, 0, OPTION_NO_ROUND] {
            for entries in [1u64, 2, 7, 100, 12345, 1 << 30] {
                let mut error = 0.5;
                while error > 1e-300 {
                    let link = LinkFields::sized(entries, error, options).unwrap();
                    assert_eq!(link.check(), Ok(()), "{entries} at {error:e}, options {options}: {link:?}");
                    error /= 7.0;
                }
            }
        }
    }

    #[test]
    fn inconsistent_descriptions_are_refused() {
        let good = LinkFields::sized(1000, 0.01, CREATED).unwrap();
        let refused = [
            LinkFields { bytes: good.bytes / 2, ..good },
            LinkFields { bytes: good.bytes * 2, bits: good.bits * 2, ..good },
            LinkFields { bits: good.bits + 8, ..good },
            LinkFields { hashes: good.hashes + 5, ..good },
            LinkFields { hashes: 0, ..good },
            LinkFields { bpe: good.bpe * 1.5, ..good },
            LinkFields { error: 0.0, ..good },
            LinkFields { error: f64::NAN, ..good },
            LinkFields { entries: 0, ..good },
            LinkFields { entries: good.entries * 3, ..good },
            LinkFields { items: good.entries + 1, ..good },
            LinkFields { n2: 64, ..good },
            LinkFields { n2: 20, ..good },
            LinkFields { bytes: 0, bits: 0, ..good },
        ];
        for fields in refused {
            assert!(fields.check().is_err(), "{fields:?}");
        }
    }

    #[test]
    fn an_added_item_tests_present_and_others_mostly_not() {
        let mut link = Link::try_new(LinkFields::sized(1000, 0.01, CREATED).unwrap()).unwrap();
        for n in 0..1000u32 {
            link.insert(&HashPair::wide(&n.to_le_bytes()));
        }
        assert!((0..1000u32).all(|n| link.contains(&HashPair::wide(&n.to_le_bytes()))));
        let false_positives =
            (1000..101_000u32).filter(|n| link.contains(&HashPair::wide(&n.to_le_bytes()))).count();
        assert!(false_positives < 1500, "{false_positives} false positives in 100,000");
    }
}
