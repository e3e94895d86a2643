//! `make bench`: BF.* against its floor (GETBIT/SETBIT on a string of the same size) and
//! against what users do without a module (a Bloom filter in Lua over SETBIT/GETBIT), all
//! measured in one run on real redis-server processes; the module in both of its formats
//! (its own, and RedisBloom's kept byte for byte); optionally against another module that
//! serves BF.* (`--compare-module PATH`); and the sketches (CMS.*, TOPK.*, TDIGEST.*)
//! against RedisBloom, interleaved in one run (`sketches`), with the t-digest's accuracy
//! against RedisBloom's on the same streams (`accuracy`) and the creation of new keys of
//! every type (`creation`); and windowed filters and sketches
//! against plain ones of the same size (`window` and a `window_*` file per sketch).
//!
//! Server-side cost comes from INFO commandstats (`usec_per_call`), which the client's own speed
//! does not distort; every figure is the median of several rounds.

mod accuracy;
#[path = "../../tests/it/harness.rs"]
#[allow(dead_code)] // the bench uses only part of the tests' harness
mod common;
mod creation;
mod cuckoo;
mod floor;
mod persistence;
mod report;
mod sketches;
mod stalls;
mod window;
mod window_cms;
mod window_t_digest;
mod window_top_k;
mod workloads;

use common::Server;
use std::path::PathBuf;
use workloads::{FilterSize, Target};

#[allow(clippy::struct_excessive_bools, reason = "command-line switches, each its own flag")]
struct Options {
    compare_module: Option<PathBuf>,
    /// Also measure redbloom with `bf.huge-pages yes`.
    huge_pages: bool,
    /// Also measure redbloom keeping RedisBloom's format (`bf.format redisbloom`).
    redisbloom_format: bool,
    /// Also measure CF.* (redbloom, and the compared module).
    cuckoo: bool,
    /// Whether to measure the sketches against RedisBloom, or them only.
    sketches: Part,
    /// Whether to measure windowed filters against plain ones, or them only.
    window: Part,
    /// Of the windowed measurements, only the windowed filter's steady streams.
    window_stream_only: bool,
    json: PathBuf,
    rounds: usize,
    sizes: Vec<FilterSize>,
}

/// Whether a part of the bench runs with the rest, not at all, or alone.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Skip,
    Also,
    Only,
}

fn options() -> Options {
    let mut options = Options {
        compare_module: None,
        huge_pages: true,
        redisbloom_format: true,
        cuckoo: true,
        sketches: Part::Also,
        window: Part::Also,
        window_stream_only: false,
        json: PathBuf::from("target/bench/results.json"),
        rounds: 5,
        sizes: FilterSize::all(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage(&format!("{arg} needs a value")));
        match arg.as_str() {
            "--compare-module" => options.compare_module = Some(PathBuf::from(value())),
            "--json" => options.json = PathBuf::from(value()),
            "--no-huge-pages" => options.huge_pages = false,
            "--no-redisbloom-format" => options.redisbloom_format = false,
            "--no-cuckoo" => options.cuckoo = false,
            "--no-sketches" => options.sketches = Part::Skip,
            "--only-sketches" => options.sketches = Part::Only,
            "--no-window" => options.window = Part::Skip,
            "--only-window" => options.window = Part::Only,
            "--only-window-stream" => (options.window, options.window_stream_only) = (Part::Only, true),
            "--rounds" => {
                options.rounds = value().parse().unwrap_or_else(|_| usage("--rounds takes a number"));
            }
            "--sizes" => {
                let names = value();
                options.sizes = FilterSize::all()
                    .into_iter()
                    .filter(|size| names.split(',').any(|name| name == size.name))
                    .collect();
            }
            "--help" | "-h" => usage(""),
            other => usage(&format!("unknown argument {other}")),
        }
    }
    options
}

fn usage(problem: &str) -> ! {
    eprintln!(
        "{problem}\nusage: make bench [BENCH_ARGS='--compare-module PATH --rounds N --sizes 1MB,12MB,1GB,1GB@0.1% --json FILE --no-huge-pages --no-redisbloom-format --no-cuckoo --no-sketches --only-sketches --no-window --only-window --only-window-stream']"
    );
    std::process::exit(2)
}

