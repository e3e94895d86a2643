//! What every data type and command stands on; nothing here knows any of them:
//!
//! - [`error`]: the error every handler returns, with the texts more than one family answers
//!   (each family's own texts are in its `error.rs`);
//! - [`config`]: the module's configs and load arguments;
//! - [`alloc`]: the global allocator, Redis's own, asked fallibly;
//! - [`metrics`]: the `INFO bf` section, one set of fields per type;
//! - [`datatype`]: what every type's callbacks share (panic guard, checked RDB reads, AOF
//!   emission, digest, free and copy), and [`datatype::StoredValue`], what a type provides;
//! - [`record_type`]: the callbacks of every type saved as one RDB record, and
//!   [`record_type::RecordType`], what such a type states;
//! - [`keyspace`]: opening a key and finding a value of the expected type (or of either of a
//!   family's two types) in it;
//! - [`clock`]: the server's clock, and which calls may decide by it;
//! - [`key_timer`]: keys a timer visits, for values that change with the clock;
//! - [`call`]: one command call: arguments, replies, replication, notifications;
//! - [`double_text`]: a double spelled as glibc's `%.17g` spells it, as Redis 7.0 replies one;
//! - [`command`]: the command table, the entry point with its panic guard, COMMAND INFO;
//! - [`docs`]: COMMAND DOCS's description of arguments;
//! - [`parse`]: integers, floats and keywords as Redis reads them;
//! - [`server_double`]: the server's own reading of a double, for what `parse` leaves to it.

#[cfg(not(test))]
pub mod alloc;
pub mod call;
pub mod clock;
pub mod command;
pub mod config;
pub mod datatype;
pub mod docs;
pub mod double_text;
pub mod error;
pub mod key_timer;
pub mod keyspace;
pub mod metrics;
pub mod parse;
pub mod record_type;
pub mod server_double;
