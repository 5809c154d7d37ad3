//! The HTTP API reference page in a real browser (`tests/browser/apiref.mjs`): every
//! operation of the OpenAPI document rendered from the served document, with its
//! parameters, bodies and responses, and no console error.

#[path = "common/browser.rs"]
mod browser;
mod common;

use common::TestServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_reference_page_shows_every_operation() {
    let server = TestServer::start().await;
    let operations: usize = tengen::net::openapi::document()["paths"]
        .as_object()
        .expect("paths")
        .values()
        .map(|item| item.as_object().expect("an item").len())
        .sum();
    browser::run_scenario_with(
        "apiref.mjs",
        &server.http("/"),
        &["apiref.png"],
        &[("TENGEN_OPERATIONS", operations.to_string())],
    )
    .await;
    server.stop().await;
}
