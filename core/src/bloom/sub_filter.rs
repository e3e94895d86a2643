//! One fixed-size Bloom filter: a link of the scalable chain.

use super::bits::{Block, BlockArray};
use super::hash::ItemHash;
use super::params::Layout;
use crate::bytes::{AllocationFailed, ByteArray};

/// An item's bits in its first block, for links that set `hashes` bits per block (0: none
/// made yet): see [`SubFilter::contains_patterned`].
pub struct FirstBlockPattern {
    hashes: u32,
    block: Block,
}

impl FirstBlockPattern {
    /// Becomes the item's pattern for links of `hashes` hashes.
    #[inline(never)]
    fn make(&mut self, hash: &ItemHash, hashes: u32) {
        *self = FirstBlockPattern { hashes, block: Block::pattern(hash.bit_positions(hashes, 0)) };
    }
}

impl Default for FirstBlockPattern {
    /// None made yet: the first link asked makes it.
    #[inline]
    fn default() -> FirstBlockPattern {
        FirstBlockPattern { hashes: 0, block: Block::pattern(std::iter::empty()) }
    }
}

/// One link of a [`BloomFilter`](super::BloomFilter): a blocked bit array of fixed size, the
/// parameters it was sized for, and the items it took.
pub struct SubFilter {
    capacity: u64,
    error_rate: f64,
    layout: Layout,
    /// Items added to this link; the link is full when it reaches `capacity`.
    items: u64,
    bits: BlockArray,
}

impl SubFilter {
    /// An empty link sized for `capacity` items at `error_rate`. The caller has checked the
    /// parameters and the memory budget (see [`Layout::for_capacity`]).
    pub fn try_new(capacity: u64, error_rate: f64, layout: Layout) -> Result<SubFilter, AllocationFailed> {
        Ok(SubFilter { capacity, error_rate, layout, items: 0, bits: BlockArray::try_zeroed(layout.blocks)? })
    }

    /// A link rebuilt from decoded parameters and its bits; `None` when the bits are not
    /// the layout's size (or could not be aligned).
    pub fn restore(
        capacity: u64,
        error_rate: f64,
        layout: Layout,
        items: u64,
        bits: ByteArray,
    ) -> Option<SubFilter> {
        if bits.len() as u64 != layout.bits() / 8 {
            return None;
        }
        Some(SubFilter { capacity, error_rate, layout, items, bits: BlockArray::from_bytes(bits)? })
    }

    /// A deep copy, bits included.
    pub fn try_clone(&self) -> Result<SubFilter, AllocationFailed> {
        Ok(SubFilter {
            capacity: self.capacity,
            error_rate: self.error_rate,
            layout: self.layout,
            items: self.items,
            bits: self.bits.try_clone()?,
        })
    }

    /// Whether all the item's bits, in each of its blocks, are set. They are for every item
    /// added; for an item never added, about as often as the link's error rate.
    #[inline]
    pub fn contains(&self, hash: &ItemHash) -> bool {
        let Layout { blocks, hashes, blocks_per_item } = self.layout;
        let bits = self.bits.as_slice();
        (0..blocks_per_item)
            .all(|nth| bits[hash.block_index(blocks, nth)].test_all(hash.bit_positions(hashes, nth)))
    }

    /// As [`contains`](Self::contains), the item's first block tested against its pattern,
    /// made once per item by the first link asked, for every link of its number of hashes:
    /// what a lookup over many links (a windowed filter's generations) asks each of them.
    ///
    /// A link of another number of hashes (an overflow among the base links) is tested bit by
    /// bit instead, which stops at the first clear bit, and the pattern is kept for the links
    /// that share it: making the link's own pattern cost about 100 instructions, and then
    /// again for the next base link.
    ///
    /// Inlined into the lookup's loop over links, with what most lookups never need (a
    /// pattern to make, a link of another number of hashes, an item's further blocks) out of
    /// line: called per link, its frame and the chain's were most of the 200 instructions (of
    /// 1,750) a windowed BF.EXISTS spent on calls (callgrind, four generations).
    #[allow(clippy::inline_always, reason = "measured: see above")]
    #[inline(always)]
    pub fn contains_patterned(&self, hash: &ItemHash, pattern: &mut FirstBlockPattern) -> bool {
        let Layout { blocks, hashes, blocks_per_item } = self.layout;
        if pattern.hashes != hashes {
            if pattern.hashes != 0 {
                return self.contains_unpatterned(hash);
            }
            pattern.make(hash, hashes);
        }
        self.bits.as_slice()[hash.block_index(blocks, 0)].holds_pattern(&pattern.block)
            && (blocks_per_item == 1 || self.holds_further_blocks(hash))
    }

    /// [`contains`](Self::contains), out of the lookup's loop.
    #[inline(never)]
    fn contains_unpatterned(&self, hash: &ItemHash) -> bool {
        self.contains(hash)
    }

    /// Whether every block of the item's but the first holds its bits.
    #[inline(never)]
    fn holds_further_blocks(&self, hash: &ItemHash) -> bool {
        let Layout { blocks, hashes, blocks_per_item } = self.layout;
        let bits = self.bits.as_slice();
        (1..blocks_per_item)
            .all(|nth| bits[hash.block_index(blocks, nth)].test_all(hash.bit_positions(hashes, nth)))
    }

