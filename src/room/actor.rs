//! The room: one tokio task per game that owns its [`LiveGame`], its crowd and its event
//! history. Commands arrive on a bounded channel; each accepted change is checked by the
//! rules, timed by the clock, committed to the store, and only then acknowledged and
//! broadcast, in that order. No lock is held around game state.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, sleep_until};

use super::crowd::{Crowd, Frame, Member, Outbox, encode};
use super::live::{Action, LiveGame, Moment};
use crate::clock::{LagSettings, Millis};
use crate::hub::Hub;
use crate::protocol::{
    ErrorCode, EventFrame, GameEvent, GameSummary, Phase, Refusal, ServerMsg, UserInfo,
};
use crate::rules::Color;
use crate::store::{Append, EventRecord, GameRecord, GameStatus};

/// Commands a room's queue holds at most; senders wait when it is full.
const QUEUE: usize = 256;
/// A reconnecting client that missed more events than this gets a snapshot instead.
const MAX_REPLAY: u64 = 512;

/// Server Unix time in milliseconds.
pub fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// What a room is asked to do.
pub enum RoomCmd {
    /// Subscribe a connection: events after `since_seq`, or a snapshot.
    Join {
        outbox: Outbox,
        user: Option<UserInfo>,
        since_seq: Option<u64>,
        reply: oneshot::Sender<Result<(), Refusal>>,
    },
    Leave {
        conn: u64,
    },
    /// A player's action; the reply carries the seq of the last event it caused.
    Act {
        user: UserInfo,
        action: Action,
        /// The connection's one-way latency estimate, for lag compensation.
        lag_ms: u64,
        reply: oneshot::Sender<Result<Option<u64>, Refusal>>,
    },
    /// Chat: numbered players' chat from a player, spectators' chat from anyone else.
    Chat {
        user: UserInfo,
        text: String,
        reply: oneshot::Sender<Result<Option<u64>, Refusal>>,
    },
    Summary {
        reply: oneshot::Sender<GameSummary>,
    },
}

/// A cheap handle to a running room.
#[derive(Clone)]
pub struct RoomHandle {
    pub game_id: Arc<str>,
    tx: mpsc::Sender<RoomCmd>,
}

impl RoomHandle {
    /// Sends a command and waits for its reply; a room that has stopped answers
    /// `not_found`.
    pub async fn ask<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> RoomCmd,
    ) -> Result<T, Refusal> {
        let (reply, rx) = oneshot::channel();
        let gone = || Refusal::new(ErrorCode::NotFound, "that game is no longer open");
        self.tx.send(make(reply)).await.map_err(|_| gone())?;
        rx.await.map_err(|_| gone())
    }

    /// Sends a command that needs no reply (the room may have stopped: then it is moot).
    pub async fn tell(&self, cmd: RoomCmd) {
        let _ = self.tx.send(cmd).await;
    }
}

/// The room task's state.
pub struct Room {
    id: Arc<str>,
    hub: Arc<Hub>,
    live: LiveGame,
    /// Every committed event's frame; `history[i]` has seq `i + 1`.
    history: Vec<Frame>,
    crowd: Crowd,
    epoch: Instant,
}

impl Room {
    /// Creates a game: commits its record and first event, then starts its room.
    pub async fn create(
        hub: Arc<Hub>,
        id: String,
        first: GameEvent,
    ) -> Result<RoomHandle, Refusal> {
        let epoch = Instant::now();
        let mut first = first;
        let mut live = LiveGame::create(&first, 0, hub.config.clock.lag).ok_or_else(|| {
            Refusal::new(ErrorCode::BadRequest, "these settings cannot start a game")
        })?;
        let at = Moment {
            wall_ms: wall_ms(),
            ..Moment::default()
        };
        live.apply(&mut first, 1, at);
        let frame = encode(&EventFrame {
            game_id: id.clone(),
            seq: 1,
            event: first,
        });
        let now = wall_ms();
        let record = GameRecord {
            id: id.clone(),
            created_at_ms: now,
            settings: serde_json::to_string(&live.settings).unwrap_or_default(),
            black: live.black.id.clone(),
            white: live.white.id.clone(),
            black_name: live.black.name.clone(),
            white_name: live.white.name.clone(),
            status: GameStatus::Live,
            result: None,
            ended_at_ms: None,
            move_count: 0,
        };
        hub.writer
            .commit(vec![
                Append::Create(record),
                Append::Event(event_record(&id, 1, "game_created", &frame, now)),
            ])
            .await
            .map_err(|e| unavailable(&e))?;
        Ok(Room::spawn(hub, id, live, vec![frame], epoch))
    }

