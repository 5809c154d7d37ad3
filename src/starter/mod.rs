//! The one way a game starts, whoever starts it (an accepted seek or challenge, an
//! automatch pairing, a referee's replay, and next a tournament round): a live-game slot
//! of each player's ([`slots`]), the game created and stored ([`create`]), its room
//! opened in the registry, the players and the lobby told, and `Started` published on
//! the game-lifecycle bus. When a game ends its slots come back here, and `Ended` goes
//! out on the bus.

pub mod automatch;
mod post;
pub mod slots;

use std::sync::{Arc, OnceLock};

use crate::cluster::lobby::Link;
use crate::fanout::encode;
use crate::lifecycle::{GameNews, Lifecycle};
use crate::lobby::Lobby;
use crate::lobby::create::{self, Seating};
use crate::protocol::{
    ErrorCode, EventFrame, GameEvent, GameSummary, Refusal, ServerMsg, UserInfo,
};
use crate::registry::Registry;
use crate::store::GameRecord;
use slots::Slots;

pub struct Starter {
    lobby: Arc<Lobby>,
    registry: Arc<Registry>,
    lifecycle: Lifecycle,
    pub slots: Slots,
    /// The way to the other nodes, set once at start in a cluster: a challenge held by
    /// another node is accepted there, and automatch pairs on the leader.
    link: OnceLock<Link>,
}

impl Starter {
    /// The starter, its automatch rounds running.
    pub fn running(
        lobby: Arc<Lobby>,
        registry: Arc<Registry>,
        lifecycle: Lifecycle,
        max_games_per_user: usize,
    ) -> Arc<Starter> {
        let starter = Arc::new(Starter {
            slots: Slots::new(max_games_per_user, lobby.clone()),
            lobby,
            registry,
            lifecycle,
            link: OnceLock::new(),
        });
        automatch::keep_pairing(Arc::downgrade(&starter));
        starter
    }

    /// Joins the starter to the other nodes (once, at start).
    pub fn link(&self, link: Link) {
        let _ = self.link.set(link);
    }

    /// The way to the other nodes, in a cluster.
    pub fn cluster(&self) -> Option<&Link> {
        self.link.get()
    }

    /// Starts the game `seating` describes: takes a slot of each player's, creates and
    /// stores the game, opens its room, then (after `opened`, for what must be said
    /// first) tells both players (`game_started`) and the lobby (`game_listed`) and
    /// publishes `Started`. Returns the game's id; on a refusal nothing changed.
    pub async fn start(&self, seating: Seating, opened: impl FnOnce()) -> Result<String, Refusal> {
        let [black, white] = seating.players.clone();
        let settings = seating.settings.clone();
        self.slots.reserve([&black, &white])?;
        let ctx = self.registry.context();
        let game = match create::store(ctx, seating).await {
            Ok(game) => game,
            Err(refusal) => {
                self.slots.release(&black.id);
                self.slots.release(&white.id);
                return Err(refusal);
            }
        };
        let game_id = game.id.clone();
        self.registry.open(game).await;
        crate::metrics::live_games(1);
        opened();
        let started = encode(&ServerMsg::GameStarted {
            game_id: game_id.clone(),
            black: black.clone(),
            white: white.clone(),
            settings: settings.clone(),
        });
        self.lobby.send_to_user(&black.id, &started);
        self.lobby.send_to_user(&white.id, &started);
        if let Some(summary) = self.registry.summary(&game_id).await {
            let game = self.lobby.ranked(summary);
            self.lobby
                .announce(&encode(&ServerMsg::GameListed { game }));
        }
        tracing::info!(game = %game_id, black = %black.id, white = %white.id, "game started");
        self.lifecycle.publish(GameNews::Started {
            game_id: game_id.clone(),
            black,
            white,
            settings,
        });
        Ok(game_id)
    }

    /// Accepts a seek or challenge, starting its game. In a cluster, a challenge posted
    /// on another node is accepted there.
    pub async fn accept(
        &self,
        accepter: &UserInfo,
        challenge_id: &str,
        seed: Option<&str>,
    ) -> Result<String, Refusal> {
        if let (Some(home), Some(link)) = (self.lobby.others.home_of(challenge_id), self.cluster())
        {
            return link.accept_at(&home, accepter, challenge_id, seed).await;
        }
        let open = self.lobby.take(challenge_id, accepter)?;
        let seating = Seating::accepted(&open, accepter, seed.unwrap_or(""));
        let accepted = || self.lobby.removed(&open.challenge, "accepted");
        let started = self.start(seating, accepted).await;
        if started.is_err() {
            self.lobby.put_back(open);
        }
        started
    }

    /// [`Starter::replay`] in a task of its own, so the room that reported the ruling
    /// does not wait on the new game; a failure is logged (the ruling stands).
    pub fn replay_soon(self: Arc<Self>, of: Arc<str>, id: String) {
        tokio::spawn(async move {
            if let Err(refusal) = self.replay(&of, id).await {
                tracing::error!(game = %of, %refusal, "a replay ruling stands, but its game did not start");
            }
        });
    }

    /// A referee's `replay` ruling on game `of` (committed): the new game `id` with the
    /// same players and settings, starting at once (a scheduled start is not repeated).
    pub async fn replay(&self, of: &str, id: String) -> Result<String, Refusal> {
        let store = self.registry.context().store.clone();
        let old = of.to_string();
        let unavailable = |e: &dyn std::fmt::Display| {
            Refusal::new(
                ErrorCode::Unavailable,
                format!("the ruling stands, but the replay could not be created: {e}"),
            )
        };
        let first = tokio::task::spawn_blocking(move || store.events_in(&old, 1..2))
            .await
            .map_err(|e| unavailable(&e))?
            .map_err(|e| unavailable(&e))?;
        let created = first
            .first()
            .and_then(|r| serde_json::from_str::<EventFrame>(&r.payload).ok());
        let Some(EventFrame {
            event:
                GameEvent::GameCreated {
                    settings,
                    black,
                    white,
                    ..
                },
            ..
        }) = created
        else {
            return Err(unavailable(&"its first event is unreadable"));
        };
        let seating = Seating {
            id,
            players: [black, white],
            settings: crate::protocol::GameSettings {
                start_at: None,
                ..*settings
            },
            nigiri: None,
        };
        self.start(seating, || {}).await
    }

    /// A game ended (committed): its players' slots are free, the lobby lists it over,
    /// and `Ended` goes out on the bus.
    pub fn ended(&self, summary: GameSummary) {
        self.slots.release(&summary.black.id);
        self.slots.release(&summary.white.id);
        crate::metrics::live_games(-1);
        let game = self.lobby.ranked(summary.clone());
        self.lobby
            .announce(&encode(&ServerMsg::GameListed { game }));
        self.lifecycle.publish(GameNews::Ended(summary));
    }

    /// Counts the games rebuilt at start-up as live.
    pub fn restored(&self, games: &[GameRecord]) {
        for record in games {
            self.slots.count(&record.black);
            self.slots.count(&record.white);
            crate::metrics::live_games(1);
        }
    }
}
