//! The account routes over HTTP, `POST /api/auth/{register,login,refresh,logout,password,
//! guest}` (`client-protocol/accounts.md`): reading bodies (bounded), the client address,
//! the refresh cookie, and turning the desk's answers into JSON and status codes. The
//! decisions are in [`crate::accounts`].

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{ConnectInfo, DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use super::account_reply::{MAX_BODY_BYTES, body, refusal, same_origin};
use super::extract::bearer;
use super::peer::Peers;

use crate::accounts::wire::{AuthCode, AuthProblem, LoginRequest};
use crate::accounts::{Accounts, Issued};
use crate::auth::load_or_create_secret;
use crate::hub::Hub;

/// The refresh cookie's name.
pub const REFRESH_COOKIE: &str = "tengen_refresh";
/// The refresh cookie's path: it goes only to these routes.
const COOKIE_PATH: &str = "/api/auth";

#[derive(Clone)]
struct Desk {
    hub: Arc<Hub>,
    accounts: Arc<Accounts>,
    peers: Arc<Peers>,
}

/// The account routes, to merge into the server's router.
pub fn routes<S: Clone + Send + Sync + 'static>(hub: &Arc<Hub>, peers: &Arc<Peers>) -> Router<S> {
    let secret = match load_or_create_secret(&hub.config.auth, &hub.config.data_dir) {
        Ok(secret) => secret,
        Err(e) => {
            // The verifier read the same secret at start-up, so this cannot fail unless
            // the file vanished since; refuse every account request rather than start.
            tracing::error!(error = %e, "the account routes cannot read the JWT secret");
            return Router::new().route(
                "/api/auth/{*rest}",
                post(|| async { refusal(unavailable_secret()) }),
            );
        }
    };
    let desk = Desk {
        hub: hub.clone(),
        accounts: Arc::new(Accounts::new(&hub.config.auth, hub.store().clone(), secret)),
        peers: peers.clone(),
    };
    Router::new()
        .route("/api/auth/register", post(register))
        .route("/api/auth/login", post(login))
        .route("/api/auth/refresh", post(refresh))
        .route("/api/auth/logout", post(logout))
        .route("/api/auth/password", post(password))
        .route("/api/auth/guest", post(guest))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(desk)
}

fn unavailable_secret() -> AuthProblem {
    AuthProblem {
        error: "The server cannot sign tokens now; see its log.".into(),
        code: AuthCode::Unavailable,
        retry_after: None,
    }
}

fn cookie(value: &str, max_age: u64, secure: bool) -> Option<HeaderValue> {
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{REFRESH_COOKIE}={value}; HttpOnly; SameSite=Strict; Path={COOKIE_PATH}; Max-Age={max_age}{secure}"
    ))
    .ok()
}

fn with_cleared_cookie(mut response: Response, accounts: &Accounts) -> Response {
    if let Some(c) = cookie("", 0, accounts.secure_cookie()) {
        response.headers_mut().insert(header::SET_COOKIE, c);
    }
    response
}

/// A session as JSON with its refresh cookie.
fn issued(status: StatusCode, session: Issued, accounts: &Accounts) -> Response {
    let mut response = (status, Json(&session.body)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(c) = cookie(
        &session.refresh_token,
        accounts.refresh_ttl_secs(),
        accounts.secure_cookie(),
    ) {
        headers.insert(header::SET_COOKIE, c);
    }
    response
}

fn answer(
    result: Result<Issued, AuthProblem>,
    status: StatusCode,
    accounts: &Accounts,
) -> Response {
    match result {
        Ok(session) => issued(status, session, accounts),
        Err(p) => refusal(p),
    }
}

/// The client's address, as [`Peers::client`] tells it.
fn client_address(desk: &Desk, peer: SocketAddr, headers: &HeaderMap) -> IpAddr {
    desk.peers.client(peer.ip(), headers)
}

/// The refresh token from the `Cookie` header(s).
fn refresh_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == REFRESH_COOKIE)
        .map(|(_, value)| value.to_string())
        .filter(|v| !v.is_empty())
}

