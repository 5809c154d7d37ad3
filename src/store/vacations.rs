//! Each account's vacation (client-protocol/correspondence.md#vacation): its balance of
//! days, as of the instant it was last brought up to date (accrual is reckoned from
//! then: `correspondence::vacation`), and since when the account is away, if it is. A
//! day spent at a game's deadline is taken off in that game's batch
//! ([`Append::VacationSpent`](super::Append::VacationSpent)), so the day and the event
//! that holds the clock are stored together.

use super::StoreError;

/// An account's vacation as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VacationRow {
    /// What is left, in ms (a batch's day may take it below zero: it reads as none).
    pub balance_ms: i64,
    /// When `balance_ms` was last brought up to date (calendar Unix ms).
    pub as_of_ms: i64,
    /// When the account went away; None: at home.
    pub away_since_ms: Option<i64>,
    /// Whether this vacation's `vacation_ending` notice went out.
    pub warned: bool,
}

/// Reading and keeping vacations. Synchronous like the rest; async callers use
/// `spawn_blocking`.
pub trait VacationStore {
    /// The account's vacation, if it has a row yet.
    fn vacation(&self, user_id: &str) -> Result<Option<VacationRow>, StoreError>;

    /// Keeps the account's vacation.
    fn put_vacation(&self, user_id: &str, row: &VacationRow) -> Result<(), StoreError>;

    /// Every account away now, with its vacation.
    fn away_accounts(&self) -> Result<Vec<(String, VacationRow)>, StoreError>;
}
