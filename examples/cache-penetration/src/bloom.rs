//! The Bloom filter of user IDs: checked before every lookup, told of every new user, and
//! rebuilt from the table when deletions have made it stale.

use crate::Error;
use postgres::IsolationLevel;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Room to grow: a filter built from the table is reserved for twice its rows, so that it stays
/// one sub-filter (one cache line per lookup at 1%) until the table has doubled. Past its
/// capacity it still works: it adds a larger sub-filter, and every lookup checks one more.
pub fn capacity_for(rows: u64) -> u64 {
    rows.saturating_mul(2).max(10_000)
}

/// IDs per `BF.INSERT` while building: 10,000 cost the server about a millisecond (into a fresh
/// filter of 2 million), short enough not to hold up the other clients' commands for long.
const BATCH: usize = 10_000;

/// A build that dies leaves its unfinished filter to expire after this long.
const UNFINISHED_FILTER_TTL_SECONDS: u64 = 3600;

pub enum Check {
    /// The filter has never been told of this ID: it does not exist.
    Absent,
    /// The ID exists, or is one of the filter's false positives.
    MaybePresent,
    /// There is no filter (Redis restarted without persistence, the key was evicted or
    /// deleted): BF.EXISTS answers 0 for a missing key, which would turn every user into a 404,
    /// so the lookup goes on as if there were no filter until it is rebuilt.
    FilterMissing,
}

pub fn check(redis: &mut redis::Connection, key: &str, id: i64) -> redis::RedisResult<Check> {
    // Both in one round trip.
    let (filter_exists, maybe_present): (bool, bool) =
        redis::pipe().cmd("EXISTS").arg(key).cmd("BF.EXISTS").arg(key).arg(id).query(redis)?;
    Ok(match (filter_exists, maybe_present) {
        (false, _) => Check::FilterMissing,
        (true, false) => Check::Absent,
        (true, true) => Check::MaybePresent,
    })
}

/// Tells the filter of new IDs. `BF.INSERT ... NOCREATE` is `BF.MADD` that never creates the
/// key: BF.ADD and BF.MADD would make a missing filter anew, with default sizing and none of the
/// other users in it, and every other user would then be answered 404.
pub fn add(redis: &mut redis::Connection, key: &str, ids: &[i64]) -> redis::RedisResult<()> {
    redis::cmd("BF.INSERT").arg(key).arg("NOCREATE").arg("ITEMS").arg(ids).exec(redis)
}

/// True for the error [`add`] and [`info`] get when the filter does not exist.
pub fn is_missing_filter(error: &redis::RedisError) -> bool {
    error.detail() == Some("not found")
}

/// What `BF.INFO` says of a filter.
pub struct FilterInfo {
    pub capacity: u64,
    pub items: u64,
    pub sub_filters: u64,
    pub bytes: u64,
    /// `BF.INFO key ERROR`: the false-positive rate the filter has now, estimated from how
    /// full its bits are. It climbs as the filter fills: one reserved for twice its items, as
    /// [`rebuild`] makes them, starts far below the rate it was built for. Deleted users do not
    /// show in it (see [`crate::metrics::Counter::DatabaseMisses`]).
    pub estimated_error_rate: f64,
}

pub fn info(redis: &mut redis::Connection, key: &str) -> Result<Option<FilterInfo>, Error> {
    let fields: Vec<(String, u64)> = match redis::cmd("BF.INFO").arg(key).query(redis) {
        Ok(fields) => fields,
        Err(error) if is_missing_filter(&error) => return Ok(None),
        Err(error) => return Err(error.into()),
    };
    let field = |name: &str| fields.iter().find(|(field, _)| field == name).map(|&(_, value)| value);
    let (Some(capacity), Some(bytes), Some(sub_filters), Some(items)) =
        (field("Capacity"), field("Size"), field("Number of filters"), field("Number of items inserted"))
    else {
        return Err(format!("unexpected BF.INFO reply for {key}: {fields:?}").into());
    };
    let estimate: Vec<String> = redis::cmd("BF.INFO").arg(key).arg("ERROR").query(redis)?;
    let estimated_error_rate = match estimate.as_slice() {
        [rate] => rate.parse()?,
        _ => return Err(format!("unexpected BF.INFO {key} ERROR reply: {estimate:?}").into()),
    };
    Ok(Some(FilterInfo { capacity, items, sub_filters, bytes, estimated_error_rate }))
}

