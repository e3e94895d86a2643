//! The integration tests, all in one binary (`cargo test --test it`), so that the client stack
//! is compiled and linked once rather than once per area. Every test starts its own redis-server
//! processes with the freshly built module ([`harness`]); `REDIS_SERVER` names the server, and
//! `make test` runs the binary on each server it tests.
//!
//! Each family of types has an area, on much the same topics (the commands and their errors,
//! persistence, replication, the way to and from the real RedisBloom, hostile input):
//! - [`bloom`]: Bloom filters (BF.*, `MBbloom--`), and the windowed ones (`rbBF-wind`);
//! - [`cuckoo`]: cuckoo filters (CF.*, `MBbloomCF`, and `rbCF-wide`);
//! - [`sketches`]: Count-Min, Top-K and t-digest (CMS.*, TOPK.*, TDIGEST.*), the windowed Top-K
//!   (`rbTOPKwnd`), and a RedisBloom
//!   deployment of all five types switched to this module and back.
//!
//! The areas that concern the module as a whole sit here: [`clients`] (clients written for
//! RedisBloom, unchanged), [`cluster`], [`config`], [`info_bf`] (the `INFO bf` section),
//! [`registration`] (how the module presents itself: name, version, types, commands),
//! [`safety`] (the server under pressure) and [`in_process`] (filters built with
//! `redbloom-core`, handed to a server by LOADCHUNK); what the tests of every windowed type
//! share ([`window`]), and every windowed type's rotations on a replica's AOF and under a
//! client pause ([`window_replicas`]).

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
mod window;
mod window_replicas;
