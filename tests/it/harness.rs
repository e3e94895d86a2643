//! A real redis-server per test: a free loopback port, a temporary directory, the freshly
//! built module loaded, stopped and removed when the test ends.

use redis::{Connection, ProtocolVersion, Value};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

pub fn module_path() -> PathBuf {
    existing_file("REDBLOOM_MODULE", "target/release/libredbloom.so", "build it first (make test does)")
}

/// The file the environment variable `variable` names, else `default` under the repository;
/// it must exist, or the test stops saying how to get it.
fn existing_file(variable: &str, default: &str, remedy: &str) -> PathBuf {
    let path = std::env::var_os(variable)
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(default), PathBuf::from);
    assert!(path.exists(), "{} is missing: {remedy}", path.display());
    path
}

fn redis_server() -> String {
    std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_string())
}

pub struct Server {
    pub port: u16,
    module: PathBuf,
    dir: PathBuf,
    module_args: Vec<String>,
    config: Vec<String>,
    /// A redis.conf in the server's directory, which CONFIG REWRITE writes back.
    config_file: Option<PathBuf>,
    child: Option<Child>,
}

impl Server {
    pub fn start() -> Server {
        Server::start_with(&[], &[])
    }

    /// `module_args` follow the module's path on the loadmodule line; `config` are extra
    /// `--name value` pairs for redis-server.
    pub fn start_with(module_args: &[&str], config: &[&str]) -> Server {
        Server::start_module(module_path(), module_args, config)
    }

    /// A server with another module, for benchmarks that compare.
    pub fn start_module(module: PathBuf, module_args: &[&str], config: &[&str]) -> Server {
        let mut server = Server::prepared(module, module_args, config);
        server.launch();
        server
    }

    /// A server with no module loaded, for tests that load one themselves.
    pub fn start_bare() -> Server {
        Server::start_module(PathBuf::new(), &[], &[])
    }

    /// A server with the real RedisBloom loaded instead of this module.
    pub fn start_redisbloom(config: &[&str]) -> Server {
        Server::start_module(redisbloom_path(), &[], config)
    }

    /// A server not started yet, so that data files can be put in its directory first;
    /// [`launch`](Self::launch) starts it.
    pub fn prepared(module: PathBuf, module_args: &[&str], config: &[&str]) -> Server {
        let mut server = Server::start_or_fail(module_args);
        server.module = module;
        server.config = config.iter().map(std::string::ToString::to_string).collect();
        server
    }

    /// A server started with a redis.conf of these lines (and the module on the command line),
    /// so that CONFIG REWRITE has a file to write.
    pub fn start_with_config_file(lines: &str) -> Server {
        let mut server = Server::start_or_fail(&[]);
        let file = server.dir.join("redis.conf");
        std::fs::write(&file, lines).expect("writing redis.conf");
        server.config_file = Some(file);
        server.launch();
        server
    }

    /// The server's redis.conf, as CONFIG REWRITE left it.
    pub fn config_file(&self) -> String {
        self.config_file
            .as_ref()
            .map(|file| std::fs::read_to_string(file).unwrap_or_default())
            .unwrap_or_default()
    }

    /// Copies a file or a directory (the AOF's) from another server's directory into this one.
    pub fn take_file(&self, from: &Server, name: &str) {
        copy_tree(&from.dir.join(name), &self.dir.join(name));
    }

    /// Tries to start with these module arguments, expecting the module to refuse them;
    /// answers the server's log.
    pub fn failing_to_start(module_args: &[&str]) -> String {
        Server::start_or_fail(module_args).run_until_exit()
    }

    /// Starts a server that is expected to stop by itself (it refuses its module arguments
    /// or its data); answers its log.
    pub fn run_until_exit(&mut self) -> String {
        let mut child = self.spawn();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("the server started; its log:\n{}", self.log());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.port = 0;
        self.log()
    }

