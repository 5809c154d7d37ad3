//! The parts every connection shares, wired together once: configuration, the token
//! verifier, the lobby, the registry of running games ([`Registry`]), the game starter
//! ([`Starter`]) and the game-lifecycle bus ([`Lifecycle`]). The hub holds no game logic
//! and no map of its own: it builds the parts, routes what rooms report to the part it
//! concerns, and answers the other nodes of a cluster through them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use crate::accounts::tokens::open::OpenTokens;
use crate::auth::Verifier;
use crate::away::Vacations;
use crate::calendars::Calendars;
use crate::cluster::lobby::Home;
use crate::cluster::{Bus, BusError, Node};
use crate::config::Config;
use crate::correspondence::vacation::Policy;
use crate::lifecycle::{GameNews, Lifecycle};
use crate::lobby::Lobby;
use crate::notify::{Mailing, Notices};
use crate::protocol::{CalledGame, GameSummary, Refusal, UserInfo};
use crate::registry::{Clustered, Local, Placement, Registry};
use crate::room::{RoomContext, RoomNews};
use crate::shutdown::Shutdown;
use crate::standings::Standings;
use crate::starter::Starter;
use crate::store::{Store, StoreError, StoreWriter};
use crate::tournaments::Tournaments;
use crate::tournaments::cluster::Link;
use crate::tournaments::director::Deps;

pub struct Hub {
    pub(crate) config: Config,
    pub(crate) verifier: Verifier,
    pub(crate) lobby: Arc<Lobby>,
    /// Where the running games are, and how to reach one.
    pub(crate) games: Arc<Registry>,
    /// How every game starts, and where its end frees its players' slots.
    pub(crate) starter: Arc<Starter>,
    /// Started, ended, result changed: for any part to subscribe to.
    pub lifecycle: Lifecycle,
    /// The tournaments this node runs.
    pub tournaments: Arc<Tournaments>,
    /// Each account's notices: kept, pushed, mailed.
    pub notices: Arc<Notices>,
    /// Players on vacation from their correspondence games.
    pub vacations: Arc<Vacations>,
    /// Players' time zones and weekend days.
    pub calendars: Calendars,
    next_conn: AtomicU64,
    /// The signal to stop, and the guards of the open connections.
    pub(crate) shutdown: Shutdown,
    /// This node's part in a cluster; None on a single node.
    pub(crate) cluster: Option<Arc<Node>>,
    /// The connections each personal token opened here, which its revocation ends.
    pub(crate) open_tokens: OpenTokens,
}

impl Hub {
    pub fn new(
        config: Config,
        verifier: Verifier,
        store: Arc<dyn Store>,
        writer: StoreWriter,
        cluster: Option<Arc<Node>>,
        mailing: Mailing,
    ) -> Arc<Hub> {
        let lifecycle = Lifecycle::default();
        let standings = Standings::spawn(store.clone(), lifecycle.subscribe());
        let ranks = standings.ranks().clone();
        let lobby = Arc::new(Lobby::new(ranks.clone()));
        let notices = Notices::new(&config, store.clone(), lobby.clone(), mailing);
        notices.listen(lifecycle.subscribe());
        let shutdown = Shutdown::default();
        Arc::new_cyclic(|me: &Weak<Hub>| {
            let hub = me.clone();
            let rooms_ctx = RoomContext {
                relay: cluster.as_ref().map(|node| node.relay()),
                writer,
                store: store.clone(),
                lag: config.clock.lag,
                vacation: Policy::new(&config.correspondence),
                deadline_warn_ms: u64::from(config.correspondence.deadline_warn_hours) * 3_600_000,
                news: Arc::new(move |news| {
                    if let Some(hub) = hub.upgrade() {
                        hub.room_news(news);
                    }
                }),
            };
            let place: Box<dyn Placement> = match &cluster {
                Some(node) => Box::new(Clustered::new(node.clone())),
                None => Box::new(Local),
            };
            let games = Registry::new(rooms_ctx, place, shutdown.signal());
            let vacations = Vacations::start(
                store.clone(),
                Policy::new(&config.correspondence),
                games.clone(),
                notices.clone(),
            );
            let calendars = Calendars::new(store.clone(), games.clone());
            let max_games = config.limits.max_games_per_user;
            let starter =
                Starter::running(lobby.clone(), games.clone(), lifecycle.clone(), max_games);
            let deps = Deps {
                store,
                starter: starter.clone(),
                lifecycle: lifecycle.clone(),
                ranks,
                notices: notices.clone(),
                shutdown: shutdown.signal(),
            };
            let tournaments = Tournaments::new(deps, cluster.as_deref().map(Link::of));
            Hub {
                config,
                verifier,
                lobby,
                games,
                starter,
                lifecycle,
                tournaments,
                notices,
                vacations,
                calendars,
                next_conn: AtomicU64::new(1),
                shutdown,
                cluster,
                open_tokens: OpenTokens::default(),
            }
        })
    }

