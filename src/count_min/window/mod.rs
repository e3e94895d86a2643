//! Windowed Count-Min sketches, which count the last `window` milliseconds
//! (`CMS.INITBYDIM key width depth WINDOW ms [GENERATIONS g]`, and INITBYPROB): the data type
//! `rbCMSwind` ([`datatype`]) over `redbloom_core::count_min::window`. The CMS.* handlers of
//! the family serve it; what is its own is here.
//!
//! The master's clock decides its rotations, as for every windowed type (`window::rotation`,
//! which [`rotation`] plugs it into), replicated as `CMS.ROTATE key at_ms`. A sketch is created
//! on replicas and in the AOF by its INITBY command as it came, then that rotation.

pub mod datatype;
mod rotation;
