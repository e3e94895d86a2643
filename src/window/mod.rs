//! What every windowed type's glue shares (`WINDOW ms [GENERATIONS g]`), above `shared/` and
//! below the families: the grammar and its errors ([`parse`], [`error`]), the one lookup that
//! finds a family's plain or windowed value ([`held`]), and the rotations a master's clock
//! decides ([`rotation`]), replicated as `<FAMILY>.ROTATE key at_ms` and run for idle keys by
//! each type's `KeyTimer`. A windowed type implements [`rotation::Windowed`]
//! over its core value (whose generations are `redbloom_core::window`'s) and gets the rest.
//!
//! **The master's clock decides.** A master rotates a value before every write to it and from
//! its timer; each rotation that changed something is sent to replicas and the AOF, the only
//! way a replica or a replay rotates. A new value starts at the epoch's span on every server
//! and is rotated at once by its creator, so its start is the master's too. A master's reads
//! skip the generations already expired by its clock; a replica's read what its master's
//! rotations left.

pub mod error;
pub mod held;
pub mod parse;
pub mod rotation;
