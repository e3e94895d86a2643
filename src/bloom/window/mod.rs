//! Windowed Bloom filters, whose items expire (`BF.RESERVE ... WINDOW ms [GENERATIONS g]`):
//! the data type `rbBF-wind` ([`datatype`]) over `redbloom_core::bloom::window`. The BF.*
//! handlers of the family serve it; what is its own is here.
//!
//! **The master's clock decides.** A master rotates a filter (opens a generation, drops the
//! expired ones) before every write to it ([`rotation`]), and its [`timer`] rotates the filters
//! that receive no writes; each rotation is sent to replicas and the AOF as `BF.ROTATE key
//! at_ms`, the only way a replica or a replay rotates. A master's reads skip the generations
//! already expired by its clock; a replica's read what its master's rotations left. A filter is
//! created on replicas and in the AOF as the BF.LOADCHUNK of its header, which holds its
//! absolute times.

pub mod datatype;
pub mod rotation;
pub mod timer;
