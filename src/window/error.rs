//! The texts of the window grammar, one for every family (this module's own: RedisBloom has
//! no windows).

use crate::shared::error::CommandError;
use redbloom_core::window::ScheduleError;
use std::ffi::CStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowError {
    WindowOutOfRange,
    GenerationsOutOfRange,
    GenerationsWithoutWindow,
}

impl WindowError {
    pub fn message(self) -> &'static CStr {
        match self {
            WindowError::WindowOutOfRange => {
                c"ERR window must be an integer of milliseconds in [1, 1099511627776]"
            }
            WindowError::GenerationsOutOfRange => {
                c"ERR generations must be an integer in [1, 64], at most the window in milliseconds"
            }
            WindowError::GenerationsWithoutWindow => c"ERR GENERATIONS needs WINDOW",
        }
    }
}

impl From<WindowError> for CommandError {
    fn from(error: WindowError) -> CommandError {
        CommandError::Own(error.message())
    }
}

impl From<ScheduleError> for WindowError {
    fn from(error: ScheduleError) -> WindowError {
        match error {
            ScheduleError::Window => WindowError::WindowOutOfRange,
            ScheduleError::Generations => WindowError::GenerationsOutOfRange,
        }
    }
}

impl From<ScheduleError> for CommandError {
    fn from(error: ScheduleError) -> CommandError {
        WindowError::from(error).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redbloom_core::window::{MAX_GENERATIONS, MAX_WINDOW_MS, MIN_GENERATIONS, MIN_WINDOW_MS};

    #[test]
    fn the_texts_state_the_cores_bounds() {
        let window = format!("[{MIN_WINDOW_MS}, {MAX_WINDOW_MS}]");
        assert!(WindowError::WindowOutOfRange.message().to_str().unwrap().contains(&window));
        let generations = format!("[{MIN_GENERATIONS}, {MAX_GENERATIONS}]");
        assert!(WindowError::GenerationsOutOfRange.message().to_str().unwrap().contains(&generations));
    }
}
