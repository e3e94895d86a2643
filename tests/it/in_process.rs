//! Filters built in process with `redbloom-core` and handed to a server with LOADCHUNK, as a
//! Rust program that fills a filter offline would: the server gets the very filter its own
//! commands would have built from the same items.

use crate::harness::*;
use redbloom_core::bloom::{Filter, Format};
use redbloom_core::cuckoo::{CuckooFilter, CuckooParams, Inserted, Limits, DEFAULT_MAX_SUB_FILTERS};
use redis::{Connection, ProtocolVersion};

/// Enough items for the filters of capacity 1,000 below to grow several times.
const ITEMS: usize = 3000;

fn all_present(con: &mut Connection, command: &str, key: &str, items: &[Vec<u8>]) -> bool {
    answers(con, command, key, items).iter().all(|answer| as_bool(answer, ProtocolVersion::RESP2))
}

#[test]
fn a_bloom_filter_built_in_process_loads_as_the_one_commands_build() {
    let server = Server::start();
    let mut con = server.connection();
    let items = numbered("item", ITEMS);
    for format in [Format::Redbloom, Format::RedisBloom] {
        let mut filter = Filter::try_new(format, 1000, 0.01, 2, usize::MAX).expect("a filter");
        for item in &items {
            filter.insert(item, || usize::MAX).expect("room to grow");
        }
        let built = format!("built-{}", format.name());
        call_bytes(&mut con, &[b"BF.LOADCHUNK", built.as_bytes(), b"1", &filter.encode_header()])
            .expect("header");
        for (end, chunk) in filter.chunks() {
            let iterator = (end + 1).to_string();
            call_bytes(&mut con, &[b"BF.LOADCHUNK", built.as_bytes(), iterator.as_bytes(), chunk])
                .expect("chunk");
        }

        let commanded = format!("commanded-{}", format.name());
        ok(&mut con, &["BF.RESERVE", &commanded, "0.01", "1000", "EXPANSION", "2", "FORMAT", format.name()]);
        answers(&mut con, "BF.MADD", &commanded, &items);

        assert!(filter.link_count() > 1, "the filter grew");
        assert_eq!(digest(&mut con, &built), digest(&mut con, &commanded), "{format:?}");
        assert_eq!(int(&mut con, &["BF.CARD", &built]), int(&mut con, &["BF.CARD", &commanded]));
        assert!(all_present(&mut con, "BF.MEXISTS", &built, &items), "{format:?}");
    }
}

#[test]
fn a_cuckoo_filter_built_in_process_loads_as_the_one_commands_build() {
    let server = Server::start();
    let mut con = server.connection();
    let items = numbered("item", ITEMS);
    let params = CuckooParams { capacity: 1000, ..CuckooParams::default() };
    let mut filter = CuckooFilter::try_new(params, usize::MAX).expect("a filter");
    let limits = Limits { max_bytes: usize::MAX, max_sub_filters: DEFAULT_MAX_SUB_FILTERS };
    for item in &items {
        assert_eq!(filter.insert(filter.hash(item), limits), Inserted::Added);
    }
    call_bytes(&mut con, &[b"CF.LOADCHUNK", b"built", b"1", filter.header().as_bytes()]).expect("header");
    for (next, chunk) in std::iter::successors(filter.chunk(1), |&(next, _)| filter.chunk(next)) {
        call_bytes(&mut con, &[b"CF.LOADCHUNK", b"built", next.to_string().as_bytes(), chunk])
            .expect("chunk");
    }

    ok(&mut con, &["CF.RESERVE", "commanded", "1000"]);
    for item in &items {
        call_bytes(&mut con, &[b"CF.ADD", b"commanded", item]).expect("CF.ADD");
    }

    assert!(filter.sub_filters().len() > 1, "the filter grew");
    assert_eq!(digest(&mut con, "built"), digest(&mut con, "commanded"));
    assert!(all_present(&mut con, "CF.MEXISTS", "built", &items));
}
