//! Who mutes whom, in memory for the connections' writes: loaded from the store at start
//! and written through on every change (`net/fairplay.rs`). A muting user's connections
//! no longer carry the muted user's chat: a player's numbered `chat` event still comes
//! (the game's events stay numbered without a gap) but with its text left out and
//! `muted: true`, and a spectator's `kibitz` line and a snapshot's chat lines from them do
//! not come at all. Nobody else's view changes: the line is still said, stored and in the
//! record, and a connection with the role referee or admin hears everything, its own
//! mutes aside, since whoever judges a game must hear all of it.

use std::collections::HashSet;
use std::sync::Arc;

use dashmap::DashMap;
use serde_json::Value;

use crate::fanout::Frame;
use crate::protocol::{Role, UserInfo};

/// The most users one user may mute.
pub const MAX_MUTES_PER_USER: usize = 1000;

/// Every mute, by muter.
#[derive(Default)]
pub struct Mutes {
    by: DashMap<String, Arc<HashSet<String>>>,
}

impl Mutes {
    /// Takes the stored mutes, `(muter, muted)`.
    pub fn load(&self, pairs: Vec<(String, String)>) {
        for (muter, muted) in pairs {
            self.set(&muter, &muted, true);
        }
    }

    /// The users `muter` mutes, sorted.
    pub fn list(&self, muter: &str) -> Vec<String> {
        let mut users: Vec<String> = self
            .by
            .get(muter)
            .map(|m| m.iter().cloned().collect())
            .unwrap_or_default();
        users.sort();
        users
    }

    /// How many users `muter` mutes.
    pub fn count(&self, muter: &str) -> usize {
        self.by.get(muter).map_or(0, |m| m.len())
    }

    /// Whether `muter` mutes `muted`.
    pub fn mutes(&self, muter: &str, muted: &str) -> bool {
        self.by.get(muter).is_some_and(|m| m.contains(muted))
    }

    /// Records a mute (`on`) or its end, once the store has it.
    pub fn set(&self, muter: &str, muted: &str, on: bool) {
        let mut entry = self.by.entry(muter.to_string()).or_default();
        let set = Arc::make_mut(&mut entry);
        match on {
            true => set.insert(muted.to_string()),
            false => set.remove(muted),
        };
    }

    /// What a connection of `user` must screen its frames by: the users they mute, none
    /// for a referee or an admin, or when they mute nobody.
    pub fn screen_for(&self, user: Option<&UserInfo>) -> Option<Arc<HashSet<String>>> {
        let user = user.filter(|u| !matches!(u.role, Role::Referee | Role::Admin))?;
        self.by
            .get(&user.id)
            .map(|m| m.clone())
            .filter(|m| !m.is_empty())
    }
}

/// `frame` as a connection whose user mutes `muted` receives it: unchanged, but for a
/// muted user's `chat` event (its text left out, `muted: true`), `kibitz` line (None: not
/// sent) or lines in a snapshot's `chat` (left out). Only frames that may hold chat are
/// read.
pub fn screen(frame: Frame, muted: &HashSet<String>) -> Option<Frame> {
    let text = frame.as_str();
    let may_hold = [
        "\"type\":\"chat\"",
        "\"type\":\"kibitz\"",
        "\"type\":\"snapshot\"",
    ];
    if !may_hold.iter().any(|t| text.contains(t)) {
        return Some(frame);
    }
    let Ok(mut value) = serde_json::from_str::<Value>(text) else {
        return Some(frame);
    };
    let from_muted = |line: &Value| {
        line["from"]["id"]
            .as_str()
            .is_some_and(|id| muted.contains(id))
    };
    match value["type"].as_str() {
        Some("kibitz") if from_muted(&value) => return None,
        Some("chat") if from_muted(&value) => {
            value["text"] = Value::from("");
            value["muted"] = Value::from(true);
        }
        Some("snapshot") => match value["chat"].as_array_mut() {
            Some(lines) if lines.iter().any(from_muted) => {
                lines.retain(|l| !from_muted(l));
                if lines.is_empty()
                    && let Some(fields) = value.as_object_mut()
                {
                    // As a snapshot without chat has it: no `chat` at all.
                    fields.remove("chat");
                }
            }
            _ => return Some(frame),
        },
        _ => return Some(frame),
    }
    Some(Frame::from(value.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_muted_users_chat_is_screened_and_nothing_else() {
        let muted: HashSet<String> = ["bob".to_string()].into();
        let chat = |from: &str| {
            Frame::from(format!(
                r#"{{"game_id":"g","seq":7,"type":"chat","from":{{"id":"{from}","name":"B","role":"player"}},"text":"hi","at":1}}"#
            ))
        };
        let screened = screen(chat("bob"), &muted).expect("a numbered event still comes");
        let v: Value = serde_json::from_str(screened.as_str()).unwrap();
        assert_eq!(
            (v["seq"].as_u64(), v["text"].as_str(), v["muted"].as_bool()),
            (Some(7), Some(""), Some(true))
        );
        assert_eq!(screen(chat("carol"), &muted), Some(chat("carol")));
        let kibitz = Frame::from(
            r#"{"type":"kibitz","game_id":"g","from":{"id":"bob","name":"B","role":"player"},"text":"x","at":1}"#,
        );
        assert_eq!(screen(kibitz, &muted), None);
        let quoted = Frame::from(r#"{"type":"ack","id":"\"type\":\"chat\""}"#);
        assert_eq!(screen(quoted.clone(), &muted), Some(quoted));
    }
}
