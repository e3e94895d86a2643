//! CF.* argument parsing: pure functions over the arguments' bytes (the command name first),
//! unit-tested and fuzzed without a server. The error strings live in `error.rs`
//! and `shared/error.rs`.

use super::error::CfError;
use crate::shared::error::CommandError;
use crate::shared::parse::{float, integer, is_keyword};
use redbloom_core::cuckoo::{CuckooParams, Width, MAX_BUCKET_SIZE, MAX_EXPANSION};

/// CF.INSERT and CF.INSERTNX: where the items start, and the filter to create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooInsert {
    pub params: CuckooParams,
    pub no_create: bool,
    pub first_item: usize,
}

/// The rate of a cuckoo filter's `ERROR` (an extension: RedisBloom's fingerprints have one
/// width), a number in (0, 1); it picks the width and the bucket size.
fn error_rate_value(value: &[u8], unparsable: CommandError) -> Result<f64, CommandError> {
    float(value).filter(|rate| *rate > 0.0 && *rate < 1.0).ok_or(unparsable)
}

/// `CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e] [ERROR rate]`,
/// checked in RedisBloom's order: the argument count, the capacity, each option (found
/// anywhere among the arguments, the first occurrence winning, as RedisBloom finds them), then
/// the capacity against the bucket size. ERROR, redbloom's, is looked for after the capacity
/// only, so that a key named `error` means nothing; so are the other types' WINDOW and
/// GENERATIONS, refused rather than ignored as RedisBloom ignores words it does not know: a
/// filter that was asked to forget must not be made as one that never does.
pub fn reserve(args: &[&[u8]], defaults: CuckooParams) -> Result<CuckooParams, CommandError> {
    if args.len() < 3 || args.len().is_multiple_of(2) {
        return Err(CommandError::WrongArity);
    }
    let capacity = integer(args[2]).ok_or(CommandError::InsertBadCapacity)?;
    if args[3..].iter().any(|arg| names_a_window(arg)) {
        return Err(CfError::NoWindow.into());
    }
    let option = |name: &str, min: u16, max: u16, unparsable: CfError, out_of_range: CfError| {
        let Some(position) = args.iter().position(|arg| is_keyword(arg, name)) else {
            return Ok(None);
        };
        // RedisBloom reads past its arguments when the name comes last; here it is unparsable.
        let value = args.get(position + 1).and_then(|value| integer(value)).ok_or(unparsable)?;
        let value = u16::try_from(value).ok().filter(|value| (min..=max).contains(value));
        value.map(Some).ok_or(out_of_range)
    };
    let max_iterations =
        option("MAXITERATIONS", 1, u16::MAX, CfError::BadMaxIterations, CfError::MaxIterationsOutOfRange)?;
    let bucket_size =
        option("BUCKETSIZE", 1, MAX_BUCKET_SIZE, CfError::BadBucketSize, CfError::BucketSizeOutOfRange)?;
    let expansion =
        option("EXPANSION", 0, MAX_EXPANSION, CfError::BadExpansion, CfError::ExpansionOutOfRange)?;
    let (width, bucket_size) = match args[3..].iter().position(|arg| is_keyword(arg, "ERROR")) {
        Some(position) => {
            let value = args.get(3 + position + 1).ok_or(CfError::BadErrorRate)?;
            let rate = error_rate_value(value, CfError::BadErrorRate.into())?;
            if capacity < 2 {
                return Err(CfError::CapacityTooSmall.into());
            }
            Width::for_error_rate(rate, bucket_size, capacity as u64).ok_or(CfError::ErrorRateTooSmall)?
        }
        None => (Width::Eight, bucket_size.unwrap_or(defaults.bucket_size)),
    };
    if capacity < 2 * i64::from(bucket_size) {
        return Err(CfError::CapacityTooSmall.into());
    }
    Ok(CuckooParams {
        capacity: capacity as u64,
        bucket_size,
        max_iterations: max_iterations.unwrap_or(defaults.max_iterations),
        expansion: expansion.unwrap_or(defaults.expansion),
        width,
    })
}

