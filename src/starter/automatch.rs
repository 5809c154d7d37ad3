//! Automatch as a way to start games: requests go into the queue (the leader's, in a
//! cluster), and a round every [`ROUND_EVERY`] pairs who can be paired now and starts
//! their games through the one starter.

use std::sync::Weak;

use super::Starter;
use crate::lobby::Open;
use crate::lobby::automatch::{BotSeat, ROUND_EVERY, Seeker, Wish};
use crate::lobby::create::Seating;
use crate::lobby::{check_rated, nigiri};
use crate::protocol::{Challenge, ColorChoice, ErrorCode, Refusal, UserInfo};
use crate::standings;
use crate::store::Origin;

impl Starter {
    /// Puts `user` in the automatch queue, replacing a request of theirs still waiting;
    /// [`Starter::automatch_round`] pairs them.
    pub async fn automatch(&self, user: &UserInfo, wish: Wish) -> Result<(), Refusal> {
        check_rated(wish.rated, [user, user])?;
        if wish.rated {
            let store = &self.registry.context().store;
            crate::accounts::rated::check_account(store, user).await?;
        }
        if !self.slots.has_free(&user.id) {
            return Err(Refusal::new(
                ErrorCode::LimitReached,
                format!("you already play {} live games", self.slots.max()),
            ));
        }
        let store = self.registry.context().store.clone();
        let id = user.id.clone();
        let rating = tokio::task::spawn_blocking(move || standings::overall_rating(&*store, &id))
            .await
            .map_err(|e| Refusal::new(ErrorCode::Unavailable, e.to_string()))?
            .map_err(|e| {
                Refusal::new(
                    ErrorCode::Unavailable,
                    format!("your rating could not be read: {e}"),
                )
            })?;
        let seeker = Seeker {
            user: user.clone(),
            rating,
            wish,
            since: tokio::time::Instant::now(),
        };
        match self.cluster() {
            Some(link) => link.automatch(&self.lobby, seeker).await,
            None => {
                self.lobby.automatch.put(seeker);
                Ok(())
            }
        }
    }

    /// One automatch round: pairs who can be paired now and starts their games. A game
    /// that cannot be started (the store failing) puts its players back in the queue.
    pub async fn automatch_round(&self) {
        if self.lobby.automatch.is_empty() {
            return;
        }
        if let Some(link) = self.cluster()
            && !link.leads()
        {
            return link.hand_over(&self.lobby).await;
        }
        let bots = self.bot_seats().await;
        let made = self.lobby.automatch.round(
            tokio::time::Instant::now(),
            &bots,
            |id| self.slots.has_free(id),
            |a, b| self.lobby.is_blocked(a, b),
        );
        for (pairing, seekers) in made {
            let (secret, commitment) = match pairing.settings.color {
                ColorChoice::Nigiri => {
                    let (secret, commitment) = nigiri::commit();
                    (Some(secret), Some(commitment))
                }
                _ => (None, None),
            };
            let open = Open {
                challenge: Challenge {
                    challenge_id: crate::ids::new_id(),
                    from: pairing.first,
                    to: Some(pairing.second.id.clone()),
                    settings: pairing.settings,
                    created_at: crate::time::wall_ms(),
                    from_rank: None,
                    nigiri_commitment: commitment,
                },
                secret,
            };
            let seating = Seating::accepted(&open, &pairing.second, &crate::ids::new_id());
            let paired = || {
                (seekers.iter()).for_each(|s| self.lobby.automatch_over(&s.user.id));
            };
            if let Err(refusal) = self.start(seating, paired).await {
                tracing::warn!(%refusal, "an automatch game could not start; its players wait on");
                self.lobby.automatch.put_back(seekers);
            }
        }
    }

    /// The bots online with standing offers, with their overall ratings and whether
    /// they have an account (a bot whose rating or account cannot be read now is left
    /// out of this round).
    async fn bot_seats(&self) -> Vec<BotSeat> {
        let listings = self.lobby.bots();
        if listings.is_empty() {
            return Vec::new();
        }
        let store = self.registry.context().store.clone();
        tokio::task::spawn_blocking(move || {
            listings
                .into_iter()
                .filter_map(|listing| {
                    let rating = standings::overall_rating(&*store, &listing.user.id).ok()?;
                    let account = store.user(&listing.user.id).ok()?;
                    let rated = account.is_some_and(|a| a.origin != Origin::Guest && !a.disabled);
                    Some(BotSeat {
                        listing,
                        rating,
                        rated,
                    })
                })
                .collect()
        })
        .await
        .unwrap_or_default()
    }
}

/// Runs an automatch round every [`ROUND_EVERY`] for as long as the starter lives, so
/// waiting windows widen and bots get their turn.
pub fn keep_pairing(starter: Weak<Starter>) {
    tokio::spawn(async move {
        let mut rounds = tokio::time::interval(ROUND_EVERY);
        rounds.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            rounds.tick().await;
            let Some(starter) = starter.upgrade() else {
                return;
            };
            starter.automatch_round().await;
        }
    });
}
