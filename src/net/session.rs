//! One WebSocket connection: reads requests, answers them through its own bounded
//! outbound queue (so replies and broadcasts arrive in order), writes queued frames in
//! batches with one flush, pings for liveness and latency, and leaves every room it
//! joined when it closes.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures_util::{SinkExt, StreamExt};
use tokio::time::{Instant, MissedTickBehavior};

use super::chat::ChatQuota;
use super::fairplay;
use super::limits::{PerUser, RateLimit, Unfollowed, UserSlot};
use super::notices;
use crate::accounts::revoke;
use crate::accounts::tokens::scope::{self, Grant};
use crate::fanout::{Inbox, Next, Outbox, encode};
use crate::hub::Hub;
use crate::lobby::automatch::Wish;
use crate::protocol::{
    ClientMsg, ErrorCode, GameAction, GameSettings, LobbyMsg, NoticeKind, NoticePayload,
    PROTOCOL_VERSION, Refusal, Request, RequestId, Role, ServerMsg, TournamentAction, UserInfo,
    decode, request_id,
};
use crate::room::{Gone, RoomCmd, RoomHandle};
use crate::time::wall_ms;

/// Frames written per flush at most.
const BATCH: usize = 64;
/// Close code for a client that could not keep up with its queue.
const SLOW_CONSUMER: u16 = 4008;
/// How long writing one batch may take before the peer counts as gone.
const WRITE_TIMEOUT: Duration = Duration::from_secs(15);
/// Close code for a connection that kept flooding.
const FLOODING: u16 = 4029;
/// Close code for a connection without a login that followed nothing for too long.
const UNFOLLOWED: u16 = 4010;
/// How long the last frames (a close reply, our own close) may take to leave.
const CLOSE_WAIT: Duration = Duration::from_secs(5);
/// After our close, how long the peer may be silent before the socket is closed without
/// its close reply.
const CLOSE_QUIET: Duration = Duration::from_millis(100);

/// What a connection knows about itself.
struct Session {
    hub: Arc<Hub>,
    conn: u64,
    user: Option<UserInfo>,
    outbox: Outbox,
    joined: HashMap<String, RoomHandle>,
    /// Round-trip time estimate from WebSocket pings, in milliseconds.
    rtt_ms: Option<u64>,
    /// Every user's open connections, and this one's place among its user's.
    per_user: Arc<PerUser>,
    slot: Option<UserSlot>,
    watching_lobby: bool,
    chat: Arc<ChatQuota>,
    /// What the login allows: everything (a session) or a personal token's scopes,
    /// checked on every request.
    grant: Grant,
}

/// Serves one upgraded connection until it closes or the server shuts down. `login` is
/// the user the upgrade's token named, what the token grants, and the user's counted
/// place.
///
/// Not an `async fn`: that would keep its own copy of the arguments beside the inner
/// future's, in every connection's task for its whole life.
pub fn serve(
    hub: Arc<Hub>,
    socket: WebSocket,
    login: Option<(UserInfo, Grant, UserSlot)>,
    per_user: Arc<PerUser>,
    chat: Arc<ChatQuota>,
) -> impl Future<Output = ()> + Send {
    let conn = hub.next_conn();
    let span = tracing::info_span!(
        "conn",
        conn,
        user = login.as_ref().map(|(u, _, _)| u.id.as_str()).unwrap_or("-")
    );
    // Instrumented, not entered: a guard held across `.await` would leak the span into
    // whatever else runs on this thread while the connection waits.
    tracing::Instrument::instrument(serve_conn(hub, socket, login, per_user, chat, conn), span)
}

/// [`serve`], inside the connection's span. It owns the socket and the queue and lends
/// them to [`Session::run`]: moved in, they would be stored twice in the task.
async fn serve_conn(
    hub: Arc<Hub>,
    mut socket: WebSocket,
    login: Option<(UserInfo, Grant, UserSlot)>,
    per_user: Arc<PerUser>,
    chat: Arc<ChatQuota>,
    conn: u64,
) {
    // Dropped once this connection has finished: shutdown waits for the last one.
    let guard = hub.shutdown.guard();
    let limits = &hub.config.limits;
    let (outbox, mut inbox) = Outbox::new(conn, limits.outbound_queue, limits.outbound_queue_bytes);
    crate::metrics::connected(None, 1);
    let mut session = Session {
        hub: hub.clone(),
        conn,
        user: None,
        outbox,
        joined: HashMap::new(),
        rtt_ms: None,
        per_user,
        slot: None,
        watching_lobby: false,
        chat,
        grant: Grant::Session,
    };
    if let Some((user, grant, slot)) = login {
        session.log_in(user, grant, slot);
    }
    session.send(&ServerMsg::Welcome {
        protocol: PROTOCOL_VERSION,
        user: session.user.clone(),
        server_time: wall_ms(),
    });
    let close = session.run(&mut socket, &mut inbox).await;
    tracing::debug!(?close, "connection closed");
    drop(socket);
    session.leave_all().await;
    drop(guard);
}

