//! Which nodes are alive: each node says so on `<cluster>.nodes` every [`BEAT`], and
//! one not heard for [`GONE_AFTER`] is gone. A node that restarts says so with a new
//! boot number, so what the others copied of its old life goes at once.
//!
//! Two processes started under one `cluster.node_id` would both hold that id's leases
//! and take its games from each other at every claim. Each hears the other's beat (its
//! incarnation differs, its id does not): the one started later yields, refusing to
//! start or stopping ([`Members::yielded`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

/// How often a node says it is alive.
pub const BEAT: Duration = Duration::from_secs(1);
/// How long a silent node counts as alive.
pub const GONE_AFTER: Duration = Duration::from_secs(3);

/// One node's heartbeat; `leaving` when it shuts down, so the others need not wait.
/// `news` is the number of its latest lobby news ([`super::numbers`]).
#[derive(Debug, Serialize, Deserialize)]
pub struct Beat {
    pub node: String,
    pub boot: u64,
    #[serde(default)]
    pub leaving: bool,
    #[serde(default)]
    pub news: u64,
    /// When the node started (wall clock, ms): of two under one id, the later yields.
    #[serde(default)]
    pub since_ms: i64,
}

/// What a heartbeat means to this node.
#[derive(Debug, PartialEq, Eq)]
pub enum Heard {
    /// A node not known alive until now: ask it for its items.
    New,
    /// A node that restarted: forget its old items, then ask for its new ones.
    Restarted,
    Known,
    /// A node that is shutting down: forget its items.
    Left,
}

/// The other nodes heard lately (never this one).
pub struct Members {
    /// This node's incarnation (`<id>#<random>`, see [`super::Node`]).
    me: Arc<str>,
    boot: u64,
    since_ms: i64,
    seen: Mutex<HashMap<Arc<str>, (u64, Instant)>>,
    /// The incarnation of this node's id, started earlier, that this one yields to.
    yielded: tokio::sync::watch::Sender<Option<Arc<str>>>,
}

/// The node id of incarnation `node`.
fn id_of(node: &str) -> &str {
    node.split_once('#').map_or(node, |(id, _)| id)
}

impl Members {
    pub fn new(me: &str) -> Members {
        Members {
            me: me.into(),
            boot: rand::random(),
            since_ms: crate::time::wall_ms(),
            seen: Mutex::default(),
            yielded: tokio::sync::watch::Sender::new(None),
        }
    }

    /// Notes `beat` if it comes from another process under this node's id that started
    /// before this one (or, started in the same millisecond, has the lower
    /// incarnation): both nodes weigh the same two beats, so exactly one yields.
    /// Whether this node yields to it.
    pub fn yields_to(&self, beat: &Beat) -> bool {
        let twin = *beat.node != *self.me && id_of(&beat.node) == id_of(&self.me);
        let earlier = (beat.since_ms, beat.node.as_str()) < (self.since_ms, &*self.me);
        if !(twin && earlier && !beat.leaving) {
            return false;
        }
        self.yielded
            .send_if_modified(|y| y.replace(beat.node.as_str().into()).is_none());
        true
    }

    /// The incarnation this node yields to, if it heard one.
    pub fn yielded_now(&self) -> Option<Arc<str>> {
        self.yielded.borrow().clone()
    }

