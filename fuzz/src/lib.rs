//! The module's Redis-free code, compiled from its own sources for the fuzz targets: the
//! filter core and the argument parsers.
#![allow(dead_code)]

#[path = "../../src/filter/mod.rs"]
pub mod filter;

// The parsers name their error type as `super::BfError`: here the crate root.
#[path = "../../src/commands/error.rs"]
mod error;
#[path = "../../src/commands/parse.rs"]
pub mod parse;

pub use error::BfError;

/// Memory the targets let one decoded filter take: enough for real shapes, small enough
/// that the fuzzer's memory limit is never the finding.
pub const FUZZ_BUDGET: usize = 16 << 20;

/// Splits fuzz input into pieces at zero bytes.
pub fn split_args(data: &[u8]) -> Vec<&[u8]> {
    data.split(|&byte| byte == 0).collect()
}
