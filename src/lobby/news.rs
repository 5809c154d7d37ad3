//! The lobby's side of a cluster: what it tells the other nodes of its own items, and
//! how their news changes its copy of theirs ([`super::replica`]) and reaches the
//! connections here. Without a cluster, nothing here runs and sharing costs nothing.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};

use super::Lobby;
use crate::fanout::Frame;
use crate::lobby::replica::{Held, Kept};
use crate::protocol::{BotListing, Challenge, ErrorCode, Refusal, UserInfo};

/// A change to one node's part of the lobby, or a frame for connections on every node.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    Posted {
        challenge: Challenge,
    },
    Removed {
        challenge: Challenge,
        reason: String,
    },
    Offer {
        listing: BotListing,
    },
    OfferWithdrawn {
        bot: String,
    },
    /// The user's first connection on the node opened.
    Online {
        user: String,
    },
    /// The user's last connection on the node closed.
    Offline {
        user: String,
    },
    /// A frame for every connection of `user`.
    ToUser {
        user: String,
        frame: String,
    },
    /// A frame for every lobby watcher.
    Announce {
        frame: String,
    },
    /// The user's automatch request is over: paired, withdrawn, or its node left.
    AutomatchOver {
        user: String,
    },
    /// `blocker` blocked `blocked` (`on`) or stopped, and the store has it.
    Block {
        blocker: String,
        blocked: String,
        on: bool,
    },
}

/// The lobby's way to the other nodes in a cluster (`cluster::lobby::Link`): only what
/// the lobby itself asks of them, so the lobby knows nothing of how nodes talk.
pub trait Peers: Send + Sync {
    /// Tells every other node of a change here, in the order made.
    fn share(&self, change: Change);
    /// Forgets an automatch request made here; false when there was none.
    fn forget_request(&self, user: &str) -> bool;
    /// Withdraws `user`'s automatch request from the leader's queue; false when it held
    /// none.
    fn cancel_automatch<'a>(
        &'a self,
        lobby: &'a Lobby,
        user: &'a str,
    ) -> BoxFuture<'a, Result<bool, Refusal>>;
    /// Withdraws or declines a challenge held by node `home`.
    fn withdraw_at<'a>(
        &'a self,
        home: &'a str,
        challenge_id: &'a str,
        user: &'a UserInfo,
        decline: bool,
    ) -> BoxFuture<'a, Result<(), Refusal>>;
}

impl Lobby {
    /// Joins the lobby to the others (once, at start).
    pub fn link(&self, link: Arc<dyn Peers>) {
        let _ = self.link.set(link);
    }

    /// Tells the other nodes of a change to this node's items, in the order made. The
    /// change is made only in a cluster: a single node pays nothing for it.
    pub(super) fn share(&self, change: impl FnOnce() -> Change) {
        if let Some(link) = self.link.get() {
            link.share(change());
        }
    }

    /// This node's items, as the changes that would make them, for a node that asks.
    pub fn snapshot(&self) -> Vec<Change> {
        let users = self.online.iter().map(|u| Change::Online {
            user: u.key().clone(),
        });
        let offers = self
            .offers
            .iter()
            .map(|o| Change::Offer { listing: o.clone() });
        let challenges = self.challenges.iter().map(|o| Change::Posted {
            challenge: o.challenge.clone(),
        });
        users.chain(offers).chain(challenges).collect()
    }

    /// Applies another node's change (its news number `seq`) here and tells the
    /// connections here what it means to them.
    pub fn apply(&self, node: &Arc<str>, change: Change, seq: u64) {
        match change {
            Change::Posted { challenge } => {
                let held = Held {
                    node: node.clone(),
                    seq,
                    item: challenge.clone(),
                };
                let new = self
                    .others
                    .challenges
                    .insert(challenge.challenge_id.clone(), held)
                    .is_none();
                if new {
                    self.tell_added(&challenge);
                }
            }
            Change::Removed { challenge, reason } => {
                if self
                    .others
                    .challenges
                    .remove(&challenge.challenge_id)
                    .is_some()
                {
                    self.tell_removed(&challenge, &reason);
                }
            }
            Change::Offer { listing } => {
                let held = Held {
                    node: node.clone(),
                    seq,
                    item: listing,
                };
                self.others.offers.insert(held.item.user.id.clone(), held);
            }
            Change::OfferWithdrawn { bot } => {
                self.others.offers.remove_if(&bot, |_, o| o.node == *node);
            }
            Change::Online { user } => self.others.online(&user, node, seq),
            Change::Offline { user } => self.others.offline(&user, node),
            Change::ToUser { user, frame } => self.send_here(&user, &Frame::from(frame)),
            Change::Block {
                blocker,
                blocked,
                on,
            } => self.blocks.set(&blocker, &blocked, on),
            Change::AutomatchOver { user } => {
                self.automatch.cancel(&user);
                if let Some(link) = self.link.get() {
                    link.forget_request(&user);
                }
            }
            Change::Announce { frame } => self.announce_here(&Frame::from(frame)),
        }
    }

