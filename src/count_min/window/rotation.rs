//! How a windowed sketch rotates (`window::rotation` does the rest): its expired generations'
//! sketches are freed, in the background when they are large.

use super::datatype::TIMER;
use crate::shared::key_timer::KeyTimer;
use crate::window::rotation::{free, Windowed};
use redbloom_core::count_min::window::WindowedCountMin;
use redbloom_core::count_min::CountMinSketch;
use std::ffi::CStr;

impl Windowed for WindowedCountMin {
    const ROTATE_COMMAND: &'static CStr = c"CMS.ROTATE";
    const ROTATE_REFUSED: &'static CStr = c"ERR CMS.ROTATE is sent by a master to its replicas and the AOF";

    fn timer() -> &'static KeyTimer {
        &TIMER
    }

    fn rotate(&mut self, at_ms: u64) -> bool {
        let rotated = WindowedCountMin::rotate(self, at_ms);
        let bytes = rotated.freed.iter().map(CountMinSketch::memory_bytes).sum();
        free(rotated.freed, bytes);
        rotated.changed
    }

    fn next_rotation_ms(&self) -> Option<u64> {
        WindowedCountMin::next_rotation_ms(self)
    }

    fn unopened_closes_ms(&self) -> Option<u64> {
        WindowedCountMin::unopened_closes_ms(self)
    }

    fn holds_expired(&self, now_ms: u64) -> bool {
        WindowedCountMin::holds_expired(self, now_ms)
    }

    fn rotates_at(&self, at_ms: u64) -> bool {
        WindowedCountMin::rotates_at(self, at_ms)
    }
}
