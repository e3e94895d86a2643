//! The benchmark's output: a readable table and the same figures as JSON.

use crate::cuckoo::CuckooEfficiency;
use crate::floor::Floor;
use crate::persistence::PersistenceCost;
use crate::stalls::Stall;
use crate::workloads::{Efficiency, Measurement, Target};
use std::fmt::Write;

/// What is measured on 1 GB filters only.
#[derive(Default)]
pub struct Large {
    pub stalls: Vec<Stall>,
    pub persistence: Vec<PersistenceCost>,
}

pub struct Report {
    measurements: Vec<Measurement>,
    efficiency: Vec<Efficiency>,
    cuckoo_efficiency: Vec<CuckooEfficiency>,
    large: Large,
    floors: Vec<(&'static str, Floor)>,
    ours: String,
    others: Vec<String>,
    machine: String,
}

/// Which Lua workload does the same job as each BF.* workload.
const LUA_EQUIVALENT: [(&str, &str); 4] = [
    ("BF.EXISTS", "Lua exists"),
    ("BF.MEXISTS", "Lua mexists"),
    ("BF.ADD", "Lua add"),
    ("BF.MADD", "Lua madd"),
];

impl Report {
    pub fn new(
        measurements: Vec<Measurement>,
        efficiency: Vec<Vec<Efficiency>>,
        cuckoo_efficiency: Vec<CuckooEfficiency>,
        large: Large,
        floors: Vec<(&'static str, Floor)>,
        targets: &[Target],
    ) -> Report {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|info| {
                info.lines().find_map(|l| {
                    l.strip_prefix("model name").map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
                })
            })
            .unwrap_or_else(|| "unknown CPU".to_string());
        let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
        let machine = format!("{cpu}, {cores} cores, Redis {}", targets[0].server_version);
        Report {
            measurements,
            efficiency: efficiency.into_iter().flatten().collect(),
            cuckoo_efficiency,
            large,
            floors,
            ours: targets[0].name.clone(),
            others: targets[1..].iter().map(|t| t.name.clone()).collect(),
            machine,
        }
    }

    fn find(&self, target: &str, size: &str, workload: &str) -> Option<&Measurement> {
        self.measurements.iter().find(|m| m.target == target && m.size == size && m.workload == workload)
    }

    fn sizes(&self) -> Vec<&'static str> {
        let mut sizes: Vec<&'static str> = Vec::new();
        for m in &self.measurements {
            if !sizes.contains(&m.size) {
                sizes.push(m.size);
            }
        }
        sizes
    }

