//! Windowed values against plain ones of the same size, on one server, the work interleaved in
//! short slices ([`compare`]), with their memory: here BF.EXISTS, BF.MEXISTS, BF.ADD and
//! BF.MADD on a filter reserved with `WINDOW` (an hour, 4 generations) and on a plain filter
//! of the same capacity and rate, both half full ([`run`]), and a steady stream as a new user
//! runs one ([`stream`]); each windowed sketch's file its family's. Server time per item from
//! INFO commandstats, the median of the slices.

use crate::common::Server;
use crate::workloads::{command, commandstat_totals, median, timed, Random};
use redis::ConnectionLike;
use std::fmt::Write;

const CAPACITY: u64 = 1_000_000;
const SINGLE_CALLS: usize = 2_000;
const BATCH_CALLS: usize = 40;
const BATCH: usize = 100;

/// One workload's medians: the windowed filter's and the plain one's server time per item.
pub struct Row {
    pub workload: String,
    pub windowed_usec_per_item: f64,
    pub plain_usec_per_item: f64,
    /// The windowed key's MEMORY USAGE over the plain one's, after the workload.
    pub memory_ratio: f64,
}

fn fill(con: &mut redis::Connection, key: &str) {
    for start in (0..CAPACITY / 2).step_by(1000) {
        let items: Vec<String> = (start..start + 1000).map(|i| format!("member:{i}")).collect();
        let mut args = vec!["BF.MADD", key];
        args.extend(items.iter().map(String::as_str));
        command(con, &args);
    }
}

pub fn run(rounds: usize) -> Vec<Row> {
    let server = Server::start();
    let mut con = server.connection();
    let capacity = CAPACITY.to_string();
    command(&mut con, &["BF.RESERVE", "plain", "0.01", &capacity]);
    command(
        &mut con,
        &["BF.RESERVE", "windowed", "0.01", &capacity, "WINDOW", "3600000", "GENERATIONS", "4"],
    );
    fill(&mut con, "plain");
    fill(&mut con, "windowed");
    let mut random = Random(0x00C0_FFEE);
    let mut calls = |count: usize, per_call: usize| -> Vec<Vec<String>> {
        (0..count)
            .map(|_| (0..per_call).map(|_| format!("member:{}", random.next() % CAPACITY)).collect())
            .collect()
    };
    let workloads = [
        Workload { name: "BF.EXISTS", stat: "bf.exists", per_call: 1, calls: calls(SINGLE_CALLS, 1) },
        Workload {
            name: "BF.MEXISTS",
            stat: "bf.mexists",
            per_call: BATCH,
            calls: calls(BATCH_CALLS, BATCH),
        },
        Workload { name: "BF.ADD", stat: "bf.add", per_call: 1, calls: calls(SINGLE_CALLS, 1) },
        Workload { name: "BF.MADD", stat: "bf.madd", per_call: BATCH, calls: calls(BATCH_CALLS, BATCH) },
    ];
    compare(&mut con, ["windowed", "plain"], &workloads, rounds)
}

/// One command's calls, each the command, the key, then the call's arguments.
pub struct Workload {
    pub name: &'static str,
    /// Its name in INFO commandstats.
    pub stat: &'static str,
    /// Items per call: the table is per item.
    pub per_call: usize,
    pub calls: Vec<Vec<String>>,
}

/// Each workload on the windowed key and the plain one, interleaved in `rounds * 2` slices
/// (the order alternating), with each key's MEMORY USAGE after the workload; the medians.
pub fn compare(
    con: &mut redis::Connection,
    [windowed, plain]: [&str; 2],
    workloads: &[Workload],
    rounds: usize,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for workload in workloads {
        let mut samples = [Vec::new(), Vec::new()];
        for round in 0..rounds * 2 {
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for index in order {
                let key = [windowed, plain][index];
                let (usec, _) =
                    timed(con, workload.stat, key, &workload.calls, &[workload.name], workload.per_call);
                samples[index].push(usec / workload.per_call as f64);
            }
        }
        let [windowed_usec, plain_usec] = samples;
        let row = Row {
            workload: format!("{} x{}", workload.name, workload.per_call),
            windowed_usec_per_item: median(windowed_usec),
            plain_usec_per_item: median(plain_usec),
            memory_ratio: memory_usage(con, windowed) as f64 / memory_usage(con, plain).max(1) as f64,
        };
        eprintln!(
            "   {:<22} windowed {:>7.3} us/item  plain {:>7.3} us/item  windowed / plain {:.2}  memory {:.2}",
            row.workload,
            row.windowed_usec_per_item,
            row.plain_usec_per_item,
            row.windowed_usec_per_item / row.plain_usec_per_item,
            row.memory_ratio,
        );
        rows.push(row);
    }
    rows
}

