//! The protocol documentation is checked against the wire types.
//!
//! Every fenced block in `client-protocol/*.md` whose info string is `json client` holds
//! one or more client → server frames; each must pass `tengen::protocol::decode`, and
//! re-serialising the decoded message must give back every documented field unchanged
//! (the server fills in defaults, so only the documented fields are compared). Every
//! `json server` block holds server → client frames; each must pass
//! `tengen::protocol::decode_server` as a known message or (with `game_id` and `seq`) a
//! game event, and re-serialising it must give back exactly the documented JSON (a
//! renamed, missing or stale field fails). A `json client refused` block shows frames the
//! server must refuse; `decode` must refuse each of them.
//!
//! Coverage is taken from the types themselves (serde's "unknown variant … expected one
//! of …" lists every wire name of an enum), so a message, event, error code, phase or time
//! system added to the code without an example here makes this test fail.
//!
//! The tables that catalogue names are held to the types both ways: README.md's "Every
//! message" (the client's and the server's message types), game.md's event table and
//! snapshot table (the snapshot's fields read from its `Deserialize`, which lists them
//! all), and the `## code` sections of errors.md must each name every variant or field
//! the types define and nothing else; the failure says which name is missing where. Links
//! between the docs must reach a file and a heading, and docs/RULES.md §8 may name only
//! what the types define or these docs document.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tengen::archive::{GameView, KibitzLine, ListedGame, MoveView};
use tengen::clock::{LagSettings, TimeControl};
use tengen::protocol::{
    ChatLine, ClientMsg, ColorChoice, ErrorCode, GameAction, GameEvent, HandicapPlacement,
    LobbyMsg, Phase, Role, Seat, ServerFrame, ServerMsg, Snapshot, Speed, TournamentAction, decode,
    decode_server,
};
use tengen::room::Moment;
use tengen::rules::{Color, GameResult, IllegalMove, KoRule, Ruleset, Vertex};
use tengen::standings::view::{Leaderboard, Profile};

#[path = "protocol_docs/fields.rs"]
mod fields;
#[path = "protocol_docs/markdown.rs"]
mod markdown;

use fields::field_names;

/// The files a client author is promised; each must exist and hold examples.
const REQUIRED_FILES: &[&str] = &[
    "README.md",
    "lobby.md",
    "game.md",
    "scoring.md",
    "competition.md",
    "clocks.md",
    "bots.md",
    "errors.md",
    "ratings.md",
    "notifications.md",
];

/// Fewer examples than this means the docs were emptied or not found.
const MIN_CLIENT_EXAMPLES: usize = 50;
const MIN_SERVER_EXAMPLES: usize = 180;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Client,
    /// A client frame shown because the server refuses it (`json client refused`).
    Refused,
    Server,
}

/// One documented frame.
#[derive(Debug)]
struct Example {
    file: String,
    /// Line of the block's opening fence.
    line: usize,
    direction: Direction,
    /// The frame exactly as written.
    text: String,
    value: Value,
}

impl Example {
    fn at(&self) -> String {
        format!("{}:{} ({:?})", self.file, self.line, self.direction)
    }
}

fn docs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("client-protocol")
}

/// Every `*.md` file of the docs, by name.
fn doc_files() -> BTreeMap<String, String> {
    let dir = docs_dir();
    let entries =
        std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    let mut files = BTreeMap::new();
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            files.insert(name, text);
        }
    }
    files
}

/// Where the reader of a markdown file is.
enum Fence {
    Outside,
    /// Inside an example block that started on `line`.
    Example {
        line: usize,
        direction: Direction,
        body: String,
    },
    /// Inside some other fenced block (```text, plain ```json, …): not an example.
    Other,
}

/// The `json client` and `json server` blocks of one file, split into frames.
fn examples_in(file: &str, text: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let mut fence = Fence::Outside;
    for (i, line) in text.lines().enumerate() {
        // An opening fence may carry an info string; a closing fence is bare.
        let info = match fence {
            Fence::Outside => line.trim_start().strip_prefix("```"),
            _ => (line.trim() == "```").then_some(""),
        };
        fence = match (fence, info) {
            (Fence::Outside, None) => Fence::Outside,
            (Fence::Outside, Some(info)) => {
                let words: Vec<&str> = info.split_whitespace().collect();
                let direction = match words.as_slice() {
                    ["json", "client"] => Some(Direction::Client),
                    ["json", "client", "refused"] => Some(Direction::Refused),
                    ["json", "server"] => Some(Direction::Server),
                    ["json", other, ..] => {
                        panic!("{file}:{}: unknown example kind `json {other}`", i + 1)
                    }
                    _ => None,
                };
                match direction {
                    Some(direction) => Fence::Example {
                        line: i + 1,
                        direction,
                        body: String::new(),
                    },
                    None => Fence::Other,
                }
            }
            (Fence::Other, None) => Fence::Other,
            (Fence::Other, Some(_)) => Fence::Outside,
            (
                Fence::Example {
                    line: start,
                    direction,
                    body,
                },
                Some(_),
            ) => {
                out.extend(split_frames(file, start, direction, &body));
                Fence::Outside
            }
            (
                Fence::Example {
                    line: start,
                    direction,
                    mut body,
                },
                None,
            ) => {
                body.push_str(line);
                body.push('\n');
                Fence::Example {
                    line: start,
                    direction,
                    body,
                }
            }
        };
    }
    assert!(
        matches!(fence, Fence::Outside),
        "{file}: a fenced block is never closed"
    );
    out
}

