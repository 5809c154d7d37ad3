//! The state every connection and room shares: configuration, the token verifier, the
//! lobby, the registry of running rooms and the store. Rooms are looked up by game id
//! here and nowhere else, so a multi-node registry can later take its place.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use dashmap::DashMap;

use crate::auth::Verifier;
use crate::config::Config;
use crate::fanout::encode;
use crate::lobby::{Lobby, new_id, nigiri};
use crate::protocol::{
    ColorChoice, ErrorCode, GameEvent, GameSummary, HandicapPlacement, NigiriProof, Refusal,
    ServerMsg, UserInfo,
};
use crate::room::{Room, RoomCmd, RoomHandle};
use crate::rules::{self, Color};
use crate::store::{Store, StoreError, StoreWriter};
use crate::time::wall_ms;

pub struct Hub {
    pub config: Config,
    pub verifier: Verifier,
    pub lobby: Lobby,
    pub rooms: DashMap<Arc<str>, RoomHandle>,
    pub store: Arc<dyn Store>,
    pub writer: StoreWriter,
    /// Live games per user id, for `max_games_per_user`.
    live_games: DashMap<String, usize>,
    next_conn: AtomicU64,
    /// Open WebSocket connections.
    pub connections: std::sync::atomic::AtomicUsize,
    /// Flips to true once when the server begins to shut down.
    pub shutdown: tokio::sync::watch::Sender<bool>,
}

impl Hub {
    pub fn new(
        config: Config,
        verifier: Verifier,
        store: Arc<dyn Store>,
        writer: StoreWriter,
    ) -> Hub {
        Hub {
            config,
            verifier,
            lobby: Lobby::default(),
            rooms: DashMap::new(),
            store,
            writer,
            live_games: DashMap::new(),
            next_conn: AtomicU64::new(1),
            connections: std::sync::atomic::AtomicUsize::new(0),
            shutdown: tokio::sync::watch::Sender::new(false),
        }
    }

