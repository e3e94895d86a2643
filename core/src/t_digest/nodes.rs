//! The node array of a digest: every centroid and buffered value it holds, as a set. Its order
//! is nobody's business: a compression and a save both sort it first, by a total order
//! ([`canonical`]) in which nodes that compare equal are identical, so that what they produce
//! depends on which nodes there are and never on the order they arrived in. That is what lets a
//! digest keep values buffered between commands and still be, on a replica or after a restart,
//! the very digest its master holds: the record lists the set, and the set is all that counts.
//!
//! The array grows as it fills, on a schedule that is a function of its length alone (powers
//! of two from 16, up to the capacity), so that the memory a digest reports is the same
//! wherever it was rebuilt from the same record; and every growth is fallible.

use std::cell::{Cell, Ref, RefCell};
use std::cmp::Ordering;

use super::centroid::Centroid;
use crate::bytes::AllocationFailed;

/// The smallest array a digest holding anything allocates.
const FIRST_ROOM: usize = 16;

/// The order every sort of nodes uses: by mean (`total_cmp`, so `-0.0` before `0.0`), then by
/// weight. Two nodes it calls equal are the same bits, so any sort gives one sequence.
///
/// RedisBloom sorts with a quicksort, whose order among equal means depends on where they
/// were: a merged centroid at 5 and a buffered 5 may end either way round, and decide what
/// merges into what. Its answers and these are the same whenever no two nodes of equal means
/// and different weights meet.
fn canonical(a: &Centroid, b: &Centroid) -> Ordering {
    a.mean.total_cmp(&b.mean).then(a.weight.cmp(&b.weight))
}

/// Nodes of room for `len`, as reported and as allocated: none when empty, else the power of
/// two at or above `len`, at least 16, at most the capacity.
pub(super) fn room_for(len: usize, capacity: usize) -> usize {
    if len == 0 {
        return 0;
    }
    len.max(FIRST_ROOM).checked_next_power_of_two().unwrap_or(usize::MAX).min(capacity.max(len))
}

/// Nodes past the sorted ones that a sort places one by one (a binary search and a shift of
/// the larger ones): a digest read after each write (one value pushed) sorted its 200-600
/// nodes again every time, most of the read's cost. More are sorted on their own and merged
/// with the sorted ones.
const PLACED_ONE_BY_ONE: usize = 8;

/// The nodes. Reads take `&self` and still sort in place (the cell): the order is not part of
/// the value, and a save needs the sorted order without memory of its own to copy into.
pub(super) struct Nodes {
    nodes: RefCell<Vec<Centroid>>,
    /// At least how many nodes from the first are in [`canonical`] order: all of them once
    /// sorted, and after pushes in order.
    sorted_len: Cell<usize>,
}

impl Nodes {
    pub(super) fn new() -> Nodes {
        Nodes { nodes: RefCell::new(Vec::new()), sorted_len: Cell::new(0) }
    }

    /// Empty nodes with the room the schedule gives `len` of them.
    pub(super) fn with_room_for(len: usize, capacity: usize) -> Result<Nodes, AllocationFailed> {
        let mut vec = Vec::new();
        vec.try_reserve_exact(room_for(len, capacity)).map_err(|_| AllocationFailed)?;
        Ok(Nodes { nodes: RefCell::new(vec), sorted_len: Cell::new(0) })
    }

    pub(super) fn len(&self) -> usize {
        self.nodes.borrow().len()
    }

    /// Makes room for `len` nodes in all, on the schedule, so that pushes up to there cannot
    /// fail.
    pub(super) fn reserve_for(&mut self, len: usize, capacity: usize) -> Result<(), AllocationFailed> {
        let nodes = self.nodes.get_mut();
        if nodes.capacity() >= len {
            return Ok(());
        }
        let room = room_for(len, capacity).max(len);
        nodes.try_reserve_exact(room - nodes.len()).map_err(|_| AllocationFailed)
    }

