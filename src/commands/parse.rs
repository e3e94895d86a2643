//! Argument parsing: pure functions over the arguments' bytes (the command name first), so
//! that they are unit-tested and fuzzed without a server. The error strings live in
//! `error.rs`.

use super::BfError;
use crate::filter::cuckoo::{
    CuckooParams, Width, DEFAULT_BUCKET_SIZE, DEFAULT_EXPANSION, DEFAULT_MAX_ITERATIONS, MAX_BUCKET_SIZE,
    MAX_EXPANSION,
};
use crate::filter::{params, Filter, FilterError, Format};

/// Everything needed to create a filter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Creation {
    pub capacity: u64,
    pub error_rate: f64,
    /// 0 for non-scaling.
    pub expansion: u32,
    pub format: Format,
}

/// The words of `FORMAT`, which BF.RESERVE and BF.INSERT take (an extension of this module).
fn format_name(format: Format) -> &'static str {
    match format {
        Format::Redbloom => "REDBLOOM",
        Format::RedisBloom => "REDISBLOOM",
    }
}

pub fn format_named(name: &[u8]) -> Option<Format> {
    [Format::Redbloom, Format::RedisBloom].into_iter().find(|&format| is_keyword(name, format_name(format)))
}

impl Creation {
    pub fn try_build(&self, max_bytes: usize) -> Result<Filter, FilterError> {
        Filter::try_new(self.format, self.capacity, self.error_rate, self.expansion, max_bytes)
    }
}

pub fn float(bytes: &[u8]) -> Option<f64> {
    let value: f64 = std::str::from_utf8(bytes).ok()?.parse().ok()?;
    (!value.is_nan()).then_some(value)
}

