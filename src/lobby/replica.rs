//! The other nodes' part of the lobby, copied here from their change messages
//! ([`crate::cluster::lobby`]): their seeks and challenges, their bots' offers and who is
//! connected to them. Read-only for this node's requests: accepting or withdrawing a
//! challenge goes to the node that holds it, and only that node's news changes it here.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use dashmap::DashMap;

use crate::protocol::{BotListing, Challenge};

/// One node's item, which node that is, and the number of the news (or snapshot) that
/// brought it.
#[derive(Debug, Clone)]
pub struct Held<T> {
    pub node: Arc<str>,
    pub seq: u64,
    pub item: T,
}

#[derive(Default)]
pub struct Replica {
    /// Seeks and challenges by id.
    pub challenges: DashMap<String, Held<Challenge>>,
    /// Bots' standing offers by bot id.
    pub offers: DashMap<String, Held<BotListing>>,
    /// The nodes each user has a connection on, with the news that said so.
    online: DashMap<String, HashMap<Arc<str>, u64>>,
}

impl Replica {
    pub fn online(&self, user: &str, node: &Arc<str>, seq: u64) {
        self.online
            .entry(user.to_string())
            .or_default()
            .insert(node.clone(), seq);
    }

    pub fn offline(&self, user: &str, node: &str) {
        if let Some(mut nodes) = self.online.get_mut(user) {
            nodes.remove(node);
        }
        self.online.remove_if(user, |_, nodes| nodes.is_empty());
    }

    /// Whether `user` has a connection on some other node.
    pub fn is_online(&self, user: &str) -> bool {
        self.online.contains_key(user)
    }

    /// The node holding challenge `id`, if another one does.
    pub fn home_of(&self, id: &str) -> Option<Arc<str>> {
        self.challenges.get(id).map(|c| c.node.clone())
    }

    /// Drops everything `node` held; returns its challenges, whose watchers must be told.
    pub fn forget(&self, node: &str) -> Vec<Challenge> {
        let gone: Vec<String> = self
            .challenges
            .iter()
            .filter(|c| &*c.node == node)
            .map(|c| c.key().clone())
            .collect();
        self.offers.retain(|_, o| &*o.node != node);
        self.online.retain(|_, nodes| {
            nodes.remove(node);
            !nodes.is_empty()
        });
        gone.iter()
            .filter_map(|id| self.challenges.remove(id).map(|(_, c)| c.item))
            .collect()
    }

    /// After a snapshot of `node` made at its news `seq`: drops what `node` no longer
    /// holds (what it held then and is not in `kept`), and returns its challenges that
    /// went. Items news brought after the snapshot stay.
    pub fn keep_only(&self, node: &str, seq: u64, kept: &Kept) -> Vec<Challenge> {
        let stale = |n: &Arc<str>, s: u64| &**n == node && s <= seq;
        let gone: Vec<String> = self
            .challenges
            .iter()
            .filter(|c| stale(&c.node, c.seq) && !kept.challenges.contains(c.key()))
            .map(|c| c.key().clone())
            .collect();
        self.offers
            .retain(|bot, o| !stale(&o.node, o.seq) || kept.offers.contains(bot));
        self.online.retain(|user, nodes| {
            if !kept.users.contains(user) {
                nodes.retain(|n, s| !stale(n, *s));
            }
            !nodes.is_empty()
        });
        gone.iter()
            .filter_map(|id| self.challenges.remove(id).map(|(_, c)| c.item))
            .collect()
    }
}

/// The ids of what a snapshot holds.
#[derive(Default)]
pub struct Kept {
    pub challenges: HashSet<String>,
    pub offers: HashSet<String>,
    pub users: HashSet<String>,
}
