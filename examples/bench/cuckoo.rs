//! CF.* workloads: CF.EXISTS and CF.ADD one item per call, CF.MEXISTS and CF.INSERT 100,
//! CF.DEL of the items just added, on cuckoo filters reserved for 12 million items (16 MiB, the buckets
//! being a power of two) and of 1 GiB, with 25% of their slots taken. Not half: a filter of
//! bucket size 2 and 20 iterations refuses its first item at 34-40% of its slots (`efficiency`
//! measures it) and then grows a second sub-filter, which every absent item's lookup also reads;
//! the workloads' adds come on top of the fill. Each round checks the filter is still one
//! sub-filter.
//!
//! Both modules keep RedisBloom's layout, so the large filter is filled the same way in each:
//! a header and chunks of random fingerprints through CF.LOADCHUNK, then real members added.

use crate::common;
use crate::workloads::{
    command, median, mixed_items, timed, Measurement, Random, Target, BATCH, BATCH_CALLS, SINGLE_CALLS,
};
use redis::ConnectionLike;
use std::time::Instant;

pub struct CuckooSize {
    pub name: &'static str,
    /// As CF.RESERVE is asked for it.
    pub capacity: u64,
    /// Too large to fill item by item within minutes.
    pub synthetic_fill: bool,
}

impl CuckooSize {
    /// What CF.RESERVE makes of the capacity: buckets of two, a power of two of them.
    pub fn slots(&self) -> u64 {
        (self.capacity / 2).next_power_of_two() * 2
    }
}

pub const SIZES: [CuckooSize; 2] = [
    CuckooSize { name: "CF 12M (16MB)", capacity: 12_000_000, synthetic_fill: false },
    CuckooSize { name: "CF 1GB", capacity: 1 << 30, synthetic_fill: true },
];

/// The share of slots taken before the workloads run.
const FILL: f64 = 0.25;
/// Members added for real to a synthetic filter, so member lookups are true.
const SYNTHETIC_MEMBERS: usize = 200_000;
const CHUNK_BYTES: usize = 16 << 20;

/// Per round: µs per call, and client items per second.
type Samples = Vec<(f64, f64)>;

/// One target's filter of one size, and what the rounds run on it so far measured.
pub struct Filled<'a> {
    size: &'a CuckooSize,
    target: String,
    key: String,
    members: usize,
    /// Per workload: items per call, and its samples.
    samples: Vec<(&'static str, usize, Samples)>,
}

/// Empties the target's server and fills its filter of `size`, for rounds to run on.
pub fn prepare<'a>(target: &mut Target, size: &'a CuckooSize) -> Filled<'a> {
    let key = format!("bench:{}", size.name);
    let name = target.name.clone();
    let con = target.connection();
    command(con, &["FLUSHALL"]);
    let started = Instant::now();
    let members = if size.synthetic_fill { synthetic_fill(con, &key, size) } else { fill(con, &key, size) };
    eprintln!("   {name}: {} filled in {:.1} s", size.name, started.elapsed().as_secs_f64());
    Filled { size, target: name, key, members, samples: Vec::new() }
}

impl Filled<'_> {
    /// Runs every workload once on `target`, the one this filter was prepared on.
    pub fn round(&mut self, target: &mut Target, round: usize) {
        let members = self.members;
        let mixed = |calls: usize, per_call: usize| mixed_items(members, round, calls, per_call, "absent");
        let added: Vec<Vec<String>> = (0..SINGLE_CALLS).map(|n| vec![format!("new:{round}:{n}")]).collect();
        // New items, kept: 150,000 a round take a 16M filter from 25% to 26% full.
        let inserted: Vec<Vec<String>> = (0..BATCH_CALLS)
            .map(|call| {
                std::iter::once("ITEMS".to_string())
                    .chain((0..BATCH).map(|n| format!("inserted:{round}:{call}:{n}")))
                    .collect()
            })
            .collect();
        let runs = [
            ("CF.EXISTS", "cf.exists", 1, mixed(SINGLE_CALLS, 1)),
            ("CF.MEXISTS", "cf.mexists", BATCH, mixed(BATCH_CALLS, BATCH)),
            ("CF.ADD", "cf.add", 1, added.clone()),
            ("CF.INSERT", "cf.insert", BATCH, inserted),
            // Deletes only what was added, as cuckoo filters require.
            ("CF.DEL", "cf.del", 1, added),
        ];
        let con = target.connection();
        for (workload, stat, per_call, calls) in runs {
            let sample = timed(con, stat, &self.key, &calls, &[workload], per_call);
            match self.samples.iter_mut().find(|(name, _, _)| *name == workload) {
                Some((_, _, list)) => list.push(sample),
                None => self.samples.push((workload, per_call, vec![sample])),
            }
        }
        assert_eq!(
            info_field(con, &self.key, "Number of filters"),
            1,
            "{}: {} grew past one sub-filter in round {round}: the workloads would measure a chain",
            self.target,
            self.size.name
        );
    }

    /// Medians over the rounds run.
    pub fn measurements(self) -> Vec<Measurement> {
        let size = self.size;
        self.samples
            .into_iter()
            .map(|(workload, items_per_call, list)| Measurement {
                target: self.target.clone(),
                size: size.name,
                workload,
                items_per_call,
                usec_per_call: median(list.iter().map(|s| s.0).collect()),
                items_per_second: median(list.iter().map(|s| s.1).collect()),
                bytes_per_item: None,
                false_positive_rate: None,
                fill: if size.synthetic_fill { "synthetic, 25% of slots" } else { "25% of slots" },
            })
            .collect()
    }
}