/// An integer as Redis reads one: an optional minus, no plus, no leading zeros, no "-0".
pub fn integer(bytes: &[u8]) -> Option<i64> {
    let digits = bytes.strip_prefix(b"-").unwrap_or(bytes);
    let canonical = match digits {
        [b'0'] => bytes.len() == 1,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !canonical {
        return None;
    }
    std::str::from_utf8(bytes).ok()?.parse().ok()
}

pub fn is_keyword(bytes: &[u8], keyword: &str) -> bool {
    bytes.eq_ignore_ascii_case(keyword.as_bytes())
}

/// A valid error rate (capped at 0.25), or `out_of_range` when outside (0, 1).
fn error_rate_in_range(rate: f64, out_of_range: BfError) -> Result<f64, BfError> {
    params::checked_error_rate(rate).ok_or(out_of_range)
}

/// What a creating command asked for, once checked.
#[derive(Debug, PartialEq)]
pub struct Parsed {
    /// `None` for BF.INSERT's NOCREATE.
    pub creation: Option<Creation>,
    /// BF.INSERT: the argument where the items start.
    pub first_item: usize,
    /// An error rate above 0.25 that was capped, worth a line in the log.
    pub capped_rate: Option<f64>,
}

/// BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING] [FORMAT f]. Options may come
/// in any order and anything unknown is skipped: some clients send the expansion number
/// without its keyword.
/// `defaults` gives the expansion and format when they are not named.
pub fn reserve(args: &[&[u8]], defaults: Creation) -> Result<Parsed, BfError> {
    let asked_rate = args.get(2).and_then(|arg| float(arg)).ok_or(BfError::BadErrorRate)?;
    let error_rate = error_rate_in_range(asked_rate, BfError::ErrorRateOutOfRange)?;
    let capacity = args.get(3).and_then(|arg| integer(arg)).ok_or(BfError::BadCapacity)?;
    if !params::capacity_in_range(capacity) {
        return Err(BfError::CapacityOutOfRange);
    }
    let mut expansion = None;
    let mut nonscaling = false;
    let mut format = defaults.format;
    let mut index = 4;
    while let Some(token) = args.get(index) {
        if is_keyword(token, "FORMAT") {
            format = args.get(index + 1).and_then(|name| format_named(name)).ok_or(BfError::BadFormat)?;
            index += 2;
        } else if is_keyword(token, "EXPANSION") {
            let value = args.get(index + 1).ok_or(BfError::NoExpansion)?;
            let value = integer(value).ok_or(BfError::BadExpansion)?;
            if !params::expansion_in_range(value) {
                return Err(BfError::ExpansionOutOfRange);
            }
            expansion = Some(value as u32);
            index += 2;
        } else {
            nonscaling |= is_keyword(token, "NONSCALING");
            index += 1;
        }
    }
    let expansion = scaling(expansion, nonscaling, defaults.expansion)?;
    Ok(Parsed {
        creation: Some(Creation { capacity: capacity as u64, error_rate, expansion, format }),
        first_item: args.len(),
        capped_rate: (error_rate != asked_rate).then_some(asked_rate),
    })
}

/// BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] [FORMAT f]
/// ITEMS item ... What is not given comes from `defaults`.
pub fn insert(args: &[&[u8]], defaults: Creation) -> Result<Parsed, BfError> {
    let mut creation = defaults;
    let mut capped_rate = None;
    let mut expansion_given = None;
    let mut nocreate = false;
    let mut nonscaling = false;
    let mut index = 2;
    let first_item = loop {
        let token = args.get(index).ok_or(BfError::WrongArity)?;
        let value = || args.get(index + 1).ok_or(BfError::WrongArity);
        if is_keyword(token, "CAPACITY") {
            let capacity = integer(value()?).filter(|&c| params::capacity_in_range(c));
            creation.capacity = capacity.ok_or(BfError::InsertBadCapacity)? as u64;
            index += 2;
        } else if is_keyword(token, "ERROR") {
            let rate = float(value()?).ok_or(BfError::InsertBadErrorRate)?;
            creation.error_rate = error_rate_in_range(rate, BfError::InsertBadErrorRate)?;
            capped_rate = (creation.error_rate != rate).then_some(rate);
            index += 2;
        } else if is_keyword(token, "EXPANSION") {
            let expansion = integer(value()?).filter(|&e| params::expansion_in_range(e));
            expansion_given = Some(expansion.ok_or(BfError::InsertBadExpansion)? as u32);
            index += 2;
        } else if is_keyword(token, "FORMAT") {
            creation.format = format_named(value()?).ok_or(BfError::BadFormat)?;
            index += 2;
        } else if is_keyword(token, "NOCREATE") {
            nocreate = true;
            index += 1;
        } else if is_keyword(token, "NONSCALING") {
            nonscaling = true;
            index += 1;
        } else if is_keyword(token, "ITEMS") {
            break index + 1;
        } else {
            return Err(BfError::UnknownArgument);
        }
    };
    if first_item >= args.len() {
        return Err(BfError::WrongArity);
    }
    creation.expansion = scaling(expansion_given, nonscaling, defaults.expansion)?;
    Ok(Parsed { creation: (!nocreate).then_some(creation), first_item, capped_rate })
}

/// The expansion a new filter gets from EXPANSION and NONSCALING, which contradict each
/// other when both are given with a non-zero expansion.
fn scaling(expansion: Option<u32>, nonscaling: bool, default: u32) -> Result<u32, BfError> {
    match (expansion, nonscaling) {
        (Some(expansion), true) if expansion > 0 => Err(BfError::NonScalingCannotExpand),
        (_, true) => Ok(0),
        (Some(expansion), false) => Ok(expansion),
        (None, false) => Ok(default),
    }
}

/// CF.INSERT and CF.INSERTNX: where the items start, and the filter to create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooInsert {
    pub params: CuckooParams,
    /// The argument holding ERROR's rate, to replicate as it was sent.
    pub rate_arg: Option<usize>,
    pub no_create: bool,
    pub first_item: usize,
}

/// The rate of a cuckoo filter's `ERROR` (an extension: RedisBloom's fingerprints have one
/// width), a number in (0, 1); it picks the width and the bucket size.
fn error_rate_value(value: &[u8], unparsable: BfError) -> Result<f64, BfError> {
    float(value).filter(|rate| *rate > 0.0 && *rate < 1.0).ok_or(unparsable)
}