    /// Adds a node, growing the array on the schedule when it is full.
    pub(super) fn push(&mut self, node: Centroid, capacity: usize) -> Result<(), AllocationFailed> {
        let len = self.len();
        self.reserve_for(len + 1, capacity)?;
        let nodes = self.nodes.get_mut();
        // An ascending stream stays sorted, and its reads and saves sort nothing.
        let in_order = nodes.last().is_none_or(|last| canonical(last, &node) != Ordering::Greater);
        nodes.push(node);
        if in_order && self.sorted_len.get() == len {
            self.sorted_len.set(len + 1);
        }
        Ok(())
    }

    /// The nodes in [`canonical`] order, sorted in place where they are not.
    pub(super) fn sorted(&self) -> Ref<'_, [Centroid]> {
        if self.sorted_len.get() < self.len() {
            // Nothing else borrows the nodes while a read or a save runs (one thread, no
            // reentry); were it otherwise, the nodes would be read in the order they are in.
            if let Ok(mut nodes) = self.nodes.try_borrow_mut() {
                sort(&mut nodes, self.sorted_len.get());
                self.sorted_len.set(nodes.len());
            }
        }
        Ref::map(self.nodes.borrow(), Vec::as_slice)
    }

    /// Hands the nodes, in [`canonical`] order, to `rewrite` (a compression, which merges and
    /// truncates them), then finds how far what it left is still in that order: sorted by
    /// mean, but equal means may no longer be in weight order, so the next save sorts from the
    /// first pair out of it.
    pub(super) fn rewrite_sorted<R>(&mut self, rewrite: impl FnOnce(&mut Vec<Centroid>) -> R) -> R {
        let nodes = self.nodes.get_mut();
        sort(nodes, self.sorted_len.get());
        let result = rewrite(nodes);
        let in_order = nodes.windows(2).take_while(|pair| canonical(&pair[0], &pair[1]) != Ordering::Greater);
        self.sorted_len.set(if nodes.is_empty() { 0 } else { 1 + in_order.count() });
        result
    }

    /// Gives back the room a compression freed, down to the schedule's for what is left, by
    /// moving into a smaller array; when there is no memory for it, the larger one stays.
    pub(super) fn fit(&mut self, capacity: usize) {
        let nodes = self.nodes.get_mut();
        let room = room_for(nodes.len(), capacity);
        if nodes.capacity() <= room {
            return;
        }
        let mut smaller = Vec::new();
        if smaller.try_reserve_exact(room).is_ok() {
            smaller.extend_from_slice(nodes);
            *nodes = smaller;
        }
    }

    /// A copy with the schedule's room for its length.
    pub(super) fn try_copy(&self, capacity: usize) -> Result<Nodes, AllocationFailed> {
        let nodes = self.nodes.borrow();
        let mut copy = Nodes::with_room_for(nodes.len(), capacity)?;
        copy.nodes.get_mut().extend_from_slice(&nodes);
        copy.sorted_len.set(self.sorted_len.get());
        Ok(copy)
    }
}