fn main() {
    let options = options();
    if options.window != Part::Skip && options.sketches != Part::Only {
        eprintln!("== windowed values against plain ones of the same size");
        let runs: &[fn(usize) -> Vec<window::Row>] = if options.window_stream_only {
            &[window::stream]
        } else {
            &[window::run, window::stream, window_cms::run, window_top_k::run, window_t_digest::run]
        };
        let rows: Vec<window::Row> = runs.iter().flat_map(|run| run(options.rounds)).collect();
        let table = window::table(&rows);
        println!("{table}");
        write_beside(&options.json.with_file_name("window.md"), &table);
        if options.window == Part::Only {
            return;
        }
    }
    if options.sketches != Part::Skip {
        eprintln!("== sketches, redbloom and RedisBloom interleaved");
        let mut rows = sketches::run(options.rounds);
        eprintln!("== creations of new keys, redbloom and RedisBloom interleaved");
        rows.extend(creation::run(options.rounds));
        let table = sketches::table(&rows);
        println!("{table}");
        write_beside(&options.json.with_file_name("sketches.md"), &table);
        accuracy::report(&options.json);
        if options.sketches == Part::Only {
            return;
        }
    }
    // Large filters need more than the default 4 GiB budget and 512 MB strings.
    let config = ["--proto-max-bulk-len", "4gb", "--maxmemory", "0"];
    let budget = ["max-filter-bytes", "17179869184"];
    let ours = Server::start_with(&budget, &config);
    let mut targets = vec![Target::new("redbloom", ours, true)];
    if options.huge_pages {
        let with_huge_pages = Server::start_with(&[&budget[..], &["huge-pages", "yes"]].concat(), &config);
        targets.push(Target::new("redbloom+hugepages", with_huge_pages, false));
    }
    if options.redisbloom_format {
        let keeping_format = Server::start_with(&[&budget[..], &["format", "redisbloom"]].concat(), &config);
        targets.push(Target::new("redbloom:redisbloom-format", keeping_format, false));
    }
    if let Some(module) = &options.compare_module {
        let module =
            std::fs::canonicalize(module).unwrap_or_else(|_| usage("--compare-module: no such file"));
        let name = module.file_stem().map_or("other".into(), |n| n.to_string_lossy().into_owned());
        targets.push(Target::new(&name, Server::start_module(module, &[], &config), false));
    }

    let mut results = Vec::new();
    for size in &options.sizes {
        eprintln!("== {} filters (capacity {}, rate {})", size.name, size.capacity, size.rate);
        for target in &mut targets {
            results.extend(workloads::run_size(target, size, options.rounds));
        }
    }
    let mut cuckoo_efficiency = Vec::new();
    if options.cuckoo {
        let last = targets.len() - 1;
        let compared = if options.compare_module.is_some() { vec![0, last] } else { vec![0] };
        for size in &cuckoo::SIZES {
            eprintln!("== {} cuckoo filters ({} slots)", size.name, size.slots());
            let mut filled: Vec<(usize, cuckoo::Filled)> =
                compared.iter().map(|&index| (index, cuckoo::prepare(&mut targets[index], size))).collect();
            // On a small shared machine the server measured first comes out slower on single
            // items, enough to decide which module leads; rounds take turns at going first.
            for round in 0..options.rounds {
                let mut order: Vec<&mut (usize, cuckoo::Filled)> = filled.iter_mut().collect();
                if round % 2 == 1 {
                    order.reverse();
                }
                for (index, filter) in order {
                    filter.round(&mut targets[*index], round);
                }
            }
            for (_, filter) in filled {
                results.extend(filter.measurements());
            }
        }
        // Target 0 is redbloom, the one with ERROR.
        for &index in &compared {
            cuckoo_efficiency.extend(cuckoo::efficiency(&mut targets[index], index == 0));
        }
    }
    let mut efficiency = Vec::new();
    let mut large = report::Large::default();
    let measures_large = options.sizes.iter().any(|size| size.name == "1GB");
    for target in &mut targets {
        efficiency.push(workloads::memory_efficiency(target));
        if measures_large {
            eprintln!("== slowest single calls and persistence on 1 GB filters: {}", target.name);
            large.stalls.extend(stalls::measure(target));
            large.persistence.push(persistence::measure(target));
        }
    }
    // Each filter size's floor, over a buffer of about the size redbloom's filter of it takes.
    let floors =
        options.sizes.iter().map(|size| (size.name, floor::measure(size.approximate_bytes()))).collect();
    let report = report::Report::new(results, efficiency, cuckoo_efficiency, large, floors, &targets);
    println!("{}", report.table());
    write_beside(&options.json, &report.json());
    eprintln!("JSON written to {}", options.json.display());
}

/// Writes a report file, making its folder first (`target/bench` on a fresh checkout).
fn write_beside(path: &std::path::Path, text: &str) {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::write(path, text).unwrap_or_else(|error| panic!("writing {}: {error}", path.display()));
}
