//! `GET /api/openapi.json`: the OpenAPI 3.1 document of the HTTP routes. Bodies are the
//! JSON Schemas of the very types the handlers read and write (`schemars`, as for the
//! WebSocket's AsyncAPI document), query parameters are built from the constants the
//! handlers check them against, and the account routes' refusals from the function that
//! gives each code its status. The contract test (`tests/contract/`) checks a live
//! server's answers against it. The web client's static files are left out: they are
//! pages, not an API.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value, json};

use super::account_reply::status_of;
use super::api::GamePage;
use super::auth::REFRESH_COOKIE;
use super::reply::Problem;
use super::reviews::{MAX_SGF_BYTES, NewReview, ReviewView, SavedReview};
use super::web::{DevLoginRequest, DevLoginStatus, DevToken};
use crate::accounts::wire::{
    AuthCode, AuthProblem, LoginRequest, PasswordRequest, RegisterRequest, SessionBody,
};
use crate::archive::GameView;
use crate::estimate::Estimate;
use crate::hub::Hub;
use crate::protocol::PROTOCOL_VERSION;
use crate::standings::view::{Leaderboard, MAX_LEADERBOARD, Profile};
use crate::store::{GameQuery, GameStatus};

static DOCUMENT: LazyLock<String> =
    LazyLock::new(|| crate::protocol::schema::to_file_text(&document()));

pub fn routes() -> Router<Arc<Hub>> {
    Router::new().route("/api/openapi.json", get(served))
}

async fn served() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        DOCUMENT.as_str(),
    )
}

/// What a request must carry.
#[derive(Clone, Copy, PartialEq)]
enum Auth {
    None,
    /// `Authorization: Bearer <access token>`.
    Bearer,
    /// The refresh cookie the session routes set.
    RefreshCookie,
}

/// A body, of a request or an answer.
enum Body {
    Empty,
    Json(Schema),
    /// Text of this media type.
    Text(&'static str),
}

/// One documented method of one path.
struct Operation {
    method: &'static str,
    path: &'static str,
    tag: &'static str,
    summary: &'static str,
    auth: Auth,
    query: Vec<Value>,
    request: Option<Schema>,
    /// `(status, description, body)`, errors included.
    responses: Vec<(u16, String, Body)>,
}

impl Operation {
    fn new(
        method: &'static str,
        path: &'static str,
        tag: &'static str,
        summary: &'static str,
    ) -> Self {
        Operation {
            method,
            path,
            tag,
            summary,
            auth: Auth::None,
            query: Vec::new(),
            request: None,
            responses: Vec::new(),
        }
    }

    fn auth(mut self, auth: Auth) -> Self {
        self.auth = auth;
        self
    }

    fn query(mut self, name: &str, description: &str, schema: Value) -> Self {
        self.query.push(json!({
            "name": name, "in": "query", "required": false,
            "description": description, "schema": schema,
        }));
        self
    }

    fn request(mut self, schema: Schema) -> Self {
        self.request = Some(schema);
        self
    }

    fn answer(mut self, status: u16, description: impl Into<String>, body: Body) -> Self {
        self.responses.push((status, description.into(), body));
        self
    }

    /// A refusal in the `{"error": ...}` shape.
    fn refusal(self, g: &mut SchemaGenerator, status: u16, description: &str) -> Self {
        let problem = Body::Json(g.subschema_for::<Problem>());
        self.answer(status, description, problem)
    }

    /// The account routes' refusals: each status with every code that has it.
    fn auth_refusals(mut self, g: &mut SchemaGenerator) -> Self {
        for (status, codes) in auth_statuses(g) {
            let description = format!("Refused; `code` is one of {}.", codes.join(", "));
            let body = Body::Json(g.subschema_for::<AuthProblem>());
            self.responses.push((status, description, body));
        }
        self
    }

