//! The room: one tokio task per game that owns its [`LiveGame`], its crowd and its
//! recent events. Commands arrive on a bounded channel; each accepted change is checked by the
//! rules, timed by the clock, committed to the store, and only then acknowledged and
//! broadcast, in that order. No lock is held around game state.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, sleep_until};

use super::commit::{Backoff, moving, stage, unavailable};
use super::context::{Audience, Rejoin, RoomContext, RoomNews};
use super::crowd::{Crowd, Member, Seat};
use super::live::{LiveGame, Moment, ReplayError, Step, is_referee_act};
use super::plans::{self, Plans};
use super::rebuild::rebuild;
use super::ring::{Ring, missed_since};
use super::sleep::{self, SLEEP_AFTER};
use super::timeline::Timeline;
use crate::clock::Millis;
use crate::correspondence::plan::{Answer, Plan};
use crate::correspondence::vacation::DeadlineDay;
use crate::fanout::{Frame, Outbox, encode};
use crate::protocol::{
    Calendar, CalledGame, ErrorCode, GameAction, GameEvent, GameSummary, Phase, Refusal, ServerMsg,
    UserInfo,
};
use crate::rules::{Color, Move, Vertex};
use crate::store::{Append, EventRecord, KibitzRecord, StoreError};
use crate::time::wall_ms;

/// Commands a room's queue holds at most; senders wait when it is full.
const QUEUE: usize = 256;
/// How long a game taken over waits for the connections on the other nodes to follow
/// it before it records absent the players the log showed online. They follow at once
/// when told of the take-over, or within a retry (200 ms) when their node found the
/// owner dead first; a node still checking on a silent owner (up to 2 s, the
/// forwarding timeout) follows within this too.
const FOLLOW_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// What a room is asked to do.
pub enum RoomCmd {
    /// Subscribe a connection: every event after `since_seq`, or a snapshot.
    Join {
        outbox: Outbox,
        user: Option<UserInfo>,
        since_seq: Option<u64>,
        reply: oneshot::Sender<Result<(), Refusal>>,
    },
    /// Unsubscribe a connection; answered once its leaving is recorded, so nothing of
    /// the game's follows the `ack` and shutdown's store outlives the record.
    Leave {
        conn: u64,
        done: oneshot::Sender<()>,
    },
    /// Subscribe a connection of another node: the room counts it and answers with what
    /// that node sends it first; the rest reaches it through the relay.
    JoinRemote {
        node: Arc<str>,
        conn: u64,
        user: Option<UserInfo>,
        since_seq: Option<u64>,
        reply: oneshot::Sender<Result<Opening, Refusal>>,
    },
    LeaveRemote {
        node: Arc<str>,
        conn: u64,
    },
    /// Every connection of a node that is gone.
    LeaveNode {
        node: Arc<str>,
    },
    /// Stop now: this node no longer owns the game (its lease is lost, or it stops and
    /// hands its games over); connections here join the game where it runs next.
    Release,
    /// An action from the wire, as the client sent it: a player's, a referee's, or chat
    /// (numbered players' chat from a player, spectators' chat from anyone else). The
    /// reply carries the seq of the last event it caused.
    Act {
        user: UserInfo,
        action: GameAction,
        /// The connection's one-way latency estimate, for lag compensation.
        lag_ms: u64,
        reply: oneshot::Sender<Result<Option<u64>, Refusal>>,
    },
    Summary {
        reply: oneshot::Sender<GameSummary>,
    },
    /// For a referee's list: the game with its open calls, if it has any and `user` may
    /// referee it; and the game's summary if it is not over and names `user` its referee.
    Calls {
        user: UserInfo,
        reply: oneshot::Sender<(Option<CalledGame>, Option<GameSummary>)>,
    },
    /// `user_id` goes on vacation (`away`) or comes back (client-protocol/
    /// correspondence.md#vacation): answered whether their clock here stands (`away`) or
    /// runs as usual now.
    Vacation {
        user_id: String,
        away: bool,
        reply: oneshot::Sender<bool>,
    },
    /// `user_id` changed their calendar (client-protocol/correspondence.md#weekends):
    /// answered whether this game (one with `weekends`, not over) took it.
    Calendar {
        user_id: String,
        calendar: Calendar,
        reply: oneshot::Sender<bool>,
    },
}

impl RoomCmd {
    /// Answers a command that will not be carried out here because the game is moving
    /// to another node (or its node is cut off): asked again, it is decided where the
    /// game runs next. Dropping its reply instead would read as [`Gone`], which a
    /// second time means the game is no longer open, for a game that is.
    pub fn turn_away(self) {
        match self {
            RoomCmd::Join { reply, .. } => drop(reply.send(Err(moving()))),
            RoomCmd::JoinRemote { reply, .. } => drop(reply.send(Err(moving()))),
            RoomCmd::Act { reply, .. } => drop(reply.send(Err(moving()))),
            // Dropping the others' replies tells their senders the room is gone.
            _ => {}
        }
    }

    /// Stops `queue` taking commands and turns away those already in it: for a room or
    /// a mirror whose game moves on.
    pub async fn turn_away_queued(queue: &mut mpsc::Receiver<RoomCmd>) {
        queue.close();
        while let Some(cmd) = queue.recv().await {
            cmd.turn_away();
        }
    }
}

