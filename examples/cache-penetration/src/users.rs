//! The three request paths: find a user (filter, then cache, then database), create one (the
//! database and the filter together), delete one.

use crate::bloom::{self, Check};
use crate::config::Config;
use crate::metrics::{Counter, Metrics};
use crate::Error;
use std::time::Duration;

const CACHE_SECONDS: u64 = 300;
/// "No such user", cached for the filter's false positives: short, because it is also what a
/// lookup of a user deleted before the filter's next rebuild leaves.
const NEGATIVE_CACHE_SECONDS: u64 = 30;
/// A Redis that does not answer within this fails the request rather than holding its worker.
const REDIS_TIMEOUT: Duration = Duration::from_secs(5);
/// An empty cache entry means "no such user".
const NEGATIVE_ENTRY: &str = "";

/// The one query a lookup makes (the demo counts its calls in pg_stat_statements).
pub const SELECT_USER: &str = "SELECT id, name, email FROM users WHERE id = $1";

/// One worker's connections, with its statements prepared once.
pub struct Backends {
    redis: redis::Connection,
    db: postgres::Client,
    select_user: postgres::Statement,
    insert_user: postgres::Statement,
    delete_user: postgres::Statement,
}

impl Backends {
    pub fn connect(config: &Config) -> Result<Backends, Error> {
        let redis =
            redis::Client::open(config.redis_url.as_str())?.get_connection_with_timeout(REDIS_TIMEOUT)?;
        redis.set_read_timeout(Some(REDIS_TIMEOUT))?;
        redis.set_write_timeout(Some(REDIS_TIMEOUT))?;
        let mut db = postgres::Client::connect(&config.database_url, postgres::NoTls)?;
        let select_user = db.prepare(SELECT_USER)?;
        let insert_user =
            db.prepare("INSERT INTO users (name, email) VALUES ($1, $2) RETURNING id, name, email")?;
        let delete_user = db.prepare("DELETE FROM users WHERE id = $1")?;
        Ok(Backends { redis, db, select_user, insert_user, delete_user })
    }

    pub fn redis(&mut self) -> &mut redis::Connection {
        &mut self.redis
    }

    /// The user as JSON, or None for 404. `filter` is the filter's key (None: no filter).
    pub fn find_user(
        &mut self,
        id: i64,
        filter: Option<&str>,
        metrics: &Metrics,
    ) -> Result<Option<String>, Error> {
        if let Some(filter) = filter {
            match bloom::check(&mut self.redis, filter, id)? {
                Check::Absent => {
                    metrics.count(Counter::FilterRejections);
                    return Ok(None);
                }
                Check::MaybePresent => {}
                Check::FilterMissing => metrics.count(Counter::FilterMissing),
            }
        }
        let cache_key = cache_key(id);
        let cached: Option<String> = redis::cmd("GET").arg(&cache_key).query(&mut self.redis)?;
        if let Some(entry) = cached {
            metrics.count(Counter::CacheHits);
            return Ok((entry != NEGATIVE_ENTRY).then_some(entry));
        }
        metrics.count(Counter::DatabaseQueries);
        match self.db.query_opt(&self.select_user, &[&id])? {
            Some(row) => {
                let user = User::from_row(&row)?.to_json();
                redis::cmd("SET")
                    .arg(&cache_key)
                    .arg(&user)
                    .arg("EX")
                    .arg(CACHE_SECONDS)
                    .exec(&mut self.redis)?;
                Ok(Some(user))
            }
            None => {
                metrics.count(Counter::DatabaseMisses);
                redis::cmd("SET")
                    .arg(&cache_key)
                    .arg(NEGATIVE_ENTRY)
                    .arg("EX")
                    .arg(NEGATIVE_CACHE_SECONDS)
                    .exec(&mut self.redis)?;
                Ok(None)
            }
        }
    }

    /// Inserts the user and tells the filter, both or neither: the ID goes into the filter
    /// before the COMMIT, so a failed Redis call leaves no user the filter would reject (a
    /// failed COMMIT leaves an extra ID in the filter, which only costs lookups of it a query).
    pub fn create_user(&mut self, name: &str, email: &str, filter: Option<&str>) -> Result<User, Error> {
        let mut transaction = self.db.transaction()?;
        let row = transaction.query_one(&self.insert_user, &[&name, &email])?;
        let user = User::from_row(&row)?;
        if let Some(filter) = filter {
            match bloom::add(&mut self.redis, filter, &[user.id]) {
                // With no filter, lookups skip it, and its rebuild will read this user.
                Err(error) if !bloom::is_missing_filter(&error) => return Err(error.into()),
                _ => {}
            }
        }
        transaction.commit()?;
        // Replaces the negative entry a lookup of this ID may have left. The user exists now:
        // a failure here is logged rather than answered, or a client would retry and create a
        // second one (the negative entry then expires within its 30 s).
        let mut cached = redis::cmd("SET");
        cached.arg(cache_key(user.id)).arg(user.to_json()).arg("EX").arg(CACHE_SECONDS);
        if let Err(error) = cached.exec(&mut self.redis) {
            eprintln!("users-service: user {} created, but not cached: {error}", user.id);
        }
        Ok(user)
    }

    /// False if there was no such user. The filter keeps the ID (a Bloom filter cannot forget
    /// one): lookups of it cost a database query, then a negative cache entry, until the
    /// filter's next rebuild.
    pub fn delete_user(&mut self, id: i64) -> Result<bool, Error> {
        let deleted = self.db.execute(&self.delete_user, &[&id])? > 0;
        // Even when no row was left: a DELETE retried after its DEL failed must still clear
        // the cached user.
        redis::cmd("DEL").arg(cache_key(id)).exec(&mut self.redis)?;
        Ok(deleted)
    }
}

fn cache_key(id: i64) -> String {
    format!("user:{id}")
}

pub struct User {
    pub id: i64,
    pub name: String,
    pub email: String,
}

impl User {
    fn from_row(row: &postgres::Row) -> Result<User, postgres::Error> {
        Ok(User { id: row.try_get("id")?, name: row.try_get("name")?, email: row.try_get("email")? })
    }

    pub fn to_json(&self) -> String {
        format!(
            r#"{{"id":{},"name":{},"email":{}}}"#,
            self.id,
            json_string(&self.name),
            json_string(&self.email)
        )
    }
}

fn json_string(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for character in text.chars() {
        match character {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\t' => quoted.push_str("\\t"),
            control if control < ' ' => quoted.push_str(&format!("\\u{:04x}", control as u32)),
            other => quoted.push(other),
        }
    }
    quoted.push('"');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes_what_json_requires() {
        let user = User { id: 7, name: "Ada \"the\" \\ first\n".into(), email: "a\u{1}@example.com".into() };
        assert_eq!(
            user.to_json(),
            r#"{"id":7,"name":"Ada \"the\" \\ first\n","email":"a\u0001@example.com"}"#
        );
    }
}
