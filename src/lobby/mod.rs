//! The lobby: open seeks and direct challenges, who is online, and who watches the lobby.
//! Small shared maps (DashMap), never game state.

pub mod automatch;
pub mod blocks;
pub mod create;
pub mod news;
pub mod nigiri;
pub mod replica;

use std::sync::{Arc, OnceLock};

use dashmap::DashMap;

use crate::fanout::{Frame, Outbox, encode};
use crate::protocol::{
    BotListing, BotOffer, Challenge, ErrorCode, GameSettings, GameSummary, Refusal, ServerMsg,
    UserInfo,
};
use crate::standings::Ranks;
use crate::time::wall_ms;
pub use news::{Change, Peers};

/// A seek or challenge waiting for an answer, with the nigiri secret behind it.
#[derive(Debug, Clone)]
pub struct Open {
    pub challenge: Challenge,
    pub secret: Option<[u8; 32]>,
}

#[derive(Default)]
pub struct Lobby {
    challenges: DashMap<String, Open>,
    /// Who blocks whom ([`Lobby::is_blocked`]).
    pub blocks: blocks::Blocks,
    /// Who mutes whom: what each connection's writes screen out.
    pub mutes: crate::accounts::mutes::Mutes,
    watchers: DashMap<u64, Outbox>,
    online: DashMap<String, Vec<Outbox>>,
    /// Bots' standing offers, by bot user id.
    offers: DashMap<String, BotListing>,
    /// Players waiting for an automatch.
    pub automatch: automatch::Queue,
    /// The players' ranks, which the rating task keeps; read here, never written.
    ranks: Ranks,
    /// The other nodes' seeks, offers and users, in a cluster.
    pub others: replica::Replica,
    /// The way to the other nodes, set once at start in a cluster.
    link: OnceLock<Arc<dyn Peers>>,
}

/// Refuses a rated game with a player who may not play rated games (a guest).
pub fn check_rated(rated: bool, players: [&UserInfo; 2]) -> Result<(), Refusal> {
    if !rated {
        return Ok(());
    }
    match players.iter().find(|u| !u.role.may_play_rated()) {
        None => Ok(()),
        Some(guest) => Err(Refusal::new(
            ErrorCode::RatedNotAllowed,
            format!(
                "{} is a guest, and guests play unrated games only",
                guest.name
            ),
        )),
    }
}

impl Lobby {
    /// Whether `a` and `b` must not meet: either has blocked the other. Challenges,
    /// accepting, automatch and players' chat check it.
    pub fn is_blocked(&self, a: &str, b: &str) -> bool {
        self.blocks.is_blocked(a, b)
    }

    /// A lobby that shows the players' ranks from `ranks`.
    pub fn new(ranks: Ranks) -> Lobby {
        Lobby {
            ranks,
            ..Lobby::default()
        }
    }

    /// A game summary with its players' ranks as they are now.
    pub fn ranked(&self, mut game: GameSummary) -> GameSummary {
        game.black_rank = self.ranks.of(&game.black.id);
        game.white_rank = self.ranks.of(&game.white.id);
        game
    }

    /// Posts a seek (`to: None`) or a challenge to one user.
    pub fn post(
        &self,
        from: &UserInfo,
        to: Option<String>,
        settings: GameSettings,
        max_per_user: usize,
    ) -> Result<Challenge, Refusal> {
        check_rated(settings.rated, [from, from])?;
        if to.as_deref() == Some(from.id.as_str()) {
            return Err(Refusal::new(
                ErrorCode::BadRequest,
                "you cannot challenge yourself",
            ));
        }
        if let Some(refusal) = to.as_ref().and_then(|to| self.blocks.refusal(&from.id, to)) {
            return Err(refusal);
        }
        if let Some(to) = &to
            && !self.is_online(to)
        {
            return Err(Refusal::new(
                ErrorCode::NotFound,
                format!("user `{to}` is not online"),
            ));
        }
        // Across nodes, a seek posted elsewhere at the same moment may not be counted yet.
        let mine = self
            .challenges
            .iter()
            .filter(|c| c.challenge.from.id == from.id)
            .count()
            + (self.others.challenges.iter())
                .filter(|c| c.item.from.id == from.id)
                .count();
        if mine >= max_per_user {
            return Err(Refusal::new(
                ErrorCode::LimitReached,
                format!("you already have {mine} open seeks and challenges"),
            ));
        }
        let (secret, commitment) = match settings.color {
            crate::protocol::ColorChoice::Nigiri => {
                let (s, c) = nigiri::commit();
                (Some(s), Some(c))
            }
            _ => (None, None),
        };
        let challenge = Challenge {
            challenge_id: crate::ids::new_id(),
            from: from.clone(),
            to,
            settings,
            created_at: wall_ms(),
            from_rank: self.ranks.of(&from.id),
            nigiri_commitment: commitment,
        };
        self.challenges.insert(
            challenge.challenge_id.clone(),
            Open {
                challenge: challenge.clone(),
                secret,
            },
        );
        self.tell_added(&challenge);
        self.share(|| Change::Posted {
            challenge: challenge.clone(),
        });
        Ok(challenge)
    }

