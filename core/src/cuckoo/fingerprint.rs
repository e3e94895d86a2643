//! Fingerprints: what a slot keeps of an item. RedisBloom's filters keep 8 bits, derived as it
//! derives them; redbloom's wider ones (16 and 32 bits) buy lower false-positive rates, and are
//! what `ERROR` on CF.RESERVE and CF.INSERT picks.
//!
//! A slot is as wide as its fingerprint, stored little-endian; 0 marks it empty, so a
//! fingerprint is never 0. Buckets are `bucket_size` slots laid end to end.

use crate::murmur::murmur64a;

/// A fingerprint's bits, which is also a slot's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    /// RedisBloom's, and the default: `hash % 255 + 1`.
    Eight,
    /// `(hash >> 32) % 65535 + 1`.
    Sixteen,
    /// `(hash >> 32) % (2^32 - 1) + 1`.
    ThirtyTwo,
}

/// The bucket sizes `ERROR` chooses among when the caller names none, with the share of
/// slots a sub-filter of each holds at least when it first refuses an item (RedisBloom's 20
/// iterations, 2^20 slots, the lowest of three item sets; checked by a test). A filter's bits
/// per item are its fingerprint bits over that share: larger buckets cost more fingerprint
/// bits for a rate, and fill much further.
///
/// These numbers are part of the format: a replay of an AOF written before new filters were
/// replicated as their header makes the filter again from the `ERROR` it holds, so other
/// numbers in a later version would build another filter from the same command. The choices
/// they make are pinned by a test below.
pub(super) const LOAD_AT_FIRST_REFUSAL: [(u16, f64); 4] = [(8, 0.85), (4, 0.70), (2, 0.33), (1, 0.21)];

impl Width {
    /// Every width, in the order a rate's width is chosen.
    pub const NARROWEST_FIRST: [Width; 3] = [Width::Eight, Width::Sixteen, Width::ThirtyTwo];

    /// Bits of a fingerprint: 8, 16 or 32.
    pub fn bits(self) -> u16 {
        match self {
            Width::Eight => 8,
            Width::Sixteen => 16,
            Width::ThirtyTwo => 32,
        }
    }

    /// Bytes of a slot.
    pub fn bytes(self) -> usize {
        usize::from(self.bits() / 8)
    }

    /// The width of `bits`-bit fingerprints; `None` for any count but 8, 16 and 32.
    pub fn from_bits(bits: u64) -> Option<Width> {
        Width::NARROWEST_FIRST.into_iter().find(|width| u64::from(width.bits()) == bits)
    }

    /// Whether RedisBloom can hold a filter of this width (and read its RDB record, header
    /// and chunks).
    pub fn is_redisbloom(self) -> bool {
        self == Width::Eight
    }

    /// How many fingerprints there are: every value of the width but 0.
    fn values(self) -> u64 {
        (1u64 << self.bits()) - 1
    }

    /// The highest chance that a non-member tests present in one sub-filter: with all the
    /// slots of its two buckets taken, each holds its fingerprint with chance 1 / `values`.
    pub fn worst_rate(self, bucket_size: u16) -> f64 {
        2.0 * f64::from(bucket_size) / self.values() as f64
    }

    /// The width, and the bucket size, of the smallest filter whose worst rate is at most
    /// `rate`: the caller's bucket size with the narrowest width that meets it, else the
    /// pair with the fewest bits per item at the load each bucket size reaches (`LOAD_AT_FIRST_REFUSAL`) among the bucket sizes
    /// `capacity` leaves room for (two buckets). `None` when even 32 bits cannot.
    pub fn for_error_rate(rate: f64, bucket_size: Option<u16>, capacity: u64) -> Option<(Width, u16)> {
        if let Some(size) = bucket_size {
            return Width::NARROWEST_FIRST
                .into_iter()
                .find(|width| width.worst_rate(size) <= rate)
                .map(|w| (w, size));
        }
        let bits_per_item = |(width, _, load): (Width, u16, f64)| f64::from(width.bits()) / load;
        Width::NARROWEST_FIRST
            .into_iter()
            .flat_map(|width| LOAD_AT_FIRST_REFUSAL.map(|(size, load)| (width, size, load)))
            .filter(|&(width, size, _)| width.worst_rate(size) <= rate && 2 * u64::from(size) <= capacity)
            .min_by(|a, b| bits_per_item(*a).total_cmp(&bits_per_item(*b)))
            .map(|(width, size, _)| (width, size))
    }
}

/// An item as a filter sees it: its 64-bit hash, which places its first bucket, and its
/// fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooHash {
    pub(super) hash: u64,
    pub(super) fingerprint: u32,
}

impl CuckooHash {
    /// Hashes `item` for a filter of `width`: MurmurHash64A with seed 0, as RedisBloom does.
    pub fn of(item: &[u8], width: Width) -> CuckooHash {
        let hash = murmur64a(item, 0);
        let fingerprint = match width {
            Width::Eight => hash % 255 + 1,
            // The high half: buckets come from the low bits, and a fingerprint that repeated
            // them would tell items of one bucket apart less well.
            wide => (hash >> 32) % wide.values() + 1,
        };
        CuckooHash { hash, fingerprint: fingerprint as u32 }
    }
}

/// A slot's integer type. Filters hold bytes; each operation runs over the slot type of the
/// filter's width (see `with_slot!`), so the loops compare whole slots.
pub(super) trait Slot: Copy + Eq {
    const BYTES: usize;
    const EMPTY: Self;
    /// `fingerprint` fits: it was made for this width.
    fn of(fingerprint: u32) -> Self;
    fn fingerprint(self) -> u32;
    fn read(slot: &[u8]) -> Self;
    fn write(self, slot: &mut [u8]);
}

