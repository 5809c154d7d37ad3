//! The numbers of the other nodes' lobby news, to tell when some was lost: each node
//! numbers its news from 1 at every boot, and its heartbeats say how far it has got. NATS
//! delivers at most once, so a gap, or a heartbeat that stays ahead, means the node's
//! items must be copied again.

use std::collections::HashMap;
use std::sync::Mutex;

/// The highest news number applied from each node's current boot.
#[derive(Default)]
pub struct Numbers {
    last: Mutex<HashMap<String, (u64, u64)>>,
}

impl Numbers {
    fn last(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, u64)>> {
        // Each change is one insert: a panic elsewhere cannot leave the map torn.
        self.last.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes news `seq` of `node`'s boot `boot`; true when news before it never came.
    pub fn heard(&self, node: &str, boot: u64, seq: u64) -> bool {
        let mut last = self.last();
        match last.get_mut(node) {
            Some((b, last)) if *b == boot => {
                let gap = seq > *last + 1;
                *last = (*last).max(seq);
                gap
            }
            // A new boot: its first news, or a snapshot, starts the count.
            _ => {
                last.insert(node.to_string(), (boot, seq));
                false
            }
        }
    }

    /// Notes a snapshot made after news `seq`: everything up to it is in.
    pub fn copied(&self, node: &str, boot: u64, seq: u64) {
        let mut last = self.last();
        match last.get_mut(node) {
            Some((b, last)) if *b == boot => *last = (*last).max(seq),
            _ => {
                last.insert(node.to_string(), (boot, seq));
            }
        }
    }

    /// Whether `node` had sent news up to `seq` (its heartbeat said so) that has not all
    /// been applied here.
    pub fn behind(&self, node: &str, boot: u64, seq: u64) -> bool {
        match self.last().get(node) {
            Some(&(b, last)) if b == boot => last < seq,
            _ => seq > 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Numbers;

    #[test]
    fn gaps_and_lags_are_seen_and_a_copy_closes_them() {
        let n = Numbers::default();
        assert!(!n.heard("b", 7, 1));
        assert!(!n.heard("b", 7, 2));
        assert!(n.heard("b", 7, 4), "news 3 never came");
        assert!(!n.heard("b", 7, 3), "late news is no gap");
        assert!(!n.behind("b", 7, 4));
        assert!(n.behind("b", 7, 6));
        n.copied("b", 7, 6);
        assert!(!n.behind("b", 7, 6));
        assert!(!n.heard("b", 8, 1), "a restart counts afresh");
        assert!(n.behind("c", 1, 3), "nothing heard of c yet");
    }
}
