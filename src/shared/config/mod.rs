//! Server-wide defaults and limits: module configs (lines in redis.conf, `CONFIG SET/GET`,
//! `CONFIG REWRITE`) and `loadmodule` arguments.
//!
//! Every setting has a name after `bf.` that every server knows (`bf.error-rate`,
//! `bf.cf-bucket-size`). The defaults RedisBloom's configs set also get the names the Bloom
//! module of Redis 8 registers without a prefix (`bf-error-rate`, `cf-bucket-size`), where the
//! server takes names without a prefix (Redis 8.0 and later): both names reach the same
//! setting, so a redis.conf written for either module starts the server. `loadmodule`
//! arguments take any of these names, and RedisBloom's (`ERROR_RATE`, `INITIAL_SIZE`,
//! `CF_MAX_EXPANSIONS`), in any case.
//!
//! - [`settings`]: the settings themselves, and what commands read of them;
//! - [`registration`]: the configs Redis is told of, and their callbacks;
//! - [`arguments`]: `loadmodule` arguments.

mod arguments;
mod registration;
mod settings;

pub use arguments::apply_load_arguments;
pub use registration::register;
#[cfg(not(test))]
pub use settings::huge_pages;
#[cfg(test)]
pub use settings::FORMAT_NAMES;
pub use settings::{
    cf_bucket_size, cf_expansion, cf_initial_size, cf_max_expansions, cf_max_iterations, error_rate,
    expansion, format_index, initial_size, log_capped, max_filter_bytes,
};
