//! Traffic for the service at a fixed rate, as users and an attack send it together: lookups of
//! existing users, of IDs that were never created (random, as an attacker's are), and of users
//! deleted since. Every answer is checked against what it must be, and its latency, and the
//! service's counters twice a second, are recorded.

use super::client::HttpClient;
use super::random::Random;
use super::servers::seeded_user_json;
use crate::Error;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// Set by Ctrl-C (see the `load` binary): the traffic stops early, and the servers are stopped.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// IDs an attacker makes up: far above any the table's sequence will reach.
pub const NEVER_CREATED: std::ops::Range<u64> = 1 << 40..1 << 62;

const SAMPLE_EVERY: Duration = Duration::from_millis(500);

#[derive(Clone)]
pub struct Traffic {
    /// Requests per second, all clients together, sent on schedule whatever the answers take.
    pub rate: f64,
    /// Connections, each sending its share of the requests.
    pub clients: usize,
    pub duration: Duration,
    /// The share of requests for IDs that were never created.
    pub attack_share: f64,
    /// The share of requests for the users in `deleted`.
    pub deleted_share: f64,
    /// The seeded users are 1 to `rows`.
    pub rows: u64,
    /// Seeded users deleted since, sorted: they must be answered 404.
    pub deleted: Arc<Vec<u64>>,
    pub seed: u64,
}

/// The service's `/metrics`, by name, and when they were read (from the start of the run).
pub type Sample = (Duration, HashMap<String, f64>);

pub struct Answer {
    /// When it arrived, from the start of the run.
    pub at: Duration,
    /// From when the request was due to be sent.
    pub latency: Duration,
}

pub struct Report {
    pub elapsed: Duration,
    /// In order of arrival.
    pub answers: Vec<Answer>,
    /// Requests that got no answer, or a 5xx.
    pub errors: u64,
    /// Answers other than the one the request must get.
    pub wrong: u64,
    /// The first few errors and wrong answers, described.
    pub problems: Vec<String>,
    /// Twice a second.
    pub samples: Vec<Sample>,
}

/// Sends `traffic` to the service at `address` until its duration is over; `during` runs
/// meanwhile on this thread, given the start of the run (the rebuild is run from it).
pub fn run<T>(
    address: &str,
    traffic: &Traffic,
    during: impl FnOnce(Instant) -> T,
) -> Result<(Report, T), Error> {
    let started = Instant::now();
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (address, done) = (address.to_string(), Arc::clone(&done));
        thread::spawn(move || sample_metrics(&address, started, &done))
    };
    let clients: Vec<_> = (0..traffic.clients)
        .map(|client| {
            let (address, traffic) = (address.to_string(), traffic.clone());
            thread::spawn(move || send(&address, &traffic, client, started))
        })
        .collect();
    let during = during(started);

    let mut report = Report {
        elapsed: Duration::ZERO,
        answers: Vec::new(),
        errors: 0,
        wrong: 0,
        problems: Vec::new(),
        samples: Vec::new(),
    };
    for client in clients {
        let part = client.join().map_err(|_| "a load client panicked")?;
        report.answers.extend(part.answers);
        report.errors += part.errors;
        report.wrong += part.wrong;
        report.problems.extend(part.problems);
    }
    report.elapsed = started.elapsed();
    done.store(true, Ordering::Relaxed);
    report.samples = sampler.join().map_err(|_| "the metrics sampler panicked")??;
    report.answers.sort_by_key(|answer| answer.at);
    report.problems.truncate(10);
    if INTERRUPTED.load(Ordering::Relaxed) {
        return Err("interrupted".into());
    }
    Ok((report, during))
}

impl Report {
    /// The latency under which `fraction` of the answers came.
    pub fn latency_quantile(&self, fraction: f64) -> Duration {
        let mut latencies: Vec<Duration> = self.answers.iter().map(|answer| answer.latency).collect();
        latencies.sort();
        let index =
            ((latencies.len() as f64 * fraction).ceil() as usize).clamp(1, latencies.len().max(1)) - 1;
        latencies.get(index).copied().unwrap_or_default()
    }

    /// How much a counter of the service grew over the run.
    pub fn counter_growth(&self, name: &str) -> f64 {
        let value = |sample: Option<&Sample>| {
            sample.and_then(|(_, metrics)| metrics.get(name)).copied().unwrap_or(0.0)
        };
        value(self.samples.last()) - value(self.samples.first())
    }