macro_rules! slot_type {
    ($type:ty) => {
        impl Slot for $type {
            const BYTES: usize = std::mem::size_of::<$type>();
            const EMPTY: $type = 0;

            fn of(fingerprint: u32) -> $type {
                fingerprint as $type
            }

            fn fingerprint(self) -> u32 {
                u32::from(self)
            }

            fn read(slot: &[u8]) -> $type {
                let mut bytes = [0u8; std::mem::size_of::<$type>()];
                bytes.copy_from_slice(&slot[..Self::BYTES]);
                <$type>::from_le_bytes(bytes)
            }

            fn write(self, slot: &mut [u8]) {
                slot[..Self::BYTES].copy_from_slice(&self.to_le_bytes());
            }
        }
    };
}

slot_type!(u8);
slot_type!(u16);
slot_type!(u32);

/// Runs `$body` with `$slot` naming the slot type of `$width`.
macro_rules! with_slot {
    ($width:expr, $slot:ident => $body:expr) => {
        match $width {
            $crate::cuckoo::fingerprint::Width::Eight => {
                type $slot = u8;
                $body
            }
            $crate::cuckoo::fingerprint::Width::Sixteen => {
                type $slot = u16;
                $body
            }
            $crate::cuckoo::fingerprint::Width::ThirtyTwo => {
                type $slot = u32;
                $body
            }
        }
    };
}
pub(super) use with_slot;

/// The index of the first slot of `bucket` holding `wanted`.
pub(super) fn position<S: Slot>(bucket: &[u8], wanted: S) -> Option<usize> {
    bucket.chunks_exact(S::BYTES).position(|slot| S::read(slot) == wanted)
}

/// How many slots of `bucket` hold `wanted`.
pub(super) fn occurrences<S: Slot>(bucket: &[u8], wanted: S) -> u64 {
    bucket.chunks_exact(S::BYTES).filter(|slot| S::read(slot) == wanted).count() as u64
}

pub(super) fn slot<S: Slot>(bucket: &[u8], index: usize) -> S {
    S::read(&bucket[index * S::BYTES..])
}

/// Puts `value` in slot `index` and answers what it held.
pub(super) fn replace<S: Slot>(bucket: &mut [u8], index: usize, value: S) -> S {
    let slot = &mut bucket[index * S::BYTES..];
    let old = S::read(slot);
    value.write(slot);
    old
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_width_and_bucket_size_are_the_smallest_that_meet_the_rate() {
        assert_eq!(Width::for_error_rate(0.1, None, 1024), Some((Width::Eight, 8)));
        // 8 * 2 / 255 is 6.3%, and a bucket of one slot (0.78%) fills too little to pay.
        assert_eq!(Width::for_error_rate(0.01, None, 1024), Some((Width::Sixteen, 8)));
        assert_eq!(Width::for_error_rate(0.01, Some(2), 1024), Some((Width::Sixteen, 2)));
        assert_eq!(Width::for_error_rate(0.03, Some(1), 1024), Some((Width::Eight, 1)));
        assert_eq!(Width::for_error_rate(1.5e-4, None, 1024), Some((Width::Sixteen, 4)));
        assert_eq!(Width::for_error_rate(1e-6, None, 1024), Some((Width::ThirtyTwo, 8)));
        assert_eq!(Width::for_error_rate(1e-9, None, 1024), Some((Width::ThirtyTwo, 2)));
        assert_eq!(Width::for_error_rate(1e-10, None, 1024), None);
        assert_eq!(Width::for_error_rate(1e-9, Some(255), 1024), None);
        assert_eq!(Width::for_error_rate(0.01, None, 12), Some((Width::Sixteen, 4)), "room for two buckets");
        for rate in [0.5, 0.01, 1e-3, 1e-5, 1e-7, 1e-9] {
            for bucket_size in [None, Some(1), Some(3), Some(8)] {
                if let Some((width, size)) = Width::for_error_rate(rate, bucket_size, 1024) {
                    assert!(width.worst_rate(size) <= rate, "{rate} {bucket_size:?}");
                }
            }
        }
    }

    #[test]
    fn eight_bit_fingerprints_are_redisbloom_s_and_none_is_zero() {
        // From docs/cf-commands.md: item `a` has fingerprint 196.
        assert_eq!(CuckooHash::of(b"a", Width::Eight).fingerprint, 196);
        for width in Width::NARROWEST_FIRST {
            for n in 0..10_000u32 {
                let hash = CuckooHash::of(&n.to_le_bytes(), width);
                assert!(hash.fingerprint != 0 && u64::from(hash.fingerprint) <= width.values());
            }
        }
    }

    #[test]
    fn slots_read_what_was_written() {
        let mut bucket = [0u8; 8];
        assert_eq!(replace::<u16>(&mut bucket, 2, 0xbeef), 0);
        assert_eq!(bucket, [0, 0, 0, 0, 0xef, 0xbe, 0, 0]);
        assert_eq!(position::<u16>(&bucket, 0xbeef), Some(2));
        assert_eq!(occurrences::<u16>(&bucket, u16::EMPTY), 3);
        assert_eq!(slot::<u32>(&bucket, 1), 0x0000_beef);
        assert_eq!(replace::<u32>(&mut bucket, 1, 7), 0xbeef);
    }
}