    /// A number for a new connection, unique in this process.
    pub fn next_conn(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    fn live_count(&self, user: &str) -> usize {
        self.live_games.get(user).map_or(0, |n| *n)
    }

    fn count_game(&self, user: &str, delta: isize) {
        let mut n = self.live_games.entry(user.to_string()).or_default();
        *n = n.saturating_add_signed(delta);
    }

    /// Accepts a seek or challenge: draws colours, places handicap, creates the game
    /// (stored before anyone hears of it) and tells both players and the lobby.
    pub async fn accept(
        self: &Arc<Self>,
        accepter: &UserInfo,
        challenge_id: &str,
        seed: Option<&str>,
    ) -> Result<String, Refusal> {
        let open = self.lobby.take(challenge_id, accepter)?;
        let c = open.challenge.clone();
        let max = self.config.limits.max_games_per_user;
        if let Some(busy) = [accepter, &c.from]
            .into_iter()
            .find(|u| self.live_count(&u.id) >= max)
        {
            let name = busy.name.clone();
            self.lobby.put_back(open);
            return Err(Refusal::new(
                ErrorCode::LimitReached,
                format!("{name} already plays {max} live games, the most this server allows"),
            ));
        }
        let seed = seed.unwrap_or("").chars().take(128).collect::<String>();
        let (challenger_color, nigiri) = match (c.settings.color, open.secret) {
            (ColorChoice::Black, _) => (Color::Black, None),
            (ColorChoice::White, _) => (Color::White, None),
            (ColorChoice::Nigiri, secret) => {
                let secret = secret.unwrap_or_default();
                let color = nigiri::draw(&secret, &seed);
                let proof = NigiriProof {
                    commitment: c.nigiri_commitment.clone().unwrap_or_default(),
                    secret: hex::encode(secret),
                    seed,
                    challenger: color,
                };
                (color, Some(proof))
            }
        };
        let (black, white) = match challenger_color {
            Color::Black => (c.from.clone(), accepter.clone()),
            Color::White => (accepter.clone(), c.from.clone()),
        };
        let s = &c.settings;
        let handicap_stones = if s.handicap >= 2 && s.handicap_placement == HandicapPlacement::Fixed
        {
            rules::fixed_handicap(s.board_size, s.handicap).unwrap_or_default()
        } else {
            Vec::new()
        };
        let game_id = new_id();
        let first = GameEvent::GameCreated {
            settings: Box::new(s.clone()),
            black: black.clone(),
            white: white.clone(),
            handicap_stones,
            nigiri,
            created_at: wall_ms(),
        };
        let room = match Room::create(self.clone(), game_id.clone(), first).await {
            Ok(room) => room,
            Err(e) => {
                self.lobby.put_back(open);
                return Err(e);
            }
        };
        self.rooms.insert(room.game_id.clone(), room);
        self.count_game(&black.id, 1);
        self.count_game(&white.id, 1);
        crate::metrics::live_games(1);
        self.lobby.removed(&c, "accepted");
        let started = encode(&ServerMsg::GameStarted {
            game_id: game_id.clone(),
            black: black.clone(),
            white: white.clone(),
            settings: c.settings.clone(),
        });
        self.lobby.send_to_user(&black.id, &started);
        self.lobby.send_to_user(&white.id, &started);
        if let Some(summary) = self.summary(&game_id).await {
            self.lobby
                .announce(&encode(&ServerMsg::GameListed { game: summary }));
        }
        tracing::info!(game = %game_id, black = %black.id, white = %white.id, "game started");
        Ok(game_id)
    }

    /// A room that ended tells the hub, which frees the players' game slots and tells
    /// the lobby.
    pub fn game_ended(&self, summary: GameSummary) {
        self.count_game(&summary.black.id, -1);
        self.count_game(&summary.white.id, -1);
        crate::metrics::live_games(-1);
        self.lobby
            .announce(&encode(&ServerMsg::GameListed { game: summary }));
    }

    /// The room of a game: running, or rebuilt from the store (a finished game, or one
    /// not yet opened since a restart).
    pub async fn room(self: &Arc<Self>, game_id: &str) -> Result<RoomHandle, Refusal> {
        if let Some(room) = self.rooms.get(game_id) {
            return Ok(room.clone());
        }
        let store = self.store.clone();
        let id = game_id.to_string();
        let events = tokio::task::spawn_blocking(move || store.events(&id))
            .await
            .map_err(|e| {
                Refusal::new(
                    ErrorCode::Unavailable,
                    format!("the store could not be read: {e}"),
                )
            })?
            .map_err(|e| {
                Refusal::new(
                    ErrorCode::Unavailable,
                    format!("the store could not be read: {e}"),
                )
            })?;
        if events.is_empty() {
            return Err(Refusal::new(
                ErrorCode::NotFound,
                format!("no game `{game_id}`"),
            ));
        }
        let room = Room::restore(self.clone(), game_id.to_string(), &events).map_err(|e| {
            tracing::error!(game = %game_id, error = %e, "could not rebuild a game from its log");
            Refusal::new(
                ErrorCode::Unavailable,
                format!("game `{game_id}` could not be rebuilt from its log: {e}"),
            )
        })?;
        Ok(self
            .rooms
            .entry(room.game_id.clone())
            .or_insert(room)
            .clone())
    }

    /// Rebuilds every unfinished game's room at start-up (before serving, so reading
    /// the store synchronously blocks nobody). Returns how many.
    pub fn restore_unfinished(self: &Arc<Self>) -> Result<usize, StoreError> {
        let games = self.store.unfinished_games()?;
        let mut n = 0;
        for (record, events) in games {
            match Room::restore(self.clone(), record.id.clone(), &events) {
                Ok(room) => {
                    self.rooms.insert(room.game_id.clone(), room);
                    self.count_game(&record.black, 1);
                    self.count_game(&record.white, 1);
                    crate::metrics::live_games(1);
                    n += 1;
                }
                Err(e) => {
                    tracing::error!(game = %record.id, error = %e, "could not rebuild a game from its log; left as it is")
                }
            }
        }
        Ok(n)
    }

    /// One running game as the lobby lists it.
    pub async fn summary(&self, game_id: &str) -> Option<GameSummary> {
        let room = self.rooms.get(game_id)?.clone();
        room.ask(|reply| RoomCmd::Summary { reply }).await.ok()
    }

    /// Every running game, newest rooms first is not promised: sorted by id.
    pub async fn list_games(&self) -> Vec<GameSummary> {
        let rooms: Vec<RoomHandle> = self.rooms.iter().map(|r| r.clone()).collect();
        let mut games = Vec::with_capacity(rooms.len());
        for room in rooms {
            if let Ok(s) = room.ask(|reply| RoomCmd::Summary { reply }).await {
                games.push(s);
            }
        }
        games.sort_by(|a, b| a.game_id.cmp(&b.game_id));
        games
    }
}
