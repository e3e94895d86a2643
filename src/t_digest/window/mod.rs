//! Windowed t-digests, which answer about the last window's values
//! (`TDIGEST.CREATE key [COMPRESSION c] WINDOW ms [GENERATIONS g]`): the data type `rbTDIGwnd`
//! ([`datatype`]) over `redbloom_core::t_digest::WindowTDigest`. The TDIGEST.* handlers of the
//! family serve it through one lookup (`super::held`); what is its own is here.
//!
//! The master's clock decides its rotations, as for every windowed type (`window::rotation`,
//! which [`rotation`] plugs it into), replicated as `TDIGEST.ROTATE key at_ms`. TDIGEST.CREATE
//! is replicated as it came and followed by the creator's rotation, so every copy starts at the
//! master's span.

pub mod datatype;
mod rotation;
