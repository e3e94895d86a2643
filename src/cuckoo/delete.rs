//! CF.DEL and CF.COMPACT: what a cuckoo filter can do and a Bloom filter cannot.

use super::datatype::METRICS;
use super::error::CfError;
use crate::shared::call::Call;
use crate::shared::error::CommandError;
use crate::shared::metrics::{self, Measured};
use redbloom_core::cuckoo::CuckooFilter;

/// CF.DEL key item: removes one copy. Only the item's own adds may be deleted: deleting an
/// item never added can remove another item that shares its fingerprint and bucket.
pub fn del(call: &Call) -> Result<(), CommandError> {
    let mut key = call.open_key_for_writing();
    let Ok(Some(filter)) = key.get_mut::<CuckooFilter>() else {
        return Err(CfError::NotFound.into());
    };
    let before = filter.footprint();
    let deleted = filter.delete(filter.hash_and_prefetch(call.arg(2)));
    call.replicate_verbatim();
    if deleted {
        METRICS.count_deletes(1);
        metrics::changed(before, &*filter);
        call.notify(c"cf.del");
    }
    call.reply_bool(deleted);
    Ok(())
}

/// CF.COMPACT key: moves items out of the newest sub-filters where older ones have room.
pub fn compact(call: &Call) -> Result<(), CommandError> {
    let mut key = call.open_key_for_writing();
    let Ok(Some(filter)) = key.get_mut::<CuckooFilter>() else {
        return Err(CfError::CompactNotFound.into());
    };
    let before = filter.footprint();
    filter.compact(true);
    metrics::changed(before, &*filter);
    call.replicate_verbatim();
    call.notify(c"cf.compact");
    call.reply_ok();
    Ok(())
}
