//! The state every connection shares: configuration, the token verifier, the lobby, the
//! store, and the registry of running rooms, which only the hub changes. Rooms see none
//! of it: they get a [`RoomContext`] and send back [`RoomNews`]. Rooms are looked up by
//! game id here and nowhere else, so a multi-node registry can later take its place.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use dashmap::DashMap;
use dashmap::mapref::entry::Entry;

use crate::auth::Verifier;
use crate::cluster::{Node, mirror, owner};
use crate::config::Config;
use crate::fanout::{Outbox, encode};
use crate::lobby::automatch::{BotSeat, Seeker, Wish};
use crate::lobby::{self, Lobby, Open, create, nigiri};
use crate::protocol::{
    CalledGame, Challenge, ColorChoice, ErrorCode, GameSettings, GameSummary, Refusal, ServerMsg,
    UserInfo,
};
use crate::room::{Gone, Prepared, Rejoin, Room, RoomCmd, RoomContext, RoomHandle, RoomNews};
use crate::rules::GameResult;
use crate::standings::{self, Standings};
use crate::store::{Claim, Store, StoreError, StoreWriter};

/// A game just started, for [`Hub::announce`].
struct GameStarted {
    game_id: String,
    black: UserInfo,
    white: UserInfo,
    settings: GameSettings,
}

pub struct Hub {
    pub(crate) config: Config,
    pub(crate) verifier: Verifier,
    pub(crate) lobby: Lobby,
    /// The running rooms, by game id: only the hub adds and removes them.
    rooms: DashMap<Arc<str>, RoomHandle>,
    store: Arc<dyn Store>,
    /// What every room is given (the store, lag settings, news back to this hub).
    rooms_ctx: RoomContext,
    /// Live games per user id, for `max_games_per_user`.
    live_games: DashMap<String, usize>,
    /// The rating task, told of every game that ends.
    standings: Standings,
    next_conn: AtomicU64,
    /// Open WebSocket connections.
    connections: std::sync::atomic::AtomicUsize,
    /// Told when the last open connection ends, for shutdown to wait on.
    none_open: tokio::sync::Notify,
    /// Flips to true once when the server begins to shut down.
    pub(crate) shutdown: tokio::sync::watch::Sender<bool>,
    /// This node's part in a cluster; None on a single node.
    pub(crate) cluster: Option<Arc<Node>>,
    me: Weak<Hub>,
}

impl Hub {
    pub fn new(
        config: Config,
        verifier: Verifier,
        store: Arc<dyn Store>,
        writer: StoreWriter,
        cluster: Option<Arc<Node>>,
    ) -> Arc<Hub> {
        let standings = Standings::spawn(store.clone());
        let lobby = Lobby::new(standings.ranks().clone());
        Arc::new_cyclic(|me: &Weak<Hub>| {
            let hub = me.clone();
            let rooms_ctx = RoomContext {
                relay: cluster.as_ref().map(|node| node.relay()),
                writer,
                store: store.clone(),
                lag: config.clock.lag,
                news: Arc::new(move |news| {
                    if let Some(hub) = hub.upgrade() {
                        hub.room_news(news);
                    }
                }),
            };
            Hub {
                config,
                verifier,
                lobby,
                rooms: DashMap::new(),
                standings,
                store,
                rooms_ctx,
                live_games: DashMap::new(),
                next_conn: AtomicU64::new(1),
                connections: std::sync::atomic::AtomicUsize::new(0),
                none_open: tokio::sync::Notify::new(),
                shutdown: tokio::sync::watch::Sender::new(false),
                cluster,
                me: me.clone(),
            }
        })
        .with_automatch_rounds()
        .with_leases()
    }