    /// Takes a seek or challenge out of the lobby for `accepter` to accept.
    pub fn take(&self, id: &str, accepter: &UserInfo) -> Result<Open, Refusal> {
        let not_found = || {
            Refusal::new(
                ErrorCode::NotFound,
                format!("no open seek or challenge `{id}`"),
            )
        };
        let open = self
            .challenges
            .remove(id)
            .map(|(_, o)| o)
            .ok_or_else(not_found)?;
        let c = &open.challenge;
        let refusal = if c.from.id == accepter.id {
            Some(Refusal::new(
                ErrorCode::Forbidden,
                "you cannot accept your own seek",
            ))
        } else if c.to.as_ref().is_some_and(|to| *to != accepter.id) {
            Some(Refusal::new(
                ErrorCode::Forbidden,
                "that challenge is for someone else",
            ))
        } else {
            (self.blocks.refusal(&accepter.id, &c.from.id))
                .or_else(|| check_rated(c.settings.rated, [&c.from, accepter]).err())
        };
        if let Some(r) = refusal {
            self.challenges.insert(id.to_string(), open);
            return Err(r);
        }
        Ok(open)
    }

    /// Puts back a challenge taken by [`Lobby::take`] when the game could not start. The
    /// other nodes are told again: a snapshot made meanwhile did not hold it.
    pub fn put_back(&self, open: Open) {
        let challenge = open.challenge.clone();
        self.challenges
            .insert(open.challenge.challenge_id.clone(), open);
        self.share(|| Change::Posted { challenge });
    }

    /// Withdraws (`cancel`, by its author) or declines (`decline`, by its addressee).
    pub fn withdraw(&self, id: &str, user: &UserInfo, decline: bool) -> Result<(), Refusal> {
        let allowed = |o: &Open| {
            if decline {
                o.challenge.to.as_deref() == Some(user.id.as_str())
            } else {
                o.challenge.from.id == user.id
            }
        };
        let open = self
            .challenges
            .remove_if(id, |_, o| allowed(o))
            .map(|(_, o)| o)
            .ok_or_else(|| {
                Refusal::new(
                    ErrorCode::NotFound,
                    format!(
                        "no challenge `{id}` you can {}",
                        if decline { "decline" } else { "cancel" }
                    ),
                )
            })?;
        self.removed(
            &open.challenge,
            if decline { "declined" } else { "cancelled" },
        );
        Ok(())
    }

    /// Tells those concerned, on every node, that a challenge is gone.
    pub fn removed(&self, c: &Challenge, reason: &str) {
        self.tell_removed(c, reason);
        self.share(|| Change::Removed {
            challenge: c.clone(),
            reason: reason.to_string(),
        });
    }

    /// Tells this node's watchers, or the addressee's connections here, of a new challenge.
    fn tell_added(&self, challenge: &Challenge) {
        let added = encode(&ServerMsg::ChallengeAdded {
            challenge: challenge.clone(),
        });
        match &challenge.to {
            None => self.announce_here(&added),
            Some(to) => self.send_here(to, &added),
        }
    }

    /// Tells those concerned on this node that a challenge is gone.
    fn tell_removed(&self, c: &Challenge, reason: &str) {
        let frame = encode(&ServerMsg::ChallengeRemoved {
            challenge_id: c.challenge_id.clone(),
            reason: reason.to_string(),
        });
        match &c.to {
            None => {
                self.announce_here(&frame);
                // The author hears it once: their watching connections just did.
                self.send_unwatched(&c.from.id, &frame);
            }
            Some(to) => {
                self.send_here(&c.from.id, &frame);
                self.send_here(to, &frame);
            }
        }
    }

    /// Open seeks, plus the challenges from or to `user`.
    pub fn list_for(&self, user: Option<&UserInfo>) -> Vec<Challenge> {
        let here = self.challenges.iter().map(|o| o.challenge.clone());
        let there = self.others.challenges.iter().map(|c| c.item.clone());
        let mut list: Vec<Challenge> = here
            .chain(there)
            .map(|c| Challenge {
                // The rank now: a rated game may have ended since the seek was posted.
                from_rank: self.ranks.of(&c.from.id),
                ..c
            })
            .filter(|c| {
                c.to.is_none()
                    || user.is_some_and(|u| {
                        c.from.id == u.id || c.to.as_deref() == Some(u.id.as_str())
                    })
            })
            .collect();
        list.sort_by_key(|c| c.created_at);
        list
    }

    pub fn connect(&self, user: &UserInfo, outbox: Outbox) {
        let mut list = self.online.entry(user.id.clone()).or_default();
        list.push(outbox);
        if list.len() == 1 {
            self.share(|| Change::Online {
                user: user.id.clone(),
            });
        }
    }

