//! Measured through the server: no false negatives ever, and at full capacity a false-positive
//! rate no higher than requested (within four standard deviations of the sample).

use crate::harness::*;
use redis::{Connection, Value};

/// The most false positives an honest filter with rate `p` shows in `n` probes, but for a
/// one-in-30,000 fluke: p·n plus four standard deviations.
fn allowed(p: f64, n: u64) -> u64 {
    let mean = p * n as f64;
    (mean + 4.0 * (mean * (1.0 - p)).sqrt()).ceil() as u64
}

/// Adds fresh items until the filter has counted `capacity` of them; answers the items added.
fn fill_to_capacity(con: &mut Connection, key: &str, capacity: u64) -> Vec<String> {
    let mut items = Vec::new();
    let mut next = 0u64;
    while (int(con, &["BF.CARD", key]) as u64) < capacity {
        let missing = capacity - int(con, &["BF.CARD", key]) as u64;
        let batch: Vec<String> = (next..next + missing.min(500)).map(|n| format!("member:{n}")).collect();
        next += batch.len() as u64;
        let mut args = vec!["BF.MADD", key];
        args.extend(batch.iter().map(String::as_str));
        let Value::Array(replies) = ok(con, &args) else { panic!() };
        assert!(replies.iter().all(|reply| !matches!(reply, Value::ServerError(_))), "{replies:?}");
        items.extend(batch);
    }
    items
}

fn measured_false_positives(con: &mut Connection, key: &str, probes: u64) -> u64 {
    count_present(con, key, (0..probes).map(|n| format!("absent:{n}")))
}

#[test]
fn non_scaling_filters_at_capacity() {
    let server = Server::start();
    let mut con = server.connection();
    for (capacity, rate) in [(100_000u64, 0.01), (50_000, 0.001)] {
        let key = format!("fixed-{rate}");
        ok(&mut con, &["BF.RESERVE", &key, &rate.to_string(), &capacity.to_string(), "NONSCALING"]);
        let items = fill_to_capacity(&mut con, &key, capacity);
        assert_eq!(count_present(&mut con, &key, items.iter().cloned()), items.len() as u64);
        let probes = 500_000;
        let found = measured_false_positives(&mut con, &key, probes);
        assert!(found <= allowed(rate, probes), "rate {rate}: {found} false positives in {probes} probes");
        // The filter is not trivially empty or full: the rate is of the expected order.
        assert!(found as f64 >= rate * probes as f64 * 0.5, "rate {rate}: only {found} false positives");
    }
}

#[test]
fn a_filter_grown_through_many_sub_filters() {
    let server = Server::start();
    let mut con = server.connection();
    let rate = 0.01;
    ok(&mut con, &["BF.RESERVE", "grown", "0.01", "1000", "EXPANSION", "2"]);
    let items: Vec<String> = (0..120_000).map(|n| format!("member:{n}")).collect();
    madd_all(&mut con, "grown", items.iter().cloned());
    let Value::Array(filters) = ok(&mut con, &["BF.INFO", "grown", "FILTERS"]) else { panic!() };
    let Value::Int(filters) = filters[0] else { panic!() };
    assert!(filters >= 6, "{filters} sub-filters");
    assert_eq!(count_present(&mut con, "grown", items.iter().cloned()), items.len() as u64);
    let probes = 500_000;
    let found = measured_false_positives(&mut con, "grown", probes);
    assert!(found <= allowed(rate, probes), "{found} false positives in {probes} probes");

    // No false negatives after a reload either.
    ok(&mut con, &["DEBUG", "RELOAD"]);
    assert_eq!(count_present(&mut con, "grown", items.iter().cloned()), items.len() as u64);
}
