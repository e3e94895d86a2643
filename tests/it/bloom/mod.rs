//! Bloom filters (BF.*, RedisBloom's `MBbloom--` type): the commands, persistence, replication,
//! keyspace notifications, hostile input, the false-positive rate, and the way to and from the
//! real RedisBloom.

mod commands;
mod encodings;
mod false_positives;
mod hostile;
mod notifications;
mod persistence;
mod redisbloom;
mod replication;
mod window;