/// What a joining connection is sent first, and where the live frames take over.
#[derive(Debug, Clone)]
pub struct Opening {
    pub frames: Vec<Frame>,
    /// The frames are the events missed (a catch-up), not a snapshot.
    pub catch_up: bool,
    /// The last seq the opening covers: of the events for most members, of what the
    /// delay has released for a delayed spectator.
    pub through: u64,
    pub color: Option<Color>,
    pub delayed: bool,
}

impl Opening {
    /// Queues the opening for a joining connection: a catch-up whole or not at all (a
    /// connection too slow for it is refused), a snapshot like any frame.
    pub fn send_to(self, outbox: &Outbox) -> Result<(), Refusal> {
        if !self.catch_up {
            self.frames.into_iter().for_each(|f| {
                outbox.push(f);
            });
        } else if !outbox.push_catch_up(self.frames) {
            return Err(Refusal::new(
                ErrorCode::Unavailable,
                "your connection is too slow to catch up",
            ));
        }
        Ok(())
    }
}

/// A cheap handle to a running room (or, in a cluster, to this node's mirror of a room
/// that runs on another node: the same commands, forwarded).
#[derive(Clone)]
pub struct RoomHandle {
    pub game_id: Arc<str>,
    instance: u64,
    tx: mpsc::Sender<RoomCmd>,
}

/// A new room number, unique in this process.
fn next_instance() -> u64 {
    static INSTANCES: AtomicU64 = AtomicU64::new(1);
    INSTANCES.fetch_add(1, Ordering::Relaxed)
}

/// The room stopped (its game ended and everyone left) before it answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("that game is no longer open")]
pub struct Gone;

impl From<Gone> for Refusal {
    fn from(gone: Gone) -> Refusal {
        Refusal::new(ErrorCode::NotFound, gone.to_string())
    }
}

impl RoomHandle {
    /// Sends a command and waits for its reply.
    pub async fn ask<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> RoomCmd,
    ) -> Result<T, Gone> {
        let (reply, rx) = oneshot::channel();
        self.tx.send(make(reply)).await.map_err(|_| Gone)?;
        rx.await.map_err(|_| Gone)
    }

    /// Which room this is: a later room of the same game has another number.
    pub fn instance(&self) -> u64 {
        self.instance
    }

    /// A handle whose commands arrive on the returned queue: how something other than a
    /// [`Room`] (a mirror of a room on another node) answers as a room does.
    pub fn channel(game_id: Arc<str>) -> (RoomHandle, mpsc::Receiver<RoomCmd>) {
        let (tx, rx) = mpsc::channel(QUEUE);
        let instance = next_instance();
        (
            RoomHandle {
                game_id,
                instance,
                tx,
            },
            rx,
        )
    }

    /// Whether the room has stopped taking commands.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// Waits until the room stops taking commands.
    pub async fn closed(&self) {
        self.tx.closed().await
    }

    /// Sends a command that needs no reply (the room may have stopped: then it is moot).
    pub async fn tell(&self, cmd: RoomCmd) {
        let _ = self.tx.send(cmd).await;
    }
}

/// The room task's state.
pub struct Room {
    id: Arc<str>,
    /// This room among all rooms of this process, so the registry forgets only its own
    /// entry when it closes.
    instance: u64,
    ctx: RoomContext,
    live: LiveGame,
    /// The most recent events' public frames.
    recent: Ring,
    crowd: Crowd,
    /// The time the game's clocks run on.
    timeline: Timeline,
    /// The players' plans of conditional moves (correspondence games).
    plans: Plans,
    /// When the clock may next ask a failing store for a commit.
    backoff: Backoff,
    /// The last seq delayed spectators have been sent (see
    /// [`LiveGame::spectator_horizon`]).
    released: u64,
    /// In a cluster, the fencing number this node owns the game by: every commit
    /// carries it, so the store refuses this room once another node has taken over.
    fence: Option<u64>,
    /// Set when the room must stop (its game moved to another node).
    moved: bool,
}

/// A game just created (its first event stored), for [`Room::open`].
pub struct NewGame {
    pub id: String,
    pub live: LiveGame,
    /// The first event's frame.
    pub first: Frame,
    /// The time the game's clock runs on.
    pub timeline: Timeline,
}

/// A room built but not yet running: the registry takes its handle first, so the room
/// cannot end (and leave the registry) before it is in it, and a room that loses a race
/// to register never runs at all.
pub struct Prepared {
    handle: RoomHandle,
    room: Box<Room>,
    rx: mpsc::Receiver<RoomCmd>,
    gone: Vec<Color>,
}

impl Prepared {
    pub fn handle(&self) -> &RoomHandle {
        &self.handle
    }

    /// Owns the game under fencing number `fence` (in a cluster).
    pub fn fenced(mut self, fence: u64) -> Prepared {
        self.room.fence = Some(fence);
        self
    }

    /// Starts the room's task.
    pub fn start(self) {
        tokio::spawn(self.room.run(self.rx, self.gone));
    }
}

impl Room {
    /// The room of a game just created.
    pub fn open(ctx: RoomContext, game: NewGame) -> Prepared {
        let mut recent = Ring::starting_at(1);
        recent.push(game.first);
        Room::prepare(ctx, game.id, game.live, recent, Vec::new(), game.timeline)
    }

