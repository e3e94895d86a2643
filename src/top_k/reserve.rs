//! TOPK.RESERVE.

use super::datatype::METRICS;
use super::error::TopKError;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::shared::parse;
use redbloom_core::murmur::murmur64a;
use redbloom_core::top_k::{Parameter, SizeError, TopK, DEFAULT_DECAY, DEFAULT_DEPTH, DEFAULT_WIDTH};

/// Seeds each sketch's decay from its key's name: a replica, and the AOF, create it under the
/// same name, so their draws are their master's. (The seed then travels with the value: a
/// RENAME or COPY keeps it.)
const SEED_OF_SEEDS: u64 = 0x746f_706b_5f73_6565;

/// TOPK.RESERVE key k [width depth decay]: an existing key, of any type, is refused before
/// the arguments are read, as RedisBloom does.
pub fn reserve(call: &Call) -> Result<(), CommandError> {
    if call.argc() != 3 && call.argc() != 6 {
        return Err(CommandError::WrongArity);
    }
    let mut key = call.open_key_for_writing();
    if !matches!(key.get::<TopK>(), Ok(None)) {
        return Err(TopKError::KeyExists.into());
    }
    let count = |index: usize, parameter: Parameter| {
        parse::integer(call.arg(index))
            .and_then(|value| u64::try_from(value).ok())
            .ok_or(TopKError::Invalid(parameter))
    };
    let k = count(2, Parameter::K)?;
    let (width, depth, decay) = if call.argc() == 6 {
        let decay = parse::float(call.arg(5)).ok_or(TopKError::Invalid(Parameter::Decay))?;
        (count(3, Parameter::Width)?, count(4, Parameter::Depth)?, decay)
    } else {
        (u64::from(DEFAULT_WIDTH), u64::from(DEFAULT_DEPTH), DEFAULT_DECAY)
    };
    let seed = murmur64a(call.arg(1), SEED_OF_SEEDS);
    let sketch =
        TopK::new(k, width, depth, decay, seed, call.max_filter_bytes()).map_err(|error| match error {
            SizeError::Invalid(parameter) => TopKError::Invalid(parameter),
            SizeError::TooLarge | SizeError::OutOfMemory => {
                METRICS.count_refused_creation();
                TopKError::InsufficientMemory
            }
        })?;
    key.store(sketch)?;
    call.replicate_verbatim();
    call.notify(c"topk.reserve");
    call.reply_ok();
    Ok(())
}
