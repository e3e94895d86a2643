//! redbloom: Bloom filters as a native Redis data type, serving the BF.* commands.
//!
//! This file only registers things with Redis: the module, the data type, the commands and
//! the configs. The filter lives in [`filter`] and knows nothing of Redis.

#[cfg(not(test))]
mod alloc;
mod commands;
mod config;
mod datatype;
pub mod filter;
mod foreign_types;
mod keyspace;
mod metrics;

use datatype::BLOOM_TYPE;
use foreign_types::{COUNT_MIN_TYPE, CUCKOO_TYPE, TOP_K_TYPE, T_DIGEST_TYPE};
use redis_module::configuration::ConfigurationFlags;
use redis_module::{raw, redis_module, Context, RedisString, Status};
use std::ffi::c_int;

// Under `cargo test` there is no Redis to allocate from.
#[cfg(not(test))]
use alloc::RedisFallibleAlloc as ModuleAllocator;
#[cfg(test)]
use std::alloc::System as ModuleAllocator;

/// Reported by MODULE LIST; clients gate features on it (redis-py wants 2.8.0 or more).
const MODULE_VERSION: c_int = 20800;

fn initialize(ctx: &Context, args: &[RedisString]) -> Status {
    if let Err(message) = config::apply_load_arguments(args) {
        ctx.log_warning(&format!("redbloom: {message}"));
        return Status::Err;
    }
    // SAFETY: module load, live context.
    unsafe {
        if let Some(set_options) = raw::RedisModule_SetModuleOptions {
            set_options(
                ctx.ctx,
                (raw::REDISMODULE_OPTIONS_HANDLE_IO_ERRORS | raw::REDISMODULE_OPTIONS_HANDLE_REPL_ASYNC_LOAD)
                    as c_int,
            );
        }
    }
    commands::add_acl_category(ctx.ctx);
    metrics::register(ctx.ctx);
    for command in commands::COMMANDS {
        // SAFETY: module load, live context, names and flags are NUL-terminated literals.
        let status = unsafe {
            raw::RedisModule_CreateCommand.map_or(raw::REDISMODULE_ERR as c_int, |create| {
                create(ctx.ctx, command.name.as_ptr(), Some(command.entry), command.flags.as_ptr(), 1, 1, 1)
            })
        };
        if status != raw::REDISMODULE_OK as c_int {
            ctx.log_warning(&format!("redbloom: could not register {:?}", command.name));
            return Status::Err;
        }
        commands::describe(ctx.ctx, command);
    }
    Status::Ok
}

redis_module! {
    name: "bf",
    version: MODULE_VERSION,
    allocator: (ModuleAllocator, ModuleAllocator),
    data_types: [
        BLOOM_TYPE,
        CUCKOO_TYPE,
        COUNT_MIN_TYPE,
        TOP_K_TYPE,
        T_DIGEST_TYPE,
    ],
    init: initialize,
    configurations: [
        i64: [
            ["initial-size", &config::INITIAL_SIZE, config::DEFAULT_INITIAL_SIZE, 1, filter::params::MAX_CAPACITY as i64, ConfigurationFlags::DEFAULT, None],
            ["expansion-factor", &config::EXPANSION, config::DEFAULT_EXPANSION, 0, filter::params::MAX_EXPANSION as i64, ConfigurationFlags::DEFAULT, None],
            ["max-filter-bytes", &config::MAX_FILTER_BYTES, config::DEFAULT_MAX_FILTER_BYTES, config::MIN_MAX_FILTER_BYTES, i64::MAX, ConfigurationFlags::DEFAULT, None],
        ],
        string: [
            ["error-rate", &config::ERROR_RATE, config::DEFAULT_ERROR_RATE, ConfigurationFlags::DEFAULT, None],
        ],
        bool: [
            ["huge-pages", &config::HUGE_PAGES, false, ConfigurationFlags::DEFAULT, None],
        ],
        enum: [
            ["format", &config::FORMAT, config::FormatSetting::redbloom, ConfigurationFlags::DEFAULT, None],
        ],
        // Arguments are read by `initialize`, which also takes RedisBloom's names.
        module_args_as_configuration: false,
    ]
}