    /// Applies another node's snapshot, made after its news `seq`: what is new here is
    /// added (and told), and what that node no longer holds goes (news was lost).
    pub fn replace(&self, node: &Arc<str>, changes: Vec<Change>, seq: u64) {
        let mut kept = Kept::default();
        for change in changes {
            match &change {
                Change::Posted { challenge } => {
                    kept.challenges.insert(challenge.challenge_id.clone())
                }
                Change::Offer { listing } => kept.offers.insert(listing.user.id.clone()),
                Change::Online { user } => kept.users.insert(user.clone()),
                _ => false,
            };
            self.apply(node, change, seq);
        }
        for challenge in self.others.keep_only(node, seq, &kept) {
            self.tell_removed(&challenge, "disconnected");
        }
    }

    /// A node left (or restarted): its challenges, offers and users go from here.
    pub fn forget_node(&self, node: &str) {
        for challenge in self.others.forget(node) {
            self.tell_removed(&challenge, "disconnected");
        }
    }

    /// Records a block (`on`) or its end, once the store has it, on every node.
    pub fn set_block(&self, blocker: &str, blocked: &str, on: bool) {
        self.blocks.set(blocker, blocked, on);
        self.share(|| Change::Block {
            blocker: blocker.to_string(),
            blocked: blocked.to_string(),
            on,
        });
    }

    /// A user's automatch request is over (paired or withdrawn): every node forgets it.
    pub fn automatch_over(&self, user_id: &str) {
        if let Some(link) = self.link.get() {
            link.forget_request(user_id);
        }
        self.share(|| Change::AutomatchOver {
            user: user_id.to_string(),
        });
    }

    /// Withdraws `user_id`'s automatch request from the queue here; false when it has none.
    pub fn cancel_here(&self, user_id: &str) -> bool {
        let cancelled = self.automatch.cancel(user_id);
        if cancelled {
            self.automatch_over(user_id);
        }
        cancelled
    }

    /// Withdraws `user_id`'s automatch request from the queue, wherever it is.
    pub async fn cancel_automatch(&self, user_id: &str) -> Result<(), Refusal> {
        let cancelled = match self.link.get() {
            Some(link) => link.cancel_automatch(self, user_id).await?,
            None => self.automatch.cancel(user_id),
        };
        if !cancelled {
            return Err(Refusal::new(
                ErrorCode::NotFound,
                "you are not waiting for an automatch",
            ));
        }
        Ok(())
    }

    /// Withdraws or declines a challenge on the node that holds it.
    pub async fn withdraw_anywhere(
        &self,
        id: &str,
        user: &UserInfo,
        decline: bool,
    ) -> Result<(), Refusal> {
        match (self.others.home_of(id), self.link.get()) {
            (Some(home), Some(link)) => link.withdraw_at(&home, id, user, decline).await,
            _ => self.withdraw(id, user, decline),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Challenge, GameSettings, Role};

    fn seek(id: &str) -> Change {
        Change::Posted {
            challenge: Challenge {
                challenge_id: id.into(),
                from: UserInfo {
                    id: "alice".into(),
                    name: "Alice".into(),
                    role: Role::Player,
                },
                to: None,
                settings: GameSettings::default(),
                created_at: 0,
                from_rank: None,
                nigiri_commitment: None,
            },
        }
    }

    fn listed(lobby: &Lobby) -> Vec<String> {
        let list = lobby.list_for(None).into_iter();
        let mut ids: Vec<String> = list.map(|c| c.challenge_id).collect();
        ids.sort();
        ids
    }

    #[test]
    fn a_snapshot_drops_what_its_node_removed_unheard_and_keeps_later_news() {
        let lobby = Lobby::default();
        let b: Arc<str> = "b".into();
        lobby.apply(&b, seek("one"), 1);
        lobby.apply(&b, seek("two"), 2);
        lobby.apply(&b, seek("five"), 5);
        lobby.apply(&"c".into(), seek("other"), 1);
        // Made after b's news 4: "one" was removed by news this node never heard, and
        // "five" came after it.
        lobby.replace(&b, vec![seek("two"), seek("three")], 4);
        assert_eq!(listed(&lobby), ["five", "other", "three", "two"]);
        lobby.forget_node("b");
        assert_eq!(listed(&lobby), ["other"]);
    }
}
