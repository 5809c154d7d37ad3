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
    Challenge, ClientMsg, ErrorCode, EventFrame, GameAction, GameEvent, GameSummary, LobbyMsg,
    Phase, Request, RequestId, ServerFrame, ServerMsg, TournamentAction, UserInfo, decode_server,
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
    Game { game_id: String, action: GameAction },
    Join { game_id: String },
    Accept { challenge_id: String },
    Offer,
    Challenge,
    ListGames,
    ListSeeks,
    Register,
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
    /// Accepts awaiting their reply, and games accepted whose `game_started` has not
    /// come yet: each takes a slot, so the bot never accepts past `max_games`.
    accepts_in_flight: HashSet<String>,
    starting: HashSet<String>,
    /// When to list the lobby again for challenges that wait for the bot.
    relist_at: Option<Instant>,
    /// The tournament of `config.tournament` has us as a player (asked again on each
    /// connection until it has).
    registered: bool,
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
            accepts_in_flight: HashSet::new(),
            starting: HashSet::new(),
            relist_at: None,
            registered: false,
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
        // An accept lost with the connection may have started a game: `list_games`
        // finds it on the next connection.
        self.accepts_in_flight.clear();
        self.starting.clear();
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

    /// Slots taken: games played, and games accepted that have not started yet.
    fn taken(&self) -> usize {
        self.live_games() + self.accepts_in_flight.len() + self.starting.len()
    }

    fn has_room(&self) -> bool {
        self.taken() < self.config.max_games && !self.enough_started()
    }

    /// One connection, until it drops or the work is done. Also says whether the server
    /// logged the bot in (then the next reconnect starts with a short backoff).
    async fn session(&mut self, socket: Socket) -> (Result<Closed, BotError>, bool) {
        let (mut sink, mut stream) = socket.split();
        let welcome = match tokio::time::timeout(Duration::from_secs(15), stream.next()).await {
            Ok(Some(Ok(Message::Text(t)))) => decode_server(t.as_str()).ok(),
            _ => None,
        };
        let me = match welcome {
            Some(ServerFrame::Msg(ServerMsg::Welcome { user: Some(me), .. })) => me,
            Some(ServerFrame::Msg(ServerMsg::Welcome { user: None, .. })) => {
                return (Err(BotError::NotLoggedIn), false);
            }
            Some(ServerFrame::Msg(ServerMsg::Error {
                code: ErrorCode::Unauthorized,
                message,
                ..
            })) => return (Err(BotError::Unauthorized(message)), false),
            _ => return (Ok(Closed::Lost), false),
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
                ClientMsg::game(&game_id, GameAction::Join { since_seq }),
                Sent::Join { game_id },
            ));
        }
        // Games that started while we were away, or before this process started.
        wire.push(self.request(LobbyMsg::ListGames {}.into(), Sent::ListGames));
        wire.extend(self.register());
        if self.config.answer_seeks {
            wire.push(self.request(LobbyMsg::WatchLobby {}.into(), Sent::Other));
        }
        if self.config.offer.is_none() || !self.has_room() {
            // (With an offer to post, the lobby is listed right after it.)
            wire.push(self.request(LobbyMsg::ListSeeks {}.into(), Sent::ListSeeks));
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
            let relist_at = self.relist_at;
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
                    match decode_server(text.as_str()) {
                        Ok(frame) => wire = self.incoming(frame).await,
                        Err(e) => tracing::warn!(error = %e, "the server sent a frame that does not parse"),
                    }
                }
                Some(out) = self.out_rx.recv() => {
                    let joined = self.games.get(&out.game_id).is_some_and(|s| s.joined);
                    if joined {
                        let msg = ClientMsg::game(&out.game_id, out.action.clone());
                        let sent = Sent::Game { game_id: out.game_id, action: out.action };
                        wire.push(self.request(msg, sent));
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
                () = sleep_until(relist_at.unwrap_or_else(Instant::now)), if relist_at.is_some() => {
                    self.relist_at = None;
                    if self.has_room() {
                        wire.push(self.request(LobbyMsg::ListSeeks {}.into(), Sent::ListSeeks));
                    }
                }
                _ = watchdog.tick() => {
                    if last_heard.elapsed() > DEAD {
                        tracing::warn!("the server has been silent too long");
                        return (Ok(Closed::Lost), true);
                    }
                    if last_heard.elapsed() >= QUIET {
                        wire.push(self.request(LobbyMsg::Ping {}.into(), Sent::Other));
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
        self.sent.insert(id, sent);
        let request = Request {
            id: Some(RequestId::Number(id)),
            msg,
        };
        // Our own values, strings and numbers only: serializing cannot fail.
        serde_json::to_string(&request).unwrap_or_default()
    }

    /// Enters the tournament we are to play in, unless it has us already. Its games
    /// then come as any game does, with `game_started` when a round is published.
    fn register(&mut self) -> Option<String> {
        let entry = self
            .config
            .tournament
            .clone()
            .filter(|_| !self.registered)?;
        let action = TournamentAction::Register {
            rank: entry.rank,
            club: String::new(),
            country: String::new(),
        };
        let msg = ClientMsg::Tournament {
            tournament_id: entry.id,
            action,
        };
        Some(self.request(msg, Sent::Register))
    }

    /// The offer follows capacity, and a challenge is posted when one is due.
    fn manage_lobby(&mut self) -> Vec<String> {
        let mut wire = Vec::new();
        let want_offer = self.config.offer.is_some() && self.has_room();
        if want_offer && !self.offer_posted {
            let mut offer = self.config.offer.clone().unwrap_or_default();
            // The server then matches no challenge past our free slots, even two that
            // arrive together before we could withdraw the offer.
            let max = self.config.max_games;
            offer.max_games = Some(offer.max_games.map_or(max, |m| m.min(max)));
            wire.push(self.request(LobbyMsg::Offer { offer }.into(), Sent::Offer));
            self.offer_posted = true;
            // Challenges that came while the offer was down wait in the lobby.
            wire.push(self.request(LobbyMsg::ListSeeks {}.into(), Sent::ListSeeks));
        } else if !want_offer && self.offer_posted {
            wire.push(self.request(LobbyMsg::WithdrawOffer {}.into(), Sent::Other));
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
                wire.push(
                    self.request(
                        LobbyMsg::Challenge {
                            opponent: plan.opponent,
                            settings: plan.settings,
                        }
                        .into(),
                        Sent::Challenge,
                    ),
                );
                self.challenge_open = true;
            }
        }
        wire
    }

    /// Handles one frame from the server; returns requests to send.
    async fn incoming(&mut self, frame: ServerFrame) -> Vec<String> {
        let mut wire = Vec::new();
        let msg = match frame {
            ServerFrame::Msg(msg) => msg,
            ServerFrame::Event(frame) => {
                self.game_event(frame).await;
                return wire;
            }
            ServerFrame::Unknown { kind, game_id, seq } => {
                // A newer server's event still counts towards the game's numbering.
                if let (Some(slot), Some(seq)) = (game_id.and_then(|g| self.games.get_mut(&g)), seq)
                {
                    slot.last_seq = Some(seq);
                }
                tracing::debug!(%kind, "ignored a frame of a type this bot does not know");
                return wire;
            }
        };
        match msg {
            ServerMsg::Ack { id, game_id, .. } => self.acked(id, game_id).await,
            ServerMsg::Error {
                id, code, message, ..
            } => self.error(id, code, message).await,
            ServerMsg::Snapshot(s) => {
                if let Some(slot) = self.games.get_mut(&s.game_id) {
                    slot.last_seq = Some(s.seq);
                    if s.phase == Phase::Ended {
                        slot.ended = true;
                    }
                    let _ = slot.tx.send(ToGame::Snapshot(s)).await;
                }
            }
            ServerMsg::GameStarted {
                game_id,
                black,
                white,
                ..
            } => wire.extend(self.game_started(game_id, &black, &white)),
            ServerMsg::Games { games, .. } => {
                self.games_listed = true;
                for g in games {
                    wire.extend(self.running_game(&g));
                }
            }
            ServerMsg::ChallengeRemoved { reason, .. } => {
                // Ours was accepted (a game follows), declined or dropped; a refused one
                // is tried again later.
                if reason != "accepted" && self.challenge_open {
                    self.challenge_open = false;
                    self.challenge_at = Some(Instant::now() + Duration::from_secs(10));
                }
            }
            ServerMsg::ChallengeAdded { challenge } => {
                // With our offer up, the server has already accepted a challenge to
                // us that the offer admits (and refused any other), unless it found us
                // full: then the challenge waits, and a look at the lobby shortly finds it.
                let for_me = challenge.to.is_some();
                if !(for_me && self.offer_posted) {
                    wire.extend(self.consider(&challenge));
                } else if self.has_room() && self.relist_at.is_none() {
                    self.relist_at = Some(Instant::now() + Duration::from_secs(1));
                }
            }
            ServerMsg::Seeks { challenges, .. } => {
                for c in &challenges {
                    wire.extend(self.consider(c));
                }
            }
            ServerMsg::Closing { reason } => tracing::info!(%reason, "the server is closing"),
            ServerMsg::Welcome { .. }
            | ServerMsg::Pong { .. }
            | ServerMsg::Authenticated { .. }
            | ServerMsg::Bots { .. }
            | ServerMsg::ChallengeCreated { .. }
            | ServerMsg::GameListed { .. }
            | ServerMsg::RefereeCalls { .. }
            | ServerMsg::Tournament { .. }
            | ServerMsg::RegistrationChanged { .. }
            | ServerMsg::RoundPaired { .. }
            | ServerMsg::RoundStarted { .. }
            | ServerMsg::BoardResult { .. }
            | ServerMsg::StandingsChanged { .. }
            | ServerMsg::AppealChanged { .. }
            | ServerMsg::SetupChanged { .. }
            | ServerMsg::ByeGiven { .. }
            | ServerMsg::ReportFiled { .. }
            | ServerMsg::Reports { .. }
            | ServerMsg::Mutes { .. }
            | ServerMsg::Kibitz { .. }
            | ServerMsg::Notices { .. }
            | ServerMsg::Notice { .. }
            | ServerMsg::UnreadNotices { .. }
            | ServerMsg::NotificationSettings { .. }
            | ServerMsg::VacationStatus { .. }
            | ServerMsg::CorrespondenceGames { .. }
            | ServerMsg::Calendar { .. } => {}
        }
        wire
    }

    /// A numbered event of one of our games.
    async fn game_event(&mut self, frame: EventFrame) {
        let Some(slot) = self.games.get_mut(&frame.game_id) else {
            return;
        };
        slot.last_seq = Some(frame.seq);
        if matches!(frame.event, GameEvent::GameEnded { .. }) {
            slot.ended = true;
        }
        let _ = slot.tx.send(ToGame::Event(Box::new(frame))).await;
    }

    async fn acked(&mut self, id: Option<RequestId>, started: Option<String>) {
        let Some(sent) = self.take_sent(id) else {
            return;
        };
        match sent {
            Sent::Join { game_id } => {
                if let Some(slot) = self.games.get_mut(&game_id) {
                    slot.joined = true;
                    let _ = slot.tx.send(ToGame::Joined).await;
                }
            }
            Sent::Register => {
                tracing::info!("registered for the tournament");
                self.registered = true;
            }
            Sent::Accept { challenge_id } => {
                self.accepts_in_flight.remove(&challenge_id);
                // The slot stays taken until the game's `game_started` (if not come yet).
                if let Some(game_id) = started
                    && !self.games.contains_key(&game_id)
                {
                    self.starting.insert(game_id);
                }
            }
            _ => {}
        }
    }

    /// The request a reply answers (the bot numbers its requests).
    fn take_sent(&mut self, id: Option<RequestId>) -> Option<Sent> {
        match id? {
            RequestId::Number(n) => self.sent.remove(&n),
            RequestId::Text(_) => None,
        }
    }

    async fn error(&mut self, id: Option<RequestId>, code: ErrorCode, message: String) {
        let code_name = code.as_str();
        let Some(sent) = self.take_sent(id) else {
            tracing::warn!(code = code_name, %message, "the server reported an error");
            return;
        };
        match sent {
            Sent::Game { game_id, action } => {
                if let Some(slot) = self.games.get(&game_id) {
                    let refused = ToGame::Refused {
                        action,
                        code,
                        message,
                    };
                    let _ = slot.tx.send(refused).await;
                }
            }
            Sent::Join { game_id } => {
                tracing::warn!(game = %game_id, code = code_name, %message, "could not join");
                if code == ErrorCode::NotFound {
                    // Dropping the sender ends the bridge.
                    if let Some(slot) = self.games.get_mut(&game_id) {
                        slot.ended = true;
                        let (tx, _) = mpsc::channel(1);
                        slot.tx = tx;
                    }
                }
            }
            Sent::Accept { challenge_id } => {
                self.accepts_in_flight.remove(&challenge_id);
                if code == ErrorCode::LimitReached {
                    // The server has not yet counted a game of ours as ended: try again.
                    tracing::info!(challenge = %challenge_id, %message, "no slot yet; trying again");
                    self.accepting.remove(&challenge_id);
                    self.relist_at = Some(Instant::now() + Duration::from_secs(1));
                } else {
                    tracing::info!(challenge = %challenge_id, code = code_name, %message, "the accept was refused");
                }
            }
            Sent::Offer => {
                tracing::error!(code = code_name, %message, "the offer was refused (is this a bot account?)");
                // Do not post it again on this connection.
                self.config.offer = None;
            }
            Sent::Challenge => {
                tracing::warn!(code = code_name, %message, "the challenge was refused; trying again later");
                self.challenge_open = false;
                self.challenge_at = Some(Instant::now() + Duration::from_secs(2));
            }
            Sent::ListGames => {
                tracing::warn!(code = code_name, %message, "the server would not list the games");
                self.games_listed = true;
            }
            Sent::Register if code == ErrorCode::AlreadyRegistered => self.registered = true,
            Sent::Register => {
                // Closed, full, outside its ranks: the operator must see it; a later
                // connection asks again (registration may not have opened yet).
                tracing::error!(code = code_name, %message, "the tournament refused the registration");
            }
            Sent::ListSeeks | Sent::Other => {
                tracing::warn!(code = code_name, %message, "a request was refused");
            }
        }
    }

    /// A game of ours started: one bridge for it.
    fn game_started(&mut self, game_id: String, black: &UserInfo, white: &UserInfo) -> Vec<String> {
        self.starting.remove(&game_id);
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
            // Only a server that ignores the offer's `max_games`, or another process on
            // this account, starts one more: the person was told the game started, so
            // it is played (one more engine) rather than resigned at move 0.
            tracing::warn!(game = %game_id, "a game beyond --max-games: playing it anyway");
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
            ClientMsg::game(&game_id, GameAction::Join { since_seq: None }),
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
            self.accepts_in_flight.insert(c.challenge_id.clone());
            vec![
                self.request(
                    LobbyMsg::Accept {
                        challenge_id: c.challenge_id.clone(),
                        nigiri_seed: None,
                    }
                    .into(),
                    Sent::Accept {
                        challenge_id: c.challenge_id.clone(),
                    },
                ),
            ]
        } else if for_me && !admitted {
            vec![
                self.request(
                    LobbyMsg::Decline {
                        challenge_id: c.challenge_id.clone(),
                    }
                    .into(),
                    Sent::Other,
                ),
            ]
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
