//! TOPK.RESERVE, plain or windowed.

use super::datatype::METRICS;
use super::error::TopKError;
use super::held::held;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::shared::parse::{self, is_keyword};
use crate::window::{parse::trailing, rotation::rotate_to_clock};
use redbloom_core::murmur::murmur64a;
use redbloom_core::top_k::window::WindowTopK;
use redbloom_core::top_k::{SizeError, TopK, DEFAULT_DECAY, DEFAULT_DEPTH, DEFAULT_WIDTH};

/// Seeds each sketch's decay from its key's name: a replica, and the AOF, create it under the
/// same name, so their draws are their master's. (The seed then travels with the value: a
/// RENAME or COPY keeps it.)
const SEED_OF_SEEDS: u64 = 0x746f_706b_5f73_6565;

/// `TOPK.RESERVE key k [width depth decay] [WINDOW ms [GENERATIONS g]]`: the arity and the
/// window options are read first; then an existing key, of any type, is refused before the
/// other arguments are read, as RedisBloom does.
pub fn reserve(call: &Call) -> Result<(), CommandError> {
    let args = call.args();
    let window_keyword = |index: usize| {
        args.get(index).is_some_and(|arg| is_keyword(arg, "WINDOW") || is_keyword(arg, "GENERATIONS"))
    };
    let positional = match call.argc() {
        3 => 3,
        _ if window_keyword(3) => 3,
        // A window's words among width, depth and decay: a list given two of the three, as
        // plain `TOPK.RESERVE key k width` is.
        argc if argc >= 6 && !(4..6).any(window_keyword) => 6,
        _ => return Err(CommandError::WrongArity),
    };
    let schedule = trailing(&args, positional, CommandError::WrongArity)?;
    let mut key = call.open_key_for_writing();
    if !matches!(held(&key), Ok(None)) {
        return Err(TopKError::KeyExists.into());
    }
    // RedisBloom reads and checks each parameter in turn (k, width, depth, decay): one that is
    // no number stands here as a value out of range (0, or NaN for the decay), which the
    // core's checks refuse in its turn.
    let count = |index: usize| {
        parse::integer(call.arg(index)).and_then(|value| u64::try_from(value).ok()).unwrap_or(0)
    };
    let k = count(2);
    let (width, depth, decay) = if positional == 6 {
        (count(3), count(4), parse::float(call.arg(5)).unwrap_or(f64::NAN))
    } else {
        (u64::from(DEFAULT_WIDTH), u64::from(DEFAULT_DEPTH), DEFAULT_DECAY)
    };
    let seed = murmur64a(call.arg(1), SEED_OF_SEEDS);
    let refused = |error| match error {
        SizeError::Invalid(parameter) => TopKError::Invalid(parameter),
        SizeError::TooLarge | SizeError::OutOfMemory => {
            METRICS.count_refused_creation();
            TopKError::InsufficientMemory
        }
    };
    let budget = call.max_filter_bytes();
    match schedule {
        None => {
            key.store(TopK::new(k, width, depth, decay, seed, budget).map_err(refused)?)?;
            call.replicate_verbatim();
        }
        Some(schedule) => {
            let sketch =
                WindowTopK::new((k, width, depth, decay), schedule, seed, budget).map_err(refused)?;
            key.store(sketch)?;
            call.replicate_verbatim();
            let sketch = key.get_mut::<WindowTopK>()?.ok_or(CommandError::Internal)?;
            rotate_to_clock(call, sketch);
        }
    }
    call.notify(c"topk.reserve");
    call.reply_ok();
    Ok(())
}