/// Reserves the filter and adds `m:0` .. until a quarter of its slots are taken.
fn fill(con: &mut redis::Connection, key: &str, size: &CuckooSize) -> usize {
    command(con, &["CF.RESERVE", key, &size.capacity.to_string()]);
    let members = (size.slots() as f64 * FILL) as usize;
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
/// expansion 1), then its slots in 16 MiB chunks, a quarter of them holding random fingerprints.
fn synthetic_fill(con: &mut redis::Connection, key: &str, size: &CuckooSize) -> usize {
    let slots = size.slots();
    let buckets = slots / 2;
    let items = (slots as f64 * FILL) as u64;
    let mut header = Vec::with_capacity(38);
    for word in [items, buckets, 0, 1] {
        header.extend_from_slice(&word.to_le_bytes());
    }
    for half in [2u16, 20, 1] {
        header.extend_from_slice(&half.to_le_bytes());
    }
    load_chunk(con, key, 1, &header);
    let mut random = Random(0x2545_F491_4F6C_DD1D);
    let threshold = (FILL * f64::from(u32::MAX)) as u32;
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
    while offset < slots {
        let len = (slots - offset).min(CHUNK_BYTES as u64) as usize;
        load_chunk(con, key, offset + len as u64 + 1, &chunk[..len]);
        offset += len as u64;
    }
    add_members(con, key, SYNTHETIC_MEMBERS);
    SYNTHETIC_MEMBERS
}

/// One of CF.INFO's numbers, found by its label (the connection speaks RESP2: a flat array).
fn info_field(con: &mut redis::Connection, key: &str, label: &str) -> i64 {
    let info = common::call(con, &["CF.INFO", key]).expect("CF.INFO");
    let redis::Value::Array(fields) = &info else { panic!("CF.INFO: {info:?}") };
    let at = fields.iter().position(|field| *field == redis::Value::SimpleString(label.into()));
    match at.and_then(|at| fields.get(at + 1)) {
        Some(redis::Value::Int(value)) => *value,
        _ => panic!("CF.INFO has no {label}: {info:?}"),
    }
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
    /// The CF.RESERVE options that made it.
    pub options: String,
    pub bucket_size: i64,
    pub items: usize,
    pub measured_rate: f64,
    pub bits_per_item: f64,
    pub bloom_bits_per_item: f64,
}

const EFFICIENCY_SLOTS: u64 = 1 << 20;
const EFFICIENCY_PROBES: usize = 2_000_000;

/// RedisBloom's bucket sizes 1, 2 and 4 on every target; with `error_rates`, also filters
/// made with redbloom's ERROR (16-bit fingerprints; 32-bit ones are too rare a false positive
/// to measure in 2M probes).
pub fn efficiency(target: &mut Target, error_rates: bool) -> Vec<CuckooEfficiency> {
    let name = target.name.clone();
    let con = target.connection();
    let mut filters: Vec<Vec<&str>> = [["BUCKETSIZE", "1"], ["BUCKETSIZE", "2"], ["BUCKETSIZE", "4"]]
        .iter()
        .map(|options| options.to_vec())
        .collect();
    if error_rates {
        filters.extend([vec!["ERROR", "0.01"], vec!["ERROR", "0.0002"]]);
    }
    filters
        .into_iter()
        .map(|options| {
            command(con, &["FLUSHALL"]);
            let key = "cuckoo-efficiency";
            let slots = EFFICIENCY_SLOTS.to_string();
            command(con, &[&["CF.RESERVE", key, &slots, "EXPANSION", "0"][..], &options[..]].concat());
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
            let bucket_size = info_field(con, key, "Bucket size");
            CuckooEfficiency {
                target: name.clone(),
                options: options.join(" "),
                bucket_size,
                items,
                measured_rate,
                bits_per_item: bytes * 8.0 / items as f64,
                bloom_bits_per_item: -measured_rate.ln() / std::f64::consts::LN_2.powi(2),
            }
        })
        .collect()
}