impl Session {
    fn log_in(&mut self, user: UserInfo, grant: Grant, slot: UserSlot) {
        self.slot = Some(slot);
        self.set_grant(grant);
        self.hub.lobby.connect(&user, self.outbox.clone());
        crate::metrics::connected(None, -1);
        crate::metrics::connected(Some(user.role), 1);
        self.user = Some(user);
    }

    /// Takes what a (new) login grants; a personal token's connections are noted, so
    /// that revoking the token ends them. A token revoked since it was admitted ends
    /// the connection at once, as its revocation would have.
    fn set_grant(&mut self, grant: Grant) {
        if let Some(old) = self.grant.token() {
            self.hub.open_tokens.closed(old, self.conn);
        }
        if let Some(token) = grant.token()
            && !self.hub.open_tokens.opened(token, self.outbox.clone())
        {
            self.send(&ServerMsg::Error {
                id: None,
                code: ErrorCode::Unauthorized,
                message: revoke::TOKEN_REVOKED.0.into(),
                game_id: None,
                reason: None,
                retry_after_ms: None,
            });
            self.outbox.end(revoke::CLOSE_CODE, revoke::TOKEN_REVOKED.1);
        }
        self.grant = grant;
    }

    /// The logged-in user's fresh token names them anew (another name or role): the
    /// connection is that user from now on, since every request reads the user from here.
    /// The lobby knows a connection by user id alone. A role also counts in the metrics,
    /// in a bot's standing offer, and in each joined game, where it decides what the
    /// connection sees (a referee sees a tournament game live, a spectator late): those
    /// games are joined again as the new role.
    async fn renew(&mut self, user: UserInfo) {
        let Some(old) = self.user.replace(user.clone()) else {
            return;
        };
        if old.role == user.role {
            return;
        }
        crate::metrics::connected(Some(old.role), -1);
        crate::metrics::connected(Some(user.role), 1);
        if old.role == Role::Bot {
            self.hub.lobby.withdraw_offer(&user.id);
        }
        let games: Vec<String> = self.joined.keys().cloned().collect();
        for game_id in games {
            let joined = self
                .hub
                .games
                .join(&game_id, self.outbox.clone(), Some(user.clone()), None)
                .await;
            match joined {
                Ok(room) => {
                    self.joined.insert(game_id, room);
                }
                // Not followed as the old role: the game is left, and the client told.
                Err(r) => {
                    if let Some(room) = self.joined.remove(&game_id) {
                        self.leave(&game_id, room).await;
                    }
                    let message = format!(
                        "left this game: it could not be joined again as your new role: {}",
                        r.message
                    );
                    self.refuse(None, Some(&game_id), Refusal::new(r.code, message));
                }
            }
        }
    }

    fn send(&self, msg: &ServerMsg) {
        self.outbox.push(encode(msg));
    }

    fn refuse(&self, id: Option<RequestId>, game_id: Option<&str>, r: Refusal) {
        self.send(&ServerMsg::Error {
            id,
            code: r.code,
            message: r.message,
            game_id: game_id.map(str::to_string),
            reason: r.reason.map(str::to_string),
            retry_after_ms: r.retry_after_ms,
        });
    }

