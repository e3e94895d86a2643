//! Filling filters and running the timed workloads.

use crate::common::{self, Server};
use redis::{Connection, ConnectionLike, Value};
use std::time::Instant;

/// Calls per single-item workload, and calls of 100 items per batch workload, per round.
pub const SINGLE_CALLS: usize = 150_000;
pub const BATCH_CALLS: usize = 1500;
pub const BATCH: usize = 100;
const PIPELINE: usize = 1000;
const FALSE_POSITIVE_PROBES: usize = 1_000_000;
/// Members added for real to a synthetically filled filter, so member lookups are true.
const SYNTHETIC_MEMBERS: usize = 200_000;

pub struct FilterSize {
    pub name: &'static str,
    pub capacity: u64,
    /// The error rate it is reserved with.
    pub rate: &'static str,
    /// Too large to fill item by item within minutes: its bits are written with LOADCHUNK
    /// at the density of a half-full filter instead.
    pub synthetic_fill: bool,
}

impl FilterSize {
    /// About what redbloom takes for it: a classic filter's bits, and 4% more.
    pub fn approximate_bytes(&self) -> usize {
        let rate: f64 = self.rate.parse().expect("a rate");
        let bits_per_item = -rate.ln() / std::f64::consts::LN_2.powi(2) * 1.04;
        (self.capacity as f64 * bits_per_item / 8.0) as usize
    }

    pub fn all() -> Vec<FilterSize> {
        vec![
            FilterSize { name: "1MB", capacity: 800_000, rate: "0.01", synthetic_fill: false },
            FilterSize { name: "12MB", capacity: 10_000_000, rate: "0.01", synthetic_fill: false },
            FilterSize { name: "1GB", capacity: 1_000_000_000, rate: "0.01", synthetic_fill: true },
            // Where redbloom spreads an item over two cache lines and RedisBloom probes ten.
            FilterSize { name: "1GB@0.1%", capacity: 550_000_000, rate: "0.001", synthetic_fill: true },
        ]
    }
}

pub struct Target {
    pub name: String,
    /// Baselines (GETBIT/SETBIT, Lua) are measured on this target's server only.
    pub measures_baselines: bool,
    pub server_version: String,
    con: Connection,
    _server: Server,
}

impl Target {
    pub fn connection(&mut self) -> &mut Connection {
        &mut self.con
    }

    pub fn new(name: &str, server: Server, measures_baselines: bool) -> Target {
        let mut con = server.connection();
        let version = info_field(&mut con, "server", "redis_version").unwrap_or_default();
        Target { name: name.to_string(), measures_baselines, server_version: version, con, _server: server }
    }
}

/// One workload's result: medians over the rounds.
pub struct Measurement {
    pub target: String,
    pub size: &'static str,
    pub workload: &'static str,
    pub items_per_call: usize,
    pub usec_per_call: f64,
    pub items_per_second: f64,
    pub bytes_per_item: Option<f64>,
    pub false_positive_rate: Option<f64>,
    pub fill: &'static str,
}

impl Measurement {
    pub fn usec_per_item(&self) -> f64 {
        self.usec_per_call / self.items_per_call as f64
    }
}

/// Memory at full capacity against a classic Bloom filter of the measured rate.
pub struct Efficiency {
    pub target: String,
    pub requested_rate: f64,
    pub measured_rate: f64,
    pub bits_per_item: f64,
    pub classic_bits_per_item: f64,
}

/// (µs per call, client items per second) per round.
type Samples = Vec<(f64, f64)>;

