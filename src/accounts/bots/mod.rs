//! Bot accounts by self-service: a person turns their account into a bot's, for good,
//! while it has no rated game (so no rating earned by a person is carried on by a
//! program, and a bot's rating starts in the same pools as everyone's: docs/RATINGS.md),
//! then creates a `bot`-scoped personal token for `tengen bot`. A bot declares a small
//! profile (engine, the games it accepts) that the public bots page shows. The routes are
//! `net/tokens.rs`; the rows are the store's [`BotStore`](crate::store::BotStore).

pub mod wire;

use std::sync::Arc;

use super::wire::{AuthCode, AuthProblem};
use super::{problem, unavailable};
use crate::auth::display_name;
use crate::protocol::{Role, UserInfo};
use crate::store::{MadeBot, Store, StoreError};
use crate::time::wall_ms;
use wire::{BotEntry, BotPage, BotProfile, MakeBotRequest};

/// Bots on one page of `GET /api/bots`.
pub const PAGE: u32 = 100;

async fn on_store<T: Send + 'static>(
    store: &Arc<dyn Store>,
    work: impl FnOnce(&dyn Store) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, AuthProblem> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || work(store.as_ref()))
        .await
        .map_err(unavailable)?
        .map_err(unavailable)
}

/// `POST /api/account/bot`: `user` (logged in with a session) becomes a bot. Their open
/// connections end (a role change, [`super::revoke`]) and come back as the bot.
pub async fn make_bot(
    store: &Arc<dyn Store>,
    user: &UserInfo,
    req: MakeBotRequest,
) -> Result<UserInfo, AuthProblem> {
    if req.confirm.trim() != user.id {
        return Err(problem(
            AuthCode::ConfirmationRequired,
            format!(
                "A bot account cannot become a person's again: send `confirm` with your username, {:?}, to go on.",
                user.id
            ),
        ));
    }
    let id = user.id.clone();
    match on_store(store, move |s| s.make_bot(&id)).await? {
        MadeBot::Made => {
            tracing::info!(user = %user.id, "an account made itself a bot");
            Ok(UserInfo {
                role: Role::Bot,
                ..user.clone()
            })
        }
        MadeBot::Unknown => Err(problem(
            AuthCode::Forbidden,
            "Only an account on this server may become a bot.",
        )),
        MadeBot::NotAPlayer(role) => Err(problem(
            AuthCode::NotAPlayer,
            format!(
                "Only a player's account may become a bot, and this one's role is {}.",
                serde_json::to_string(&role).unwrap_or_default()
            ),
        )),
        MadeBot::Rated => Err(problem(
            AuthCode::RatedGamesPlayed,
            "This account has played rated games; a bot starts with no rating, so register a new account for it.",
        )),
    }
}

/// `PUT /api/account/bot-profile` for the bot `user`.
pub async fn set_profile(
    store: &Arc<dyn Store>,
    user: &UserInfo,
    mut profile: BotProfile,
) -> Result<BotProfile, AuthProblem> {
    if user.role != Role::Bot {
        return Err(problem(
            AuthCode::NotABot,
            "Only a bot account has a bot profile.",
        ));
    }
    let bad = |why: String| problem(AuthCode::InvalidBotProfile, why);
    profile.engine = display_name(&profile.engine)
        .map_err(|why| bad(format!("The engine's name {why}.")))?
        .to_string();
    profile.offer.check().map_err(bad)?;
    let text = serde_json::to_string(&profile).map_err(unavailable)?;
    let id = user.id.clone();
    on_store(store, move |s| s.set_bot_profile(&id, &text, wall_ms())).await?;
    Ok(profile)
}

/// `GET /api/bots?after=`: a page of enabled bot accounts; `online` says who is
/// connected now.
pub async fn page(
    store: &Arc<dyn Store>,
    after: String,
    online: impl Fn(&str) -> bool,
) -> Result<BotPage, AuthProblem> {
    let rows = on_store(store, move |s| s.bots(&after, PAGE)).await?;
    let next = (rows.len() == PAGE as usize)
        .then(|| rows.last().map(|(u, _)| u.id.clone()))
        .flatten();
    let bots = rows
        .into_iter()
        .map(|(user, profile)| BotEntry {
            online: online(&user.id),
            // A stored profile this version cannot read is shown as none.
            profile: profile.and_then(|p| serde_json::from_str(&p).ok()),
            user: UserInfo {
                id: user.id,
                name: user.display_name,
                role: user.role,
            },
        })
        .collect();
    Ok(BotPage { bots, next })
}
