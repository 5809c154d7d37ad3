//! Each account's vacation (client-protocol/correspondence.md#vacation): its balance of
//! days, as of the instant it was last brought up to date (accrual is reckoned from
//! then: `correspondence::vacation`), since when the account is away, if it is, and
//! until when the last day spent at a deadline runs. Every change is decided on the row
//! as it stands and kept in the same transaction ([`VacationStore::change_vacation`]),
//! so two games whose deadlines come at once, on two nodes, spend one day.

use super::StoreError;

/// An account's vacation as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VacationRow {
    /// What is left, in ms.
    pub balance_ms: i64,
    /// When `balance_ms` was last brought up to date (calendar Unix ms).
    pub as_of_ms: i64,
    /// When the account went away; None: at home.
    pub away_since_ms: Option<i64>,
    /// Whether this vacation's `vacation_ending` notice went out.
    pub warned: bool,
    /// When the last day spent at a deadline ends (calendar Unix ms): until then each
    /// deadline of the account's is covered by it. None: no day spent yet.
    pub paid_until_ms: Option<i64>,
}

/// A change to an account's vacation: the row to keep, from the row as it stands (None:
/// the account has none yet). Pure; it may be called again if the store must retry.
pub type VacationChange = Box<dyn Fn(Option<VacationRow>) -> VacationRow + Send>;

/// Reading and keeping vacations. Synchronous like the rest; async callers use
/// `spawn_blocking`.
pub trait VacationStore {
    /// The account's vacation, if it has a row yet.
    fn vacation(&self, user_id: &str) -> Result<Option<VacationRow>, StoreError>;

    /// Keeps `change` of the account's vacation, read and written in one transaction
    /// with the row locked, so changes made at once (two deadlines, on two nodes; a
    /// deadline and `start_vacation`) take turns and none is lost: the row as it stood
    /// before the change, and as kept.
    fn change_vacation(
        &self,
        user_id: &str,
        change: VacationChange,
    ) -> Result<(Option<VacationRow>, VacationRow), StoreError>;

    /// Every account away now, with its vacation.
    fn away_accounts(&self) -> Result<Vec<(String, VacationRow)>, StoreError>;
}