pub fn run_size(target: &mut Target, size: &FilterSize, rounds: usize) -> Vec<Measurement> {
    let key = format!("bench:{}", size.name);
    let con = &mut target.con;
    command(con, &["FLUSHALL"]);
    let started = Instant::now();
    let members =
        if size.synthetic_fill { synthetic_fill(con, &key, size) } else { fill_half(con, &key, size) };
    eprintln!("   {}: filled in {:.1} s", target.name, started.elapsed().as_secs_f64());
    let fill = if size.synthetic_fill { "synthetic, half full" } else { "half full" };
    let bytes = integer(&command(con, &["MEMORY", "USAGE", &key]));
    let bytes_per_item = bytes as f64 / size.capacity as f64;
    let false_positives =
        count_true(con, "BF.MEXISTS", &key, (0..FALSE_POSITIVE_PROBES).map(|i| format!("probe:{i}")));
    let rate = false_positives as f64 / FALSE_POSITIVE_PROBES as f64;

    let bit_string = format!("bits:{}", size.name);
    let bits = (bytes as u64).max(8) * 8;
    let scripts = if target.measures_baselines {
        command(con, &["SETBIT", &bit_string, &(bits - 1).to_string(), "0"]);
        Some(LuaFilter::load(con))
    } else {
        None
    };

    // Per workload: items per call, and its samples.
    let mut rows: Vec<(&'static str, usize, Samples)> = Vec::new();
    let mut record = |workload: &'static str, items_per_call: usize, sample: (f64, f64)| match rows
        .iter_mut()
        .find(|(name, _, _)| *name == workload)
    {
        Some((_, _, samples)) => samples.push(sample),
        None => rows.push((workload, items_per_call, vec![sample])),
    };
    let mut random = Random(0x9E37_79B9_7F4A_7C15 ^ size.capacity);
    for round in 0..rounds {
        // Every round adds new items; a filter without room for them is filled afresh.
        let added_per_round = (SINGLE_CALLS + BATCH_CALLS * BATCH) as u64;
        if round > 0
            && !size.synthetic_fill
            && size.capacity / 2 + added_per_round * rounds as u64 > size.capacity
        {
            command(con, &["DEL", &key]);
            fill_half(con, &key, size);
        }
        let mixed = |calls: usize, per_call: usize, prefix: &str| {
            mixed_items(members, round, calls, per_call, prefix)
        };
        for (workload, stat, calls, per_call, prefix) in [
            ("BF.EXISTS", "bf.exists", SINGLE_CALLS, 1, "absent"),
            ("BF.MEXISTS", "bf.mexists", BATCH_CALLS, BATCH, "absent"),
            ("BF.ADD", "bf.add", SINGLE_CALLS, 1, "new"),
            ("BF.MADD", "bf.madd", BATCH_CALLS, BATCH, "batch"),
        ] {
            let items = mixed(calls, per_call, prefix);
            record(workload, per_call, timed(con, stat, &key, &items, &[workload], per_call));
        }
        if let Some(scripts) = &scripts {
            let offsets: Vec<Vec<String>> =
                (0..SINGLE_CALLS).map(|_| vec![(random.next() % bits).to_string()]).collect();
            record("GETBIT", 1, timed(con, "getbit", &bit_string, &offsets, &["GETBIT"], 1));
            let set: Vec<Vec<String>> = offsets.iter().map(|o| vec![o[0].clone(), "1".to_string()]).collect();
            record("SETBIT", 1, timed(con, "setbit", &bit_string, &set, &["SETBIT"], 1));
            let bits_arg = bits.to_string();
            let lua = |sha: &str, calls, per_call, prefix| {
                let items = mixed(calls, per_call, prefix);
                let args = [bits_arg.clone(), LuaFilter::HASHES.to_string()];
                let calls: Vec<Vec<String>> =
                    items.into_iter().map(|batch| args.iter().cloned().chain(batch).collect()).collect();
                (sha.to_string(), calls)
            };
            for (workload, sha, calls, per_call, prefix) in [
                ("Lua exists", &scripts.exists, SINGLE_CALLS / 10, 1, "absent"),
                ("Lua mexists", &scripts.exists, BATCH_CALLS / 10, BATCH, "absent"),
                ("Lua add", &scripts.add, SINGLE_CALLS / 10, 1, "lua"),
                ("Lua madd", &scripts.add, BATCH_CALLS / 10, BATCH, "lua-batch"),
            ] {
                let (sha, calls) = lua(sha, calls, per_call, prefix);
                let sample = timed(con, "evalsha", &bit_string, &calls, &["EVALSHA", &sha, "1"], per_call);
                record(workload, per_call, sample);
            }
        }
    }
    rows.into_iter()
        .map(|(workload, items_per_call, samples)| {
            let is_filter = workload.starts_with("BF.");
            Measurement {
                target: target.name.clone(),
                size: size.name,
                workload,
                items_per_call,
                usec_per_call: median(samples.iter().map(|s| s.0).collect()),
                items_per_second: median(samples.iter().map(|s| s.1).collect()),
                bytes_per_item: is_filter.then_some(bytes_per_item),
                false_positive_rate: is_filter.then_some(rate),
                fill,
            }
        })
        .collect()
}

/// Fills a non-scaling filter of 1,000,000 items to capacity and compares its memory with a
/// classic Bloom filter of the false-positive rate measured on it.
pub fn memory_efficiency(target: &mut Target) -> Vec<Efficiency> {
    let con = &mut target.con;
    let capacity = 1_000_000usize;
    [0.1, 0.01, 0.001, 1e-4, 1e-5, 1e-6]
        .into_iter()
        .map(|rate: f64| {
            command(con, &["FLUSHALL"]);
            command(
                con,
                &["BF.RESERVE", "efficiency", &rate.to_string(), &capacity.to_string(), "NONSCALING"],
            );
            let mut next = 0;
            loop {
                let card = integer(&command(con, &["BF.CARD", "efficiency"])) as usize;
                if card >= capacity {
                    break;
                }
                let batch = (capacity - card).min(100_000);
                count_true(con, "BF.MADD", "efficiency", (next..next + batch).map(|i| format!("e:{i}")));
                next += batch;
            }
            // Enough probes for a few hundred false positives where that takes under 20
            // million; at 10⁻⁶ about 20, which still pins the classic filter's size to ±2%.
            let probes = ((400.0 / rate) as usize).clamp(2_000_000, 20_000_000);
            let found = count_true(con, "BF.MEXISTS", "efficiency", (0..probes).map(|i| format!("x:{i}")));
            let measured = found as f64 / probes as f64;
            let bytes = integer(&command(con, &["MEMORY", "USAGE", "efficiency"])) as f64;
            Efficiency {
                target: target.name.clone(),
                requested_rate: rate,
                measured_rate: measured,
                bits_per_item: bytes * 8.0 / capacity as f64,
                classic_bits_per_item: -measured.ln() / std::f64::consts::LN_2.powi(2),
            }
        })
        .collect()
}

/// A non-scaling filter of the size's capacity and rate, half full; answers the members added.
fn fill_half(con: &mut Connection, key: &str, size: &FilterSize) -> usize {
    command(con, &["BF.RESERVE", key, size.rate, &size.capacity.to_string(), "NONSCALING"]);
    let members = (size.capacity / 2) as usize;
    add_members(con, key, members);
    members
}

/// Adds `m:0` .. `m:{count-1}`.
fn add_members(con: &mut Connection, key: &str, count: usize) {
    count_true(con, "BF.MADD", key, (0..count).map(|i| format!("m:{i}")));
}

/// Writes a filter whose bits are set at random with the density of a half-full filter, via
/// SCANDUMP of an empty one (for the chunk layout, which every BF.* module defines itself)
/// and LOADCHUNK; then adds real members. Answers the number of members.
pub fn synthetic_fill(con: &mut Connection, key: &str, size: &FilterSize) -> usize {
    let template = format!("{key}:template");
    let capacity = size.capacity;
    command(con, &["BF.RESERVE", &template, size.rate, &capacity.to_string(), "NONSCALING"]);
    let Value::Array(debug) = command(con, &["BF.DEBUG", &template]) else { panic!("BF.DEBUG") };
    let line = text(&debug[1]);
    let field = |name: &str| -> f64 {
        line.split(' ').find_map(|f| f.strip_prefix(name)).and_then(|v| v.parse().ok()).expect(name)
    };
    let density = 1.0 - (-field("hashes:") * capacity as f64 / 2.0 / field("bits:")).exp();

    let mut pieces = Vec::new();
    let mut iterator = 0i64;
    loop {
        let Value::Array(reply) = command(con, &["BF.SCANDUMP", &template, &iterator.to_string()]) else {
            panic!()
        };
        let (Value::Int(next), Value::BulkString(data)) = (&reply[0], &reply[1]) else { panic!("{reply:?}") };
        if *next == 0 {
            break;
        }
        pieces.push((*next, if iterator == 0 { Some(data.clone()) } else { None }, data.len()));
        iterator = *next;
    }
    command(con, &["DEL", &template]);
    let largest = pieces.iter().skip(1).map(|p| p.2).max().unwrap_or(0);
    let pattern = random_bits(largest, density);
    for (iterator, header, len) in pieces {
        let data = header.as_deref().unwrap_or(&pattern[..len]);
        let mut cmd = redis::cmd("BF.LOADCHUNK");
        cmd.arg(key).arg(iterator).arg(data);
        let reply = con.req_command(&cmd).expect("BF.LOADCHUNK");
        assert!(!matches!(reply, Value::ServerError(_)), "BF.LOADCHUNK: {reply:?}");
    }
    add_members(con, key, SYNTHETIC_MEMBERS);
    SYNTHETIC_MEMBERS
}

fn random_bits(len: usize, density: f64) -> Vec<u8> {
    let threshold = (density * f64::from(u32::MAX)) as u32;
    let mut random = Random(0x2545_F491_4F6C_DD1D);
    (0..len)
        .map(|_| (0..8).fold(0u8, |byte, bit| byte | (u8::from((random.next() as u32) < threshold) << bit)))
        .collect()
}

/// Runs `prefix key args...` for every argument list, pipelined; answers the server's
/// microseconds per call (INFO commandstats) and the client's items per second.
pub fn timed(
    con: &mut Connection,
    stat: &str,
    key: &str,
    calls: &[Vec<String>],
    prefix: &[&str],
    items_per_call: usize,
) -> (f64, f64) {
    command(con, &["CONFIG", "RESETSTAT"]);
    let started = Instant::now();
    for group in calls.chunks(PIPELINE) {
        let mut pipe = redis::pipe();
        for args in group {
            let (name, rest) = prefix.split_first().expect("a command");
            let cmd = pipe.cmd(name);
            for arg in rest {
                cmd.arg(*arg);
            }
            cmd.arg(key).arg(args);
        }
        con.req_packed_commands(&pipe.get_packed_pipeline(), 0, group.len()).expect("pipeline");
    }
    let seconds = started.elapsed().as_secs_f64();
    let usec = commandstat(con, stat);
    (usec, (calls.len() * items_per_call) as f64 / seconds)
}

/// A command's server time per call since the last CONFIG RESETSTAT, from its total time
/// and calls: `usec_per_call` has two decimals, 2.5% of a 0.2 µs call.
pub fn commandstat(con: &mut Connection, command: &str) -> f64 {
    let (usec, calls) = commandstat_totals(con, command);
    assert!(calls > 0.0, "{command} was not called");
    usec / calls
}

/// A command's total server time in microseconds and its calls since the last CONFIG
/// RESETSTAT (none when it was not called): finer than `usec_per_call`, which has two decimals.
pub fn commandstat_totals(con: &mut Connection, command: &str) -> (f64, f64) {
    (stat_field(con, command, "usec").unwrap_or(0.0), stat_field(con, command, "calls").unwrap_or(0.0))
}

fn stat_field(con: &mut Connection, command: &str, field: &str) -> Option<f64> {
    let line = info_field(con, "commandstats", &format!("cmdstat_{command}"))?;
    let prefix = format!("{field}=");
    line.split(',').find_map(|pair| pair.strip_prefix(prefix.as_str())).and_then(|value| value.parse().ok())
}

fn info_field(con: &mut Connection, section: &str, name: &str) -> Option<String> {
    let info = text(&command(con, &["INFO", section]));
    info.lines().find_map(|line| line.strip_prefix(&format!("{name}:")).map(str::to_string))
}

/// Sends `command key items...` in groups of 1000 items, pipelined; counts replies of 1.
fn count_true(con: &mut Connection, command: &str, key: &str, items: impl Iterator<Item = String>) -> usize {
    let items: Vec<String> = items.collect();
    let mut count = 0;
    for chunk in items.chunks(PIPELINE * 50) {
        let mut pipe = redis::pipe();
        let groups: Vec<&[String]> = chunk.chunks(1000).collect();
        for group in &groups {
            pipe.cmd(command).arg(key).arg(*group);
        }
        let replies = con.req_packed_commands(&pipe.get_packed_pipeline(), 0, groups.len()).expect(command);
        for reply in replies {
            if let Value::Array(values) = reply {
                count += values.iter().filter(|v| matches!(v, Value::Int(1) | Value::Boolean(true))).count();
            }
        }
    }
    count
}

pub fn command(con: &mut Connection, args: &[&str]) -> Value {
    common::ok(con, args)
}

fn integer(value: &Value) -> i64 {
    match value {
        Value::Int(n) => *n,
        other => panic!("expected an integer, got {other:?}"),
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::BulkString(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Value::SimpleString(text) | Value::VerbatimString { text, .. } => text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

pub fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// xorshift64*: fast, reproducible, good enough for offsets and fill patterns.
pub struct Random(pub u64);

impl Random {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// A Bloom filter in Lua over SETBIT/GETBIT: what users run without a module. k positions
/// from SHA-1 by double hashing.
struct LuaFilter {
    add: String,
    exists: String,
}

impl LuaFilter {
    const HASHES: u32 = 7;
    const PREAMBLE: &'static str = r"
        local m = tonumber(ARGV[1]); local k = tonumber(ARGV[2]); local out = {}
        for j = 3, #ARGV do
          local h = redis.sha1hex(ARGV[j])
          local h1 = tonumber(string.sub(h, 1, 8), 16); local h2 = tonumber(string.sub(h, 9, 16), 16)
    ";
    const ADD: &'static str = r"
          local added = 0
          for i = 0, k - 1 do
            if redis.call('SETBIT', KEYS[1], (h1 + i * h2) % m, 1) == 0 then added = 1 end
          end
          out[#out + 1] = added
        end
        return out";
    const EXISTS: &'static str = r"
          local found = 1
          for i = 0, k - 1 do
            if redis.call('GETBIT', KEYS[1], (h1 + i * h2) % m) == 0 then found = 0; break end
          end
          out[#out + 1] = found
        end
        return out";

    fn load(con: &mut Connection) -> LuaFilter {
        let mut load =
            |body: &str| text(&command(con, &["SCRIPT", "LOAD", &format!("{}{body}", Self::PREAMBLE)]));
        LuaFilter { add: load(Self::ADD), exists: load(Self::EXISTS) }
    }
}

/// `calls` calls of `per_call` items each: every other item a member (`m:` and a number below
/// `members`), the others `{prefix}:{round}:{n}`, never added.
pub fn mixed_items(
    members: usize,
    round: usize,
    calls: usize,
    per_call: usize,
    prefix: &str,
) -> Vec<Vec<String>> {
    (0..calls)
        .map(|call| {
            (0..per_call)
                .map(|i| {
                    let n = call * per_call + i;
                    if n.is_multiple_of(2) {
                        format!("m:{}", (n * 7919) % members)
                    } else {
                        format!("{prefix}:{round}:{n}")
                    }
                })
                .collect()
        })
        .collect()
}
