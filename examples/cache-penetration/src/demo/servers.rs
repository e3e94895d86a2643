//! The example's servers, each on a free loopback port with its files in one temporary
//! directory: PostgreSQL (run as an unprivileged user, since it refuses root), Redis with the
//! freshly built redbloom, and the service. Each is stopped when dropped, on failure too, and
//! the directory removed last.

use crate::users::SELECT_USER;
use crate::Error;
use std::ffi::CString;
use std::fs::{self, DirBuilder, File};
use std::net::TcpListener;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Everything the example runs on. Fields drop in this order: the service, then the servers,
/// then the directory.
pub struct Stack {
    service: Option<Service>,
    pub redis: Redis,
    pub postgres: Postgres,
    service_binary: PathBuf,
    _run_dir: RunDir,
}

impl Stack {
    /// PostgreSQL with `rows` users, and Redis; no service yet.
    pub fn start(rows: u64, service_binary: &Path) -> Result<Stack, Error> {
        let run_dir = RunDir::create()?;
        let postgres = Postgres::start(&run_dir.0)?;
        let started = Instant::now();
        seed(&mut postgres.connect()?, rows)?;
        println!("seeded {rows} users in {:.1} s", started.elapsed().as_secs_f64());
        let redis = Redis::start(&run_dir.0)?;
        Ok(Stack {
            service: None,
            redis,
            postgres,
            service_binary: service_binary.to_path_buf(),
            _run_dir: run_dir,
        })
    }

    /// Starts the service (stopping the one running), and waits until it answers: with the
    /// filter on, it builds the filter first if there is none.
    pub fn start_service(&mut self, filter: bool) -> Result<&Service, Error> {
        self.stop_service();
        let mut command = self.service_command(filter);
        let address = format!("127.0.0.1:{}", free_port()?);
        command.env("LISTEN", &address);
        let child = command.spawn().map_err(|error| format!("{}: {error}", self.service_binary.display()))?;
        let mut process = Process { name: "users-service", child, log: None, stop_signal: libc::SIGTERM };
        let mut client = super::client::HttpClient::new(&address);
        process.wait_until_ready(Duration::from_secs(300), || {
            client.get("/metrics").is_ok_and(|reply| reply.status == 200)
        })?;
        Ok(self.service.insert(Service { _process: process, address }))
    }

    pub fn stop_service(&mut self) {
        self.service = None;
    }

    /// `users-service` with the settings of the running stack, for its commands
    /// (`rebuild-filter`) as for serving.
    pub fn service_command(&self, filter: bool) -> Command {
        let mut command = Command::new(&self.service_binary);
        command
            .env("DATABASE_URL", self.postgres.url())
            .env("REDIS_URL", self.redis.url())
            .env("BLOOM_FILTER", if filter { "on" } else { "off" })
            .stdin(Stdio::null());
        command
    }
}

pub struct Service {
    _process: Process,
    pub address: String,
}

