//! The connections each personal token opened on this server, so that revoking the token
//! ends them and no other connection of its user ([`crate::accounts::revoke`]). A
//! connection admitted just before a revocation may register here just after the
//! revocation was acted on; the tokens revoked in the last minute are kept, so such a
//! connection is refused as it registers.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use dashmap::DashMap;

use crate::fanout::{Frame, Outbox};

/// How long a revoked token is remembered: far longer than a connection takes from its
/// admission to its registration.
const REMEMBER: Duration = Duration::from_secs(60);
/// Revoked tokens remembered at most (the oldest are forgotten first).
const MAX_REMEMBERED: usize = 4096;

/// Open WebSocket connections by the personal token they logged in with.
#[derive(Default)]
pub struct OpenTokens {
    by_token: DashMap<String, Vec<Outbox>>,
    /// Tokens revoked lately, oldest first.
    revoked: Mutex<VecDeque<(Instant, String)>>,
}

impl OpenTokens {
    /// Notes that `outbox`'s connection is logged in with `token`; false (and nothing
    /// noted) when the token was revoked meanwhile.
    pub fn opened(&self, token: &str, outbox: Outbox) -> bool {
        if self.was_revoked(token) {
            return false;
        }
        self.by_token
            .entry(token.to_string())
            .or_default()
            .push(outbox);
        true
    }

    /// Forgets connection `conn` of `token`.
    pub fn closed(&self, token: &str, conn: u64) {
        if let Some(mut list) = self.by_token.get_mut(token) {
            list.retain(|o| o.conn() != conn);
        }
        self.by_token.remove_if(token, |_, list| list.is_empty());
    }

    /// Ends every connection of `token` after `frame`, and remembers it was revoked.
    pub fn end(&self, token: &str, frame: &Frame, code: u16, reason: &'static str) {
        if let Ok(mut revoked) = self.revoked.lock() {
            let now = Instant::now();
            while revoked.front().is_some_and(|(at, _)| now - *at > REMEMBER)
                || revoked.len() >= MAX_REMEMBERED
            {
                revoked.pop_front();
            }
            revoked.push_back((now, token.to_string()));
        }
        if let Some((_, list)) = self.by_token.remove(token) {
            for o in list {
                o.push(frame.clone());
                o.end(code, reason);
            }
        }
    }

    fn was_revoked(&self, token: &str) -> bool {
        self.revoked
            .lock()
            .is_ok_and(|revoked| revoked.iter().any(|(_, t)| t == token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fanout::{Inbox, Next};

    fn frame(text: &str) -> Frame {
        Frame::from(text.to_string())
    }

    fn connection(conn: u64) -> (Outbox, Inbox) {
        Outbox::new(conn, 8, 1 << 16)
    }

    #[tokio::test]
    async fn revoking_ends_the_tokens_connections_and_refuses_a_late_one() {
        let open = OpenTokens::default();
        let (a, mut a_in) = connection(1);
        let (b, mut b_in) = connection(2);
        assert!(open.opened("tgn_a", a));
        assert!(open.opened("tgn_b", b));
        open.end("tgn_a", &frame("bye"), 4001, "token revoked");
        assert!(matches!(a_in.recv().await, Next::Frame(f) if f.as_str() == "bye"));
        assert!(matches!(
            a_in.recv().await,
            Next::Close(4001, "token revoked")
        ));
        // The other token's connection goes on.
        open.end("tgn_c", &frame("x"), 4001, "token revoked");
        assert!(b_in.try_recv().is_none());
        // A connection admitted before the revocation but registered after it.
        let (late, _late_in) = connection(3);
        assert!(!open.opened("tgn_a", late));
        open.closed("tgn_b", 2);
        assert!(open.by_token.is_empty());
    }
}
