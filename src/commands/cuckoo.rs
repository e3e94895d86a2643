//! The CF.* commands: cuckoo filters, with RedisBloom's replies and error texts
//! (`docs/cf-commands.md`), and `ERROR` for wider fingerprints. Every write is replicated as
//! sent: the filter is deterministic, and filters created by a command have fixed defaults
//! (ERROR picks the same width everywhere), so replicas and the AOF build the same bytes.

use super::parse::{self, CuckooInsert};
use super::{BfError, Call};
use crate::filter::cuckoo::{CuckooFilter, CuckooHash, CuckooParams, Inserted};
use crate::keyspace::Key;
use crate::metrics::{self, Measured, CUCKOO};

/// The filter in `key`, created with `params` when the key is missing; `None` when missing
/// and `create` is false.
fn filter_or_create<'k>(
    call: &Call,
    key: &'k mut Key,
    params: CuckooParams,
    create: bool,
) -> Result<Option<&'k mut CuckooFilter>, BfError> {
    if key.cuckoo()?.is_none() {
        if !create {
            return Ok(None);
        }
        key.store_cuckoo(created(params, call)?)?;
        call.notify(c"cf.reserve");
    }
    key.cuckoo_mut()
}

/// A new filter, or the memory error (counted in INFO).
fn created(params: CuckooParams, call: &Call) -> Result<CuckooFilter, BfError> {
    CuckooFilter::try_new(params, call.max_filter_bytes()).map_err(|error| {
        CUCKOO.count_refused_creation();
        BfError::from(error)
    })
}

/// CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e] [ERROR rate]
pub fn reserve(call: &Call) -> Result<(), BfError> {
    let params = parse::cuckoo_reserve(&call.args())?;
    let mut key = call.open_key_for_writing();
    if key.cuckoo()?.is_some() {
        return Err(BfError::ItemExists);
    }
    key.store_cuckoo(created(params, call)?)?;
    call.replicate_verbatim();
    call.notify(c"cf.reserve");
    call.reply_ok();
    Ok(())
}

/// CF.ADD key item: stores the item (again, if it is there already).
pub fn add(call: &Call) -> Result<(), BfError> {
    add_one(call, false, c"cf.add")
}

/// CF.ADDNX key item: 0 when the item tests present.
pub fn addnx(call: &Call) -> Result<(), BfError> {
    add_one(call, true, c"cf.addnx")
}

fn add_one(call: &Call, only_new: bool, event: &std::ffi::CStr) -> Result<(), BfError> {
    let mut key = call.open_key_for_writing();
    let filter = filter_or_create(call, &mut key, CuckooParams::default(), true)?.ok_or(BfError::Internal)?;
    let limits = call.cuckoo_limits();
    if filter.at_sub_filter_limit(limits.max_sub_filters) {
        CUCKOO.count_full_errors(1);
        return Err(BfError::CfMaxExpansions);
    }
    let item = filter.hash_and_prefetch(call.arg(2));
    if only_new && filter.contains(item) {
        call.replicate_verbatim();
        call.reply_bool(false);
        return Ok(());
    }
    let before = filter.footprint();
    match filter.insert(item, limits) {
        Inserted::Added => {
            CUCKOO.count_adds(1);
            metrics::changed(before, &*filter);
            call.replicate_verbatim();
            call.notify(event);
            call.reply_bool(true);
            Ok(())
        }
        Inserted::NoRoom => {
            CUCKOO.count_full_errors(1);
            Err(BfError::CfFull)
        }
    }
}

/// CF.INSERT key [CAPACITY c] [NOCREATE] [ERROR rate] ITEMS item [item ...]: per item 1, or
/// -1 for no room (false under RESP3).
pub fn insert(call: &Call) -> Result<(), BfError> {
    insert_items(call, false, c"cf.insert")
}

/// CF.INSERTNX: per item 1, 0 when it tests present, -1 for no room, integers under both
/// protocols.
pub fn insertnx(call: &Call) -> Result<(), BfError> {
    insert_items(call, true, c"cf.insertnx")
}

