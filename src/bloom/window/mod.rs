//! Windowed Bloom filters, whose items expire (`BF.RESERVE ... WINDOW ms [GENERATIONS g]`):
//! the data type `rbBF-wind` ([`datatype`]) over `redbloom_core::bloom::window`. The BF.*
//! handlers of the family serve it; what is its own is here.
//!
//! The master's clock decides its rotations, as for every windowed type (`window::rotation`,
//! which [`rotation`] plugs it into), replicated as `BF.ROTATE key at_ms`. A filter is created on
//! replicas and in the AOF as the BF.LOADCHUNK of its header, which holds its absolute times.

pub mod datatype;
mod rotation;
