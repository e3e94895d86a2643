//! `make example`: the cache-penetration path end to end, measured. Starts PostgreSQL with a
//! table of users and Redis with redbloom; sends the same traffic (users, and an attack of
//! random IDs) to the service without its filter, then with it; then deletes users and
//! rebuilds the filter while the traffic goes on. Prints a table, and writes it and a chart of
//! database queries over time under the output directory.
//!
//! `--serve` starts the same servers and the service, and leaves them running for curl until
//! Ctrl-C; `--against ADDRESS` sends the traffic to a service already running (such as that
//! one, while you rebuild its filter by hand).

use cache_penetration::bloom;
use cache_penetration::demo::chart::{line_chart, Series};
use cache_penetration::demo::client::HttpClient;
use cache_penetration::demo::load::{self, pick_users, Report, Traffic, INTERRUPTED};
use cache_penetration::demo::random::Random;
use cache_penetration::demo::servers::{database_lookups, Stack};
use cache_penetration::Error;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

const USAGE: &str = "usage: load [--serve | --against HOST:PORT] [--rows N] [--seconds S] \
[--rate REQUESTS_PER_SECOND] [--clients N] [--attack-share FRACTION] [--deletions N] [--seed N] [--out DIR]";

enum Mode {
    Compare,
    Serve,
    Against(String),
}

struct Options {
    mode: Mode,
    rows: u64,
    seconds: f64,
    rate: f64,
    clients: usize,
    attack_share: f64,
    deletions: usize,
    seed: u64,
    out: PathBuf,
}

fn options() -> Result<Options, Error> {
    let mut options = Options {
        mode: Mode::Compare,
        rows: 1_000_000,
        seconds: 20.0,
        rate: 5000.0,
        clients: 8,
        attack_share: 0.5,
        deletions: 10_000,
        seed: Random::seed_from_clock(),
        out: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/cache-penetration"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--serve" => {
                options.mode = Mode::Serve;
                continue;
            }
            "--help" | "-h" => return Err(USAGE.into()),
            _ => {}
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let invalid = || format!("{flag} {value}: not a valid value\n{USAGE}");
        match flag.as_str() {
            "--rows" => options.rows = value.parse().map_err(|_| invalid())?,
            "--seconds" => options.seconds = value.parse().map_err(|_| invalid())?,
            "--rate" => options.rate = value.parse().map_err(|_| invalid())?,
            "--clients" => options.clients = value.parse().map_err(|_| invalid())?,
            "--attack-share" => options.attack_share = value.parse().map_err(|_| invalid())?,
            "--deletions" => options.deletions = value.parse().map_err(|_| invalid())?,
            "--seed" => options.seed = value.parse().map_err(|_| invalid())?,
            "--out" => options.out = PathBuf::from(value),
            "--against" => options.mode = Mode::Against(value),
            _ => return Err(USAGE.into()),
        }
    }
    if options.rows == 0 || options.clients == 0 || options.rate <= 0.0 || options.seconds <= 0.0 {
        return Err(format!("rows, clients, rate and seconds must be positive\n{USAGE}").into());
    }
    if !(0.0..=0.9).contains(&options.attack_share) {
        return Err(
            "--attack-share must lie between 0 and 0.9 (the rebuild's run adds 0.1 of deleted users)".into(),
        );
    }
    Ok(options)
}

fn main() -> ExitCode {
    // Ctrl-C stops the traffic or the serving; returning then stops the servers and removes
    // their files.
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe { libc::signal(libc::SIGINT, on_interrupt as extern "C" fn(libc::c_int) as libc::sighandler_t) };
    let result = options().and_then(|options| match &options.mode {
        Mode::Compare => compare(&options),
        Mode::Serve => serve(&options),
        Mode::Against(address) => against(address, &options),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("load: {error}");
            ExitCode::FAILURE
        }
    }
}

