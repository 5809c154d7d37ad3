//! What the route files read from a request beside their own parameters: an id from the
//! path, the bearer token, a JSON object body. Shared by the route files, which import it
//! rather than each other.

use axum::extract::Path;
use axum::extract::rejection::PathRejection;
use axum::http::{HeaderMap, header};
use serde::de::DeserializeOwned;

/// A game (or review) id from the URL, taken with the framework's refusal in hand, so
/// that a path that does not decode (`/api/games/%FF`) is a JSON 400 like every archive
/// error.
pub(super) type GameIdPath = Result<Path<String>, PathRejection>;

/// The token of an `Authorization: Bearer <token>` header. The scheme's name is
/// case-insensitive (RFC 7235 §2.1): `bearer` and `BEARER` name it too.
pub(super) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Reads a JSON object into `T`. serde would also fill a struct from an array, by the
/// fields' order, which a route that names its fields must not take.
pub(super) fn from_object<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    if bytes.trim_ascii_start().first() != Some(&b'{') {
        return Err("not a JSON object".into());
    }
    serde_json::from_slice(bytes).map_err(|e| e.to_string())
}
