//! What every data type and command stands on, and nothing here knows any of them:
//!
//! - [`error`]: every error reply, with its exact text;
//! - [`config`]: the module's configs and load arguments;
//! - [`alloc`]: the global allocator, Redis's own, asked fallibly;
//! - [`metrics`]: the `INFO bf` section, one set of fields per type;
//! - [`datatype`]: what every type's callbacks share (panic guard, checked RDB reads, AOF
//!   emission, digest, free and copy), and [`datatype::StoredValue`], what a type provides;
//! - [`keyspace`]: opening a key and finding a value of the expected type in it;
//! - [`call`]: one command call: arguments, replies, replication, notifications;
//! - [`command`]: the command table, the entry point with its panic guard, COMMAND INFO;
//! - [`docs`]: COMMAND DOCS's description of arguments;
//! - [`parse`]: integers, floats and keywords as Redis reads them.

#[cfg(not(test))]
pub mod alloc;
pub mod call;
pub mod command;
pub mod config;
pub mod datatype;
pub mod docs;
pub mod error;
pub mod keyspace;
pub mod metrics;
pub mod parse;
pub mod sketch_type;
