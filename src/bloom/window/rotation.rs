//! How a windowed filter rotates (`window::rotation` does the rest): its expired generations
//! are freed, in the background when they are large.

use super::datatype::TIMER;
use crate::shared::key_timer::KeyTimer;
use crate::window::rotation::{free, Windowed};
use redbloom_core::bloom::window::WindowFilter;
use std::ffi::CStr;

impl Windowed for WindowFilter {
    const ROTATE_COMMAND: &'static CStr = c"BF.ROTATE";
    const ROTATE_REFUSED: &'static CStr = c"ERR BF.ROTATE is sent by a master to its replicas and the AOF";

    fn timer() -> &'static KeyTimer {
        &TIMER
    }

    fn rotate(&mut self, at_ms: u64) -> bool {
        let rotation = WindowFilter::rotate(self, at_ms);
        let changed = rotation.changed();
        let bytes = rotation.dropped.iter().map(|generation| generation.value.memory_bytes()).sum();
        free(rotation.dropped, bytes);
        changed
    }

    fn next_rotation_ms(&self) -> Option<u64> {
        WindowFilter::next_rotation_ms(self)
    }

    fn unopened_closes_ms(&self) -> Option<u64> {
        WindowFilter::unopened_closes_ms(self)
    }

    fn holds_expired(&self, now_ms: u64) -> bool {
        WindowFilter::holds_expired(self, now_ms)
    }

    fn rotates_at(&self, at_ms: u64) -> bool {
        WindowFilter::rotates_at(self, at_ms)
    }
}