/// A block may hold several frames, one after another (as they arrive on the wire).
fn split_frames(file: &str, line: usize, direction: Direction, body: &str) -> Vec<Example> {
    let mut frames = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(body).into_iter::<Value>();
    let mut start = 0;
    while let Some(next) = stream.next() {
        let value = next
            .unwrap_or_else(|e| panic!("{file}:{line}: the block is not valid JSON: {e}\n{body}"));
        let end = stream.byte_offset();
        frames.push(Example {
            file: file.to_string(),
            line,
            direction,
            text: body[start..end].trim().to_string(),
            value,
        });
        start = end;
    }
    assert!(!frames.is_empty(), "{file}:{line}: an empty example block");
    frames
}

fn all_examples() -> Vec<Example> {
    let files = doc_files();
    for required in REQUIRED_FILES {
        assert!(
            files.contains_key(*required),
            "client-protocol/{required} is missing"
        );
    }
    let mut all = Vec::new();
    for (name, text) in &files {
        let found = examples_in(name, text);
        if REQUIRED_FILES.contains(&name.as_str()) {
            assert!(!found.is_empty(), "client-protocol/{name} has no examples");
        }
        all.extend(found);
    }
    all
}

/// The wire names of an enum, read from serde's refusal of an unknown one.
fn wire_names<T: DeserializeOwned + std::fmt::Debug>(probe: Value) -> BTreeSet<String> {
    let err = serde_json::from_value::<T>(probe.clone())
        .expect_err("the probe must be refused")
        .to_string();
    let (_, expected) = err
        .split_once("expected")
        .unwrap_or_else(|| panic!("unexpected serde message for {probe}: {err}"));
    let names: BTreeSet<String> = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    assert!(!names.is_empty(), "no variant names in: {err}");
    names
}

const PROBE: &str = "\u{1}not-a-name";

fn tagged(tag: &str) -> Value {
    json!({ tag: PROBE })
}

fn client_types() -> BTreeSet<String> {
    let lobby = wire_names::<LobbyMsg>(tagged("type"));
    let game = wire_names::<GameAction>(tagged("type"));
    let tournament = wire_names::<TournamentAction>(tagged("type"));
    assert!(
        lobby.is_disjoint(&game) && lobby.is_disjoint(&tournament) && game.is_disjoint(&tournament),
        "a type in two families of requests"
    );
    let all: BTreeSet<String> = lobby.union(&game).chain(&tournament).cloned().collect();
    // The decoder's own list is the same one.
    let decoder: BTreeSet<String> = ClientMsg::types().map(str::to_string).collect();
    assert_eq!(all, decoder);
    all
}

fn server_types() -> BTreeSet<String> {
    wire_names::<ServerMsg>(tagged("type"))
}

fn event_types() -> BTreeSet<String> {
    wire_names::<GameEvent>(tagged("type"))
}

fn error_codes() -> BTreeSet<String> {
    wire_names::<ErrorCode>(json!(PROBE))
}

/// Two JSON values are the same message: numbers compare by value (`45` and `45.0` are
/// one number, as the server may write either), everything else exactly.
fn same(doc: &Value, wire: &Value, path: &str, subset: bool) -> Result<(), String> {
    match (doc, wire) {
        (Value::Number(a), Value::Number(b)) => {
            if a.as_f64() == b.as_f64() {
                Ok(())
            } else {
                Err(format!("{path}: documented {a}, the types give {b}"))
            }
        }
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                let Some(w) = b.get(k) else {
                    return Err(format!(
                        "{path}.{k}: documented, but the types do not produce it (renamed or removed?)"
                    ));
                };
                same(v, w, &format!("{path}.{k}"), subset)?;
            }
            if !subset && let Some(k) = b.keys().find(|k| !a.contains_key(*k)) {
                return Err(format!(
                    "{path}.{k}: the server sends it ({}), but the example leaves it out",
                    b[k]
                ));
            }
            Ok(())
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return Err(format!(
                    "{path}: documented {} items, the types give {}",
                    a.len(),
                    b.len()
                ));
            }
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                same(x, y, &format!("{path}[{i}]"), subset)?;
            }
            Ok(())
        }
        (a, b) if a == b => Ok(()),
        (a, b) => Err(format!("{path}: documented {a}, the types give {b}")),
    }
}

/// Checks one client frame; returns its `type`.
fn check_client(ex: &Example) -> String {
    let request = decode(&ex.text).unwrap_or_else(|e| {
        panic!(
            "{}: the server refuses this example with {:?}: {}\n{}",
            ex.at(),
            e.refusal.code,
            e.refusal.message,
            ex.text
        )
    });
    let mut again = serde_json::to_value(&request.msg).expect("a client message serialises");
    if let Some(id) = &request.id {
        again["id"] = serde_json::to_value(id).expect("an id serialises");
    }
    if let Err(diff) = same(&ex.value, &again, "$", true) {
        panic!("{}: {diff}\n{}", ex.at(), ex.text);
    }
    again["type"].as_str().expect("a type").to_string()
}

/// What a server frame parsed as.
enum Parsed {
    Msg(String),
    Event(String),
}

