//! The error every command handler returns, and how it is answered. A family's own texts live
//! beside it (`<family>/error.rs`) and reach the client through [`CommandError::Own`]; here
//! are only the replies that are not any one family's: Redis's own (arity, WRONGTYPE), the
//! guard's, and RedisBloom's texts that both filter families (BF.* and CF.*) answer, from their
//! contracts (`docs/bf-commands.md`, `docs/cf-commands.md`).
//!
//! Clients compare these strings byte for byte. A message without a leading error code
//! (`Bad capacity`, `Unknown argument received`, ...) is sent as it is: its first word becomes
//! the error code, exactly as RedisBloom sends it.

use redbloom_core::decode::DecodeError;
use std::ffi::CStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandError {
    /// Answered with Redis's own arity error, naming the command.
    WrongArity,
    WrongType,
    NotFound,
    ItemExists,
    InsufficientMemory,
    InsertBadErrorRate,
    InsertBadCapacity,
    UnknownArgument,
    BadData,
    /// A family's own error, with its exact text.
    Own(&'static CStr),
    /// A bug caught by the panic guard; the server lives on.
    Internal,
}

impl CommandError {
    pub fn message(self) -> &'static CStr {
        match self {
            CommandError::WrongArity => c"ERR wrong number of arguments",
            CommandError::WrongType => c"WRONGTYPE Operation against a key holding the wrong kind of value",
            CommandError::NotFound => c"ERR not found",
            CommandError::ItemExists => c"ERR item exists",
            CommandError::InsufficientMemory => c"ERR Insufficient memory to create filter",
            CommandError::InsertBadErrorRate => c"Bad error rate",
            CommandError::InsertBadCapacity => c"Bad capacity",
            CommandError::UnknownArgument => c"Unknown argument received",
            CommandError::BadData => c"ERR received bad data",
            CommandError::Own(message) => message,
            CommandError::Internal => c"ERR internal error in redbloom, see the server log",
        }
    }
}

/// Stored data a command was handed (a LOADCHUNK header, say) that was refused.
impl From<DecodeError> for CommandError {
    fn from(error: DecodeError) -> CommandError {
        match error {
            DecodeError::Malformed(_) => CommandError::BadData,
            DecodeError::TooLarge | DecodeError::OutOfMemory => CommandError::InsufficientMemory,
        }
    }
}
