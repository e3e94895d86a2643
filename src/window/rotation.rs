//! Rotations of any windowed type: a master's before each write and from its timer,
//! replicated as the type's `ROTATE key at_ms`, and that command applying them on replicas
//! and in an AOF replay.

use crate::shared::call::{Call, Replicated};
use crate::shared::clock::{decides, not_yet_ms, now_ms};
use crate::shared::error::CommandError;
use crate::shared::key_timer::{KeyTimer, Visit};
use crate::shared::keyspace::Key;
use crate::shared::metrics;
use crate::shared::parse;
use crate::shared::record_type::RecordType;
use redis_module::raw;
use std::ffi::CStr;
use std::sync::{mpsc, OnceLock};

/// Dropped generations larger than this are freed on a thread of their own: a command or a
/// timer tick must not stall on a gigabyte's unmapping.
const FREE_IN_BACKGROUND_BYTES: usize = 256 << 10;

/// A value whose generations rotate with the master's clock.
pub trait Windowed: RecordType {
    /// The command that carries its rotations to replicas and the AOF (`BF.ROTATE`, ...).
    const ROTATE_COMMAND: &'static CStr;
    /// What that command answers a client: a rotation to a time of its choosing would drop
    /// what the window still holds.
    const ROTATE_REFUSED: &'static CStr;

    /// The timer that visits its keys.
    fn timer() -> &'static KeyTimer;

    /// Rotates to `at_ms` (deterministically: a replica given the same times holds the same
    /// value), handing what expired to [`free`]; whether anything changed.
    fn rotate(&mut self, at_ms: u64) -> bool;

    /// When a rotation will next close or drop a generation; `None` when there is none.
    fn next_rotation_ms(&self) -> Option<u64>;

    /// When the current span's generation closes, while no write has opened it; `None` once
    /// it is open.
    fn unopened_closes_ms(&self) -> Option<u64>;

    /// Whether some generation has expired at `now_ms` though no rotation dropped it yet:
    /// only then does a read by that clock answer otherwise than a read of every generation.
    fn holds_expired(&self, now_ms: u64) -> bool;

    /// Whether [`rotate`](Self::rotate) to `at_ms` would change anything (the current span
    /// moving on included), for less than a rotation and its metrics cost: most writes
    /// rotate nothing.
    fn rotates_at(&self, at_ms: u64) -> bool;
}

/// Gives back dropped generations' memory, `bytes` of it, on the freeing thread when it is
/// large.
pub fn free<T: Send + 'static>(dropped: T, bytes: usize) {
    if bytes > FREE_IN_BACKGROUND_BYTES {
        // Where the thread cannot be had, the drop happens here after all.
        if let Some(freeing) = freeing_thread() {
            let _ = freeing.send(Box::new(dropped));
        }
    }
}

/// The one thread that frees large dropped generations, made at the first: one thread each
/// made 64 in one timer tick of 64 large windowed sketches expiring.
fn freeing_thread() -> Option<&'static mpsc::Sender<Box<dyn Send>>> {
    static FREEING: OnceLock<Option<mpsc::Sender<Box<dyn Send>>>> = OnceLock::new();
    FREEING
        .get_or_init(|| {
            let (sender, received) = mpsc::channel::<Box<dyn Send>>();
            let thread = std::thread::Builder::new().name("redbloom-free".into());
            thread.spawn(move || received.into_iter().for_each(drop)).ok().map(|_| sender)
        })
        .as_ref()
}

/// Rotates `value` to `at_ms`, following it in the metrics; whether anything changed.
pub fn rotate_to<V: Windowed>(value: &mut V, at_ms: u64) -> bool {
    if !value.rotates_at(at_ms) {
        return false;
    }
    let before = value.footprint();
    let changed = value.rotate(at_ms);
    // Most writes rotate nothing: the footprint is the same.
    if changed {
        metrics::changed(before, value);
    }
    changed
}

/// The time a windowed value is read at: a master's clock, which skips the generations it
/// expired though no rotation dropped them yet; `None` on a replica and in a replay, which read
/// what their master's rotations left. Both read alike while no generation has expired even
/// by a time the clock has not reached, and then neither the clock nor the context flags are
/// read (together about a fifth of a lookup): `None` too.
pub fn read_time<V: Windowed>(call: &Call, value: &V) -> Option<u64> {
    if !value.holds_expired(not_yet_ms()) {
        return None;
    }
    decides(call).then(now_ms)
}

