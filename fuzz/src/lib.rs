//! What the fuzz targets reach: the filters (`redbloom-core`, a dependency) and the module's
//! argument parsers, which are pure but live in the module crate. Those are compiled here from
//! their own sources, at the module paths they name each other by (`crate::shared::...`).

pub use redbloom_core as core;

/// The parsers' shared ground: the error replies and Redis's reading of numbers.
#[path = "../../src/shared"]
pub mod shared {
    pub mod error;
    pub mod parse;
}

/// `WINDOW ms [GENERATIONS g]`, the grammar every windowed type shares.
#[path = "../../src/window"]
pub mod window {
    pub mod error;
    pub mod parse;
}

/// BF.* arguments.
#[path = "../../src/bloom"]
pub mod bloom {
    pub mod error;
    pub mod parse;
}

/// CF.* arguments.
#[path = "../../src/cuckoo"]
pub mod cuckoo {
    pub mod error;
    pub mod parse;
}

/// Memory the targets let one decoded filter take: enough for real shapes, small enough
/// that the fuzzer's memory limit is never the finding.
pub const FUZZ_BUDGET: usize = 16 << 20;

/// Splits fuzz input into pieces at zero bytes.
pub fn split_args(data: &[u8]) -> Vec<&[u8]> {
    data.split(|&byte| byte == 0).collect()
}
