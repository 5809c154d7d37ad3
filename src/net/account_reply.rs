//! What the account routes (`net/auth.rs`, `net/tokens.rs`) share: refusals as coded
//! JSON with their statuses, bounded JSON bodies, and the same-origin check. Shared by
//! those route files, which import it rather than each other.

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;

use super::extract::from_object;
use crate::accounts::wire::{AuthCode, AuthProblem};

/// Bytes of request body the account routes read at most.
pub const MAX_BODY_BYTES: usize = 4096;

/// The HTTP status of each refusal (client-protocol/accounts.md#errors).
pub(super) fn status_of(code: AuthCode) -> StatusCode {
    use AuthCode as C;
    match code {
        C::BadRequest
        | C::InvalidUsername
        | C::UsernameReserved
        | C::InvalidDisplayName
        | C::WeakPassword
        | C::PasswordTooLong
        | C::InvalidTokenName
        | C::InvalidScope
        | C::InvalidExpiry
        | C::ConfirmationRequired
        | C::InvalidBotProfile => StatusCode::BAD_REQUEST,
        C::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        C::UsernameTaken | C::TooManyTokens | C::NotAPlayer | C::RatedGamesPlayed => {
            StatusCode::CONFLICT
        }
        C::UnknownToken => StatusCode::NOT_FOUND,
        C::InvalidCredentials | C::InvalidRefresh | C::RefreshReused | C::Unauthorized => {
            StatusCode::UNAUTHORIZED
        }
        C::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        C::AccountDisabled
        | C::CrossOrigin
        | C::RegistrationClosed
        | C::InviteRequired
        | C::InvalidInvite
        | C::Forbidden
        | C::SessionRequired
        | C::ScopeNotAllowed
        | C::InsufficientScope
        | C::NotABot => StatusCode::FORBIDDEN,
        C::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        C::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
    }
}

/// A refusal as JSON, never cached; a refused refresh also clears the cookie.
pub(super) fn refusal(p: AuthProblem) -> Response {
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

/// Reads a JSON body into `T`, or refuses it with a coded problem. The body must say it
/// is JSON: a browser sends a cross-site form (`text/plain`, `application/x-www-form-
/// urlencoded`, `multipart/form-data`) without asking the server first, JSON never.
pub(super) fn body<T: DeserializeOwned>(
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
pub(super) fn same_origin(
    public_url: Option<&str>,
    headers: &HeaderMap,
) -> Result<(), AuthProblem> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let ours = match text("origin") {
        Some(origin) => is_own_origin(public_url, text("host"), origin),
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