    /// Joins the lobby, the starter and the lifecycle news to the other nodes of the
    /// cluster on `bus`.
    pub async fn join_cluster(self: &Arc<Hub>, bus: Bus) -> Result<(), BusError> {
        crate::cluster::news::relay(self.lifecycle.clone(), bus.clone()).await?;
        self.tournaments.join_cluster().await?;
        let link = crate::cluster::lobby::start(self.clone(), bus).await?;
        self.starter.link(link);
        Ok(())
    }

    /// A number for a new connection, unique in this process.
    pub fn next_conn(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    /// Open WebSocket connections.
    pub fn open_connections(&self) -> usize {
        self.shutdown.open()
    }

    /// Whether a game has a room here now (a sleeping correspondence game has none).
    pub fn is_awake(&self, game_id: &str) -> bool {
        self.games.is_awake(game_id)
    }

    /// The store, for reads (archive, readiness).
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.games.context().store
    }

    /// The store's writer, which shutdown closes.
    pub fn writer(&self) -> &StoreWriter {
        &self.games.context().writer
    }

    /// Rebuilds every unfinished game's room at start-up, its players' slots counted.
    /// Returns how many.
    pub fn restore_unfinished(&self) -> Result<usize, StoreError> {
        let restored = self.games.restore_unfinished()?;
        self.starter.restored(&restored);
        Ok(restored.len())
    }

    /// Every running game, on every node in a cluster, sorted by id.
    pub async fn list_games(&self) -> Vec<GameSummary> {
        let here = self.ranked_games().await;
        match self.starter.cluster() {
            Some(link) => link.with_games_elsewhere(here).await,
            None => here,
        }
    }

    /// The games with open referee calls that `user` may referee, and the games not over
    /// that name `user` their referee, each sorted by id, on every node in a cluster.
    pub async fn referee_calls(&self, user: &UserInfo) -> (Vec<CalledGame>, Vec<GameSummary>) {
        let here = self.ranked_calls(user).await;
        match self.starter.cluster() {
            Some(link) => link.with_referee_calls_elsewhere(user, here).await,
            None => here,
        }
    }

    /// The games running on this node, as the game list shows them (ranks included).
    async fn ranked_games(&self) -> Vec<GameSummary> {
        let games = self.games.local_games().await;
        games.into_iter().map(|g| self.lobby.ranked(g)).collect()
    }

    /// [`Hub::referee_calls`] of this node's games, ranks included.
    async fn ranked_calls(&self, user: &UserInfo) -> (Vec<CalledGame>, Vec<GameSummary>) {
        let (called, assigned) = self.games.local_referee_calls(user).await;
        let called = called.into_iter().map(|c| CalledGame {
            game: self.lobby.ranked(c.game),
            ..c
        });
        let assigned = assigned.into_iter().map(|g| self.lobby.ranked(g));
        (called.collect(), assigned.collect())
    }

    /// What a room (or a mirror) reports, to the part it concerns.
    fn room_news(&self, news: RoomNews) {
        match news {
            RoomNews::Ended(summary) => self.starter.ended(summary),
            RoomNews::ResultChanged {
                game_id,
                previous,
                result,
            } => {
                tracing::info!(game = %game_id, %previous, %result, "a referee changed a result");
                self.lifecycle.publish(GameNews::ResultChanged {
                    game_id: game_id.to_string(),
                    previous,
                    result,
                });
            }
            RoomNews::YourMove {
                game_id,
                player,
                opponent,
                clock,
                deadline_ms,
                correspondence,
                absent,
            } => {
                if absent {
                    (self.notices).your_move(&game_id, &player, &opponent, &clock);
                }
                if correspondence {
                    self.lifecycle.publish(GameNews::YourMove {
                        game_id: game_id.to_string(),
                        player,
                        deadline_ms,
                    });
                }
            }
            RoomNews::DeadlineNear {
                game_id,
                player,
                opponent,
                deadline_ms,
            } => (self.notices).deadline_near(&game_id, &player, opponent, deadline_ms),
            RoomNews::Replay { of, game_id } => self.starter.clone().replay_soon(of, game_id),
            placed => self.games.placed(placed),
        }
    }
}

impl Home for Hub {
    fn lobby(&self) -> &Lobby {
        &self.lobby
    }

    fn accept<'a>(
        &'a self,
        accepter: &'a UserInfo,
        challenge_id: &'a str,
        seed: Option<&'a str>,
    ) -> BoxFuture<'a, Result<String, Refusal>> {
        self.starter.accept(accepter, challenge_id, seed).boxed()
    }

    fn local_games(&self) -> BoxFuture<'_, Vec<GameSummary>> {
        self.ranked_games().boxed()
    }

    fn local_referee_calls<'a>(
        &'a self,
        user: &'a UserInfo,
    ) -> BoxFuture<'a, (Vec<CalledGame>, Vec<GameSummary>)> {
        self.ranked_calls(user).boxed()
    }

    fn automatch_round(&self) -> BoxFuture<'_, ()> {
        self.starter.automatch_round().boxed()
    }

    fn node_gone<'a>(&'a self, node: &'a str) -> BoxFuture<'a, ()> {
        self.games.node_gone(node).boxed()
    }

    fn stopped(&self) -> BoxFuture<'static, ()> {
        self.shutdown.begun().boxed()
    }
}
