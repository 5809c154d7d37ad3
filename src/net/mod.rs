//! The network edge: one port for HTTP and WebSocket (axum), token checks at the
//! upgrade, one task per connection ([`session`]). The server's start and shutdown
//! wiring is in [`crate::server`].

mod api;
mod asyncapi;
mod auth;
mod estimate;
mod fairplay;
mod http;
mod limits;
mod ratings;
mod reviews;
mod session;
mod web;

pub use http::{READ_BUFFER_BYTES, WRITE_BUFFER_BYTES, router};
