//! The sketches (CMS.*, TOPK.*, TDIGEST.*, RedisBloom's `CMSk-TYPE`, `TopK-TYPE` and
//! `TDIS-TYPE`) as black boxes, against the contracts in docs/cms-commands.md,
//! docs/topk-commands.md and docs/tdigest-commands.md.
//!
//! Most tests are differential: the same commands go to the real RedisBloom 2.8.2 and to this
//! module, under both protocols, and every reply must be the same (doubles to within
//! floating-point noise). Where this module deliberately differs (Top-K's decay, reads that
//! change nothing, real digests, refused sizes), the test checks this module only, and says so.
//!
//! RedisBloom's t-digest reads compress the digest they read; this module's answer from a
//! compression of every node and change nothing. The two answer alike when RedisBloom is not
//! read between writes to a digest (its first read then compresses all its nodes, as this
//! module's view does), so the scripts compared read each digest after its writes.

mod cell_size;
mod cell_size_records;
mod count_min;
mod doubles;
mod hostile;
mod persistence;
mod switching;
mod t_digest;
mod top_k;
mod window_cms;
mod window_t_digest;
mod window_top_k;

use crate::harness::*;
use redis::{Connection, Value};

/// One command, as its words.
pub type Script = Vec<Vec<String>>;

/// A value in `[0, whole)` with a fraction of 52 random bits, written to be read back exactly:
/// what t-digests compared with RedisBloom's are fed. Where a centroid and another node of the
/// same mean and a different weight meet, the two modules sort them differently and answer
/// within the t-digest's accuracy of each other (see "The order of equal means" in
/// docs/tdigest-commands.md), not alike; values on a decimal grid meet so (a value repeated, or
/// a centroid's mean on a value drawn later), these next to never.
pub fn unrounded(random: &mut Random, whole: usize) -> String {
    const BITS: u32 = 52;
    let fraction = random.below(1 << BITS) as f64 / (1u64 << BITS) as f64;
    (random.below(whole) as f64 + fraction).to_string()
}

/// Builds a command from its words.
pub fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_string).collect()
}

/// Each command's reply on `con`, errors as their text.
pub fn replies(con: &mut Connection, script: &Script) -> Vec<Result<Value, String>> {
    script
        .iter()
        .map(|command| {
            let args: Vec<&[u8]> = command.iter().map(String::as_bytes).collect();
            call_bytes(con, &args)
        })
        .collect()
}

/// The same value, a double read from either a RESP2 bulk string or a RESP3 double allowed to
/// differ by floating-point noise.
pub fn same_value(ours: &Value, theirs: &Value) -> bool {
    let as_double = |value: &Value| match value {
        Value::Double(number) => Some(*number),
        Value::BulkString(bytes) => std::str::from_utf8(bytes).ok()?.parse::<f64>().ok(),
        _ => None,
    };
    match (ours, theirs) {
        (Value::Array(ours), Value::Array(theirs)) => {
            ours.len() == theirs.len() && ours.iter().zip(theirs).all(|(a, b)| same_value(a, b))
        }
        (Value::Map(ours), Value::Map(theirs)) => {
            ours.len() == theirs.len()
                && ours
                    .iter()
                    .zip(theirs)
                    .all(|((k1, v1), (k2, v2))| same_value(k1, k2) && same_value(v1, v2))
        }
        (Value::Double(_), Value::Double(_)) | (Value::BulkString(_), Value::BulkString(_))
            if ours != theirs =>
        {
            match (as_double(ours), as_double(theirs)) {
                (Some(a), Some(b)) => close(a, b),
                _ => false,
            }
        }
        _ => ours == theirs,
    }
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300)
}

/// An INFO reply of (label, integer) pairs (CMS.INFO, TDIGEST.INFO), under RESP2.
pub fn integer_info(con: &mut Connection, command: &str, key: &str) -> Vec<(String, i64)> {
    let Value::Array(items) = ok(con, &[command, key]) else { panic!("{command} {key}") };
    items
        .chunks(2)
        .map(|pair| match pair {
            [Value::SimpleString(label), Value::Int(value)] => (label.clone(), *value),
            other => panic!("{command} {key}: {other:?}"),
        })
        .collect()
}

/// TDIGEST.INFO as (label, value) pairs.
pub fn tdigest_info(con: &mut Connection, key: &str) -> Vec<(String, i64)> {
    integer_info(con, "TDIGEST.INFO", key)
}