/// `CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e] [ERROR rate]`,
/// checked in RedisBloom's order: the argument count, the capacity, each option (found
/// anywhere among the arguments, the first occurrence winning, as RedisBloom finds them), then
/// the capacity against the bucket size. ERROR, redbloom's, is looked for after the capacity
/// only, so that a key named `error` means nothing.
pub fn cuckoo_reserve(args: &[&[u8]]) -> Result<CuckooParams, BfError> {
    if args.len() < 3 || args.len().is_multiple_of(2) {
        return Err(BfError::WrongArity);
    }
    let capacity = integer(args[2]).ok_or(BfError::InsertBadCapacity)?;
    let option = |name: &str, min: u16, max: u16, unparsable: BfError, out_of_range: BfError| {
        let Some(position) = args.iter().position(|arg| is_keyword(arg, name)) else {
            return Ok(None);
        };
        // RedisBloom reads past its arguments when the name comes last; here it is unparsable.
        let value = args.get(position + 1).and_then(|value| integer(value)).ok_or(unparsable)?;
        let value = u16::try_from(value).ok().filter(|value| (min..=max).contains(value));
        value.map(Some).ok_or(out_of_range)
    };
    let max_iterations = option(
        "MAXITERATIONS",
        1,
        u16::MAX,
        BfError::CfBadMaxIterations,
        BfError::CfMaxIterationsOutOfRange,
    )?;
    let bucket_size =
        option("BUCKETSIZE", 1, MAX_BUCKET_SIZE, BfError::CfBadBucketSize, BfError::CfBucketSizeOutOfRange)?;
    let expansion =
        option("EXPANSION", 0, MAX_EXPANSION, BfError::CfBadExpansion, BfError::CfExpansionOutOfRange)?;
    let (width, bucket_size) = match args[3..].iter().position(|arg| is_keyword(arg, "ERROR")) {
        Some(position) => {
            let value = args.get(3 + position + 1).ok_or(BfError::CfBadErrorRate)?;
            let rate = error_rate_value(value, BfError::CfBadErrorRate)?;
            if capacity < 2 {
                return Err(BfError::CfCapacityTooSmall);
            }
            Width::for_error_rate(rate, bucket_size, capacity as u64).ok_or(BfError::CfErrorRateTooSmall)?
        }
        None => (Width::Eight, bucket_size.unwrap_or(DEFAULT_BUCKET_SIZE)),
    };
    if capacity < 2 * i64::from(bucket_size) {
        return Err(BfError::CfCapacityTooSmall);
    }
    Ok(CuckooParams {
        capacity: capacity as u64,
        bucket_size,
        max_iterations: max_iterations.unwrap_or(DEFAULT_MAX_ITERATIONS),
        expansion: expansion.unwrap_or(DEFAULT_EXPANSION),
        width,
    })
}

