//! Who may play rated games: accounts only, players' and bots' (guests are refused by
//! their role in the lobby). A token this server signed for a name with no account (the
//! loopback dev login, `tengen token`) names nobody whose standing means anything, so its
//! holder plays unrated games only. The account is read from the store each time, on the
//! blocking pool: the store is shared by every node, and a disabled account counts as none.

use std::sync::Arc;

use crate::protocol::{ErrorCode, Refusal, UserInfo};
use crate::store::{Origin, Store};

/// Refuses a rated game to `user` unless they have an enabled account here that is not a
/// guest's.
pub async fn check_account(store: &Arc<dyn Store>, user: &UserInfo) -> Result<(), Refusal> {
    if !user.role.may_play_rated() {
        // A guest: the lobby refuses them by their role, and says so.
        return Ok(());
    }
    let (store, id) = (store.clone(), user.id.clone());
    let row = tokio::task::spawn_blocking(move || store.user(&id))
        .await
        .map_err(|e| Refusal::new(ErrorCode::Unavailable, e.to_string()))?
        .map_err(|e| {
            tracing::error!(error = %e, "cannot look up a player's account");
            Refusal::new(
                ErrorCode::Unavailable,
                "the server cannot check the account now; try again later",
            )
        })?;
    match row {
        Some(row) if row.origin != Origin::Guest && !row.disabled => Ok(()),
        _ => Err(Refusal::new(
            ErrorCode::RatedNotAllowed,
            format!(
                "only accounts (players and bots) play rated games, and {} has no account on this server; register or log in to play rated games",
                user.name
            ),
        )),
    }
}