    /// Rebuilds a room from its stored events (after a restart, or to show a finished
    /// game). Clocks do not run until the player to move is back.
    pub fn restore(hub: Arc<Hub>, id: String, events: &[EventRecord]) -> Option<RoomHandle> {
        let epoch = Instant::now();
        let (live, history) = rebuild(
            events.iter().map(|e| e.payload.as_str()),
            hub.config.clock.lag,
        )?;
        Some(Room::spawn(hub, id, live, history, epoch))
    }

    fn spawn(
        hub: Arc<Hub>,
        id: String,
        live: LiveGame,
        history: Vec<Frame>,
        epoch: Instant,
    ) -> RoomHandle {
        let (tx, rx) = mpsc::channel(QUEUE);
        let id: Arc<str> = id.into();
        let handle = RoomHandle {
            game_id: id.clone(),
            tx,
        };
        let room = Room {
            id,
            hub,
            live,
            history,
            crowd: Crowd::default(),
            epoch,
        };
        tokio::spawn(room.run(rx));
        handle
    }

    fn now(&self) -> Millis {
        self.epoch.elapsed().as_millis() as Millis
    }

    async fn run(mut self, mut rx: mpsc::Receiver<RoomCmd>) {
        let span = tracing::info_span!("game", id = %self.id);
        let _enter = span.enter();
        loop {
            let deadline = self
                .live
                .deadline()
                .map(|ms| self.epoch + std::time::Duration::from_millis(ms));
            tokio::select! {
                cmd = rx.recv() => match cmd {
                    Some(cmd) => self.handle(cmd).await,
                    None => break,
                },
                () = sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => {
                    let now = self.now();
                    if let Some(event) = self.live.flag_fall(now) {
                        tracing::info!("flag fell");
                        crate::metrics::flag_fall();
                        let _ = self.commit(vec![event], 0).await;
                    }
                }
            }
            if self.live.phase() == Phase::Ended && self.crowd.is_empty() {
                break;
            }
        }
        self.hub.rooms.remove(&self.id);
    }

    async fn handle(&mut self, cmd: RoomCmd) {
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
            RoomCmd::Leave { conn } => {
                if let Some(Some(color)) = self.crowd.remove(conn) {
                    self.presence(color).await;
                }
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
            RoomCmd::Chat { user, text, reply } => {
                let result = if self.live.color_of(&user.id).is_some() {
                    self.act(&user, Action::Chat(text), 0).await
                } else {
                    self.kibitz(user, text).map(|()| None)
                };
                let _ = reply.send(result);
            }
            RoomCmd::Summary { reply } => {
                let _ = reply.send(self.summary());
            }
        }
    }

    async fn join(
        &mut self,
        outbox: Outbox,
        user: Option<UserInfo>,
        since_seq: Option<u64>,
    ) -> Result<(), Refusal> {
        let color = user.as_ref().and_then(|u| self.live.color_of(&u.id));
        let conn = outbox.conn();
        let last = self.live.seq();
        match since_seq {
            Some(s) if s > last => {
                return Err(Refusal::new(
                    ErrorCode::BadRequest,
                    format!("since_seq {s} is past this game's last event ({last})"),
                ));
            }
            Some(s) if last - s <= MAX_REPLAY => {
                for frame in &self.history[s as usize..] {
                    if !outbox.push(frame.clone()) {
                        return Err(Refusal::new(
                            ErrorCode::Unavailable,
                            "your connection is too slow to catch up",
                        ));
                    }
                }
            }
            _ => {
                let snapshot = self.live.snapshot(&self.id, self.now(), wall_ms(), color);
                outbox.push(encode(&ServerMsg::Snapshot(Box::new(snapshot))));
            }
        }
        self.crowd.add(Member { outbox, color });
        if let Some(color) = color {
            self.presence(color).await;
            self.resume_clock_if_idle();
        }
        tracing::debug!(conn, ?color, "joined");
        Ok(())
    }

    /// After a restart no clock runs; it starts again once the player to move is here.
    fn resume_clock_if_idle(&mut self) {
        let to_move = self.live.to_move();
        if self.crowd.has_player(to_move) {
            self.live.start_clock_if_stopped(self.now());
        }
    }

    /// Records a player's connection coming or going, if that changed.
    async fn presence(&mut self, color: Color) {
        let online = self.crowd.has_player(color);
        if self.live.is_online(color) != online && self.live.phase() != Phase::Ended {
            let _ = self
                .commit(vec![GameEvent::Presence { color, online }], 0)
                .await;
        }
    }

    async fn act(
        &mut self,
        user: &UserInfo,
        action: Action,
        lag_ms: u64,
    ) -> Result<Option<u64>, Refusal> {
        let color = self
            .live
            .color_of(&user.id)
            .ok_or_else(|| Refusal::new(ErrorCode::Forbidden, "you do not play in this game"))?;
        let events = self
            .live
            .decide(color, &action, self.now())
            .inspect_err(|r| {
                if let Some(reason) = r.reason {
                    crate::metrics::move_rejected(reason);
                }
            })?;
        if events.is_empty() {
            return Ok(None);
        }
        self.commit(events, lag_ms).await.map(Some)
    }