    fn start_or_fail(module_args: &[&str]) -> Server {
        let dir = std::env::temp_dir().join(format!(
            "redbloom-test-{}-{}",
            std::process::id(),
            NEXT_DIR.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temporary directory");
        Server {
            port: free_port(),
            module: module_path(),
            dir,
            module_args: module_args.iter().map(std::string::ToString::to_string).collect(),
            config: Vec::new(),
            config_file: None,
            child: None,
        }
    }

    /// Starts redis-server; a port taken in between is retried with another.
    pub fn launch(&mut self) {
        for _ in 0..5 {
            let child = self.spawn();
            self.child = Some(child);
            if self.wait_ready() {
                return;
            }
            self.kill();
            if !self.log().contains("Address already in use") {
                break;
            }
            self.port = free_port();
        }
        panic!("redis-server did not start; its log:\n{}", self.log());
    }

    fn spawn(&self) -> Child {
        let mut command = Command::new(redis_server());
        command.args(&self.config_file);
        command
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .arg("--dir")
            .arg(&self.dir)
            .args(["--logfile", "redis.log", "--save", "", "--daemonize", "no"])
            .args(["--enable-debug-command", "yes", "--enable-module-command", "yes"]);
        if !self.module.as_os_str().is_empty() {
            command.arg("--loadmodule").arg(&self.module).args(&self.module_args);
        }
        command.args(&self.config).stdout(Stdio::null()).stderr(Stdio::null());
        command.spawn().expect("redis-server could not be run: is it installed? (make test installs it)")
    }

    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(_)) = child.try_wait() {
                    return false;
                }
            }
            if let Ok(mut con) = self.try_connection(ProtocolVersion::RESP2) {
                if redis::cmd("PING").query::<String>(&mut con).is_ok() {
                    return true;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    fn try_connection(&self, protocol: ProtocolVersion) -> redis::RedisResult<Connection> {
        let suffix = if protocol == ProtocolVersion::RESP3 { "/?protocol=resp3" } else { "" };
        redis::Client::open(format!("redis://127.0.0.1:{}{suffix}", self.port))?.get_connection()
    }

    pub fn connection(&self) -> Connection {
        self.try_connection(ProtocolVersion::RESP2).expect("connect")
    }

    pub fn connection_resp3(&self) -> Connection {
        self.try_connection(ProtocolVersion::RESP3).expect("connect with RESP3")
    }

    /// Both protocols, for tests that must hold under each.
    pub fn connections(&self) -> [(ProtocolVersion, Connection); 2] {
        [(ProtocolVersion::RESP2, self.connection()), (ProtocolVersion::RESP3, self.connection_resp3())]
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("redis.log")).unwrap_or_default()
    }

    /// Stops the server the hard way: nothing is saved on the way out.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops the server (SHUTDOWN NOSAVE, so only what was persisted before survives) and
    /// starts it again on the same port and directory.
    pub fn restart(&mut self) {
        if let Ok(mut con) = self.try_connection(ProtocolVersion::RESP2) {
            let _: redis::RedisResult<Value> = redis::cmd("SHUTDOWN").arg("NOSAVE").query(&mut con);
        }
        if let Some(mut child) = self.child.take() {
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        self.child = Some(self.spawn());
        assert!(self.wait_ready(), "redis-server did not restart; its log:\n{}", self.log());
    }

    /// Restarts with other loadmodule arguments (other defaults, say).
    pub fn restart_with_module_args(&mut self, module_args: &[&str]) {
        self.module_args = module_args.iter().map(std::string::ToString::to_string).collect();
        self.restart();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            eprintln!("server directory kept for inspection: {}", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).expect("directory");
        for entry in std::fs::read_dir(from).expect("readable directory") {
            let entry = entry.expect("directory entry");
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap_or_else(|error| panic!("copying {}: {error}", from.display()));
    }
}

/// The official RedisBloom binary the tests compare with (`make peers` fetches it).
pub fn redisbloom_path() -> PathBuf {
    existing_file(
        "REDISBLOOM_PATH",
        "target/peers/redisbloom-2.8.2.so",
        "`make peers` fetches it (make test does)",
    )
}

/// Redis's DUMP checksum: CRC-64/Jones, reflected, initial value 0.
pub fn crc64(data: &[u8]) -> u64 {
    let mut crc = 0u64;
    for &byte in data {
        crc ^= u64::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0x95AC_9329_AC4B_C9B5 } else { crc >> 1 };
        }
    }
    crc
}

/// A payload with its trailing checksum recomputed, so that RESTORE hands it to the module.
pub fn with_valid_checksum(mut payload: Vec<u8>) -> Vec<u8> {
    let body = payload.len() - 8;
    let crc = crc64(&payload[..body]);
    payload[body..].copy_from_slice(&crc.to_le_bytes());
    payload
}

/// The bytes of a bulk-string reply.
pub fn bulk(value: Value) -> Vec<u8> {
    match value {
        Value::BulkString(bytes) => bytes,
        other => panic!("expected a bulk string, got {other:?}"),
    }
}

/// A key's DUMP payload.
pub fn dump_payload(con: &mut Connection, key: &str) -> Vec<u8> {
    bulk(ok(con, &["DUMP", key]))
}

/// A filter's SCANDUMP stream: the (iterator, data) pairs before the final `[0, ""]`.
pub fn scandump(con: &mut Connection, key: &str) -> Vec<(i64, Vec<u8>)> {
    let mut pairs = Vec::new();
    let mut iterator = 0i64;
    loop {
        let reply = ok(con, &["BF.SCANDUMP", key, &iterator.to_string()]);
        let Value::Array(parts) = reply else { panic!("SCANDUMP answered {reply:?}") };
        let mut parts = parts.into_iter();
        let (Some(Value::Int(next)), Some(data)) = (parts.next(), parts.next()) else {
            panic!("SCANDUMP shape")
        };
        let data = bulk(data);
        if next == 0 {
            assert!(data.is_empty(), "the end of a SCANDUMP carries no data");
            return pairs;
        }
        pairs.push((next, data));
        iterator = next;
    }
}

/// Replays a SCANDUMP stream with BF.LOADCHUNK.
pub fn loadchunks(con: &mut Connection, key: &str, pairs: &[(i64, Vec<u8>)]) {
    for (iterator, data) in pairs {
        call_bytes(con, &[b"BF.LOADCHUNK", key.as_bytes(), iterator.to_string().as_bytes(), data])
            .unwrap_or_else(|error| panic!("LOADCHUNK {key} {iterator}: {error}"));
    }
}

pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("port").port()
}

