//! Real `tengen bot` processes driving GNU Go, for the tests that put bots on a server.
//!
//! Needs Debian's `gnugo` at /usr/games/gnugo (`apt-get install gnugo`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tengen::protocol::Role;
use tokio::process::{Child, Command};

use super::TestServer;

pub const GNUGO: &str = "/usr/games/gnugo";

pub fn require_gnugo() {
    assert!(
        Path::new(GNUGO).exists(),
        "GNU Go is missing at {GNUGO}: install it with `apt-get install gnugo` \
         (the README's test command does this)"
    );
}

/// A `tengen bot` child process; killed when dropped, its log printed if the test failed.
pub struct Bot {
    pub child: Child,
    pub log: PathBuf,
}

impl Bot {
    pub fn start(server: &TestServer, url: &str, name: &str, args: &[&str]) -> Bot {
        static STARTED: AtomicUsize = AtomicUsize::new(0);
        let n = STARTED.fetch_add(1, Ordering::Relaxed);
        let log = server.dir.path().join(format!("bot-{name}-{n}.log"));
        let file = std::fs::File::create(&log).expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_tengen"))
            .arg("bot")
            .args(["--server", url])
            .args(args)
            .env("TENGEN_BOT_TOKEN", server.token_as(name, Role::Bot))
            .env("TENGEN_LOG", "info,tengen::bot=debug")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .kill_on_drop(true)
            .spawn()
            .expect("tengen bot starts");
        Bot { child, log }
    }

    pub fn pid(&self) -> u32 {
        self.child.id().expect("running")
    }

    /// Waits for the bot to stop by itself (`--games`) and checks it succeeded.
    pub async fn finishes(&mut self) {
        let status = tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .expect("the bot stops after its games")
            .expect("wait");
        assert!(status.success(), "bot exited with {status}");
    }
}

impl Drop for Bot {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        // The log of a failed test, or of every test with TENGEN_TEST_BOT_LOGS set.
        if std::thread::panicking() || std::env::var_os("TENGEN_TEST_BOT_LOGS").is_some() {
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(80).collect();
            eprintln!("--- {} (last lines) ---", self.log.display());
            for line in tail.into_iter().rev() {
                eprintln!("{line}");
            }
        }
    }
}
