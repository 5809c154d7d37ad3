//! The bot's one WebSocket connection: log in, post the offer, find the account's games
//! (new ones from `game_started`, running ones from `list_games` after a reconnect), run
//! one [`GameBridge`] task per game and route each game's messages to it.
//!
//! When the connection drops, every bridge is told, the loop reconnects with backoff and
//! rejoins each game with `since_seq` (the last event it routed), so the bridges receive
//! exactly the events they missed. Owns the socket and the table of games; knows nothing
//! about GTP.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use thiserror::Error;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep, sleep_until};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async};
use tracing::Instrument;

use super::bridge::{GameBridge, Outgoing, ToGame};
use super::config::BotConfig;
use crate::protocol::{
    Challenge, ClientMsg, EventFrame, GameEvent, GameSummary, Phase, ServerMsg, UserInfo,
};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Longest wait between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Silence after which the bot pings the server, and after which it gives up on it.
const QUIET: Duration = Duration::from_secs(30);
const DEAD: Duration = Duration::from_secs(90);

/// Why the bot stopped.
#[derive(Debug, Error)]
pub enum BotError {
    #[error("The server refused the bot's token: {0}")]
    Unauthorized(String),
    #[error("The server did not log the bot in: pass a valid token with --token.")]
    NotLoggedIn,
}

/// What the bot did, when it stops by itself (`--games`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub games_started: u32,
    pub games_ended: u32,
}

/// A request awaiting its reply, by request id.
#[derive(Debug)]
enum Sent {
    Game { game_id: String, msg: ClientMsg },
    Join { game_id: String },
    Offer,
    Challenge,
    ListGames,
    ListSeeks,
    Other,
}

/// One game the bot plays.
struct Slot {
    tx: mpsc::Sender<ToGame>,
    /// The last event routed to the bridge (what to rejoin with).
    last_seq: Option<u64>,
    joined: bool,
    ended: bool,
    /// The opponent's user id, when known.
    opponent: Option<String>,
}

/// How a session ended.
enum Closed {
    /// The connection dropped or was refused: try again.
    Lost,
    /// Everything asked for is done.
    Done,
}

/// The bot's state across connections.
pub struct BotRunner {
    config: BotConfig,
    me: Option<UserInfo>,
    games: HashMap<String, Slot>,
    tasks: JoinSet<String>,
    out_tx: mpsc::Sender<Outgoing>,
    out_rx: mpsc::Receiver<Outgoing>,
    sent: HashMap<u64, Sent>,
    next_id: u64,
    offer_posted: bool,
    /// `list_games` has answered on this connection: the games we play are all known.
    games_listed: bool,
    /// A challenge of ours is open (or being posted).
    challenge_open: bool,
    challenge_at: Option<Instant>,
    /// Challenges we have sent an `accept` for (each is accepted once).
    accepting: HashSet<String>,
    summary: Summary,
}

/// Runs a bot until it has played `config.games` games (forever without it).
pub async fn run(config: BotConfig) -> Result<Summary, BotError> {
    BotRunner::new(config).run().await
}

impl BotRunner {
    pub fn new(config: BotConfig) -> BotRunner {
        let (out_tx, out_rx) = mpsc::channel(256);
        BotRunner {
            config,
            me: None,
            games: HashMap::new(),
            tasks: JoinSet::new(),
            out_tx,
            out_rx,
            sent: HashMap::new(),
            next_id: 1,
            offer_posted: false,
            games_listed: false,
            challenge_open: false,
            challenge_at: None,
            accepting: HashSet::new(),
            summary: Summary::default(),
        }
    }

