//! Bloom filters (`MBbloom--`, BF.*): the filter itself is `redbloom_core::bloom`; here are
//! its type callbacks ([`datatype`]) and its commands ([`commands`] lists them, one file per
//! family: [`reserve`], [`add`], [`query`], [`info`], [`dump`]), whose arguments [`parse`]
//! reads.

mod add;
pub mod commands;
pub mod datatype;
mod dump;
mod info;
mod parse;
mod query;
mod reserve;
