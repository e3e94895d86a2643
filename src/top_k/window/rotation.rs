//! How a windowed list rotates (`window::rotation` does the rest): its expired generations are
//! freed, in the background when they are large.

use super::datatype::TIMER;
use crate::shared::key_timer::KeyTimer;
use crate::window::rotation::{free, Windowed};
use redbloom_core::top_k::window::WindowTopK;
use std::ffi::CStr;

impl Windowed for WindowTopK {
    const ROTATE_COMMAND: &'static CStr = c"TOPK.ROTATE";
    const ROTATE_REFUSED: &'static CStr = c"ERR TOPK.ROTATE is sent by a master to its replicas and the AOF";

    fn timer() -> &'static KeyTimer {
        &TIMER
    }

    fn rotate(&mut self, at_ms: u64) -> bool {
        let rotation = WindowTopK::rotate(self, at_ms);
        let bytes = rotation.dropped.iter().map(|generation| generation.value.memory_bytes()).sum();
        let changed = rotation.changed();
        free(rotation.dropped, bytes);
        changed
    }

    fn next_rotation_ms(&self) -> Option<u64> {
        WindowTopK::next_rotation_ms(self)
    }

    fn unopened_closes_ms(&self) -> Option<u64> {
        WindowTopK::unopened_closes_ms(self)
    }

    fn holds_expired(&self, now_ms: u64) -> bool {
        WindowTopK::holds_expired(self, now_ms)
    }

    fn rotates_at(&self, at_ms: u64) -> bool {
        WindowTopK::rotates_at(self, at_ms)
    }
}
