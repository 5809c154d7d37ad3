//! The network edge: one port for HTTP and WebSocket (axum), token checks at the
//! upgrade, one task per connection ([`session`]). The server's start and shutdown
//! wiring is in [`crate::server`].

mod account_reply;
mod api;
mod asyncapi;
mod auth;
mod chat;
mod deadline;
mod estimate;
mod extract;
mod fairplay;
mod http;
mod limits;
mod listen;
mod notices;
pub mod openapi;
mod peer;
mod push;
mod ratings;
mod record;
mod reply;
mod reviews;
mod session;
mod tokens;
mod tournaments;
mod web;

pub use http::{READ_BUFFER_BYTES, WRITE_BUFFER_BYTES};
pub use reviews::MAX_BODY_BYTES as MAX_REVIEW_BODY_BYTES;

use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::hub::Hub;

/// Serves the hub's routes on `listener` until `stop` turns true, then waits for the
/// plain HTTP connections to finish (upgraded ones are the sessions' own).
pub async fn serve(listener: TcpListener, hub: Arc<Hub>, stop: watch::Receiver<bool>) {
    let peers = Arc::new(peer::Peers::new(&hub.config.auth.trusted_proxies));
    let app = http::router(hub.clone(), peers.clone());
    listen::serve(listener, app, &hub.config.http, peers, stop).await;
}
