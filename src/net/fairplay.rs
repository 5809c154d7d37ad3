//! Fair-play requests outside any game: blocking users and reporting them to the
//! referees (client-protocol/referee.md). The store holds both; reads and writes go to
//! the blocking pool.

use std::sync::Arc;

use crate::accounts::mutes::MAX_MUTES_PER_USER;
use crate::hub::Hub;
use crate::lobby::blocks::MAX_BLOCKS_PER_USER;
use crate::protocol::{ErrorCode, MAX_REASON_CHARS, Refusal, Report, Role, UserInfo};
use crate::store::{NewReport, Store, StoreError, StoredReport};
use crate::time::wall_ms;

/// Open reports one user may have at once.
pub const MAX_OPEN_REPORTS_PER_USER: usize = 20;
/// Open reports a listing shows at most.
const LISTED_REPORTS: u32 = 200;
/// The longest user id a block or report names.
const MAX_ID_BYTES: usize = 128;

fn bad(message: impl Into<String>) -> Refusal {
    Refusal::new(ErrorCode::BadRequest, message)
}

/// Runs a store call on the blocking pool.
async fn stored<T: Send + 'static>(
    hub: &Hub,
    call: impl FnOnce(&dyn Store) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, Refusal> {
    let store: Arc<dyn Store> = hub.store().clone();
    let unavailable = |e: &dyn std::fmt::Display| {
        Refusal::new(ErrorCode::Unavailable, format!("the store failed: {e}"))
    };
    tokio::task::spawn_blocking(move || call(store.as_ref()))
        .await
        .map_err(|e| unavailable(&e))?
        .map_err(|e| unavailable(&e))
}

fn user_id(id: &str) -> Result<(), Refusal> {
    if id.is_empty() || id.len() > MAX_ID_BYTES {
        return Err(bad(format!("a user id has 1 to {MAX_ID_BYTES} bytes")));
    }
    Ok(())
}

/// Refuses an id that names nobody: no user row (an account, a guest, an identity
/// service's user) and no game (a user of the server's own tokens has only games).
pub async fn known_user(hub: &Hub, id: &str) -> Result<(), Refusal> {
    user_id(id)?;
    let who = id.to_string();
    if stored(hub, move |s| {
        Ok(s.user(&who)?.is_some() || s.has_played(&who)?)
    })
    .await?
    {
        return Ok(());
    }
    Err(Refusal::new(
        ErrorCode::NotFound,
        format!("there is no user `{id}` on this server"),
    ))
}

/// `user` blocks `other` (`on`) or stops blocking them.
pub async fn block(hub: &Hub, user: &UserInfo, other: String, on: bool) -> Result<(), Refusal> {
    user_id(&other)?;
    if other == user.id {
        return Err(bad("you cannot block yourself"));
    }
    let blocks = &hub.lobby.blocks;
    if on && !blocks.blocks(&user.id, &other) && blocks.count(&user.id) >= MAX_BLOCKS_PER_USER {
        return Err(Refusal::new(
            ErrorCode::LimitReached,
            format!("you already block {MAX_BLOCKS_PER_USER} users, the most allowed"),
        ));
    }
    let (me, them) = (user.id.clone(), other.clone());
    stored(hub, move |s| s.set_block(&me, &them, on, wall_ms())).await?;
    hub.lobby.set_block(&user.id, &other, on);
    Ok(())
}

/// `user` mutes `other` (`on`) or stops muting them: stored, then screened from every
/// connection of `user` on this node ([`crate::accounts::mutes`]).
pub async fn mute(hub: &Hub, user: &UserInfo, other: String, on: bool) -> Result<(), Refusal> {
    if other == user.id {
        return Err(bad("you cannot mute yourself"));
    }
    let mutes = &hub.lobby.mutes;
    if on && !mutes.mutes(&user.id, &other) {
        if mutes.count(&user.id) >= MAX_MUTES_PER_USER {
            return Err(Refusal::new(
                ErrorCode::LimitReached,
                format!("you already mute {MAX_MUTES_PER_USER} users, the most allowed"),
            ));
        }
        known_user(hub, &other).await?;
    } else {
        user_id(&other)?;
    }
    let (me, them) = (user.id.clone(), other.clone());
    stored(hub, move |s| s.set_mute(&me, &them, on, wall_ms())).await?;
    mutes.set(&user.id, &other, on);
    Ok(())
}