    /// Returns once this node yields to another under its id (never, normally).
    pub async fn yielded(&self) -> Arc<str> {
        let mut heard = self.yielded.subscribe();
        loop {
            if let Some(twin) = heard.borrow_and_update().clone() {
                return twin;
            }
            if heard.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    /// This node's boot number, drawn at start.
    pub fn boot(&self) -> u64 {
        self.boot
    }

    /// This node's heartbeat, after its news number `news`.
    pub fn beat(&self, leaving: bool, news: u64) -> Beat {
        Beat {
            node: self.me.to_string(),
            boot: self.boot,
            leaving,
            news,
            since_ms: self.since_ms,
        }
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, (u64, Instant)>> {
        // A panic elsewhere cannot leave this map half-changed: each change is one insert
        // or remove.
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes a heartbeat; `None` for this node's own.
    pub fn heard(&self, beat: &Beat) -> Option<(Arc<str>, Heard)> {
        if *beat.node == *self.me {
            return None;
        }
        let mut seen = self.seen();
        let node: Arc<str> = beat.node.as_str().into();
        if beat.leaving {
            return seen.remove(&node).map(|_| (node, Heard::Left));
        }
        let heard = match seen.insert(node.clone(), (beat.boot, Instant::now())) {
            None => Heard::New,
            Some((boot, _)) if boot != beat.boot => Heard::Restarted,
            Some(_) => Heard::Known,
        };
        Some((node, heard))
    }

    /// Drops the nodes silent for too long and returns them.
    pub fn reap(&self) -> Vec<Arc<str>> {
        let mut seen = self.seen();
        let gone: Vec<Arc<str>> = seen
            .iter()
            .filter(|(_, (_, at))| at.elapsed() > GONE_AFTER)
            .map(|(node, _)| node.clone())
            .collect();
        for node in &gone {
            seen.remove(node);
        }
        gone
    }

    /// The node that holds the automatch queue: the lowest id alive.
    pub fn leader(&self) -> Arc<str> {
        let seen = self.seen();
        let lowest = seen.keys().min().filter(|n| **n < self.me);
        lowest.unwrap_or(&self.me).clone()
    }

    /// Whether `node` is, or was until it went, the leader: no node alive is lower.
    pub fn leads_or_led(&self, node: &str) -> bool {
        node < &*self.me && self.seen().keys().all(|n| &**n >= node)
    }

    /// The other nodes alive now.
    pub fn others(&self) -> Vec<Arc<str>> {
        self.seen().keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restart_and_a_goodbye_are_told_apart_from_a_beat() {
        let members = Members::new("a");
        assert_eq!(members.heard(&members.beat(false, 0)), None);
        let beat = |boot, leaving| Beat {
            node: "b".into(),
            boot,
            leaving,
            news: 0,
            since_ms: 0,
        };
        let heard = |b| members.heard(&b).map(|(_, h)| h);
        assert_eq!(&*members.leader(), "a");
        assert_eq!(heard(beat(1, false)), Some(Heard::New));
        assert_eq!(&*members.leader(), "a");
        assert!(!members.leads_or_led("b"));
        assert_eq!(heard(beat(1, false)), Some(Heard::Known));
        assert_eq!(heard(beat(2, false)), Some(Heard::Restarted));
        assert_eq!(members.others().len(), 1);
        assert_eq!(heard(beat(2, true)), Some(Heard::Left));
        assert_eq!(heard(beat(2, true)), None);
        assert!(members.others().is_empty());
    }

    #[test]
    fn of_two_processes_under_one_id_the_later_yields_and_only_it() {
        let first = Members::new("n1#aaa");
        let second = Members {
            since_ms: first.since_ms + 1,
            ..Members::new("n1#bbb")
        };
        let other = Members::new("n2#ccc");
        // Each hears the other's beat: only the later one yields, and it says to whom.
        assert!(!first.yields_to(&second.beat(false, 0)));
        assert!(second.yields_to(&first.beat(false, 0)));
        assert_eq!(first.yielded_now(), None);
        assert_eq!(second.yielded_now().as_deref(), Some("n1#aaa"));
        // Its own beat, another id's, or a goodbye is no reason to yield.
        assert!(!other.yields_to(&other.beat(false, 0)));
        assert!(!other.yields_to(&first.beat(false, 0)));
        let third = Members {
            since_ms: first.since_ms + 1,
            ..Members::new("n1#ddd")
        };
        assert!(!third.yields_to(&first.beat(true, 0)), "a goodbye");
        // Started in the same millisecond, the lower incarnation stays.
        let twin = Members {
            since_ms: first.since_ms,
            ..Members::new("n1#abc")
        };
        assert!(!first.yields_to(&twin.beat(false, 0)));
        assert!(twin.yields_to(&first.beat(false, 0)));
    }
}
