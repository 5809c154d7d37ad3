//! `GET /api/asyncapi.json`: the AsyncAPI 3 document of the WebSocket protocol, generated
//! from the protocol's types (see [`crate::protocol::schema`]) once, on first request.

use std::sync::{Arc, LazyLock};

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

use crate::hub::Hub;
use crate::protocol::schema;

static DOCUMENT: LazyLock<String> = LazyLock::new(|| schema::to_file_text(&schema::asyncapi()));

pub fn routes() -> Router<Arc<Hub>> {
    Router::new().route("/api/asyncapi.json", get(document))
}

async fn document() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        DOCUMENT.as_str(),
    )
}