/// Reads a server frame with `decode_server`, the one decoder clients of this crate use,
/// and checks that writing it again gives exactly the documented JSON.
fn check_server(ex: &Example) -> Parsed {
    let ty = ex.value["type"]
        .as_str()
        .unwrap_or_else(|| panic!("{}: a server frame needs a string `type`", ex.at()))
        .to_string();
    let frame = decode_server(&ex.text)
        .unwrap_or_else(|e| panic!("{}: decode_server refuses it: {e}\n{}", ex.at(), ex.text));
    let parsed = match &frame {
        ServerFrame::Msg(_) => Parsed::Msg(ty),
        ServerFrame::Event(f) => {
            assert!(
                ex.value.get("seq").is_some() && ex.value.get("game_id").is_some(),
                "{}: an event without its game_id and seq",
                ex.at()
            );
            assert_eq!(f.event.kind(), ty, "{}", ex.at());
            Parsed::Event(ty)
        }
        ServerFrame::Unknown { kind, .. } => panic!("{}: unknown server type `{kind}`", ex.at()),
    };
    let again = serde_json::to_value(&frame).expect("a server frame serialises");
    if let Err(diff) = same(&ex.value, &again, "$", false) {
        panic!("{}: {diff}\n{}", ex.at(), ex.text);
    }
    parsed
}

/// Every value of `key` anywhere inside `v`.
fn values_of<'a>(v: &'a Value, key: &str, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                if k == key {
                    out.push(x);
                }
                values_of(x, key, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|x| values_of(x, key, out)),
        _ => {}
    }
}

