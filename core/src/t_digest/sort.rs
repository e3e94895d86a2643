//! RedisBloom 2.8's sort of the node array, reproduced permutation for permutation: a
//! quicksort with the middle element as pivot and Lomuto's partition, two elements compared
//! directly. Any correct sort orders distinct means alike, but centroids of equal means (a
//! merged centroid at 5 and a buffered 5) end in an order that decides what merges into what,
//! and so every later answer.
//!
//! RedisBloom recurses; this keeps the pending ranges in a fixed array, always going on with
//! the smaller side, so that no input can exhaust the stack (the ranges are disjoint, so the
//! order they are sorted in changes nothing). A range of equal means, where the quicksort
//! peels one element per pass, is permuted in one pass as the quicksort would have.

use super::centroid::Centroid;

/// Deferred ranges: each is at least as large as the one worked on next, which at most halves
/// what is left, so 64 suffice for any slice.
const PENDING: usize = 64;

/// Buffered nodes few enough to insert one by one into the sorted centroids.
const FEW: usize = 8;

/// Sorts by mean as [`sort`] does, when the first `sorted` nodes are sorted already (the
/// centroids a compression left; a write here compresses at its end, so the buffer behind them
/// is often a value or two). When every mean is distinct, any correct sort gives the one order
/// there is, so a few buffered nodes are inserted into place, in time linear in the centroids
/// rather than the quicksort's n log n; with equal means anywhere, or many buffered nodes, the
/// quicksort decides.
pub(super) fn sort_after(nodes: &mut [Centroid], sorted: usize) {
    let (centroids, buffer) = nodes.split_at(sorted.min(nodes.len()));
    let distinct = buffer.len() <= FEW
        && centroids.windows(2).all(|pair| pair[0].mean < pair[1].mean)
        && buffer.iter().enumerate().all(|(index, node)| {
            centroids
                .binary_search_by(|centroid| {
                    centroid.mean.partial_cmp(&node.mean).unwrap_or(std::cmp::Ordering::Equal)
                })
                .is_err()
                && buffer[..index].iter().all(|other| other.mean != node.mean)
        });
    if !distinct {
        sort(nodes);
        return;
    }
    for next in sorted..nodes.len() {
        let mut at = next;
        while at > 0 && nodes[at - 1].mean > nodes[at].mean {
            nodes.swap(at - 1, at);
            at -= 1;
        }
    }
}

/// Sorts by mean, in the order RedisBloom 2.8's `td_qsort` leaves them. Means are never NaN.
pub(super) fn sort(nodes: &mut [Centroid]) {
    if nodes.len() < 2 {
        return;
    }
    let mut pending = [(0, 0); PENDING];
    let mut deferred = 0;
    // Inclusive bounds, as RedisBloom's.
    let (mut start, mut end) = (0, nodes.len() - 1);
    loop {
        if start < end {
            if end - start == 1 {
                if nodes[start].mean > nodes[end].mean {
                    nodes.swap(start, end);
                }
            } else if all_equal(&nodes[start..=end]) {
                peel_equal(nodes, start, end);
            } else {
                let pivot = partition(nodes, start, end, usize::midpoint(start, end));
                // Empty sides are given as (start, start): nothing to sort.
                let left = if pivot > start { (start, pivot - 1) } else { (start, start) };
                let right = (pivot + 1, end.max(pivot));
                let (smaller, larger) = if left.1 - left.0 <= right.1.saturating_sub(right.0) {
                    (left, right)
                } else {
                    (right, left)
                };
                if larger.0 < larger.1 {
                    debug_assert!(deferred < PENDING, "the smaller side at most halves the range");
                    if let Some(slot) = pending.get_mut(deferred) {
                        *slot = larger;
                        deferred += 1;
                    }
                }
                (start, end) = smaller;
                continue;
            }
        }
        if deferred == 0 {
            return;
        }
        deferred -= 1;
        (start, end) = pending[deferred];
    }
}

/// Lomuto's partition around the mean at `pivot`: the pivot is parked at `end`, every node
/// of a smaller mean is swapped to the front in turn, and the pivot goes after them.
fn partition(nodes: &mut [Centroid], start: usize, end: usize, pivot: usize) -> usize {
    let pivot_mean = nodes[pivot].mean;
    nodes.swap(pivot, end);
    let mut next = start;
    for j in start..end {
        if nodes[j].mean < pivot_mean {
            nodes.swap(next, j);
            next += 1;
        }
    }
    nodes.swap(next, end);
    next
}

fn all_equal(nodes: &[Centroid]) -> bool {
    nodes.split_first().is_some_and(|(first, rest)| rest.iter().all(|node| node.mean == first.mean))
}

/// What the quicksort does to a range of equal means, without its quadratic scan: each pass
/// parks the middle node at the end, finds nothing smaller, swaps the first node with the
/// parked one and goes on with the rest; two equal nodes are left as they are.
fn peel_equal(nodes: &mut [Centroid], mut start: usize, end: usize) {
    while end - start >= 2 {
        nodes.swap(usize::midpoint(start, end), end);
        nodes.swap(start, end);
        start += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RedisBloom's recursive quicksort, as written, for comparison.
    fn reference(nodes: &mut [Centroid], start: usize, end: usize) {
        if start < end {
            if end - start == 1 {
                if nodes[start].mean > nodes[end].mean {
                    nodes.swap(start, end);
                }
                return;
            }
            let pivot = partition(nodes, start, end, usize::midpoint(start, end));
            if pivot > start {
                reference(nodes, start, pivot - 1);
            }
            reference(nodes, pivot + 1, end);
        }
    }

    fn nodes(means: &[u8]) -> Vec<Centroid> {
        means
            .iter()
            .enumerate()
            .map(|(i, &mean)| Centroid { mean: f64::from(mean), weight: i as i64 })
            .collect()
    }

    #[test]
    fn the_permutation_is_redisblooms() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for len in 0..200 {
            for distinct in [1, 2, 3, 10, 255] {
                let means: Vec<u8> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        (state % distinct) as u8
                    })
                    .collect();
                let mut ours = nodes(&means);
                let mut theirs = ours.clone();
                sort(&mut ours);
                if len > 0 {
                    reference(&mut theirs, 0, len - 1);
                }
                assert_eq!(ours, theirs, "{means:?}");
            }
        }
    }

    #[test]
    fn a_long_run_of_equal_means_sorts_in_linear_time() {
        let mut run = vec![Centroid { mean: 1.0, weight: 1 }; 1 << 20];
        run.push(Centroid { mean: 0.0, weight: 2 });
        sort(&mut run);
        assert_eq!(run[0], Centroid { mean: 0.0, weight: 2 });
    }
}
