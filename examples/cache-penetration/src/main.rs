//! `users-service` serves the users API, building its filter first if there is none;
//! `users-service rebuild-filter` rebuilds the filter from the table while the service runs.
//! Both read their settings from the environment (see `config.rs`).

use cache_penetration::bloom::{self, Rebuilt};
use cache_penetration::config::Config;
use cache_penetration::{service, Error};
use std::process::ExitCode;

fn main() -> ExitCode {
    let result = Config::from_env().and_then(|config| match std::env::args().nth(1).as_deref() {
        None | Some("serve") => serve(config),
        Some("rebuild-filter") => rebuild_filter(&config),
        Some(other) => {
            Err(format!("unknown command {other:?}: the commands are serve and rebuild-filter").into())
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("users-service: {error}");
            ExitCode::FAILURE
        }
    }
}

fn serve(config: Config) -> Result<(), Error> {
    if let Some(key) = &config.filter_key {
        let mut redis = redis::Client::open(config.redis_url.as_str())?.get_connection()?;
        let filter_exists: bool = redis::cmd("EXISTS").arg(key).query(&mut redis)?;
        if !filter_exists {
            eprintln!("users-service: no filter at {key}: building it from the users table");
            rebuild(&config, key)?;
        }
    }
    service::serve(config)
}

/// For when deleted users have made the filter stale: run it from cron, or by hand.
fn rebuild_filter(config: &Config) -> Result<(), Error> {
    let key = config.filter_key.as_deref().ok_or("BLOOM_FILTER=off: there is no filter to rebuild")?;
    let mut redis = redis::Client::open(config.redis_url.as_str())?.get_connection()?;
    match bloom::info(&mut redis, key)? {
        Some(old) => eprintln!(
            "users-service: rebuilding {key}, now {} IDs in {} sub-filter(s), {} bytes, estimated error rate {:.3}%",
            old.items,
            old.sub_filters,
            old.bytes,
            old.estimated_error_rate * 100.0
        ),
        None => eprintln!("users-service: no filter at {key}: building it"),
    }
    rebuild(config, key)?;
    if let Some(new) = bloom::info(&mut redis, key)? {
        eprintln!(
            "users-service: {key} now holds {} IDs in {} sub-filter(s), {} bytes, estimated error rate {:.3}%",
            new.items,
            new.sub_filters,
            new.bytes,
            new.estimated_error_rate * 100.0
        );
    }
    Ok(())
}

/// Builds the filter under a new key and swaps it in, with a progress line every tenth.
fn rebuild(config: &Config, key: &str) -> Result<Rebuilt, Error> {
    let mut db = postgres::Client::connect(&config.database_url, postgres::NoTls)?;
    let mut redis = redis::Client::open(config.redis_url.as_str())?.get_connection()?;
    let mut tenths_reported = 0;
    let rebuilt = bloom::rebuild(&mut db, &mut redis, key, config.filter_error_rate, &mut |added, rows| {
        let tenths = (added * 10).checked_div(rows).unwrap_or(10);
        if tenths > tenths_reported {
            tenths_reported = tenths;
            eprintln!("users-service: building {key}: {added} of {rows} IDs");
        }
    })?;
    eprintln!(
        "users-service: {key} swapped in after {:.2} s: {} IDs from the table, {} recent ones added again, \
         reserved for {} at {}%",
        rebuilt.seconds,
        rebuilt.rows,
        rebuilt.recent,
        rebuilt.capacity,
        config.filter_error_rate * 100.0
    );
    Ok(rebuilt)
}
