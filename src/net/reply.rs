//! What every JSON route answers with: a refusal as `{"error": ...}`, and a store call
//! run off the async threads whose failure is such a refusal. Shared by the route files,
//! which import it rather than each other.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// A refusal of every route but the account routes: a sentence for people.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub(super) struct Problem {
    pub error: String,
}

/// A refusal of the routes that do over HTTP what a WebSocket request does (the
/// notification settings): the sentence and the WebSocket's stable code.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub(super) struct CodedProblem {
    pub error: String,
    pub code: crate::protocol::ErrorCode,
}

/// A refusal in the API's shape: the status and `{"error": message}`.
pub(super) fn problem(status: StatusCode, message: impl Into<String>) -> Response {
    let body = Problem {
        error: message.into(),
    };
    (status, Json(body)).into_response()
}

/// Runs a store call on the blocking pool; a store failure is a 503, a panic a 500.
pub(super) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, crate::store::StoreError> + Send + 'static,
) -> Result<T, Response> {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(problem(StatusCode::SERVICE_UNAVAILABLE, e.to_string())),
        Err(e) => Err(problem(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())),
    }
}
