//! This node's stand-in for a room that runs on another node: it takes the same
//! commands as a room ([`RoomCmd`]), forwards them to the owner over the bus, and hands
//! the owner's relayed frames to the connections here, in `seq` order and without gaps.
//!
//! A relayed frame can be lost (the bus is at-most-once) or arrive twice; each
//! connection here remembers the last `seq` it was given, so a repeat is skipped and a
//! gap is filled from the store, where every relayed frame was committed before it was
//! sent. When the owner goes (it stopped, died, or handed the game over), the mirror
//! stops and its connections join the game again wherever it runs next, from just
//! after what they were given.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::bus::{Bus, BusError};
use super::wire::{Answer, Forward, Relayed, to_bytes};
use crate::fanout::{Frame, Outbox};
use crate::protocol::{ErrorCode, Refusal, ServerMsg, UserInfo};
use crate::room::{
    Audience, News, Opening, Rejoin, RoomCmd, RoomHandle, RoomNews, moving, stored_frames,
};
use crate::rules::Color;
use crate::store::Store;

/// How long a forwarded command waits for the owner's answer. An owner killed just as a
/// command was sent to it never answers (NATS had handed the command to its dead
/// connection), so this bounds how long a takeover can look like silence; a commit
/// slower than this is answered `unavailable` and, sent again, `stale_move`.
const ANSWER_WITHIN: Duration = Duration::from_secs(2);
/// How long a mirror with nobody here lives on after its last command.
const IDLE: Duration = Duration::from_secs(10);

/// A connection here that watches or plays the game.
struct Watcher {
    outbox: Outbox,
    user: Option<UserInfo>,
    color: Option<Color>,
    delayed: bool,
    /// The last seq it was given (of the delayed stream for a delayed spectator).
    after: u64,
}

pub struct Mirror {
    game: Arc<str>,
    instance: u64,
    bus: Bus,
    /// Where the mirror says it stopped, as a room does: the registry forgets it and
    /// joins its watchers to the game wherever it runs next.
    news: News,
    store: Arc<dyn Store>,
    watchers: Vec<Watcher>,
    /// The owner's relayed frames.
    relayed: async_nats::Subscriber,
    /// The highest seq of the events stream (not the delayed one) seen here.
    stream: u64,
    /// The owner went away: stop, and let the watchers find the game anew.
    orphaned: bool,
}

/// Starts a mirror of `game` (owned by another node) and returns its handle.
pub async fn open(
    bus: Bus,
    news: News,
    store: Arc<dyn Store>,
    game: Arc<str>,
) -> Result<RoomHandle, BusError> {
    // Subscribed before anything is asked of the owner, so nothing sent after the
    // owner's answer can be missed.
    let relayed = bus.subscribe(bus.game_events(&game)).await?;
    let (handle, commands) = RoomHandle::channel(game.clone());
    let mirror = Mirror {
        game,
        instance: handle.instance(),
        bus,
        news,
        store,
        watchers: Vec::new(),
        relayed,
        stream: 0,
        orphaned: false,
    };
    tokio::spawn(mirror.run(commands));
    Ok(handle)
}

impl Mirror {
    async fn run(mut self, mut commands: mpsc::Receiver<RoomCmd>) {
        let mut last_used = Instant::now();
        loop {
            let idle_until = tokio::time::Instant::from_std(last_used + IDLE);
            tokio::select! {
                cmd = commands.recv() => match cmd {
                    Some(cmd) => {
                        last_used = Instant::now();
                        self.handle(cmd).await;
                    }
                    None => break,
                },
                message = self.relayed.next() => match message {
                    Some(message) => self.relayed(&message.payload).await,
                    None => self.orphaned = true,
                },
                () = tokio::time::sleep_until(idle_until), if self.watchers.is_empty() => break,
            }
            if self.orphaned {
                break;
            }
        }
        // The watchers here join the game again wherever it runs next, from just after
        // what they were given; the commands already queued are asked to come again, for
        // the game is not gone, only moving (or its owner silent): dropped, they would
        // read as a game no longer open.
        let members = self.watchers.into_iter().map(|w| Rejoin {
            outbox: w.outbox,
            user: w.user,
            since_seq: w.after,
        });
        (self.news)(RoomNews::Moved {
            game_id: self.game,
            room: self.instance,
            fence: None,
            members: members.collect(),
        });
        RoomCmd::turn_away_queued(&mut commands).await;
    }

