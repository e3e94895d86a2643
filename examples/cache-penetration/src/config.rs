//! Settings from the environment, so that the same binary runs in the demo, in the test and in a
//! deployment.

use crate::Error;

pub struct Config {
    /// `LISTEN`: the address the HTTP server binds.
    pub listen: String,
    /// `DATABASE_URL`, e.g. `postgresql://postgres@127.0.0.1:5432/postgres`.
    pub database_url: String,
    /// `REDIS_URL`: the Redis that holds the filter and the cache, with redbloom loaded.
    pub redis_url: String,
    /// `WORKERS`: threads serving HTTP, each with its own Redis and PostgreSQL connection.
    pub workers: usize,
    /// `FILTER_KEY`, or None when `BLOOM_FILTER=off` (to measure what the filter saves).
    pub filter_key: Option<String>,
    /// `FILTER_ERROR_RATE`: the false-positive rate a filter is built for.
    pub filter_error_rate: f64,
}

impl Config {
    pub fn from_env() -> Result<Config, Error> {
        let filter_enabled = match setting("BLOOM_FILTER", "on").as_str() {
            "on" => true,
            "off" => false,
            other => return Err(format!("BLOOM_FILTER must be on or off, not {other:?}").into()),
        };
        let workers = parsed("WORKERS", "16")?;
        if workers == 0 {
            return Err("WORKERS must be at least 1".into());
        }
        let filter_error_rate = parsed("FILTER_ERROR_RATE", "0.01")?;
        if !(filter_error_rate > 0.0 && filter_error_rate < 1.0) {
            return Err("FILTER_ERROR_RATE must lie between 0 and 1".into());
        }
        Ok(Config {
            listen: setting("LISTEN", "127.0.0.1:8080"),
            database_url: setting("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres"),
            redis_url: setting("REDIS_URL", "redis://127.0.0.1:6379/"),
            workers,
            filter_key: filter_enabled.then(|| setting("FILTER_KEY", "users:ids")),
            filter_error_rate,
        })
    }
}

fn setting(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn parsed<T: std::str::FromStr>(name: &str, default: &str) -> Result<T, Error> {
    let text = setting(name, default);
    text.parse().map_err(|_| format!("{name}={text:?} is not a valid value").into())
}
