//! Windowed Top-K lists, the heavy hitters of the last window (`TOPK.RESERVE ... WINDOW ms
//! [GENERATIONS g]`): the data type `rbTOPKwnd` ([`datatype`]) over
//! `redbloom_core::top_k::window`. The TOPK.* handlers of the family serve it; what is its
//! own is here.
//!
//! The master's clock decides its rotations, as for every windowed type (`window::rotation`,
//! which [`rotation`] plugs it into), replicated as `TOPK.ROTATE key at_ms`. A list is created
//! on replicas and in the AOF by its TOPK.RESERVE, replicated as it came (the seed of its
//! decay comes from the key's name, as a plain list's), then rotated to the master's clock.

pub mod datatype;
mod rotation;
