//! The machine-readable contract: a JSON Schema for every client message and every server
//! frame, and the AsyncAPI 3 document that gathers them, all generated from the serde
//! types of this module so that they cannot drift from what the server accepts and sends.
//! `client-protocol/schema/` keeps a copy that a test holds equal (`tengen schema` writes
//! it); the server serves the AsyncAPI document at `/api/asyncapi.json`.
//!
//! Types whose JSON comes from a hand-written `Serialize`/`Deserialize` (a vertex is a
//! string, a result is SGF notation) describe themselves here by hand, beside the frames
//! whose flat wire shape (`id`, `game_id` and `seq` beside an enum's fields) no derive
//! can see.

use std::borrow::Cow;

use schemars::generate::SchemaSettings;
use schemars::transform::{RecursiveTransform, Transform};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Map, Value, json};

use super::PROTOCOL_VERSION;
use super::client::{GameAction, LobbyMsg};
use super::event::GameEvent;
use super::request::RequestId;
use super::server::ServerMsg;
use super::tournament::TournamentAction;
use crate::rating::Rank;
use crate::rules::{GameResult, HalfPoints, Move, Vertex};

/// One letter (A–Z without I, either case) and a row from 1 to 25, as `Vertex` reads it.
const VERTEX_PATTERN: &str = "[A-HJ-Za-hj-z](0?[1-9]|1[0-9]|2[0-5])";

impl JsonSchema for Vertex {
    fn schema_name() -> Cow<'static, str> {
        "Vertex".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A GTP vertex: the column letter (no I) and the row from the bottom, e.g. `D4`.",
            "type": "string",
            "pattern": format!("^{VERTEX_PATTERN}$"),
        })
    }
}

impl JsonSchema for Move {
    fn schema_name() -> Cow<'static, str> {
        "Move".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A vertex to play on, or `pass`.",
            "type": "string",
            "pattern": format!("^([Pp][Aa][Ss][Ss]|{VERTEX_PATTERN})$"),
        })
    }
}

impl JsonSchema for Rank {
    fn schema_name() -> Cow<'static, str> {
        "Rank".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A Go rank: 30k (weakest) to 1k, then 1d to 9d.",
            "type": "string",
            "pattern": "^([1-9]|[12][0-9]|30)[kK]$|^[1-9][dD]$",
        })
    }
}

impl JsonSchema for HalfPoints {
    fn schema_name() -> Cow<'static, str> {
        "Points".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Points in steps of a half.",
            "type": "number",
            "multipleOf": 0.5,
            "minimum": -f64::from(HalfPoints::MAX_POINTS),
            "maximum": f64::from(HalfPoints::MAX_POINTS),
        })
    }
}

impl JsonSchema for GameResult {
    fn schema_name() -> Cow<'static, str> {
        "GameResult".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "SGF `RE` notation: `B+1.5`, `W+R` (resignation), `B+T` (time), `W+F` (forfeit), `0` (draw) or `Void`.",
            "type": "string",
            "pattern": "^(0|Void|[BW]\\+(R|T|F|[0-9]+(\\.5)?))$",
        })
    }
}

/// A komi: points as [`HalfPoints`], within the narrower range settings take.
pub(super) fn komi(_: &mut SchemaGenerator) -> Schema {
    let most = f64::from(super::settings::MAX_KOMI_POINTS);
    json_schema!({
        "description": "Komi in points, in steps of a half.",
        "type": ["number", "null"],
        "multipleOf": 0.5,
        "minimum": -most,
        "maximum": most,
    })
}

/// Which dialect of JSON Schema a document is written in.
#[derive(Clone, Copy)]
enum Dialect {
    /// The standalone schema files: JSON Schema 2020-12, definitions under `$defs`.
    Standalone,
    /// Inside the AsyncAPI document: its default schema format (a superset of draft-07),
    /// definitions under `components.schemas`.
    AsyncApi,
}

