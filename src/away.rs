//! Players on vacation (client-protocol/correspondence.md#vacation): `start_vacation` and
//! `end_vacation`, which stand or run a player's clock in every correspondence game of
//! theirs that allows it, and one task that ends each vacation when its balance is
//! spent and warns its player `vacation_warn_hours` before.
//!
//! The account's state is in the store (`VacationStore`), each game's in its own log
//! (`vacation` events), so both survive a restart; the task reads the accounts away
//! from the store whenever it wakes. Each change to the account is decided on its row
//! in the store's transaction, so none overwrites a day a game spends meanwhile. A game
//! that starts while its player is away runs their clock: a vacation covers the games
//! under way when it began.

use std::sync::{Arc, Weak};

use tokio::sync::Notify;
use tokio::time::sleep_until;

use crate::clock::Millis;
use crate::correspondence::calendar;
use crate::correspondence::vacation::Policy;
use crate::notify::Notices;
use crate::protocol::{ErrorCode, GameSettings, NoticeKind, NoticePayload, Refusal, Vacation};
use crate::registry::Registry;
use crate::room::RoomCmd;
use crate::store::{GameQuery, GameStatus, Store, VacationRow, blocking};

/// What a failed store call of a vacation request names.
const WHAT: &str = "vacation";
/// The longest the task sleeps with nobody away: a vacation begun is a nudge.
const IDLE: Millis = 3_600_000;
/// The wait after the store could not be read.
const RETRY: Millis = 1_000;

/// The vacation service.
pub struct Vacations {
    store: Arc<dyn Store>,
    policy: Policy,
    games: Arc<Registry>,
    notices: Arc<Notices>,
    /// Told when a vacation begins, so the task looks at its end.
    begun: Arc<Notify>,
}

impl Vacations {
    /// The service, with its task running.
    pub fn start(
        store: Arc<dyn Store>,
        policy: Policy,
        games: Arc<Registry>,
        notices: Arc<Notices>,
    ) -> Arc<Vacations> {
        let me = Arc::new(Vacations {
            store,
            policy,
            games,
            notices,
            begun: Arc::default(),
        });
        tokio::spawn(run(Arc::downgrade(&me)));
        me
    }

    /// `user_id`'s vacation as it stands now (one spent by now ends first, whether or
    /// not the task has come to it).
    pub async fn status(&self, user_id: &str) -> Result<Vacation, Refusal> {
        let (store, policy, who, now) = (
            self.store.clone(),
            self.policy,
            user_id.to_string(),
            now_ms(),
        );
        let row = blocking(WHAT, move || Ok(policy.settle(store.vacation(&who)?, now))).await?;
        match Policy::ends_at(&row) {
            Some(ends) if ends <= row.as_of_ms => self.back(user_id).await,
            _ => Ok(view(&row)),
        }
    }

    /// `user_id` goes on vacation: refused with `no_vacation_left` under an hour of it.
    /// Going again while away changes nothing.
    pub async fn go(&self, user_id: &str) -> Result<Vacation, Refusal> {
        let policy = self.policy;
        let (before, row) = self
            .change(user_id, move |row, now| policy.go(row, now))
            .await?;
        if row.away_since_ms.is_none() {
            return Err(Refusal::new(
                ErrorCode::NoVacationLeft,
                format!(
                    "you have {} minutes of vacation left; a vacation needs at least an hour",
                    row.balance_ms.max(0) / 60_000
                ),
            ));
        }
        if before.and_then(|b| b.away_since_ms).is_none() {
            self.begun.notify_one();
        }
        let (paused, running) = self.tell_games(user_id, true).await?;
        Ok(Vacation {
            paused,
            running,
            ..view(&row)
        })
    }

    /// `user_id` comes back: the vacation's hours are charged and their clocks run.
    /// Coming back while at home changes nothing.
    pub async fn back(&self, user_id: &str) -> Result<Vacation, Refusal> {
        let policy = self.policy;
        let (_, row) = self
            .change(user_id, move |row, now| policy.back(row, now))
            .await?;
        self.tell_games(user_id, false).await?;
        Ok(view(&row))
    }

    /// Keeps `change(row, now)` of the account's vacation (`VacationStore::change_vacation`):
    /// the row before and as kept.
    async fn change(
        &self,
        user_id: &str,
        change: impl Fn(Option<VacationRow>, i64) -> VacationRow + Send + 'static,
    ) -> Result<(Option<VacationRow>, VacationRow), Refusal> {
        let (store, who, now) = (self.store.clone(), user_id.to_string(), now_ms());
        blocking(WHAT, move || {
            store.change_vacation(&who, Box::new(move |row| change(row, now)))
        })
        .await
    }

    /// Tells each of `user_id`'s correspondence games not over that they are away or
    /// back: the games whose clock is as asked now, and the others.
    async fn tell_games(
        &self,
        user_id: &str,
        away: bool,
    ) -> Result<(Vec<String>, Vec<String>), Refusal> {
        tell_games(
            &self.store,
            &self.games,
            user_id,
            |_| true,
            |who, reply| RoomCmd::Vacation {
                user_id: who,
                away,
                reply,
            },
        )
        .await
    }