    fn kibitz(&mut self, user: UserInfo, text: String) -> Result<(), Refusal> {
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
        let frame = encode(&ServerMsg::Kibitz {
            game_id: self.id.to_string(),
            from: user,
            text,
            at: wall_ms(),
        });
        self.crowd.broadcast(&frame, |m| m.color.is_none());
        Ok(())
    }

    fn summary(&self) -> GameSummary {
        GameSummary {
            game_id: self.id.to_string(),
            black: self.live.black.clone(),
            white: self.live.white.clone(),
            board_size: self.live.settings.board_size,
            move_number: self.live.move_count(),
            phase: self.live.phase(),
            spectators: self.crowd.spectators() as u32,
            result: self.live.result(),
        }
    }

    /// Applies, stores and broadcasts `events`; returns the last one's seq. If the store
    /// refuses, the game is put back as it was before and the caller is told.
    async fn commit(&mut self, events: Vec<GameEvent>, lag_ms: u64) -> Result<u64, Refusal> {
        let wall = wall_ms();
        let at = Moment {
            now: self.now(),
            wall_ms: wall,
            lag_ms,
        };
        let before = self.history.len();
        let mut batch = Vec::with_capacity(events.len() + 2);
        let mut frames = Vec::with_capacity(events.len());
        let mut ended = None;
        for mut event in events {
            let seq = self.live.seq() + 1;
            self.live.apply(&mut event, seq, at);
            let kind = event.kind();
            if kind == "move_played" {
                crate::metrics::move_played();
            }
            if let GameEvent::GameEnded { result, .. } = &event {
                ended = Some(result.to_string());
            }
            let frame = encode(&EventFrame {
                game_id: self.id.to_string(),
                seq,
                event,
            });
            batch.push(Append::Event(event_record(
                &self.id, seq, kind, &frame, wall,
            )));
            frames.push(frame);
        }
        batch.push(Append::MoveCount {
            game_id: self.id.to_string(),
            move_count: self.live.move_count(),
        });
        if let Some(result) = &ended {
            batch.push(Append::Finish {
                game_id: self.id.to_string(),
                result: result.clone(),
                ended_at_ms: wall,
            });
        }
        let started = std::time::Instant::now();
        let committed = self.hub.writer.commit(batch).await;
        crate::metrics::store_commit(started.elapsed().as_micros() as u64);
        if let Err(e) = committed {
            tracing::error!(error = %e, "store refused a commit; game rolled back");
            let frames = self.history[..before].iter().map(|f| f.as_str());
            if let Some((live, _)) = rebuild(frames, self.hub.config.clock.lag) {
                self.live = live;
                self.live.start_clock_if_stopped(self.now());
            }
            return Err(unavailable(&e));
        }
        let last = self.live.seq();
        for frame in frames {
            let dropped = self.crowd.broadcast(&frame, |_| true);
            self.history.push(frame);
            for color in dropped {
                tracing::info!(?color, "dropped a slow player connection");
            }
        }
        if ended.is_some() {
            self.hub.game_ended(self.summary());
        }
        Ok(last)
    }
}

fn unavailable(e: &crate::store::StoreError) -> Refusal {
    Refusal::new(
        ErrorCode::Unavailable,
        format!("the game could not be saved, so nothing changed: {e}"),
    )
}

fn event_record(game_id: &str, seq: u64, kind: &str, frame: &Frame, at_ms: i64) -> EventRecord {
    EventRecord {
        game_id: game_id.to_string(),
        seq,
        kind: kind.to_string(),
        payload: frame.as_str().to_string(),
        at_ms,
    }
}

/// Replays stored event frames into a game and its history.
fn rebuild<'a>(
    frames: impl Iterator<Item = &'a str>,
    lag: LagSettings,
) -> Option<(LiveGame, Vec<Frame>)> {
    let mut live: Option<LiveGame> = None;
    let mut history = Vec::new();
    for text in frames {
        let mut frame: EventFrame = serde_json::from_str(text).ok()?;
        match live.as_mut() {
            None => {
                let mut game = LiveGame::create(&frame.event, 0, lag)?;
                game.apply(&mut frame.event, frame.seq, Moment::default());
                live = Some(game);
            }
            Some(game) => game.apply(&mut frame.event, frame.seq, Moment::default()),
        }
        history.push(Frame::from(text.to_string()));
    }
    let mut live = live?;
    live.stop_clock();
    Some((live, history))
}