/// The JSON the service answers for a user [`seed`] created.
pub fn seeded_user_json(id: u64) -> String {
    format!(r#"{{"id":{id},"name":"user {id}","email":"user{id}@example.com"}}"#)
}

/// Users 1 to `rows`, signed up a minute apart until now.
fn seed(db: &mut postgres::Client, rows: u64) -> Result<(), Error> {
    let rows = i64::try_from(rows)?;
    db.batch_execute("CREATE EXTENSION pg_stat_statements")?;
    db.batch_execute(include_str!("../../schema.sql"))?;
    db.execute(
        "INSERT INTO users (id, name, email, created_at) \
         SELECT i, 'user ' || i, 'user' || i || '@example.com', now() - ($1 - i) * interval '1 minute' \
         FROM generate_series(1, $1::bigint) AS i",
        &[&rows],
    )?;
    // New users get the IDs after the seeded ones.
    db.execute("SELECT setval(pg_get_serial_sequence('users', 'id'), $1)", &[&rows.max(1)])?;
    db.batch_execute("VACUUM ANALYZE users")?;
    Ok(())
}

pub struct Postgres {
    _process: Process,
    port: u16,
}

impl Postgres {
    fn start(run_dir: &Path) -> Result<Postgres, Error> {
        let bin = postgres_bin_dir()?;
        let data = run_dir.join("postgres");
        DirBuilder::new().mode(0o700).create(&data)?;
        let owner = unprivileged_owner()?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&data, Some(uid), Some(gid))?;
        }
        let log_path = run_dir.join("postgres.log");
        let log = File::create(&log_path)?;
        let initdb = as_owner(owner, &bin.join("initdb"))
            .arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "--auth=trust", "--no-locale", "--encoding=UTF8", "--no-sync"])
            .current_dir(run_dir)
            .stdout(log.try_clone()?)
            .stderr(log.try_clone()?)
            .status()?;
        if !initdb.success() {
            return Err(format!("initdb failed:\n{}", log_tail(&log_path)).into());
        }
        let port = free_port()?;
        // A throwaway database: durability would only slow the seeding.
        let child = as_owner(owner, &bin.join("postgres"))
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string(), "-c", "listen_addresses=127.0.0.1", "-k"])
            .arg(&data)
            .args(["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
            .args(["-c", "shared_preload_libraries=pg_stat_statements"])
            .current_dir(run_dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?;
        // SIGINT is PostgreSQL's fast shutdown.
        let mut process = Process { name: "postgres", child, log: Some(log_path), stop_signal: libc::SIGINT };
        let url = postgres_url(port);
        process.wait_until_ready(Duration::from_secs(60), || {
            postgres::Client::connect(&url, postgres::NoTls).is_ok()
        })?;
        Ok(Postgres { _process: process, port })
    }

    pub fn url(&self) -> String {
        postgres_url(self.port)
    }

    pub fn connect(&self) -> Result<postgres::Client, Error> {
        Ok(postgres::Client::connect(&self.url(), postgres::NoTls)?)
    }
}

/// How many lookups the database itself has run, whoever asked, from pg_stat_statements
/// (updated as each query ends).
pub fn database_lookups(db: &mut postgres::Client) -> Result<u64, Error> {
    let row = db.query_one(
        "SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements WHERE query = $1",
        &[&SELECT_USER],
    )?;
    Ok(u64::try_from(row.try_get::<_, i64>(0)?)?)
}

pub struct Redis {
    _process: Process,
    port: u16,
}

impl Redis {
    fn start(run_dir: &Path) -> Result<Redis, Error> {
        let module = module_path()?;
        let dir = run_dir.join("redis");
        fs::create_dir(&dir)?;
        let log_path = run_dir.join("redis.log");
        let log = File::create(&log_path)?;
        let port = free_port()?;
        let server = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_string());
        let child = Command::new(&server)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .arg("--loadmodule")
            .arg(&module)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .map_err(|error| format!("{server}: {error}"))?;
        let mut process =
            Process { name: "redis-server", child, log: Some(log_path), stop_signal: libc::SIGTERM };
        let url = redis_url(port);
        process.wait_until_ready(Duration::from_secs(30), || {
            let ping = |url: &str| {
                redis::cmd("PING").query::<String>(&mut redis::Client::open(url)?.get_connection()?)
            };
            ping(&url).is_ok()
        })?;
        Ok(Redis { _process: process, port })
    }

    pub fn url(&self) -> String {
        redis_url(self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn connect(&self) -> Result<redis::Connection, Error> {
        Ok(redis::Client::open(self.url().as_str())?.get_connection()?)
    }
}

fn postgres_url(port: u16) -> String {
    format!("postgresql://postgres@127.0.0.1:{port}/postgres")
}

fn redis_url(port: u16) -> String {
    format!("redis://127.0.0.1:{port}/")
}

/// A server process, stopped with its own shutdown signal when dropped (killed if it takes
/// longer than ten seconds).
struct Process {
    name: &'static str,
    child: Child,
    log: Option<PathBuf>,
    stop_signal: libc::c_int,
}

impl Process {
    fn wait_until_ready(&mut self, timeout: Duration, mut ready: impl FnMut() -> bool) -> Result<(), Error> {
        let deadline = Instant::now() + timeout;
        loop {
            if ready() {
                return Ok(());
            }
            if let Some(status) = self.child.try_wait()? {
                return Err(format!(
                    "{} exited ({status}) before it was ready:\n{}",
                    self.name,
                    self.log_text()
                )
                .into());
            }
            if Instant::now() > deadline {
                return Err(
                    format!("{} was not ready after {timeout:?}:\n{}", self.name, self.log_text()).into()
                );
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    fn log_text(&self) -> String {
        self.log.as_deref().map(log_tail).unwrap_or_default()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Ok(pid) = libc::pid_t::try_from(self.child.id()) {
            // SAFETY: signals a child of ours, which we have not waited for yet.
            unsafe { libc::kill(pid, self.stop_signal) };
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct RunDir(PathBuf);

impl RunDir {
    fn create() -> Result<RunDir, Error> {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH)?.as_nanos();
        let path = std::env::temp_dir().join(format!("cache-penetration-{}-{nanos}", std::process::id()));
        // Readable by PostgreSQL's user, which owns the data directory inside.
        DirBuilder::new().mode(0o755).create(&path)?;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755))?;
        Ok(RunDir(path))
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

pub fn free_port() -> Result<u16, Error> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// `PG_BIN`, else the newest of Debian's /usr/lib/postgresql/<version>/bin.
fn postgres_bin_dir() -> Result<PathBuf, Error> {
    if let Some(dir) = std::env::var_os("PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let newest = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            Some((entry.file_name().to_str()?.parse::<u32>().ok()?, entry.path().join("bin")))
        })
        .filter(|(_, bin)| bin.join("postgres").exists())
        .max();
    newest
        .map(|(_, bin)| bin)
        .ok_or_else(|| "no /usr/lib/postgresql/*/bin: install postgresql (make deps)".into())
}

/// As root, PostgreSQL runs as the `postgres` user Debian's package creates: its uid and gid.
fn unprivileged_owner() -> Result<Option<(u32, u32)>, Error> {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let name = CString::new("postgres")?;
    // SAFETY: a valid C string; the entry is read at once, before any other getpw* call.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    if entry.is_null() {
        return Err("running as root, and there is no postgres user to run PostgreSQL as".into());
    }
    // SAFETY: not null, so it points at a passwd entry.
    let (uid, gid) = unsafe { ((*entry).pw_uid, (*entry).pw_gid) };
    Ok(Some((uid, gid)))
}

fn as_owner(owner: Option<(u32, u32)>, program: &Path) -> Command {
    match owner {
        Some((uid, gid)) => {
            let mut command = Command::new("setpriv");
            command
                .arg(format!("--reuid={uid}"))
                .arg(format!("--regid={gid}"))
                .arg("--clear-groups")
                .arg(program);
            command
        }
        None => Command::new(program),
    }
}

/// `REDBLOOM_MODULE` (which the Makefile sets), else the repository's release build.
fn module_path() -> Result<PathBuf, Error> {
    let path = std::env::var_os("REDBLOOM_MODULE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release/libredbloom.so"));
    if !path.exists() {
        return Err(format!("{} is missing: build the module first (make build)", path.display()).into());
    }
    Ok(path)
}

fn log_tail(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}