    async fn run(
        &mut self,
        socket: &mut WebSocket,
        inbox: &mut Inbox,
    ) -> Option<(u16, &'static str)> {
        let limits = &self.hub.config.limits;
        let (flood_close_after, max_message_bytes) =
            (limits.flood_close_after, limits.max_message_bytes);
        let mut rate = RateLimit::new(limits.messages_per_second, limits.burst);
        let mut heartbeat =
            tokio::time::interval(Duration::from_secs(limits.heartbeat_secs.max(1)));
        heartbeat.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let idle_timeout = Duration::from_secs(limits.idle_timeout_secs.max(1));
        let mut last_heard = Instant::now();
        let mut unfollowed = Unfollowed::new(Duration::from_secs(limits.anonymous_idle_secs));
        // Made once, not on every wake-up: a new wait registers with the signal's waiters
        // (a lock) each time it is polled and deregisters when dropped. It is ready at
        // once for a connection that began after shutdown did.
        let mut stopping = std::pin::pin!(self.hub.shutdown.begun());
        let epoch = Instant::now();
        let close = loop {
            // What an arm wrote, if anything: every write to the socket (a batch of
            // frames, a heartbeat ping) goes through `in_time` and is judged here.
            let written = tokio::select! {
                biased;
                _ = &mut stopping => {
                    self.send(&ServerMsg::Closing { reason: "the server is shutting down".into() });
                    break Some((1001, "server shutting down"));
                }
                next = inbox.recv() => {
                    let first = match next {
                        Next::Frame(first) => first,
                        Next::TooSlow => break Some((SLOW_CONSUMER, "too slow: reconnect and join with since_seq")),
                        Next::Ended => break None,
                        Next::Close(code, reason) => break Some((code, reason)),
                    };
                    let muted = self.hub.lobby.mutes.screen_for(self.user.as_ref());
                    in_time(write_batch(socket, first, inbox, muted.as_deref())).await
                }
                msg = socket.next() => {
                    let msg = match msg {
                        Some(Ok(msg)) => msg,
                        Some(Err(e)) => break close_for(e),
                        _ => break None,
                    };
                    last_heard = Instant::now();
                    match msg {
                        // Every data frame counts against the rate, a binary one too: it
                        // is answered as a text one is, so it costs as much.
                        msg @ (Message::Text(_) | Message::Binary(_)) => {
                            if !rate.allow() {
                                crate::metrics::rate_limited();
                                let id = match &msg {
                                    Message::Text(text) => request_id(text.as_str()),
                                    _ => None,
                                };
                                self.refuse(id, None, Refusal::new(ErrorCode::RateLimited, "too many messages; slow down"));
                                if rate.refused_in_row >= flood_close_after {
                                    break Some((FLOODING, "too many messages"));
                                }
                                continue;
                            }
                            let Message::Text(text) = msg else {
                                self.refuse(None, None, Refusal::new(ErrorCode::BadRequest, "send JSON text frames, not binary"));
                                continue;
                            };
                            if text.len() > max_message_bytes {
                                let id = request_id(text.as_str());
                                self.refuse(id, None, Refusal::new(ErrorCode::TooLarge, format!("messages are limited to {max_message_bytes} bytes")));
                                continue;
                            }
                            crate::metrics::message_in();
                            // Boxed: handling a request (accept, join, play …) is a deep
                            // future; inline, it would sit in every idle connection's task.
                            Box::pin(self.request(text.as_str())).await;
                        }
                        Message::Pong(payload) => {
                            if let Ok(bytes) = <[u8; 8]>::try_from(payload.as_ref()) {
                                let sent = u64::from_be_bytes(bytes);
                                let now = epoch.elapsed().as_millis() as u64;
                                let rtt = now.saturating_sub(sent);
                                // A smoothed estimate: one ping cannot swing it far.
                                self.rtt_ms = Some(self.rtt_ms.map_or(rtt, |old| (old * 3 + rtt) / 4));
                            }
                        }
                        Message::Ping(_) => {}
                        Message::Close(_) => {
                            // tungstenite has queued the reply; writing it completes the
                            // closing handshake (RFC 6455 §5.5.1) before the socket goes.
                            let _ = tokio::time::timeout(CLOSE_WAIT, socket.flush()).await;
                            break None;
                        }
                    }
                    continue;
                }
                _ = heartbeat.tick() => {
                    if last_heard.elapsed() > idle_timeout {
                        break Some((1000, "idle timeout"));
                    }
                    let follows = self.user.is_some() || self.watching_lobby || !self.joined.is_empty();
                    if unfollowed.too_long(follows) {
                        break Some((UNFOLLOWED, "idle without a login: log in, join a game or watch the lobby"));
                    }
                    let stamp = (epoch.elapsed().as_millis() as u64).to_be_bytes();
                    in_time(socket.send(Message::Ping(stamp.to_vec().into()))).await
                }
            };
            match written {
                Written::Sent => {}
                Written::Failed => break None,
                // A peer that stops reading cannot hold this task (and its buffers)
                // forever. Its socket is stuck, so no close frame is tried either.
                Written::Stalled => {
                    crate::metrics::slow_consumer();
                    return Some((SLOW_CONSUMER, "too slow"));
                }
            }
        };
        if let Some((code, reason)) = close {
            let frame = Message::Close(Some(CloseFrame {
                code,
                reason: Utf8Bytes::from_static(reason),
            }));
            let handshake = async {
                // What was queued goes first (the last refusal, `closing`); a peer too slow
                // for its queue gets only the close.
                if code != SLOW_CONSUMER {
                    while let Some(f) = inbox.try_recv() {
                        socket.feed(Message::Text(f)).await?;
                    }
                }
                socket.send(frame).await?;
                // What the peer sent meanwhile is read and dropped until its close reply
                // (RFC 6455 §7.1.1), or until it falls silent: a socket closed with unread
                // input is reset, and the reset destroys what the peer had not read yet,
                // our close included. A peer that sends nothing more is not waited for.
                while let Ok(Some(Ok(_))) = tokio::time::timeout(CLOSE_QUIET, socket.next()).await {
                }
                Ok::<(), axum::Error>(())
            };
            let _ = tokio::time::timeout(CLOSE_WAIT, handshake).await;
        }
        close
    }

