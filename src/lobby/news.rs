//! The lobby's side of a cluster: what it tells the other nodes of its own items, and
//! how their news changes its copy of theirs ([`super::replica`]) and reaches the
//! connections here. Without a cluster, nothing here runs and sharing costs nothing.

use std::sync::Arc;

use super::{Link, Lobby};
use crate::cluster::lobby::Change;
use crate::fanout::Frame;
use crate::lobby::replica::Held;
use crate::protocol::{ErrorCode, Refusal, UserInfo};

impl Lobby {
    /// Joins the lobby to the others (once, at start).
    pub fn link(&self, link: Link) {
        let _ = self.link.set(link);
    }

    /// The way to the other nodes, in a cluster.
    pub fn cluster(&self) -> Option<&Link> {
        self.link.get()
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

    /// Applies another node's change here and tells the connections here what it means
    /// to them. `fresh` is false for a snapshot's items, which nobody is told of again.
    pub fn apply(&self, node: &Arc<str>, change: Change, fresh: bool) {
        match change {
            Change::Posted { challenge } => {
                let held = Held {
                    node: node.clone(),
                    item: challenge.clone(),
                };
                let new = self
                    .others
                    .challenges
                    .insert(challenge.challenge_id.clone(), held)
                    .is_none();
                if fresh && new {
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
                    item: listing,
                };
                self.others.offers.insert(held.item.user.id.clone(), held);
            }
            Change::OfferWithdrawn { bot } => {
                self.others.offers.remove_if(&bot, |_, o| o.node == *node);
            }
            Change::Online { user } => self.others.online(&user, node),
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
