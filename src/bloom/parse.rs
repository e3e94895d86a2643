//! BF.* argument parsing: pure functions over the arguments' bytes (the command name first),
//! unit-tested and fuzzed without a server (where one is loaded, a double that is not plain
//! decimal text is the server's to read: `shared/parse.rs`). The error strings live in
//! `shared/error.rs`.

use super::error::BfError;
use crate::shared::error::CommandError;
use crate::shared::parse::{float, integer, is_keyword};
use crate::window::parse::WindowOptions;
use redbloom_core::bloom::{params, Filter, FilterError, Format};
use redbloom_core::window::Schedule;

/// Everything needed to create a filter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Creation {
    pub capacity: u64,
    pub error_rate: f64,
    /// 0 for non-scaling.
    pub expansion: u32,
    pub format: Format,
    /// A filter whose items expire (WINDOW), its capacity the items of one window.
    pub window: Option<Schedule>,
    /// The EXPANSION a BF.INSERT named beside NONSCALING, which a filter in RedisBloom's
    /// format records as RedisBloom's does, so that its dumps are RedisBloom's bytes.
    pub nonscaling_growth: Option<u32>,
}

impl Creation {
    /// A filter of these parameters, neither windowed nor recording a growth of its own.
    pub const fn plain(capacity: u64, error_rate: f64, expansion: u32, format: Format) -> Creation {
        Creation { capacity, error_rate, expansion, format, window: None, nonscaling_growth: None }
    }

    pub fn try_build(&self, max_bytes: usize) -> Result<Filter, FilterError> {
        let mut filter =
            Filter::try_new(self.format, self.capacity, self.error_rate, self.expansion, max_bytes)?;
        if let Some(growth) = self.nonscaling_growth {
            filter.record_growth(growth);
        }
        Ok(filter)
    }
}