fn strings_of(examples: &[Example], key: &str) -> BTreeSet<String> {
    let mut found = Vec::new();
    for ex in examples {
        values_of(&ex.value, key, &mut found);
    }
    found
        .into_iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

fn missing(wanted: &BTreeSet<String>, have: &BTreeSet<String>) -> Vec<String> {
    wanted.difference(have).cloned().collect()
}

#[test]
fn every_client_example_is_accepted_by_decode() {
    let examples = all_examples();
    let clients: Vec<&Example> = examples
        .iter()
        .filter(|e| e.direction == Direction::Client)
        .collect();
    assert!(
        clients.len() >= MIN_CLIENT_EXAMPLES,
        "only {} client examples (at least {MIN_CLIENT_EXAMPLES} expected)",
        clients.len()
    );
    let seen: BTreeSet<String> = clients.iter().map(|e| check_client(e)).collect();
    let absent = missing(&client_types(), &seen);
    assert!(
        absent.is_empty(),
        "client messages without an example in client-protocol/: {absent:?}"
    );
}

#[test]
fn every_refused_example_is_refused() {
    for ex in all_examples() {
        if ex.direction == Direction::Refused {
            assert!(
                decode(&ex.text).is_err(),
                "{}: the server accepts this frame shown as refused\n{}",
                ex.at(),
                ex.text
            );
        }
    }
}

#[test]
fn every_server_example_round_trips_through_the_types() {
    let examples = all_examples();
    let events = event_types();
    let servers: Vec<&Example> = examples
        .iter()
        .filter(|e| e.direction == Direction::Server)
        .collect();
    assert!(
        servers.len() >= MIN_SERVER_EXAMPLES,
        "only {} server examples (at least {MIN_SERVER_EXAMPLES} expected)",
        servers.len()
    );
    let (mut msgs, mut evs) = (BTreeSet::new(), BTreeSet::new());
    for ex in &servers {
        match check_server(ex) {
            Parsed::Msg(t) => msgs.insert(t),
            Parsed::Event(t) => evs.insert(t),
        };
    }
    let absent = missing(&server_types(), &msgs);
    assert!(
        absent.is_empty(),
        "server messages without an example: {absent:?}"
    );
    let absent = missing(&events, &evs);
    assert!(
        absent.is_empty(),
        "game events without an example (as an EventFrame with game_id and seq): {absent:?}"
    );
}

#[test]
fn every_error_code_has_an_example() {
    let examples = all_examples();
    let codes: BTreeSet<String> = examples
        .iter()
        .filter(|e| e.direction == Direction::Server && e.value["type"] == "error")
        .filter_map(|e| e.value["code"].as_str().map(str::to_string))
        .collect();
    let absent = missing(&error_codes(), &codes);
    assert!(
        absent.is_empty(),
        "error codes without an example: {absent:?}"
    );
}

/// A table of the docs that lists one kind of name the types define.
struct Catalogue {
    file: &'static str,
    /// The heading the table is under.
    heading: &'static str,
    /// What the names are, for the failure message.
    kind: &'static str,
    names: BTreeSet<String>,
    /// Every one of `names` must have a row (else the table is a part, and only what it
    /// names is checked).
    whole: bool,
    /// Rows naming the first must name, in backticks, every field of the struct the row
    /// stands for: its name, and its fields.
    within: Vec<(&'static str, &'static str, BTreeSet<String>)>,
}

impl Catalogue {
    fn new(file: &'static str, heading: &'static str, kind: &'static str) -> Catalogue {
        Catalogue {
            file,
            heading,
            kind,
            names: BTreeSet::new(),
            whole: true,
            within: Vec::new(),
        }
    }

    fn of(mut self, names: BTreeSet<String>) -> Catalogue {
        self.names = names;
        self
    }

    fn part(mut self) -> Catalogue {
        self.whole = false;
        self
    }

    fn within(
        mut self,
        row: &'static str,
        of: &'static str,
        fields: BTreeSet<String>,
    ) -> Catalogue {
        self.within.push((row, of, fields));
        self
    }

    /// What is wrong with the docs' table, one sentence per gap.
    fn problems(&self, files: &BTreeMap<String, String>) -> Vec<String> {
        let (file, heading, kind) = (self.file, self.heading, self.kind);
        let text = files.get(file).map(String::as_str).unwrap_or_default();
        let tables: Vec<markdown::Table> = markdown::tables(text)
            .into_iter()
            .filter(|t| t.heading == heading)
            .collect();
        let [table] = tables.as_slice() else {
            return vec![format!(
                "client-protocol/{file}: expected one table under the heading \"{heading}\" listing every {kind}, found {}",
                tables.len()
            )];
        };
        let at = format!(
            "client-protocol/{file}:{} (the table under \"{heading}\")",
            table.line
        );
        let mut out = Vec::new();
        let mut named = BTreeSet::new();
        for row in &table.rows {
            for name in &row.names {
                named.insert(name.clone());
                if !self.names.contains(name) {
                    out.push(format!(
                        "client-protocol/{file}:{}: `{name}` is listed as a {kind}, but the server's types have no such {kind}",
                        row.line
                    ));
                }
            }
            for (owner, of, fields) in &self.within {
                if row.names.iter().any(|n| n == owner) {
                    for field in fields {
                        if !row.text.contains(&format!("`{field}`")) {
                            out.push(format!(
                                "client-protocol/{file}:{}: the row of `{owner}` does not name `{field}`, a field of its {of}",
                                row.line
                            ));
                        }
                    }
                }
            }
        }
        if self.whole {
            for name in self.names.difference(&named) {
                out.push(format!("{at}: no row for the {kind} `{name}`"));
            }
        }
        out
    }
}

/// The tables that list what the types define, each with the names it must hold.
fn catalogues() -> Vec<Catalogue> {
    let events = event_types();
    let snapshot = field_names::<Snapshot>();
    vec![
        Catalogue::new(
            "README.md",
            "Requests outside a game",
            "request outside a game (LobbyMsg)",
        )
        .of(wire_names::<LobbyMsg>(tagged("type"))),
        Catalogue::new("README.md", "Game actions", "game action (GameAction)").of(wire_names::<
            GameAction,
        >(
            tagged("type"),
        )),
        Catalogue::new(
            "README.md",
            "Tournament requests",
            "tournament request (TournamentAction)",
        )
        .of(wire_names::<TournamentAction>(tagged("type"))),
        Catalogue::new("README.md", "Server messages", "server message (ServerMsg)")
            .of(server_types()),
        Catalogue::new("game.md", "Game events", "game event (GameEvent)").of(events.clone()),
        Catalogue::new("referee.md", "Events", "game event (GameEvent)")
            .of(events)
            .part(),
        Catalogue::new("game.md", "snapshot", "snapshot field (Snapshot)")
            .of(snapshot.clone())
            .within("black", "Seat", field_names::<Seat>())
            .within("white", "Seat", field_names::<Seat>())
            .within("chat", "ChatLine", field_names::<ChatLine>()),
        Catalogue::new(
            "competition.md",
            "In the snapshot",
            "snapshot field (Snapshot)",
        )
        .of(snapshot)
        .part(),
    ]
}

/// errors.md has a `## code` section for every error code, and no code section for a
/// code the server does not have.
fn error_sections(files: &BTreeMap<String, String>) -> Vec<String> {
    let text = files
        .get("errors.md")
        .map(String::as_str)
        .unwrap_or_default();
    let codes = error_codes();
    let is_code = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
    let sections: BTreeMap<String, usize> = markdown::headings(text)
        .into_iter()
        .filter(|h| h.level == 2 && is_code(&h.text))
        .map(|h| (h.text, h.line))
        .collect();
    let mut out = Vec::new();
    for (code, line) in &sections {
        if !codes.contains(code) {
            out.push(format!(
                "client-protocol/errors.md:{line}: a section for `{code}`, but the server's types have no such error code (ErrorCode)"
            ));
        }
    }
    for code in codes.iter().filter(|c| !sections.contains_key(*c)) {
        out.push(format!(
            "client-protocol/errors.md: no `## {code}` section for the error code (ErrorCode) `{code}`"
        ));
    }
    out
}

#[test]
fn the_docs_tables_list_every_name_the_types_define_and_no_other() {
    let files = doc_files();
    let mut problems: Vec<String> = catalogues()
        .iter()
        .flat_map(|c| c.problems(&files))
        .collect();
    problems.extend(error_sections(&files));
    assert!(
        problems.is_empty(),
        "the docs and the types disagree:\n{}",
        problems.join("\n")
    );
}

/// RULES.md §8 names messages, events, settings and codes for its reader to look up: each
/// snake_case name there must be one the server's types define or client-protocol/
/// documents, so a message that does not exist (`call_referee` once) fails.
#[test]
fn the_competition_rules_name_only_what_the_protocol_has() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/RULES.md");
    let rules = std::fs::read_to_string(&path).expect("docs/RULES.md");
    let start = rules.find("\n## 8.").expect("RULES.md has a §8");
    let end = rules[start + 1..]
        .find("\n## ")
        .map_or(rules.len(), |e| start + 1 + e);
    let first_line = rules[..start].lines().count() + 1;
    let mut known: BTreeSet<String> =
        [client_types(), server_types(), event_types(), error_codes()]
            .into_iter()
            .flatten()
            .collect();
    for text in doc_files().values() {
        known.extend(markdown::code_spans(text).into_iter().map(|(_, name)| name));
    }
    let snake = |s: &str| {
        s.contains('_')
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    };
    let unknown: Vec<String> = markdown::code_spans(&rules[start..end])
        .into_iter()
        .filter(|(_, name)| snake(name) && !known.contains(name))
        .map(|(line, name)| format!("docs/RULES.md:{}: `{name}`", first_line + line - 1))
        .collect();
    assert!(
        unknown.is_empty(),
        "RULES.md §8 names what neither the server's types nor client-protocol/ have:\n{}",
        unknown.join("\n")
    );
}

