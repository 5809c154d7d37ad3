//! Saved analysis boards (reviews), kept so that their links can be shared.

use serde::{Deserialize, Serialize};

use super::StoreError;

/// A saved analysis board (a review): a tree of moves as SGF, from a position of a game
/// or from a loaded file, kept so that its link can be shared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewRecord {
    pub id: String,
    /// Server Unix time in milliseconds when it was saved.
    pub created_at_ms: i64,
    /// The user id that saved it.
    pub owner: String,
    /// The game it starts from, if any.
    pub game_id: Option<String>,
    /// The move of that game it starts after.
    pub move_number: Option<u32>,
    pub sgf: String,
}

/// Reviews: saved, read back by id, and counted per owner (each user's are bounded).
pub trait ReviewStore {
    /// Saves a review under its (fresh) id.
    fn save_review(&self, review: &ReviewRecord) -> Result<(), StoreError>;

    /// One review, if it exists.
    fn review(&self, id: &str) -> Result<Option<ReviewRecord>, StoreError>;

    /// How many reviews `owner` has saved (each user's are bounded).
    fn count_reviews(&self, owner: &str) -> Result<u64, StoreError>;
}
