//! The t-digest type (`TDIS-TYPE`) and the TDIGEST.* commands, over `redbloom_core::t_digest`.
//! Its type ([`datatype`]) is a record type; [`commands`] lists the commands, [`error`] holds
//! their texts. The contract they keep is `docs/tdigest-commands.md`. A key holds a plain
//! digest or a windowed one (`rbTDIGwnd`, [`window`]), found by one lookup (`held`).

pub mod commands;
pub mod datatype;
mod error;
mod held;
mod parse;
mod query;
mod update;
pub mod window;