    async fn leave_all(&mut self) {
        let joined: Vec<_> = self.joined.drain().collect();
        for (game_id, room) in joined {
            self.leave(&game_id, room).await;
        }
        if let Some(user) = &self.user {
            self.hub.lobby.disconnect(user, self.conn);
        }
        if let Some(token) = self.grant.token() {
            self.hub.open_tokens.closed(token, self.conn);
        }
        crate::metrics::connected(self.user.as_ref().map(|u| u.role), -1);
        self.hub.lobby.unwatch(self.conn);
    }

    /// Leaves a game joined through `room`. A room that stopped may have handed this
    /// connection to the game's next room (in a cluster): that one is told instead.
    async fn leave(&self, game_id: &str, room: RoomHandle) {
        let room = match room.is_closed() {
            true => self.hub.games.registered(game_id),
            false => Some(room),
        };
        if let Some(room) = room {
            let conn = self.conn;
            // Gone: the room stopped, and this connection with it.
            let _ = room.ask(|done| RoomCmd::Leave { conn, done }).await;
        }
    }

    fn user(&self) -> Result<UserInfo, Refusal> {
        self.user.clone().ok_or_else(|| {
            Refusal::new(
                ErrorCode::Unauthorized,
                "log in first (a token in ?token= or an `auth` message)",
            )
        })
    }

    async fn request(&mut self, text: &str) {
        let Request { id, msg } = match decode(text) {
            Ok(r) => r,
            Err(e) => return self.refuse(e.id, None, e.refusal),
        };
        let game_id = msg.game_id().map(str::to_string);
        if let Some(user) = &self.user {
            let need = scope::needed(&msg, user.role);
            if !self.grant.allows(need) {
                let refusal = Refusal::new(
                    ErrorCode::InsufficientScope,
                    format!(
                        "this personal token lacks the `{}` scope this request needs",
                        need.as_str()
                    ),
                );
                return self.refuse(id, game_id.as_deref(), refusal);
            }
        }
        let done = match msg {
            ClientMsg::Lobby(msg) => self.lobby(id.clone(), msg).await,
            ClientMsg::Game { game_id, action } => self.game(id.clone(), game_id, action).await,
            ClientMsg::Tournament {
                tournament_id,
                action,
            } => self.tournament(id.clone(), tournament_id, action).await,
        };
        if let Err(r) = done {
            self.refuse(id, game_id.as_deref(), r);
        }
    }