/// Before a write: the key queued for its type's timer for when the current span's
/// generation closes, if no write has opened it yet (this one may). The queue then holds
/// every key with a generation no later than its next rotation: a visit queues it for its
/// next one, and only writes that open a generation, and merges, make an earlier one.
pub fn note_if_opening<V: Windowed>(call: &Call, value: &V) {
    if let Some(closes) = value.unopened_closes_ms() {
        V::timer().note_call_key_at(call, closes);
    }
}

/// Before a write: on a master the rotation its clock asks for, replicated ahead of the
/// write, then [`note_if_opening`].
pub fn rotate_for_write<V: Windowed>(call: &Call, value: &mut V) {
    rotate_to_clock(call, value);
    note_if_opening(call, value);
}

/// Before a merge into the value: the rotation of [`rotate_for_write`], and the key queued for
/// a visit at once, since the sources' generations may expire before any the value holds (a
/// merge that then stores a new value in the key has it queued again by the `new` event, for
/// when that value is due).
pub fn rotate_for_merge<V: Windowed>(call: &Call, value: &mut V) {
    V::timer().note_call_key(call);
    rotate_to_clock(call, value);
}

/// On a master, the rotation its clock asks for, replicated: before a write, and after the
/// creation of a value (a sketch's INITBY..., RESERVE, CREATE, replicated as it came, so that
/// the value starts at the epoch's span everywhere), which the timer need not visit until a
/// write opens a generation.
pub fn rotate_to_clock<V: Windowed>(call: &Call, value: &mut V) {
    // Nothing to rotate even by a time the clock has not reached: nothing to decide.
    if !value.rotates_at(not_yet_ms()) {
        return;
    }
    if decides(call) {
        let now = now_ms();
        if rotate_to(value, now) {
            call.replicate(
                V::ROTATE_COMMAND,
                &[Replicated::Argument(1), Replicated::Bytes(now.to_string().as_bytes())],
            );
        }
    }
}

/// `<FAMILY>.ROTATE key at_ms`: a master's rotation, applied as it was decided; refused from
/// a client.
pub fn rotate_command<V: Windowed>(call: &Call) -> Result<(), CommandError> {
    if !call.replayed() {
        return Err(CommandError::Own(V::ROTATE_REFUSED));
    }
    let at =
        parse::integer(call.arg(2)).and_then(|at| u64::try_from(at).ok()).ok_or(CommandError::BadData)?;
    let mut key = call.open_key_for_writing();
    if let Some(value) = key.get_mut::<V>()? {
        rotate_to(value, at);
    }
    // A module command reaches a replica's own AOF only when it says so: without this, the
    // AOF of a replica held its master's writes but none of its rotations, and a replay (a
    // restart, or after a promotion) put them all in the wrong spans.
    call.replicate_verbatim();
    call.reply_ok();
    Ok(())
}

/// What a type's `KeyTimer` does to each key it visits: on a master (`rotates`), rotates a
/// value that is due and replicates the rotation, so that memory of expired generations comes
/// back even from keys no command touches, and their readers on a replica stop seeing them;
/// then asks for the next visit when the next rotation is due (none for a value left without
/// a generation: a write that opens one queues the key again).
pub fn visit<V: Windowed>(
    ctx: *mut raw::RedisModuleCtx,
    name: *mut raw::RedisModuleString,
    rotates: bool,
) -> Visit {
    // Opened to look first: closed, a key opened to write counts as modified (a WATCH on it
    // aborts, client tracking invalidates it) whether or not anything changed.
    let next = {
        let key = Key::open_read_untouched(ctx, name);
        let Ok(Some(value)) = key.get::<V>() else { return Visit::Done };
        value.next_rotation_ms()
    };
    let now = now_ms();
    if !rotates || next.is_none_or(|next| now < next) {
        // A replica's key (its master decides, and the timer looks again a while later), or
        // one not due.
        return next.map_or(Visit::Done, Visit::At);
    }
    let mut key = Key::open_write_untouched(ctx, name);
    let Ok(Some(value)) = key.get_mut::<V>() else {
        return Visit::Done;
    };
    if rotate_to(value, now) {
        let at = now.to_string();
        // SAFETY: the timer's live context and key; "sb" is a string and a buffer with its length.
        unsafe {
            if let Some(replicate) = raw::RedisModule_Replicate {
                replicate(ctx, V::ROTATE_COMMAND.as_ptr(), c"sb".as_ptr(), name, at.as_ptr(), at.len());
            }
        }
    }
    // Later than now even where no rotation moves past the clock (a time beyond any clock).
    value.next_rotation_ms().map_or(Visit::Done, |next| Visit::At(next.max(now + 1)))
}
