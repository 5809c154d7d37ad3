//! The real `tengen` binary as a child process, for tests that kill or pause it.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// How many of a child's last log lines are kept, to show when its test fails.
const KEPT_LINES: usize = 300;

/// A `tengen serve` child and the WebSocket URL it announced.
pub struct Running {
    pub child: Child,
    pub url: String,
    /// Its last log lines (info and above).
    log: Arc<Mutex<VecDeque<String>>>,
}

impl Running {
    /// The address the server listens on.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.url
            .trim_start_matches("ws://")
            .trim_end_matches("/ws")
            .parse()
            .expect("the announced address")
    }

    /// SIGKILL, and reaped.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends `signal` (SIGSTOP, SIGCONT, SIGTERM) to the child.
    pub fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on our own child's pid, which we have not reaped.
        let sent = unsafe { libc::kill(self.child.id() as i32, signal) };
        assert_eq!(sent, 0, "signal {signal} sent");
    }
}

impl Drop for Running {
    /// Kills the child; if its test is failing, shows the child's last log lines, so a
    /// failure seen once (on CI, say) can be read from the servers' side too.
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            let log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
            eprintln!("--- the last {} log lines of {} ---", log.len(), self.url);
            log.iter().for_each(|line| eprintln!("{line}"));
        }
    }
}

/// A player's token for the server on data dir `dir` (signed with the secret it keeps
/// there).
pub fn token(dir: &std::path::Path, sub: &str) -> String {
    use tengen::auth::{claims_for, sign};
    let secret = std::fs::read_to_string(dir.join("jwt-secret")).expect("secret");
    let claims = claims_for(sub, None, tengen::protocol::Role::Player, 3600);
    sign(secret.trim().as_bytes(), &claims).expect("token")
}

/// The binary the children run: `TENGEN_TEST_BIN` when set (a release build, for the
/// benchmarks run as ignored tests), else the one cargo built for the tests.
pub fn tengen_bin() -> String {
    std::env::var("TENGEN_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_tengen").to_owned())
}

/// The settings of node `node_id` of a cluster: its store on PostgreSQL at `db_url`, its
/// bus on NATS at `nats_url` under the cluster's `name`, its leases and its secret.
pub fn cluster_env(
    db_url: &str,
    nats_url: &str,
    name: &str,
    node_id: &str,
    lease_ms: u64,
    secret: &str,
) -> Vec<(&'static str, String)> {
    vec![
        ("TENGEN_STORE__BACKEND", "postgres".to_owned()),
        ("TENGEN_STORE__POSTGRES_URL", db_url.to_owned()),
        ("TENGEN_CLUSTER__NATS_URL", nats_url.to_owned()),
        ("TENGEN_CLUSTER__NAME", name.to_owned()),
        ("TENGEN_CLUSTER__NODE_ID", node_id.to_owned()),
        ("TENGEN_CLUSTER__LEASE_MS", lease_ms.to_string()),
        ("TENGEN_AUTH__SECRET", secret.to_owned()),
    ]
}

/// `tengen serve` on port 0 with data dir `dir` and the settings in `env`, its log on
/// a pipe.
fn serve(dir: &std::path::Path, env: &[(&str, String)]) -> Command {
    let mut command = Command::new(tengen_bin());
    // The tests' own settings (TENGEN_TEST_*) are not the server's: its configuration
    // refuses TENGEN_ variables it does not know.
    for (key, _) in std::env::vars().filter(|(k, _)| k.starts_with("TENGEN_TEST_")) {
        command.env_remove(key);
    }
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(dir)
        .env("TENGEN_LOG", "info")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// Runs `tengen serve` as [`spawn`] does, for a server expected to stop by itself:
/// its exit status and its whole log, or None (and killed) if it still runs after
/// `within`.
pub fn run_to_end(
    dir: &std::path::Path,
    env: &[(&str, String)],
    within: Duration,
) -> Option<(std::process::ExitStatus, String)> {
    let mut child = serve(dir, env).spawn().expect("tengen starts");
    let mut stderr = child.stderr.take().expect("stderr");
    let log = std::thread::spawn(move || {
        let mut log = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut log);
        log
    });
    let deadline = std::time::Instant::now() + within;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            _ if std::time::Instant::now() > deadline => break None,
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let log = log.join().unwrap_or_default();
    status.map(|status| (status, log))
}

/// Starts `tengen serve` on port 0 with data dir `dir` and the settings in `env`, and
/// reads the address it announces.
pub fn spawn(dir: &std::path::Path, env: &[(&str, String)]) -> Running {
    let mut child = serve(dir, env).spawn().expect("tengen starts");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    let log = Arc::new(Mutex::new(VecDeque::with_capacity(KEPT_LINES)));
    let kept = log.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(i) = line.find("ws://") {
                let url: String = line[i..]
                    .chars()
                    .take_while(|c| !c.is_whitespace() && *c != '\u{1b}')
                    .collect();
                let _ = tx.send(url);
            }
            let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
            if kept.len() == KEPT_LINES {
                kept.pop_front();
            }
            kept.push_back(line);
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the server announces its address");
    Running { child, url, log }
}