    pub async fn run(mut self) -> Result<Summary, BotError> {
        let url = with_token(&self.config.server, &self.config.token);
        let mut backoff = Duration::from_millis(250);
        loop {
            let attempt = tokio::time::timeout(Duration::from_secs(15), connect_async(&url)).await;
            match attempt {
                Ok(Ok((socket, _))) => {
                    tracing::info!(server = %self.config.server, "connected");
                    let (closed, welcomed) = self.session(socket).await;
                    if welcomed {
                        backoff = Duration::from_millis(250);
                    }
                    self.disconnected().await;
                    match closed? {
                        Closed::Done => return Ok(self.summary),
                        Closed::Lost => tracing::warn!("connection lost; reconnecting"),
                    }
                }
                Ok(Err(e)) => tracing::warn!(error = %e, "could not connect"),
                Err(_) => tracing::warn!("connecting timed out"),
            }
            sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// Every game hears that requests in flight may be lost; nothing is joined now.
    async fn disconnected(&mut self) {
        self.sent.clear();
        self.offer_posted = false;
        self.games_listed = false;
        // The server drops a disconnected user's open challenges.
        self.challenge_open = false;
        for slot in self.games.values_mut() {
            slot.joined = false;
            let _ = slot.tx.send(ToGame::Disconnected).await;
        }
    }

    fn live_games(&self) -> usize {
        self.games.values().filter(|s| !s.ended).count()
    }

    /// No more games start once this many have started.
    fn enough_started(&self) -> bool {
        self.config
            .games
            .is_some_and(|n| self.summary.games_started >= n)
    }

    fn done(&self) -> bool {
        self.config
            .games
            .is_some_and(|n| self.summary.games_ended >= n)
            && self.games.is_empty()
    }

    fn has_room(&self) -> bool {
        self.live_games() < self.config.max_games && !self.enough_started()
    }

    /// One connection, until it drops or the work is done. Also says whether the server
    /// logged the bot in (then the next reconnect starts with a short backoff).
    async fn session(&mut self, socket: Socket) -> (Result<Closed, BotError>, bool) {
        let (mut sink, mut stream) = socket.split();
        let welcome = match tokio::time::timeout(Duration::from_secs(15), stream.next()).await {
            Ok(Some(Ok(Message::Text(t)))) => serde_json::from_str::<Value>(t.as_str()).ok(),
            _ => None,
        };
        let Some(welcome) = welcome else {
            return (Ok(Closed::Lost), false);
        };
        match welcome["type"].as_str() {
            Some("welcome") => {}
            Some("error") if welcome["code"] == "unauthorized" => {
                let message = welcome["message"].as_str().unwrap_or("").to_string();
                return (Err(BotError::Unauthorized(message)), false);
            }
            _ => return (Ok(Closed::Lost), false),
        }
        let Some(me) = serde_json::from_value::<UserInfo>(welcome["user"].clone()).ok() else {
            return (Err(BotError::NotLoggedIn), false);
        };
        tracing::info!(user = %me.id, role = ?me.role, "logged in");
        self.me = Some(me);

        let mut wire = Vec::new();
        // Rejoin the games we know with the last event we saw: exactly the missed ones.
        let known: Vec<(String, Option<u64>)> = self
            .games
            .iter()
            .map(|(id, s)| (id.clone(), s.last_seq))
            .collect();
        for (game_id, since_seq) in known {
            wire.push(self.request(
                ClientMsg::Join {
                    game_id: game_id.clone(),
                    since_seq,
                },
                Sent::Join { game_id },
            ));
        }
        // Games that started while we were away, or before this process started.
        wire.push(self.request(ClientMsg::ListGames, Sent::ListGames));
        if self.config.answer_seeks {
            wire.push(self.request(ClientMsg::WatchLobby, Sent::Other));
        }
        if self.config.offer.is_none() || !self.has_room() {
            // (With an offer to post, the lobby is listed right after it.)
            wire.push(self.request(ClientMsg::ListSeeks, Sent::ListSeeks));
        }
        for text in wire {
            if sink.send(Message::text(text)).await.is_err() {
                return (Ok(Closed::Lost), true);
            }
        }

        let mut last_heard = Instant::now();
        let mut watchdog = tokio::time::interval(QUIET);
        watchdog.reset();
        loop {
            let mut wire = self.manage_lobby();
            for text in wire.drain(..) {
                if sink.send(Message::text(text)).await.is_err() {
                    return (Ok(Closed::Lost), true);
                }
            }
            if self.done() {
                let _ = sink.send(Message::Close(None)).await;
                return (Ok(Closed::Done), true);
            }
            let challenge_at = self.challenge_at;
            tokio::select! {
                msg = stream.next() => {
                    let text = match msg {
                        Some(Ok(Message::Text(t))) => t,
                        Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return (Ok(Closed::Lost), true),
                        Some(Ok(_)) => {
                            last_heard = Instant::now();
                            continue;
                        }
                    };
                    last_heard = Instant::now();
                    match serde_json::from_str::<Value>(text.as_str()) {
                        Ok(v) => wire = self.incoming(v).await,
                        Err(e) => tracing::warn!(error = %e, "the server sent text that is not JSON"),
                    }
                }
                Some(out) = self.out_rx.recv() => {
                    let joined = self.games.get(&out.game_id).is_some_and(|s| s.joined);
                    if joined {
                        let game_id = out.game_id.clone();
                        wire.push(self.request(out.msg.clone(), Sent::Game { game_id, msg: out.msg }));
                    } else {
                        tracing::debug!(game = %out.game_id, "not joined: request dropped");
                    }
                }
                Some(finished) = self.tasks.join_next() => {
                    let game_id = match finished {
                        Ok(id) => id,
                        Err(e) => {
                            tracing::error!(error = %e, "a game task failed");
                            continue;
                        }
                    };
                    if let Some(slot) = self.games.remove(&game_id)
                        && slot.ended
                    {
                        self.summary.games_ended += 1;
                    }
                }
                () = sleep_until(challenge_at.unwrap_or_else(Instant::now)), if challenge_at.is_some() => {
                    self.challenge_at = None;
                }
                _ = watchdog.tick() => {
                    if last_heard.elapsed() > DEAD {
                        tracing::warn!("the server has been silent too long");
                        return (Ok(Closed::Lost), true);
                    }
                    if last_heard.elapsed() >= QUIET {
                        wire.push(self.request(ClientMsg::Ping, Sent::Other));
                    }
                }
            }
            for text in wire {
                if sink.send(Message::text(text)).await.is_err() {
                    return (Ok(Closed::Lost), true);
                }
            }
        }
    }

    /// A request as text with a fresh id, remembered until its reply.
    fn request(&mut self, msg: ClientMsg, sent: Sent) -> String {
        let id = self.next_id;
        self.next_id += 1;
        let mut value = serde_json::to_value(&msg).unwrap_or(Value::Null);
        value["id"] = json!(id);
        self.sent.insert(id, sent);
        value.to_string()
    }

    /// The offer follows capacity, and a challenge is posted when one is due.
    fn manage_lobby(&mut self) -> Vec<String> {
        let mut wire = Vec::new();
        let want_offer = self.config.offer.is_some() && self.has_room();
        if want_offer && !self.offer_posted {
            let offer = self.config.offer.clone().unwrap_or_default();
            wire.push(self.request(ClientMsg::Offer { offer }, Sent::Offer));
            self.offer_posted = true;
            // Challenges that came while the offer was down wait in the lobby.
            wire.push(self.request(ClientMsg::ListSeeks, Sent::ListSeeks));
        } else if !want_offer && self.offer_posted {
            wire.push(self.request(ClientMsg::WithdrawOffer, Sent::Other));
            self.offer_posted = false;
        }
        if let Some(plan) = self.config.challenge.clone() {
            let playing = self
                .games
                .values()
                .any(|s| !s.ended && s.opponent.as_deref() == Some(plan.opponent.as_str()));
            let due = self.challenge_at.is_none_or(|t| t <= Instant::now());
            // Not before `list_games` has answered: a restarted bot may already be
            // playing that opponent.
            let ready = self.games_listed && !self.challenge_open && due;
            if !playing && ready && self.has_room() {
                tracing::info!(opponent = %plan.opponent, "challenging");
                wire.push(self.request(
                    ClientMsg::Challenge {
                        opponent: plan.opponent,
                        settings: plan.settings,
                    },
                    Sent::Challenge,
                ));
                self.challenge_open = true;
            }
        }
        wire
    }

    /// Handles one message from the server; returns requests to send.
    async fn incoming(&mut self, v: Value) -> Vec<String> {
        let mut wire = Vec::new();
        let kind = v["type"].as_str().unwrap_or_default().to_string();
        match kind.as_str() {
            "ack" => self.acked(&v).await,
            "error" => self.error(&v).await,
            "snapshot" => match serde_json::from_value::<ServerMsg>(v) {
                Ok(ServerMsg::Snapshot(s)) => {
                    if let Some(slot) = self.games.get_mut(&s.game_id) {
                        slot.last_seq = Some(s.seq);
                        if s.phase == Phase::Ended {
                            slot.ended = true;
                        }
                        let _ = slot.tx.send(ToGame::Snapshot(s)).await;
                    }
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "a snapshot did not parse"),
            },
            "game_started" => {
                if let Ok(ServerMsg::GameStarted {
                    game_id,
                    black,
                    white,
                    ..
                }) = serde_json::from_value::<ServerMsg>(v)
                {
                    wire.extend(self.game_started(game_id, &black, &white));
                }
            }
            "games" => {
                self.games_listed = true;
                if let Ok(ServerMsg::Games { games, .. }) = serde_json::from_value::<ServerMsg>(v) {
                    for g in games {
                        wire.extend(self.running_game(&g));
                    }
                }
            }
            "challenge_created" => {}
            "challenge_removed" => {
                // Ours was accepted (a game follows), declined or dropped; a refused one
                // is tried again later.
                if v["reason"] != "accepted" && self.challenge_open {
                    self.challenge_open = false;
                    self.challenge_at = Some(Instant::now() + Duration::from_secs(10));
                }
            }
            "challenge_added" => {
                if let Ok(ServerMsg::ChallengeAdded { challenge }) =
                    serde_json::from_value::<ServerMsg>(v)
                {
                    // With our offer up, the server has already accepted a challenge to
                    // us that the offer admits (and refused any other).
                    let for_me = challenge.to.is_some();
                    if !(for_me && self.offer_posted) {
                        wire.extend(self.consider(&challenge));
                    }
                }
            }
            "seeks" => {
                if let Ok(ServerMsg::Seeks { challenges, .. }) =
                    serde_json::from_value::<ServerMsg>(v)
                {
                    for c in &challenges {
                        wire.extend(self.consider(c));
                    }
                }
            }
            "welcome" | "pong" | "kibitz" | "game_listed" | "bots" | "authenticated" => {}
            "closing" => tracing::info!(reason = %v["reason"], "the server is closing"),
            _ => self.game_event(v).await,
        }
        wire
    }

    /// A numbered event of one of our games.
    async fn game_event(&mut self, v: Value) {
        let (Some(game_id), Some(seq)) = (v["game_id"].as_str(), v["seq"].as_u64()) else {
            tracing::debug!(message = %v, "ignored a message");
            return;
        };
        let Some(slot) = self.games.get_mut(game_id) else {
            return;
        };
        slot.last_seq = Some(seq);
        match serde_json::from_value::<EventFrame>(v) {
            Ok(frame) => {
                if matches!(frame.event, GameEvent::GameEnded { .. }) {
                    slot.ended = true;
                }
                let _ = slot.tx.send(ToGame::Event(Box::new(frame))).await;
            }
            Err(e) => tracing::debug!(error = %e, "an event this bot does not know"),
        }
    }

    async fn acked(&mut self, v: &Value) {
        let Some(sent) = v["id"].as_u64().and_then(|id| self.sent.remove(&id)) else {
            return;
        };
        if let Sent::Join { game_id } = sent
            && let Some(slot) = self.games.get_mut(&game_id)
        {
            slot.joined = true;
            let _ = slot.tx.send(ToGame::Joined).await;
        }
    }

    async fn error(&mut self, v: &Value) {
        let code = v["code"].as_str().unwrap_or_default().to_string();
        let message = v["message"].as_str().unwrap_or_default().to_string();
        let Some(sent) = v["id"].as_u64().and_then(|id| self.sent.remove(&id)) else {
            tracing::warn!(%code, %message, "the server reported an error");
            return;
        };
        match sent {
            Sent::Game { game_id, msg } => {
                if let Some(slot) = self.games.get(&game_id) {
                    let _ = slot.tx.send(ToGame::Refused { msg, code, message }).await;
                }
            }
            Sent::Join { game_id } => {
                tracing::warn!(game = %game_id, %code, %message, "could not join");
                if code == "not_found" {
                    // Dropping the sender ends the bridge.
                    if let Some(slot) = self.games.get_mut(&game_id) {
                        slot.ended = true;
                        let (tx, _) = mpsc::channel(1);
                        slot.tx = tx;
                    }
                }
            }
            Sent::Offer => {
                tracing::error!(%code, %message, "the offer was refused (is this a bot account?)");
                // Do not post it again on this connection.
                self.config.offer = None;
            }
            Sent::Challenge => {
                tracing::warn!(%code, %message, "the challenge was refused; trying again later");
                self.challenge_open = false;
                self.challenge_at = Some(Instant::now() + Duration::from_secs(2));
            }
            Sent::ListGames => {
                tracing::warn!(%code, %message, "the server would not list the games");
                self.games_listed = true;
            }
            Sent::ListSeeks | Sent::Other => {
                tracing::warn!(%code, %message, "a request was refused");
            }
        }
    }

    /// A game of ours started: one bridge for it, or a resignation when the bot is full.
    fn game_started(&mut self, game_id: String, black: &UserInfo, white: &UserInfo) -> Vec<String> {
        if self.games.contains_key(&game_id) {
            return Vec::new();
        }
        let me = self.me.as_ref().map(|u| u.id.clone()).unwrap_or_default();
        let opponent = if black.id == me { &white.id } else { &black.id };
        if self
            .config
            .challenge
            .as_ref()
            .is_some_and(|c| &c.opponent == opponent)
        {
            self.challenge_open = false;
        }
        if self.live_games() >= self.config.max_games {
            tracing::warn!(game = %game_id, "a game beyond --max-games: resigning it");
            let text = "This bot is playing as many games as it can; it resigns this one.";
            return vec![
                self.request(
                    ClientMsg::Chat {
                        game_id: game_id.clone(),
                        text: text.into(),
                    },
                    Sent::Other,
                ),
                self.request(ClientMsg::Resign { game_id }, Sent::Other),
            ];
        }
        self.summary.games_started += 1;
        tracing::info!(game = %game_id, %opponent, "game started");
        self.spawn(game_id, Some(opponent.clone()))
    }

    /// A game listed by `list_games` that we play but have no bridge for.
    fn running_game(&mut self, g: &GameSummary) -> Vec<String> {
        let Some(me) = self.me.as_ref().map(|u| u.id.clone()) else {
            return Vec::new();
        };
        let mine = g.black.id == me || g.white.id == me;
        if !mine || g.phase == Phase::Ended || self.games.contains_key(&g.game_id) {
            return Vec::new();
        }
        let opponent = if g.black.id == me {
            &g.white.id
        } else {
            &g.black.id
        };
        tracing::info!(game = %g.game_id, "resuming a running game");
        self.summary.games_started += 1;
        self.spawn(g.game_id.clone(), Some(opponent.clone()))
    }

    fn spawn(&mut self, game_id: String, opponent: Option<String>) -> Vec<String> {
        let (tx, rx) = mpsc::channel(1024);
        let bridge = GameBridge::new(
            game_id.clone(),
            self.config.engine.clone(),
            self.config.untimed_move_limit,
            rx,
            self.out_tx.clone(),
        );
        let id = game_id.clone();
        let span = tracing::info_span!("game", id = %game_id);
        self.tasks.spawn(
            async move {
                bridge.run().await;
                id
            }
            .instrument(span),
        );
        self.games.insert(
            game_id.clone(),
            Slot {
                tx,
                last_seq: None,
                joined: false,
                ended: false,
                opponent,
            },
        );
        vec![self.request(
            ClientMsg::Join {
                game_id: game_id.clone(),
                since_seq: None,
            },
            Sent::Join { game_id },
        )]
    }

    /// A challenge to us, or an open seek when we answer seeks: accept it if the offer
    /// admits it and there is room.
    fn consider(&mut self, c: &Challenge) -> Vec<String> {
        let Some(me) = self.me.as_ref().map(|u| u.id.clone()) else {
            return Vec::new();
        };
        let for_me = c.to.as_deref() == Some(me.as_str());
        let open_seek = c.to.is_none() && self.config.answer_seeks;
        if c.from.id == me || !(for_me || open_seek) {
            return Vec::new();
        }
        let admitted = self
            .config
            .offer
            .as_ref()
            .is_some_and(|o| o.admits(&c.settings).is_ok());
        if admitted && self.has_room() && self.accepting.insert(c.challenge_id.clone()) {
            tracing::info!(challenge = %c.challenge_id, from = %c.from.id, "accepting");
            vec![self.request(
                ClientMsg::Accept {
                    challenge_id: c.challenge_id.clone(),
                    nigiri_seed: None,
                },
                Sent::Other,
            )]
        } else if for_me && !admitted {
            vec![self.request(
                ClientMsg::Decline {
                    challenge_id: c.challenge_id.clone(),
                },
                Sent::Other,
            )]
        } else {
            Vec::new()
        }
    }
}

/// The server URL with `token` in the query.
fn with_token(server: &str, token: &str) -> String {
    let sep = if server.contains('?') { '&' } else { '?' };
    format!("{server}{sep}token={token}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_goes_in_the_query() {
        assert_eq!(with_token("ws://h:1/ws", "t"), "ws://h:1/ws?token=t");
        assert_eq!(
            with_token("ws://h:1/ws?x=1", "t"),
            "ws://h:1/ws?x=1&token=t"
        );
    }
}