fn memory_usage(con: &mut redis::Connection, key: &str) -> u64 {
    redis::cmd("MEMORY").arg("USAGE").arg(key).query(con).unwrap_or(0)
}

/// The Markdown table the README quotes.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| workload | windowed µs/item | plain µs/item | windowed ÷ plain | memory windowed ÷ plain |\n|---|---|---|---|---|\n",
    );
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {:.3} | {:.3} | {:.2} | {:.2} |",
            row.workload,
            row.windowed_usec_per_item,
            row.plain_usec_per_item,
            row.windowed_usec_per_item / row.plain_usec_per_item,
            row.memory_ratio
        );
    }
    out
}

/// A steady stream as a new user would run one: `items` distinct new items per window of
/// `window_ms`, added as they come (a tick every `tick_ms`), and lookups among them.
struct Stream {
    items: u64,
    window_ms: u64,
    /// How long the stream runs, in windows: the first is the filter filling up.
    windows: u64,
    /// How often the client sends what came in since its last tick.
    tick_ms: u64,
}

/// BF.RESERVE w 0.01 15000 WINDOW 3000, and 1,000,000 items per 4 s: a small filter (its
/// generations in the caches, where the per-call costs show) and a large one (where memory
/// latency does), each sent every 20 ms, short enough that every span gets nearly its share
/// (a span of 750 ms gets 37 or 38 ticks); and the small one sent every 100 ms, as a client
/// that flushes ten times a second would: a span of 750 ms then gets 7 or 8 ticks, a tick
/// more or less than its share.
const STREAMS: [Stream; 3] = [
    Stream { items: 15_000, window_ms: 3_000, windows: 4, tick_ms: STEADY_TICK_MS },
    Stream { items: 1_000_000, window_ms: 4_000, windows: 3, tick_ms: STEADY_TICK_MS },
    Stream { items: 15_000, window_ms: 3_000, windows: 4, tick_ms: 100 },
];
/// The tick of the first two streams, which their names leave out.
const STEADY_TICK_MS: u64 = 20;
/// Ticks whose calls make one sample: enough calls that INFO's whole microseconds resolve.
const TICKS_PER_SAMPLE: u64 = 10;
/// Single BF.ADD and BF.EXISTS calls per key and tick; a larger stream's other items go in
/// BF.MADD batches of [`MADD_BATCH`].
const SINGLES_PER_TICK: u64 = 100;
const MADD_BATCH: u64 = 1_000;

/// BF.ADD and BF.EXISTS server time on a steady stream, windowed (default generations) against
/// plain, and the windowed key's peak memory against a plain filter holding one window's
/// items. The plain key is what a user without WINDOW runs: a filter of the window's capacity,
/// replaced by an empty one every window (so that it never grows past one link). Every tick
/// both keys take the same calls, in alternating order; reported are the medians, over the
/// samples after the first window, of each key's server time per call (its microseconds
/// over its calls, summed over a sample's ticks), and the highest MEMORY USAGE of the
/// windowed key, read after every tick's writes.
pub fn stream(_rounds: usize) -> Vec<Row> {
    STREAMS.iter().flat_map(run_stream).collect()
}

