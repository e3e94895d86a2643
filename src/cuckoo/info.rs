//! CF.INFO and CF.DEBUG.

use crate::shared::call::Call;
use crate::shared::error::CommandError;
use redbloom_core::cuckoo::CuckooFilter;
use std::ffi::CStr;
use std::fmt::Write;

/// CF.INFO key: eight pairs, a flat array under RESP2 and a map under RESP3.
pub fn info(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let filter = key.get::<CuckooFilter>()?.ok_or(CommandError::NotFound)?;
    let fields: [(&CStr, u64); 8] = [
        (c"Size", filter.size()),
        (c"Number of buckets", filter.first_buckets()),
        (c"Number of filters", filter.sub_filters().len() as u64),
        (c"Number of items inserted", filter.items()),
        (c"Number of items deleted", filter.deletes()),
        (c"Bucket size", u64::from(filter.bucket_size())),
        (c"Expansion rate", u64::from(filter.expansion())),
        (c"Max iterations", u64::from(filter.max_iterations())),
    ];
    call.reply_map(fields.len());
    for (label, value) in fields {
        call.reply_simple(label);
        call.reply_integer(value as i64);
    }
    Ok(())
}

/// CF.DEBUG key: the same fields on one line, and the fingerprint bits of a wide filter.
pub fn debug(call: &Call) -> Result<(), CommandError> {
    let key = call.open_key();
    let filter = key.get::<CuckooFilter>()?.ok_or(CommandError::NotFound)?;
    let mut line = format!(
        "bktsize:{} buckets:{} items:{} deletes:{} filters:{} max_iterations:{} expansion:{}",
        filter.bucket_size(),
        filter.first_buckets(),
        filter.items(),
        filter.deletes(),
        filter.sub_filters().len(),
        filter.max_iterations(),
        filter.expansion()
    );
    if !filter.width().is_redisbloom() {
        let _ = write!(line, " fingerprint_bits:{}", filter.width().bits());
    }
    call.reply_bulk(line.as_bytes());
    Ok(())
}