pub struct Rebuilt {
    pub rows: u64,
    /// IDs of the users created from a minute before the scan on, added again just before the
    /// swap: the users created during the scan are among them.
    pub recent: u64,
    pub capacity: u64,
    pub seconds: f64,
}

/// Builds a filter of every ID in the table under a new key, then RENAMEs it over `key`.
/// Lookups go on against the old filter until the RENAME, which swaps the two atomically, so
/// they never see a half-built one; creations pause for the few milliseconds of the swap.
/// `progress` is told, after every batch, how many IDs of how many are in.
pub fn rebuild(
    db: &mut postgres::Client,
    redis: &mut redis::Connection,
    key: &str,
    error_rate: f64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Rebuilt, Error> {
    let started = Instant::now();
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH)?.as_nanos();
    // The key's name as a hash tag: in Redis Cluster the new filter lands in the live one's
    // slot, where RENAME can reach it.
    let new_key = format!("{{{key}}}:rebuild:{}:{nanos}", std::process::id());
    let result = build_and_swap(db, redis, key, &new_key, error_rate, progress);
    if result.is_err() {
        // Best effort: its expiry removes it anyway.
        let _ = redis::cmd("UNLINK").arg(&new_key).exec(redis);
    }
    Ok(Rebuilt { seconds: started.elapsed().as_secs_f64(), ..result? })
}

fn build_and_swap(
    db: &mut postgres::Client,
    redis: &mut redis::Connection,
    key: &str,
    new_key: &str,
    error_rate: f64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Rebuilt, Error> {
    // One snapshot for the count and the scan, so that the progress adds up.
    let mut scan =
        db.build_transaction().isolation_level(IsolationLevel::RepeatableRead).read_only(true).start()?;
    let row = scan.query_one("SELECT count(*), now() FROM users", &[])?;
    let rows = u64::try_from(row.try_get::<_, i64>(0)?)?;
    let scan_started: SystemTime = row.try_get(1)?;
    let capacity = capacity_for(rows);
    redis::pipe()
        .cmd("BF.RESERVE")
        .arg(new_key)
        .arg(error_rate)
        .arg(capacity)
        // Explicit, or the server's bf.expansion-factor decides, and 0 there would make a
        // filter that refuses every user past its capacity.
        .arg("EXPANSION")
        .arg(2)
        .ignore()
        .cmd("EXPIRE")
        .arg(new_key)
        .arg(UNFINISHED_FILTER_TTL_SECONDS)
        .ignore()
        .exec(redis)?;

    let all_ids = scan.bind("SELECT id FROM users", &[])?;
    let mut added = 0;
    loop {
        let batch = scan.query_portal(&all_ids, BATCH as i32)?;
        if batch.is_empty() {
            break;
        }
        let ids = batch.iter().map(|row| row.try_get(0)).collect::<Result<Vec<i64>, _>>()?;
        add(redis, new_key, &ids)?;
        added += ids.len() as u64;
        progress(added, rows);
    }
    scan.commit()?;

    // Users created during the scan went into the old filter, not this one. SHARE mode waits
    // for the creations under way and holds new ones back (lookups go on) until the swap, so
    // none can fall between this catch-up and the RENAME. A user's created_at is the start of
    // the transaction that created it, so the minute's margin covers creations that began
    // before the scan and committed after it.
    let mut swap = db.transaction()?;
    swap.batch_execute("LOCK TABLE users IN SHARE MODE")?;
    let recent = swap.query(
        "SELECT id FROM users WHERE created_at >= $1::timestamptz - interval '1 minute'",
        &[&scan_started],
    )?;
    let recent_ids = recent.iter().map(|row| row.try_get(0)).collect::<Result<Vec<i64>, _>>()?;
    for ids in recent_ids.chunks(BATCH) {
        add(redis, new_key, ids)?;
    }
    // One transaction: a RENAME whose PERSIST failed would leave the live filter to expire.
    redis::pipe().atomic().cmd("RENAME").arg(new_key).arg(key).cmd("PERSIST").arg(key).exec(redis)?;
    swap.commit()?;
    Ok(Rebuilt { rows: added, recent: recent_ids.len() as u64, capacity, seconds: 0.0 })
}
