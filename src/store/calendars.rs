//! Each account's calendar for correspondence games (client-protocol/
//! correspondence.md#weekends): its IANA time zone and its weekend days, on which its
//! clock stands still in a game with `weekends`. An account without a row has the
//! default: UTC, Saturday and Sunday.

use super::StoreError;

/// An account's calendar as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalendarRow {
    /// An IANA time zone name, checked before it was kept.
    pub time_zone: String,
    /// The weekend days, bit `d` for the day `d` days after Monday.
    pub weekend: u8,
}

/// Reading and keeping calendars. Synchronous like the rest; async callers use
/// `spawn_blocking`.
pub trait CalendarStore {
    /// The account's calendar, if it has set one.
    fn calendar(&self, user_id: &str) -> Result<Option<CalendarRow>, StoreError>;

    /// Keeps the account's calendar.
    fn put_calendar(&self, user_id: &str, row: &CalendarRow) -> Result<(), StoreError>;
}