    /// Rebuilds a room from its stored events (after a restart, to show a finished
    /// game, or to wake a correspondence game). A live game's clocks do not run until
    /// the player to move is back; a correspondence game's run on from its log.
    /// `plans` are the players' stored plans, `(colour, JSON)`.
    pub fn restore(
        ctx: RoomContext,
        id: String,
        events: &[EventRecord],
        plans: Vec<(String, String)>,
    ) -> Result<Prepared, ReplayError> {
        let rebuilt = rebuild(events, ctx.lag)?;
        let plans = Plans::from_rows(&id, plans);
        let mut prepared = Room::prepare(
            ctx,
            id,
            rebuilt.live,
            rebuilt.recent,
            rebuilt.gone,
            rebuilt.timeline,
        );
        prepared.room.plans = plans;
        Ok(prepared)
    }

    fn prepare(
        ctx: RoomContext,
        id: String,
        mut live: LiveGame,
        recent: Ring,
        gone: Vec<Color>,
        timeline: Timeline,
    ) -> Prepared {
        live.warn_before_deadline(ctx.deadline_warn_ms);
        let instance = next_instance();
        let (tx, rx) = mpsc::channel(QUEUE);
        let id: Arc<str> = id.into();
        let handle = RoomHandle {
            game_id: id.clone(),
            instance,
            tx,
        };
        // Boxed, like the command handler below: a room future holding the game by
        // value (and a copy per async layer) would weigh some 58 KB per live game.
        let released = live.spectator_horizon(timeline.now());
        let room = Box::new(Room {
            released,
            id,
            instance,
            ctx,
            live,
            recent,
            crowd: Crowd::default(),
            timeline,
            plans: Plans::default(),
            backoff: Backoff::default(),
            fence: None,
            moved: false,
        });
        Prepared {
            handle,
            room,
            rx,
            gone,
        }
    }

    fn now(&self) -> Millis {
        self.timeline.now()
    }

    /// This instant, for an action from a connection with one-way latency `lag_ms`.
    fn moment(&self, lag_ms: u64) -> Moment {
        self.timeline.moment(lag_ms)
    }

    async fn run(self: Box<Self>, rx: mpsc::Receiver<RoomCmd>, gone: Vec<Color>) {
        let span = tracing::info_span!("game", id = %self.id);
        // Instrumented, not entered: see net::session::serve.
        tracing::Instrument::instrument(self.run_game(rx, gone), span).await
    }

    async fn run_game(mut self: Box<Self>, mut rx: mpsc::Receiver<RoomCmd>, gone: Vec<Color>) {
        // After a restart the players' connections went with the process. In a cluster
        // the game was taken over, and connections on the nodes still up follow it here
        // by themselves: a player is recorded gone only if none of theirs has come back
        // within the grace, so presence never says offline of a connection still open.
        let mut absent_at = None;
        // When a correspondence game nobody has joined goes to sleep.
        let mut asleep_at = None;
        if self.ctx.relay.is_some() {
            absent_at = (!gone.is_empty()).then(|| Instant::now() + FOLLOW_GRACE);
        } else {
            for color in &gone {
                self.presence(*color).await;
            }
        }
        // Calendars set or changed while no room held the game.
        self.read_calendars().await;
        // A plan that was due when the room stopped (its reply not yet stored).
        self.follow_plans().await;
        loop {
            asleep_at = match (
                sleep::may_sleep(&self.live) && self.crowd.is_empty(),
                asleep_at,
            ) {
                (true, None) => Some(Instant::now() + SLEEP_AFTER),
                (true, at) => at,
                (false, _) => None,
            };
            let deadline = self
                .live
                .next_timer()
                .map(|ms| self.timeline.instant(ms))
                .map(|at| self.backoff.retry_at().map_or(at, |retry| at.max(retry)));
            // A tournament game's spectators see a move once its delay in time is over.
            let release = self
                .live
                .next_release(self.now())
                .map(|ms| self.timeline.instant(ms));
            tokio::select! {
                cmd = rx.recv() => match cmd {
                    Some(cmd) => {
                        Box::pin(self.handle(cmd)).await;
                        Box::pin(self.follow_plans()).await;
                    }
                    None => break,
                },
                () = sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => {
                    self.on_timer().await;
                    Box::pin(self.follow_plans()).await;
                }
                () = sleep_until(release.unwrap_or_else(Instant::now)), if release.is_some() => {
                    self.release().await;
                }
                () = sleep_until(absent_at.unwrap_or_else(Instant::now)), if absent_at.is_some() => {
                    absent_at = None;
                    for color in &gone {
                        self.presence(*color).await;
                    }
                }
                () = sleep_until(asleep_at.unwrap_or_else(Instant::now)), if asleep_at.is_some() => {
                    tracing::debug!("a correspondence game nobody watches goes to sleep");
                    break;
                }
            }
            if self.moved || (self.live.phase() == Phase::Ended && self.crowd.is_empty()) {
                break;
            }
        }
        // Out of the registry first, so no new command is sent here; commands already
        // queued are dropped with their replies, which tells their senders the room is
        // gone (a join then goes to the archive: see Hub::join), unless the game moves
        // on: they are asked to come again.
        if self.moved {
            RoomCmd::turn_away_queued(&mut rx).await;
        }
        let news = if self.moved {
            let (seq, released) = (self.live.seq(), self.released);
            let members = self
                .crowd
                .take_local()
                .into_iter()
                .filter_map(|m| match m.seat {
                    Seat::Local(outbox) => Some(Rejoin {
                        outbox,
                        user: m.user,
                        since_seq: if m.delayed { released } else { seq },
                    }),
                    Seat::Remote { .. } => None,
                });
            RoomNews::Moved {
                game_id: self.id.clone(),
                room: self.instance,
                fence: self.fence,
                members: members.collect(),
            }
        } else {
            RoomNews::Closed {
                game_id: self.id.clone(),
                room: self.instance,
                fence: self.fence,
            }
        };
        (self.ctx.news)(news);
        if let Some(relay) = &self.ctx.relay {
            relay.closed(&self.id);
        }
    }

