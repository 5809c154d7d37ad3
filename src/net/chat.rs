//! Chat's share of the store: each user's chat lines are rated (`limits.chat_lines_per_minute`,
//! over all their connections and games), and each game's chat is capped in bytes
//! (`limits.max_chat_bytes_per_game`), since every line is kept as evidence. The rate is
//! counted on this node while it runs; a game's bytes start, the first time this node
//! sees a line for it, from the lines already in the store, so neither a restart nor the
//! game moving to another node gives its chat a fresh budget.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use super::limits::RateLimit;
use crate::config::Limits;
use crate::protocol::{ErrorCode, EventFrame, GameEvent, Refusal};

/// Users or games tracked before those no longer active are forgotten.
const TRACKED: usize = 4096;

pub struct ChatQuota {
    per_minute: u32,
    max_game_bytes: usize,
    users: Mutex<HashMap<String, RateLimit>>,
    games: Mutex<HashMap<String, usize>>,
}

impl ChatQuota {
    pub fn new(limits: &Limits) -> ChatQuota {
        ChatQuota {
            per_minute: limits.chat_lines_per_minute,
            max_game_bytes: limits.max_chat_bytes_per_game,
            users: Mutex::new(HashMap::new()),
            games: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `game`'s chat bytes are counted here already.
    pub fn knows(&self, game: &str) -> bool {
        let games = self.games.lock().unwrap_or_else(PoisonError::into_inner);
        games.contains_key(game)
    }

    /// Starts counting `game`'s chat from the `used` bytes its stored lines hold.
    pub fn seed(&self, game: &str, used: usize) {
        let mut games = self.games.lock().unwrap_or_else(PoisonError::into_inner);
        games.entry(game.to_string()).or_insert(used);
    }

    /// Counts a line of `bytes` from `user` in `game`, or refuses it. `open` tells
    /// whether a game's room is still open here: the counts of others may be forgotten.
    pub fn take(
        &self,
        user: &str,
        game: &str,
        bytes: usize,
        open: impl Fn(&str) -> bool,
    ) -> Result<(), Refusal> {
        {
            let mut users = self.users.lock().unwrap_or_else(PoisonError::into_inner);
            if users.len() >= TRACKED {
                users.retain(|_, rate| !rate.is_full());
            }
            let rate = users
                .entry(user.to_string())
                .or_insert_with(|| RateLimit::per_minute(self.per_minute));
            if !rate.allow() {
                let refusal = Refusal::new(
                    ErrorCode::RateLimited,
                    format!(
                        "chat is limited to {} lines a minute; wait a little",
                        self.per_minute
                    ),
                );
                return Err(refusal.retry_after(60_000 / u64::from(self.per_minute.max(1))));
            }
        }
        let mut games = self.games.lock().unwrap_or_else(PoisonError::into_inner);
        if games.len() >= TRACKED {
            games.retain(|game, _| open(game));
        }
        let used = games.entry(game.to_string()).or_insert(0);
        if *used + bytes > self.max_game_bytes {
            return Err(Refusal::new(
                ErrorCode::LimitReached,
                format!(
                    "this game's chat is full ({} bytes); no more lines can be kept",
                    self.max_game_bytes
                ),
            ));
        }
        *used += bytes;
        Ok(())
    }
}

/// The bytes of the chat lines among a game's stored events.
pub fn stored_bytes(events: &[crate::store::EventRecord]) -> usize {
    events
        .iter()
        .filter_map(|e| serde_json::from_str::<EventFrame>(&e.payload).ok())
        .map(|frame| match frame.event {
            GameEvent::Chat { text, .. } => text.len(),
            _ => 0,
        })
        .sum()
}
