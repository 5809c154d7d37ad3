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
use super::notices::Change;
use super::push::{NewSubscription, OldSubscription, PushKey};
use super::reply::{CodedProblem, Problem};
use super::reviews::{MAX_SGF_BYTES, NewReview, ReviewView, SavedReview};
use super::tokens::MadeBot;
use super::tournaments::{Standings, TournamentList};
use super::web::{DevLoginRequest, DevLoginStatus, DevToken};
use crate::accounts::bots::PAGE as BOTS_PAGE;
use crate::accounts::bots::wire::{BotPage, BotProfile, MakeBotRequest};
use crate::accounts::tokens::scope::Scope;
use crate::accounts::tokens::wire::{CreateTokenRequest, CreatedToken, TokenList};
use crate::accounts::wire::{
    AuthCode, AuthProblem, LoginRequest, PasswordRequest, RegisterRequest, SessionBody,
};
use crate::archive::GameView;
use crate::estimate::Estimate;
use crate::hub::Hub;
use crate::protocol::{
    ErrorCode, NotificationSettings, PROTOCOL_VERSION, RoundView, TournamentView,
};
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
    /// `Authorization: Bearer`, which the route also answers without.
    OptionalBearer,
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
    /// What the summary leaves out: who may call it, what a personal token needs.
    description: Option<String>,
    auth: Auth,
    /// The personal token's scope the route needs (a login's access token has them all).
    scope: Option<Scope>,
    /// Query parameters, and path parameters that are not plain strings.
    parameters: Vec<Value>,
    request: Option<Schema>,
    /// `(status, description, body)`, errors included.
    responses: Vec<(u16, String, Body)>,
    /// `(status, name, link)`: an operation an answer's values may be given to.
    links: Vec<(u16, &'static str, Value)>,
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
            description: None,
            auth: Auth::None,
            scope: None,
            parameters: Vec::new(),
            request: None,
            responses: Vec::new(),
            links: Vec::new(),
        }
    }

    fn auth(mut self, auth: Auth) -> Self {
        self.auth = auth;
        self
    }

    fn describe(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// A personal token must hold `scope`: said in the security requirement (OpenAPI 3.1
    /// lets a requirement name roles for any scheme) and in the description.
    fn scope(mut self, scope: Scope) -> Self {
        self.scope = Some(scope);
        self
    }

    fn parameter(mut self, place: &str, name: &str, description: &str, schema: Value) -> Self {
        self.parameters.push(json!({
            "name": name, "in": place, "required": place == "path",
            "description": description, "schema": schema,
        }));
        self
    }

    fn query(self, name: &str, description: &str, schema: Value) -> Self {
        self.parameter("query", name, description, schema)
    }

    /// A query parameter the route cannot answer without.
    fn needed_query(mut self, name: &str, description: &str, schema: Value) -> Self {
        self = self.query(name, description, schema);
        if let Some(last) = self.parameters.last_mut() {
            last["required"] = Value::Bool(true);
        }
        self
    }

    /// A path parameter that is not any string.
    fn path(self, name: &str, description: &str, schema: Value) -> Self {
        self.parameter("path", name, description, schema)
    }

    fn request(mut self, schema: Schema) -> Self {
        self.request = Some(schema);
        self
    }

    fn answer(mut self, status: u16, description: impl Into<String>, body: Body) -> Self {
        self.responses.push((status, description.into(), body));
        self
    }

    /// Answer `status` gives `operation` (`method path`) its `parameters`, each a runtime
    /// expression such as `$response.body#/id`.
    fn link(mut self, status: u16, name: &'static str, operation: &str, parameters: Value) -> Self {
        let link = json!({"operationId": operation, "parameters": parameters});
        self.links.push((status, name, link));
        self
    }

    /// A refusal in the `{"error": ...}` shape.
    fn refusal(self, g: &mut SchemaGenerator, status: u16, description: &str) -> Self {
        let problem = Body::Json(g.subschema_for::<Problem>());
        self.answer(status, description, problem)
    }

    /// Account refusals (`AuthProblem`): each status with the codes of `codes` that have
    /// it.
    fn codes(mut self, g: &mut SchemaGenerator, codes: &[AuthCode]) -> Self {
        let mut by_status: BTreeMap<u16, Vec<String>> = BTreeMap::new();
        for code in codes {
            by_status
                .entry(status_of(*code).as_u16())
                .or_default()
                .push(code_name(code));
        }
        for (status, names) in by_status {
            let description = match names.as_slice() {
                [one] => format!("Refused; `code` is {one}."),
                _ => format!("Refused; `code` is one of {}.", names.join(", ")),
            };
            let body = Body::Json(g.subschema_for::<AuthProblem>());
            self.responses.push((status, description, body));
        }
        self
    }

    /// The account routes' refusals: every code, each under its status.
    fn auth_refusals(self, g: &mut SchemaGenerator) -> Self {
        let codes = auth_codes(g);
        self.codes(g, &codes)
    }

    /// A refusal with the WebSocket's codes (`CodedProblem`).
    fn coded(
        self,
        g: &mut SchemaGenerator,
        status: u16,
        codes: &[ErrorCode],
        description: &str,
    ) -> Self {
        let names: Vec<String> = codes.iter().map(code_name).collect();
        let description = format!("{description} `code`: {}.", names.join(", "));
        let body = Body::Json(g.subschema_for::<CodedProblem>());
        self.answer(status, description, body)
    }

    fn to_value(&self) -> Value {
        let mut op = json!({
            "operationId": format!("{} {}", self.method, self.path),
            "tags": [self.tag],
            "summary": self.summary,
            "responses": {},
        });
        let given = |name: &str| self.parameters.iter().any(|p| p["name"] == name);
        let mut parameters: Vec<Value> = path_parameters(self.path)
            .into_iter()
            .filter(|p| !given(p["name"].as_str().unwrap_or_default()))
            .collect();
        parameters.extend(self.parameters.iter().cloned());
        if !parameters.is_empty() {
            op["parameters"] = Value::Array(parameters);
        }
        let mut description = self.description.clone().unwrap_or_default();
        if let Some(scope) = self.scope {
            let need = format!(
                "A personal token needs the `{}` scope (client-protocol/accounts.md#scopes).",
                scope.as_str()
            );
            description = [description, need].join(" ").trim().to_string();
        }
        if !description.is_empty() {
            op["description"] = Value::String(description);
        }
        if let Some(schema) = &self.request {
            op["requestBody"] = json!({
                "required": true,
                "content": {"application/json": {"schema": schema}},
            });
        }
        let roles: Vec<&str> = self.scope.iter().map(|s| s.as_str()).collect();
        match self.auth {
            Auth::None => {}
            Auth::Bearer => op["security"] = json!([{ "bearer": roles }]),
            Auth::OptionalBearer => op["security"] = json!([{ "bearer": roles }, {}]),
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
        for (status, name, link) in &self.links {
            op["responses"][status.to_string()]["links"][*name] = link.clone();
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

/// A code's wire name, in backquotes.
fn code_name(code: &impl serde::Serialize) -> String {
    let name = serde_json::to_value(code).unwrap_or_default();
    format!("`{}`", name.as_str().unwrap_or_default())
}

/// Every account refusal code, in the order of their declaration.
fn auth_codes(g: &mut SchemaGenerator) -> Vec<AuthCode> {
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
    names
        .filter_map(|name| serde_json::from_value::<AuthCode>(name.clone()).ok())
        .collect()
}

fn json_of<T: JsonSchema>(g: &mut SchemaGenerator) -> Body {
    Body::Json(g.subschema_for::<T>())
}

const TEXT: &str = "text/plain";
const SGF: &str = "application/x-go-sgf";

/// The WebSocket, the probes, the metrics and the documents.
fn service() -> Vec<Operation> {
    vec![
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
    ]
}

fn operations(g: &mut SchemaGenerator) -> Vec<Operation> {
    let games = "games";
    let mut ops = service();
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
        .scope(Scope::Play)
        .describe("A bot account's personal token needs `bot` instead.")
        .request(g.subschema_for::<NewReview>())
        .answer(201, "Saved.", json_of::<SavedReview>(g))
        .refusal(
            g,
            400,
            "Not that JSON object, or an SGF that is not one readable game.",
        )
        .refusal(g, 401, "No token, or a refused one.")
        .refusal(g, 403, "A personal token without the scope.")
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
    ops.extend(accounts(g));
    ops.extend(self_service(g));
    ops.extend(notices(g));
    ops.extend(push(g));
    ops.extend(tournaments(g));
    ops.extend(tournament_exports(g));
    ops
}

/// The account routes (`net/auth.rs`), each with the account refusals.
fn accounts(g: &mut SchemaGenerator) -> Vec<Operation> {
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
    accounts.into_iter().map(|op| op.auth_refusals(g)).collect()
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

/// Personal API tokens and bot accounts (`net/tokens.rs`): their refusals are the account
/// routes', each route's own codes listed.
fn self_service(g: &mut SchemaGenerator) -> Vec<Operation> {
    use AuthCode as C;
    // Who the bearer is; then that it is a login's access token; then a JSON body.
    const CALLER: [AuthCode; 3] = [C::CrossOrigin, C::Unauthorized, C::Unavailable];
    const SESSION: [AuthCode; 4] = [
        C::CrossOrigin,
        C::Unauthorized,
        C::Unavailable,
        C::SessionRequired,
    ];
    const BODY: [AuthCode; 3] = [C::UnsupportedMediaType, C::TooLarge, C::BadRequest];
    const LOGIN_ONLY: &str = "With a login's access token; a personal token is refused \
        (`session_required`), so that a leaked token cannot mint others or change its account.";
    let (tokens, bots) = ("tokens", "bots");
    let list = Operation::new(
        "get",
        "/api/tokens",
        tokens,
        "The caller's personal API tokens",
    )
    .auth(Auth::Bearer)
    .describe(LOGIN_ONLY)
    .answer(
        200,
        "The tokens, oldest first, without their secrets.",
        json_of::<TokenList>(g),
    )
    .codes(g, &SESSION);
    let create_codes = [
        C::InvalidTokenName,
        C::InvalidScope,
        C::ScopeNotAllowed,
        C::InvalidExpiry,
        C::Forbidden,
        C::TooManyTokens,
    ];
    let create = Operation::new("post", "/api/tokens", tokens, "Create a personal API token")
        .auth(Auth::Bearer)
        .describe(format!("{LOGIN_ONLY} Guests hold none (`forbidden`)."))
        .request(g.subschema_for::<CreateTokenRequest>())
        .answer(
            201,
            "Created; the answer is the only time the whole token is shown.",
            json_of::<CreatedToken>(g),
        )
        .link(
            201,
            "revoke",
            "delete /api/tokens/{id}",
            json!({"id": "$response.body#/id"}),
        )
        .codes(g, &[&SESSION[..], &BODY, &create_codes].concat());
    let revoke = Operation::new(
        "delete",
        "/api/tokens/{id}",
        tokens,
        "Revoke a personal API token",
    )
    .auth(Auth::Bearer)
    .describe(format!(
        "{LOGIN_ONLY} The token's WebSocket connections end on every node."
    ))
    .path(
        "id",
        "The token's id: `tgn_` and 12 hex digits.",
        json!({"type": "string"}),
    )
    .answer(204, "Revoked.", Body::Empty)
    .codes(g, &[&SESSION[..], &[C::UnknownToken]].concat());
    let make_bot_codes = [
        C::ConfirmationRequired,
        C::Forbidden,
        C::NotAPlayer,
        C::RatedGamesPlayed,
    ];
    let make_bot = Operation::new(
        "post",
        "/api/account/bot",
        bots,
        "Turn the caller's account into a bot account, for good",
    )
    .auth(Auth::Bearer)
    .describe(format!(
        "{LOGIN_ONLY} Only a player's account with no rated game may become a bot; its \
        connections end and come back as the bot."
    ))
    .request(g.subschema_for::<MakeBotRequest>())
    .answer(200, "The account as it is now.", json_of::<MadeBot>(g))
    .codes(g, &[&SESSION[..], &BODY, &make_bot_codes].concat());
    let profile_codes = [C::InsufficientScope, C::NotABot, C::InvalidBotProfile];
    let profile = Operation::new(
        "put",
        "/api/account/bot-profile",
        bots,
        "Set a bot account's profile for the bots page",
    )
    .auth(Auth::Bearer)
    .scope(Scope::Bot)
    .describe("With a login's access token or the bot's own personal token.")
    .request(g.subschema_for::<BotProfile>())
    .answer(200, "The profile as stored.", json_of::<BotProfile>(g))
    .codes(g, &[&CALLER[..], &BODY, &profile_codes].concat());
    let page = Operation::new("get", "/api/bots", bots, "Bot accounts, a page at a time")
        .describe(
            "Public. Enabled bot accounts by id, each with whether it is connected now and \
            its profile if it set one. Other query parameters are ignored.",
        )
        .query(
            "after",
            &format!("The `next` of the page before (its last id); {BOTS_PAGE} bots a page."),
            json!({"type": "string"}),
        )
        .answer(200, "A page of bots.", json_of::<BotPage>(g))
        .codes(g, &[C::Unavailable]);
    vec![list, create, revoke, make_bot, profile, page]
}

/// The notification settings over HTTP and the links mailed with notices
/// (`net/notices.rs`).
fn notices(g: &mut SchemaGenerator) -> Vec<Operation> {
    use ErrorCode as E;
    let tag = "notifications";
    let settings = |g: &mut SchemaGenerator| json_of::<NotificationSettings>(g);
    let unauthorized = "No token, or a refused one.";
    let read = Operation::new(
        "get",
        "/api/notifications",
        tag,
        "The caller's notification settings",
    )
    .auth(Auth::Bearer)
    .describe("Any token may read them.")
    .answer(200, "The settings.", settings(g))
    .coded(g, 401, &[E::Unauthorized], unauthorized)
    .coded(g, 503, &[E::Unavailable], "The store failed.");
    let change = Operation::new(
        "put",
        "/api/notifications",
        tag,
        "Change the caller's notification settings",
    )
    .auth(Auth::Bearer)
    .scope(Scope::Play)
    .describe(
        "What the WebSocket's `set_notification_settings` does: a new address is unverified, \
        and a link is mailed to it. A bot account's personal token needs `bot` instead.",
    )
    .request(g.subschema_for::<Change>())
    .answer(200, "The settings as they now are.", settings(g))
    .coded(
        g,
        400,
        &[E::BadRequest, E::InvalidAddress],
        "Not that JSON object, or an address that is not a bare mail address.",
    )
    .coded(g, 401, &[E::Unauthorized], unauthorized)
    .coded(
        g,
        403,
        &[E::InsufficientScope],
        "A personal token without the scope.",
    )
    .coded(
        g,
        413,
        &[E::TooLarge],
        &format!("A body over {} bytes.", super::notices::MAX_BODY_BYTES),
    )
    .coded(g, 503, &[E::Unavailable], "The store failed.");
    let mut ops = vec![read, change];
    for (method, path, summary, done) in [
        (
            "get",
            "/notify/unsubscribe",
            "Follow a mail's link that turns a kind of notice's mail off",
            "Done: the kinds are no longer mailed.",
        ),
        (
            "post",
            "/notify/unsubscribe",
            "One-click unsubscribe (RFC 8058), as mail programs send it",
            "Done: the kinds are no longer mailed.",
        ),
        (
            "get",
            "/notify/verify",
            "Follow the link mailed to a new address to confirm it",
            "Confirmed: notices are mailed to the address.",
        ),
    ] {
        ops.push(
            Operation::new(method, path, tag, summary)
                .describe(
                    "No login: the token is signed. Following a link twice does what the \
                    first click did.",
                )
                .needed_query(
                    "token",
                    "The token the mail's link carries, signed by the server.",
                    json!({"type": "string"}),
                )
                .answer(200, done, Body::Text(TEXT))
                .answer(
                    400,
                    "No token, or one changed or not made by this server.",
                    Body::Text(TEXT),
                )
                .answer(
                    409,
                    "A verification link for an address the account no longer has: nothing \
                    changed.",
                    Body::Text(TEXT),
                )
                .answer(503, "The store failed.", Body::Text(TEXT)),
        );
    }
    ops
}

/// Web Push: the server's key and a player's browser subscriptions (`net/push.rs`).
fn push(g: &mut SchemaGenerator) -> Vec<Operation> {
    use ErrorCode as E;
    let tag = "notifications";
    let off = "This server sends no push notifications (no `[push]`).";
    let key = Operation::new("get", "/api/push/key", tag, "The server's VAPID public key")
        .describe(
            "Public. What a browser subscribes with (`applicationServerKey` of \
            `PushManager.subscribe`).",
        )
        .answer(200, "The key.", json_of::<PushKey>(g))
        .coded(g, 404, &[E::NotFound], off);
    let common = |op: Operation, g: &mut SchemaGenerator| {
        op.auth(Auth::Bearer)
            .scope(Scope::Play)
            .answer(204, "Done.", Body::Empty)
            .coded(g, 401, &[E::Unauthorized], "No token, or a refused one.")
            .coded(
                g,
                403,
                &[E::InsufficientScope],
                "A personal token without the scope.",
            )
            .coded(
                g,
                413,
                &[E::TooLarge],
                &format!("A body over {} bytes.", super::notices::MAX_BODY_BYTES),
            )
            .coded(g, 503, &[E::Unavailable], "The store failed.")
    };
    let subscribe = Operation::new(
        "post",
        "/api/push/subscriptions",
        tag,
        "Subscribe a browser to the caller's notices",
    )
    .describe(
        "The body is the browser's `PushSubscription.toJSON()`. The same endpoint again \
        replaces its keys (and its account: a browser is one account's at a time). Each \
        notice of a kind the caller pushes (`push_kinds` of the notification settings) is \
        then sent to it. A bot account's personal token needs `bot` instead.",
    )
    .request(g.subschema_for::<NewSubscription>())
    .coded(
        g,
        400,
        &[E::BadRequest, E::InvalidSubscription],
        "Not that JSON object, or a subscription the server cannot use.",
    )
    .coded(g, 404, &[E::NotFound], off)
    .coded(
        g,
        409,
        &[E::LimitReached],
        "The caller has `push.max_subscriptions` browsers already.",
    );
    let unsubscribe = Operation::new(
        "delete",
        "/api/push/subscriptions",
        tag,
        "Forget one of the caller's browser subscriptions",
    )
    .describe("By its endpoint. A bot account's personal token needs `bot` instead.")
    .request(g.subschema_for::<OldSubscription>())
    .coded(g, 400, &[E::BadRequest], "Not that JSON object.")
    .coded(
        g,
        404,
        &[E::NotFound],
        "No such subscription of the caller's, or no push on this server.",
    );
    vec![key, common(subscribe, g), common(unsubscribe, g)]
}

/// Tournaments, read-only (`net/tournaments.rs`): anyone may read, a director sees each
/// board's pairing costs.
fn tournaments(g: &mut SchemaGenerator) -> Vec<Operation> {
    let tag = "tournaments";
    let costs = "Anyone may read; a bearer token of one of the tournament's directors adds \
        each board's `costs`.";
    let one = |op: Operation, g: &mut SchemaGenerator, unread: &str, missing: &str| {
        op.auth(Auth::OptionalBearer)
            .scope(Scope::TournamentDirect)
            .describe(costs)
            .refusal(g, 400, unread)
            .refusal(g, 401, "A token was sent and refused.")
            .refusal(g, 404, missing)
            .refusal(g, 503, "The store failed.")
    };
    let (id, tournament) = ("The id cannot be read.", "No such tournament.");
    let round = Operation::new(
        "get",
        "/api/tournaments/{id}/rounds/{round}",
        tag,
        "A round's pairings",
    )
    .path(
        "round",
        "The round's number, from 1.",
        json!({"type": "integer", "minimum": 1, "maximum": u8::MAX}),
    )
    .answer(
        200,
        "The round, as in `round_started`.",
        json_of::<RoundView>(g),
    );
    vec![
        Operation::new("get", "/api/tournaments", tag, "The newest tournaments")
            .answer(
                200,
                format!("The newest {}, newest first.", crate::tournaments::LISTED),
                json_of::<TournamentList>(g),
            )
            .refusal(g, 503, "The store failed."),
        one(
            Operation::new("get", "/api/tournaments/{id}", tag, "A tournament").answer(
                200,
                "The whole tournament, as in the `tournament` message.",
                json_of::<TournamentView>(g),
            ),
            g,
            id,
            tournament,
        ),
        one(
            Operation::new(
                "get",
                "/api/tournaments/{id}/standings",
                tag,
                "A tournament's standings and crosstable",
            )
            .answer(
                200,
                "The standings, as in `standings_changed`.",
                json_of::<Standings>(g),
            ),
            g,
            id,
            tournament,
        ),
        one(
            round,
            g,
            "The id or the round cannot be read.",
            "No such tournament, or the round is not paired.",
        ),
    ]
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
            "description": "The HTTP routes of a tengen server: accounts, personal API tokens, bot accounts, the game archive and its SGF, ratings, reviews, tournaments, notification settings, the links mailed with notices and Web Push subscriptions, operations. Play, the lobby, referees and admins use the WebSocket (`/ws`), described by the AsyncAPI document at /api/asyncapi.json. The prose is client-protocol/.",
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
