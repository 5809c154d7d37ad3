//! The accept loop: each TCP connection takes a place among the plain HTTP connections
//! (`http.max_connections` in all, `http.max_connections_per_address` from one address,
//! trusted proxies excepted) or is answered 503 and closed at once, and is then served
//! by hyper under the deadlines of [`super::deadline`]. A connection upgraded to a
//! WebSocket gives its place back. On shutdown the loop stops accepting, and idle
//! connections are closed while requests under way are answered.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::extract::Request;
use hyper::body::{Body as _, Incoming};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tower::ServiceExt;

use super::deadline::{ConnState, TimedBody, Timeouts, Watched};
use super::limits::{AddressKey, Counted, PerAddress};
use super::peer::Peers;
use crate::config::HttpConfig;

/// What a connection over the caps is told before it is closed.
const FULL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 5\r\nContent-Length: 0\r\n\r\n";
/// How long the loop rests after an accept error that is not the connection's own (out
/// of file descriptors, say), and how often such an error is logged at most.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);
const ACCEPT_ERROR_LOG: Duration = Duration::from_secs(10);

/// The places of plain HTTP connections.
struct Places {
    all: Arc<Counted<()>>,
    per_address: Arc<PerAddress>,
    max: usize,
    max_per_address: usize,
}

/// Serves `app` on `listener` until `stop` turns true, then waits for the connections
/// that are still plain HTTP to finish.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    http: &HttpConfig,
    peers: Arc<Peers>,
    mut stop: watch::Receiver<bool>,
) {
    let places = Places {
        all: Arc::default(),
        per_address: Arc::default(),
        max: http.max_connections,
        max_per_address: http.max_connections_per_address,
    };
    let timeouts = Timeouts::of(http);
    // Each connection's task holds a receiver; the sender sees them all gone.
    let (closed_tx, closed_rx) = watch::channel(());
    let mut last_error_log: Option<Instant> = None;
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|s| *s) => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                if !is_connection_error(&e) {
                    if last_error_log.is_none_or(|at| at.elapsed() >= ACCEPT_ERROR_LOG) {
                        last_error_log = Some(Instant::now());
                        tracing::error!(error = %e, "cannot accept connections");
                    }
                    tokio::time::sleep(ACCEPT_PAUSE).await;
                }
                continue;
            }
        };
        let Some(slots) = places.take(&peers, peer) else {
            let _ = stream.try_write(FULL);
            continue;
        };
        let state = ConnState::new(timeouts, slots);
        let stop = stop.clone();
        let closed = closed_rx.clone();
        let app = app.clone();
        tokio::spawn(async move {
            connection(stream, peer, app, state, stop).await;
            drop(closed);
        });
    }
    drop(closed_rx);
    closed_tx.closed().await;
}

impl Places {
    /// A place for a connection from `peer`, if there is one.
    fn take(&self, peers: &Peers, peer: SocketAddr) -> Option<super::deadline::HttpSlots> {
        let all = self.all.take(&(), self.max).ok()?;
        let own = match peers.trusted(peer.ip()) {
            true => None,
            false => Some(
                self.per_address
                    .take(&AddressKey::of(peer.ip()), self.max_per_address)
                    .ok()?,
            ),
        };
        Some((all, own))
    }
}

/// Serves one connection with hyper until it closes, is upgraded, or the server stops.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    app: Router,
    state: Arc<ConnState>,
    mut stop: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let io = TokioIo::new(Watched::new(stream, state.clone()));
    let body_timeout = state.timeouts().body;
    let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
        let answering = state.begin();
        request.extensions_mut().insert(ConnectInfo(peer));
        request.extensions_mut().insert(state.clone());
        // A request without a body (most) has nothing to wait for.
        let request = request.map(|body| match body.is_end_stream() {
            true => Body::new(body),
            false => Body::new(TimedBody::new(body, body_timeout)),
        });
        let app = app.clone();
        async move {
            let response = app.oneshot(request).await;
            drop(answering);
            response
        }
    });
    let serving = hyper::server::conn::http1::Builder::new()
        .serve_connection(io, service)
        .with_upgrades();
    let mut serving = std::pin::pin!(serving);
    tokio::select! {
        result = serving.as_mut() => {
            if let Err(e) = result {
                tracing::debug!(%peer, error = %e, "HTTP connection ended");
            }
            return;
        }
        _ = stop.wait_for(|s| *s) => {}
    }
    serving.as_mut().graceful_shutdown();
    let _ = serving.await;
}

/// Errors of one connection that came and went before it was accepted: nothing to wait
/// out.
fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
}