    async fn lobby(&mut self, id: Option<RequestId>, msg: LobbyMsg) -> Result<(), Refusal> {
        let hub = self.hub.clone();
        match msg {
            LobbyMsg::Auth { token } => self.auth(id, &token).await?,
            LobbyMsg::Ping {} => self.send(&ServerMsg::Pong {
                id,
                server_time: wall_ms(),
            }),
            LobbyMsg::ListSeeks {} => self.send(&ServerMsg::Seeks {
                id,
                challenges: hub.lobby.list_for(self.user.as_ref()),
            }),
            LobbyMsg::ListGames {} => self.send(&ServerMsg::Games {
                id,
                games: hub.list_games().await,
            }),
            LobbyMsg::WatchLobby {} => {
                hub.lobby.watch(self.outbox.clone());
                self.watching_lobby = true;
                self.ack(id, None, None);
            }
            LobbyMsg::UnwatchLobby {} => {
                hub.lobby.unwatch(self.conn);
                self.watching_lobby = false;
                self.ack(id, None, None);
            }
            LobbyMsg::Offer { offer } => {
                let user = self.user()?;
                if user.role != Role::Bot {
                    return Err(Refusal::new(
                        ErrorCode::Forbidden,
                        "only bot accounts make standing offers",
                    ));
                }
                offer
                    .check()
                    .map_err(|m| Refusal::new(ErrorCode::BadRequest, m))?;
                hub.lobby.set_offer(&user, offer);
                self.ack(id, None, None);
            }
            LobbyMsg::WithdrawOffer {} => {
                hub.lobby.withdraw_offer(&self.user()?.id);
                self.ack(id, None, None);
            }
            LobbyMsg::ListBots {} => self.send(&ServerMsg::Bots {
                id,
                bots: hub.lobby.bots(),
            }),
            LobbyMsg::Seek { settings } => self.post(id, None, settings).await?,
            LobbyMsg::Challenge { opponent, settings } => {
                self.post(id, Some(opponent), settings).await?
            }
            LobbyMsg::Accept {
                challenge_id,
                nigiri_seed,
            } => {
                let user = self.user()?;
                let challenges = hub.lobby.list_for(Some(&user));
                if challenges
                    .iter()
                    .any(|c| c.challenge_id == challenge_id && c.settings.rated)
                {
                    crate::accounts::rated::check_account(hub.store(), &user).await?;
                }
                let game_id = (hub.starter)
                    .accept(&user, &challenge_id, nigiri_seed.as_deref())
                    .await?;
                self.ack(id, Some(game_id), None);
            }
            LobbyMsg::Decline { challenge_id } => {
                let user = self.user()?;
                hub.lobby
                    .withdraw_anywhere(&challenge_id, &user, true)
                    .await?;
                self.ack(id, None, None);
            }
            LobbyMsg::Cancel { challenge_id } => {
                let user = self.user()?;
                hub.lobby
                    .withdraw_anywhere(&challenge_id, &user, false)
                    .await?;
                self.ack(id, None, None);
            }
            msg @ (LobbyMsg::Block { .. }
            | LobbyMsg::Unblock { .. }
            | LobbyMsg::Mute { .. }
            | LobbyMsg::Unmute { .. }
            | LobbyMsg::ListMutes {}
            | LobbyMsg::Report { .. }
            | LobbyMsg::ListReports {}
            | LobbyMsg::CloseReport { .. }) => self.fair_play(id, msg).await?,
            LobbyMsg::ListRefereeCalls {} => {
                let user = self.user()?;
                if !matches!(user.role, Role::Referee | Role::Admin) {
                    return Err(Refusal::new(
                        ErrorCode::Forbidden,
                        "only referees and admins see the calls for a referee",
                    ));
                }
                let (games, assigned) = hub.referee_calls(&user).await;
                self.send(&ServerMsg::RefereeCalls {
                    id,
                    games,
                    assigned,
                });
            }
            LobbyMsg::Automatch {
                sizes,
                speeds,
                rated,
                handicap,
            } => {
                let user = self.user()?;
                if rated {
                    crate::accounts::rated::check_account(hub.store(), &user).await?;
                }
                let wish = Wish::new(sizes, speeds, rated, handicap)
                    .map_err(|m| Refusal::new(ErrorCode::BadRequest, m))?;
                hub.starter.automatch(&user, wish).await?;
                self.ack(id, None, None);
                hub.starter.automatch_round().await;
            }
            LobbyMsg::AutomatchCancel {} => {
                hub.lobby.cancel_automatch(&self.user()?.id).await?;
                self.ack(id, None, None);
            }
            LobbyMsg::CreateTournament { setup } => {
                let tournament = hub.tournaments.create(&self.user()?, *setup).await?;
                self.send(&ServerMsg::Tournament { id, tournament });
            }
            msg @ (LobbyMsg::GetVacation {}
            | LobbyMsg::ListCorrespondence {}
            | LobbyMsg::StartVacation {}
            | LobbyMsg::EndVacation {}
            | LobbyMsg::GetCalendar {}
            | LobbyMsg::SetCalendar { .. }
            | LobbyMsg::ListNotices { .. }
            | LobbyMsg::MarkNoticesRead { .. }
            | LobbyMsg::GetNotificationSettings {}
            | LobbyMsg::SetNotificationSettings { .. }) => self.own(id, msg).await?,
        }
        Ok(())
    }

