//! Taking back at once what an operator takes from an account: a running server ends the
//! open connections of a user who is disabled or given another role, whichever process
//! made the change (`tengen user disable` runs beside the server, on the same store), and
//! those a personal API token opened when its owner revokes it (only those). The
//! store numbers each such change ([`AccountStore::user_changes`]); every server, every
//! node of a cluster, reads the new ones once a second and ends that user's connections
//! on it. A connection that comes back is admitted as the account is now: refused while
//! disabled, with the stored role otherwise ([`super::admit`]). Ending the last
//! connection withdraws the user's seeks, challenges, automatch request and bot offer.
//!
//! [`AccountStore::user_changes`]: crate::store::AccountStore::user_changes

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::fanout::{Frame, encode};
use crate::protocol::{ErrorCode, ServerMsg};
use crate::store::{Store, StoreError};

/// How often the store is asked for new changes.
pub const POLL: Duration = Duration::from_secs(1);
/// Close code of a connection whose account was disabled or given another role: the
/// same as for a refused token, since the client must get a new one.
pub const CLOSE_CODE: u16 = 4001;
/// What a connection of a revoked personal token is told before it is closed, and the
/// close frame's reason.
pub const TOKEN_REVOKED: (&str, &str) = (
    "This personal token was revoked; its connections end.",
    "token revoked",
);
/// Changes read again at each poll before the newest one seen: PostgreSQL numbers a
/// change when it is made, not when it commits, so a change may become visible after one
/// with a higher number. Each is acted on once.
const LOOKBACK: u64 = 64;
/// Changes read at most per poll; more wait for the next.
const BATCH: u32 = 256;

/// Whose connections a change ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending<'a> {
    /// Every connection of this user.
    User(&'a str),
    /// The connections this personal token opened.
    Token(&'a str),
}

/// Watches the store for changes to users' standing until `stop` turns true, and calls
/// `end` with whose connections end, the frame to send them and the close code and
/// reason.
pub async fn watch(
    store: Arc<dyn Store>,
    mut stop: watch::Receiver<bool>,
    end: impl Fn(Ending<'_>, &Frame, u16, &'static str) + Send + 'static,
) {
    let mut seen = BTreeSet::new();
    let mut newest = match read(&store, |s| {
        let last = s.last_user_change()?;
        let before = s.user_changes(last.saturating_sub(LOOKBACK), BATCH)?;
        Ok((last, before))
    })
    .await
    {
        Ok((last, before)) => {
            // Changes made before this server started concern no connection of its own.
            seen.extend(before.into_iter().map(|change| change.seq));
            last
        }
        Err(e) => {
            tracing::error!(error = %e, "cannot read the changes to users; disabling an account will not end its open connections");
            return;
        }
    };
    loop {
        tokio::select! {
            _ = stop.wait_for(|s| *s) => return,
            _ = tokio::time::sleep(POLL) => {}
        }
        let from = newest.saturating_sub(LOOKBACK);
        let changes = match read(&store, move |s| s.user_changes(from, BATCH)).await {
            Ok(changes) => changes,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the changes to users; trying again");
                continue;
            }
        };
        for change in changes {
            if !seen.insert(change.seq) {
                continue;
            }
            newest = newest.max(change.seq);
            let id = change.user_id;
            if let Some(token) = change.token {
                tracing::info!(user = %id, %token, "ending the connections of a revoked personal token");
                let frame =
                    unauthorized("This personal token was revoked; its connections end.".into());
                end(Ending::Token(&token), &frame, CLOSE_CODE, "token revoked");
                continue;
            }
            let who = id.clone();
            let user = match read(&store, move |s| s.user(&who)).await {
                Ok(Some(user)) => user,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!(error = %e, user = %id, "cannot read a changed user");
                    continue;
                }
            };
            let (message, reason) = if user.disabled {
                (
                    "An operator disabled this account; its connections end.".to_string(),
                    "account disabled",
                )
            } else {
                (
                    format!(
                        "An operator gave this account the role {}; connect again with a new token.",
                        serde_json::to_string(&user.role).unwrap_or_default()
                    ),
                    "role changed",
                )
            };
            tracing::info!(user = %id, reason, "ending the connections of a changed account");
            end(
                Ending::User(&id),
                &unauthorized(message),
                CLOSE_CODE,
                reason,
            );
        }
        seen.retain(|&seq| seq + LOOKBACK >= newest);
    }
}

/// The `unauthorized` error a connection gets before it is closed.
fn unauthorized(message: String) -> Frame {
    encode(&ServerMsg::Error {
        id: None,
        code: ErrorCode::Unauthorized,
        message,
        game_id: None,
        reason: None,
        retry_after_ms: None,
    })
}

/// Runs a store read on the blocking pool.
async fn read<T: Send + 'static>(
    store: &Arc<dyn Store>,
    work: impl FnOnce(&dyn Store) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, String> {
    let store = store.clone();
    match tokio::task::spawn_blocking(move || work(store.as_ref())).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}