    #[allow(clippy::too_many_lines)] // one table after another, in the order they print
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Machine: {}. Medians of the rounds; server cost from INFO commandstats.\n",
            self.machine
        );
        let _ = write!(
            out,
            "| filter | workload | {0} µs/item | {0} items/s (client) | GETBIT µs/call | ratio to GETBIT | SETBIT µs/call | Lua µs/item | Lua / {0} |",
            self.ours
        );
        for other in &self.others {
            let _ = write!(out, " {other} µs/item | {other} / {} |", self.ours);
        }
        let _ = write!(out, "\n|---|---|---|---|---|---|---|---|---|");
        out.push_str(&"---|---|".repeat(self.others.len()));
        out.push('\n');
        for size in self.sizes() {
            let floor =
                |workload: &str| self.find(&self.ours, size, workload).map_or(f64::NAN, |m| m.usec_per_call);
            for (workload, lua) in LUA_EQUIVALENT {
                let Some(ours) = self.find(&self.ours, size, workload) else { continue };
                let lua = self.find(&self.ours, size, lua).map_or(f64::NAN, Measurement::usec_per_item);
                let _ = write!(
                    out,
                    "| {size} | {workload} ×{} | {:.3} | {:.0} | {:.3} | {:.2} | {:.3} | {:.3} | {:.1} |",
                    ours.items_per_call,
                    ours.usec_per_item(),
                    ours.items_per_second,
                    floor("GETBIT"),
                    ours.usec_per_item() / floor("GETBIT"),
                    floor("SETBIT"),
                    lua,
                    lua / ours.usec_per_item()
                );
                for other in &self.others {
                    let theirs =
                        self.find(other, size, workload).map_or(f64::NAN, Measurement::usec_per_item);
                    let _ = write!(out, " {theirs:.3} | {:.2} |", theirs / ours.usec_per_item());
                }
                out.push('\n');
            }
        }

        let cuckoo: Vec<&Measurement> =
            self.measurements.iter().filter(|m| m.workload.starts_with("CF.")).collect();
        if !cuckoo.is_empty() {
            let _ = writeln!(out, "\nCuckoo filters (CF.*), µs of server time per item:\n");
            let _ = write!(out, "| filter | workload | {} µs/item |", self.ours);
            let others: Vec<&String> =
                self.others.iter().filter(|other| cuckoo.iter().any(|m| &m.target == *other)).collect();
            for other in &others {
                let _ = write!(out, " {other} µs/item | {other} / {} |", self.ours);
            }
            let _ = writeln!(out, "\n|---|---|---|{}", "---|---|".repeat(others.len()));
            for m in cuckoo.iter().filter(|m| m.target == self.ours) {
                let _ = write!(
                    out,
                    "| {} | {} ×{} | {:.3} |",
                    m.size,
                    m.workload,
                    m.items_per_call,
                    m.usec_per_item()
                );
                for other in &others {
                    let theirs =
                        self.find(other, m.size, m.workload).map_or(f64::NAN, Measurement::usec_per_item);
                    let _ = write!(out, " {theirs:.3} | {:.2} |", theirs / m.usec_per_item());
                }
                out.push('\n');
            }
        }

        if !self.cuckoo_efficiency.is_empty() {
            let _ = writeln!(
                out,
                "\nCuckoo filters of 2^20 slots filled until their first refusal, 2M probes, against a Bloom filter of the measured rate:\n"
            );
            let _ = writeln!(out, "| module | CF.RESERVE options | bucket size | items held | measured rate | bits/item | Bloom bits/item at that rate | ratio |");
            let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
            for e in &self.cuckoo_efficiency {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {:.3e} | {:.2} | {:.2} | {:.2} |",
                    e.target,
                    e.options,
                    e.bucket_size,
                    e.items,
                    e.measured_rate,
                    e.bits_per_item,
                    e.bloom_bits_per_item,
                    e.bits_per_item / e.bloom_bits_per_item
                );
            }
        }

        let _ = writeln!(out, "\n| filter | module | bytes/item (MEMORY USAGE / capacity) | false-positive rate (1M probes) | fill |");
        let _ = writeln!(out, "|---|---|---|---|---|");
        for size in self.sizes() {
            for target in std::iter::once(&self.ours).chain(&self.others) {
                if let Some(m) = self.find(target, size, "BF.EXISTS") {
                    let _ = writeln!(
                        out,
                        "| {size} | {target} | {:.3} | {:.5} | {} |",
                        m.bytes_per_item.unwrap_or(f64::NAN),
                        m.false_positive_rate.unwrap_or(f64::NAN),
                        m.fill
                    );
                }
            }
        }

        let _ = writeln!(
            out,
            "\nAt full capacity (10⁶ items, non-scaling, 2M to 20M probes), against a classic Bloom filter of the measured rate:\n"
        );
        let _ = writeln!(out, "| module | requested rate | measured rate | bits/item | classic bits/item at that rate | ratio |");
        let _ = writeln!(out, "|---|---|---|---|---|---|");
        for e in &self.efficiency {
            let _ = writeln!(
                out,
                "| {} | {} | {:.3e} | {:.2} | {:.2} | {:.3} |",
                e.target,
                e.requested_rate,
                e.measured_rate,
                e.bits_per_item,
                e.classic_bits_per_item,
                e.bits_per_item / e.classic_bits_per_item
            );
        }

        if !self.large.stalls.is_empty() {
            let targets: Vec<&String> = std::iter::once(&self.ours).chain(&self.others).collect();
            let _ = writeln!(
                out,
                "\nServer time of the slowest single call (SLOWLOG), µs, on a filter of 800M items at 1%:\n"
            );
            let _ = write!(out, "| operation |");
            for target in &targets {
                let _ = write!(out, " {target} |");
            }
            let _ = write!(out, "\n|---|{}\n", "---|".repeat(targets.len()));
            let mut operations: Vec<&str> = Vec::new();
            for stall in &self.large.stalls {
                if !operations.contains(&stall.operation) {
                    operations.push(stall.operation);
                }
            }
            for operation in operations {
                let _ = write!(out, "| {operation} |");
                for target in &targets {
                    let usec =
                        self.large.stalls.iter().find(|s| s.operation == operation && &&s.target == target);
                    let _ = write!(out, " {} |", usec.map_or("-".to_string(), |s| s.usec.to_string()));
                }
                out.push('\n');
            }
        }

        if !self.large.persistence.is_empty() {
            let _ = writeln!(out, "\nPersistence of a 1 GB filter (rdbcompression no; COW from rdb_last_cow_size over 20,000 BF.ADD during a BGSAVE):\n");
            let _ = writeln!(out, "| module | MEMORY USAGE MB | used_memory MB | RSS MB | SAVE s | SAVE MB/s | load s | load MB/s | COW bytes per add |");
            let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|");
            for p in &self.large.persistence {
                let mb = |bytes: i64| bytes as f64 / 1e6;
                let _ = writeln!(
                    out,
                    "| {} | {:.0} | {:.0} | {:.0} | {:.2} | {:.0} | {:.2} | {:.0} | {:.0} |",
                    p.target,
                    mb(p.filter_bytes),
                    mb(p.used_memory),
                    mb(p.rss),
                    p.save_seconds,
                    mb(p.filter_bytes) / p.save_seconds,
                    p.load_seconds,
                    mb(p.filter_bytes) / p.load_seconds,
                    p.cow_bytes_per_add
                );
            }
        }

        let _ =
            writeln!(out, "\nThe memory floor (this program, not Redis): one random cache-line read, ns:\n");
        let _ = writeln!(out, "| buffer | one at a time (dependent) | in prefetched batches of 100 |");
        let _ = writeln!(out, "|---|---|---|");
        for (size, floor) in &self.floors {
            let _ = writeln!(
                out,
                "| {size} ({:.1} MB) | {:.1} | {:.1} |",
                floor.bytes as f64 / f64::from(1 << 20),
                floor.dependent_ns,
                floor.batched_ns
            );
        }
        out
    }

    #[allow(clippy::too_many_lines)] // one field after another, in the order they print
    pub fn json(&self) -> String {
        let number = |x: f64| if x.is_finite() { format!("{x}") } else { "null".to_string() };
        let optional = |x: Option<f64>| x.map_or("null".to_string(), number);
        let measurements: Vec<String> = self
            .measurements
            .iter()
            .map(|m| {
                format!(
                    "{{\"target\":{:?},\"filter\":{:?},\"workload\":{:?},\"items_per_call\":{},\"usec_per_call\":{},\"usec_per_item\":{},\"client_items_per_second\":{},\"bytes_per_item\":{},\"false_positive_rate\":{},\"fill\":{:?}}}",
                    m.target,
                    m.size,
                    m.workload,
                    m.items_per_call,
                    number(m.usec_per_call),
                    number(m.usec_per_item()),
                    number(m.items_per_second),
                    optional(m.bytes_per_item),
                    optional(m.false_positive_rate),
                    m.fill
                )
            })
            .collect();
        let efficiency: Vec<String> = self
            .efficiency
            .iter()
            .map(|e| {
                format!(
                    "{{\"target\":{:?},\"requested_rate\":{},\"measured_rate\":{},\"bits_per_item\":{},\"classic_bits_per_item\":{},\"ratio\":{}}}",
                    e.target,
                    number(e.requested_rate),
                    number(e.measured_rate),
                    number(e.bits_per_item),
                    number(e.classic_bits_per_item),
                    number(e.bits_per_item / e.classic_bits_per_item)
                )
            })
            .collect();
        let cuckoo_efficiency: Vec<String> = self
            .cuckoo_efficiency
            .iter()
            .map(|e| {
                format!(
                    "{{\"target\":{:?},\"options\":{:?},\"bucket_size\":{},\"items\":{},\"measured_rate\":{},\"bits_per_item\":{},\"bloom_bits_per_item\":{}}}",
                    e.target,
                    e.options,
                    e.bucket_size,
                    e.items,
                    number(e.measured_rate),
                    number(e.bits_per_item),
                    number(e.bloom_bits_per_item)
                )
            })
            .collect();
        let persistence: Vec<String> = self
            .large
            .persistence
            .iter()
            .map(|p| {
                format!(
                    "{{\"target\":{:?},\"filter_bytes\":{},\"used_memory\":{},\"rss\":{},\"save_seconds\":{},\"load_seconds\":{},\"cow_bytes_per_add\":{}}}",
                    p.target,
                    p.filter_bytes,
                    p.used_memory,
                    p.rss,
                    number(p.save_seconds),
                    number(p.load_seconds),
                    number(p.cow_bytes_per_add)
                )
            })
            .collect();
        let floors: Vec<String> = self
            .floors
            .iter()
            .map(|(size, f)| {
                format!(
                    "{{\"filter\":{size:?},\"bytes\":{},\"dependent_ns\":{},\"batched_ns\":{}}}",
                    f.bytes,
                    number(f.dependent_ns),
                    number(f.batched_ns)
                )
            })
            .collect();
        let stalls: Vec<String> = self
            .large
            .stalls
            .iter()
            .map(|s| {
                format!(
                    "{{\"target\":{:?},\"operation\":{:?},\"slowest_usec\":{}}}",
                    s.target, s.operation, s.usec
                )
            })
            .collect();
        format!(
            "{{\"machine\":{:?},\"measurements\":[\n{}\n],\"efficiency\":[\n{}\n],\"cuckoo_efficiency\":[\n{}\n],\"slowest_calls\":[\n{}\n],\"persistence\":[\n{}\n],\"floor\":[\n{}\n]}}\n",
            self.machine,
            measurements.join(",\n"),
            efficiency.join(",\n"),
            cuckoo_efficiency.join(",\n"),
            stalls.join(",\n"),
            persistence.join(",\n"),
            floors.join(",\n")
        )
    }
}