    /// What the clock decides (a start, a flag, a forfeit). If the store refuses, the
    /// next try waits (see [`Backoff`]).
    /// `user_id` goes on vacation or comes back, if they play in this correspondence game,
    /// it allows vacation, and it is not over: whether their clock is as asked now.
    async fn vacation(&mut self, user_id: &str, away: bool) -> bool {
        let Some(color) = self.live.color_of(user_id) else {
            return false;
        };
        let settings = &self.live.settings;
        if !settings.correspondence || !settings.vacation || self.live.phase() == Phase::Ended {
            return false;
        }
        if self.live.clock().is_away(color) == away {
            return true;
        }
        let step = self
            .live
            .step(vec![GameEvent::Vacation { color, away }], self.moment(0));
        !step.events.is_empty() && self.commit(step).await.is_ok()
    }

    /// Records the players' calendars from the store where the game's differ (the game
    /// just began, or a player changed theirs while it slept), in a game with weekends.
    async fn read_calendars(&mut self) {
        if !self.takes_calendars() {
            return;
        }
        for color in [Color::Black, Color::White] {
            let (store, who) = (self.ctx.store.clone(), self.live.player(color).id.clone());
            let row = tokio::task::spawn_blocking(move || store.calendar(&who)).await;
            let calendar = match row {
                Ok(Ok(row)) => row.map_or_else(Calendar::default, |r| {
                    Calendar::from_bits(r.time_zone, r.weekend)
                }),
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "a player's calendar could not be read");
                    continue;
                }
                Err(_) => continue,
            };
            self.set_calendar(color, calendar).await;
        }
    }

    /// Whether the players' calendars count here: a correspondence game with weekends,
    /// not over.
    fn takes_calendars(&self) -> bool {
        let settings = &self.live.settings;
        settings.correspondence && settings.weekends && self.live.phase() != Phase::Ended
    }

    /// `color`'s calendar is `calendar` from their next turn (at once at the start):
    /// a `weekend_set` event unless the game has it already. Whether it is kept.
    async fn set_calendar(&mut self, color: Color, calendar: Calendar) -> bool {
        let Ok(weekend) = calendar.weekend() else {
            return false;
        };
        if self.live.clock().weekend(color) == Some(&weekend) {
            return true;
        }
        let step = self.live.step(
            vec![GameEvent::WeekendSet { color, calendar }],
            self.moment(0),
        );
        !step.events.is_empty() && self.commit(step).await.is_ok()
    }

    /// A player out of time in a correspondence game that allows vacation: their
    /// account's day at a deadline (`Policy::at_deadline`, decided and kept in one
    /// store transaction, so games due at once spend one day) holds their clock instead
    /// of the flag falling. None: the flag falls (or nothing is due).
    ///
    /// The day is kept before the event: if the event is then not committed, the next
    /// try finds the day running and is covered by it, so nothing is spent twice.
    async fn vacation_day(&self) -> Option<Step> {
        let settings = &self.live.settings;
        if !(settings.correspondence && settings.vacation) {
            return None;
        }
        let at = self.moment(0);
        let clock = self.live.clock();
        let color = clock.check_flag(at.now)?;
        if clock.flagged().is_some() {
            return None;
        }
        let deadline = i64::try_from(clock.deadline()?).ok()?;
        let now = i64::try_from(at.now).unwrap_or(i64::MAX);
        let (store, policy) = (self.ctx.store.clone(), self.ctx.vacation);
        let who = self.live.player(color).id.clone();
        let kept = tokio::task::spawn_blocking(move || {
            let change = move |row| policy.at_deadline(row, deadline, now).1;
            store.change_vacation(&who, Box::new(change))
        })
        .await;
        let before = match kept {
            Ok(Ok((before, _))) => before,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "the vacation balance could not be read; the flag falls");
                return None;
            }
            Err(_) => return None,
        };
        // The verdict the store kept: the same pure decision, on the row it was made on.
        let (until, covered) = match policy.at_deadline(before, deadline, now).0 {
            DeadlineDay::Spent { until_ms } => (until_ms, false),
            DeadlineDay::Covered { until_ms } => (until_ms, true),
            DeadlineDay::Flag => return None,
        };
        let ms = u64::try_from(until - deadline).ok()?;
        let event = GameEvent::VacationSpent { color, ms, covered };
        let step = self.live.step(vec![event], at);
        (!step.events.is_empty()).then_some(step)
    }

    /// The player to move is warned of their deadline, if that is due now: the
    /// `deadline_warned` event, then the notice. Whether it was due.
    async fn deadline_warning(&mut self) -> bool {
        let at = self.moment(0);
        let Some((color, deadline, when)) = self.live.deadline_warning() else {
            return false;
        };
        if when > at.now {
            return false;
        }
        let step = self
            .live
            .step(vec![GameEvent::DeadlineWarned { color, deadline }], at);
        if self.commit(step).await.is_ok() {
            (self.ctx.news)(RoomNews::DeadlineNear {
                game_id: self.id.clone(),
                player: self.live.player(color).clone(),
                opponent: self.live.player(color.opponent()).clone(),
                deadline_ms: i64::try_from(deadline).unwrap_or(i64::MAX),
            });
        }
        true
    }

    async fn on_timer(&mut self) {
        if self.deadline_warning().await {
            return;
        }
        if let Some(step) = self.vacation_day().await {
            tracing::info!("a vacation day holds a clock at its deadline");
            let _ = self.commit(step).await;
            return;
        }
        let step = self.live.on_timer(self.moment(0));
        if step.events.is_empty() {
            return;
        }
        for e in &step.events {
            if let GameEvent::GameEnded { result, .. } = e {
                tracing::info!(%result, "game ended by the clock");
                if matches!(result, crate::rules::GameResult::Time { .. }) {
                    crate::metrics::flag_fall();
                }
            }
        }
        let _ = self.commit(step).await;
    }

    async fn handle(&mut self, cmd: RoomCmd) {
        if let Some(fence) = self.fence
            && !self
                .ctx
                .relay
                .as_ref()
                .is_some_and(|r| r.holds(&self.id, fence))
        {
            return self.step_aside(cmd);
        }
        match cmd {
            RoomCmd::Join {
                outbox,
                user,
                since_seq,
                reply,
            } => {
                let result = self.join(outbox, user, since_seq).await;
                let _ = reply.send(result);
            }
            RoomCmd::Leave { conn, done } => {
                if let Some(Some(color)) = self.crowd.remove(None, conn) {
                    self.presence(color).await;
                }
                let _ = done.send(());
            }
            RoomCmd::JoinRemote {
                node,
                conn,
                user,
                since_seq,
                reply,
            } => {
                let opened = self.opening(user.as_ref(), since_seq).await;
                if let Ok(opening) = &opened {
                    let seat = Seat::Remote { node, conn };
                    self.seat(seat, user, opening.color, opening.delayed).await;
                }
                let _ = reply.send(opened);
            }
            RoomCmd::LeaveRemote { node, conn } => {
                if let Some(Some(color)) = self.crowd.remove(Some(&node), conn) {
                    self.presence(color).await;
                }
            }
            RoomCmd::LeaveNode { node } => {
                for color in self.crowd.remove_node(&node) {
                    self.presence(color).await;
                }
            }
            RoomCmd::Release => {
                self.record_leaving().await;
                self.moved = true;
            }
            RoomCmd::Act {
                user,
                action,
                lag_ms,
                reply,
            } => {
                let result = self.act(&user, action, lag_ms).await;
                let _ = reply.send(result);
            }
            RoomCmd::Summary { reply } => {
                let _ = reply.send(self.summary());
            }
            RoomCmd::Vacation {
                user_id,
                away,
                reply,
            } => {
                let _ = reply.send(self.vacation(&user_id, away).await);
            }
            RoomCmd::Calendar {
                user_id,
                calendar,
                reply,
            } => {
                let taken = match self.live.color_of(&user_id) {
                    Some(color) if self.takes_calendars() => {
                        self.set_calendar(color, calendar).await
                    }
                    _ => false,
                };
                let _ = reply.send(taken);
            }
            RoomCmd::Calls { user, reply } => {
                let calls = self.live.open_calls();
                let called =
                    (!calls.is_empty() && self.live.may_referee(&user).is_ok()).then(|| {
                        CalledGame {
                            game: self.summary(),
                            calls,
                        }
                    });
                let assigned = (self.live.result().is_none()
                    && self.live.settings.referee.as_deref() == Some(user.id.as_str()))
                .then(|| self.summary());
                let _ = reply.send((called, assigned));
            }
        }
    }

    /// This node may have lost the game (its leases were not renewed in time): the room
    /// stops, so the game is found anew, and a command waiting for an answer is asked
    /// to come again.
    fn step_aside(&mut self, cmd: RoomCmd) {
        tracing::warn!("this node's leases are not known to run; the room stops");
        crate::metrics::cluster_lease_lost();
        self.moved = true;
        cmd.turn_away();
    }

    async fn join(
        &mut self,
        outbox: Outbox,
        user: Option<UserInfo>,
        since_seq: Option<u64>,
    ) -> Result<(), Refusal> {
        let opening = self.opening(user.as_ref(), since_seq).await?;
        let (color, delayed) = (opening.color, opening.delayed);
        opening.send_to(&outbox)?;
        let conn = outbox.conn();
        self.seat(Seat::Local(outbox), user, color, delayed).await;
        tracing::debug!(conn, ?color, "joined");
        Ok(())
    }

    /// What a connection joining with `since_seq` is sent first: every event after it,
    /// or a snapshot.
    async fn opening(
        &self,
        user: Option<&UserInfo>,
        since_seq: Option<u64>,
    ) -> Result<Opening, Refusal> {
        let color = user.and_then(|u| self.live.color_of(&u.id));
        let delayed = self.live.delays(user);
        let last = self.live.seq();
        let (frames, catch_up, through) = match since_seq {
            Some(s) if s > last => {
                return Err(Refusal::new(
                    ErrorCode::BadRequest,
                    format!("since_seq {s} is past this game's last event ({last})"),
                ));
            }
            // A delayed spectator gets the events up to the spectators' horizon, never a
            // snapshot (which would show the position now).
            since if delayed => {
                let since = since.unwrap_or(0);
                let horizon = self.released;
                if since > horizon {
                    return Err(Refusal::new(
                        ErrorCode::BadRequest,
                        format!(
                            "since_seq {since} is past what spectators of this tournament game see yet ({horizon})"
                        ),
                    ));
                }
                let mut missed =
                    missed_since(&self.recent, &self.ctx.store, &self.id, since).await?;
                missed.truncate((horizon - since) as usize);
                (missed, true, horizon)
            }
            Some(s) => {
                let missed = missed_since(&self.recent, &self.ctx.store, &self.id, s).await?;
                (missed, true, last)
            }
            None => {
                let mut snapshot =
                    self.live
                        .snapshot(&self.id, self.now(), self.timeline.wall_ms(), color);
                snapshot.plan = color.and_then(|c| self.plans.stored(c));
                let frame = encode(&ServerMsg::Snapshot(Box::new(snapshot)));
                (vec![frame], false, last)
            }
        };
        Ok(Opening {
            frames,
            catch_up,
            through,
            color,
            delayed,
        })
    }

    /// Adds a member, with what its arrival changes (presence, a stopped clock).
    async fn seat(
        &mut self,
        seat: Seat,
        user: Option<UserInfo>,
        color: Option<Color>,
        delayed: bool,
    ) {
        self.crowd.add(Member {
            seat,
            user,
            color,
            delayed,
        });
        if let Some(color) = color {
            self.presence(color).await;
            self.resume_clock_if_idle();
        }
    }

    /// After a restart no clock runs; it starts again once the player to move is here.
    fn resume_clock_if_idle(&mut self) {
        let to_move = self.live.to_move();
        if self.crowd.has_player(to_move) {
            self.live.start_clock_if_stopped(self.now());
        }
    }

    /// The room lets its game go (this node hands it over as it stops): the players'
    /// leaving is recorded with the clocks, as when connections close at a stop, so the
    /// time of the move in progress is kept where the game runs next, and they count as
    /// present there once their connections follow it.
    async fn record_leaving(&mut self) {
        for color in [Color::Black, Color::White] {
            if self.live.is_online(color) && self.live.phase() != Phase::Ended {
                let step = self.live.presence(color, false, self.moment(0));
                if self.commit(step).await.is_err() {
                    return;
                }
            }
        }
    }

    /// Records a player's connection coming or going, if that changed.
    async fn presence(&mut self, color: Color) {
        let online = self.crowd.has_player(color);
        if self.live.is_online(color) != online && self.live.phase() != Phase::Ended {
            let step = self.live.presence(color, online, self.moment(0));
            let _ = self.commit(step).await;
        }
    }

    async fn act(
        &mut self,
        user: &UserInfo,
        action: GameAction,
        lag_ms: u64,
    ) -> Result<Option<u64>, Refusal> {
        let at = self.moment(lag_ms);
        let player = self.live.color_of(&user.id);
        if let (GameAction::Chat { text }, None) = (&action, player) {
            return self.kibitz(user.clone(), text.clone()).await.map(|()| None);
        }
        if matches!(action, GameAction::ClaimWin {})
            && self.ctx.relay.as_ref().is_some_and(|r| !r.hears_others())
        {
            return Err(Refusal::new(
                ErrorCode::Unavailable,
                "this server node is cut off from the others, so it cannot tell whether your opponent is connected through one of them; claim again once it is back",
            ));
        }
        if let GameAction::Plan {
            move_number,
            after,
            replies,
        } = action
        {
            let color = player.ok_or_else(|| {
                Refusal::new(ErrorCode::Forbidden, "only the game's players make plans")
            })?;
            let plan = Plan {
                move_number,
                replies,
            };
            return self.plan(color, plan, after, lag_ms).await;
        }
        let step = match &action {
            act if is_referee_act(act) => self.live.referee(user, act, at)?,
            _ => {
                let color = player.ok_or_else(|| {
                    Refusal::new(ErrorCode::Forbidden, "you do not play in this game")
                })?;
                self.live.decide(color, &action, at).inspect_err(|r| {
                    if let Some(reason) = r.reason {
                        crate::metrics::move_rejected(reason);
                    }
                })?
            }
        };
        if step.events.is_empty() {
            return Ok(None);
        }
        self.commit(step).await.map(Some)
    }

    /// Stores `color`'s plan (an empty one drops it), checked against the position it
    /// starts from: now, on the opponent's turn; after `after`, which is played with
    /// it, on the player's own. A refusal changes nothing.
    async fn plan(
        &mut self,
        color: Color,
        plan: Plan,
        after: Option<Vertex>,
        lag_ms: u64,
    ) -> Result<Option<u64>, Refusal> {
        let bad = |message: &str| Err(Refusal::new(ErrorCode::BadRequest, message));
        if !self.live.settings.correspondence {
            return bad("plans of conditional moves are for correspondence games");
        }
        if self.live.phase() != Phase::Play {
            return Err(Refusal::new(
                ErrorCode::WrongPhase,
                "plans are made while the game is in play",
            ));
        }
        let played = self.live.move_count();
        let own_turn = self.live.to_move() == color;
        let expected = played + if own_turn { 2 } else { 1 };
        if plan.move_number != expected {
            return Err(Refusal::new(
                ErrorCode::StaleMove,
                format!("the plan must answer your opponent's next move, number {expected}"),
            ));
        }
        let kept = (!plan.replies.is_empty()).then_some(plan);
        let step = match (own_turn, after) {
            (true, Some(vertex)) => {
                let action = GameAction::Play {
                    move_number: played + 1,
                    vertex: Move::Play(vertex),
                };
                Some(self.live.decide(color, &action, self.moment(lag_ms))?)
            }
            (true, None) => {
                return bad("on your own turn a plan follows your move: send it as `after`");
            }
            (false, Some(_)) => return bad("it is your opponent's move: a plan answers it"),
            (false, None) => None,
        };
        if let Some(plan) = &kept {
            let from = step.as_ref().map_or(&self.live, |s| &*s.game);
            if from.phase() == Phase::Play {
                plan.check(from.rules(), color)?;
            }
        }
        let item = plans::stored(&self.id, color, kept.as_ref());
        let seq = match step {
            Some(step) => Some(self.commit_with(step, vec![item]).await?),
            None => {
                self.write(vec![item]).await?;
                None
            }
        };
        self.plans.set(color, kept);
        Ok(seq)
    }

    /// Plays what the plans say now: the planned reply to the opponent's move (which
    /// may set off the other player's plan in turn), or drops a plan the game left.
    /// Stops at the first store failure; the plan stays and is followed when the room
    /// next runs.
    async fn follow_plans(&mut self) {
        while let Some((color, answer)) = self.plans.due(&self.live) {
            let (step, next) = match answer {
                Answer::Discard => (None, None),
                Answer::Reply { play, next } => {
                    let action = GameAction::Play {
                        move_number: self.live.move_count() + 1,
                        vertex: Move::Play(play),
                    };
                    match self.live.decide(color, &action, self.moment(0)) {
                        Ok(step) => (Some(step), next),
                        Err(refusal) => {
                            tracing::warn!(%refusal, "a planned reply was refused; the plan is dropped");
                            (None, None)
                        }
                    }
                }
            };
            let item = plans::stored(&self.id, color, next.as_ref());
            let stored = match step {
                Some(mut step) => {
                    planned(&mut step.events, color);
                    self.commit_with(step, vec![item]).await.map(drop)
                }
                None => self.write(vec![item]).await,
            };
            if stored.is_err() {
                return;
            }
            self.plans.set(color, next);
        }
    }

    /// Commits items that are no event of the game (a plan), under this room's fence.
    async fn write(&mut self, mut batch: Vec<Append>) -> Result<(), Refusal> {
        if let Some(fence) = self.fence {
            batch.insert(
                0,
                Append::Fence {
                    game_id: self.id.to_string(),
                    fence,
                },
            );
        }
        self.ctx
            .writer
            .commit(batch)
            .await
            .map_err(|e| unavailable(&e))
    }

    /// Spectators' chat: kept in the store as evidence (before anyone hears it, like
    /// the players'), then sent to the spectators only.
    async fn kibitz(&mut self, user: UserInfo, text: String) -> Result<(), Refusal> {
        let text = text.trim().to_string();
        if text.is_empty() || text.chars().count() > super::live::MAX_CHAT_CHARS {
            return Err(Refusal::new(
                ErrorCode::BadRequest,
                format!(
                    "chat text must have 1 to {} characters",
                    super::live::MAX_CHAT_CHARS
                ),
            ));
        }
        let line = KibitzRecord {
            game_id: self.id.to_string(),
            at_ms: wall_ms(),
            user_id: user.id.clone(),
            name: user.name.clone(),
            text,
        };
        // Through the group commit like the game's events, so a busy chat shares
        // their fsyncs instead of adding its own.
        self.ctx
            .writer
            .commit(vec![Append::Kibitz(line.clone())])
            .await
            .map_err(|e| unavailable(&e))?;
        let frame = encode(&ServerMsg::Kibitz {
            game_id: line.game_id,
            from: user,
            text: line.text,
            at: line.at_ms,
        });
        self.crowd.broadcast(&frame, |m| m.color.is_none());
        self.relay(0, Audience::Spectators, &frame);
        Ok(())
    }

    /// After a committed move of a game that goes on: the news that `player` is to move,
    /// when the game is by correspondence or they are not at the board.
    fn your_move(&self) {
        let to_move = self.live.to_move();
        let correspondence = self.live.settings.correspondence;
        let absent = self.live.phase() == Phase::Play && !self.crowd.has_player(to_move);
        if correspondence || absent {
            (self.ctx.news)(RoomNews::YourMove {
                game_id: self.id.clone(),
                player: self.live.player(to_move).clone(),
                opponent: self.live.player(to_move.opponent()).clone(),
                clock: self.live.settings.clock,
                deadline_ms: self.live.clock().deadline().map(|ms| ms as i64),
                correspondence,
                absent,
            });
        }
    }

    fn summary(&self) -> GameSummary {
        let spectators = self.crowd.spectators() as u32;
        self.live.summary(&self.id, self.released, spectators)
    }

    /// Stores a step's events, then takes its game as the room's state and broadcasts
    /// them; returns the last one's seq. If the store refuses, nothing changed and the
    /// caller is told.
    async fn commit(&mut self, step: Step) -> Result<u64, Refusal> {
        self.commit_with(step, Vec::new()).await
    }

    /// [`commit`](Self::commit) with more items in the same batch (a plan).
    async fn commit_with(&mut self, step: Step, extra: Vec<Append>) -> Result<u64, Refusal> {
        let replay = step.events.iter().find_map(|e| match e {
            GameEvent::Ruled { replay_game_id, .. } => replay_game_id.clone(),
            _ => None,
        });
        let moves = step
            .events
            .iter()
            .filter(|e| matches!(e, GameEvent::MovePlayed { .. }))
            .count();
        let mut staged = stage(
            &self.id,
            step.first_seq(),
            step.events,
            step.game.move_count(),
            self.timeline.wall_ms(),
        );
        staged.batch.extend(sleep::deadline(&self.id, &step.game));
        staged.batch.extend(extra);
        if let Some(fence) = self.fence {
            staged.batch.insert(
                0,
                Append::Fence {
                    game_id: self.id.to_string(),
                    fence,
                },
            );
        }
        let started = std::time::Instant::now();
        let committed = self.ctx.writer.commit(staged.batch).await;
        crate::metrics::store_commit(started.elapsed().as_micros() as u64);
        // Another node owns the game now, or the store holds events this room does not
        // (a commit whose answer was lost with its connection, then written after all):
        // this room's state is not the game's, so it stops, and the game is rebuilt
        // from the store wherever it is asked for next.
        if let Err(e @ (StoreError::Fenced { .. } | StoreError::SeqOutOfOrder { .. })) = &committed
        {
            tracing::warn!(error = %e, "this room is not the game's state any more; it stops");
            if matches!(e, StoreError::Fenced { .. }) {
                crate::metrics::cluster_lease_lost();
            }
            self.moved = true;
            return Err(moving());
        }
        if let Err(e) = committed {
            if self.backoff.failed(Instant::now()) {
                tracing::error!(error = %e, "the store refuses commits; nothing changed, retrying with backoff");
            }
            return Err(unavailable(&e));
        }
        if self.backoff.succeeded() {
            tracing::info!("the store takes commits again");
        }
        (0..moves).for_each(|_| crate::metrics::move_played());
        self.live = *step.game;
        self.broadcast(staged.frames).await;
        if staged.ended.is_some() {
            (self.ctx.news)(RoomNews::Ended(self.summary()));
        } else if moves > 0 {
            self.your_move();
        }
        if let Some(game_id) = replay {
            (self.ctx.news)(RoomNews::Replay {
                of: self.id.clone(),
                game_id,
            });
        }
        if let Some((previous, result)) = staged.rejudged {
            (self.ctx.news)(RoomNews::ResultChanged {
                game_id: self.id.clone(),
                previous,
                result,
            });
        }
        Ok(self.live.seq())
    }

    /// Sends committed events' frames to everyone here and to the other nodes, and
    /// keeps them for catch-ups.
    async fn broadcast(&mut self, frames: Vec<Frame>) {
        let first = self.live.seq() + 1 - frames.len() as u64;
        for (seq, frame) in (first..).zip(frames) {
            for color in self.crowd.broadcast(&frame, |m| !m.delayed) {
                tracing::info!(?color, "dropped a slow player connection");
            }
            self.relay(seq, Audience::Live, &frame);
            self.recent.push(frame);
        }
        self.release().await;
    }

    fn relay(&self, seq: u64, audience: Audience, frame: &Frame) {
        if let Some(relay) = &self.ctx.relay {
            relay.frame(&self.id, seq, audience, frame);
        }
    }

    /// Delayed spectators get what has moved out of the delay, in order: from the ring,
    /// and what has left it already (a delay in time can hide more events than the ring
    /// holds) from the store, as a catch-up reads it. If the store cannot be read now,
    /// nothing is released, and the next release tries again.
    async fn release(&mut self) {
        let horizon = self.live.spectator_horizon(self.now());
        if horizon <= self.released {
            return;
        }
        let due = (horizon - self.released) as usize;
        let frames =
            match missed_since(&self.recent, &self.ctx.store, &self.id, self.released).await {
                Ok(frames) => frames,
                Err(refusal) => {
                    tracing::error!(%refusal, "events due to delayed spectators could not be read");
                    return;
                }
            };
        for (seq, frame) in (self.released + 1..).zip(frames.iter().take(due)) {
            self.crowd.broadcast(frame, |m| m.delayed);
            self.relay(seq, Audience::Delayed, frame);
        }
        self.released = horizon;
    }
}

/// Marks `color`'s moves among `events` as played from a plan.
fn planned(events: &mut [GameEvent], color: Color) {
    for event in events {
        if let GameEvent::MovePlayed {
            color: mover,
            planned,
            ..
        } = event
            && *mover == color
        {
            *planned = true;
        }
    }
}
