//! The Top-K type (`TopK-TYPE`) and the TOPK.* commands, over `redbloom_core::top_k`. The
//! contract they keep is `docs/topk-commands.md`. Its type ([`datatype`]) is a record type;
//! [`commands`] lists the commands, [`error`] holds their texts.

mod add;
pub mod commands;
pub mod datatype;
mod error;
mod query;
mod reserve;