    /// Sets the item's bits. When one of them was clear the item was not (probably) present:
    /// it is counted and the answer is `true`; otherwise nothing changed and it is `false`.
    /// Testing and setting in one pass touches the block once.
    #[inline]
    pub fn insert(&mut self, hash: &ItemHash) -> bool {
        let Layout { blocks, hashes, blocks_per_item } = self.layout;
        let bits = self.bits.as_mut_slice();
        let mut added = false;
        for nth in 0..blocks_per_item {
            added |= bits[hash.block_index(blocks, nth)].set_all(hash.bit_positions(hashes, nth));
        }
        self.items += u64::from(added);
        added
    }

    /// As [`insert`](Self::insert), the item's first block set from its pattern
    /// ([`contains_patterned`](Self::contains_patterned)), made here unless `pattern` was made
    /// for this link's number of hashes: where the pattern serves the lookups that follow (a
    /// windowed add asks the older generations), setting the block's bits one by one would be
    /// work done twice.
    #[inline]
    pub fn insert_patterned(&mut self, hash: &ItemHash, pattern: &mut FirstBlockPattern) -> bool {
        let Layout { blocks, hashes, blocks_per_item } = self.layout;
        if pattern.hashes != hashes {
            pattern.make(hash, hashes);
        }
        let bits = self.bits.as_mut_slice();
        let mut added = bits[hash.block_index(blocks, 0)].set_pattern(&pattern.block);
        for nth in 1..blocks_per_item {
            added |= bits[hash.block_index(blocks, nth)].set_all(hash.bit_positions(hashes, nth));
        }
        self.items += u64::from(added);
        added
    }

    /// Asks the CPU to start loading the item's blocks, one cache line each.
    #[inline]
    pub fn prefetch(&self, hash: &ItemHash) {
        for nth in 0..self.layout.blocks_per_item {
            self.bits.prefetch(hash.block_index(self.layout.blocks, nth));
        }
    }

    /// Asks the CPU to start loading the item's first block only.
    #[inline]
    pub fn prefetch_first_block(&self, hash: &ItemHash) {
        self.bits.prefetch(hash.block_index(self.layout.blocks, 0));
    }

    /// Whether the link has taken `capacity` items: the chain adds no more to it.
    pub fn is_full(&self) -> bool {
        self.items >= self.capacity
    }

    /// Items the link was sized for.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The false-positive rate the link was sized for: its share of the chain's.
    pub fn error_rate(&self) -> f64 {
        self.error_rate
    }

    /// Its blocks and the bits set per item.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Items added to the link (inserts that answered `true`).
    pub fn items(&self) -> u64 {
        self.items
    }

    /// The bits as bytes, in the order [`super::bits`] documents: what a dump writes.
    pub fn bytes(&self) -> &[u8] {
        self.bits.as_bytes()
    }

    /// The bits as writable bytes: where a dump's chunks are loaded.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.bits.as_bytes_mut()
    }

    /// Length of the bits in bytes: [`Layout::bits`] / 8.
    pub fn byte_len(&self) -> usize {
        self.bits.byte_len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A windowed generation's adds set the first block from the pattern its lookups share:
    /// the same bits and answers as a plain add, with one block per item and with several.
    #[test]
    fn an_insert_from_a_pattern_is_an_insert() {
        for (capacity, rate) in [(2_000, 0.01), (2_000, 0.0001)] {
            let layout = Layout::for_capacity(capacity, rate).unwrap();
            let mut plain = SubFilter::try_new(capacity, rate, layout).unwrap();
            let mut patterned = SubFilter::try_new(capacity, rate, layout).unwrap();
            for n in 0..capacity * 2 {
                let hash = ItemHash::of(&(n % 1_500).to_le_bytes());
                let mut pattern = FirstBlockPattern::default();
                assert_eq!(patterned.insert_patterned(&hash, &mut pattern), plain.insert(&hash));
                assert!(patterned.contains_patterned(&hash, &mut pattern));
            }
            assert_eq!(patterned.bytes(), plain.bytes());
            assert_eq!(patterned.items(), plain.items());
        }
        let blocks = |rate| Layout::for_capacity(2_000, rate).unwrap().blocks_per_item;
        assert_eq!((blocks(0.01), blocks(0.0001) > 1), (1, true), "both layouts covered");
    }

    /// A pattern made for one number of hashes answers for links of another as a plain
    /// lookup does, and is left as it was for the links it serves.
    #[test]
    fn links_of_another_number_of_hashes_answer_as_plain_lookups() {
        let made = |capacity, rate| {
            let layout = Layout::for_capacity(capacity, rate).unwrap();
            let mut link = SubFilter::try_new(capacity, rate, layout).unwrap();
            for n in 0..capacity {
                link.insert(&ItemHash::of(&n.to_le_bytes()));
            }
            link
        };
        let (first, other) = (made(2_000, 0.01), made(3_000, 0.000_01));
        assert_ne!(first.layout.hashes, other.layout.hashes);
        for n in 0..6_000u64 {
            let hash = ItemHash::of(&n.to_le_bytes());
            let mut pattern = FirstBlockPattern::default();
            assert_eq!(first.contains_patterned(&hash, &mut pattern), first.contains(&hash));
            assert_eq!(other.contains_patterned(&hash, &mut pattern), other.contains(&hash));
            assert_eq!(pattern.hashes, first.layout.hashes);
            assert_eq!(first.contains_patterned(&hash, &mut pattern), first.contains(&hash));
        }
    }
}