    /// `auth`: a login, or a new token for the same user (their role may have changed).
    async fn auth(&mut self, id: Option<RequestId>, token: &str) -> Result<(), Refusal> {
        let hub = self.hub.clone();
        let (user, grant) = crate::accounts::admit(hub.store(), &hub.verifier, token).await?;
        match &self.user {
            Some(current) if current.id != user.id => {
                return Err(Refusal::new(
                    ErrorCode::Forbidden,
                    "this connection is already logged in as someone else",
                ));
            }
            Some(current) if *current != user => {
                self.set_grant(grant);
                self.renew(user.clone()).await;
            }
            Some(_) => self.set_grant(grant),
            None => {
                let max = hub.config.limits.max_connections_per_user;
                let slot = self.per_user.enter(&user.id, max)?;
                self.log_in(user.clone(), grant, slot);
            }
        }
        self.send(&ServerMsg::Authenticated { id, user });
        Ok(())
    }

    /// The logged-in player's own vacation, correspondence games and notices.
    async fn own(&mut self, id: Option<RequestId>, msg: LobbyMsg) -> Result<(), Refusal> {
        let user = self.user()?;
        match msg {
            LobbyMsg::GetVacation {} => {
                let vacation = self.hub.vacations.status(&user.id).await?;
                self.send(&ServerMsg::VacationStatus { id, vacation });
            }
            LobbyMsg::StartVacation {} => {
                let vacation = self.hub.vacations.go(&user.id).await?;
                self.send(&ServerMsg::VacationStatus { id, vacation });
            }
            LobbyMsg::EndVacation {} => {
                let vacation = self.hub.vacations.back(&user.id).await?;
                self.send(&ServerMsg::VacationStatus { id, vacation });
            }
            LobbyMsg::ListCorrespondence {} => {
                let hub = &self.hub;
                let games = crate::desk::list(hub.store(), &hub.games, &user.id).await?;
                self.send(&ServerMsg::CorrespondenceGames { id, games });
            }
            LobbyMsg::GetCalendar {} => {
                let calendar = self.hub.calendars.get(&user.id).await?;
                self.send(&ServerMsg::Calendar { id, calendar });
            }
            LobbyMsg::SetCalendar { calendar } => {
                let calendar = self.hub.calendars.set(&user.id, calendar).await?;
                self.send(&ServerMsg::Calendar { id, calendar });
            }
            msg @ (LobbyMsg::ListNotices { .. }
            | LobbyMsg::MarkNoticesRead { .. }
            | LobbyMsg::GetNotificationSettings {}
            | LobbyMsg::SetNotificationSettings { .. }) => {
                let reply = notices::answer(&self.hub, &user, id, msg).await?;
                self.send(&reply);
            }
            _ => {}
        }
        Ok(())
    }

    /// A request about one tournament, for its director task to decide.
    async fn tournament(
        &mut self,
        id: Option<RequestId>,
        tournament_id: String,
        action: TournamentAction,
    ) -> Result<(), Refusal> {
        let (user, outbox) = (self.user.clone(), self.outbox.clone());
        let hub = self.hub.clone();
        match hub
            .tournaments
            .act(&tournament_id, user, action, outbox)
            .await?
        {
            Some(tournament) => self.send(&ServerMsg::Tournament { id, tournament }),
            None => self.ack(id, None, None),
        }
        Ok(())
    }

    /// Blocks and reports ([`fairplay`]).
    async fn fair_play(&mut self, id: Option<RequestId>, msg: LobbyMsg) -> Result<(), Refusal> {
        let hub = self.hub.clone();
        match msg {
            LobbyMsg::Block { user } => {
                fairplay::block(&hub, &self.user()?, user, true).await?;
                self.ack(id, None, None);
            }
            LobbyMsg::Unblock { user } => {
                fairplay::block(&hub, &self.user()?, user, false).await?;
                self.ack(id, None, None);
            }
            LobbyMsg::Mute { user } => {
                fairplay::mute(&hub, &self.user()?, user, true).await?;
                self.ack(id, None, None);
            }
            LobbyMsg::Unmute { user } => {
                fairplay::mute(&hub, &self.user()?, user, false).await?;
                self.ack(id, None, None);
            }
            LobbyMsg::ListMutes {} => {
                let users = hub.lobby.mutes.list(&self.user()?.id);
                self.send(&ServerMsg::Mutes { id, users });
            }
            LobbyMsg::Report {
                user,
                game_id,
                from_seq,
                to_seq,
                reason,
            } => {
                let filing = fairplay::Filing {
                    user,
                    game_id,
                    from_seq,
                    to_seq,
                    reason,
                };
                let report_id = fairplay::report(&hub, &self.user()?, filing).await?;
                self.send(&ServerMsg::ReportFiled { id, report_id });
            }
            LobbyMsg::ListReports {} => {
                let reports = fairplay::open_reports(&hub, &self.user()?).await?;
                self.send(&ServerMsg::Reports { id, reports });
            }
            LobbyMsg::CloseReport { report_id } => {
                fairplay::close_report(&hub, &self.user()?, report_id).await?;
                self.ack(id, None, None);
            }
            _ => {}
        }
        Ok(())
    }

