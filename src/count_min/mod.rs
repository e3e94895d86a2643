//! The Count-Min sketch types and the CMS.* commands, over `redbloom_core::count_min`: the
//! plain sketch (`CMSk-TYPE`, RedisBloom's, [`datatype`]) and the windowed one (`rbCMSwind`,
//! [`window`]), both record types, served by one set of handlers that find either with one
//! lookup ([`held`]). The contract they keep is `docs/cms-commands.md`; [`commands`] lists
//! the commands, [`error`] holds their texts.

pub mod commands;
mod create;
pub mod datatype;
mod error;
mod held;
mod query;
mod update;
pub mod window;
