//! Runs the worked example (`make example`) and its test: real PostgreSQL and Redis servers in
//! a temporary directory, the users table seeded, the service started, and traffic sent to it.
//! Not part of the service.

pub mod chart;
pub mod client;
pub mod load;
pub mod random;
pub mod servers;
