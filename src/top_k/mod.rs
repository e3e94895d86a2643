//! The Top-K types and the TOPK.* commands, over `redbloom_core::top_k`: the plain list
//! (`TopK-TYPE`, RedisBloom's) and the windowed one (`rbTOPKwnd`, [`window`]), which every
//! command serves, each handler matching once on what [`held`] finds. The contract they keep
//! is `docs/topk-commands.md`. [`commands`] lists the commands, [`error`] holds their texts.

mod add;
pub mod commands;
pub mod datatype;
mod error;
mod held;
mod query;
mod reserve;
pub mod window;