/// Runs a command; a server error becomes its exact text (`"ERR bad error rate"`).
pub fn call(con: &mut Connection, args: &[&str]) -> Result<Value, String> {
    let mut command = redis::cmd(args[0]);
    for arg in &args[1..] {
        command.arg(*arg);
    }
    run(con, &command)
}

pub fn call_bytes(con: &mut Connection, args: &[&[u8]]) -> Result<Value, String> {
    let mut command = redis::Cmd::new();
    for arg in args {
        command.arg(*arg);
    }
    run(con, &command)
}

fn run(con: &mut Connection, command: &redis::Cmd) -> Result<Value, String> {
    use redis::ConnectionLike;
    // req_command keeps errors nested in arrays as values, where the full-filter error of
    // BF.MADD lives; a top-level error is mapped to its text either way.
    match con.req_command(command) {
        Ok(Value::ServerError(error)) => Err(server_error_text(&error)),
        Ok(value) => Ok(value),
        Err(error) => Err(error_text(&error)),
    }
}

pub fn server_error_text(error: &redis::ServerError) -> String {
    match error.details() {
        Some(details) => format!("{} {}", error.code(), details),
        None => error.code().to_string(),
    }
}

pub fn error_text(error: &redis::RedisError) -> String {
    match (error.code(), error.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        (Some(code), None) => code.to_string(),
        _ => error.to_string(),
    }
}

/// Runs a command that must succeed.
pub fn ok(con: &mut Connection, args: &[&str]) -> Value {
    call(con, args).unwrap_or_else(|error| panic!("{args:?} failed: {error}"))
}

/// Runs a command that must fail, and answers its error text.
pub fn err(con: &mut Connection, args: &[&str]) -> String {
    match call(con, args) {
        Ok(value) => panic!("{args:?} should have failed, answered {value:?}"),
        Err(error) => error,
    }
}

pub fn simple(text: &str) -> Value {
    Value::SimpleString(text.to_string())
}

pub fn int(con: &mut Connection, args: &[&str]) -> i64 {
    match ok(con, args) {
        Value::Int(n) => n,
        Value::Boolean(b) => i64::from(b),
        other => panic!("{args:?}: expected an integer, got {other:?}"),
    }
}

/// Every key of the database, sorted.
pub fn keys(con: &mut Connection) -> Vec<String> {
    let Value::Array(keys) = ok(con, &["KEYS", "*"]) else { panic!("KEYS") };
    let mut keys: Vec<String> = keys.into_iter().map(|key| String::from_utf8(bulk(key)).unwrap()).collect();
    keys.sort();
    keys
}

