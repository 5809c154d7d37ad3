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
use serde::de::DeserializeOwned;

use super::extract::{bearer, from_object};
use super::peer::Peers;

use crate::accounts::wire::{AuthCode, AuthProblem, LoginRequest};
use crate::accounts::{Accounts, Issued};
use crate::auth::load_or_create_secret;
use crate::hub::Hub;

/// Bytes of request body the account routes read at most.
pub const MAX_BODY_BYTES: usize = 4096;
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

pub(super) fn status_of(code: AuthCode) -> StatusCode {
    use AuthCode as C;
    match code {
        C::BadRequest
        | C::InvalidUsername
        | C::UsernameReserved
        | C::InvalidDisplayName
        | C::WeakPassword
        | C::PasswordTooLong => StatusCode::BAD_REQUEST,
        C::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        C::UsernameTaken => StatusCode::CONFLICT,
        C::InvalidCredentials | C::InvalidRefresh | C::RefreshReused | C::Unauthorized => {
            StatusCode::UNAUTHORIZED
        }
        C::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        C::AccountDisabled
        | C::CrossOrigin
        | C::RegistrationClosed
        | C::InviteRequired
        | C::InvalidInvite
        | C::Forbidden => StatusCode::FORBIDDEN,
        C::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        C::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
    }
}

/// A refusal as JSON, never cached; a refused refresh also clears the cookie.
fn refusal(p: AuthProblem) -> Response {
    let mut response = (status_of(p.code), Json(&p)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(secs) = p.retry_after
        && let Ok(v) = HeaderValue::from_str(&secs.to_string())
    {
        headers.insert(header::RETRY_AFTER, v);
    }
    response
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

/// Reads a JSON body into `T`, or refuses it with a coded problem. The body must say it
/// is JSON: a browser sends a cross-site form (`text/plain`, `application/x-www-form-
/// urlencoded`, `multipart/form-data`) without asking the server first, JSON never.
fn body<T: DeserializeOwned>(
    headers: &HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<T, AuthProblem> {
    if !is_json(headers) {
        return Err(AuthProblem {
            error: "Send the body as JSON, with `Content-Type: application/json`.".into(),
            code: AuthCode::UnsupportedMediaType,
            retry_after: None,
        });
    }
    let bytes = bytes.map_err(|e| AuthProblem {
        error: if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            format!("The body is larger than {MAX_BODY_BYTES} bytes.")
        } else {
            format!("The body cannot be read: {}", e.body_text())
        },
        code: if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            AuthCode::TooLarge
        } else {
            AuthCode::BadRequest
        },
        retry_after: None,
    })?;
    from_object(&bytes).map_err(|e| AuthProblem {
        error: format!("The body is not the JSON object this route takes: {e}."),
        code: AuthCode::BadRequest,
        retry_after: None,
    })
}

/// Whether the request's `Content-Type` is `application/json` (any case, any parameters).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// Refuses a request a browser sent for a page of another site. A browser names the
/// page's origin in `Origin` on every POST, and says how the page relates to this one in
/// `Sec-Fetch-Site`; this server's own origin is `auth.public_url`'s, or without one the
/// `Host` the request was sent to, in either scheme. A request with neither header comes
/// from a program, not from a page, and is taken.
fn same_origin(desk: &Desk, headers: &HeaderMap) -> Result<(), AuthProblem> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let ours = match text("origin") {
        Some(origin) => is_own_origin(
            desk.hub.config.auth.public_url.as_deref(),
            text("host"),
            origin,
        ),
        None => text("sec-fetch-site").is_none_or(|site| matches!(site, "same-origin" | "none")),
    };
    if ours {
        return Ok(());
    }
    Err(AuthProblem {
        error: "This request comes from a page of another site; the account routes answer only this server's own pages.".into(),
        code: AuthCode::CrossOrigin,
        retry_after: None,
    })
}

/// Whether `origin` (an `Origin` header) is this server's: that of `public_url` (its
/// scheme and authority, a default port left out as browsers do), or with no public URL
/// `http://` or `https://` and the `Host` header.
fn is_own_origin(public_url: Option<&str>, host: Option<&str>, origin: &str) -> bool {
    let origin = origin.trim();
    match public_url {
        Some(url) => {
            let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
            let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
            let default_port = if scheme.eq_ignore_ascii_case("https") {
                ":443"
            } else {
                ":80"
            };
            let authority = authority.strip_suffix(default_port).unwrap_or(authority);
            origin.eq_ignore_ascii_case(&format!("{scheme}://{authority}"))
        }
        None => {
            let Some(host) = host.map(str::trim).filter(|h| !h.is_empty()) else {
                return false;
            };
            ["http://", "https://"].iter().any(|scheme| {
                origin
                    .get(..scheme.len())
                    .is_some_and(|s| s.eq_ignore_ascii_case(scheme))
                    && origin[scheme.len()..].eq_ignore_ascii_case(host)
            })
        }
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
    let result = match same_origin(&desk, &headers).and_then(|()| body(&headers, bytes)) {
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
    let result =
        match same_origin(&desk, &headers).and_then(|()| body::<LoginRequest>(&headers, bytes)) {
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
    if let Err(p) = same_origin(&desk, &headers) {
        return refusal(p);
    }
    match desk.accounts.refresh(refresh_cookie(&headers)).await {
        Ok(session) => issued(StatusCode::OK, session, &desk.accounts),
        Err(p) if p.code == AuthCode::Unavailable => refusal(p),
        Err(p) => with_cleared_cookie(refusal(p), &desk.accounts),
    }
}

async fn logout(State(desk): State<Desk>, headers: HeaderMap) -> Response {
    if let Err(p) = same_origin(&desk, &headers) {
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
    let result = match same_origin(&desk, &headers).and_then(|()| body(&headers, bytes)) {
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
    if let Err(p) = same_origin(&desk, &headers) {
        return refusal(p);
    }
    let from = client_address(&desk, peer, &headers);
    answer(
        desk.accounts.guest(from).await,
        StatusCode::CREATED,
        &desk.accounts,
    )
}