/// `CF.INSERT[NX] key [CAPACITY c] [NOCREATE] [ERROR rate] ITEMS item [item ...]`. As in
/// RedisBloom, an option is known by its first letter, the last CAPACITY wins, everything
/// after ITEMS is an item, and the capacity is checked even when the filter exists. ERROR is
/// redbloom's and spelled out: to RedisBloom any other word of `e` is unknown.
pub fn cuckoo_insert(args: &[&[u8]]) -> Result<CuckooInsert, BfError> {
    let mut parsed =
        CuckooInsert { params: CuckooParams::default(), rate_arg: None, no_create: false, first_item: 0 };
    let mut rate = None;
    let mut index = 2;
    while index < args.len() {
        if is_keyword(args[index], "ERROR") {
            let value = args.get(index + 1).ok_or(BfError::WrongArity)?;
            rate = Some(error_rate_value(value, BfError::InsertBadErrorRate)?);
            parsed.rate_arg = Some(index + 1);
            index += 2;
            continue;
        }
        match args[index].first().map(u8::to_ascii_lowercase) {
            Some(b'c') => {
                let value = args.get(index + 1).ok_or(BfError::WrongArity)?;
                let capacity = integer(value).ok_or(BfError::InsertBadCapacity)?;
                if capacity < 2 * i64::from(DEFAULT_BUCKET_SIZE) {
                    return Err(BfError::CfCapacityTooSmall);
                }
                parsed.params.capacity = capacity as u64;
                index += 2;
            }
            Some(b'n') => {
                parsed.no_create = true;
                index += 1;
            }
            Some(b'i') => {
                parsed.first_item = index + 1;
                break;
            }
            _ => return Err(BfError::UnknownArgument),
        }
    }
    if parsed.first_item == 0 || parsed.first_item >= args.len() {
        return Err(BfError::WrongArity);
    }
    // Checked whether or not the filter exists, as the capacity is.
    if let Some(rate) = rate {
        (parsed.params.width, parsed.params.bucket_size) =
            Width::for_error_rate(rate, None, parsed.params.capacity).ok_or(BfError::CfErrorRateTooSmall)?;
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULTS: Creation =
        Creation { capacity: 100, error_rate: 0.01, expansion: 2, format: Format::Redbloom };

    fn args(line: &str) -> Vec<&[u8]> {
        line.split(' ').map(str::as_bytes).collect()
    }

    #[test]
    fn integers_are_read_as_redis_reads_them() {
        assert_eq!(integer(b"42"), Some(42));
        assert_eq!(integer(b"-7"), Some(-7));
        assert_eq!(integer(b"0"), Some(0));
        for bad in ["", "-", "+1", "007", "-0", "1.5", " 1", "1e3", "99999999999999999999"] {
            assert_eq!(integer(bad.as_bytes()), None, "{bad:?}");
        }
    }

    #[test]
    fn reserve_reads_options_anywhere_and_skips_the_unknown() {
        let parsed = reserve(&args("BF.RESERVE k 0.001 500 4 NONSCALING"), DEFAULTS).unwrap();
        let expected = Creation { capacity: 500, error_rate: 0.001, expansion: 0, ..DEFAULTS };
        assert_eq!(parsed.creation, Some(expected));
        let parsed = reserve(&args("BF.RESERVE k 0.9 5 expansion 7"), DEFAULTS).unwrap();
        assert_eq!(
            parsed.creation,
            Some(Creation { capacity: 5, error_rate: 0.25, expansion: 7, ..DEFAULTS })
        );
        assert_eq!(parsed.capped_rate, Some(0.9));
        assert_eq!(reserve(&args("BF.RESERVE k 0.01 5 EXPANSION"), DEFAULTS), Err(BfError::NoExpansion));
        assert_eq!(reserve(&args("BF.RESERVE k"), DEFAULTS), Err(BfError::BadErrorRate));
    }

    #[test]
    fn format_is_named_in_either_command() {
        let parsed = reserve(&args("BF.RESERVE k 0.01 5 format RedisBloom"), DEFAULTS).unwrap();
        assert_eq!(parsed.creation.unwrap().format, Format::RedisBloom);
        let parsed = insert(&args("BF.INSERT k FORMAT redbloom ITEMS a"), DEFAULTS).unwrap();
        assert_eq!(parsed.creation.unwrap().format, Format::Redbloom);
        let redisbloom_default = Creation { format: Format::RedisBloom, ..DEFAULTS };
        let parsed = insert(&args("BF.INSERT k NONSCALING ITEMS a"), redisbloom_default).unwrap();
        assert_eq!(parsed.creation.unwrap().format, Format::RedisBloom);
        assert_eq!(reserve(&args("BF.RESERVE k 0.01 5 FORMAT"), DEFAULTS), Err(BfError::BadFormat));
        assert_eq!(reserve(&args("BF.RESERVE k 0.01 5 FORMAT other"), DEFAULTS), Err(BfError::BadFormat));
        assert_eq!(insert(&args("BF.INSERT k FORMAT x ITEMS a"), DEFAULTS), Err(BfError::BadFormat));
    }

    #[test]
    fn insert_takes_defaults_for_what_is_not_given() {
        let parsed = insert(&args("BF.INSERT k ERROR 0.5 NOCREATE ITEMS a b"), DEFAULTS).unwrap();
        assert_eq!(parsed.creation, None);
        assert_eq!(parsed.first_item, 6);
        assert_eq!(parsed.capped_rate, Some(0.5));
        let parsed = insert(&args("BF.INSERT k capacity 9 ITEMS a"), DEFAULTS).unwrap();
        assert_eq!(parsed.creation, Some(Creation { capacity: 9, ..DEFAULTS }));
        assert_eq!(insert(&args("BF.INSERT k ITEMS"), DEFAULTS), Err(BfError::WrongArity));
        assert_eq!(insert(&args("BF.INSERT k CAPACITY"), DEFAULTS), Err(BfError::WrongArity));
        assert_eq!(
            insert(&args("BF.INSERT k CAPACITY 0 ITEMS a"), DEFAULTS),
            Err(BfError::InsertBadCapacity)
        );
    }

    #[test]
    fn cuckoo_error_picks_the_width_and_changes_nothing_else() {
        let default = cuckoo_reserve(&args("CF.RESERVE k 1000")).unwrap();
        assert_eq!(default, CuckooParams { capacity: 1000, ..CuckooParams::default() });
        let wide = cuckoo_reserve(&args("CF.RESERVE k 1000 ERROR 0.001 EXPANSION 2")).unwrap();
        assert_eq!((wide.width, wide.bucket_size, wide.expansion), (Width::Sixteen, 8, 2));
        let given = cuckoo_reserve(&args("CF.RESERVE k 1000 error 0.001 BUCKETSIZE 1")).unwrap();
        assert_eq!((given.width, given.bucket_size), (Width::Sixteen, 1));
        let key_named_error = cuckoo_reserve(&args("CF.RESERVE error 1000")).unwrap();
        assert_eq!(key_named_error.width, Width::Eight);
        for bad in ["0", "1", "-0.1", "x", "nan"] {
            let line = format!("CF.RESERVE k 1000 ERROR {bad}");
            assert_eq!(cuckoo_reserve(&args(&line)), Err(BfError::CfBadErrorRate), "{bad}");
        }
        assert_eq!(cuckoo_reserve(&args("CF.RESERVE k 1000 x ERROR")), Err(BfError::CfBadErrorRate));
        assert_eq!(cuckoo_reserve(&args("CF.RESERVE k 1000 ERROR 1e-12")), Err(BfError::CfErrorRateTooSmall));
        let small = cuckoo_reserve(&args("CF.RESERVE k 12 ERROR 0.001")).unwrap();
        assert_eq!(
            (small.width, small.bucket_size),
            (Width::Sixteen, 4),
            "the largest bucket that fits twice"
        );
        assert_eq!(cuckoo_reserve(&args("CF.RESERVE k 1 ERROR 0.1")), Err(BfError::CfCapacityTooSmall));
        assert_eq!(cuckoo_reserve(&args("CF.RESERVE k 1 ERROR x")), Err(BfError::CfBadErrorRate));

        let insert = cuckoo_insert(&args("CF.INSERT k ERROR 1e-6 CAPACITY 500 ITEMS a")).unwrap();
        assert_eq!(
            (insert.params.width, insert.params.bucket_size, insert.params.capacity),
            (Width::ThirtyTwo, 8, 500)
        );
        assert_eq!((insert.rate_arg, insert.first_item), (Some(3), 7));
        let plain = cuckoo_insert(&args("CF.INSERT k NOCREATE ITEMS a")).unwrap();
        assert_eq!((plain.params, plain.rate_arg), (CuckooParams::default(), None));
        assert_eq!(cuckoo_insert(&args("CF.INSERT k EXPANSION 2 ITEMS a")), Err(BfError::UnknownArgument));
        assert_eq!(cuckoo_insert(&args("CF.INSERT k ERROR 2 ITEMS a")), Err(BfError::InsertBadErrorRate));
        assert_eq!(cuckoo_insert(&args("CF.INSERT k ERROR")), Err(BfError::WrongArity));
    }
}