pub fn digest(con: &mut Connection, key: &str) -> String {
    match ok(con, &["DEBUG", "DIGEST-VALUE", key]) {
        Value::Array(items) if items.len() == 1 => match &items[0] {
            Value::BulkString(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            Value::SimpleString(text) => text.clone(),
            other => panic!("digest: {other:?}"),
        },
        other => panic!("digest: {other:?}"),
    }
}

/// The boolean an ADD or EXISTS answered, under either protocol, checking the protocol's
/// type: an integer under RESP2, a boolean under RESP3.
pub fn as_bool(value: &Value, protocol: ProtocolVersion) -> bool {
    let resp3 = protocol == ProtocolVersion::RESP3;
    match value {
        Value::Int(n) if !resp3 && (*n == 0 || *n == 1) => *n == 1,
        Value::Boolean(b) if resp3 => *b,
        other => panic!("expected a boolean reply under {protocol:?}, got {other:?}"),
    }
}

/// `command key item...` for many items, 1000 a call; answers every item's reply.
pub fn answers(con: &mut Connection, command: &str, key: &str, items: &[Vec<u8>]) -> Vec<Value> {
    let mut replies = Vec::new();
    for batch in items.chunks(1000) {
        let mut args: Vec<&[u8]> = vec![command.as_bytes(), key.as_bytes()];
        args.extend(batch.iter().map(Vec::as_slice));
        match call_bytes(con, &args) {
            Ok(Value::Array(values)) => replies.extend(values),
            other => panic!("{command} {key}: {other:?}"),
        }
    }
    replies
}

/// Sends `command key item...` for all items, 500 per command, pipelined; answers how many
/// item replies were 1 (or true).
fn count_ones(con: &mut Connection, command: &str, key: &str, items: impl Iterator<Item = String>) -> u64 {
    let items: Vec<String> = items.collect();
    let mut ones = 0;
    for batch in items.chunks(10_000) {
        let mut pipe = redis::pipe();
        for group in batch.chunks(500) {
            pipe.cmd(command).arg(key).arg(group);
        }
        let replies: Vec<Vec<Value>> = pipe.query(con).unwrap_or_else(|error| panic!("{command}: {error}"));
        for reply in replies.iter().flatten() {
            match reply {
                Value::Int(1) | Value::Boolean(true) => ones += 1,
                Value::Int(0) | Value::Boolean(false) => {}
                other => panic!("{command} answered {other:?}"),
            }
        }
    }
    ones
}

/// Adds items with BF.MADD; answers how many were new.
pub fn madd_all(con: &mut Connection, key: &str, items: impl Iterator<Item = String>) -> u64 {
    count_ones(con, "BF.MADD", key, items)
}

/// How many of `items` BF.MEXISTS finds.
pub fn count_present(con: &mut Connection, key: &str, items: impl Iterator<Item = String>) -> u64 {
    count_ones(con, "BF.MEXISTS", key, items)
}

/// `count` items, `prefix` followed by a number.
pub fn numbered(prefix: &str, count: usize) -> Vec<Vec<u8>> {
    (0..count).map(|n| format!("{prefix}{n}").into_bytes()).collect()
}

/// A small, seeded generator; the seed is printed so that a failing run can be replayed.
pub struct Random(u64);

impl Random {
    pub fn seeded() -> Random {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos());
        let seed =
            std::env::var("REDBLOOM_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(nanos as u64 | 1);
        eprintln!("seed {seed} (REDBLOOM_SEED={seed} replays it)");
        Random(seed)
    }

    /// xorshift64: a number below `bound`.
    pub fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound.max(1) as u64) as usize
    }

    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.below(256) as u8).collect()
    }
}

/// An INFO section's text, under either protocol.
pub fn info_text(con: &mut Connection, section: &str) -> String {
    match ok(con, &["INFO", section]) {
        Value::BulkString(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Value::VerbatimString { text, .. } => text,
        other => panic!("INFO {section}: {other:?}"),
    }
}

/// A field of an INFO section.
pub fn info_field(con: &mut Connection, section: &str, name: &str) -> Option<String> {
    let info = info_text(con, section);
    info.lines().find_map(|line| line.strip_prefix(&format!("{name}:")).map(|v| v.trim().to_string()))
}

/// Waits until no AOF rewrite is running or scheduled, so that the AOF files can be read or
/// copied.
pub fn wait_for_rewrite(con: &mut Connection) {
    let deadline = Instant::now() + Duration::from_mins(1);
    loop {
        let info = info_text(con, "persistence");
        if info.contains("aof_rewrite_in_progress:0") && info.contains("aof_rewrite_scheduled:0") {
            return;
        }
        assert!(Instant::now() < deadline, "the AOF rewrite did not finish");
        std::thread::sleep(Duration::from_millis(10));
    }
}

pub fn master_offset(con: &mut Connection) -> i64 {
    info_field(con, "replication", "master_repl_offset").unwrap().parse().unwrap()
}

/// Waits until the replica is linked and has processed everything the master sent.
pub fn wait_in_sync(master: &mut Connection, replica: &mut Connection) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let target = master_offset(master);
        let linked = info_field(replica, "replication", "master_link_status").as_deref() == Some("up");
        let offset: i64 = info_field(replica, "replication", "slave_repl_offset")
            .and_then(|v| v.parse().ok())
            .unwrap_or(-1);
        if linked && offset >= target {
            return;
        }
        assert!(Instant::now() < deadline, "replica did not catch up ({offset} of {target})");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The client's clock, in milliseconds since the epoch: the one the servers of the tests read.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_millis() as u64)
}

pub fn sleep_until(at: Instant) {
    std::thread::sleep(at.saturating_duration_since(Instant::now()));
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

/// The server's AOF files (base and increments), in order, as one byte string.
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