/// The messages of one direction, one schema per `type`, each as it is on the wire.
struct Messages {
    /// `(type, schema)` in the order of the enums.
    each: Vec<(String, Value)>,
    /// The definitions the schemas refer to.
    definitions: Map<String, Value>,
}

fn generator(dialect: Dialect) -> SchemaGenerator {
    match dialect {
        Dialect::Standalone => SchemaSettings::draft2020_12(),
        Dialect::AsyncApi => {
            let mut settings = SchemaSettings::draft07();
            settings.definitions_path = "#/components/schemas".into();
            settings.meta_schema = None;
            settings
        }
    }
    .with_transform(RecursiveTransform(bound_integers))
    .into_generator()
}

/// Gives an integer of a fixed width its bounds: the `format` schemars writes (`uint64`,
/// `int32`) is no JSON Schema keyword, so without `minimum` and `maximum` a generator
/// draws numbers the server cannot read.
pub fn bound_integers(schema: &mut Schema) {
    let (least, most): (i64, u64) = match schema.get("format").and_then(Value::as_str) {
        Some("uint8") => (0, u64::from(u8::MAX)),
        Some("uint16") => (0, u64::from(u16::MAX)),
        Some("uint32") => (0, u64::from(u32::MAX)),
        Some("uint64") => (0, u64::MAX),
        Some("int8") => (i64::from(i8::MIN), i8::MAX.unsigned_abs().into()),
        Some("int16") => (i64::from(i16::MIN), i16::MAX.unsigned_abs().into()),
        Some("int32") => (i64::from(i32::MIN), i32::MAX.unsigned_abs().into()),
        Some("int64") => (i64::MIN, i64::MAX.unsigned_abs()),
        _ => return,
    };
    if schema.get("minimum").is_none() {
        schema.insert("minimum".into(), least.into());
    }
    if schema.get("maximum").is_none() {
        schema.insert("maximum".into(), most.into());
    }
}

/// The variants of an internally tagged enum as separate object schemas, each with
/// `fields` added: `(name, schema, required)`.
fn variants<T: JsonSchema>(
    generator: &mut SchemaGenerator,
    fields: &[(&str, Value, bool)],
) -> Vec<(String, Value)> {
    // Called directly, `json_schema` skips the generator's transforms: run them here.
    let mut schema = T::json_schema(generator);
    RecursiveTransform(bound_integers).transform(&mut schema);
    let Value::Object(mut whole) = schema.to_value() else {
        unreachable!("an enum's schema is an object");
    };
    let Some(Value::Array(variants)) = whole.remove("oneOf") else {
        unreachable!("an internally tagged enum's schema is a oneOf");
    };
    variants
        .into_iter()
        .map(|mut variant| {
            let name = variant["properties"]["type"]["const"]
                .as_str()
                .unwrap_or_else(|| unreachable!("every variant has a constant `type`"))
                .to_owned();
            for (field, schema, required) in fields {
                variant["properties"][*field] = schema.clone();
                if *required && let Some(Value::Array(list)) = variant.get_mut("required") {
                    list.push(json!(field));
                }
            }
            (name, variant)
        })
        .collect()
}

fn client_messages(dialect: Dialect) -> Messages {
    let mut g = generator(dialect);
    let id = g.subschema_for::<Option<RequestId>>().to_value();
    let game_id = json!({"type": "string", "description": "The game the action is for."});
    let tournament_id =
        json!({"type": "string", "description": "The tournament the request is for."});
    let mut each = variants::<LobbyMsg>(&mut g, &[("id", id.clone(), false)]);
    each.extend(variants::<GameAction>(
        &mut g,
        &[("id", id.clone(), false), ("game_id", game_id, true)],
    ));
    each.extend(variants::<TournamentAction>(
        &mut g,
        &[("id", id, false), ("tournament_id", tournament_id, true)],
    ));
    Messages {
        each,
        definitions: g.take_definitions(true),
    }
}