fn insert_items(call: &Call, only_new: bool, event: &std::ffi::CStr) -> Result<(), BfError> {
    let CuckooInsert { params, rate_arg, no_create, first_item } = parse::cuckoo_insert(&call.args())?;
    let mut key = call.open_key_for_writing();
    let created = key.cuckoo()?.is_none() && !no_create;
    let filter = filter_or_create(call, &mut key, params, !no_create)?.ok_or(BfError::NotFound)?;
    let limits = call.cuckoo_limits();
    if filter.at_sub_filter_limit(limits.max_sub_filters) {
        CUCKOO.count_full_errors(call.argc() - first_item);
        return Err(BfError::CfMaxExpansions);
    }
    let before = filter.footprint();
    let items: Vec<CuckooHash> = call.args_from(first_item).map(|item| filter.hash(item)).collect();
    items.iter().for_each(|&item| filter.prefetch(item));
    let resp3 = call.is_resp3();
    let mut added = Vec::new();
    // Items the filter had no room for.
    let mut refused = 0;
    call.reply_array(items.len());
    for (index, item) in items.into_iter().enumerate() {
        let outcome =
            if only_new { filter.insert_new(item, limits) } else { Some(filter.insert(item, limits)) };
        let answer = match outcome {
            Some(Inserted::Added) => {
                added.push(call.arg(first_item + index));
                1
            }
            Some(Inserted::NoRoom) => {
                refused += 1;
                -1
            }
            None => 0,
        };
        // RedisBloom answers CF.INSERT with booleans under RESP3, CF.INSERTNX with integers.
        if resp3 && !only_new {
            call.reply_bool(answer == 1);
        } else {
            call.reply_integer(answer);
        }
    }
    CUCKOO.count_adds(added.len());
    CUCKOO.count_full_errors(refused);
    metrics::changed(before, &*filter);
    if refused == 0 {
        call.replicate_verbatim();
    } else if !added.is_empty() {
        // No room here may be room on a replica (whose budget is unlimited): send it only the
        // items that were added, which then land exactly where they landed here.
        let capacity = params.capacity.to_string();
        let mut args: Vec<&[u8]> = vec![call.arg(1)];
        if created {
            args.extend([&b"CAPACITY"[..], capacity.as_bytes()]);
        }
        if let Some(rate) = rate_arg.filter(|_| created) {
            args.extend([&b"ERROR"[..], call.arg(rate)]);
        }
        args.push(b"ITEMS");
        args.extend(added.iter().copied());
        call.replicate("CF.INSERT", &args);
    }
    if !added.is_empty() {
        call.notify(event);
    }
    Ok(())
}

/// CF.EXISTS key item: 0 for a missing key, and for a key of another type, as RedisBloom.
pub fn exists(call: &Call) -> Result<(), BfError> {
    let key = call.open_key();
    let present =
        matches!(key.cuckoo(), Ok(Some(filter)) if filter.contains(filter.hash_and_prefetch(call.arg(2))));
    CUCKOO.count_lookups(1, usize::from(present));
    call.reply_bool(present);
    Ok(())
}

/// CF.MEXISTS key item [item ...]: hashes the whole batch and asks for its cache lines
/// before testing any item, so that the misses overlap.
pub fn mexists(call: &Call) -> Result<(), BfError> {
    let key = call.open_key();
    call.reply_array(call.argc() - 2);
    let Ok(Some(filter)) = key.cuckoo() else {
        CUCKOO.count_lookups(call.argc() - 2, 0);
        (2..call.argc()).for_each(|_| call.reply_bool(false));
        return Ok(());
    };
    let items: Vec<CuckooHash> = call.args_from(2).map(|item| filter.hash(item)).collect();
    items.iter().for_each(|&item| filter.prefetch(item));
    let mut found = 0;
    for item in items {
        let present = filter.contains(item);
        found += usize::from(present);
        call.reply_bool(present);
    }
    CUCKOO.count_lookups(call.argc() - 2, found);
    Ok(())
}

/// CF.COUNT key item: copies of the item's fingerprint in its buckets; 0 for a missing key or
/// one of another type.
pub fn count(call: &Call) -> Result<(), BfError> {
    let key = call.open_key();
    let count = match key.cuckoo() {
        Ok(Some(filter)) => filter.count(filter.hash_and_prefetch(call.arg(2))),
        _ => 0,
    };
    call.reply_integer(count as i64);
    Ok(())
}

