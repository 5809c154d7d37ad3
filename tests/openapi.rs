//! The OpenAPI document of the HTTP routes: valid OpenAPI 3.1 by the specification's own
//! schema, committed as generated, served, and naming exactly the routes the router has
//! (read from the route files' sources, then asked of a live server).

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{TestServer, get_json};
use serde_json::Value;

use tengen::net::openapi::document;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The OpenAPI 3.1 specification's own JSON Schema, from the npm package
/// `@seriousme/openapi-schema-validator` that `tests/run` installs into `tests/specs/`.
const OPENAPI_SPEC: &str =
    "tests/specs/node_modules/@seriousme/openapi-schema-validator/schemas/v3.1/schema.json";

#[test]
fn the_document_is_valid_openapi_3_1() {
    let path = root().join(OPENAPI_SPEC);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; install it with `(cd tests/specs && npm ci)` (tests/run does)",
            path.display()
        )
    });
    let spec: Value = serde_json::from_str(&text).expect("the specification's schema is JSON");
    let spec = jsonschema::validator_for(&spec).expect("the specification's schema compiles");
    let doc = document();
    let errors: Vec<String> = spec
        .iter_errors(&doc)
        .map(|e| format!("{e} (at {})", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "not valid OpenAPI 3.1: {errors:#?}");
    assert_eq!(doc["openapi"], "3.1.0");
}

/// Every `$ref` of `value`, as a JSON pointer into the document.
fn refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v) {
                    ("$ref", Value::String(r)) => out.push(r.clone()),
                    _ => refs(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[test]
fn every_reference_resolves_and_every_schema_compiles() {
    let doc = document();
    let mut found = Vec::new();
    refs(&doc, &mut found);
    assert!(!found.is_empty());
    for r in &found {
        let pointer = r
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("{r} is not local"));
        assert!(doc.pointer(pointer).is_some(), "{r} resolves to nothing");
    }
    // Each component schema, with the others beside it, is a schema a validator takes.
    for name in doc["components"]["schemas"]
        .as_object()
        .expect("schemas")
        .keys()
    {
        let mut schema = serde_json::json!({"$ref": format!("#/components/schemas/{name}")});
        schema["components"] = doc["components"].clone();
        jsonschema::validator_for(&schema)
            .unwrap_or_else(|e| panic!("components.schemas.{name} does not compile: {e}"));
    }
}

#[test]
fn the_committed_document_is_what_the_code_generates() {
    let path = root().join("client-protocol/schema/openapi.json");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == tengen::protocol::schema::to_file_text(&document()),
        "{} differs from what the code generates; regenerate with `cargo run -- schema`",
        path.display()
    );
}

#[test]
fn every_account_refusal_code_is_in_the_responses() {
    let doc = document();
    let text =
        std::fs::read_to_string(root().join("client-protocol/accounts.md")).expect("accounts.md");
    let table = text
        .split_once("| Code | Status | When |")
        .expect("the account errors' table")
        .1;
    let mut codes = 0;
    for row in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (code, status) = (cells[1].trim_matches('`'), cells[2]);
        for route in ["register", "login", "password"] {
            let answer = &doc["paths"][format!("/api/auth/{route}")]["post"]["responses"][status];
            let description = answer["description"].as_str().unwrap_or_default();
            assert!(
                description.contains(&format!("`{code}`")),
                "{route}'s {status} does not name `{code}`: {answer}"
            );
        }
        codes += 1;
    }
    assert!(codes >= 20, "{codes} codes in accounts.md's table");
}

/// Every `(METHOD, path)` the route files register with a literal path, read from their
/// sources: `.route("/path", get(h).post(h))`. The web client's files are registered by a
/// loop (not an API), and `/api/auth/{*rest}` only when the server cannot read its JWT
/// secret (every account request is then refused).
fn routes_in_the_sources() -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    let dir = root().join("src/net");
    for entry in std::fs::read_dir(&dir).expect("src/net") {
        let path = entry.expect("an entry").path();
        let source = std::fs::read_to_string(&path).expect("a source file");
        let mut rest = source.as_str();
        while let Some(at) = rest.find(".route(") {
            rest = &rest[at + ".route(".len()..];
            let call = &rest[..closing(rest)];
            let Some(literal) = call.trim_start().strip_prefix('"') else {
                continue;
            };
            let route = &literal[..literal.find('"').expect("a closed literal")];
            if route == "/api/auth/{*rest}" {
                continue;
            }
            let mut methods = 0;
            for method in ["get", "post", "put", "patch", "delete"] {
                let called = format!("{method}(");
                let named = call
                    .match_indices(&called)
                    .any(|(i, _)| i == 0 || !call.as_bytes()[i - 1].is_ascii_alphanumeric());
                if named {
                    found.insert((method.to_uppercase(), route.to_string()));
                    methods += 1;
                }
            }
            assert!(methods > 0, "{}: no method for {route}", path.display());
        }
    }
    found
}

/// The length of a call's arguments: up to the `)` that closes it.
fn closing(s: &str) -> usize {
    let mut depth = 0;
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' if depth == 0 => return i,
            b')' => depth -= 1,
            _ => {}
        }
    }
    s.len()
}

fn routes_in_the_document() -> BTreeSet<(String, String)> {
    let doc = document();
    let mut found = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("a path item").keys() {
            found.insert((method.to_uppercase(), path.clone()));
        }
    }
    found
}

#[test]
fn the_document_has_every_route_of_the_router_and_no_other() {
    let sources = routes_in_the_sources();
    let documented = routes_in_the_document();
    assert!(sources.len() >= 20, "{sources:?}");
    let missing: Vec<_> = sources.difference(&documented).collect();
    let extra: Vec<_> = documented.difference(&sources).collect();
    assert!(
        missing.is_empty(),
        "routes the router has and the document lacks: {missing:?}"
    );
    assert!(
        extra.is_empty(),
        "routes the document has and the sources lack: {extra:?}"
    );
}

/// One request by hand: the status and the body.
async fn request(server: &TestServer, method: &str, path: &str) -> (u16, String) {
    let addr = server.server.as_ref().expect("running").addr();
    let reply = common::exchange(addr, method, path, &[], b"").await;
    (reply.status, reply.body)
}

#[tokio::test]
async fn the_live_router_answers_every_documented_route() {
    let server = TestServer::start().await;
    for (method, path) in routes_in_the_document() {
        let concrete = path.replace("{id}", "nosuchid1");
        let (status, body) = request(&server, &method, &concrete).await;
        // The router's fallbacks: an unknown path is a bare 404, a known path asked with
        // another method a 405.
        assert_ne!(status, 405, "{method} {path}: {body}");
        assert!(
            status != 404 || !body.is_empty(),
            "{method} {path} is not routed: a bare 404"
        );
        // The same path asked with a method no route takes is refused as such.
        let (status, _) = request(&server, "PATCH", &concrete).await;
        assert_eq!(status, 405, "PATCH {path}");
    }
}

#[tokio::test]
async fn the_server_serves_the_document_the_code_generates() {
    let server = TestServer::start().await;
    let (status, served) = get_json(&server, "/api/openapi.json").await;
    assert_eq!(status, 200);
    assert_eq!(served, document());
}
