//! `WINDOW ms [GENERATIONS g]` among a command's options, in any order with the family's own.

use super::error::WindowError;
use crate::shared::error::CommandError;
use crate::shared::parse::{integer, is_keyword};
use redbloom_core::window::{generations_in_range, window_in_range, Schedule, DEFAULT_GENERATIONS};

/// WINDOW and GENERATIONS as a command gives them, checked once every option is read:
/// GENERATIONS alone is refused.
#[derive(Default)]
pub struct WindowOptions {
    ms: Option<u64>,
    generations: Option<u32>,
}

impl WindowOptions {
    /// Reads `WINDOW ms` or `GENERATIONS g` at `index`, answering how many arguments it took
    /// (`None`: neither keyword is there).
    pub fn read(&mut self, args: &[&[u8]], index: usize) -> Result<Option<usize>, CommandError> {
        let Some(token) = args.get(index) else { return Ok(None) };
        let value = args.get(index + 1).and_then(|value| integer(value));
        if is_keyword(token, "WINDOW") {
            let ms = value.filter(|&ms| window_in_range(ms)).ok_or(WindowError::WindowOutOfRange)?;
            self.ms = Some(ms as u64);
            Ok(Some(2))
        } else if is_keyword(token, "GENERATIONS") {
            let generations =
                value.filter(|&g| generations_in_range(g)).ok_or(WindowError::GenerationsOutOfRange)?;
            self.generations = Some(generations as u32);
            Ok(Some(2))
        } else {
            Ok(None)
        }
    }

    /// The schedule asked for, if WINDOW was given.
    pub fn finish(self) -> Result<Option<Schedule>, CommandError> {
        match (self.ms, self.generations) {
            (None, None) => Ok(None),
            (None, Some(_)) => Err(WindowError::GenerationsWithoutWindow.into()),
            (Some(ms), generations) => {
                Ok(Some(Schedule::new(ms, generations.unwrap_or(DEFAULT_GENERATIONS))?))
            }
        }
    }
}

/// The schedule the arguments from `from` on give, when they are window options only: what
/// a sketch's creation takes after its own positional arguments. `Ok(None)` when there are
/// none; `Err(other)` at the first argument that is not one.
pub fn trailing(args: &[&[u8]], from: usize, other: CommandError) -> Result<Option<Schedule>, CommandError> {
    among_options(args, from, other, |_| Ok(None))
}

/// As [`trailing`], the family's own options (`CELL_SIZE`, `COMPRESSION`) mixed in, in any
/// order: `own` reads the one at an index, answering how many arguments it took (`None`: not
/// one of its options).
pub fn among_options(
    args: &[&[u8]],
    from: usize,
    other: CommandError,
    mut own: impl FnMut(usize) -> Result<Option<usize>, CommandError>,
) -> Result<Option<Schedule>, CommandError> {
    let mut options = WindowOptions::default();
    let mut index = from;
    while index < args.len() {
        let taken = match options.read(args, index)? {
            Some(taken) => taken,
            None => own(index)?.ok_or(other)?,
        };
        index += taken;
    }
    options.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<&[u8]> {
        line.split(' ').map(str::as_bytes).collect()
    }

    #[test]
    fn window_and_generations_are_read_and_checked() {
        let schedule = |window, generations| Ok(Some(Schedule::new(window, generations).unwrap()));
        let other = CommandError::WrongArity;
        assert_eq!(trailing(&args("X k WINDOW 60000 GENERATIONS 8"), 2, other), schedule(60000, 8));
        assert_eq!(trailing(&args("X k GENERATIONS 8 window 60000"), 2, other), schedule(60000, 8));
        assert_eq!(trailing(&args("X k WINDOW 1000"), 2, other), schedule(1000, DEFAULT_GENERATIONS));
        assert_eq!(trailing(&args("X k"), 2, other), Ok(None));
        assert_eq!(trailing(&args("X k WINDOW 1000 EXTRA"), 2, other), Err(other));
        // The family's own options, before, between and after the window's.
        for line in [
            "X k OWN 1 WINDOW 60000 GENERATIONS 8",
            "X k WINDOW 60000 own 1 GENERATIONS 8",
            "X k GENERATIONS 8 WINDOW 60000 OWN 1",
        ] {
            let line_args = args(line);
            let mut seen = Vec::new();
            let own = |index: usize| {
                Ok(is_keyword(line_args[index], "OWN").then(|| {
                    seen.push(index);
                    2
                }))
            };
            assert_eq!(among_options(&line_args, 2, other, own), schedule(60000, 8), "{line}");
            assert_eq!(seen.len(), 1, "{line}");
        }
        assert_eq!(among_options(&args("X k WINDOW 1000 OTHER 1"), 2, other, |_| Ok(None)), Err(other));
        for (line, error) in [
            ("X k WINDOW", WindowError::WindowOutOfRange),
            ("X k WINDOW 0", WindowError::WindowOutOfRange),
            ("X k WINDOW -5", WindowError::WindowOutOfRange),
            ("X k WINDOW x", WindowError::WindowOutOfRange),
            ("X k WINDOW 1099511627777", WindowError::WindowOutOfRange),
            ("X k WINDOW 100 GENERATIONS 0", WindowError::GenerationsOutOfRange),
            ("X k WINDOW 100 GENERATIONS 65", WindowError::GenerationsOutOfRange),
            ("X k WINDOW 3 GENERATIONS 4", WindowError::GenerationsOutOfRange),
            ("X k GENERATIONS 4", WindowError::GenerationsWithoutWindow),
        ] {
            assert_eq!(trailing(&args(line), 2, other), Err(error.into()), "{line}");
        }
    }
}
