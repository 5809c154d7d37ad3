//! The web client: the files under `web/`, compiled into the binary so that `tengen serve`
//! alone serves a page to play and watch on (no build step, no second server), and the
//! labelled "local dev login" that hands out player tokens by name when
//! `auth.dev_login` allows it. Owns no game logic: the page speaks the client protocol
//! over `/ws` like every other client.

use std::sync::{Arc, OnceLock};

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::extract::from_object;

use crate::accounts::username::{GUEST_PREFIX, Username};
use crate::auth::{claims_for, display_name, load_or_create_secret, sign};
use crate::config::JwtAlgorithm;
use crate::hub::Hub;
use crate::protocol::{Role, UserInfo};

/// How long a dev-login token lasts.
const DEV_TOKEN_TTL_SECS: u64 = 7 * 24 * 3600;

/// A file of the client: its URL path, content type and bytes.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $file:literal, $type:expr) => {
        Asset {
            path: $path,
            content_type: $type,
            body: include_bytes!(concat!("../../web/", $file)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";
const HTML: &str = "text/html; charset=utf-8";

static ASSETS: &[Asset] = &[
    asset!("/", "index.html", HTML),
    asset!("/api.html", "api.html", HTML),
    asset!("/style.css", "style.css", "text/css; charset=utf-8"),
    asset!("/favicon.svg", "favicon.svg", "image/svg+xml"),
    // The service worker, at the root so that its scope is the whole client.
    asset!("/sw.js", "sw.js", JS),
    asset!("/js/app.js", "js/app.js", JS),
    asset!("/js/connection.js", "js/connection.js", JS),
    asset!("/js/lobby.js", "js/lobby.js", JS),
    asset!("/js/game.js", "js/game.js", JS),
    asset!("/js/goban.js", "js/goban.js", JS),
    asset!("/js/clock.js", "js/clock.js", JS),
    asset!("/js/count.js", "js/count.js", JS),
    asset!("/js/coords.js", "js/coords.js", JS),
    asset!("/js/ui.js", "js/ui.js", JS),
    asset!("/js/notices.js", "js/notices.js", JS),
    asset!("/js/vacation.js", "js/vacation.js", JS),
    asset!("/js/correspondence.js", "js/correspondence.js", JS),
    asset!("/js/planner.js", "js/planner.js", JS),
    asset!("/js/replay.js", "js/replay.js", JS),
    asset!("/js/archive.js", "js/archive.js", JS),
    asset!("/js/prefs.js", "js/prefs.js", JS),
    asset!("/js/sound.js", "js/sound.js", JS),
    asset!("/js/analysis.js", "js/analysis.js", JS),
    asset!("/js/sgf.js", "js/sgf.js", JS),
    asset!("/js/account.js", "js/account.js", JS),
    asset!("/js/automatch.js", "js/automatch.js", JS),
    asset!("/js/ratings.js", "js/ratings.js", JS),
    asset!("/js/profile.js", "js/profile.js", JS),
    asset!("/js/leaderboard.js", "js/leaderboard.js", JS),
    asset!("/js/plot.js", "js/plot.js", JS),
    asset!("/js/referee.js", "js/referee.js", JS),
    asset!("/js/speed.js", "js/speed.js", JS),
    asset!("/js/bots.js", "js/bots.js", JS),
    asset!("/js/selfservice.js", "js/selfservice.js", JS),
    asset!("/js/apiref.js", "js/apiref.js", JS),
    asset!("/js/clockform.js", "js/clockform.js", JS),
    asset!("/js/tournaments.js", "js/tournaments.js", JS),
    asset!("/js/tournament.js", "js/tournament.js", JS),
    asset!("/js/director.js", "js/director.js", JS),
    // The seven characters of the Chinese result, for machines with no Chinese font
    // (a subset of Droid Sans Fallback, Apache 2.0; see web/style.css), and its licence.
    asset!(
        "/fonts/cjk-result.woff2",
        "fonts/cjk-result.woff2",
        "font/woff2"
    ),
    asset!(
        "/fonts/LICENSE.txt",
        "fonts/LICENSE.txt",
        "text/plain; charset=utf-8"
    ),
];

/// The page may load only its own files and talk only to its own server: `connect-src`
/// names the server's own WebSocket origin ([`csp`]).
const CSP_BEFORE_CONNECT: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'";
const CSP_AFTER_CONNECT: &str = "; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/// The page's policy. `'self'` covers the page's own `ws:`/`wss:` origin in browsers
/// that follow CSP 3; the origin is named as well for those that do not: the one of
/// `auth.public_url` when it is set, else the host the page was asked from (checked to
/// be a plain host name or address, so a header cannot add to the policy).
fn csp(public_url: Option<&str>, headers: &HeaderMap) -> String {
    let from_url = public_url.and_then(|url| {
        let (scheme, rest) = url.split_once("://")?;
        let host = rest.split(['/', '?', '#']).next()?;
        let ws = if scheme.eq_ignore_ascii_case("https") {
            "wss"
        } else {
            "ws"
        };
        Some(format!("{ws}://{host}"))
    });
    let origin = from_url.or_else(|| {
        let host = headers.get(header::HOST)?.to_str().ok()?;
        Some(format!("ws://{host} wss://{host}"))
    });
    let origin = origin.filter(|o| {
        o.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b" .-:/[]".contains(&b))
    });
    match origin {
        Some(origin) => format!("{CSP_BEFORE_CONNECT} {origin}{CSP_AFTER_CONNECT}"),
        None => format!("{CSP_BEFORE_CONNECT}{CSP_AFTER_CONNECT}"),
    }
}

/// What the dev login needs: the HS256 secret, loaded once at start-up, or why there is
/// none.
#[derive(Clone)]
struct DevLogin {
    hub: Arc<Hub>,
    secret: Result<Arc<Vec<u8>>, &'static str>,
}

/// The client's routes, to merge into the server's router.
pub fn routes<S: Clone + Send + Sync + 'static>(hub: &Arc<Hub>) -> Router<S> {
    let auth = &hub.config.auth;
    let secret = if !hub.config.dev_login() {
        Err(
            "the local dev login is off on this server (it is on only where auth.dev_login allows it: by default when the server listens on loopback); log in with a token",
        )
    } else if auth.algorithm != JwtAlgorithm::HS256 {
        Err(
            "the local dev login needs auth.algorithm HS256; this server takes tokens from an identity service",
        )
    } else {
        match load_or_create_secret(auth, &hub.config.data_dir) {
            Ok(s) => Ok(Arc::new(s)),
            Err(e) => {
                tracing::error!(error = %e, "the local dev login cannot read the JWT secret");
                Err("the local dev login cannot read the server's JWT secret; see the server log")
            }
        }
    };
    if secret.is_ok() {
        tracing::warn!(
            listen = %hub.config.listen,
            "the local dev login is on: whoever reaches this address (a reverse proxy included) can log in under any name; set auth.dev_login = false to turn it off"
        );
    }
    let dev = DevLogin {
        hub: hub.clone(),
        secret,
    };
    let mut router = Router::new().route("/api/dev-login", get(dev_status).post(dev_login));
    let public_url: Arc<Option<String>> = Arc::new(auth.public_url.clone());
    for (i, asset) in ASSETS.iter().enumerate() {
        let public_url = public_url.clone();
        router =
            router.route(
                asset.path,
                get(move |headers: HeaderMap| async move {
                    file(i, &headers, public_url.as_deref()).await
                }),
            );
    }
    router.with_state(dev)
}