/// What a `report` message carries.
pub struct Filing {
    pub user: Option<String>,
    pub game_id: Option<String>,
    pub from_seq: Option<u64>,
    pub to_seq: Option<u64>,
    pub reason: String,
}

/// Files `user`'s report; returns its number.
pub async fn report(hub: &Hub, user: &UserInfo, f: Filing) -> Result<u64, Refusal> {
    let reason = f.reason.trim().to_string();
    if reason.is_empty() || reason.chars().count() > MAX_REASON_CHARS {
        return Err(bad(format!(
            "a report's reason must have 1 to {MAX_REASON_CHARS} characters"
        )));
    }
    if f.user.is_none() && f.game_id.is_none() {
        return Err(bad("a report names a `user`, a `game_id`, or both"));
    }
    if let Some(u) = &f.user {
        known_user(hub, u).await?;
    }
    let seqs = match (f.from_seq, f.to_seq) {
        (None, None) => None,
        (Some(a), Some(b)) if f.game_id.is_some() && 1 <= a && a <= b => Some((a, b)),
        _ => {
            return Err(bad(
                "`from_seq` and `to_seq` come together, with a `game_id`, and 1 <= from_seq <= to_seq",
            ));
        }
    };
    if let Some(game) = f.game_id.clone() {
        let last = stored(hub, move |s| {
            s.events_in(&game, 1..u64::MAX)
                .map(|e| e.last().map(|r| r.seq))
        })
        .await?;
        match last {
            None => {
                return Err(Refusal::new(
                    ErrorCode::NotFound,
                    format!("no game `{}`", f.game_id.as_deref().unwrap_or_default()),
                ));
            }
            Some(last) if seqs.is_some_and(|(_, to)| to > last) => {
                return Err(bad(format!("that game's last event is {last}")));
            }
            Some(_) => {}
        }
    }
    let report = NewReport {
        reporter: user.id.clone(),
        user: f.user,
        game_id: f.game_id,
        seqs,
        reason,
        at_ms: wall_ms(),
    };
    stored(hub, move |s| {
        let open = s.open_reports(Some(&report.reporter), MAX_OPEN_REPORTS_PER_USER as u32)?;
        if open.len() >= MAX_OPEN_REPORTS_PER_USER {
            return Ok(None);
        }
        s.file_report(&report).map(Some)
    })
    .await?
    .ok_or_else(|| {
        Refusal::new(
            ErrorCode::LimitReached,
            format!(
                "you have {MAX_OPEN_REPORTS_PER_USER} open reports; wait for a referee to close one"
            ),
        )
    })
}

fn referee_only(user: &UserInfo) -> Result<(), Refusal> {
    match user.role {
        Role::Referee | Role::Admin => Ok(()),
        _ => Err(Refusal::new(
            ErrorCode::Forbidden,
            "only referees and admins see and close reports",
        )),
    }
}

/// The open reports, for referees and admins.
pub async fn open_reports(hub: &Hub, user: &UserInfo) -> Result<Vec<Report>, Refusal> {
    referee_only(user)?;
    let open = stored(hub, |s| s.open_reports(None, LISTED_REPORTS)).await?;
    Ok(open.into_iter().map(listed).collect())
}

/// Closes a report, for referees and admins.
pub async fn close_report(hub: &Hub, user: &UserInfo, id: u64) -> Result<(), Refusal> {
    referee_only(user)?;
    if !stored(hub, move |s| s.close_report(id)).await? {
        return Err(Refusal::new(
            ErrorCode::NotFound,
            format!("no open report {id}"),
        ));
    }
    Ok(())
}

fn listed(r: StoredReport) -> Report {
    let StoredReport { id, report } = r;
    Report {
        report_id: id,
        reporter: report.reporter,
        user: report.user,
        game_id: report.game_id,
        from_seq: report.seqs.map(|(a, _)| a),
        to_seq: report.seqs.map(|(_, b)| b),
        reason: report.reason,
        at: report.at_ms,
    }
}
