//! A storm of logins during a load run (`tengen load --login-storm N`): N accounts are
//! registered before play, then all N log in at once while the games play, so the
//! report shows whether password hashing stalls the games, and how many logins per
//! second the server answers.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

use super::LoadError;

/// The storm accounts' password.
const PASSWORD: &str = "storm of logins 2026";
/// Registrations in flight at once while preparing.
const PREPARE_CONCURRENCY: usize = 8;
/// How long one HTTP exchange may take.
const EXCHANGE_LIMIT: Duration = Duration::from_secs(60);

/// What the storm measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StormReport {
    pub logins: u32,
    pub ok: u32,
    pub failed: u32,
    /// From the first request sent to the last answer.
    pub secs: f64,
    pub logins_per_sec: f64,
}

/// The storm's usernames for one run.
pub fn usernames(run_id: &str, n: u32) -> Vec<String> {
    let tag: String = run_id.chars().rev().take(8).collect();
    (0..n).map(|i| format!("st{tag}-{i}")).collect()
}

/// One POST with a JSON body; the status code.
async fn post(server: SocketAddr, path: &str, body: &str) -> Result<u16, LoadError> {
    let exchange = async {
        let mut s = tokio::net::TcpStream::connect(server).await?;
        let req = format!(
            "POST {path} HTTP/1.1\r\nHost: {server}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).await?;
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).await?;
        std::io::Result::Ok(raw)
    };
    let raw = tokio::time::timeout(EXCHANGE_LIMIT, exchange)
        .await
        .map_err(|_| LoadError::Worker(format!("POST {path} took over {EXCHANGE_LIMIT:?}")))?
        .map_err(|e| LoadError::Worker(format!("POST {path}: {e}")))?;
    let text = String::from_utf8_lossy(&raw);
    text.split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| LoadError::Worker(format!("POST {path}: no HTTP status in the answer")))
}

fn credentials(name: &str) -> String {
    serde_json::json!({"username": name, "password": PASSWORD}).to_string()
}

/// Registers the storm's accounts (the server must allow that many registrations per
/// hour from this address: `--set auth.registrations_per_hour=...`).
pub async fn prepare(server: SocketAddr, names: &[String]) -> Result<(), LoadError> {
    let permits = Arc::new(Semaphore::new(PREPARE_CONCURRENCY));
    let mut tasks = Vec::new();
    for name in names {
        let permits = permits.clone();
        let body = credentials(name);
        tasks.push(tokio::spawn(async move {
            let _permit = permits.acquire_owned().await;
            post(server, "/api/auth/register", &body).await
        }));
    }
    for task in tasks {
        let status = task.await.map_err(|e| LoadError::Worker(e.to_string()))??;
        if status != 201 {
            return Err(LoadError::Worker(format!(
                "registering a storm account answered {status}; is auth.registrations_per_hour high enough?"
            )));
        }
    }
    Ok(())
}

/// Every account logs in at once.
pub async fn run(server: SocketAddr, names: &[String]) -> StormReport {
    let started = Instant::now();
    let tasks: Vec<_> = names
        .iter()
        .map(|name| {
            let body = credentials(name);
            tokio::spawn(async move { post(server, "/api/auth/login", &body).await })
        })
        .collect();
    let mut ok = 0;
    for task in tasks {
        if let Ok(Ok(200)) = task.await {
            ok += 1;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let logins = names.len() as u32;
    StormReport {
        logins,
        ok,
        failed: logins - ok,
        secs: (secs * 100.0).round() / 100.0,
        logins_per_sec: (f64::from(ok) / secs.max(1e-9) * 10.0).round() / 10.0,
    }
}