/// Serves one embedded file. The names carry no hash, so browsers must revalidate
/// (`no-cache`); the ETag makes that a 304 until the binary changes.
async fn file(index: usize, headers: &HeaderMap, public_url: Option<&str>) -> Response {
    static ETAGS: OnceLock<Vec<String>> = OnceLock::new();
    let etags = ETAGS.get_or_init(|| {
        ASSETS
            .iter()
            .map(|a| format!("\"{}\"", &hex::encode(Sha256::digest(a.body))[..20]))
            .collect()
    });
    let asset = &ASSETS[index];
    let etag = &etags[index];
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, asset.content_type)], asset.body).into_response()
    };
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if asset.content_type == HTML
        && let Ok(policy) = HeaderValue::from_str(&csp(public_url, headers))
    {
        h.insert(header::CONTENT_SECURITY_POLICY, policy);
        h.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
    }
    response
}

fn problem(status: StatusCode, message: impl Into<String>) -> Response {
    let body = serde_json::json!({"error": message.into()});
    (status, [(header::CACHE_CONTROL, "no-store")], Json(body)).into_response()
}

/// Whether the page should offer the dev login, and why not.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub(super) struct DevLoginStatus {
    enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
}

/// A dev-login token and whom it names.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub(super) struct DevToken {
    /// A player's JWT, for `/ws?token=`.
    token: String,
    user: UserInfo,
}

