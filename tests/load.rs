//! `tengen load` end to end, small and fast: a few games with spectators against a real
//! server (and against the baseline fan-out server), every move delivered, in order.

mod common;

use common::TestServer;
use serde_json::Value;

/// Runs the `tengen load` binary with `args` and returns its JSON report.
async fn load(args: &[&str]) -> Value {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_tengen"))
        .arg("load")
        .args(args)
        .args([
            "--games",
            "3",
            "--spectators",
            "2",
            "--duration",
            "3",
            "--move-interval",
            "100",
            "--settle",
            "0",
            "--json",
        ])
        .kill_on_drop(true)
        .output()
        .await
        .expect("tengen load runs");
    assert!(
        out.status.success(),
        "tengen load failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("a JSON report")
}

fn check(report: &Value) {
    assert_eq!(report["setup"]["connections"], 12, "{report:#}");
    assert_eq!(report["setup"]["failed"], 0, "{report:#}");
    assert_eq!(report["error_total"], 0, "{report:#}");
    assert_eq!(report["violation_total"], 0, "{report:#}");
    assert_eq!(report["unmatched"], 0, "{report:#}");
    let moves = report["moves"].as_u64().expect("moves");
    // Three games at ten moves a second for three seconds; slack for a slow machine.
    assert!(moves >= 30, "{report:#}");
    // Each move reaches both players and both spectators.
    assert_eq!(report["deliveries"].as_u64(), Some(moves * 4), "{report:#}");
    assert_eq!(
        report["move_to_spectator"]["count"].as_u64(),
        Some(moves * 2),
        "{report:#}"
    );
    assert!(report["move_to_spectator"]["p99_ms"].as_f64() > Some(0.0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_load_against_tengen_delivers_every_move_in_order() {
    let server = TestServer::start().await;
    let data = server.dir.path().to_str().expect("utf-8 path").to_string();
    let report = load(&["--url", &server.url, "--data", &data]).await;
    check(&report);
    assert_eq!(report["protocol"], "tengen");
    // The server is this test process, found by its port.
    assert_eq!(report["server"]["pid"], std::process::id());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_load_runs_against_the_baseline() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("ws://{}/ws", listener.local_addr().expect("addr"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(tengen::load::baseline::serve(listener, async {
        let _ = stopped.await;
    }));
    let report = load(&["--url", &url, "--baseline"]).await;
    check(&report);
    assert_eq!(report["protocol"], "baseline");
    let _ = stop.send(());
    serving.await.expect("the baseline stops");
}
