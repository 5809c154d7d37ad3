//! Who may open a WebSocket with a token: a valid signature is not enough once accounts
//! live in the store. A disabled user is refused, and an external token whose `sub` is a
//! local account's or a guest's id is refused for good: the identity service cannot
//! speak for people who registered here. External users get their row at first sight.

use std::sync::Arc;

use crate::auth::{Signer, Verifier};
use crate::protocol::{ErrorCode, Refusal, UserInfo};
use crate::store::{Origin, Sighting, Store};
use crate::time::wall_ms;

/// The user `token` names, if they may connect; the store is read on the blocking pool.
/// A token this server signed for an id with no row (`tengen token`, the dev login) is
/// admitted as before.
pub async fn admit(
    store: &Arc<dyn Store>,
    verifier: &Verifier,
    token: &str,
) -> Result<UserInfo, Refusal> {
    let (user, signer) = verifier
        .verify_signed(token)
        .map_err(|m| Refusal::new(ErrorCode::Unauthorized, m))?;
    let store = store.clone();
    let (id, name) = (user.id.clone(), user.name.clone());
    let sighting = tokio::task::spawn_blocking(move || match signer {
        Signer::Local => store.user(&id).map(|row| match row {
            Some(row) if row.disabled => Sighting::Disabled,
            _ => Sighting::Admitted,
        }),
        Signer::External => store.sight_external(&id, &name, wall_ms()),
    })
    .await;
    match sighting {
        Ok(Ok(Sighting::Admitted)) => Ok(user),
        Ok(Ok(Sighting::Disabled)) => Err(Refusal::new(
            ErrorCode::Unauthorized,
            "This account is disabled; ask the server's operator.",
        )),
        Ok(Ok(Sighting::Clash(origin))) => Err(Refusal::new(
            ErrorCode::Unauthorized,
            format!(
                "The identity service's user {:?} has the id of a {} on this server, so its tokens are refused here.",
                user.id,
                match origin {
                    Origin::Guest => "guest",
                    Origin::Local | Origin::External => "registered account",
                }
            ),
        )),
        Ok(Err(e)) => {
            tracing::error!(error = %e, "cannot look up a connecting user");
            Err(Refusal::new(
                ErrorCode::Unavailable,
                "The server cannot check the account now; try again later.",
            ))
        }
        Err(e) => Err(Refusal::new(ErrorCode::Unavailable, e.to_string())),
    }
}