/// `GET /api/dev-login`: whether the page should offer the dev login.
async fn dev_status(State(dev): State<DevLogin>) -> Response {
    let body = DevLoginStatus {
        enabled: dev.secret.is_ok(),
        reason: dev.secret.as_ref().err().copied(),
    };
    ([(header::CACHE_CONTROL, "no-store")], Json(body)).into_response()
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct DevLoginRequest {
    name: String,
}

/// `POST /api/dev-login` with `{"name": "alice"}`: a player token for that name, no
/// password asked. Only for local play and development.
async fn dev_login(State(dev): State<DevLogin>, body: axum::body::Bytes) -> Response {
    let secret = match &dev.secret {
        Ok(s) => s.clone(),
        Err(why) => return problem(StatusCode::FORBIDDEN, *why),
    };
    let request: DevLoginRequest = match from_object(&body) {
        Ok(r) => r,
        Err(e) => {
            return problem(
                StatusCode::BAD_REQUEST,
                format!("send {{\"name\": \"...\"}}: {e}"),
            );
        }
    };
    let name = request.name.trim();
    if let Err(why) = check_name(name) {
        return problem(StatusCode::BAD_REQUEST, why);
    }
    if let Err(response) = unclaimed(&dev.hub, name).await {
        return response;
    }
    let auth = &dev.hub.config.auth;
    let mut claims = claims_for(name, None, Role::Player, DEV_TOKEN_TTL_SECS);
    claims.iss = auth.issuer.clone();
    claims.aud = auth.audience.clone();
    match sign(&secret, &claims) {
        Ok(token) => {
            tracing::info!(user = name, "local dev login");
            let user = UserInfo {
                id: name.to_string(),
                name: name.to_string(),
                role: Role::Player,
            };
            (
                [(header::CACHE_CONTROL, "no-store")],
                Json(DevToken { token, user }),
            )
                .into_response()
        }
        Err(e) => problem(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// Refuses a dev-login name that is, or folds to, the id of a stored user (a registered
/// account, a guest, an identity service's user) or that looks like a guest's: the dev
/// login asks no password, so it must never speak for someone who has one.
async fn unclaimed(hub: &Arc<Hub>, name: &str) -> Result<(), Response> {
    let canonical = Username::canonical(name).ok().map(Username::into_string);
    // `ｇｕｅｓｔ…` in full-width letters folds to `guest…` as a username would.
    if name.to_lowercase().starts_with(GUEST_PREFIX)
        || canonical
            .as_deref()
            .is_some_and(|c| c.starts_with(GUEST_PREFIX))
    {
        return Err(problem(
            StatusCode::CONFLICT,
            "names starting with `guest` are for guests; choose another",
        ));
    }
    let mut ids = vec![name.to_string()];
    ids.extend(canonical);
    let store = hub.store().clone();
    let found = tokio::task::spawn_blocking(move || {
        ids.iter()
            .map(|id| store.user(id).map(|row| row.is_some()))
            .collect::<Result<Vec<bool>, _>>()
    })
    .await;
    match found {
        Ok(Ok(found)) if found.contains(&true) => Err(problem(
            StatusCode::CONFLICT,
            format!("{name:?} is an account on this server; log in with its password"),
        )),
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(problem(StatusCode::SERVICE_UNAVAILABLE, e.to_string())),
        Err(e) => Err(problem(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())),
    }
}

/// A dev-login name: it is the display name and also becomes the user id, so keep it
/// plain.
fn check_name(name: &str) -> Result<(), String> {
    display_name(name).map_err(|why| format!("a name {why}"))?;
    if !name
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err("a name may hold letters, digits, `-`, `_` and `.` only".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain() {
        assert!(check_name("alice").is_ok());
        assert!(check_name("Bob_2.x-y").is_ok());
        assert!(check_name("").is_err());
        assert!(check_name("a b").is_err());
        assert!(check_name("<script>").is_err());
        assert!(check_name(&"é".repeat(40)).is_ok());
        assert!(check_name(&"x".repeat(41)).is_err());
    }

    #[test]
    fn every_file_under_web_is_served() {
        fn walk(dir: &std::path::Path, root: &std::path::Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).expect("web/ is readable") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    walk(&path, root, out);
                } else {
                    let rel = path.strip_prefix(root).expect("under web/");
                    out.push(format!("/{}", rel.to_string_lossy()));
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("web");
        let mut files = Vec::new();
        walk(&root, &root, &mut files);
        for file in files {
            let path = if file == "/index.html" {
                "/"
            } else {
                file.as_str()
            };
            assert!(
                ASSETS.iter().any(|a| a.path == path),
                "web{file} is not in ASSETS, so the server would not serve it"
            );
        }
    }

    #[test]
    fn every_asset_is_served_with_a_type() {
        assert_eq!(ASSETS[0].path, "/");
        for a in ASSETS {
            assert!(!a.body.is_empty(), "{} is empty", a.path);
            assert!(!a.content_type.is_empty());
        }
    }
}
