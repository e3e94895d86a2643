//! The Top-K type (`TopK-TYPE`) and the TOPK.* commands, over `redbloom_core::top_k`. The
//! contract they keep is `docs/topk-commands.md`.

mod add;
pub mod commands;
pub mod datatype;
mod error;
mod query;
mod reserve;