    /// A request about one game: joining and leaving are this connection's own, and
    /// everything else goes to the game's room as it came, for the room to decide.
    async fn game(
        &mut self,
        id: Option<RequestId>,
        game_id: String,
        action: GameAction,
    ) -> Result<(), Refusal> {
        match action {
            GameAction::Join { since_seq } => return self.join(id, game_id, since_seq).await,
            GameAction::Leave {} => {
                if let Some(room) = self.joined.remove(&game_id) {
                    self.leave(&game_id, room).await;
                }
            }
            action => {
                if let GameAction::Chat { text } = &action {
                    let user = self.user()?;
                    self.chat_allowed(&user, &game_id).await?;
                    self.count_stored_chat(&game_id).await?;
                    let open = |game: &str| self.hub.games.registered(game).is_some();
                    self.chat.take(&user.id, &game_id, text.len(), open)?;
                }
                let seq = self.ask_room(&game_id, action).await?;
                self.ack(id, Some(game_id), seq);
                return Ok(());
            }
        }
        self.ack(id, Some(game_id), None);
        Ok(())
    }

    async fn join(
        &mut self,
        id: Option<RequestId>,
        game_id: String,
        since_seq: Option<u64>,
    ) -> Result<(), Refusal> {
        if self.user.is_none() && !self.hub.config.auth.anonymous_spectators {
            return Err(Refusal::new(
                ErrorCode::Unauthorized,
                "this server lets only logged-in users watch",
            ));
        }
        // Joining a game again takes no more room than it had.
        let max = self.hub.config.limits.max_joined_games;
        if self.joined.len() >= max && !self.joined.contains_key(&game_id) {
            return Err(Refusal::new(
                ErrorCode::LimitReached,
                format!("this connection has joined {max} games, the most it may; leave one first"),
            ));
        }
        let (outbox, user) = (self.outbox.clone(), self.user.clone());
        let room = (self.hub.games.join(&game_id, outbox, user, since_seq)).await?;
        self.joined.insert(game_id.clone(), room);
        self.ack(id, Some(game_id), None);
        Ok(())
    }

    fn ack(&self, id: Option<RequestId>, game_id: Option<String>, seq: Option<u64>) {
        self.send(&ServerMsg::Ack { id, game_id, seq });
    }

    /// Posts a seek or challenge (the starter decides whether a bot answers at once).
    async fn post(
        &self,
        id: Option<RequestId>,
        to: Option<String>,
        settings: GameSettings,
    ) -> Result<(), Refusal> {
        let user = self.user()?;
        let settings = settings.resolve(&self.hub.config.clock.limits)?;
        settings.check_rated_ruleset(self.hub.config.rules.rated_ancient)?;
        let limit = self.hub.config.limits.max_seeks_per_user;
        let to_player = to
            .as_deref()
            .is_some_and(|t| self.hub.lobby.offer_of(t).is_none());
        let challenge = self.hub.starter.post(&user, to, settings, limit).await?;
        if let (true, Some(to)) = (to_player, &challenge.to) {
            let payload = NoticePayload {
                challenge_id: Some(challenge.challenge_id.clone()),
                opponent: Some(user.clone()),
                ..NoticePayload::default()
            };
            (self.hub.notices).notify(to, NoticeKind::ChallengeReceived, payload);
        }
        self.send(&ServerMsg::ChallengeCreated { id, challenge });
        Ok(())
    }

    async fn room(&self, game_id: &str) -> Result<RoomHandle, Refusal> {
        match self.joined.get(game_id) {
            Some(room) if !room.is_closed() => Ok(room.clone()),
            _ => self.hub.games.room(game_id).await,
        }
    }

