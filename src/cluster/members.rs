//! Which nodes are alive: each node says so on `<cluster>.nodes` every [`BEAT`], and
//! one not heard for [`GONE_AFTER`] is gone. A node that restarts says so with a new
//! boot number, so what the others copied of its old life goes at once.

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
    me: Arc<str>,
    boot: u64,
    seen: Mutex<HashMap<Arc<str>, (u64, Instant)>>,
}

impl Members {
    pub fn new(me: &str) -> Members {
        Members {
            me: me.into(),
            boot: rand::random(),
            seen: Mutex::default(),
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
}
