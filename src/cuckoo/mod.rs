//! Cuckoo filters (`MBbloomCF`, and `rbCF-wide` for wider fingerprints; CF.*): the filter
//! itself is `redbloom_core::cuckoo`; here are its type callbacks ([`datatype`]) and its
//! commands ([`commands`] lists them, one file per family: [`reserve`], [`add`], [`query`],
//! [`delete`], [`info`], [`dump`]), whose arguments [`parse`] reads; [`error`] holds their
//! texts. The contract they keep is `docs/cf-commands.md`.

mod add;
pub mod commands;
pub mod datatype;
mod delete;
mod dump;
mod error;
mod info;
mod parse;
mod query;
mod reserve;