/// A valid error rate (capped at 0.25), or `out_of_range` when outside (0, 1).
fn error_rate_in_range(rate: f64, out_of_range: CommandError) -> Result<f64, CommandError> {
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

/// `BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING] [FORMAT f]`. Options may come
/// in any order and anything unknown is skipped: some clients send the expansion number
/// without its keyword.
/// `defaults` gives the expansion and format when they are not named.
pub fn reserve(args: &[&[u8]], defaults: Creation) -> Result<Parsed, CommandError> {
    let asked_rate = args.get(2).and_then(|arg| float(arg)).ok_or(BfError::BadErrorRate)?;
    let error_rate = error_rate_in_range(asked_rate, BfError::ErrorRateOutOfRange.into())?;
    let capacity = args.get(3).and_then(|arg| integer(arg)).ok_or(BfError::BadCapacity)?;
    if !params::capacity_in_range(capacity) {
        return Err(BfError::CapacityOutOfRange.into());
    }
    let mut expansion = None;
    let mut nonscaling = false;
    let mut named_format = None;
    let mut window = WindowOptions::default();
    let mut index = 4;
    while let Some(token) = args.get(index) {
        if let Some(taken) = window.read(args, index)? {
            index += taken;
        } else if is_keyword(token, "FORMAT") {
            named_format =
                Some(args.get(index + 1).and_then(|name| Format::named(name)).ok_or(BfError::BadFormat)?);
            index += 2;
        } else if is_keyword(token, "EXPANSION") {
            let value = args.get(index + 1).ok_or(BfError::NoExpansion)?;
            let value = integer(value).ok_or(BfError::BadExpansion)?;
            if !params::expansion_in_range(value) {
                return Err(BfError::ExpansionOutOfRange.into());
            }
            expansion = Some(value as u32);
            index += 2;
        } else {
            nonscaling |= is_keyword(token, "NONSCALING");
            index += 1;
        }
    }
    let expansion = scaling(expansion, nonscaling, defaults.expansion)?;
    let window = window.finish()?;
    let format = windowed_format(named_format, window.is_some())?.unwrap_or(defaults.format);
    Ok(Parsed {
        creation: Some(Creation {
            capacity: capacity as u64,
            error_rate,
            expansion,
            format,
            window,
            nonscaling_growth: None,
        }),
        first_item: args.len(),
        capped_rate: (error_rate != asked_rate).then_some(asked_rate),
    })
}

/// `BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] [FORMAT f]
/// ITEMS item ...`. What is not given comes from `defaults`.
pub fn insert(args: &[&[u8]], defaults: Creation) -> Result<Parsed, CommandError> {
    let mut creation = defaults;
    let mut capped_rate = None;
    let mut expansion_given = None;
    let mut nocreate = false;
    let mut nonscaling = false;
    let mut named_format = None;
    let mut window = WindowOptions::default();
    let mut index = 2;
    let first_item = loop {
        let token = args.get(index).ok_or(CommandError::WrongArity)?;
        let value = || args.get(index + 1).ok_or(CommandError::WrongArity);
        if let Some(taken) = window.read(args, index)? {
            index += taken;
        } else if is_keyword(token, "CAPACITY") {
            let capacity = integer(value()?).filter(|&c| params::capacity_in_range(c));
            creation.capacity = capacity.ok_or(CommandError::InsertBadCapacity)? as u64;
            index += 2;
        } else if is_keyword(token, "ERROR") {
            let rate = float(value()?).ok_or(CommandError::InsertBadErrorRate)?;
            creation.error_rate = error_rate_in_range(rate, CommandError::InsertBadErrorRate)?;
            capped_rate = (creation.error_rate != rate).then_some(rate);
            index += 2;
        } else if is_keyword(token, "EXPANSION") {
            let expansion = integer(value()?).filter(|&e| params::expansion_in_range(e));
            expansion_given = Some(expansion.ok_or(BfError::InsertBadExpansion)? as u32);
            index += 2;
        } else if is_keyword(token, "FORMAT") {
            named_format = Some(Format::named(value()?).ok_or(BfError::BadFormat)?);
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
            return Err(CommandError::UnknownArgument);
        }
    };
    if first_item >= args.len() {
        return Err(CommandError::WrongArity);
    }
    // NONSCALING wins over EXPANSION here, as in RedisBloom: its INSERT reads them apart, and
    // only its RESERVE refuses the two together.
    creation.expansion = if nonscaling { 0 } else { expansion_given.unwrap_or(defaults.expansion) };
    creation.nonscaling_growth = expansion_given.filter(|&growth| nonscaling && growth > 0);
    creation.window = window.finish()?;
    creation.format = windowed_format(named_format, creation.window.is_some())?.unwrap_or(defaults.format);
    Ok(Parsed { creation: (!nocreate).then_some(creation), first_item, capped_rate })
}

/// The format named, refused where a window was asked for too: a windowed filter is in no
/// format RedisBloom reads. (The `bf.format` default does not stop a window: only a FORMAT
/// the command names.)
fn windowed_format(named: Option<Format>, windowed: bool) -> Result<Option<Format>, CommandError> {
    match named {
        Some(Format::RedisBloom) if windowed => Err(BfError::WindowInRedisBloomFormat.into()),
        named => Ok(named),
    }
}

/// The expansion BF.RESERVE gives a new filter from EXPANSION and NONSCALING, which contradict
/// each other when both are given with a non-zero expansion.
fn scaling(expansion: Option<u32>, nonscaling: bool, default: u32) -> Result<u32, CommandError> {
    match (expansion, nonscaling) {
        (Some(expansion), true) if expansion > 0 => Err(BfError::NonScalingCannotExpand.into()),
        (_, true) => Ok(0),
        (Some(expansion), false) => Ok(expansion),
        (None, false) => Ok(default),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::error::WindowError;
    use redbloom_core::window::DEFAULT_GENERATIONS;

    const DEFAULTS: Creation = Creation::plain(100, 0.01, 2, Format::Redbloom);

    #[test]
    fn window_and_generations_are_read_among_the_options() {
        let parsed =
            reserve(&args("BF.RESERVE k 0.01 100 WINDOW 60000 NONSCALING GENERATIONS 8"), DEFAULTS).unwrap();
        let window = parsed.creation.and_then(|creation| creation.window);
        assert_eq!(window, Schedule::new(60000, 8).ok());
        let parsed = insert(&args("BF.INSERT k WINDOW 1000 ITEMS a"), DEFAULTS).unwrap();
        let window = parsed.creation.and_then(|creation| creation.window);
        assert_eq!(window, Schedule::new(1000, DEFAULT_GENERATIONS).ok());
        let redisbloom_default = Creation { format: Format::RedisBloom, ..DEFAULTS };
        let window = |error: WindowError| Some(CommandError::from(error));
        let no_redisbloom_format = Some(CommandError::from(BfError::WindowInRedisBloomFormat));
        for (line, defaults, error) in [
            ("BF.RESERVE k 0.01 100 WINDOW 0", DEFAULTS, window(WindowError::WindowOutOfRange)),
            (
                "BF.RESERVE k 0.01 100 WINDOW 3 GENERATIONS 4",
                DEFAULTS,
                window(WindowError::GenerationsOutOfRange),
            ),
            ("BF.INSERT k GENERATIONS 4 ITEMS a", DEFAULTS, window(WindowError::GenerationsWithoutWindow)),
            // RedisBloom's format, named, cannot hold a window; this module's may be named,
            // and a default of RedisBloom's format gives way to the window.
            ("BF.RESERVE k 0.01 100 FORMAT REDISBLOOM WINDOW 1000", DEFAULTS, no_redisbloom_format),
            ("BF.INSERT k WINDOW 9 format redisbloom ITEMS a", DEFAULTS, no_redisbloom_format),
            ("BF.RESERVE k 0.01 100 WINDOW 1000", redisbloom_default, None),
            ("BF.INSERT k FORMAT REDBLOOM WINDOW 1000 ITEMS a", redisbloom_default, None),
        ] {
            let parsed = if line.starts_with("BF.INSERT") {
                insert(&args(line), defaults)
            } else {
                reserve(&args(line), defaults)
            };
            match error {
                Some(error) => assert_eq!(parsed.map(|_| ()), Err(error), "{line}"),
                None => assert!(
                    parsed.is_ok_and(|parsed| parsed.creation.is_some_and(|c| c.window.is_some())),
                    "{line}"
                ),
            }
        }
    }

    fn args(line: &str) -> Vec<&[u8]> {
        line.split(' ').map(str::as_bytes).collect()
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
        assert_eq!(
            reserve(&args("BF.RESERVE k 0.01 5 EXPANSION"), DEFAULTS),
            Err(BfError::NoExpansion.into())
        );
        assert_eq!(reserve(&args("BF.RESERVE k"), DEFAULTS), Err(BfError::BadErrorRate.into()));
    }

    #[test]
    fn nonscaling_wins_in_insert_and_contradicts_expansion_in_reserve() {
        for line in
            ["BF.INSERT k NONSCALING EXPANSION 3 ITEMS a", "BF.INSERT k EXPANSION 3 NONSCALING ITEMS a"]
        {
            let creation = insert(&args(line), DEFAULTS).unwrap().creation.unwrap();
            assert_eq!((creation.expansion, creation.nonscaling_growth), (0, Some(3)), "{line}");
        }
        let scaling = insert(&args("BF.INSERT k EXPANSION 3 ITEMS a"), DEFAULTS).unwrap().creation.unwrap();
        assert_eq!((scaling.expansion, scaling.nonscaling_growth), (3, None));
        for line in
            ["BF.RESERVE k 0.01 5 NONSCALING EXPANSION 2", "BF.RESERVE k 0.01 5 EXPANSION 2 NONSCALING"]
        {
            assert_eq!(reserve(&args(line), DEFAULTS), Err(BfError::NonScalingCannotExpand.into()), "{line}");
        }
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
        assert_eq!(reserve(&args("BF.RESERVE k 0.01 5 FORMAT"), DEFAULTS), Err(BfError::BadFormat.into()));
        assert_eq!(
            reserve(&args("BF.RESERVE k 0.01 5 FORMAT other"), DEFAULTS),
            Err(BfError::BadFormat.into())
        );
        assert_eq!(insert(&args("BF.INSERT k FORMAT x ITEMS a"), DEFAULTS), Err(BfError::BadFormat.into()));
    }

    #[test]
    fn insert_takes_defaults_for_what_is_not_given() {
        let parsed = insert(&args("BF.INSERT k ERROR 0.5 NOCREATE ITEMS a b"), DEFAULTS).unwrap();
        assert_eq!(parsed.creation, None);
        assert_eq!(parsed.first_item, 6);
        assert_eq!(parsed.capped_rate, Some(0.5));
        let parsed = insert(&args("BF.INSERT k capacity 9 ITEMS a"), DEFAULTS).unwrap();
        assert_eq!(parsed.creation, Some(Creation { capacity: 9, ..DEFAULTS }));
        assert_eq!(insert(&args("BF.INSERT k ITEMS"), DEFAULTS), Err(CommandError::WrongArity));
        assert_eq!(insert(&args("BF.INSERT k CAPACITY"), DEFAULTS), Err(CommandError::WrongArity));
        assert_eq!(
            insert(&args("BF.INSERT k CAPACITY 0 ITEMS a"), DEFAULTS),
            Err(CommandError::InsertBadCapacity)
        );
    }
}
