//! CF.* workloads: CF.EXISTS and CF.ADD one item per call, CF.MEXISTS 100, CF.DEL of the
//! items just added, on cuckoo filters of 8 MiB and 1 GiB with 40% of their slots taken (a
//! cuckoo filter of bucket size 2 refuses its first item near 48%).
//!
//! Both modules keep RedisBloom's layout, so the large filter is filled the same way in each:
//! a header and chunks of random fingerprints through CF.LOADCHUNK, then real members added.

use crate::common;
use crate::workloads::{
    command, median, timed, Measurement, Random, Target, BATCH, BATCH_CALLS, SINGLE_CALLS,
};
use redis::ConnectionLike;
use std::time::Instant;

pub struct CuckooSize {
    pub name: &'static str,
    /// Slots: buckets of two.
    pub capacity: u64,
    /// Too large to fill item by item within minutes.
    pub synthetic_fill: bool,
}

pub const SIZES: [CuckooSize; 2] = [
    CuckooSize { name: "CF 8MB", capacity: 1 << 23, synthetic_fill: false },
    CuckooSize { name: "CF 1GB", capacity: 1 << 30, synthetic_fill: true },
];

/// The share of slots taken before the workloads run.
const FILL: f64 = 0.4;
/// Members added for real to a synthetic filter, so member lookups are true.
const SYNTHETIC_MEMBERS: usize = 200_000;
const CHUNK_BYTES: usize = 16 << 20;