fn run_stream(stream: &Stream) -> Vec<Row> {
    let server = Server::start();
    let mut con = server.connection();
    let capacity = stream.items.to_string();
    let window = stream.window_ms.to_string();
    command(&mut con, &["BF.RESERVE", "windowed", "0.01", &capacity, "WINDOW", &window]);
    command(&mut con, &["BF.RESERVE", "reference", "0.01", &capacity]);
    add_batches(&mut con, "reference", &(0..stream.items).map(|n| format!("ref:{n}")).collect::<Vec<_>>());
    let reference_bytes = memory_usage(&mut con, "reference");

    let tick_ms = stream.tick_ms;
    let per_tick = stream.items * tick_ms / stream.window_ms;
    let ticks = stream.windows * stream.window_ms / tick_ms;
    let steady_from = stream.window_ms / tick_ms;
    let mut random = Random(0x5EED);
    // Per command (ADD, EXISTS), per key (windowed, plain): the sample being summed
    // (microseconds, calls), and the finished samples.
    let mut sums = [[(0.0, 0.0); 2]; 2];
    let mut samples = [[Vec::new(), Vec::new()], [Vec::new(), Vec::new()]];
    let mut peak_bytes = 0;
    let (mut tick, mut plain_window, mut steady_ticks, mut sent_ticks) = (0, None, 0, 0);
    let started = std::time::Instant::now();
    while tick < ticks {
        let window = tick * tick_ms / stream.window_ms;
        if plain_window != Some(window) {
            command(&mut con, &["DEL", "plain"]);
            command(&mut con, &["BF.RESERVE", "plain", "0.01", &capacity]);
            plain_window = Some(window);
        }
        let first = tick * per_tick;
        let items: Vec<String> = (first..first + per_tick).map(|n| format!("s:{n}")).collect();
        let singles = (SINGLES_PER_TICK.min(per_tick)) as usize;
        // Half the lookups ask for items of the last half window, half for items never added.
        let recent = (stream.items / 2).min(first).max(1);
        let probes: Vec<String> = (0..SINGLES_PER_TICK)
            .map(|n| match n % 2 {
                0 => format!("s:{}", first.saturating_sub(random.next() % recent)),
                _ => format!("absent:{tick}:{n}"),
            })
            .collect();
        let order = if tick % 2 == 0 { [0, 1] } else { [1, 0] };
        for index in order {
            let key = ["windowed", "plain"][index];
            command(&mut con, &["CONFIG", "RESETSTAT"]);
            singles_pipelined(&mut con, "BF.ADD", key, &items[..singles]);
            add_batches(&mut con, key, &items[singles..]);
            singles_pipelined(&mut con, "BF.EXISTS", key, &probes);
            if tick >= steady_from {
                for (command, stat) in ["bf.add", "bf.exists"].iter().enumerate() {
                    let (usec, calls) = commandstat_totals(&mut con, stat);
                    sums[command][index].0 += usec;
                    sums[command][index].1 += calls;
                }
            }
        }
        if tick >= steady_from {
            peak_bytes = peak_bytes.max(memory_usage(&mut con, "windowed"));
            steady_ticks += 1;
            if steady_ticks % TICKS_PER_SAMPLE == 0 {
                for (command, keys) in sums.iter_mut().enumerate() {
                    for (index, (usec, calls)) in keys.iter_mut().enumerate() {
                        samples[command][index].push(*usec / calls.max(1.0));
                        (*usec, *calls) = (0.0, 0.0);
                    }
                }
            }
        }
        sent_ticks += 1;
        // The clock's tick next: a client that fell behind (a loaded machine) skips ticks
        // rather than sending them at once, which would be a burst, not a steady stream.
        let elapsed = started.elapsed();
        tick = (tick + 1).max(elapsed.as_millis() as u64 / tick_ms);
        if let Some(wait) = std::time::Duration::from_millis(tick * tick_ms).checked_sub(elapsed) {
            std::thread::sleep(wait);
        }
    }
    let memory_ratio = peak_bytes as f64 / reference_bytes.max(1) as f64;
    let mut name = format!("{} items / {} ms stream", stream.items, stream.window_ms);
    if tick_ms != STEADY_TICK_MS {
        let _ = write!(name, ", sent every {tick_ms} ms");
    }
    let rows: Vec<Row> = ["BF.ADD", "BF.EXISTS"]
        .iter()
        .zip(samples)
        .map(|(command, [windowed, plain])| Row {
            workload: format!("{command} x1, {name}"),
            windowed_usec_per_item: median(windowed),
            plain_usec_per_item: median(plain),
            memory_ratio,
        })
        .collect();
    for row in &rows {
        eprintln!(
            "   {:<44} windowed {:>7.3} us  plain {:>7.3} us  windowed / plain {:.2}  peak memory {:.2} ({peak_bytes} / {reference_bytes} bytes, {sent_ticks} of {ticks} ticks sent)",
            row.workload,
            row.windowed_usec_per_item,
            row.plain_usec_per_item,
            row.windowed_usec_per_item / row.plain_usec_per_item,
            row.memory_ratio,
        );
    }
    rows
}

/// One call per item, pipelined.
fn singles_pipelined(con: &mut redis::Connection, name: &str, key: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let mut pipe = redis::pipe();
    for item in items {
        pipe.cmd(name).arg(key).arg(item);
    }
    con.req_packed_commands(&pipe.get_packed_pipeline(), 0, items.len()).expect(name);
}

/// BF.MADD in batches of [`MADD_BATCH`], pipelined.
fn add_batches(con: &mut redis::Connection, key: &str, items: &[String]) {
    let batches: Vec<&[String]> = items.chunks(MADD_BATCH as usize).collect();
    if batches.is_empty() {
        return;
    }
    let mut pipe = redis::pipe();
    for batch in &batches {
        pipe.cmd("BF.MADD").arg(key).arg(*batch);
    }
    con.req_packed_commands(&pipe.get_packed_pipeline(), 0, batches.len()).expect("BF.MADD");
}
