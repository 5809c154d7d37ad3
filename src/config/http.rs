//! `[http]`: how long a plain HTTP connection may take and how many there may be, so
//! that sockets that send nothing, send their headers or body slowly, or idle between
//! requests cannot hold the server's file descriptors. A connection upgraded to a
//! WebSocket leaves these and counts under `[limits]` instead.

use serde::{Deserialize, Serialize};

/// Timeouts and caps of plain HTTP connections (before any WebSocket upgrade).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HttpConfig {
    /// Seconds from a request's first byte until its headers are complete.
    pub header_read_timeout_secs: u64,
    /// Seconds from a request's headers until its whole body has been read.
    pub body_read_timeout_secs: u64,
    /// Seconds a connection may wait for a request (its first, or the next on a
    /// kept-alive connection) or for the client to read a response.
    pub keep_alive_secs: u64,
    /// Plain HTTP connections open at once, in all.
    pub max_connections: usize,
    /// Plain HTTP connections open at once from one address (an IPv6 client is its /64);
    /// a peer in `auth.trusted_proxies` is not held to it.
    pub max_connections_per_address: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            header_read_timeout_secs: 10,
            body_read_timeout_secs: 30,
            keep_alive_secs: 30,
            max_connections: 1024,
            max_connections_per_address: 64,
        }
    }
}

/// The longest any of the timeouts may be: a minute longer holds a slow client's socket
/// for nothing.
pub const MAX_TIMEOUT_SECS: u64 = 600;

impl HttpConfig {
    /// The first setting out of range: its key and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let timeouts = [
            (
                "http.header_read_timeout_secs",
                self.header_read_timeout_secs,
            ),
            ("http.body_read_timeout_secs", self.body_read_timeout_secs),
            ("http.keep_alive_secs", self.keep_alive_secs),
        ];
        for (key, secs) in timeouts {
            if !(1..=MAX_TIMEOUT_SECS).contains(&secs) {
                return Err((key, format!("must be from 1 to {MAX_TIMEOUT_SECS} seconds")));
            }
        }
        if self.max_connections == 0 {
            return Err(("http.max_connections", "must be at least 1".into()));
        }
        if !(1..=self.max_connections).contains(&self.max_connections_per_address) {
            return Err((
                "http.max_connections_per_address",
                format!(
                    "must be from 1 to http.max_connections ({})",
                    self.max_connections
                ),
            ));
        }
        Ok(())
    }
}