fn server_frames(dialect: Dialect) -> Messages {
    let mut g = generator(dialect);
    let mut each = variants::<ServerMsg>(&mut g, &[]);
    each.extend(variants::<GameEvent>(
        &mut g,
        &[
            ("game_id", json!({"type": "string"}), true),
            (
                "seq",
                json!({"type": "integer", "minimum": 0, "description": "The event's number in its game, from 1."}),
                true,
            ),
        ],
    ));
    Messages {
        each,
        definitions: g.take_definitions(true),
    }
}

/// One direction as a standalone JSON Schema 2020-12 document: any one of its messages.
fn standalone(title: &str, messages: Messages) -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "oneOf": messages.each.into_iter().map(|(_, schema)| schema).collect::<Vec<_>>(),
        "$defs": messages.definitions,
    })
}

/// Every message a client may send, as the server reads it.
pub fn client_schema() -> Value {
    standalone(
        "A message from a client to the tengen server",
        client_messages(Dialect::Standalone),
    )
}

/// Every frame the server sends: replies, lobby messages and game events.
pub fn server_schema() -> Value {
    standalone(
        "A frame from the tengen server to a client",
        server_frames(Dialect::Standalone),
    )
}

/// The AsyncAPI 3 document of the WebSocket protocol: one channel (`/ws`), one message per
/// `type` in each direction, keyed `client.TYPE` and `server.TYPE` (some types, `chat`
/// for one, go both ways).
pub fn asyncapi() -> Value {
    let mut channel_messages = Map::new();
    let mut messages = Map::new();
    let mut schemas = Map::new();
    let mut operation = |prefix: &str, direction: Messages| -> Vec<Value> {
        schemas.extend(direction.definitions);
        let mut refs = Vec::new();
        for (name, payload) in direction.each {
            let key = format!("{prefix}.{name}");
            let description = payload.get("description").cloned();
            let mut message = json!({"name": name, "payload": payload});
            if let Some(description) = description {
                message["summary"] = description;
            }
            messages.insert(key.clone(), message);
            channel_messages.insert(
                key.clone(),
                json!({"$ref": format!("#/components/messages/{key}")}),
            );
            refs.push(json!({"$ref": format!("#/channels/play/messages/{key}")}));
        }
        refs
    };
    let received = operation("client", client_messages(Dialect::AsyncApi));
    let sent = operation("server", server_frames(Dialect::AsyncApi));
    json!({
        "asyncapi": "3.0.0",
        "info": {
            "title": "tengen WebSocket protocol",
            "version": PROTOCOL_VERSION.to_string(),
            "description": "One JSON object per text frame, told apart by its `type`. The prose, with examples, is client-protocol/README.md.",
        },
        "defaultContentType": "application/json",
        "channels": {
            "play": {
                "address": "/ws",
                "title": "The WebSocket",
                "description": "Connect with `?token=` or send `auth` first; every request may carry an `id`, echoed in its reply.",
                "messages": channel_messages,
            }
        },
        "operations": {
            "receiveClientMessage": {
                "action": "receive",
                "channel": {"$ref": "#/channels/play"},
                "summary": "A request from a client.",
                "messages": received,
            },
            "sendServerFrame": {
                "action": "send",
                "channel": {"$ref": "#/channels/play"},
                "summary": "A reply, a lobby update or a game event.",
                "messages": sent,
            },
        },
        "components": {
            "messages": messages,
            "schemas": schemas,
        },
    })
}

/// A generated document: its file name and the function that makes it.
pub type Document = (&'static str, fn() -> Value);

/// The files of `client-protocol/schema/`, each with the document it holds.
pub const FILES: &[Document] = &[
    ("asyncapi.json", asyncapi),
    ("client.json", client_schema),
    ("server.json", server_schema),
];

/// A document as it is written to its file: pretty, with a final newline.
pub fn to_file_text(document: &Value) -> String {
    let mut text = serde_json::to_string_pretty(document).unwrap_or_default();
    text.push('\n');
    text
}
