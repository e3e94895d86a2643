//! The BF.* family: two data types behind one command set. Plain Bloom filters (`MBbloom--`,
//! [`datatype`]) and windowed ones, whose items expire (`rbBF-wind`, [`window`]), over
//! `redbloom_core::bloom`. [`commands`] lists the commands, one file per family of them
//! ([`reserve`], [`add`], [`query`], [`info`], [`dump`]); each finds what its key holds with
//! one lookup ([`held`]) and matches on it once. [`parse`] reads their arguments, [`error`]
//! holds their texts.

mod add;
pub mod commands;
pub mod datatype;
mod dump;
mod error;
mod held;
mod info;
mod parse;
mod query;
mod reserve;
pub mod window;