/// CF.DEL key item: removes one copy. Only the item's own adds may be deleted: deleting an
/// item never added can remove another item that shares its fingerprint and bucket.
pub fn del(call: &Call) -> Result<(), BfError> {
    let mut key = call.open_key_for_writing();
    let Ok(Some(filter)) = key.cuckoo_mut() else {
        return Err(BfError::CfNotFound);
    };
    let before = filter.footprint();
    let deleted = filter.delete(filter.hash_and_prefetch(call.arg(2)));
    call.replicate_verbatim();
    if deleted {
        CUCKOO.count_deletes(1);
        metrics::changed(before, &*filter);
        call.notify(c"cf.del");
    }
    call.reply_bool(deleted);
    Ok(())
}

/// CF.COMPACT key: moves items out of the newest sub-filters where older ones have room.
pub fn compact(call: &Call) -> Result<(), BfError> {
    let mut key = call.open_key_for_writing();
    let Ok(Some(filter)) = key.cuckoo_mut() else {
        return Err(BfError::CfCompactNotFound);
    };
    let before = filter.footprint();
    filter.compact(true);
    metrics::changed(before, &*filter);
    call.replicate_verbatim();
    call.notify(c"cf.compact");
    call.reply_ok();
    Ok(())
}

/// CF.INFO key: eight pairs, a flat array under RESP2 and a map under RESP3.
pub fn info(call: &Call) -> Result<(), BfError> {
    let key = call.open_key();
    let filter = key.cuckoo()?.ok_or(BfError::NotFound)?;
    let fields: [(&std::ffi::CStr, u64); 8] = [
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
pub fn debug(call: &Call) -> Result<(), BfError> {
    let key = call.open_key();
    let filter = key.cuckoo()?.ok_or(BfError::NotFound)?;
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
        line.push_str(&format!(" fingerprint_bits:{}", filter.width().bits()));
    }
    call.reply_bulk(line.as_bytes());
    Ok(())
}

/// CF.SCANDUMP key iterator: `[1, header]` from 0, then `[next, chunk]`, and `[0, nil]` at
/// the end. A filter holding no items dumps nothing, as in RedisBloom.
pub fn scandump(call: &Call) -> Result<(), BfError> {
    let iterator =
        parse::integer(call.arg(2)).filter(|&iterator| iterator >= 0).ok_or(BfError::CfInvalidPosition)?;
    let key = call.open_key();
    let filter = key.cuckoo()?.ok_or(BfError::NotFound)?;
    let header = filter.header();
    let piece = match iterator as u64 {
        _ if filter.items() == 0 => None,
        0 => Some((1, header.as_bytes())),
        iterator => filter.chunk(iterator),
    };
    call.reply_array(2);
    match piece {
        Some((next, bytes)) => {
            call.reply_integer(next as i64);
            call.reply_bulk(bytes);
        }
        None => {
            call.reply_integer(0);
            call.reply_null();
        }
    }
    Ok(())
}

/// CF.LOADCHUNK key iterator data: iterator 1 creates the filter from a header (RedisBloom's,
/// or the longer one of a wide filter), any other writes a chunk where SCANDUMP found it.
/// Unlike RedisBloom, the chunks are replicated too, so that a replica gets the filter and not
/// only its empty shape.
pub fn loadchunk(call: &Call) -> Result<(), BfError> {
    let iterator =
        parse::integer(call.arg(2)).filter(|&iterator| iterator != 0).ok_or(BfError::CfInvalidPosition)?;
    let data = call.arg(3);
    let mut key = call.open_key_for_writing();
    if iterator == 1 {
        if key.cuckoo()?.is_some() {
            return Err(BfError::ItemExists);
        }
        if CuckooFilter::header_width(data).is_none() {
            return Err(BfError::CfInvalidHeader);
        }
        let filter =
            CuckooFilter::from_header(data, call.max_filter_bytes()).map_err(|_| BfError::CfCannotCreate)?;
        key.store_cuckoo(filter)?;
    } else {
        let filter = key.cuckoo_mut()?.ok_or(BfError::NotFound)?;
        let written = u64::try_from(iterator).is_ok_and(|iterator| filter.load_chunk(iterator, data));
        if !written {
            return Err(BfError::CfCannotLoadChunk);
        }
    }
    call.replicate_verbatim();
    call.notify(c"cf.loadchunk");
    call.reply_ok();
    Ok(())
}
