//! The router: the WebSocket endpoint, health and readiness, metrics, and the route
//! files' routes. Only this file imports the route files; what they share is in
//! [`super::reply`] and [`super::extract`].

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Router};
use serde::Deserialize;

use super::chat::ChatQuota;
use super::deadline::ConnState;
use super::extract::bearer;
use super::limits::{AddressKey, PerAddress, PerUser};
use super::peer::Peers;
use super::reply::problem;
use super::{
    api, asyncapi, auth, estimate, notices, openapi, push, ratings, reviews, session, tokens,
    tournaments, web,
};
use crate::fanout::encode;
use crate::hub::Hub;
use crate::protocol::{Refusal, ServerMsg};

/// Close code for a connection whose token was refused.
const UNAUTHORIZED: u16 = 4001;
/// Close code for a connection over its user's limit of connections.
const TOO_MANY: u16 = 4009;
/// How long a refusal may take to leave before the socket is dropped anyway.
const REFUSE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
/// What tungstenite reads into at once, kept by every connection while it lives. Client
/// frames are small (a move is under 100 bytes): a larger frame is read whole once its
/// header says how large, so a small buffer costs no reads here and saves 3 KiB of every
/// idle connection's 4 KiB.
pub const READ_BUFFER_BYTES: usize = 1024;
/// How much tungstenite gathers before writing; a batch is flushed whole anyway.
pub const WRITE_BUFFER_BYTES: usize = 16 * 1024;

pub fn router(hub: Arc<Hub>, peers: Arc<Peers>) -> Router {
    Router::new()
        .route("/ws", get(websocket))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .merge(api::routes())
        .merge(asyncapi::routes())
        .merge(openapi::routes())
        .merge(estimate::routes())
        .merge(reviews::routes())
        .merge(notices::routes())
        .merge(push::routes())
        .merge(ratings::routes())
        .merge(tournaments::routes())
        .merge(web::routes(&hub))
        .merge(auth::routes(&hub, &peers))
        .merge(tokens::routes(&hub))
        .method_not_allowed_fallback(method_not_allowed)
        .layer(Extension(Arc::new(PerUser::default())))
        .layer(Extension(Arc::new(PerAddress::default())))
        .layer(Extension(Arc::new(ChatQuota::new(&hub.config.limits))))
        .layer(Extension(peers))
        .layer(axum::middleware::map_response(nosniff))
        .with_state(hub)
}

#[derive(Deserialize)]
struct WsQuery {
    token: Option<String>,
}

/// The upgrade: refused with an HTTP status when the server, the share of connections
/// without a login or the client's address is full; else a session, or a refusal on the
/// socket when the token is refused or its user has too many connections.
#[allow(clippy::too_many_arguments)]
async fn websocket(
    State(hub): State<Arc<Hub>>,
    Extension(per_user): Extension<Arc<PerUser>>,
    Extension(per_address): Extension<Arc<PerAddress>>,
    Extension(peers): Extension<Arc<Peers>>,
    Extension(chat): Extension<Arc<ChatQuota>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    // The plain HTTP connection being upgraded, which leaves its deadlines.
    conn: Option<Extension<Arc<ConnState>>>,
    Query(query): Query<WsQuery>,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    let limits = &hub.config.limits;
    let open = hub.open_connections();
    if open >= limits.max_connections {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "too many connections; try again later",
        )
            .into_response();
    }
    let token = query.token.or_else(|| bearer(&headers).map(str::to_string));
    // Room is kept for players: connections without a login may hold only a share.
    let anonymous_share =
        limits.max_connections * usize::from(limits.anonymous_connections_percent) / 100;
    if token.is_none() && open.saturating_sub(per_user.total()) >= anonymous_share {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "too many connections without a login; log in, or try again later",
        )
            .into_response();
    }
    let client = peers.client(peer.ip(), &headers);
    let from_client = per_address.take(&AddressKey::of(client), limits.max_connections_per_address);
    let Ok(from_client) = from_client else {
        return (
            StatusCode::TOO_MANY_REQUESTS,
            "too many connections from your address; close one first",
        )
            .into_response();
    };
    let upgraded = move || {
        if let Some(Extension(conn)) = conn {
            conn.upgraded();
        }
    };
    let upgrade = upgrade
        .read_buffer_size(READ_BUFFER_BYTES)
        .write_buffer_size(WRITE_BUFFER_BYTES)
        .max_write_buffer_size(
            limits.outbound_queue.max(16) * limits.max_frame_bytes.min(64 * 1024),
        )
        .max_message_size(limits.max_frame_bytes)
        .max_frame_size(limits.max_frame_bytes);
    let login = match token {
        None => None,
        Some(token) => {
            let (user, grant) =
                match crate::accounts::admit(hub.store(), &hub.verifier, &token).await {
                    Ok(admitted) => admitted,
                    Err(refusal) => {
                        let close = (UNAUTHORIZED, "unauthorized");
                        return upgrade.on_upgrade(move |socket| {
                            upgraded();
                            refuse(socket, refusal, close)
                        });
                    }
                };
            match per_user.enter(&user.id, limits.max_connections_per_user) {
                Ok(slot) => Some((user, grant, slot)),
                Err(refusal) => {
                    let close = (TOO_MANY, "too many connections");
                    return upgrade.on_upgrade(move |socket| {
                        upgraded();
                        refuse(socket, refusal, close)
                    });
                }
            }
        }
    };
    upgrade.on_upgrade(move |socket| {
        upgraded();
        let session = session::serve(hub, socket, login, per_user, chat);
        async move {
            // The client address's place, held as long as the session.
            let _from_client = from_client;
            session.await
        }
    })
}