/// Every reason an illegal move can have; the match stops compiling when a rule is added.
fn illegal_move_reasons() -> BTreeSet<String> {
    let v = Vertex::new(0, 0);
    let all = [
        IllegalMove::OffBoard(v),
        IllegalMove::Occupied(v),
        IllegalMove::Suicide(v),
        IllegalMove::Ko(v),
        IllegalMove::Superko(v),
    ];
    for m in &all {
        match m {
            IllegalMove::OffBoard(_)
            | IllegalMove::Occupied(_)
            | IllegalMove::Suicide(_)
            | IllegalMove::Ko(_)
            | IllegalMove::Superko(_) => {}
        }
    }
    all.iter().map(|m| m.reason().to_string()).collect()
}

#[test]
fn every_illegal_move_reason_has_an_example() {
    let examples = all_examples();
    let reasons: BTreeSet<String> = examples
        .iter()
        .filter(|e| e.value["type"] == "error" && e.value["code"] == "illegal_move")
        .filter_map(|e| e.value["reason"].as_str().map(str::to_string))
        .collect();
    let absent = missing(&illegal_move_reasons(), &reasons);
    assert!(
        absent.is_empty(),
        "illegal-move reasons without an example: {absent:?}"
    );
}

#[test]
fn every_time_system_and_phase_appears_in_an_example() {
    let examples = all_examples();
    let systems = wire_names::<TimeControl>(tagged("system"));
    let absent = missing(&systems, &strings_of(&examples, "system"));
    assert!(
        absent.is_empty(),
        "time systems without an example: {absent:?}"
    );
    let phases = wire_names::<Phase>(json!(PROBE));
    let servers: Vec<Example> = examples
        .into_iter()
        .filter(|e| e.direction == Direction::Server)
        .collect();
    let absent = missing(&phases, &strings_of(&servers, "phase"));
    assert!(
        absent.is_empty(),
        "phases never shown in a server example: {absent:?}"
    );
}

#[test]
fn every_settings_value_is_named_in_the_text() {
    let text: String = doc_files().into_values().collect();
    let mut absent = Vec::new();
    let names = [
        wire_names::<Ruleset>(json!(PROBE)),
        wire_names::<KoRule>(json!(PROBE)),
        wire_names::<Role>(json!(PROBE)),
        wire_names::<ColorChoice>(json!(PROBE)),
        wire_names::<HandicapPlacement>(json!(PROBE)),
        wire_names::<Color>(json!(PROBE)),
        wire_names::<Speed>(json!(PROBE)),
    ];
    for name in names.iter().flatten() {
        if !text.contains(&format!("`{name}`")) {
            absent.push(name.clone());
        }
    }
    assert!(
        absent.is_empty(),
        "values never mentioned as `name` in client-protocol/: {absent:?}"
    );
}

#[test]
fn every_client_type_is_known_to_decode() {
    // A variant that `decode` does not list would be refused as unknown_type.
    for t in client_types() {
        if let Err(e) = decode(&json!({ "type": t }).to_string()) {
            assert_ne!(e.refusal.code, ErrorCode::UnknownType, "{t}");
        }
    }
    let e = decode(&json!({ "type": PROBE }).to_string()).unwrap_err();
    assert_eq!(e.refusal.code, ErrorCode::UnknownType);
}

#[test]
fn results_and_reasons_agree() {
    for ex in all_examples() {
        if ex.value["type"] != "game_ended" {
            continue;
        }
        let result = ex.value["result"].as_str().expect("a result string");
        let reason = ex.value["reason"].as_str().expect("a reason string");
        let parsed: GameResult = result
            .parse()
            .unwrap_or_else(|e| panic!("{}: {e}", ex.at()));
        // A double forfeit and an aborted game have no SGF form: each is written `Void`,
        // told apart by `reason`.
        let ok = parsed.reason() == reason
            || (result == "Void" && matches!(reason, "double_forfeit" | "aborted"));
        assert!(ok, "{}: result {result} with reason {reason}", ex.at());
        let has_score = ex.value.get("score").is_some();
        assert_eq!(
            has_score,
            reason == "score",
            "{}: `score` comes with (and only with) reason score",
            ex.at()
        );
    }
}

