//! Who may open a WebSocket with a token: a valid signature is not enough once accounts
//! live in the store. A disabled user is refused, and an external token whose `sub` is,
//! or folds as a username does to, a local account's or a guest's id is refused for good
//! (`ALICE` and `Ａｌｉｃｅ` beside the account `alice`, any `guest…`): the identity
//! service cannot speak for people who registered here. External users get their row at
//! first sight.

use std::sync::Arc;

use super::tokens::scope::Grant;
use super::username::{GUEST_PREFIX, Username};
use crate::auth::{Signer, Verifier};
use crate::protocol::{ErrorCode, Refusal, UserInfo};
use crate::store::{Origin, Sighting, Store, StoreError};
use crate::time::wall_ms;

/// The user `token` names and what it grants, if they may connect; the store is read on
/// the blocking pool. A personal API token (`tgn_…`) is looked up in the store
/// ([`super::tokens::admit`]); any other token is a JWT, which grants a session.
/// A token this server signed for an account carries the role the account has now, not
/// the one the token was signed with: an operator's role change reaches a token issued
/// before it (`revoke` ends the connections open at the change). A token this server
/// signed for an id with no row (`tengen token`, the dev login) is admitted as it is.
pub async fn admit(
    store: &Arc<dyn Store>,
    verifier: &Verifier,
    token: &str,
) -> Result<(UserInfo, Grant), Refusal> {
    if super::tokens::is_personal(token) {
        return super::tokens::admit(store, token).await;
    }
    let (mut user, signer) = verifier
        .verify_signed(token)
        .map_err(|m| Refusal::new(ErrorCode::Unauthorized, m))?;
    let store = store.clone();
    let (id, name) = (user.id.clone(), user.name.clone());
    let sighting = tokio::task::spawn_blocking(move || match signer {
        Signer::Local => store.user(&id).map(|row| match row {
            Some(row) if row.disabled => (Sighting::Disabled, None),
            Some(row) => (Sighting::Admitted, Some(row.role)),
            None => (Sighting::Admitted, None),
        }),
        Signer::External => match folded_clash(store.as_ref(), &id) {
            Ok(Some(origin)) => Ok((Sighting::Clash(origin), None)),
            Ok(None) => store
                .sight_external(&id, &name, wall_ms())
                .map(|sighting| (sighting, None)),
            Err(e) => Err(e),
        },
    })
    .await
    .map(|read| {
        read.map(|(sighting, role)| {
            user.role = role.unwrap_or(user.role);
            sighting
        })
    });
    match sighting {
        Ok(Ok(Sighting::Admitted)) => Ok((user, Grant::Session)),
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

/// The origin of the local account or guest that an identity service's `id` would pass
/// for, if any: a guest's name (`guest…` in any case or width), or a username that folds
/// to a local account's id without being it. The id itself is looked at by
/// [`Store::sight_external`]; ids that cannot be usernames (an opaque `auth0|123`) fold to
/// nothing.
fn folded_clash(store: &dyn Store, id: &str) -> Result<Option<Origin>, StoreError> {
    let name = Username::canonical(id).ok();
    let guest = |text: &str| text.to_lowercase().starts_with(GUEST_PREFIX);
    if guest(id) || name.as_ref().is_some_and(|n| guest(n.as_str())) {
        return Ok(Some(Origin::Guest));
    }
    match name {
        Some(name) if name.as_str() != id => Ok(store
            .user(name.as_str())?
            .map(|user| user.origin)
            .filter(|origin| *origin != Origin::External)),
        _ => Ok(None),
    }
}
