//! Bloom filters (`MBbloom--`, BF.*): the filter itself is `redbloom_core::bloom`; here are
//! its type callbacks ([`datatype`]) and its commands ([`commands`] lists them, one file per
//! family: [`reserve`], [`add`], [`query`], [`info`], [`dump`]), whose arguments [`parse`]
//! reads. Filters whose items expire (WINDOW) are a type of their own, `rbBF-wind`, served by
//! the same commands through [`window`].

mod add;
pub mod commands;
pub mod datatype;
mod dump;
mod info;
mod parse;
mod query;
mod reserve;
pub mod window;
