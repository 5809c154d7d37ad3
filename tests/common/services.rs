//! The outside services some tests need, PostgreSQL and NATS, found where `tests/run`
//! starts them (or where `TENGEN_TEST_POSTGRES` / `TENGEN_TEST_NATS` point). A missing
//! service fails the test with a message saying how to start it: never a silent skip.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const DEFAULT_POSTGRES: &str = "postgres://postgres:postgres@127.0.0.1:5432/postgres";
const DEFAULT_NATS: &str = "nats://127.0.0.1:4222";

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// `<pid>_<counter>_<random>`: unique across the test binaries running at once and the
/// tests inside each.
fn unique() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{}_{n}_{nanos:x}", std::process::id())
}

/// A prefix for NATS subjects and buckets that no other test uses.
pub fn unique_prefix() -> String {
    format!("t{}", unique())
}

/// The NATS server's URL, after checking that something listens there.
pub fn nats_url() -> String {
    let url = std::env::var("TENGEN_TEST_NATS").unwrap_or_else(|_| DEFAULT_NATS.to_owned());
    let addr = url.trim_start_matches("nats://").to_owned();
    let reachable = std::net::ToSocketAddrs::to_socket_addrs(&addr)
        .ok()
        .and_then(|mut addrs| addrs.next())
        .is_some_and(|a| std::net::TcpStream::connect_timeout(&a, Duration::from_secs(2)).is_ok());
    assert!(
        reachable,
        "NATS is not reachable at {url}: run tests/run, which starts it (or set TENGEN_TEST_NATS)"
    );
    url
}

/// A fresh, empty PostgreSQL database, dropped (best effort) with this value.
pub struct PgDb {
    admin: String,
    name: String,
    url: String,
}

impl PgDb {
    /// The database's URL, for `PgStore::open` or `store.postgres_url`.
    pub fn url(&self) -> &str {
        &self.url
    }
}

/// Creates `tengen_t_<pid>_<counter>_<random>` on the server `TENGEN_TEST_POSTGRES` names.
pub fn postgres_db() -> PgDb {
    let admin =
        std::env::var("TENGEN_TEST_POSTGRES").unwrap_or_else(|_| DEFAULT_POSTGRES.to_owned());
    let name = format!("tengen_t_{}", unique());
    let base = admin
        .rsplit_once('/')
        .map_or(admin.as_str(), |(base, _)| base);
    let url = format!("{base}/{name}");
    if let Err(e) = admin_sql(&admin, format!("CREATE DATABASE {name}")) {
        panic!(
            "PostgreSQL is not reachable or refused to create a database ({e}): run tests/run, which starts it (or set TENGEN_TEST_POSTGRES)"
        );
    }
    PgDb { admin, name, url }
}

impl Drop for PgDb {
    fn drop(&mut self) {
        let _ = admin_sql(
            &self.admin,
            format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

/// Runs one statement on the server's admin database, from a thread of its own so that
/// it works inside and outside a tokio runtime alike.
pub fn admin_sql(admin: &str, sql: String) -> Result<(), String> {
    let admin = admin.to_owned();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
                .await
                .map_err(|e| e.to_string())?;
            tokio::spawn(connection);
            client.batch_execute(&sql).await.map_err(|e| e.to_string())
        })
    })
    .join()
    .map_err(|_| "the admin thread panicked".to_owned())?
}

/// The admin URL, for tests that act on the server itself (ending connections).
pub fn postgres_admin_url() -> String {
    std::env::var("TENGEN_TEST_POSTGRES").unwrap_or_else(|_| DEFAULT_POSTGRES.to_owned())
}

/// A NATS server of one test's own, on a port of its own, that the test can stop and
/// start again (on the same port) to cut its nodes off from each other.
pub struct PrivateNats {
    port: u16,
    child: Option<std::process::Child>,
}

impl PrivateNats {
    pub fn start() -> PrivateNats {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut nats = PrivateNats { port, child: None };
        nats.resume();
        nats
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Stops the server: every node loses its connection.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on its port, and waits until it listens.
    pub fn resume(&mut self) {
        let bin = [
            "nats-server",
            "/usr/sbin/nats-server",
            "/usr/bin/nats-server",
        ]
        .into_iter()
        .find(|b| {
            std::process::Command::new(b)
                .arg("--version")
                .output()
                .is_ok()
        })
        .expect("nats-server is installed (tests/run installs it)");
        let child = std::process::Command::new(bin)
            .args(["-a", "127.0.0.1", "-p", &self.port.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("nats-server starts");
        self.child = Some(child);
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], self.port));
        for _ in 0..100 {
            if std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("nats-server does not listen on {addr}");
    }
}

impl Drop for PrivateNats {
    fn drop(&mut self) {
        self.stop();
    }
}
