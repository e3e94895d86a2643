//! A users service that keeps requests for IDs that were never created away from its cache and
//! its database: `GET /users/{id}` asks a Bloom filter (redbloom's `BF.*` commands) first, and
//! only an ID the filter may know goes on to Redis and PostgreSQL.
//!
//! The service is `bloom` (the filter), `users` (the lookup, creation and deletion paths), and
//! the plumbing around them (`config`, `http`, `metrics`, `service`). `demo` is not part of it:
//! it runs the worked example and its test (servers, seeding, load, report, chart).

pub mod bloom;
pub mod config;
pub mod demo;
pub mod http;
pub mod metrics;
pub mod service;
pub mod users;

/// Every failure the service answers with a 500, or a command reports before exiting.
pub type Error = Box<dyn std::error::Error + Send + Sync>;