    /// A connection closed. When it was the user's last one, their seeks and challenges
    /// go too (an absent player cannot answer).
    pub fn disconnect(&self, user: &UserInfo, conn: u64) {
        let gone = match self.online.get_mut(&user.id) {
            Some(mut list) => {
                list.retain(|o| o.conn() != conn);
                list.is_empty()
            }
            None => false,
        };
        if gone {
            if self
                .online
                .remove_if(&user.id, |_, l| l.is_empty())
                .is_some()
            {
                self.share(|| Change::Offline {
                    user: user.id.clone(),
                });
            }
            self.withdraw_offer(&user.id);
            self.automatch.cancel(&user.id);
            if self.link.get().is_some_and(|l| l.forget_request(&user.id)) {
                self.share(|| Change::AutomatchOver {
                    user: user.id.clone(),
                });
            }
            let mine: Vec<String> = self
                .challenges
                .iter()
                .filter(|o| o.challenge.from.id == user.id)
                .map(|o| o.key().clone())
                .collect();
            for id in mine {
                if let Some((_, open)) = self.challenges.remove(&id) {
                    self.removed(&open.challenge, "disconnected");
                }
            }
        }
        self.watchers.remove(&conn);
    }

    /// A bot's standing offer (replacing any earlier one).
    pub fn set_offer(&self, bot: &UserInfo, offer: BotOffer) {
        let listing = BotListing {
            user: bot.clone(),
            offer,
        };
        self.offers.insert(bot.id.clone(), listing.clone());
        self.share(|| Change::Offer { listing });
    }

    pub fn withdraw_offer(&self, bot_id: &str) {
        if self.offers.remove(bot_id).is_some() {
            self.share(|| Change::OfferWithdrawn {
                bot: bot_id.to_string(),
            });
        }
    }

    /// A bot's offer, made on this node or another.
    pub fn offer_of(&self, bot_id: &str) -> Option<BotListing> {
        (self.offers.get(bot_id).map(|o| o.clone()))
            .or_else(|| self.others.offers.get(bot_id).map(|o| o.item.clone()))
    }

    /// Bots online with their offers (on any node), by id.
    pub fn bots(&self) -> Vec<BotListing> {
        let here = self.offers.iter().map(|o| o.clone());
        let there = self.others.offers.iter().map(|o| o.item.clone());
        let mut bots: Vec<BotListing> = here.chain(there).collect();
        bots.sort_by(|a, b| a.user.id.cmp(&b.user.id));
        bots
    }

    /// Whether `user_id` has a connection on any node.
    pub fn is_online(&self, user_id: &str) -> bool {
        self.online.contains_key(user_id) || self.others.is_online(user_id)
    }

    /// Sends a frame to every connection of a user, on every node.
    pub fn send_to_user(&self, user_id: &str, frame: &Frame) {
        self.send_here(user_id, frame);
        self.share(|| Change::ToUser {
            user: user_id.to_string(),
            frame: frame.as_str().to_string(),
        });
    }

    /// Ends the user's connections on this node after `frame` (every node of a cluster
    /// does the same for its own: `accounts/revoke.rs`). Their seeks, challenges,
    /// automatch request and bot offer go as the last connection closes.
    pub fn end_connections(&self, user_id: &str, frame: &Frame, code: u16, reason: &'static str) {
        if let Some(list) = self.online.get(user_id) {
            for o in list.iter() {
                o.push(frame.clone());
                o.end(code, reason);
            }
        }
    }

    /// Sends a frame to the user's connections on this node.
    fn send_here(&self, user_id: &str, frame: &Frame) {
        if let Some(list) = self.online.get(user_id) {
            for o in list.iter() {
                o.push(frame.clone());
            }
        }
    }

    /// As [`Lobby::send_here`], to those of the user's connections not watching the lobby.
    fn send_unwatched(&self, user_id: &str, frame: &Frame) {
        if let Some(list) = self.online.get(user_id) {
            for o in list
                .iter()
                .filter(|o| !self.watchers.contains_key(&o.conn()))
            {
                o.push(frame.clone());
            }
        }
    }

    pub fn watch(&self, outbox: Outbox) {
        self.watchers.insert(outbox.conn(), outbox);
    }

    pub fn unwatch(&self, conn: u64) {
        self.watchers.remove(&conn);
    }

    /// Sends a frame to everyone watching the lobby, on every node.
    pub fn announce(&self, frame: &Frame) {
        self.announce_here(frame);
        self.share(|| Change::Announce {
            frame: frame.as_str().to_string(),
        });
    }

    /// Sends a frame to the lobby's watchers on this node.
    fn announce_here(&self, frame: &Frame) {
        for w in self.watchers.iter() {
            w.push(frame.clone());
        }
    }
}
