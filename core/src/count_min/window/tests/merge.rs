//! CMS.MERGE of windowed sketches, span by span.

use super::*;
use crate::count_min::MergeError;

#[test]
fn a_merge_sums_each_span_and_each_span_expires_on_time() {
    let mut first = windowed(1000, 3, CellSize::Four, 1000, 4);
    let mut second = windowed(1000, 3, CellSize::Four, 1000, 4);
    add_at(&mut first, 10_000, b"early", 2);
    add_at(&mut second, 10_300, b"early", 5);
    add_at(&mut first, 10_600, b"late", 1);
    add_at(&mut second, 10_900, b"late", 4);
    let mut destination = windowed(1000, 3, CellSize::Four, 1000, 4);
    add_at(&mut destination, 10_950, b"own", 9);
    destination
        .merge(&[
            (WindowSource::Sketch(&first), 3),
            (WindowSource::Sketch(&second), 1),
            (WindowSource::Destination, 1),
        ])
        .unwrap();
    assert_eq!(query(&destination, b"early", None), 11);
    assert_eq!(query(&destination, b"late", None), 7);
    assert_eq!(query(&destination, b"own", None), 9);
    assert_eq!(destination.count(None), 6 + 5 + 3 + 4 + 9);
    // Each span leaves with its own time: 10,000's at 11,250, 10,250's at 11,500.
    destination.rotate(11_250);
    assert_eq!(query(&destination, b"early", None), 5);
    destination.rotate(11_500);
    assert_eq!(query(&destination, b"early", None), 0);
    assert_eq!(query(&destination, b"late", None), 7);
    destination.rotate(12_250);
    assert_eq!(
        (query(&destination, b"late", None), query(&destination, b"own", None), destination.count(None)),
        (0, 0, 0)
    );
    assert_eq!(destination.sketch_count(), 1);
    let record = record_of(&destination);
    assert_eq!(record_of(&load(&record, BUDGET).unwrap()), record);
}

#[test]
fn refused_merges_change_nothing() {
    let mut destination = windowed(100, 3, CellSize::One, 1000, 4);
    add_at(&mut destination, 5000, b"a", 200);
    let before = record_of(&destination);
    let other_window = windowed(100, 3, CellSize::One, 2000, 4);
    let other_width = windowed(101, 3, CellSize::One, 1000, 4);
    let other_cells = windowed(100, 3, CellSize::Two, 1000, 4);
    let mut ahead = windowed(100, 3, CellSize::One, 1000, 4);
    ahead.rotate(9000);
    for (source, error) in [
        (&other_window, WindowMergeError::Schedule),
        (&other_width, WindowMergeError::Plain(MergeError::Dimensions)),
        (&other_cells, WindowMergeError::Plain(MergeError::CellSize)),
        (&ahead, WindowMergeError::Ahead),
    ] {
        assert_eq!(destination.merge(&[(WindowSource::Sketch(source), 1)]), Err(error));
    }
    for weights in [[2, 0], [-1, 0], [1, 1]] {
        let sources = [(WindowSource::Destination, weights[0]), (WindowSource::Destination, weights[1])];
        assert_eq!(
            destination.merge(&sources),
            Err(WindowMergeError::Plain(MergeError::Overflow)),
            "{weights:?}"
        );
    }
    assert_eq!(record_of(&destination), before);
    destination.merge(&[(WindowSource::Destination, 1), (WindowSource::Destination, 0)]).unwrap();
    assert_eq!(record_of(&destination), before);
}