/// Whether an option is the other types' `WINDOW` or `GENERATIONS`.
fn names_a_window(arg: &[u8]) -> bool {
    is_keyword(arg, "WINDOW") || is_keyword(arg, "GENERATIONS")
}

/// `CF.INSERT[NX] key [CAPACITY c] [NOCREATE] [ERROR rate] ITEMS item [item ...]`. As in
/// RedisBloom, an option is known by its first letter, the last CAPACITY wins, everything
/// after ITEMS is an item, and the capacity is checked even when the filter exists. ERROR is
/// redbloom's and spelled out: to RedisBloom any other word of `e` is unknown. WINDOW and
/// GENERATIONS answer what CF.RESERVE answers, not RedisBloom's unknown argument.
pub fn insert(args: &[&[u8]], defaults: CuckooParams) -> Result<CuckooInsert, CommandError> {
    let mut parsed = CuckooInsert { params: defaults, no_create: false, first_item: 0 };
    let mut rate = None;
    let mut index = 2;
    while index < args.len() {
        if names_a_window(args[index]) {
            return Err(CfError::NoWindow.into());
        }
        if is_keyword(args[index], "ERROR") {
            let value = args.get(index + 1).ok_or(CommandError::WrongArity)?;
            rate = Some(error_rate_value(value, CommandError::InsertBadErrorRate)?);
            index += 2;
            continue;
        }
        match args[index].first().map(u8::to_ascii_lowercase) {
            Some(b'c') => {
                let value = args.get(index + 1).ok_or(CommandError::WrongArity)?;
                let capacity = integer(value).ok_or(CommandError::InsertBadCapacity)?;
                if capacity < 2 * i64::from(defaults.bucket_size) {
                    return Err(CfError::CapacityTooSmall.into());
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
            _ => return Err(CommandError::UnknownArgument),
        }
    }
    if parsed.first_item == 0 || parsed.first_item >= args.len() {
        return Err(CommandError::WrongArity);
    }
    // Checked whether or not the filter exists, as the capacity is.
    if let Some(rate) = rate {
        (parsed.params.width, parsed.params.bucket_size) =
            Width::for_error_rate(rate, None, parsed.params.capacity).ok_or(CfError::ErrorRateTooSmall)?;
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<&[u8]> {
        line.split(' ').map(str::as_bytes).collect()
    }

    fn reserve_default(args: &[&[u8]]) -> Result<CuckooParams, CommandError> {
        reserve(args, CuckooParams::default())
    }

    fn insert_default(args: &[&[u8]]) -> Result<CuckooInsert, CommandError> {
        insert(args, CuckooParams::default())
    }

    /// What the `cf-*` settings give is taken where the command names nothing, and where it
    /// does, the command wins.
    #[test]
    fn cuckoo_defaults_fill_what_the_command_leaves_out() {
        let defaults = CuckooParams {
            capacity: 5000,
            bucket_size: 4,
            max_iterations: 50,
            expansion: 2,
            ..CuckooParams::default()
        };
        let reserved = reserve(&args("CF.RESERVE k 1000"), defaults).unwrap();
        assert_eq!(reserved, CuckooParams { capacity: 1000, ..defaults });
        let given =
            reserve(&args("CF.RESERVE k 1000 BUCKETSIZE 1 MAXITERATIONS 7 EXPANSION 0"), defaults).unwrap();
        assert_eq!((given.bucket_size, given.max_iterations, given.expansion), (1, 7, 0));
        assert_eq!(
            reserve(&args("CF.RESERVE k 6"), defaults),
            Err(CfError::CapacityTooSmall.into()),
            "two buckets of 4"
        );
        assert_eq!(insert(&args("CF.INSERT k ITEMS a"), defaults).unwrap().params, defaults);
        assert_eq!(
            insert(&args("CF.INSERT k CAPACITY 7 ITEMS a"), defaults),
            Err(CfError::CapacityTooSmall.into())
        );
        assert_eq!(insert(&args("CF.INSERT k CAPACITY 8 ITEMS a"), defaults).unwrap().params.capacity, 8);
    }

    #[test]
    fn cuckoo_error_picks_the_width_and_changes_nothing_else() {
        let default = reserve_default(&args("CF.RESERVE k 1000")).unwrap();
        assert_eq!(default, CuckooParams { capacity: 1000, ..CuckooParams::default() });
        let wide = reserve_default(&args("CF.RESERVE k 1000 ERROR 0.001 EXPANSION 2")).unwrap();
        assert_eq!((wide.width, wide.bucket_size, wide.expansion), (Width::Sixteen, 8, 2));
        let given = reserve_default(&args("CF.RESERVE k 1000 error 0.001 BUCKETSIZE 1")).unwrap();
        assert_eq!((given.width, given.bucket_size), (Width::Sixteen, 1));
        let key_named_error = reserve_default(&args("CF.RESERVE error 1000")).unwrap();
        assert_eq!(key_named_error.width, Width::Eight);
        for bad in ["0", "1", "-0.1", "x", "nan"] {
            let line = format!("CF.RESERVE k 1000 ERROR {bad}");
            assert_eq!(reserve_default(&args(&line)), Err(CfError::BadErrorRate.into()), "{bad}");
        }
        assert_eq!(reserve_default(&args("CF.RESERVE k 1000 x ERROR")), Err(CfError::BadErrorRate.into()));
        assert_eq!(
            reserve_default(&args("CF.RESERVE k 1000 ERROR 1e-12")),
            Err(CfError::ErrorRateTooSmall.into())
        );
        let small = reserve_default(&args("CF.RESERVE k 12 ERROR 0.001")).unwrap();
        assert_eq!(
            (small.width, small.bucket_size),
            (Width::Sixteen, 4),
            "the largest bucket that fits twice"
        );
        assert_eq!(reserve_default(&args("CF.RESERVE k 1 ERROR 0.1")), Err(CfError::CapacityTooSmall.into()));
        assert_eq!(reserve_default(&args("CF.RESERVE k 1 ERROR x")), Err(CfError::BadErrorRate.into()));

        let inserted = insert_default(&args("CF.INSERT k ERROR 1e-6 CAPACITY 500 ITEMS a")).unwrap();
        assert_eq!(
            (inserted.params.width, inserted.params.bucket_size, inserted.params.capacity),
            (Width::ThirtyTwo, 8, 500)
        );
        assert_eq!(inserted.first_item, 7);
        let plain = insert_default(&args("CF.INSERT k NOCREATE ITEMS a")).unwrap();
        assert_eq!(plain.params, CuckooParams::default());
        assert_eq!(
            insert_default(&args("CF.INSERT k EXPANSION 2 ITEMS a")),
            Err(CommandError::UnknownArgument)
        );
        assert_eq!(
            insert_default(&args("CF.INSERT k ERROR 2 ITEMS a")),
            Err(CommandError::InsertBadErrorRate)
        );
        assert_eq!(insert_default(&args("CF.INSERT k ERROR")), Err(CommandError::WrongArity));
    }

    /// The other types' WINDOW and GENERATIONS are refused among the options, in any case, and
    /// mean nothing as the key, the capacity's place or an item.
    #[test]
    fn a_window_is_refused_not_ignored() {
        let no_window = CommandError::from(CfError::NoWindow);
        for line in [
            "CF.RESERVE k 1000 WINDOW 60000",
            "CF.RESERVE k 1000 BUCKETSIZE 4 generations 2",
            "CF.RESERVE k 1000 EXPANSION 1 Window 5",
        ] {
            assert_eq!(reserve_default(&args(line)), Err(no_window), "{line}");
        }
        for line in ["CF.INSERT k WINDOW 60000 ITEMS a", "CF.INSERTNX k CAPACITY 100 Generations 2 ITEMS a"] {
            assert_eq!(insert_default(&args(line)).map(|insert| insert.first_item), Err(no_window), "{line}");
        }
        assert!(reserve_default(&args("CF.RESERVE window 1000")).is_ok());
        assert_eq!(reserve_default(&args("CF.RESERVE k window")), Err(CommandError::InsertBadCapacity));
        assert_eq!(insert_default(&args("CF.INSERT k ITEMS window generations")).unwrap().first_item, 3);
    }
}