/// Sorts `nodes`, whose first `sorted_len` are in [`canonical`] order: a few nodes after them
/// are each placed among those before them (shifting the larger ones up one); more are sorted
/// on their own, then merged with the sorted ones from the back, through a copy of theirs (or,
/// without memory for it, all of them sorted together). Every way gives the one canonical
/// sequence: the order is total, and nodes it calls equal are the same bits.
fn sort(nodes: &mut [Centroid], sorted_len: usize) {
    let sorted_len = sorted_len.min(nodes.len());
    let after = nodes.len() - sorted_len;
    if after <= PLACED_ONE_BY_ONE {
        for end in sorted_len.max(1)..nodes.len() {
            let node = nodes[end];
            let at = nodes[..end].partition_point(|before| canonical(before, &node) != Ordering::Greater);
            nodes[at..=end].rotate_right(1);
        }
        return;
    }
    let mut added = Vec::new();
    if added.try_reserve_exact(after).is_err() {
        nodes.sort_unstable_by(canonical);
        return;
    }
    added.extend_from_slice(&nodes[sorted_len..]);
    added.sort_unstable_by(canonical);
    // From the back: the larger of the last sorted node not yet placed and the last added one
    // takes the last free place; once the added ones are placed, the rest are where they were.
    let mut sorted_end = sorted_len;
    for place in (0..nodes.len()).rev() {
        let Some(&last_added) = added.last() else { break };
        match sorted_end.checked_sub(1) {
            Some(last_sorted) if canonical(&nodes[last_sorted], &last_added) == Ordering::Greater => {
                nodes[place] = nodes[last_sorted];
                sorted_end = last_sorted;
            }
            _ => {
                nodes[place] = last_added;
                added.pop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_room_follows_the_length() {
        assert_eq!([0, 1, 16, 17, 600, 609].map(|len| room_for(len, 610)), [0, 16, 16, 32, 610, 610]);
        assert_eq!(room_for(3, 16), 16);
        assert_eq!(room_for(100, 60_000_010), 128);
    }

    proptest::proptest! {
        /// Whatever the sorted prefix and however many nodes follow it (placed one by one, or
        /// sorted apart and merged in), the nodes end in the one canonical order; pushes, reads
        /// and rewrites in turn keep the prefix honest.
        #[test]
        fn every_sort_gives_the_canonical_order(
            means in proptest::collection::vec((0u8..12, 1i64..4), 0..60),
            sorted_len in 0usize..60,
            reads in proptest::collection::vec(0usize..60, 0..6),
            rotate_by in 0usize..60,
        ) {
            let node = |&(mean, weight): &(u8, i64)| Centroid { mean: f64::from(mean) - 5.5, weight };
            let mut canonical_order: Vec<Centroid> = means.iter().map(node).collect();
            canonical_order.sort_unstable_by(canonical);

            let sorted_len = sorted_len.min(means.len());
            let mut nodes: Vec<Centroid> = means.iter().map(node).collect();
            nodes[..sorted_len].sort_unstable_by(canonical);
            sort(&mut nodes, sorted_len);
            proptest::prop_assert_eq!(&nodes, &canonical_order);

            let mut pushed = Nodes::new();
            for (index, mean) in means.iter().enumerate() {
                pushed.push(node(mean), 610).unwrap();
                if reads.contains(&index) {
                    let sorted = pushed.sorted();
                    proptest::prop_assert!(sorted.windows(2).all(|pair| canonical(&pair[0], &pair[1]).is_le()));
                }
            }
            proptest::prop_assert_eq!(&*pushed.sorted(), &canonical_order[..]);
            // A rewrite that leaves the nodes out of order (a compression leaves equal means out
            // of weight order): the order found by a scan, then made whole by the next sort.
            let rewritten = pushed.rewrite_sorted(|nodes| {
                let by = rotate_by.min(nodes.len());
                nodes.rotate_left(by);
                nodes.len()
            });
            proptest::prop_assert_eq!(rewritten, means.len());
            proptest::prop_assert_eq!(&*pushed.sorted(), &canonical_order[..]);
        }
    }

    #[test]
    fn pushes_grow_the_array_on_the_schedule() {
        let mut nodes = Nodes::new();
        for i in 0..40 {
            nodes.push(Centroid { mean: f64::from(40 - i), weight: 1 }, 610).unwrap();
            assert_eq!(nodes.nodes.borrow().capacity(), room_for(i as usize + 1, 610));
        }
        assert!(nodes.sorted().windows(2).all(|pair| pair[0].mean < pair[1].mean));
        nodes.rewrite_sorted(|nodes| nodes.truncate(3));
        nodes.fit(610);
        assert_eq!(nodes.nodes.borrow().capacity(), 16);
    }
}