    /// A counter's growth per second between successive samples: (seconds from the start, rate).
    pub fn counter_rate(&self, name: &str) -> Vec<(f64, f64)> {
        self.samples
            .windows(2)
            .filter_map(|pair| {
                let [(before_at, before), (after_at, after)] = pair else { return None };
                let seconds = (*after_at - *before_at).as_secs_f64();
                Some((after_at.as_secs_f64(), (after.get(name)? - before.get(name)?) / seconds))
            })
            .collect()
    }

    /// The longest time between two answers within [from, to] (and from `from` to the first).
    pub fn longest_silence(&self, from: Duration, to: Duration) -> Duration {
        let mut previous = from;
        let mut longest = Duration::ZERO;
        for answer in self.answers.iter().filter(|answer| answer.at >= from && answer.at <= to) {
            longest = longest.max(answer.at - previous);
            previous = answer.at;
        }
        longest.max(to.saturating_sub(previous))
    }
}

struct ClientPart {
    answers: Vec<Answer>,
    errors: u64,
    wrong: u64,
    problems: Vec<String>,
}

/// The requests of client `client`: every `clients`-th slot of the schedule, from its own.
fn send(address: &str, traffic: &Traffic, client: usize, started: Instant) -> ClientPart {
    let mut http = HttpClient::new(address);
    let mut random = Random::new(traffic.seed ^ (client as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut part = ClientPart { answers: Vec::new(), errors: 0, wrong: 0, problems: Vec::new() };
    let interval = Duration::from_secs_f64(traffic.clients as f64 / traffic.rate);
    let mut due = started + Duration::from_secs_f64(client as f64 / traffic.rate);
    while due < started + traffic.duration && !INTERRUPTED.load(Ordering::Relaxed) {
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            thread::sleep(wait);
        }
        let (id, expected) = next_lookup(traffic, &mut random);
        let path = format!("/users/{id}");
        let problem = match http.get(&path) {
            Ok(reply) => {
                let now = Instant::now();
                part.answers.push(Answer { at: now - started, latency: now - due });
                match expected {
                    _ if reply.status >= 500 => {
                        part.errors += 1;
                        Some(format!("GET {path}: {} {}", reply.status, reply.body.trim_end()))
                    }
                    Some(user) if reply.status == 200 && reply.body == user => None,
                    None if reply.status == 404 => None,
                    _ => {
                        part.wrong += 1;
                        let wanted = expected.as_deref().unwrap_or("404");
                        Some(format!(
                            "GET {path}: {} {}, wanted {wanted}",
                            reply.status,
                            reply.body.trim_end()
                        ))
                    }
                }
            }
            Err(error) => {
                part.errors += 1;
                Some(format!("GET {path}: {error}"))
            }
        };
        if let Some(problem) = problem.filter(|_| part.problems.len() < 10) {
            part.problems.push(problem);
        }
        due += interval;
    }
    part
}

/// An ID to look up, and the body it must be answered with (None: 404).
fn next_lookup(traffic: &Traffic, random: &mut Random) -> (u64, Option<String>) {
    let draw = random.unit();
    if draw < traffic.attack_share {
        return (random.between(NEVER_CREATED.start, NEVER_CREATED.end), None);
    }
    if draw < traffic.attack_share + traffic.deleted_share && !traffic.deleted.is_empty() {
        return (traffic.deleted[random.between(0, traffic.deleted.len() as u64) as usize], None);
    }
    // Log-uniform: IDs 1-10 are asked for as often as 10-100, 100-1,000 and so on, so a few
    // users are popular (the cache's work) and there is a long tail.
    let id = ((traffic.rows as f64 + 1.0).powf(random.unit()) as u64).clamp(1, traffic.rows);
    if traffic.deleted.binary_search(&id).is_ok() {
        (id, None)
    } else {
        (id, Some(seeded_user_json(id)))
    }
}

fn sample_metrics(address: &str, started: Instant, done: &AtomicBool) -> Result<Vec<Sample>, Error> {
    let mut http = HttpClient::new(address);
    let mut samples = Vec::new();
    let mut due = started;
    loop {
        let finished = done.load(Ordering::Relaxed);
        samples.push((started.elapsed(), http.metrics()?));
        if finished {
            return Ok(samples);
        }
        due += SAMPLE_EVERY;
        while Instant::now() < due && !done.load(Ordering::Relaxed) {
            thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Seeded users to delete: `count` distinct IDs, sorted.
pub fn pick_users(rows: u64, count: usize, random: &mut Random) -> Vec<u64> {
    let mut picked = HashSet::new();
    while picked.len() < count.min(rows as usize) {
        picked.insert(random.between(1, rows + 1));
    }
    let mut picked: Vec<u64> = picked.into_iter().collect();
    picked.sort_unstable();
    picked
}
