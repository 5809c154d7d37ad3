//! The connections each personal token opened on this server, so that revoking the token
//! ends them and no other connection of its user ([`crate::accounts::revoke`]).

use dashmap::DashMap;

use crate::fanout::{Frame, Outbox};

/// Open WebSocket connections by the personal token they logged in with.
#[derive(Default)]
pub struct OpenTokens {
    by_token: DashMap<String, Vec<Outbox>>,
}

impl OpenTokens {
    /// Notes that `outbox`'s connection is logged in with `token`.
    pub fn opened(&self, token: &str, outbox: Outbox) {
        self.by_token
            .entry(token.to_string())
            .or_default()
            .push(outbox);
    }

    /// Forgets connection `conn` of `token`.
    pub fn closed(&self, token: &str, conn: u64) {
        if let Some(mut list) = self.by_token.get_mut(token) {
            list.retain(|o| o.conn() != conn);
        }
        self.by_token.remove_if(token, |_, list| list.is_empty());
    }

    /// Ends every connection of `token` after `frame`.
    pub fn end(&self, token: &str, frame: &Frame, code: u16, reason: &'static str) {
        if let Some((_, list)) = self.by_token.remove(token) {
            for o in list {
                o.push(frame.clone());
                o.end(code, reason);
            }
        }
    }
}