/// The doubles of a reply: one, or an array of them, from RESP2 bulk strings or RESP3 doubles.
pub fn doubles(value: Value) -> Vec<f64> {
    let as_double = |value: &Value| match value {
        Value::BulkString(bytes) => String::from_utf8_lossy(bytes).parse::<f64>().unwrap(),
        Value::Double(number) => *number,
        other => panic!("not a double: {other:?}"),
    };
    match value {
        Value::Array(items) => items.iter().map(as_double).collect(),
        single => vec![as_double(&single)],
    }
}

/// The rank error of each estimate of `quantiles` against the exact values, sorted.
pub fn rank_errors(sorted: &[f64], quantiles: &[f64], estimates: &[f64]) -> Vec<f64> {
    quantiles
        .iter()
        .zip(estimates)
        .map(|(&quantile, &estimate)| {
            let below = sorted.partition_point(|&value| value < estimate);
            let at_or_below = sorted.partition_point(|&value| value <= estimate);
            ((below + at_or_below) as f64 / 2.0 / sorted.len() as f64 - quantile).abs()
        })
        .collect()
}

/// This module's reply as RedisBloom 2.8.2 gives it, where Redis 8.12 only added to it: a
/// CMS.INFO without its fourth pair, which must be `cell_size` 4 (2.8's only size).
pub fn as_in_redisbloom_2_8(command: &[String], reply: &Result<Value, String>) -> Result<Value, String> {
    let is_info = command.first().is_some_and(|name| name.eq_ignore_ascii_case("CMS.INFO"));
    let default_size = |label: &Value, size: &Value| {
        *label == Value::SimpleString("cell_size".into()) && *size == Value::Int(4)
    };
    match reply {
        Ok(Value::Array(fields)) if is_info && fields.len() == 8 && default_size(&fields[6], &fields[7]) => {
            Ok(Value::Array(fields[..6].to_vec()))
        }
        Ok(Value::Map(pairs)) if is_info && pairs.len() == 4 && default_size(&pairs[3].0, &pairs[3].1) => {
            Ok(Value::Map(pairs[..3].to_vec()))
        }
        other => other.clone(),
    }
}

/// Runs `script` on both servers under both protocols (on fresh databases), and asserts that
/// every reply is RedisBloom's (as `as_in_redisbloom_2_8` reads this module's).
pub fn assert_same_replies(ours: &Server, theirs: &Server, script: &Script) {
    for protocol in [false, true] {
        let connect =
            |server: &Server| if protocol { server.connection_resp3() } else { server.connection() };
        let (mut mine, mut reference) = (connect(ours), connect(theirs));
        ok(&mut mine, &["FLUSHALL"]);
        ok(&mut reference, &["FLUSHALL"]);
        let (got, expected) = (replies(&mut mine, script), replies(&mut reference, script));
        for ((command, got), expected) in script.iter().zip(&got).zip(&expected) {
            let got = &as_in_redisbloom_2_8(command, got);
            let same = match (got, expected) {
                (Ok(a), Ok(b)) => same_value(&comparable(command, a), &comparable(command, b)),
                (a, b) => a == b,
            };
            assert!(
                same,
                "RESP{} {command:?}: redbloom {got:?}, RedisBloom {expected:?}",
                if protocol { 3 } else { 2 }
            );
        }
    }
}

/// A reply as the modules are compared: TDIGEST.INFO's `Memory usage` (RedisBloom's is its
/// whole node array, this module's what it holds) and `Total compressions` (RedisBloom counts
/// its reads' compressions, this module's reads compress nothing) set aside; the t-digest tests
/// check both of this module's own.
pub fn comparable(command: &[String], reply: &Value) -> Value {
    let is_info = command.first().is_some_and(|name| name.eq_ignore_ascii_case("TDIGEST.INFO"));
    let kept = |label: &Value| !matches!(label, Value::SimpleString(text) if text == "Memory usage" || text == "Total compressions");
    match reply {
        Value::Array(items) if is_info => Value::Array(
            items.chunks(2).filter(|pair| kept(&pair[0])).flat_map(|pair| pair.iter().cloned()).collect(),
        ),
        Value::Map(pairs) if is_info => {
            Value::Map(pairs.iter().filter(|(label, _)| kept(label)).cloned().collect())
        }
        other => other.clone(),
    }
}

/// Replies of a command on one server, which must succeed.
pub fn value(con: &mut Connection, command: &str) -> Value {
    let args: Vec<&str> = command.split_whitespace().collect();
    ok(con, &args)
}
