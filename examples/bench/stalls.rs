//! The calls that touch a whole large filter at once, where a server stalls if anywhere:
//! creating a 1 GB filter, loading its header, growing a chain by a 2 GB link, dumping and
//! loading it in chunks, deleting it. Each figure is the server time of the slowest single
//! call, from SLOWLOG with a threshold of 0, which records every call's own microseconds.

use crate::common::{call_bytes, ok, scandump};
use crate::workloads::Target;
use redis::{Connection, Value};

/// Capacity of the large filter: about 1 GB at 1% in either format.
const CAPACITY: &str = "800000000";
/// Chunks dumped and loaded: 16 MiB each.
const CHUNKS: usize = 8;

pub struct Stall {
    pub target: String,
    pub operation: &'static str,
    pub usec: i64,
}

pub fn measure(target: &mut Target) -> Vec<Stall> {
    let name = target.name.clone();
    let con = target.connection();
    ok(con, &["FLUSHALL"]);
    ok(con, &["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    ok(con, &["CONFIG", "SET", "slowlog-max-len", "1024"]);
    let mut stalls = Vec::new();
    let mut record = |con: &mut Connection,
                      operation: &'static str,
                      command: &str,
                      run: &mut dyn FnMut(&mut Connection)| {
        ok(con, &["SLOWLOG", "RESET"]);
        run(con);
        stalls.push(Stall { target: name.clone(), operation, usec: slowest(con, command) });
    };

    record(con, "BF.RESERVE of 1 GB", "bf.reserve", &mut |con| {
        ok(con, &["BF.RESERVE", "big", "0.01", CAPACITY]);
    });
    let pairs = scandump(con, "big");
    let header = pairs[0].1.clone();
    record(con, "BF.LOADCHUNK of its header", "bf.loadchunk", &mut |con| {
        call_bytes(con, &[b"BF.LOADCHUNK", b"copy", b"1", &header]).expect("header");
    });
    record(con, "BF.SCANDUMP of a 16 MiB chunk", "bf.scandump", &mut |con| {
        let mut iterator = pairs[0].0;
        for _ in 0..CHUNKS {
            let Value::Array(reply) = ok(con, &["BF.SCANDUMP", "big", &iterator.to_string()]) else {
                panic!()
            };
            let Value::Int(next) = reply[0] else { panic!() };
            iterator = next;
        }
    });
    record(con, "BF.LOADCHUNK of a 16 MiB chunk", "bf.loadchunk", &mut |con| {
        for (iterator, data) in pairs.iter().skip(1).take(CHUNKS) {
            call_bytes(con, &[b"BF.LOADCHUNK", b"copy", iterator.to_string().as_bytes(), data])
                .expect("chunk");
        }
    });
    record(con, "BF.ADD that adds a 2 GB link", "bf.add", &mut |con| {
        call_bytes(con, &[b"BF.LOADCHUNK", b"full", b"1", &with_full_link(&header)]).expect("full header");
        ok(con, &["BF.ADD", "full", "one more"]);
    });
    record(con, "DEL of 1 GB", "del", &mut |con| {
        ok(con, &["DEL", "big"]);
    });
    record(con, "UNLINK of 1 GB", "unlink", &mut |con| {
        ok(con, &["UNLINK", "copy"]);
    });
    ok(con, &["FLUSHALL"]);
    ok(con, &["CONFIG", "SET", "slowlog-log-slower-than", "10000"]);
    stalls
}

/// The header of a one-link filter with that link full, so that the next new item grows the
/// chain: in this module's format or RedisBloom's (the item counts' places in each header).
fn with_full_link(header: &[u8]) -> Vec<u8> {
    let mut full = header.to_vec();
    let capacity: u64 = CAPACITY.parse().expect("a number");
    let count_places: &[usize] = if header.starts_with(b"RBLF") { &[14 + 28] } else { &[0, 20 + 16] };
    for &at in count_places {
        full[at..at + 8].copy_from_slice(&capacity.to_le_bytes());
    }
    full
}

/// The longest time one `command` call took, in microseconds, among the SLOWLOG entries.
fn slowest(con: &mut Connection, command: &str) -> i64 {
    let Value::Array(entries) = ok(con, &["SLOWLOG", "GET", "1024"]) else { panic!("SLOWLOG GET") };
    entries
        .iter()
        .filter_map(|entry| {
            let Value::Array(fields) = entry else { return None };
            let (Some(Value::Int(usec)), Some(Value::Array(args))) = (fields.get(2), fields.get(3)) else {
                return None;
            };
            let name = match args.first() {
                Some(Value::BulkString(bytes)) => String::from_utf8_lossy(bytes).to_ascii_lowercase(),
                _ => return None,
            };
            (name == command).then_some(*usec)
        })
        .max()
        .unwrap_or(-1)
}
