//! Running a browser scenario of `tests/browser/` against a server the test started:
//! Debian's Chromium (or `CHROMIUM`), the pinned `playwright-core` installed from the lock
//! file when missing, one browser at a time, a time limit, and the screenshots it must
//! leave. Included by every browser test; `tests/web.rs` adds restarting the server.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Chromium from Debian's package; `CHROMIUM` points elsewhere.
const CHROMIUM: &str = "/usr/bin/chromium";
/// A scenario takes well under a minute; this bounds a hung browser.
pub const LIMIT: Duration = Duration::from_secs(240);

/// One Chromium at a time: the machine is small.
static BROWSER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Where the screenshots go.
pub fn artifacts() -> PathBuf {
    root().join("target/browser-artifacts")
}

/// Installs the pinned `playwright-core` from the lock file when it is missing.
fn install_playwright(dir: &Path) {
    if dir
        .join("node_modules/playwright-core/package.json")
        .exists()
    {
        return;
    }
    let status = std::process::Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(dir)
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run `npm ci` in {} (is Node.js installed?): {e}",
                dir.display()
            )
        });
    assert!(status.success(), "`npm ci` in {} failed", dir.display());
}

/// What every scenario run holds: the one-browser lock, Chromium's path, the scenario
/// directory with `playwright-core` installed, the artifacts directory and the start.
pub struct Setup {
    _one: tokio::sync::MutexGuard<'static, ()>,
    chromium: String,
    dir: PathBuf,
    artifacts: PathBuf,
    started: Instant,
}

/// Waits for the browser, then checks Chromium and installs what the scenarios need.
pub async fn setup() -> Setup {
    let one = BROWSER.lock().await;
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| CHROMIUM.to_string());
    assert!(
        Path::new(&chromium).exists(),
        "the browser test needs Chromium at {chromium}: install it with `apt-get install -y chromium` (or set CHROMIUM)"
    );
    let dir = root().join("tests/browser");
    install_playwright(&dir);
    let artifacts = artifacts();
    std::fs::create_dir_all(&artifacts).expect("artifacts dir");
    Setup {
        _one: one,
        chromium,
        dir,
        artifacts,
        started: Instant::now(),
    }
}

impl Setup {
    /// `node <script> <url>` in the scenario directory, told where Chromium and the
    /// artifacts are, killed if dropped.
    pub fn command(&self, script: &str, url: &str) -> tokio::process::Command {
        let mut node = tokio::process::Command::new("node");
        node.arg(self.dir.join(script))
            .arg(url)
            .env("CHROMIUM", &self.chromium)
            .env("TENGEN_ARTIFACTS", &self.artifacts)
            .current_dir(&self.dir)
            .kill_on_drop(true);
        node
    }

    /// The scenario passed and left `shots`.
    pub fn check(&self, script: &str, status: std::process::ExitStatus, shots: &[&str]) {
        assert!(
            status.success(),
            "the browser test {script} failed ({status}) after {:.1?}; screenshots in {}",
            self.started.elapsed(),
            self.artifacts.display()
        );
        for shot in shots {
            assert!(
                self.artifacts.join(shot).exists(),
                "the screenshot {shot} is missing"
            );
        }
    }
}

/// Runs `node tests/browser/<script> <url>`; it must pass and leave `shots`.
pub async fn run_scenario(script: &str, url: &str, shots: &[&str]) {
    run_scenario_with(script, url, shots, &[]).await;
}

/// [`run_scenario`] with more environment for the scenario (say, a token it needs).
pub async fn run_scenario_with(script: &str, url: &str, shots: &[&str], env: &[(&str, String)]) {
    let setup = setup().await;
    let mut child = setup
        .command(script, url)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run `node` (is Node.js installed?): {e}"));
    let status = match tokio::time::timeout(LIMIT, child.wait()).await {
        Ok(status) => status.expect("node runs"),
        Err(_) => panic!("the browser test {script} did not finish within {LIMIT:?}"),
    };
    setup.check(script, status, shots);
}