    fn to_value(&self) -> Value {
        let mut op = json!({
            "operationId": format!("{} {}", self.method, self.path),
            "tags": [self.tag],
            "summary": self.summary,
            "responses": {},
        });
        let mut parameters: Vec<Value> = path_parameters(self.path);
        parameters.extend(self.query.iter().cloned());
        if !parameters.is_empty() {
            op["parameters"] = Value::Array(parameters);
        }
        if let Some(schema) = &self.request {
            op["requestBody"] = json!({
                "required": true,
                "content": {"application/json": {"schema": schema}},
            });
        }
        match self.auth {
            Auth::None => {}
            Auth::Bearer => op["security"] = json!([{"bearer": []}]),
            // Without the cookie the route still answers (401, or 204 for a logout).
            Auth::RefreshCookie => op["security"] = json!([{"refreshCookie": []}, {}]),
        }
        for (status, description, body) in &self.responses {
            let mut answer = json!({"description": description});
            match body {
                Body::Empty => {}
                Body::Json(schema) => {
                    answer["content"] = json!({"application/json": {"schema": schema}});
                }
                Body::Text(media) => {
                    answer["content"] = json!({*media: {"schema": {"type": "string"}}});
                }
            }
            op["responses"][status.to_string()] = answer;
        }
        op
    }
}

/// `{id}` segments as required string parameters.
fn path_parameters(path: &str) -> Vec<Value> {
    path.split('/')
        .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
        .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
        .collect()
}

/// Every account refusal code by its status, as the account routes answer them.
fn auth_statuses(g: &mut SchemaGenerator) -> BTreeMap<u16, Vec<String>> {
    // A documented enum's schema is a `oneOf` of constants, an undocumented one's an `enum`.
    let schema = AuthCode::json_schema(g).to_value();
    let consts = schema["oneOf"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| &v["const"]);
    let names = schema["enum"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(consts);
    let mut by_status: BTreeMap<u16, Vec<String>> = BTreeMap::new();
    for name in names {
        let Ok(code) = serde_json::from_value::<AuthCode>(name.clone()) else {
            continue;
        };
        let name = name.as_str().unwrap_or_default();
        by_status
            .entry(status_of(code).as_u16())
            .or_default()
            .push(format!("`{name}`"));
    }
    by_status
}

fn json_of<T: JsonSchema>(g: &mut SchemaGenerator) -> Body {
    Body::Json(g.subschema_for::<T>())
}

fn operations(g: &mut SchemaGenerator) -> Vec<Operation> {
    const TEXT: &str = "text/plain";
    const SGF: &str = "application/x-go-sgf";
    let games = "games";
    let mut ops = vec![
        Operation::new(
            "get",
            "/ws",
            "websocket",
            "The WebSocket of the client protocol (its messages: /api/asyncapi.json)",
        )
        .query(
            "token",
            "An access token; or send `auth` after connecting.",
            json!({"type": "string"}),
        )
        .answer(101, "Switching to the WebSocket protocol.", Body::Empty)
        .answer(400, "Not a WebSocket upgrade request.", Body::Text(TEXT))
        .answer(426, "The connection cannot be upgraded.", Body::Text(TEXT))
        .answer(
            429,
            "Too many connections from this address.",
            Body::Text(TEXT),
        )
        .answer(
            503,
            "The server, or its share for connections without a login, is full.",
            Body::Text(TEXT),
        ),
        Operation::new("get", "/healthz", "operations", "Liveness")
            .answer(200, "Alive.", Body::Text(TEXT))
            .answer(503, "Shutting down.", Body::Text(TEXT)),
        Operation::new(
            "get",
            "/readyz",
            "operations",
            "Readiness: accepting, in the cluster, the store writable",
        )
        .answer(200, "Ready.", Body::Text(TEXT))
        .answer(503, "Not ready, and why.", Body::Text(TEXT)),
        Operation::new("get", "/metrics", "operations", "Prometheus metrics").answer(
            200,
            "The metrics in the Prometheus text format.",
            Body::Text(TEXT),
        ),
        Operation::new("get", "/api/openapi.json", "documents", "This document").answer(
            200,
            "The OpenAPI 3.1 document.",
            Body::Json(Schema::from(true)),
        ),
        Operation::new(
            "get",
            "/api/asyncapi.json",
            "documents",
            "The AsyncAPI 3 document of the WebSocket protocol",
        )
        .answer(
            200,
            "The AsyncAPI 3 document.",
            Body::Json(Schema::from(true)),
        ),
    ];
    let status = g.subschema_for::<GameStatus>().to_value();
    ops.push(
        Operation::new(
            "get",
            "/api/games",
            games,
            "Live and recent games, newest first, paged",
        )
        .query(
            "player",
            "Only this user's games.",
            json!({"type": "string", "minLength": 1}),
        )
        .query("status", "Only live or only finished games.", status)
        .query(
            "limit",
            "Games on the page.",
            json!({"type": "integer", "minimum": 0, "maximum": GameQuery::MAX_LIMIT}),
        )
        .query(
            "before",
            "The `next` of the previous page.",
            json!({"type": "string", "pattern": "^[0-9]+:[A-Za-z0-9]{1,64}$"}),
        )
        .answer(200, "A page of games.", json_of::<GamePage>(g))
        .refusal(g, 400, "A parameter unknown, given twice or unreadable.")
        .refusal(g, 503, "The store failed."),
    );
    for (path, summary, ok) in [
        ("/api/games/{id}", "A game's record", json_of::<GameView>(g)),
        ("/api/games/{id}/sgf", "A game's SGF", Body::Text(SGF)),
        (
            "/api/games/{id}/estimate",
            "A score estimate of a game in play",
            json_of::<Estimate>(g),
        ),
    ] {
        let mut op = Operation::new("get", path, games, summary)
            .answer(200, "Found.", ok)
            .refusal(g, 400, "The id cannot be read.")
            .refusal(g, 404, "No such game.")
            .refusal(g, 503, "The store failed.");
        if path.ends_with("/estimate") {
            op = op
                .refusal(g, 409, "The game is over: its result stands instead.")
                .refusal(g, 500, "The game's moves could not be replayed.");
        }
        ops.push(op);
    }
    let sizes = json!({"type": "integer", "enum": [9, 13, 19]});
    ops.extend([
        Operation::new(
            "get",
            "/api/users/{id}",
            "ratings",
            "A player's profile: ratings, history, escapes",
        )
        .answer(200, "The profile.", json_of::<Profile>(g))
        .refusal(
            g,
            400,
            "A query parameter (a profile takes none), or an unreadable id.",
        )
        .refusal(g, 404, "No account and no game of this id.")
        .refusal(g, 503, "The store failed."),
        Operation::new("get", "/api/ratings", "ratings", "A pool's leaderboard")
            .query("size", "The board size's pool; overall without it.", sizes)
            .query(
                "limit",
                "Players listed.",
                json!({"type": "integer", "minimum": 1, "maximum": MAX_LEADERBOARD}),
            )
            .answer(200, "The leaderboard.", json_of::<Leaderboard>(g))
            .refusal(g, 400, "A parameter unknown, given twice or unreadable.")
            .refusal(g, 503, "The store failed."),
        Operation::new(
            "post",
            "/api/reviews",
            "reviews",
            "Save an analysis board as a shareable review",
        )
        .auth(Auth::Bearer)
        .request(g.subschema_for::<NewReview>())
        .answer(201, "Saved.", json_of::<SavedReview>(g))
        .refusal(
            g,
            400,
            "Not that JSON object, or an SGF that is not one readable game.",
        )
        .refusal(g, 401, "No token, or a refused one.")
        .refusal(g, 404, "The `game_id` names no game.")
        .refusal(g, 409, "The user keeps the most reviews allowed.")
        .refusal(g, 413, &format!("An SGF over {MAX_SGF_BYTES} bytes."))
        .refusal(g, 503, "The store failed."),
        Operation::new("get", "/api/reviews/{id}", "reviews", "A review")
            .answer(200, "The review.", json_of::<ReviewView>(g))
            .refusal(g, 400, "The id cannot be read.")
            .refusal(g, 404, "No such review.")
            .refusal(g, 503, "The store failed."),
        Operation::new("get", "/api/reviews/{id}/sgf", "reviews", "A review's SGF")
            .answer(200, "The SGF.", Body::Text(SGF))
            .refusal(g, 400, "The id cannot be read.")
            .refusal(g, 404, "No such review.")
            .refusal(g, 503, "The store failed."),
        Operation::new(
            "get",
            "/api/dev-login",
            "accounts",
            "Whether the local dev login is on",
        )
        .answer(200, "On, or off and why.", json_of::<DevLoginStatus>(g)),
        Operation::new(
            "post",
            "/api/dev-login",
            "accounts",
            "A player token for a name, no password (local play only)",
        )
        .request(g.subschema_for::<DevLoginRequest>())
        .answer(200, "A token.", json_of::<DevToken>(g))
        .refusal(g, 400, "Not that JSON object, or a name that is not plain.")
        .refusal(g, 403, "The dev login is off on this server.")
        .refusal(g, 409, "The name is an account's or a guest's.")
        .refusal(g, 500, "The token could not be signed.")
        .refusal(g, 503, "The store failed."),
    ]);
    let session = |g: &mut SchemaGenerator| json_of::<SessionBody>(g);
    let accounts = [
        Operation::new(
            "post",
            "/api/auth/register",
            "accounts",
            "Create an account and log in",
        )
        .request(g.subschema_for::<RegisterRequest>())
        .answer(
            201,
            "Registered; the refresh token is in a cookie.",
            session(g),
        ),
        Operation::new("post", "/api/auth/login", "accounts", "Log in")
            .request(g.subschema_for::<LoginRequest>())
            .answer(
                200,
                "Logged in; the refresh token is in a cookie.",
                session(g),
            ),
        Operation::new(
            "post",
            "/api/auth/refresh",
            "accounts",
            "A new access token for the refresh cookie",
        )
        .auth(Auth::RefreshCookie)
        .answer(200, "A new session; the cookie is replaced.", session(g)),
        Operation::new(
            "post",
            "/api/auth/logout",
            "accounts",
            "Revoke the refresh cookie's session",
        )
        .auth(Auth::RefreshCookie)
        .answer(204, "Logged out; the cookie is cleared.", Body::Empty),
        Operation::new(
            "post",
            "/api/auth/password",
            "accounts",
            "Change the password",
        )
        .auth(Auth::Bearer)
        .request(g.subschema_for::<PasswordRequest>())
        .answer(200, "Changed; every other session is revoked.", session(g)),
        Operation::new(
            "post",
            "/api/auth/guest",
            "accounts",
            "A guest account for this browser",
        )
        .answer(201, "A guest session.", session(g)),
    ];
    ops.extend(accounts.into_iter().map(|op| op.auth_refusals(g)));
    ops.extend(tournament_exports(g));
    ops
}

/// A tournament's exchange files, and the import of a player list
/// (client-protocol/tournament.md#http).
fn tournament_exports(g: &mut SchemaGenerator) -> Vec<Operation> {
    let mut ops: Vec<Operation> = [
        (
            "/api/tournaments/{id}/export/egf",
            "A tournament's EGF results table",
            "text/plain",
        ),
        (
            "/api/tournaments/{id}/export/opengotha",
            "A tournament as OpenGotha's XML file",
            "application/xml",
        ),
        (
            "/api/tournaments/{id}/export/sgf",
            "Every ended game of a tournament as SGF, in one ZIP archive",
            "application/zip",
        ),
    ]
    .map(|(path, summary, media)| {
        let mut op = Operation::new("get", path, "tournaments", summary)
            .answer(200, "The file of the published rounds.", Body::Text(media))
            .refusal(g, 400, "The id cannot be read.")
            .refusal(g, 404, "No such tournament.")
            .refusal(g, 503, "The store failed.");
        if path.ends_with("/sgf") {
            op = op.refusal(g, 500, "A game's log could not be read.");
        }
        op
    })
    .into();
    ops.push(
        Operation::new(
            "post",
            "/api/tournaments/{id}/players",
            "tournaments",
            "A director registers the players of an OpenGotha file",
        )
        .auth(Auth::Bearer)
        .answer(
            200,
            "Registered: `{\"registered\": n}`, the players who were new.",
            Body::Json(Schema::from(true)),
        )
        .refusal(g, 400, "`invalid_file`: the file does not read.")
        .refusal(g, 401, "`unauthorized`: no token, or a refused one.")
        .refusal(
            g,
            403,
            "`forbidden` or `insufficient_scope`: not a director.",
        )
        .refusal(
            g,
            404,
            "`not_found`: no such tournament, or a player without an account.",
        )
        .refusal(
            g,
            409,
            "`wrong_phase` or `limit_reached`: round one is paired, or too many players.",
        )
        .refusal(g, 413, "`too_large`: a file over 2 MiB.")
        .refusal(g, 503, "`unavailable`: the store failed."),
    );
    ops
}

/// The OpenAPI 3.1 document of every HTTP route.
pub fn document() -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.definitions_path = "#/components/schemas".into();
    settings.meta_schema = None;
    let mut g = settings
        .with_transform(RecursiveTransform(crate::protocol::schema::bound_integers))
        .into_generator();
    let mut paths = Map::new();
    for op in operations(&mut g) {
        let item = paths.entry(op.path).or_insert_with(|| json!({}));
        item[op.method] = op.to_value();
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "tengen HTTP API",
            "version": PROTOCOL_VERSION.to_string(),
            "description": "The HTTP routes of a tengen server: accounts, the game archive and its SGF, ratings, reviews, operations. Play, the lobby, referees and admins use the WebSocket (`/ws`), described by the AsyncAPI document at /api/asyncapi.json. The prose is client-protocol/.",
        },
        "paths": paths,
        "components": {
            "schemas": g.take_definitions(true),
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
                "refreshCookie": {"type": "apiKey", "in": "cookie", "name": REFRESH_COOKIE},
            },
        },
    })
}
