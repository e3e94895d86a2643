//! The integration tests, all in one binary (`cargo test --test it`), so that the client stack
//! is compiled and linked once rather than once per area. Every test starts its own redis-server
//! processes with the freshly built module ([`harness`]). The areas that concern the module as
//! a whole sit here; [`bloom`] and [`cuckoo`] hold those of each filter kind, mirroring each other.

mod bloom;
mod clients;
mod cluster;
mod config;
mod cuckoo;
mod harness;
mod in_process;
mod info_bf;
mod registration;
mod safety;
mod sketches;
