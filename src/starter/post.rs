//! Posting a seek or challenge, where a bot's standing offer may answer at once.

use super::Starter;
use crate::protocol::{Challenge, ErrorCode, GameSettings, Refusal, UserInfo};

impl Starter {
    /// Posts `user`'s seek (or challenge, `to` someone) with settings already resolved.
    /// A challenge to a bot whose offer admits the settings is accepted on the bot's
    /// behalf at once, unless the bot plays all the games its offer takes: then it
    /// waits, like any challenge, for the bot to accept it when a game of its ends.
    /// `limit` is how many open seeks a user may have.
    pub async fn post(
        &self,
        user: &UserInfo,
        to: Option<String>,
        settings: GameSettings,
        limit: usize,
    ) -> Result<Challenge, Refusal> {
        let mut bot = to.as_deref().and_then(|t| self.lobby.offer_of(t));
        if settings.rated {
            let store = &self.registry.context().store;
            let players = std::iter::once(user).chain(bot.as_ref().map(|b| &b.user));
            for player in players {
                crate::accounts::rated::check_account(store, player).await?;
            }
        }
        if let Some(listing) = &bot {
            listing
                .offer
                .admits(&settings)
                .map_err(|m| Refusal::new(ErrorCode::BadRequest, m))?;
            if self.slots.bot_is_full(&listing.user.id) {
                bot = None;
            } else {
                // A game that cannot start is refused before the bot hears of it.
                self.slots.check([user, &listing.user])?;
            }
        }
        let challenge = self.lobby.post(user, to, settings, limit)?;
        let Some(bot) = bot else {
            return Ok(challenge);
        };
        match self.accept(&bot.user, &challenge.challenge_id, None).await {
            Ok(_) => Ok(challenge),
            // Another challenge took the bot's last slot meanwhile: this one waits (it
            // is back in the lobby) like any challenge to a full bot.
            Err(refusal)
                if refusal.code == ErrorCode::LimitReached
                    && self.slots.bot_is_full(&bot.user.id) =>
            {
                Ok(challenge)
            }
            // A slot taken meanwhile, or the store: the bot declines on its side, and
            // the refusal is the one reply to the request.
            Err(refusal) => {
                let _ = self
                    .lobby
                    .withdraw(&challenge.challenge_id, &bot.user, true);
                Err(refusal)
            }
        }
    }
}
