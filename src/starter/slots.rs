//! Live-game slots: how many games each user plays now, against `max_games_per_user`
//! (or a bot's own `max_games` while its offer is up, when that is lower).

use std::sync::Arc;

use dashmap::DashMap;

use crate::lobby::Lobby;
use crate::protocol::{ErrorCode, Refusal, UserInfo};

pub struct Slots {
    /// Live games per user id.
    live: DashMap<String, usize>,
    /// The server's `max_games_per_user`.
    max: usize,
    /// For bots' offers.
    lobby: Arc<Lobby>,
}

impl Slots {
    pub fn new(max: usize, lobby: Arc<Lobby>) -> Slots {
        Slots {
            live: DashMap::new(),
            max,
            lobby,
        }
    }

    /// Takes a live-game slot of `user`'s if they have one left: the check and the count
    /// are one step, so two games accepted at once cannot both take the last slot.
    fn reserve_one(&self, user: &str, max: usize) -> bool {
        let mut n = self.live.entry(user.to_string()).or_default();
        let free = *n < max;
        if free {
            *n += 1;
        }
        free
    }

    /// Counts a game `user` plays (one restored at start, say), whatever the limit.
    pub fn count(&self, user: &str) {
        *self.live.entry(user.to_string()).or_default() += 1;
    }

    pub fn release(&self, user: &str) {
        if let Some(mut n) = self.live.get_mut(user) {
            *n = n.saturating_sub(1);
        }
    }

    /// Takes a slot of each player's, or none.
    pub fn reserve(&self, players: [&UserInfo; 2]) -> Result<(), Refusal> {
        for (i, user) in players.iter().enumerate() {
            if !self.reserve_one(&user.id, self.max_games_of(&user.id)) {
                players[..i].iter().for_each(|u| self.release(&u.id));
                return Err(self.no_slot(user));
            }
        }
        Ok(())
    }

    /// Whether both players have a slot free now, taking none: for refusing a game
    /// before anyone is told of it. [`Slots::reserve`] still decides.
    pub fn check(&self, players: [&UserInfo; 2]) -> Result<(), Refusal> {
        match players.into_iter().find(|u| !self.has_free(&u.id)) {
            Some(user) => Err(self.no_slot(user)),
            None => Ok(()),
        }
    }

    fn no_slot(&self, user: &UserInfo) -> Refusal {
        let max = self.max_games_of(&user.id);
        let whose = if max < self.max {
            "the most its offer takes"
        } else {
            "the most this server allows"
        };
        Refusal::new(
            ErrorCode::LimitReached,
            format!("{} already plays {max} live games, {whose}", user.name),
        )
    }

    /// The most live games `user` may play at once: the server's limit, or a bot's own
    /// `max_games` while its offer is up, when that is lower.
    fn max_games_of(&self, user: &str) -> usize {
        match self.lobby.offer_of(user).and_then(|b| b.offer.max_games) {
            Some(own) => own.min(self.max),
            None => self.max,
        }
    }

    /// Whether a bot with an offer plays as many games as the offer says it takes (its
    /// own limit, not the server's): a challenge to it then waits for the bot to accept.
    pub fn bot_is_full(&self, bot: &str) -> bool {
        let own = self.max_games_of(bot) < self.max;
        own && !self.has_free(bot)
    }

    pub fn has_free(&self, user: &str) -> bool {
        let max = self.max_games_of(user);
        self.live.get(user).is_none_or(|n| *n < max)
    }

    /// The server's limit, for telling a player they reached it.
    pub fn max(&self) -> usize {
        self.max
    }
}
