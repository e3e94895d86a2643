//! Rotations: a master's before each write and from its timer, replicated as `BF.ROTATE key
//! at_ms`, and that command applying them on replicas and in an AOF replay.

use crate::bloom::error::BfError;
use crate::shared::call::Call;
use crate::shared::clock::{decides, now_ms};
use crate::shared::error::CommandError;
use crate::shared::metrics::{self, Measured};
use crate::shared::parse;
use redbloom_core::bloom::window::{Generation, WindowFilter};

/// Dropped generations larger than this are freed on a thread of their own: a command or a
/// timer tick must not stall on a gigabyte's unmapping.
const FREE_IN_BACKGROUND_BYTES: usize = 256 << 10;

/// Gives back dropped generations' memory, in the background when it is large.
fn free(dropped: Vec<Generation>) {
    let bytes: usize = dropped.iter().map(Generation::memory_bytes).sum();
    if bytes > FREE_IN_BACKGROUND_BYTES {
        // Where no thread can be made, the drop happens here after all.
        let _ = std::thread::Builder::new().name("redbloom-free".into()).spawn(move || drop(dropped));
    }
}

/// Rotates `filter` to `at_ms`, freeing what expired and following it in the metrics;
/// whether anything changed.
pub fn rotate_to(filter: &mut WindowFilter, at_ms: u64) -> bool {
    let before = filter.footprint();
    let rotation = filter.rotate(at_ms);
    let changed = rotation.changed();
    free(rotation.dropped);
    metrics::changed(before, filter);
    changed
}

/// Before a write on a master: the rotation its clock asks for, replicated ahead of the write.
pub fn rotate_for_write(call: &Call, filter: &mut WindowFilter) {
    if decides(call) {
        let now = now_ms();
        if rotate_to(filter, now) {
            call.replicate("BF.ROTATE", &[call.arg(1), now.to_string().as_bytes()]);
        }
    }
}

/// `BF.ROTATE key at_ms`: a master's rotation, applied as it was decided. Refused from a
/// client: a rotation to a time of its choosing would drop what the window still holds.
pub fn rotate(call: &Call) -> Result<(), CommandError> {
    if !call.replayed() {
        return Err(BfError::RotateNotReplayed.into());
    }
    let at =
        parse::integer(call.arg(2)).and_then(|at| u64::try_from(at).ok()).ok_or(CommandError::BadData)?;
    let mut key = call.open_key_for_writing();
    if let Some(filter) = key.get_mut::<WindowFilter>()? {
        rotate_to(filter, at);
    }
    call.reply_ok();
    Ok(())
}