type Peer = ConnectInfo<SocketAddr>;

async fn register(
    State(desk): State<Desk>,
    ConnectInfo(peer): Peer,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    let from = client_address(&desk, peer, &headers);
    let result = match same_origin(desk.hub.config.auth.public_url.as_deref(), &headers)
        .and_then(|()| body(&headers, bytes))
    {
        Ok(req) => desk.accounts.register(req, from).await,
        Err(p) => Err(p),
    };
    answer(result, StatusCode::CREATED, &desk.accounts)
}

async fn login(
    State(desk): State<Desk>,
    ConnectInfo(peer): Peer,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    let from = client_address(&desk, peer, &headers);
    let result = match same_origin(desk.hub.config.auth.public_url.as_deref(), &headers)
        .and_then(|()| body::<LoginRequest>(&headers, bytes))
    {
        Ok(req) => {
            let name: String = req.username.chars().take(64).collect();
            let result = desk.accounts.login(req, from).await;
            if let Err(p) = &result {
                log_refused_login(p, &name, from);
            }
            result
        }
        Err(p) => Err(p),
    };
    answer(result, StatusCode::OK, &desk.accounts)
}

/// A failed login, or one refused for too many failures, for the operator: the name
/// tried (escaped, at most 64 characters) and the client's address, never the password.
fn log_refused_login(p: &AuthProblem, name: &str, from: IpAddr) {
    match p.code {
        AuthCode::InvalidCredentials => tracing::info!(user = ?name, %from, "failed login"),
        AuthCode::RateLimited => tracing::warn!(
            user = ?name,
            %from,
            retry_after_secs = p.retry_after,
            "login refused: too many failed logins (locked out for now)"
        ),
        _ => {}
    }
}

async fn refresh(State(desk): State<Desk>, headers: HeaderMap) -> Response {
    if let Err(p) = same_origin(desk.hub.config.auth.public_url.as_deref(), &headers) {
        return refusal(p);
    }
    match desk.accounts.refresh(refresh_cookie(&headers)).await {
        Ok(session) => issued(StatusCode::OK, session, &desk.accounts),
        Err(p) if p.code == AuthCode::Unavailable => refusal(p),
        Err(p) => with_cleared_cookie(refusal(p), &desk.accounts),
    }
}

async fn logout(State(desk): State<Desk>, headers: HeaderMap) -> Response {
    if let Err(p) = same_origin(desk.hub.config.auth.public_url.as_deref(), &headers) {
        return refusal(p);
    }
    match desk.accounts.logout(refresh_cookie(&headers)).await {
        Ok(()) => {
            let done = (
                StatusCode::NO_CONTENT,
                [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
            );
            with_cleared_cookie(done.into_response(), &desk.accounts)
        }
        Err(p) => refusal(p),
    }
}

async fn password(
    State(desk): State<Desk>,
    ConnectInfo(peer): Peer,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    let from = client_address(&desk, peer, &headers);
    let result = match same_origin(desk.hub.config.auth.public_url.as_deref(), &headers)
        .and_then(|()| body(&headers, bytes))
    {
        Ok(req) => {
            desk.accounts
                .change_password(&desk.hub.verifier, bearer(&headers), req, from)
                .await
        }
        Err(p) => Err(p),
    };
    answer(result, StatusCode::OK, &desk.accounts)
}

async fn guest(State(desk): State<Desk>, ConnectInfo(peer): Peer, headers: HeaderMap) -> Response {
    if let Err(p) = same_origin(desk.hub.config.auth.public_url.as_deref(), &headers) {
        return refusal(p);
    }
    let from = client_address(&desk, peer, &headers);
    answer(
        desk.accounts.guest(from).await,
        StatusCode::CREATED,
        &desk.accounts,
    )
}
