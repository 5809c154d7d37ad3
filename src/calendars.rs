//! Players' calendars (client-protocol/correspondence.md#weekends): `get_calendar` and
//! `set_calendar`. A calendar is kept on the account (`CalendarStore`); each
//! correspondence game with `weekends` records it in its own log (`weekend_set`), when
//! the game begins and whenever its player changes it, so a replay charges the same.
//!
//! A change counts in each game from the player's next turn: the turn under way keeps
//! the weekend it began with, so no one moves a weekend onto a deadline they are about
//! to miss. A game this node could not reach (another node's, in a cluster) reads the
//! calendars again whenever its room is next built.

use std::sync::Arc;

use crate::away::tell_games;
use crate::clock::WeekendError;
use crate::protocol::{Calendar, ErrorCode, Refusal};
use crate::registry::Registry;
use crate::room::RoomCmd;
use crate::store::{CalendarRow, Store, blocking};

/// What a failed store call of a calendar request names.
const WHAT: &str = "calendar";

/// The calendar service.
pub struct Calendars {
    store: Arc<dyn Store>,
    games: Arc<Registry>,
}

impl Calendars {
    pub fn new(store: Arc<dyn Store>, games: Arc<Registry>) -> Calendars {
        Calendars { store, games }
    }

    /// `user_id`'s calendar: UTC, Saturday and Sunday until they set one.
    pub async fn get(&self, user_id: &str) -> Result<Calendar, Refusal> {
        let (store, who) = (self.store.clone(), user_id.to_string());
        let row = blocking(WHAT, move || store.calendar(&who)).await?;
        Ok(row.map_or_else(Calendar::default, |r| {
            Calendar::from_bits(r.time_zone, r.weekend)
        }))
    }

    /// Keeps `calendar` as `user_id`'s and tells their correspondence games with
    /// weekends. Refused, nothing changed, with `invalid_time_zone` for a zone that is
    /// not IANA's and `bad_request` for more than two days.
    pub async fn set(&self, user_id: &str, calendar: Calendar) -> Result<Calendar, Refusal> {
        calendar.weekend().map_err(|e| match e {
            WeekendError::Zone(_) => Refusal::new(ErrorCode::InvalidTimeZone, e.to_string()),
            WeekendError::TooManyDays => {
                Refusal::new(ErrorCode::BadRequest, format!("calendar.weekend: {e}"))
            }
        })?;
        let row = CalendarRow {
            weekend: calendar.weekend_bits(),
            time_zone: calendar.time_zone,
        };
        let calendar = Calendar::from_bits(row.time_zone.clone(), row.weekend);
        let (store, who) = (self.store.clone(), user_id.to_string());
        blocking(WHAT, move || store.put_calendar(&who, &row)).await?;
        let told = calendar.clone();
        let (_, missed) = tell_games(
            &self.store,
            &self.games,
            user_id,
            |s| s.weekends,
            |user_id, reply| RoomCmd::Calendar {
                user_id,
                calendar: told.clone(),
                reply,
            },
        )
        .await?;
        if !missed.is_empty() {
            tracing::info!(user = %user_id, games = missed.len(), "a calendar waits for games not reached");
        }
        Ok(calendar)
    }
}