    /// Sends `forward` to the owner and waits for the answer. No owner, no answer in
    /// time or a room gone: the mirror is orphaned and the caller told to try again.
    async fn ask(&mut self, forward: &Forward) -> Result<Answer, Refusal> {
        let started = Instant::now();
        let asked = self
            .bus
            .request(
                self.bus.game_commands(&self.game),
                to_bytes(forward),
                ANSWER_WITHIN,
            )
            .await;
        crate::metrics::cluster_forwarded(started.elapsed().as_micros() as u64);
        let answer = match asked {
            Ok(bytes) => serde_json::from_slice::<Answer>(&bytes).ok(),
            // The owner may be well; this node is the one cut off.
            Err(BusError::NotConnected { .. }) => return Err(cut_off()),
            Err(e) => {
                tracing::info!(game = %self.game, error = %e, "the game's node does not answer");
                None
            }
        };
        match answer {
            Some(Answer::Refused(refusal)) => Err(refusal.into()),
            Some(Answer::Gone) | None => {
                self.orphaned = true;
                Err(moving())
            }
            Some(answer) => Ok(answer),
        }
    }

    async fn handle(&mut self, cmd: RoomCmd) {
        let node = self.bus.node().to_owned();
        match cmd {
            RoomCmd::Join {
                outbox,
                user,
                since_seq,
                reply,
            } => {
                let forward = Forward::Join {
                    node,
                    conn: outbox.conn(),
                    user: user.clone(),
                    since_seq,
                };
                let joined = match self.ask(&forward).await {
                    Ok(Answer::Joined(opening)) => self.seat(outbox, user, opening.into()),
                    Ok(_) => Err(unexpected()),
                    Err(refusal) => Err(refusal),
                };
                let _ = reply.send(joined);
            }
            RoomCmd::Leave { conn, done } => {
                self.watchers.retain(|w| w.outbox.conn() != conn);
                let _ = self.ask(&Forward::Leave { node, conn }).await;
                let _ = done.send(());
            }
            RoomCmd::Act {
                user,
                action,
                lag_ms,
                reply,
            } => {
                let forward = Forward::Act {
                    user,
                    action,
                    lag_ms,
                };
                let answer = self.ask_seq(&forward).await;
                let _ = reply.send(answer);
            }
            RoomCmd::Summary { reply } => {
                if let Ok(Answer::Summary(summary)) = self.ask(&Forward::Summary).await {
                    let _ = reply.send(summary);
                }
            }
            RoomCmd::Calls { user, reply } => {
                if let Ok(Answer::Calls(calls)) = self.ask(&Forward::Calls { user }).await {
                    let _ = reply.send(*calls);
                }
            }
            // Only rooms that run here are asked these.
            RoomCmd::JoinRemote { reply, .. } => {
                let _ = reply.send(Err(unexpected()));
            }
            RoomCmd::LeaveRemote { .. } | RoomCmd::LeaveNode { .. } => {}
            // A reply dropped (the owner gone or cut off) says the game was not reached.
            RoomCmd::Vacation {
                user_id,
                away,
                reply,
            } => {
                let forward = Forward::Vacation { user_id, away };
                if let Ok(Answer::Vacation(told)) = self.ask(&forward).await {
                    let _ = reply.send(told);
                }
            }
            // A calendar reaches the games whose rooms run on the player's node (or
            // sleep); the others read it again when their room is next built.
            RoomCmd::Calendar { .. } => {}
            RoomCmd::Release => self.orphaned = true,
        }
    }

    /// Forwards an action; once it is answered, the connections here have been given
    /// its events, so a player sees their own move before its acknowledgement, as on the
    /// owner's node.
    async fn ask_seq(&mut self, forward: &Forward) -> Result<Option<u64>, Refusal> {
        let seq = match self.ask(forward).await? {
            Answer::Seq(seq) => seq,
            _ => return Err(unexpected()),
        };
        if let Some(seq) = seq {
            self.reach(seq).await;
        }
        Ok(seq)
    }

