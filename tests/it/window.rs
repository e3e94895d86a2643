//! What the tests of every windowed type share: the wall clock and the span grid they are
//! timed on, the bound after which a write is forgotten, the check that a replica holds its
//! master's values, and the AOF's commands.

use crate::harness::*;
use redis::Connection;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Kept from every timed boundary.
pub const MARGIN: Duration = Duration::from_millis(300);

pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_millis() as u64)
}

pub fn sleep_until(at: Instant) {
    let now = Instant::now();
    if at > now {
        std::thread::sleep(at - now);
    }
}

/// How long after its latest write a value is certainly forgotten: `window (1 + 1/g)`, in
/// whole milliseconds.
pub fn forget_after(window_ms: u64, generations: u64) -> Duration {
    Duration::from_millis(window_ms + window_ms.div_ceil(generations))
}

/// Sleeps until `offset_ms` after the start of the next span of `span_ms` on the grid from the
/// epoch that generations are cut on, so that the writes that follow open a generation of
/// their own and the next rotation is a whole span away.
pub fn wait_for_next_span(span_ms: u64, offset_ms: u64) {
    let now = now_ms();
    let next = now - now % span_ms + span_ms + offset_ms;
    std::thread::sleep(Duration::from_millis(next - now));
}

/// Checks that the replica holds exactly its master's keys: digests read while the master's
/// replication offset stood still (a rotation in between is read again).
pub fn assert_replica_matches(master: &mut Connection, replica: &mut Connection, keys: &[&str]) {
    for _ in 0..50 {
        let offset = master_offset(master);
        let on_master: Vec<String> = keys.iter().map(|key| digest(master, key)).collect();
        wait_in_sync(master, replica);
        let on_replica: Vec<String> = keys.iter().map(|key| digest(replica, key)).collect();
        if master_offset(master) == offset {
            assert_eq!(on_replica, on_master, "digests of {keys:?} on the replica and the master");
            return;
        }
    }
    panic!("the master's replication offset never stood still");
}

/// The server's AOF files, in order, as one byte string.
pub fn aof_bytes(server: &Server) -> Vec<u8> {
    let mut files: Vec<_> = std::fs::read_dir(server.dir().join("appendonlydir"))
        .expect("appendonlydir")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.to_string_lossy().ends_with(".aof"))
        .collect();
    files.sort();
    files.iter().flat_map(|path| std::fs::read(path).expect("AOF file")).collect()
}