extern "C" fn on_interrupt(_signal: libc::c_int) {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

fn traffic(options: &Options) -> Traffic {
    Traffic {
        rate: options.rate,
        clients: options.clients,
        duration: Duration::from_secs_f64(options.seconds),
        attack_share: options.attack_share,
        deleted_share: 0.0,
        rows: options.rows,
        deleted: Arc::new(Vec::new()),
        seed: options.seed,
    }
}

fn start_stack(options: &Options) -> Result<Stack, Error> {
    println!("== seed {}: PostgreSQL and Redis with redbloom, on loopback ports", options.seed);
    Stack::start(options.rows, &std::env::current_exe()?.with_file_name("users-service"))
}

fn serve(options: &Options) -> Result<(), Error> {
    let mut stack = start_stack(options)?;
    let address = stack.start_service(true)?.address.clone();
    let rebuild = stack.service_command(true);
    let environment: Vec<String> = rebuild
        .get_envs()
        .filter_map(|(name, value)| Some(format!("{}={}", name.to_str()?, value?.to_str()?)))
        .collect();
    println!(
        "\nThe service is at http://{address} until Ctrl-C. For example:\n\n\
         curl -i http://{address}/users/42\n\
         curl -i http://{address}/users/{}      # never created: the filter answers\n\
         curl -i -X POST --data 'name=Ada+Lovelace&email=ada%40example.com' http://{address}/users\n\
         curl -i -X DELETE http://{address}/users/{new_user}    # the user just created\n\
         curl http://{address}/metrics\n\
         redis-cli -p {} BF.INFO users:ids ERROR\n\n\
         Traffic, from another terminal (it expects every seeded user to be there):\n\n\
         {} --against {address} --rows {} --seconds 60\n\n\
         and, while it runs, a rebuild of the filter:\n\n\
         {} {} rebuild-filter\n",
        load::NEVER_CREATED.start + 4711,
        stack.redis.port(),
        std::env::current_exe()?.display(),
        options.rows,
        environment.join(" "),
        rebuild.get_program().to_string_lossy(),
        new_user = options.rows + 1,
    );
    while !INTERRUPTED.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
    println!("\n== stopping the servers");
    Ok(())
}

fn against(address: &str, options: &Options) -> Result<(), Error> {
    println!("== {} s of traffic to {address}", options.seconds);
    let (report, ()) = load::run(address, &traffic(options), |_| ())?;
    for problem in &report.problems {
        println!("  problem: {problem}");
    }
    let seconds = report.elapsed.as_secs_f64();
    println!(
        "{} requests answered ({} per second), {} wrongly, {} failed; latency p50 {:.2} ms, p99 {:.2} ms, \
         at most {:.0} ms between two answers; {} database queries per second, {} answered by the filter alone",
        grouped(report.answers.len() as f64),
        grouped(report.answers.len() as f64 / seconds),
        report.wrong,
        report.errors,
        report.latency_quantile(0.5).as_secs_f64() * 1000.0,
        report.latency_quantile(0.99).as_secs_f64() * 1000.0,
        report.longest_silence(Duration::ZERO, report.elapsed).as_secs_f64() * 1000.0,
        grouped(report.counter_growth("database_queries_total") / seconds),
        grouped(report.counter_growth("filter_rejections_total"))
    );
    if report.errors + report.wrong > 0 {
        return Err("some requests failed or were answered wrongly".into());
    }
    Ok(())
}

fn compare(options: &Options) -> Result<(), Error> {
    let mut stack = start_stack(options)?;
    let mut db = stack.postgres.connect()?;
    let traffic = traffic(options);
    let shape = format!(
        "{} requests/s from {} connections, {:.0}% for IDs never created",
        grouped(options.rate),
        options.clients,
        options.attack_share * 100.0
    );

    println!("== {} s without the filter: {shape}", options.seconds);
    let address = stack.start_service(false)?.address.clone();
    let without = measure(&address, &traffic, &mut db)?;
    stack.stop_service();
    // Both runs start from an empty cache.
    redis::cmd("FLUSHALL").exec(&mut stack.redis.connect()?)?;

    println!("== {} s with the filter, the same traffic", options.seconds);
    let address = stack.start_service(true)?.address.clone();
    let mut redis = stack.redis.connect()?;
    if let Some(info) = bloom::info(&mut redis, "users:ids")? {
        println!(
            "filter users:ids: {} bytes for a capacity of {}, estimated error rate {:.3}%",
            grouped(info.bytes as f64),
            grouped(info.capacity as f64),
            info.estimated_error_rate * 100.0
        );
    }
    let with = measure(&address, &traffic, &mut db)?;

    let table = comparison_table(&without, &with, options.seconds);
    println!("\n{shape}, {} users, {} s each:\n\n{table}", grouped(options.rows as f64), options.seconds);
    std::fs::create_dir_all(&options.out)?;
    let out = options.out.canonicalize()?;
    let chart = line_chart(
        &format!("Database queries per second: {shape}"),
        "seconds",
        "database queries per second",
        &[
            Series {
                label: "without the filter",
                color: "#d62728",
                points: without.report.counter_rate("database_queries_total"),
            },
            Series {
                label: "with the filter",
                color: "#1f77b4",
                points: with.report.counter_rate("database_queries_total"),
            },
        ],
    );
    let chart_path = out.join("database-queries.svg");
    std::fs::write(&chart_path, chart)?;

    println!("\n== delete {} users, then rebuild the filter while the traffic goes on", options.deletions);
    let rebuild = rebuild_under_load(&stack, &address, &traffic, options)?;
    println!("\n{rebuild}");
    let results_path = out.join("results.md");
    std::fs::write(
        &results_path,
        format!("{shape}, {} users:\n\n{table}\n{rebuild}", grouped(options.rows as f64)),
    )?;
    println!("written: {} and {}", results_path.display(), chart_path.display());
    if [&without.report, &with.report].iter().any(|report| report.errors + report.wrong > 0) {
        return Err("some requests failed or were answered wrongly (see the table)".into());
    }
    Ok(())
}

struct Measured {
    report: Report,
    /// Lookups PostgreSQL ran during the traffic, by its own count.
    database_queries: u64,
}

fn measure(address: &str, traffic: &Traffic, db: &mut postgres::Client) -> Result<Measured, Error> {
    let before = database_lookups(db)?;
    let (report, ()) = load::run(address, traffic, |_| ())?;
    let database_queries = database_lookups(db)? - before;
    for problem in &report.problems {
        println!("  problem: {problem}");
    }
    Ok(Measured { report, database_queries })
}

fn comparison_table(without: &Measured, with: &Measured, seconds: f64) -> String {
    let mut rows =
        vec!["| | without the filter | with the filter |".to_string(), "|---|---:|---:|".to_string()];
    let mut row = |label: &str, value: &dyn Fn(&Measured) -> String| {
        rows.push(format!("| {label} | {} | {} |", value(without), value(with)));
    };
    let per_second =
        |measured: &Measured, count: f64| count / measured.report.elapsed.as_secs_f64().min(seconds);
    let milliseconds = |duration: Duration| format!("{:.2}", duration.as_secs_f64() * 1000.0);
    row("requests answered per second", &|m| grouped(per_second(m, m.report.answers.len() as f64)));
    row("**database queries per second** (PostgreSQL's count)", &|m| {
        format!("**{}**", grouped(per_second(m, m.database_queries as f64)))
    });
    row("database queries per 1,000 requests", &|m| {
        format!("{:.1}", 1000.0 * m.database_queries as f64 / m.report.answers.len().max(1) as f64)
    });
    row("answered by the filter alone", &|m| grouped(m.report.counter_growth("filter_rejections_total")));
    row("answered from the cache", &|m| grouped(m.report.counter_growth("cache_hits_total")));
    row("database rows not found", &|m| grouped(m.report.counter_growth("database_misses_total")));
    row("latency p50, ms", &|m| milliseconds(m.report.latency_quantile(0.5)));
    row("latency p90, ms", &|m| milliseconds(m.report.latency_quantile(0.9)));
    row("latency p99, ms", &|m| milliseconds(m.report.latency_quantile(0.99)));
    row("latency max, ms", &|m| milliseconds(m.report.latency_quantile(1.0)));
    row("wrong answers, errors", &|m| format!("{}, {}", m.report.wrong, m.report.errors));
    rows.join("\n") + "\n"
}

/// Deletes users (the filter keeps their IDs), then sends traffic with a share of requests for
/// them and runs `users-service rebuild-filter` a third of the way in: a description of what
/// the filter and the database saw, and whether every request was answered.
fn rebuild_under_load(
    stack: &Stack,
    address: &str,
    traffic: &Traffic,
    options: &Options,
) -> Result<String, Error> {
    let deleted = pick_users(options.rows, options.deletions, &mut Random::new(options.seed ^ 0xDE1E7E));
    let mut http = HttpClient::new(address);
    for id in &deleted {
        let reply = http.send("DELETE", &format!("/users/{id}"), "")?;
        if reply.status != 204 {
            return Err(format!("DELETE /users/{id}: {} {}", reply.status, reply.body).into());
        }
    }
    let mut redis = stack.redis.connect()?;
    let passed_before = filter_passes(&mut redis, &deleted)?;
    let traffic = Traffic { deleted_share: 0.1, deleted: Arc::new(deleted.clone()), ..traffic.clone() };
    let (report, rebuild) = load::run(address, &traffic, |started| -> Result<(Duration, Duration), Error> {
        std::thread::sleep((started + traffic.duration / 3).saturating_duration_since(Instant::now()));
        let from = started.elapsed();
        let status = stack.service_command(true).arg("rebuild-filter").status()?;
        if !status.success() {
            return Err(format!("users-service rebuild-filter: {status}").into());
        }
        Ok((from, started.elapsed()))
    })?;
    let (from, to) = rebuild?;
    let passed_after = filter_passes(&mut redis, &deleted)?;
    for problem in &report.problems {
        println!("  problem: {problem}");
    }
    let misses = report.counter_rate("database_misses_total");
    let mean = |points: Vec<f64>| points.iter().sum::<f64>() / points.len().max(1) as f64;
    let misses_before =
        mean(misses.iter().filter(|(at, _)| *at <= from.as_secs_f64()).map(|&(_, rate)| rate).collect());
    let misses_after =
        mean(misses.iter().filter(|(at, _)| *at > to.as_secs_f64() + 0.5).map(|&(_, rate)| rate).collect());
    let answered_during = report.answers.iter().filter(|answer| answer.at >= from && answer.at <= to).count();
    if report.errors + report.wrong > 0 {
        return Err(format!(
            "{} errors and {} wrong answers while the filter was rebuilt",
            report.errors, report.wrong
        )
        .into());
    }
    Ok(format!(
        "Rebuild under load ({} requests/s, a tenth of them for the {} deleted users):\n\n\
         - `users-service rebuild-filter` took {:.2} s; {} requests were answered meanwhile, none wrongly and none \
         failed, with at most {:.0} ms between two answers;\n\
         - the filter let through {} of the deleted users' IDs before the rebuild, {} after it;\n\
         - so lookups of deleted users that reached the database fell from {:.0} to {:.1} per second.\n",
        grouped(options.rate),
        grouped(deleted.len() as f64),
        (to - from).as_secs_f64(),
        grouped(answered_during as f64),
        report.longest_silence(from, to).as_secs_f64() * 1000.0,
        grouped(passed_before as f64),
        grouped(passed_after as f64),
        misses_before,
        misses_after
    ))
}

/// How many of `ids` the filter answers "maybe" for.
fn filter_passes(redis: &mut redis::Connection, ids: &[u64]) -> Result<usize, Error> {
    let mut passes = 0;
    for batch in ids.chunks(10_000) {
        let answers: Vec<bool> = redis::cmd("BF.MEXISTS").arg("users:ids").arg(batch).query(redis)?;
        passes += answers.into_iter().filter(|&maybe| maybe).count();
    }
    Ok(passes)
}

/// 1234567.8 as "1,234,568".
fn grouped(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut text = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index) % 3 == 0 {
            text.push(',');
        }
        text.push(digit);
    }
    text
}