pub fn run(target: &mut Target, size: &CuckooSize, rounds: usize) -> Vec<Measurement> {
    let key = format!("bench:{}", size.name);
    let name = target.name.clone();
    let con = target.connection();
    command(con, &["FLUSHALL"]);
    let started = Instant::now();
    let members = if size.synthetic_fill { synthetic_fill(con, &key, size) } else { fill(con, &key, size) };
    eprintln!("   {name}: {} filled in {:.1} s", size.name, started.elapsed().as_secs_f64());
    let mut samples: Vec<(&'static str, usize, Vec<(f64, f64)>)> = Vec::new();
    for round in 0..rounds {
        let mixed = |calls: usize, per_call: usize| -> Vec<Vec<String>> {
            (0..calls)
                .map(|call| {
                    (0..per_call)
                        .map(|i| {
                            let n = call * per_call + i;
                            if n % 2 == 0 {
                                format!("m:{}", (n * 7919) % members)
                            } else {
                                format!("absent:{round}:{n}")
                            }
                        })
                        .collect()
                })
                .collect()
        };
        let added: Vec<Vec<String>> = (0..SINGLE_CALLS).map(|n| vec![format!("new:{round}:{n}")]).collect();
        let runs = [
            ("CF.EXISTS", "cf.exists", 1, mixed(SINGLE_CALLS, 1)),
            ("CF.MEXISTS", "cf.mexists", BATCH, mixed(BATCH_CALLS, BATCH)),
            ("CF.ADD", "cf.add", 1, added.clone()),
            // Deletes only what was added, as cuckoo filters require.
            ("CF.DEL", "cf.del", 1, added),
        ];
        for (workload, stat, per_call, calls) in runs {
            let sample = timed(con, stat, &key, &calls, &[workload], per_call);
            match samples.iter_mut().find(|(name, _, _)| *name == workload) {
                Some((_, _, list)) => list.push(sample),
                None => samples.push((workload, per_call, vec![sample])),
            }
        }
    }
    samples
        .into_iter()
        .map(|(workload, items_per_call, list)| Measurement {
            target: name.clone(),
            size: size.name,
            workload,
            items_per_call,
            usec_per_call: median(list.iter().map(|s| s.0).collect()),
            items_per_second: median(list.iter().map(|s| s.1).collect()),
            bytes_per_item: None,
            false_positive_rate: None,
            fill: if size.synthetic_fill { "synthetic, 40% of slots" } else { "40% of slots" },
        })
        .collect()
}

/// Reserves the filter and adds `m:0` .. until 40% of its slots are taken.
fn fill(con: &mut redis::Connection, key: &str, size: &CuckooSize) -> usize {
    command(con, &["CF.RESERVE", key, &size.capacity.to_string()]);
    let members = (size.capacity as f64 * FILL) as usize;
    add_members(con, key, members);
    members
}

fn add_members(con: &mut redis::Connection, key: &str, count: usize) {
    let items: Vec<String> = (0..count).map(|i| format!("m:{i}")).collect();
    for chunk in items.chunks(100_000) {
        let mut pipe = redis::pipe();
        for group in chunk.chunks(1000) {
            pipe.cmd("CF.INSERT").arg(key).arg("ITEMS").arg(group);
        }
        con.req_packed_commands(&pipe.get_packed_pipeline(), 0, chunk.len().div_ceil(1000))
            .expect("CF.INSERT");
    }
}

/// RedisBloom's 38-byte header of a one-sub-filter filter (bucket size 2, 20 iterations,
/// expansion 1), then its slots in 16 MiB chunks, 40% of them holding random fingerprints.
fn synthetic_fill(con: &mut redis::Connection, key: &str, size: &CuckooSize) -> usize {
    let buckets = size.capacity / 2;
    let items = (size.capacity as f64 * FILL) as u64;
    let mut header = Vec::with_capacity(38);
    for word in [items, buckets, 0, 1] {
        header.extend_from_slice(&word.to_le_bytes());
    }
    for half in [2u16, 20, 1] {
        header.extend_from_slice(&half.to_le_bytes());
    }
    load_chunk(con, key, 1, &header);
    let mut random = Random(0x2545_F491_4F6C_DD1D);
    let threshold = (FILL * u32::MAX as f64) as u32;
    let chunk: Vec<u8> = (0..CHUNK_BYTES)
        .map(|_| {
            let draw = random.next();
            if (draw as u32) < threshold {
                ((draw >> 32) % 255 + 1) as u8
            } else {
                0
            }
        })
        .collect();
    let mut offset = 0u64;
    while offset < size.capacity {
        let len = (size.capacity - offset).min(CHUNK_BYTES as u64) as usize;
        load_chunk(con, key, offset + len as u64 + 1, &chunk[..len]);
        offset += len as u64;
    }
    add_members(con, key, SYNTHETIC_MEMBERS);
    SYNTHETIC_MEMBERS
}

fn load_chunk(con: &mut redis::Connection, key: &str, iterator: u64, data: &[u8]) {
    let mut cmd = redis::cmd("CF.LOADCHUNK");
    cmd.arg(key).arg(iterator).arg(data);
    let reply = con.req_command(&cmd).expect("CF.LOADCHUNK");
    assert!(!matches!(reply, redis::Value::ServerError(_)), "CF.LOADCHUNK: {reply:?}");
}

/// Memory of a cuckoo filter filled until its first refusal, against a Bloom filter of the
/// false-positive rate measured on it: the deletable filter's price.
pub struct CuckooEfficiency {
    pub target: String,
    pub bucket_size: u16,
    pub items: usize,
    pub measured_rate: f64,
    pub bits_per_item: f64,
    pub bloom_bits_per_item: f64,
}

const EFFICIENCY_SLOTS: u64 = 1 << 20;
const EFFICIENCY_PROBES: usize = 2_000_000;

pub fn efficiency(target: &mut Target) -> Vec<CuckooEfficiency> {
    let name = target.name.clone();
    let con = target.connection();
    [1u16, 2, 4]
        .into_iter()
        .map(|bucket_size| {
            command(con, &["FLUSHALL"]);
            let key = "cuckoo-efficiency";
            let slots = EFFICIENCY_SLOTS.to_string();
            command(
                con,
                &["CF.RESERVE", key, &slots, "BUCKETSIZE", &bucket_size.to_string(), "EXPANSION", "0"],
            );
            let mut items = 0;
            loop {
                let batch: Vec<String> = (items..items + 1000).map(|i| format!("e:{i}")).collect();
                let redis::Value::Array(answers) = common::call(
                    con,
                    &[
                        &["CF.INSERT", key, "ITEMS"][..],
                        &batch.iter().map(String::as_str).collect::<Vec<_>>()[..],
                    ]
                    .concat(),
                )
                .expect("CF.INSERT") else {
                    panic!("CF.INSERT")
                };
                let added = answers.iter().filter(|answer| matches!(answer, redis::Value::Int(1))).count();
                items += added;
                if added < batch.len() {
                    break;
                }
            }
            let probes: Vec<String> = (0..EFFICIENCY_PROBES).map(|i| format!("x:{i}")).collect();
            let mut found = 0;
            for chunk in probes.chunks(1000) {
                let args: Vec<&str> =
                    ["CF.MEXISTS", key].into_iter().chain(chunk.iter().map(String::as_str)).collect();
                let redis::Value::Array(answers) = common::call(con, &args).expect("CF.MEXISTS") else {
                    panic!()
                };
                found += answers.iter().filter(|answer| matches!(answer, redis::Value::Int(1))).count();
            }
            let measured_rate = found as f64 / EFFICIENCY_PROBES as f64;
            let bytes = common::int(con, &["MEMORY", "USAGE", key]) as f64;
            CuckooEfficiency {
                target: name.clone(),
                bucket_size,
                items,
                measured_rate,
                bits_per_item: bytes * 8.0 / items as f64,
                bloom_bits_per_item: -measured_rate.ln() / std::f64::consts::LN_2.powi(2),
            }
        })
        .collect()
}