    /// Hands out relayed frames until the events stream reaches `seq`; what has not
    /// come in a moment is read from the store.
    async fn reach(&mut self, seq: u64) {
        if !self.watchers.iter().any(|w| !w.delayed) {
            return;
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
        while self.stream < seq && !self.orphaned {
            match tokio::time::timeout_at(deadline, self.relayed.next()).await {
                Ok(Some(message)) => self.relayed(&message.payload).await,
                Ok(None) | Err(_) => {
                    self.hand_out(seq + 1, Audience::Live, None).await;
                    break;
                }
            }
        }
    }

    /// Gives a joining connection its opening, then counts it among the watchers.
    fn seat(
        &mut self,
        outbox: Outbox,
        user: Option<UserInfo>,
        opening: Opening,
    ) -> Result<(), Refusal> {
        let (color, delayed, through) = (opening.color, opening.delayed, opening.through);
        opening.send_to(&outbox)?;
        let conn = outbox.conn();
        self.watchers.retain(|w| w.outbox.conn() != conn);
        if !delayed {
            self.stream = self.stream.max(through);
        }
        self.watchers.push(Watcher {
            outbox,
            user,
            color,
            delayed,
            after: through,
        });
        Ok(())
    }

    /// A frame the owner relayed: to each watcher it is for, after the frames it
    /// missed, unless it had it already.
    async fn relayed(&mut self, payload: &[u8]) {
        let Some(relayed) = Relayed::decode(payload) else {
            tracing::warn!(game = %self.game, "an unreadable relayed frame was ignored");
            return;
        };
        let (seq, audience, frame) = match relayed {
            Relayed::Closed => {
                self.orphaned = true;
                return;
            }
            Relayed::Frame {
                seq,
                audience,
                frame,
            } => (seq, audience, frame),
        };
        if audience == Audience::Spectators {
            for w in self.watchers.iter().filter(|w| w.color.is_none()) {
                w.outbox.push(frame.clone());
            }
            return;
        }
        self.hand_out(seq, audience, Some(frame)).await;
    }

    /// Gives each watcher of `audience`'s stream what it lacks before `seq` (from the
    /// store), then `frame` (event `seq`) if there is one.
    async fn hand_out(&mut self, seq: u64, audience: Audience, frame: Option<Frame>) {
        let delayed = audience == Audience::Delayed;
        if !delayed {
            self.stream = self.stream.max(seq - u64::from(frame.is_none()));
        }
        // The earliest seq any watcher of this stream lacks before this frame.
        let behind = self
            .watchers
            .iter()
            .filter(|w| w.delayed == delayed && w.after + 1 < seq)
            .map(|w| w.after)
            .min();
        let mut due = match behind {
            Some(after) => self.missed(after, seq).await,
            None => Vec::new(),
        };
        due.extend(frame.map(|f| (seq, f)));
        let mut dropped = false;
        for w in self.watchers.iter_mut().filter(|w| w.delayed == delayed) {
            for (s, f) in &due {
                if *s > w.after {
                    dropped |= !w.outbox.push(f.clone());
                    w.after = *s;
                }
            }
        }
        if dropped {
            // A full queue has told its connection to close; it leaves through the
            // session, which says so to the owner.
            tracing::info!(game = %self.game, "dropped a slow connection");
        }
    }

    /// The frames with seq `after + 1 .. before`, from the store.
    async fn missed(&self, after: u64, before: u64) -> Vec<(u64, Frame)> {
        match stored_frames(&self.store, &self.game, after + 1..before).await {
            Ok(frames) => {
                crate::metrics::cluster_gap_filled(frames.len());
                (after + 1..).zip(frames).collect()
            }
            Err(e) => {
                tracing::error!(game = %self.game, error = %e, "a gap in relayed frames could not be filled");
                Vec::new()
            }
        }
    }
}

/// Tells a connection that it no longer follows `game`, which it could not join again
/// where the game runs now (`why`): an error with no request id that names the game, so
/// the client joins it again itself (with `since_seq`) rather than wait in silence for
/// events that no longer come (client-protocol/game.md, "Reconnecting").
pub fn unfollowed(outbox: &Outbox, game: &str, why: &Refusal) {
    outbox.push(crate::fanout::encode(&ServerMsg::Error {
        id: None,
        code: ErrorCode::Unavailable,
        message: format!(
            "this connection no longer follows this game, which moved to another server node: {}; join it again with since_seq",
            why.message
        ),
        game_id: Some(game.to_owned()),
        reason: None,
        retry_after_ms: None,
    }));
}

fn cut_off() -> Refusal {
    Refusal::new(
        ErrorCode::Unavailable,
        "this server node cannot reach the game's node just now; nothing changed, send it again in a moment",
    )
}

fn unexpected() -> Refusal {
    Refusal::new(
        ErrorCode::Unavailable,
        "the game's server node answered something unexpected",
    )
}