/// Answers a login refused at the upgrade on the socket itself (browsers cannot read an
/// HTTP status on an upgrade): the error, then the close frame.
async fn refuse(mut socket: WebSocket, r: Refusal, (code, reason): (u16, &'static str)) {
    let frame = encode(&ServerMsg::Error {
        id: None,
        code: r.code,
        message: r.message,
        game_id: None,
        reason: None,
        retry_after_ms: None,
    });
    let close = Message::Close(Some(CloseFrame {
        code,
        reason: Utf8Bytes::from_static(reason),
    }));
    let refusal = async {
        socket.send(Message::Text(frame)).await?;
        socket.send(close).await
    };
    let _ = tokio::time::timeout(REFUSE_WAIT, refusal).await;
}

/// Every answer says its content type is the truth: a browser must not guess a record,
/// an SGF or an error to be HTML and run it.
async fn nosniff(mut response: Response) -> Response {
    response
        .headers_mut()
        .entry(header::X_CONTENT_TYPE_OPTIONS)
        .or_insert(HeaderValue::from_static("nosniff"));
    response
}

/// A known path asked with a method it does not take: a JSON error like every other
/// refusal of the API, not an empty body.
async fn method_not_allowed() -> Response {
    problem(
        StatusCode::METHOD_NOT_ALLOWED,
        "this path does not take that method",
    )
}

async fn healthz(State(hub): State<Arc<Hub>>) -> Response {
    if hub.shutdown.has_begun() {
        (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response()
    } else {
        (StatusCode::OK, "ok\n").into_response()
    }
}

/// Ready when accepting, in a cluster connected to the other nodes, and the store can
/// take a write.
async fn readyz(State(hub): State<Arc<Hub>>) -> Response {
    if hub.shutdown.has_begun() {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response();
    }
    if let Some(node) = &hub.cluster
        && !node.bus.is_connected()
    {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "not connected to the cluster's NATS\n",
        )
            .into_response();
    }
    // Bounded below the store's busy timeout, so the probe answers promptly while another
    // process (an operator's sqlite3 shell) holds the write lock or the disk stalls.
    const READY_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);
    let store = hub.store().clone();
    let check = tokio::task::spawn_blocking(move || store.check_writable());
    let Ok(checked) = tokio::time::timeout(READY_WITHIN, check).await else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("store not writable: no write lock within {READY_WITHIN:?}\n"),
        )
            .into_response();
    };
    match checked {
        Ok(Ok(())) => (StatusCode::OK, "ready\n").into_response(),
        Ok(Err(e)) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("store not writable: {e}\n"),
        )
            .into_response(),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("store check failed: {e}\n"),
        )
            .into_response(),
    }
}

async fn metrics(State(hub): State<Arc<Hub>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        crate::metrics::render(hub.games.rooms_running()),
    )
        .into_response()
}
