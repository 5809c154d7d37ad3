//! Web Push at the edge (client-protocol/notifications.md#web-push): the server's public
//! key for browsers to subscribe with (`GET /api/push/key`, no login), and a logged-in
//! player's browser subscriptions (`POST` and `DELETE /api/push/subscriptions`). Bodies
//! are read as the notification settings' are (`net/notices.rs`).

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};

use super::notices::{MAX_BODY_BYTES, body_of, refused, user_of};
use crate::accounts::tokens::scope::Scope;
use crate::hub::Hub;
use crate::notify::Pusher;
use crate::protocol::{ErrorCode, Refusal};
use crate::time::wall_ms;

/// `GET /api/push/key`: what a browser's `applicationServerKey` is.
#[derive(Serialize, schemars::JsonSchema)]
pub(super) struct PushKey {
    /// The server's VAPID public key: a P-256 point, uncompressed (65 bytes), base64url.
    key: String,
}

/// A browser's keys, as `PushSubscription.toJSON()` gives them.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SubscriptionKeys {
    /// The browser's P-256 public key, uncompressed (65 bytes), base64url.
    p256dh: String,
    /// The browser's auth secret (16 bytes), base64url.
    auth: String,
}

/// What `POST /api/push/subscriptions` takes: `PushSubscription.toJSON()`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct NewSubscription {
    /// The push service's URL for this browser (`https://`, at most 1024 bytes).
    endpoint: String,
    /// When the browser says the subscription ends (Unix ms; usually null): one that
    /// has ended is refused.
    #[serde(default, rename = "expirationTime")]
    expiration_time: Option<f64>,
    keys: SubscriptionKeys,
}

/// What `DELETE /api/push/subscriptions` takes.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct OldSubscription {
    /// The endpoint of the subscription to forget.
    endpoint: String,
}

pub fn routes() -> Router<Arc<Hub>> {
    Router::new().route("/api/push/key", get(key)).route(
        "/api/push/subscriptions",
        post(subscribe)
            .delete(unsubscribe)
            .layer(DefaultBodyLimit::max(MAX_BODY_BYTES)),
    )
}

/// The pusher, or the refusal of a server without `[push]`.
fn pusher(hub: &Hub) -> Result<&Pusher, Refusal> {
    hub.notices.pusher().ok_or_else(|| {
        Refusal::new(
            ErrorCode::NotFound,
            "this server sends no push notifications",
        )
    })
}

async fn key(State(hub): State<Arc<Hub>>) -> Response {
    match pusher(&hub) {
        Ok(pusher) => Json(PushKey {
            key: pusher.public_key().to_string(),
        })
        .into_response(),
        Err(r) => refused(r),
    }
}

async fn subscribe(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let done = async {
        let user = user_of(&hub, &headers, Scope::to_act_as).await?;
        let pusher = pusher(&hub).map_err(refused)?;
        let sub: NewSubscription = body_of(
            body,
            "{\"endpoint\": ..., \"keys\": {\"p256dh\": ..., \"auth\": ...}}",
        )
        .map_err(refused)?;
        if sub.expiration_time.is_some_and(|at| at <= wall_ms() as f64) {
            return Err(refused(Refusal::new(
                ErrorCode::InvalidSubscription,
                "the push subscription is not usable: its expirationTime has passed",
            )));
        }
        pusher
            .subscribe(&user.id, &sub.endpoint, &sub.keys.p256dh, &sub.keys.auth)
            .await
            .map_err(refused)
    };
    match done.await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(refusal) => refusal,
    }
}

async fn unsubscribe(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let done = async {
        let user = user_of(&hub, &headers, Scope::to_act_as).await?;
        let pusher = pusher(&hub).map_err(refused)?;
        let sub: OldSubscription = body_of(body, "{\"endpoint\": ...}").map_err(refused)?;
        match pusher.unsubscribe(&user.id, &sub.endpoint).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(refused(Refusal::new(
                ErrorCode::NotFound,
                "you have no push subscription at that endpoint",
            ))),
            Err(r) => Err(refused(r)),
        }
    };
    match done.await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(refusal) => refusal,
    }
}
