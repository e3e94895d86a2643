//! The Count-Min sketch type (`CMSk-TYPE`) and the CMS.* commands, over
//! `redbloom_core::count_min`. The contract they keep is `docs/cms-commands.md`. Its type
//! ([`datatype`]) is a record type; [`commands`] lists the commands, [`error`] holds their texts.

pub mod commands;
mod create;
pub mod datatype;
mod error;
mod query;
mod update;