    /// Counts the chat a game already holds in the store, the first time this node
    /// hears a line for it.
    async fn count_stored_chat(&self, game_id: &str) -> Result<(), Refusal> {
        if self.chat.knows(game_id) {
            return Ok(());
        }
        let (store, id) = (self.hub.store().clone(), game_id.to_owned());
        let events = tokio::task::spawn_blocking(move || store.events(&id))
            .await
            .map_err(|e| Refusal::new(ErrorCode::Unavailable, e.to_string()))?
            .map_err(|e| {
                tracing::error!(error = %e, "cannot read a game's chat to count it");
                Refusal::new(
                    ErrorCode::Unavailable,
                    "chat is unavailable now; try again later",
                )
            })?;
        self.chat.seed(game_id, super::chat::stored_bytes(&events));
        Ok(())
    }

    /// Refuses a player's chat to an opponent when either has blocked the other.
    async fn chat_allowed(&self, user: &UserInfo, game_id: &str) -> Result<(), Refusal> {
        let Some(game) = self.hub.games.summary(game_id).await else {
            return Ok(());
        };
        let opponent = match user.id.as_str() {
            id if id == game.black.id => &game.white.id,
            id if id == game.white.id => &game.black.id,
            _ => return Ok(()),
        };
        if self.hub.lobby.is_blocked(&user.id, opponent) {
            return Err(Refusal::new(
                ErrorCode::Forbidden,
                "no chat between these players: one has blocked the other",
            ));
        }
        Ok(())
    }

    /// Has the game's room rule on `action`; the seq of the last event it caused.
    async fn ask_room(&self, game_id: &str, action: GameAction) -> Result<Option<u64>, Refusal> {
        let user = self.user()?;
        let lag_ms = self.rtt_ms.map_or(0, |rtt| rtt / 2);
        let act = |room: RoomHandle, user: UserInfo, action: GameAction| async move {
            room.ask(|reply| RoomCmd::Act {
                user,
                action,
                lag_ms,
                reply,
            })
            .await
        };
        let room = self.room(game_id).await?;
        match act(room, user.clone(), action.clone()).await {
            Ok(answer) => answer,
            // The room stopped with the action still queued, so it was not carried out:
            // the game ended and everyone left, or (in a cluster) it moved to another
            // node. Asked again where the game is now, it is decided there.
            Err(Gone) => act(self.hub.games.room(game_id).await?, user, action).await?,
        }
    }
}

/// How a write to the socket ended.
enum Written {
    Sent,
    /// The socket failed: the peer is gone.
    Failed,
    /// Not done within [`WRITE_TIMEOUT`]: the peer stopped reading.
    Stalled,
}

/// Runs one write to the socket, allowed [`WRITE_TIMEOUT`].
async fn in_time(write: impl Future<Output = Result<(), axum::Error>>) -> Written {
    match tokio::time::timeout(WRITE_TIMEOUT, write).await {
        Ok(Ok(())) => Written::Sent,
        Ok(Err(_)) => Written::Failed,
        Err(_) => Written::Stalled,
    }
}

/// Writes `first` and whatever else is queued (up to a batch), then flushes once; with
/// `muted`, the chat of those users is screened out ([`crate::accounts::mutes::screen`]).
async fn write_batch(
    socket: &mut WebSocket,
    first: Utf8Bytes,
    inbox: &mut Inbox,
    muted: Option<&HashSet<String>>,
) -> Result<(), axum::Error> {
    let screened = |f: Utf8Bytes| match muted {
        Some(muted) => crate::accounts::mutes::screen(f, muted),
        None => Some(f),
    };
    let mut n = 0;
    for f in std::iter::once(first).chain(std::iter::from_fn(|| inbox.try_recv())) {
        if let Some(f) = screened(f) {
            socket.feed(Message::Text(f)).await?;
        }
        n += 1;
        if n == BATCH {
            break;
        }
    }
    crate::metrics::messages_out(n);
    socket.flush().await
}

/// The close frame a failed read deserves (RFC 6455 §7.4.1): 1009 for a frame over the
/// size limit, 1007 for text that is not UTF-8, 1002 for a broken frame; none when the
/// peer is simply gone.
fn close_for(e: axum::Error) -> Option<(u16, &'static str)> {
    use tokio_tungstenite::tungstenite::{Error, error::ProtocolError};
    let e = e.into_inner().downcast::<Error>().ok()?;
    match *e {
        Error::Capacity(_) => Some((1009, "message too big")),
        Error::Utf8(_) => Some((1007, "text frames must be UTF-8")),
        // The peer dropped the TCP connection: nobody is left to read a close frame.
        Error::Protocol(ProtocolError::ResetWithoutClosingHandshake) => None,
        Error::Protocol(p) => {
            tracing::debug!(error = %p, "WebSocket protocol violation");
            Some((1002, "protocol error"))
        }
        _ => None,
    }
}