    /// Ends the vacations that are spent and warns the players of those nearly so:
    /// returns when to look again.
    async fn sweep(&self) -> Millis {
        let store = self.store.clone();
        let now = now_ms();
        let away = match blocking(WHAT, move || store.away_accounts()).await {
            Ok(away) => away,
            Err(refusal) => {
                tracing::warn!(%refusal, "the accounts on vacation could not be read");
                return calendar::now_ms() + RETRY;
            }
        };
        let mut next = now.saturating_add(IDLE as i64);
        for (user_id, row) in away {
            let row = self.policy.settle(Some(row), now);
            let Some(ends) = Policy::ends_at(&row) else {
                continue;
            };
            if ends <= now {
                tracing::info!(user = %user_id, "a vacation is spent; its player is back");
                if let Err(refusal) = self.back(&user_id).await {
                    tracing::warn!(user = %user_id, %refusal, "a spent vacation did not end");
                    next = next.min(now + RETRY as i64);
                }
                continue;
            }
            let warn_at = ends.saturating_sub(self.policy.warn_ms);
            if !row.warned && warn_at <= now {
                let payload = NoticePayload {
                    deadline: Some(ends),
                    ..NoticePayload::default()
                };
                self.notices
                    .notify(&user_id, NoticeKind::VacationEnding, payload);
                let (policy, since) = (self.policy, row.away_since_ms);
                // The vacation warned of, not one begun since it ended.
                let kept = self
                    .change(&user_id, move |row, now| {
                        let row = policy.settle(row, now);
                        VacationRow {
                            warned: row.warned || row.away_since_ms == since,
                            ..row
                        }
                    })
                    .await;
                if let Err(refusal) = kept {
                    tracing::warn!(user = %user_id, %refusal, "a vacation's warning was not kept");
                }
            } else if !row.warned {
                next = next.min(warn_at);
            }
            next = next.min(ends);
        }
        next.max(0) as Millis
    }
}

async fn run(me: Weak<Vacations>) {
    let Some(begun) = me.upgrade().map(|s| s.begun.clone()) else {
        return;
    };
    loop {
        let Some(service) = me.upgrade() else {
            return;
        };
        let next = service.sweep().await;
        drop(service);
        tokio::select! {
            () = sleep_until(calendar::instant_at(next)) => {}
            () = begun.notified() => {}
        }
    }
}

/// Asks each of `user_id`'s correspondence games not over whose settings pass `wanted`
/// the command `ask(user_id, reply)` makes, waking the sleeping ones: the games that
/// answered yes, and the others.
pub(crate) async fn tell_games(
    store: &Arc<dyn Store>,
    games: &Registry,
    user_id: &str,
    wanted: impl Fn(&GameSettings) -> bool,
    ask: impl Fn(String, tokio::sync::oneshot::Sender<bool>) -> RoomCmd,
) -> Result<(Vec<String>, Vec<String>), Refusal> {
    let (store, who) = (store.clone(), user_id.to_string());
    let listed = blocking("correspondence games", move || {
        store.list_games(&GameQuery {
            player: Some(who),
            status: Some(GameStatus::Live),
            limit: GameQuery::MAX_LIMIT,
            ..GameQuery::default()
        })
    })
    .await?;
    let (mut done, mut not) = (Vec::new(), Vec::new());
    for game in listed {
        let settings = serde_json::from_str::<GameSettings>(&game.settings);
        if !settings.is_ok_and(|s| s.correspondence && wanted(&s)) {
            continue;
        }
        match tell_game(games, &game.id, user_id, &ask).await {
            true => done.push(game.id),
            false => not.push(game.id),
        }
    }
    Ok((done, not))
}

/// Tells one game, wherever it runs: whether it did as asked. A room that stopped
/// before it answered (it fell asleep, or in a cluster its node went or handed it over)
/// is looked for once more where it runs next.
async fn tell_game(
    games: &Registry,
    game_id: &str,
    user_id: &str,
    ask: &impl Fn(String, tokio::sync::oneshot::Sender<bool>) -> RoomCmd,
) -> bool {
    for _ in 0..2 {
        let Ok(room) = games.room(game_id).await else {
            return false;
        };
        if let Ok(told) = room.ask(|reply| ask(user_id.to_string(), reply)).await {
            return told;
        }
    }
    false
}

fn now_ms() -> i64 {
    i64::try_from(calendar::now_ms()).unwrap_or(i64::MAX)
}

fn view(row: &VacationRow) -> Vacation {
    Vacation {
        balance_ms: row.balance_ms.max(0),
        away_since: row.away_since_ms,
        ends_at: Policy::ends_at(row),
        paid_until: row.paid_until_ms.filter(|until| *until > row.as_of_ms),
        paused: Vec::new(),
        running: Vec::new(),
    }
}