    /// In a cluster: renews this node's leases on a thread of their own, so neither busy
    /// workers nor a burst of take-overs here delays them ([`Node::keep_leases`]); stops
    /// here the rooms of games whose leases were lost; and takes over games whose owner
    /// died, on a task of its own.
    fn with_leases(self: Arc<Hub>) -> Arc<Hub> {
        let Some(node) = &self.cluster else {
            return self;
        };
        match node.keep_leases() {
            Ok(mut lost) => {
                let hub = Arc::downgrade(&self);
                tokio::spawn(async move {
                    while let Some(games) = lost.recv().await {
                        let Some(hub) = hub.upgrade() else { return };
                        for game in games {
                            hub.let_go(&game).await;
                        }
                    }
                });
            }
            Err(e) => {
                tracing::error!(error = %e, "the lease renewal thread did not start: this node answers for no game")
            }
        }
        let hub = Arc::downgrade(&self);
        let every = node.lease() / 3;
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut heard = true;
            loop {
                ticks.tick().await;
                let Some(hub) = hub.upgrade() else { return };
                let Some(node) = hub.cluster.clone() else {
                    return;
                };
                if *hub.shutdown.borrow() {
                    return;
                }
                let hears = node.bus.is_connected();
                if hears && !heard {
                    hub.rejoin_mirrors(&node).await;
                }
                heard = hears;
                for game in node.orphans().await {
                    if let Err(e) = hub.take_over(&game).await {
                        tracing::warn!(%game, error = %e, "could not take over a game");
                    }
                }
            }
        });
        self
    }

    /// After this node was cut off from the others (NATS down or out of reach), the
    /// owners of the games it mirrors may have counted its connections gone: each mirror
    /// stops, and its connections join their games again where they run.
    async fn rejoin_mirrors(&self, node: &Node) {
        let mirrors: Vec<RoomHandle> = self
            .rooms
            .iter()
            .filter(|r| !node.owns(r.key()))
            .map(|r| r.clone())
            .collect();
        tracing::info!(
            games = mirrors.len(),
            "back in touch with the other nodes; joining their games again"
        );
        for mirror in mirrors {
            mirror.tell(RoomCmd::Release).await;
        }
    }

    /// Stops the room here of a game whose lease another node took, so its connections
    /// join the game where it runs now. Unless this node has claimed it again since, what
    /// the registry holds for it is that room, or a mirror that replaced it (when the
    /// room stepped aside first), whose connections then join again: harmless.
    async fn let_go(&self, game: &str) {
        if self.cluster.as_ref().is_some_and(|node| node.owns(game)) {
            return;
        }
        if let Some(room) = self.registered(game) {
            tracing::warn!(%game, "another node owns this game now; stopping it here");
            room.tell(RoomCmd::Release).await;
        }
    }

    /// Runs an automatch round every [`ROUND_EVERY`](lobby::automatch::ROUND_EVERY) for as
    /// long as the hub lives, so waiting windows widen and bots get their turn.
    fn with_automatch_rounds(self: Arc<Hub>) -> Arc<Hub> {
        let hub = Arc::downgrade(&self);
        tokio::spawn(async move {
            let mut rounds = tokio::time::interval(lobby::automatch::ROUND_EVERY);
            rounds.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                rounds.tick().await;
                let Some(hub) = hub.upgrade() else { return };
                hub.automatch_round().await;
            }
        });
        self
    }

    /// A number for a new connection, unique in this process.
    pub fn next_conn(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    /// Open WebSocket connections.
    pub fn open_connections(&self) -> usize {
        self.connections.load(Ordering::Acquire)
    }

    /// A WebSocket session began.
    pub(crate) fn connection_opened(&self) {
        self.connections.fetch_add(1, Ordering::AcqRel);
    }

    /// A WebSocket session ended, its leaving recorded.
    pub(crate) fn connection_closed(&self) {
        if self.connections.fetch_sub(1, Ordering::AcqRel) == 1 {
            // A permit if nobody waits yet: the waiter then looks at the count again.
            self.none_open.notify_one();
        }
    }

    /// Returns once no WebSocket session is open: shutdown closes the store only after
    /// the sessions have sent what their last commits made and said goodbye.
    pub async fn connections_closed(&self) {
        while self.open_connections() > 0 {
            self.none_open.notified().await;
        }
    }

    /// The store, for reads (archive, readiness).
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The store's writer, which shutdown closes.
    pub fn writer(&self) -> &StoreWriter {
        &self.rooms_ctx.writer
    }

    /// Takes a live-game slot of `user`'s if they have one left: the check and the count
    /// are one step, so two games accepted at once cannot both take the last slot.
    fn reserve_slot(&self, user: &str, max: usize) -> bool {
        let mut n = self.live_games.entry(user.to_string()).or_default();
        let free = *n < max;
        if free {
            *n += 1;
        }
        free
    }

    fn release_slot(&self, user: &str) {
        if let Some(mut n) = self.live_games.get_mut(user) {
            *n = n.saturating_sub(1);
        }
    }

    /// Takes a slot of each player's, or none.
    fn reserve_slots(&self, players: [&UserInfo; 2]) -> Result<(), Refusal> {
        for (i, user) in players.iter().enumerate() {
            if !self.reserve_slot(&user.id, self.max_games_of(&user.id)) {
                players[..i].iter().for_each(|u| self.release_slot(&u.id));
                return Err(self.no_slot(user));
            }
        }
        Ok(())
    }

    /// Whether both players have a slot free now, taking none: for refusing a game
    /// before anyone is told of it. [`Hub::reserve_slots`] still decides.
    pub fn check_slots(&self, players: [&UserInfo; 2]) -> Result<(), Refusal> {
        match players.into_iter().find(|u| !self.has_free_slot(&u.id)) {
            Some(user) => Err(self.no_slot(user)),
            None => Ok(()),
        }
    }

    fn no_slot(&self, user: &UserInfo) -> Refusal {
        let max = self.max_games_of(&user.id);
        let whose = if max < self.config.limits.max_games_per_user {
            "the most its offer takes"
        } else {
            "the most this server allows"
        };
        Refusal::new(
            ErrorCode::LimitReached,
            format!("{} already plays {max} live games, {whose}", user.name),
        )
    }

    /// The most live games `user` may play at once: the server's limit, or a bot's own
    /// `max_games` while its offer is up, when that is lower.
    fn max_games_of(&self, user: &str) -> usize {
        let max = self.config.limits.max_games_per_user;
        match self.lobby.offer_of(user).and_then(|b| b.offer.max_games) {
            Some(own) => own.min(max),
            None => max,
        }
    }

    /// Whether a bot with an offer plays as many games as the offer says it takes (its
    /// own limit, not the server's): a challenge to it then waits for the bot to accept.
    pub fn bot_is_full(&self, bot: &str) -> bool {
        let own = self.max_games_of(bot) < self.config.limits.max_games_per_user;
        own && !self.has_free_slot(bot)
    }

    /// Accepts a seek or challenge: the game is created on the lobby side (see
    /// [`create`]), then its room registered here and both players and the lobby told.
    /// In a cluster, a challenge posted on another node is accepted there.
    pub async fn accept(
        &self,
        accepter: &UserInfo,
        challenge_id: &str,
        seed: Option<&str>,
    ) -> Result<String, Refusal> {
        if let (Some(home), Some(link)) = (
            self.lobby.others.home_of(challenge_id),
            self.lobby.cluster(),
        ) {
            return link.accept_at(&home, accepter, challenge_id, seed).await;
        }
        let open = self.lobby.take(challenge_id, accepter)?;
        let started = match self.open_game(&open, accepter, seed.unwrap_or("")).await {
            Ok(started) => started,
            Err(refusal) => {
                self.lobby.put_back(open);
                return Err(refusal);
            }
        };
        self.lobby.removed(&open.challenge, "accepted");
        Ok(self.announce(started).await)
    }

    /// Starts the game `open` describes with `accepter`: takes a game slot of each
    /// player's, creates and stores the game, and registers and starts its room. Nobody
    /// is told yet ([`Hub::announce`]); on a refusal nothing changed.
    async fn open_game(
        &self,
        open: &Open,
        accepter: &UserInfo,
        seed: &str,
    ) -> Result<GameStarted, Refusal> {
        let players = [accepter, &open.challenge.from];
        self.reserve_slots(players)?;
        let ctx = &self.rooms_ctx;
        let game = match create::create(&ctx.writer, ctx.lag, open, accepter, seed).await {
            Ok(game) => game,
            Err(refusal) => {
                players.iter().for_each(|u| self.release_slot(&u.id));
                return Err(refusal);
            }
        };
        let started = GameStarted {
            game_id: game.id.clone(),
            black: game.live.black.clone(),
            white: game.live.white.clone(),
            settings: open.challenge.settings.clone(),
        };
        self.open_room(game).await;
        Ok(started)
    }

    /// Registers and starts the room of a game just stored (its players' slots taken);
    /// in a cluster, under this node's lease (if the store cannot give one, the game
    /// waits for a node to take it over, as after a crash).
    async fn open_room(&self, game: crate::room::NewGame) {
        let prepared = Room::open(self.rooms_ctx.clone(), game);
        crate::metrics::live_games(1);
        let Some(node) = self.cluster.clone() else {
            self.rooms
                .insert(prepared.handle().game_id.clone(), prepared.handle().clone());
            prepared.start();
            return;
        };
        let game_id = prepared.handle().game_id.clone();
        let _one_at_a_time = node.claiming.lock().await;
        match node.claim(&game_id).await {
            Ok(Claim::Ours(fence)) => {
                self.start_here(&node, prepared.fenced(fence));
            }
            // Another node's sweep for games without an owner took it between its
            // creation here and this claim: it runs there, and is mirrored here on demand.
            Ok(Claim::Held { node: other }) => {
                tracing::info!(game = %game_id, %other, "a new game was taken by another node first")
            }
            Err(e) => {
                tracing::error!(game = %game_id, error = %e, "no lease for a new game; it waits to be taken over")
            }
        }
    }

    /// Tells both players (`game_started`) and the lobby (`game_listed`) of a game
    /// [`Hub::open_game`] started; returns its id.
    async fn announce(&self, game: GameStarted) -> String {
        let GameStarted {
            game_id,
            black,
            white,
            settings,
        } = game;
        let started = encode(&ServerMsg::GameStarted {
            game_id: game_id.clone(),
            black: black.clone(),
            white: white.clone(),
            settings,
        });
        self.lobby.send_to_user(&black.id, &started);
        self.lobby.send_to_user(&white.id, &started);
        if let Some(summary) = self.summary(&game_id).await {
            self.lobby
                .announce(&encode(&ServerMsg::GameListed { game: summary }));
        }
        tracing::info!(game = %game_id, black = %black.id, white = %white.id, "game started");
        game_id
    }

    /// A referee's `replay` ruling on game `of` (committed): the new game `id` with the
    /// same players and settings, starting at once (a scheduled start is not repeated).
    pub async fn replay(&self, of: &str, id: String) -> Result<String, Refusal> {
        let store = self.store.clone();
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
            .and_then(|r| serde_json::from_str::<crate::protocol::EventFrame>(&r.payload).ok());
        let Some(crate::protocol::EventFrame {
            event:
                crate::protocol::GameEvent::GameCreated {
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
        let settings = crate::protocol::GameSettings {
            start_at: None,
            ..*settings
        };
        let players = [&black, &white];
        self.reserve_slots(players)?;
        let ctx = &self.rooms_ctx;
        let game = match create::start(
            &ctx.writer,
            ctx.lag,
            id,
            [black.clone(), white.clone()],
            &settings,
            None,
        )
        .await
        {
            Ok(game) => game,
            Err(refusal) => {
                players.iter().for_each(|u| self.release_slot(&u.id));
                return Err(refusal);
            }
        };
        let started = GameStarted {
            game_id: game.id.clone(),
            black: game.live.black.clone(),
            white: game.live.white.clone(),
            settings,
        };
        self.open_room(game).await;
        Ok(self.announce(started).await)
    }

    /// Puts `user` in the automatch queue, replacing a request of theirs still waiting;
    /// [`Hub::automatch_round`] pairs them.
    pub async fn automatch(&self, user: &UserInfo, wish: Wish) -> Result<(), Refusal> {
        lobby::check_rated(wish.rated, [user, user])?;
        let max = self.config.limits.max_games_per_user;
        if !self.has_free_slot(&user.id) {
            return Err(Refusal::new(
                ErrorCode::LimitReached,
                format!("you already play {max} live games"),
            ));
        }
        let store = self.store.clone();
        let id = user.id.clone();
        let rating = tokio::task::spawn_blocking(move || standings::overall_rating(&*store, &id))
            .await
            .map_err(|e| Refusal::new(ErrorCode::Unavailable, e.to_string()))?
            .map_err(|e| {
                Refusal::new(
                    ErrorCode::Unavailable,
                    format!("your rating could not be read: {e}"),
                )
            })?;
        let seeker = Seeker {
            user: user.clone(),
            rating,
            wish,
            since: tokio::time::Instant::now(),
        };
        match self.lobby.cluster() {
            Some(link) => link.automatch(&self.lobby, seeker).await,
            None => {
                self.lobby.automatch.put(seeker);
                Ok(())
            }
        }
    }

    /// One automatch round: pairs who can be paired now and starts their games. A game
    /// that cannot be started (the store failing) puts its players back in the queue.
    pub async fn automatch_round(&self) {
        if self.lobby.automatch.is_empty() {
            return;
        }
        if let Some(link) = self.lobby.cluster()
            && !link.leads()
        {
            return link.hand_over(&self.lobby).await;
        }
        let bots = self.bot_seats().await;
        let made = self.lobby.automatch.round(
            tokio::time::Instant::now(),
            &bots,
            |id| self.has_free_slot(id),
            |a, b| self.lobby.is_blocked(a, b),
        );
        for (pairing, seekers) in made {
            let (secret, commitment) = match pairing.settings.color {
                ColorChoice::Nigiri => {
                    let (secret, commitment) = nigiri::commit();
                    (Some(secret), Some(commitment))
                }
                _ => (None, None),
            };
            let open = Open {
                challenge: Challenge {
                    challenge_id: lobby::new_id(),
                    from: pairing.first,
                    to: Some(pairing.second.id.clone()),
                    settings: pairing.settings,
                    created_at: crate::time::wall_ms(),
                    from_rank: None,
                    nigiri_commitment: commitment,
                },
                secret,
            };
            match self
                .open_game(&open, &pairing.second, &lobby::new_id())
                .await
            {
                Ok(started) => {
                    seekers
                        .iter()
                        .for_each(|s| self.lobby.automatch_over(&s.user.id));
                    self.announce(started).await;
                }
                Err(refusal) => {
                    tracing::warn!(%refusal, "an automatch game could not start; its players wait on");
                    self.lobby.automatch.put_back(seekers);
                }
            }
        }
    }

    /// The bots online with standing offers, with their overall ratings (a bot whose
    /// rating cannot be read now is left out of this round).
    async fn bot_seats(&self) -> Vec<BotSeat> {
        let listings = self.lobby.bots();
        if listings.is_empty() {
            return Vec::new();
        }
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || {
            listings
                .into_iter()
                .filter_map(|listing| {
                    let rating = standings::overall_rating(&*store, &listing.user.id).ok()?;
                    Some(BotSeat { listing, rating })
                })
                .collect()
        })
        .await
        .unwrap_or_default()
    }

    fn has_free_slot(&self, user: &str) -> bool {
        let max = self.max_games_of(user);
        self.live_games.get(user).is_none_or(|n| *n < max)
    }

    /// What a room tells the registry.
    fn room_news(&self, news: RoomNews) {
        match news {
            RoomNews::Ended(summary) => {
                self.release_slot(&summary.black.id);
                self.release_slot(&summary.white.id);
                crate::metrics::live_games(-1);
                self.standings.game_ended(&summary.game_id);
                let game = self.lobby.ranked(summary);
                self.lobby
                    .announce(&encode(&ServerMsg::GameListed { game }));
            }
            RoomNews::Closed {
                game_id,
                room,
                fence,
            } => {
                self.forget(&game_id, room);
                self.disown(&game_id, fence);
            }
            RoomNews::Moved {
                game_id,
                room,
                fence,
                members,
            } => {
                self.forget(&game_id, room);
                self.disown(&game_id, fence);
                self.rejoin(&game_id, members);
            }
            RoomNews::ResultChanged {
                game_id,
                previous,
                result,
            } => self.result_changed(&game_id, previous, result),
        }
    }

    /// The one place a finished game's result changes after the fact (a referee's
    /// `change_result` or `correct_count`, already committed): whatever depends on
    /// results (ratings) is brought up to date from here.
    pub fn result_changed(&self, game_id: &str, previous: GameResult, result: GameResult) {
        tracing::info!(game = %game_id, %previous, %result, "a referee changed a result");
        self.standings.result_changed();
    }

    /// A node went (silent, restarted or stopped: see `cluster::members`): the rooms
    /// here stop counting its connections as players or spectators.
    pub(crate) async fn node_gone(&self, node: &str) {
        let node: Arc<str> = node.into();
        let rooms: Vec<RoomHandle> = self.rooms.iter().map(|r| r.clone()).collect();
        for room in rooms {
            let node = node.clone();
            room.tell(RoomCmd::LeaveNode { node }).await;
        }
    }

    /// Removes room `room` of a game from the registry, if it is still the one there.
    pub(crate) fn forget(&self, game_id: &str, room: u64) {
        self.rooms.remove_if(game_id, |_, h| h.instance() == room);
    }

    /// In a cluster, gives up the lease of a game whose room (under `fence`) stopped
    /// here.
    fn disown(&self, game_id: &str, fence: Option<u64>) {
        if let (Some(node), Some(fence)) = (self.cluster.clone(), fence) {
            let game = game_id.to_owned();
            tokio::spawn(async move { node.disown(&game, fence).await });
        }
    }

    /// The room (or mirror) the registry holds for a game now, if any.
    pub(crate) fn registered(&self, game_id: &str) -> Option<RoomHandle> {
        self.rooms.get(game_id).map(|r| r.clone())
    }

    /// The rooms that run on this node (in a cluster, not the mirrors of games that run
    /// elsewhere: their owners list them).
    fn running_here(&self) -> Vec<RoomHandle> {
        let owns = |game: &str| self.cluster.as_ref().is_none_or(|node| node.owns(game));
        self.rooms
            .iter()
            .filter(|r| owns(r.key()))
            .map(|r| r.clone())
            .collect()
    }

    /// A room of a game that runs on this node (not a mirror of one elsewhere).
    fn local_room(&self, game_id: &str) -> Option<RoomHandle> {
        let node = self.cluster.as_ref()?;
        node.owns(game_id)
            .then(|| self.rooms.get(game_id).map(|r| r.clone()))
            .flatten()
    }

    /// Joins connections again to a game that stopped running where they were joined
    /// (its node went, or it moved here), from just after what each was sent; tries
    /// until the game runs somewhere again, a lease and a little more at most.
    pub(crate) fn rejoin(&self, game_id: &str, members: Vec<Rejoin>) {
        if members.is_empty() || *self.shutdown.borrow() {
            return;
        }
        let Some(hub) = self.me.upgrade() else { return };
        let patience = self
            .cluster
            .as_ref()
            .map_or(std::time::Duration::ZERO, |n| n.lease() * 3)
            + std::time::Duration::from_secs(5);
        for member in members {
            let (hub, game) = (hub.clone(), game_id.to_owned());
            tokio::spawn(async move {
                let until = tokio::time::Instant::now() + patience;
                loop {
                    let (outbox, user) = (member.outbox.clone(), member.user.clone());
                    let joined = hub.join(&game, outbox, user, Some(member.since_seq)).await;
                    match joined {
                        Ok(_) => return,
                        Err(refusal) if refusal.code != ErrorCode::Unavailable => {
                            tracing::info!(%game, %refusal, "a connection could not follow its game");
                            return mirror::unfollowed(&member.outbox, &game, &refusal);
                        }
                        Err(refusal)
                            if tokio::time::Instant::now() > until || *hub.shutdown.borrow() =>
                        {
                            tracing::warn!(%game, "a game found no node to run on; a connection stops following it");
                            return mirror::unfollowed(&member.outbox, &game, &refusal);
                        }
                        Err(_) => tokio::time::sleep(std::time::Duration::from_millis(200)).await,
                    }
                }
            });
        }
    }

    /// Joins a connection to a game, live or finished. A room can stop (its game over,
    /// everyone gone) while a join is on its way; the join then goes to a room rebuilt
    /// from the store, so it never falls between the live room and the archive.
    pub async fn join(
        &self,
        game_id: &str,
        outbox: Outbox,
        user: Option<UserInfo>,
        since_seq: Option<u64>,
    ) -> Result<RoomHandle, Refusal> {
        let ask = |room: RoomHandle| {
            let (outbox, user) = (outbox.clone(), user.clone());
            async move {
                let joined = room
                    .ask(|reply| RoomCmd::Join {
                        outbox,
                        user,
                        since_seq,
                        reply,
                    })
                    .await;
                (room, joined)
            }
        };
        let (room, joined) = ask(self.room(game_id).await?).await;
        let (room, joined) = match joined {
            Err(Gone) => {
                self.forget(game_id, room.instance());
                ask(self.room(game_id).await?).await
            }
            Ok(joined) => (room, Ok(joined)),
        };
        joined??;
        Ok(room)
    }

    /// The room of a game: running, or rebuilt from the store (a finished game, or one
    /// not yet opened since a restart).
    pub async fn room(&self, game_id: &str) -> Result<RoomHandle, Refusal> {
        if let Some(room) = self.rooms.get(game_id)
            && !room.is_closed()
        {
            return Ok(room.clone());
        }
        if let Some(node) = self.cluster.clone() {
            return self.cluster_room(&node, game_id).await;
        }
        let prepared = self.rebuild(game_id).await?;
        Ok(self.register(prepared))
    }

    /// In a cluster, the room of a game: run here if nobody else does (its lease taken
    /// first, so its log is final when it is read), else a mirror of the owner's.
    async fn cluster_room(&self, node: &Arc<Node>, game_id: &str) -> Result<RoomHandle, Refusal> {
        let _one_at_a_time = node.claiming.lock().await;
        if let Some(room) = self.rooms.get(game_id)
            && !room.is_closed()
        {
            return Ok(room.clone());
        }
        match node.claim(game_id).await {
            Ok(Claim::Ours(fence)) => Ok(self.run_here(node, game_id, fence).await?.0),
            Ok(Claim::Held { .. }) => {
                let game: Arc<str> = game_id.into();
                let mirror = mirror::open(
                    node.bus.clone(),
                    self.me.clone(),
                    self.store.clone(),
                    game.clone(),
                )
                .await
                .map_err(|e| Refusal::new(ErrorCode::Unavailable, e.to_string()))?;
                self.rooms.insert(game, mirror.clone());
                Ok(mirror)
            }
            Err(StoreError::UnknownGame { .. }) => Err(Refusal::new(
                ErrorCode::NotFound,
                format!("no game `{game_id}`"),
            )),
            Err(e) => Err(Refusal::new(
                ErrorCode::Unavailable,
                format!("the store could not be reached: {e}"),
            )),
        }
    }

    /// Runs the room of a game whose lease this node just took (under `fence`),
    /// rebuilt from its log, in place of whatever the registry held for it (returned).
    async fn run_here(
        &self,
        node: &Arc<Node>,
        game_id: &str,
        fence: u64,
    ) -> Result<(RoomHandle, Option<RoomHandle>), Refusal> {
        let prepared = match self.rebuild(game_id).await {
            Ok(prepared) => prepared.fenced(fence),
            Err(refusal) => {
                node.disown(game_id, fence).await;
                return Err(refusal);
            }
        };
        tracing::info!(game = %game_id, fence, "took the game over");
        // Before the room's first frame, which the relay publishes after this.
        node.took_over(game_id);
        Ok(self.start_here(node, prepared))
    }

    /// Registers and starts a room this node owns, answering the other nodes for it.
    fn start_here(&self, node: &Arc<Node>, prepared: Prepared) -> (RoomHandle, Option<RoomHandle>) {
        let room = prepared.handle().clone();
        let replaced = self.rooms.insert(room.game_id.clone(), room.clone());
        tokio::spawn(owner::serve(node.bus.clone(), room.clone()));
        prepared.start();
        (room, replaced)
    }

    /// Takes over a game whose owner died or let it go, if nobody else has: its room
    /// runs here from now on, and a mirror of it here stops (its connections join the
    /// room here).
    pub async fn take_over(&self, game_id: &str) -> Result<(), Refusal> {
        let Some(node) = self.cluster.clone() else {
            return Ok(());
        };
        let _one_at_a_time = node.claiming.lock().await;
        if self.local_room(game_id).is_some() {
            return Ok(());
        }
        let claim = node
            .claim(game_id)
            .await
            .map_err(|e| Refusal::new(ErrorCode::Unavailable, e.to_string()))?;
        if let Claim::Ours(fence) = claim {
            let (_, replaced) = self.run_here(&node, game_id, fence).await?;
            if let Some(mirror) = replaced {
                mirror.tell(RoomCmd::Release).await;
            }
        }
        Ok(())
    }

    /// In a cluster, stops every room this node runs and gives up their leases, so the
    /// other nodes take them over at once (a graceful stop).
    pub async fn hand_over(&self) {
        let Some(node) = self.cluster.clone() else {
            return;
        };
        let rooms = self.running_here();
        for room in &rooms {
            room.tell(RoomCmd::Release).await;
        }
        let stopped = futures_util::future::join_all(rooms.iter().map(RoomHandle::closed));
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), stopped).await;
        node.release_all().await;
    }

    /// A game's room rebuilt from its log, not yet running.
    async fn rebuild(&self, game_id: &str) -> Result<Prepared, Refusal> {
        let store = self.store.clone();
        let id = game_id.to_string();
        let unreadable = |e: &dyn std::fmt::Display| {
            Refusal::new(
                ErrorCode::Unavailable,
                format!("the store could not be read: {e}"),
            )
        };
        let events = tokio::task::spawn_blocking(move || store.events(&id))
            .await
            .map_err(|e| unreadable(&e))?
            .map_err(|e| unreadable(&e))?;
        if events.is_empty() {
            return Err(Refusal::new(
                ErrorCode::NotFound,
                format!("no game `{game_id}`"),
            ));
        }
        let prepared = Room::restore(self.rooms_ctx.clone(), game_id.to_string(), &events)
            .map_err(|e| {
                tracing::error!(game = %game_id, error = %e, "could not rebuild a game from its log");
                Refusal::new(
                    ErrorCode::Unavailable,
                    format!("game `{game_id}` could not be rebuilt from its log: {e}"),
                )
            })?;
        Ok(prepared)
    }

    /// Registers a rebuilt room and starts it, unless another request rebuilt the same
    /// game first: then that room is the one, and this one never runs.
    fn register(&self, prepared: Prepared) -> RoomHandle {
        let handle = prepared.handle().clone();
        match self.rooms.entry(handle.game_id.clone()) {
            Entry::Occupied(winner) => winner.get().clone(),
            Entry::Vacant(slot) => {
                slot.insert(handle.clone());
                prepared.start();
                handle
            }
        }
    }

    /// Rebuilds every unfinished game's room at start-up (before serving, so reading
    /// the store synchronously blocks nobody). Returns how many.
    pub fn restore_unfinished(&self) -> Result<usize, StoreError> {
        let games = self.store.unfinished_games()?;
        let mut n = 0;
        for (record, events) in games {
            match Room::restore(self.rooms_ctx.clone(), record.id.clone(), &events) {
                Ok(prepared) => {
                    for user in [&record.black, &record.white] {
                        *self.live_games.entry(user.clone()).or_default() += 1;
                    }
                    crate::metrics::live_games(1);
                    self.register(prepared);
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
        let summary = room.ask(|reply| RoomCmd::Summary { reply }).await.ok()?;
        Some(self.lobby.ranked(summary))
    }

    /// The games with open referee calls that `user` may referee, and the games not over
    /// that name `user` their referee, each sorted by id (only unfinished games hold
    /// calls or need a referee, and every one of those has a running room), on every
    /// node in a cluster.
    pub async fn referee_calls(&self, user: &UserInfo) -> (Vec<CalledGame>, Vec<GameSummary>) {
        let here = self.local_referee_calls(user).await;
        match self.lobby.cluster() {
            Some(link) => link.with_referee_calls_elsewhere(user, here).await,
            None => here,
        }
    }

    /// [`Hub::referee_calls`] of the rooms on this node.
    pub async fn local_referee_calls(
        &self,
        user: &UserInfo,
    ) -> (Vec<CalledGame>, Vec<GameSummary>) {
        let rooms = self.running_here();
        let (mut games, mut assigned) = (Vec::new(), Vec::new());
        for room in rooms {
            let user = user.clone();
            if let Ok((called, mine)) = room.ask(|reply| RoomCmd::Calls { user, reply }).await {
                // The summaries as the game list shows them, ranks included.
                games.extend(called.map(|c| CalledGame {
                    game: self.lobby.ranked(c.game),
                    ..c
                }));
                assigned.extend(mine.map(|g| self.lobby.ranked(g)));
            }
        }
        games.sort_by(|a, b| a.game.game_id.cmp(&b.game.game_id));
        assigned.sort_by(|a, b| a.game_id.cmp(&b.game_id));
        (games, assigned)
    }

    /// Every running game, on every node in a cluster, sorted by id.
    pub async fn list_games(&self) -> Vec<GameSummary> {
        let here = self.local_games().await;
        match self.lobby.cluster() {
            Some(link) => link.with_games_elsewhere(here).await,
            None => here,
        }
    }

    /// The games running on this node, sorted by id.
    pub async fn local_games(&self) -> Vec<GameSummary> {
        let rooms = self.running_here();
        let mut games = Vec::with_capacity(rooms.len());
        for room in rooms {
            if let Ok(s) = room.ask(|reply| RoomCmd::Summary { reply }).await {
                games.push(self.lobby.ranked(s));
            }
        }
        games.sort_by(|a, b| a.game_id.cmp(&b.game_id));
        games
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{GameSettings, Role};
    use crate::room::Action;
    use crate::store::{SqliteStore, SyncMode};

    fn user(id: &str) -> UserInfo {
        UserInfo {
            id: id.to_string(),
            name: id.to_string(),
            role: Role::Player,
        }
    }

    #[tokio::test]
    async fn rooms_restored_at_once_are_one_and_it_stays_registered() {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = Config {
            data_dir: dir.path().to_path_buf(),
            ..Config::default()
        };
        let store: Arc<dyn Store> =
            Arc::new(SqliteStore::open(&dir.path().join("t.db"), SyncMode::Normal).expect("store"));
        let writer = StoreWriter::spawn(store.clone(), 16, std::time::Duration::ZERO);
        let verifier = Verifier::new(&config.auth, &config.data_dir).expect("verifier");
        let hub = Hub::new(config, verifier, store, writer, None);
        let (alice, bob) = (user("alice"), user("bob"));
        let seek = hub
            .lobby
            .post(&alice, None, GameSettings::default(), 5)
            .expect("a seek");
        let id = hub
            .accept(&bob, &seek.challenge_id, None)
            .await
            .expect("a game");
        // Nobody has joined: the resignation ends the game and its room closes.
        let live = hub.room(&id).await.expect("the live room");
        live.ask(|reply| RoomCmd::Act {
            user: alice.clone(),
            action: Action::Resign,
            lag_ms: 0,
            reply,
        })
        .await
        .expect("an answer")
        .expect("a resignation");
        while hub.rooms.contains_key(id.as_str()) {
            tokio::task::yield_now().await;
        }
        // Eight requests rebuild the finished game at once: one room wins.
        let restores = (0..8).map(|_| hub.room(&id));
        let rooms = futures_util::future::join_all(restores).await;
        let winner = rooms[0].as_ref().expect("a room").instance();
        assert!(
            rooms
                .iter()
                .all(|r| r.as_ref().ok().map(RoomHandle::instance) == Some(winner))
        );
        let (outbox, _inbox) = Outbox::new(1, 16, 1 << 20);
        hub.join(&id, outbox, None, None).await.expect("joined");
        // The rooms that lost never ran, so none closed and took the winner's entry.
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        let registered = hub.rooms.get(id.as_str()).map(|r| r.instance());
        assert_eq!(registered, Some(winner));
    }
}