#[test]
fn nigiri_proofs_in_the_examples_verify() {
    let mut proofs = 0;
    for ex in all_examples() {
        let mut found = Vec::new();
        values_of(&ex.value, "nigiri", &mut found);
        for proof in found {
            let field = |k: &str| proof[k].as_str().expect("a string").to_string();
            let challenger: Color =
                serde_json::from_value(proof["challenger"].clone()).expect("a colour");
            assert!(
                tengen::lobby::nigiri::verify(
                    &field("commitment"),
                    &field("secret"),
                    &field("seed"),
                    challenger
                ),
                "{}: this nigiri proof does not verify",
                ex.at()
            );
            proofs += 1;
        }
    }
    assert!(proofs > 0, "no nigiri proof among the examples");
}

#[test]
fn links_between_the_docs_resolve() {
    let files = doc_files();
    // Links out of client-protocol/ reach the project's other docs by `../`.
    let outside = |path: &str| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        std::fs::read_to_string(&path).ok()
    };
    let mut broken = Vec::new();
    for (name, text) in &files {
        let links = text.lines().enumerate().flat_map(|(i, line)| {
            let targets = line.split("](").skip(1);
            targets.map(move |part| (i + 1, part.split(')').next().unwrap_or("")))
        });
        for (line, target) in links {
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            if file.contains("://") || !(file.is_empty() || file.ends_with(".md")) {
                continue;
            }
            let local = file.strip_prefix("./").unwrap_or(file);
            let linked = match (local, local.strip_prefix("../")) {
                ("", _) => Some(text.clone()),
                (_, Some(up)) => outside(up),
                (local, None) => files.get(local).cloned(),
            };
            match linked {
                None => broken.push(format!("client-protocol/{name}:{line}: no file {target}")),
                Some(linked)
                    if !anchor.is_empty() && !markdown::anchors(&linked).contains(anchor) =>
                {
                    broken.push(format!(
                        "client-protocol/{name}:{line}: no heading for {target}"
                    ))
                }
                Some(_) => {}
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The plain ```json blocks of a file (the HTTP bodies), with their lines.
fn plain_json_blocks(text: &str) -> Vec<(usize, Value)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut open {
            None if line.trim() == "```json" => open = Some((i + 1, String::new())),
            None => {}
            Some((start, body)) if line.trim() == "```" => {
                let value = serde_json::from_str(body)
                    .unwrap_or_else(|e| panic!("archive.md:{start}: not JSON: {e}"));
                blocks.push((*start, value));
                open = None;
            }
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    blocks
}

/// Reads `value` as `T` and writes it back: the documented JSON must be exactly what the
/// server's archive types produce.
fn round_trip<T: DeserializeOwned + serde::Serialize>(at: &str, value: &Value) -> T {
    let typed: T = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("{at}: not what the server writes: {e}"));
    let again = serde_json::to_value(&typed).expect("serialises");
    if let Err(diff) = same(value, &again, "$", false) {
        panic!("{at}: {diff}");
    }
    typed
}

/// Replays a record's events through the live game, as the room would have decided them:
/// every event a player's request causes must be what the game decides for that request,
/// so a record cannot show an ending the rules do not allow.
fn replay(at: &str, record: &GameView) {
    use tengen::room::LiveGame;
    let events: Vec<GameEvent> = record.events.iter().map(|f| f.event.clone()).collect();
    let (first, rest) = events.split_first().expect("a record has events");
    let moment = Moment::default();
    let mut game = LiveGame::create(first, moment, LagSettings::default())
        .unwrap_or_else(|e| panic!("{at}: event 1 does not create a game: {e}"));
    let mut i = 0;
    while i < rest.len() {
        let request = match &rest[i] {
            GameEvent::MovePlayed {
                move_number,
                color,
                vertex,
                ..
            } => Some((
                *color,
                GameAction::Play {
                    move_number: *move_number,
                    vertex: *vertex,
                },
            )),
            GameEvent::DeadMarked {
                by, vertex, dead, ..
            } => Some((
                *by,
                GameAction::MarkDead {
                    vertex: *vertex,
                    dead: *dead,
                },
            )),
            GameEvent::ScoreAccepted { by } => {
                Some((*by, GameAction::AcceptScore { marks_seq: None }))
            }
            GameEvent::GameEnded { .. } => {
                panic!(
                    "{at}: the game ends at seq {} without a request that ends it",
                    i + 2
                )
            }
            _ => None,
        };
        let caused = match request {
            None => vec![rest[i].clone()],
            Some((who, action)) => {
                let decided = game
                    .decide(who, &action, moment)
                    .unwrap_or_else(|e| {
                        panic!("{at}: seq {}: the server refuses {action:?}: {e}", i + 2)
                    })
                    .events;
                let logged = rest.get(i..i + decided.len()).unwrap_or_default();
                let kinds = |es: &[GameEvent]| es.iter().map(GameEvent::kind).collect::<Vec<_>>();
                assert_eq!(
                    kinds(&decided),
                    kinds(logged),
                    "{at}: seq {}: {action:?} by {who} causes other events than the record shows",
                    i + 2
                );
                for (d, l) in decided.iter().zip(logged) {
                    if let GameEvent::GameEnded { .. } = d {
                        assert_eq!(d, l, "{at}: the record's ending is not the count");
                    }
                }
                logged.to_vec()
            }
        };
        for event in caused {
            i += 1;
            game.apply(&event, i as u64 + 1, moment)
                .unwrap_or_else(|e| panic!("{at}: {e}"));
        }
    }
    assert_eq!(
        game.result().map(|r| r.to_string()),
        record.result,
        "{at}: the record's result is not the replay's"
    );
}

#[test]
fn the_archive_examples_are_records_the_server_could_have_written() {
    let text = &doc_files()["archive.md"];
    let blocks = plain_json_blocks(text);
    let (mut lists, mut records, mut errors) = (0, 0, 0);
    for (line, value) in &blocks {
        let at = format!("archive.md:{line}");
        if value.get("games").is_some() {
            let games = &value["games"];
            round_trip::<Vec<ListedGame>>(&at, games);
            assert!(value["next"].is_string() || value["next"].is_null(), "{at}");
            assert_eq!(
                value.as_object().map(|o| o.len()),
                Some(2),
                "{at}: games and next only"
            );
            lists += 1;
        } else if value.get("events").is_some() {
            let record: GameView = round_trip(&at, value);
            replay(&at, &record);
            records += 1;
        } else if value.get("review_id").is_some() || value.get("sgf").is_some() {
            // Reviews: what POST takes and answers, and what GET answers.
            let keys: Vec<&str> = value
                .as_object()
                .map(|o| o.keys().map(String::as_str).collect())
                .unwrap_or_default();
            let known = [
                "review_id",
                "url",
                "owner",
                "created_at",
                "game_id",
                "move_number",
                "sgf",
            ];
            assert!(
                keys.iter().all(|k| known.contains(k)),
                "{at}: a review body with unknown fields: {value}"
            );
            if let Some(sgf) = value.get("sgf") {
                let sgf = sgf.as_str().expect("sgf is text");
                assert_eq!(
                    tengen::rules::sgf::parse(sgf).map(|g| g.len()),
                    Ok(1),
                    "{at}: a review's SGF is one game"
                );
            }
            if let Some(id) = value.get("review_id") {
                assert!(id.is_string(), "{at}");
            }
        } else if value.get("estimate").is_some() {
            round_trip::<tengen::estimate::Estimate>(&at, value);
        } else if value.get("move_number").is_some() {
            round_trip::<MoveView>(&at, value);
        } else if value.get("text").is_some() {
            round_trip::<KibitzLine>(&at, value);
        } else {
            assert!(
                value["error"].is_string(),
                "{at}: not an archive body: {value}"
            );
            assert_eq!(value.as_object().map(|o| o.len()), Some(1), "{at}");
            errors += 1;
        }
    }
    assert!(
        lists > 0 && records > 0 && errors > 0,
        "archive.md lost its examples"
    );
}

#[test]
fn the_ratings_examples_are_what_the_server_writes() {
    let text = &doc_files()["ratings.md"];
    let (mut profiles, mut boards, mut errors) = (0, 0, 0);
    for (line, value) in plain_json_blocks(text) {
        let at = format!("ratings.md:{line}");
        if value.get("history").is_some() {
            round_trip::<Profile>(&at, &value);
            profiles += 1;
        } else if value.get("players").is_some() {
            round_trip::<Leaderboard>(&at, &value);
            boards += 1;
        } else {
            assert!(
                value["error"].is_string(),
                "{at}: not a ratings body: {value}"
            );
            assert_eq!(value.as_object().map(|o| o.len()), Some(1), "{at}");
            errors += 1;
        }
    }
    assert!(
        profiles > 0 && boards > 0 && errors > 0,
        "ratings.md lost its examples"
    );
}

#[test]
fn the_bot_account_examples_are_bodies_the_server_reads_and_writes() {
    use tengen::accounts::bots::wire::{BotPage, BotProfile, MakeBotRequest};
    let text = &doc_files()["bots.md"];
    let mut seen = BTreeSet::new();
    for (line, value) in plain_json_blocks(text) {
        let at = format!("bots.md:{line}");
        let kind = if value.get("confirm").is_some() {
            round_trip::<MakeBotRequest>(&at, &value);
            "request"
        } else if value.get("engine").is_some() {
            round_trip::<BotProfile>(&at, &value);
            "profile"
        } else if value.get("bots").is_some() {
            round_trip::<BotPage>(&at, &value);
            "page"
        } else {
            round_trip::<tengen::protocol::UserInfo>(&at, &value["user"]);
            "made"
        };
        seen.insert(kind);
    }
    assert_eq!(
        seen.len(),
        4,
        "bots.md lost an example of its routes: {seen:?}"
    );
}

#[test]
fn the_account_examples_are_bodies_the_server_reads_and_writes() {
    use tengen::accounts::tokens::wire::{CreateTokenRequest, CreatedToken, TokenList};
    use tengen::accounts::wire::{
        AuthCode, AuthProblem, LoginRequest, PasswordRequest, RegisterRequest, SessionBody,
    };
    let text = &doc_files()["accounts.md"];
    let mut codes = BTreeSet::new();
    let (mut requests, mut sessions) = (0, 0);
    for (line, value) in plain_json_blocks(text) {
        let at = format!("accounts.md:{line}");
        if value.get("access_token").is_some() {
            round_trip::<SessionBody>(&at, &value);
            sessions += 1;
        } else if value.get("token").is_some() {
            round_trip::<CreatedToken>(&at, &value);
        } else if value.get("tokens").is_some() {
            round_trip::<TokenList>(&at, &value);
        } else if value.get("scopes").is_some() {
            round_trip::<CreateTokenRequest>(&at, &value);
        } else if value.get("code").is_some() {
            let problem: AuthProblem = round_trip(&at, &value);
            assert_eq!(
                problem.retry_after.is_some(),
                problem.code == AuthCode::RateLimited,
                "{at}: retry_after goes with rate_limited only"
            );
            codes.insert(value["code"].as_str().unwrap_or_default().to_string());
        } else if value.get("old").is_some() {
            round_trip::<PasswordRequest>(&at, &value);
            requests += 1;
        } else if value.get("display_name").is_some() || value.get("invite").is_some() {
            round_trip::<RegisterRequest>(&at, &value);
            requests += 1;
        } else {
            round_trip::<LoginRequest>(&at, &value);
            requests += 1;
        }
    }
    assert!(
        requests >= 3 && sessions >= 2,
        "accounts.md lost its examples"
    );
    let all = wire_names::<AuthCode>(json!(PROBE));
    assert_eq!(
        missing(&all, &codes),
        Vec::<String>::new(),
        "account error codes without an example in accounts.md"
    );
    for code in &all {
        assert!(
            text.contains(&format!("| `{code}` |")),
            "accounts.md's table lacks `{code}`"
        );
    }
}

/// A validator for one of the generated schema documents (`client.json`, `server.json`).
fn validator(name: &str) -> jsonschema::Validator {
    let (_, document) = tengen::protocol::schema::FILES
        .iter()
        .find(|(file, _)| *file == name)
        .unwrap_or_else(|| panic!("no schema file {name}"));
    jsonschema::validator_for(&document())
        .unwrap_or_else(|e| panic!("{name} is not a valid schema: {e}"))
}

#[test]
fn every_example_matches_its_json_schema() {
    let client = validator("client.json");
    let server = validator("server.json");
    let mut checked = 0;
    for ex in all_examples() {
        let (schema, name) = match ex.direction {
            Direction::Client => (&client, "client.json"),
            Direction::Server => (&server, "server.json"),
            // Some refusals are of frames the schema allows (a move on an occupied point).
            Direction::Refused => continue,
        };
        let errors: Vec<String> = schema
            .iter_errors(&ex.value)
            .map(|e| format!("{} (at {})", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{}: the example does not match client-protocol/schema/{name}: {errors:#?}\n{}",
            ex.at(),
            ex.text
        );
        checked += 1;
    }
    assert!(
        checked >= MIN_CLIENT_EXAMPLES + MIN_SERVER_EXAMPLES,
        "{checked} examples"
    );
}

#[test]
fn the_schemas_refuse_what_the_decoder_refuses() {
    let client = validator("client.json");
    for refused in [
        json!({"type": "ping", "extra": 1}),
        json!({"type": "play", "move_number": 1, "vertex": "D4"}),
        json!({"type": "play", "game_id": "g", "move_number": 1, "vertex": "I4"}),
        json!({"type": "seek", "settings": {"board_size": 9, "colour": "black"}}),
        json!({"type": "seek", "settings": {"clock": {"system": "absolute", "main_ms": 1, "periods": 2}}}),
        json!({"type": "no_such_type"}),
    ] {
        assert!(
            decode(&refused.to_string()).is_err(),
            "decode accepts {refused}"
        );
        assert!(!client.is_valid(&refused), "client.json accepts {refused}");
    }
}

#[test]
fn the_committed_schemas_are_what_the_code_generates() {
    for (name, document) in tengen::protocol::schema::FILES {
        let path = docs_dir().join("schema").join(name);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == tengen::protocol::schema::to_file_text(&document()),
            "{} differs from what the code generates; regenerate with `cargo run -- schema`",
            path.display()
        );
    }
}

/// The AsyncAPI 3.0.0 specification's own JSON Schema, from the npm package
/// `@asyncapi/specs` that `tests/run` installs into `tests/specs/`.
const ASYNCAPI_SPEC: &str =
    "tests/specs/node_modules/@asyncapi/specs/schemas/3.0.0-without-$id.json";

#[test]
fn the_asyncapi_document_is_valid_asyncapi_3() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(ASYNCAPI_SPEC);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; install it with `(cd tests/specs && npm ci)` (tests/run does)",
            path.display()
        )
    });
    let spec: Value = serde_json::from_str(&text).expect("the specification's schema is JSON");
    let spec = jsonschema::validator_for(&spec).expect("the specification's schema compiles");
    let document = tengen::protocol::schema::asyncapi();
    let errors: Vec<String> = spec
        .iter_errors(&document)
        .map(|e| format!("{} (at {})", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "asyncapi.json is not valid AsyncAPI 3.0.0: {errors:#?}"
    );
    // Every message type of both directions is in it.
    let messages = document["components"]["messages"]
        .as_object()
        .expect("messages");
    for t in client_types() {
        assert!(
            messages.contains_key(&format!("client.{t}")),
            "client.{t} missing"
        );
    }
    for t in server_types().into_iter().chain(event_types()) {
        assert!(
            messages.contains_key(&format!("server.{t}")),
            "server.{t} missing"
        );
    }
}
