//! The Count-Min sketch type (`CMSk-TYPE`) and the CMS.* commands, over
//! `redbloom_core::count_min`. The contract they keep is `docs/cms-commands.md`.

pub mod commands;
pub mod datatype;
mod create;
mod query;
mod update;
