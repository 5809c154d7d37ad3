//! The registry of running rooms: rooms are looked up by game id here and nowhere else.
//! Where a game runs is the [`Placement`]'s call: every game here on a single node
//! ([`Local`]), or each on the node that holds its lease in a cluster ([`Clustered`]:
//! claim, lease, mirror, hand-over, take-over). Rooms and mirrors report back through
//! the one news channel of their [`RoomContext`]; the registry hears what concerns it
//! ([`Registry::placed`]) and holds nothing above it.

mod cluster;
mod local;
mod waker;

use std::sync::{Arc, Weak};
use std::time::Duration;

use dashmap::DashMap;
use dashmap::mapref::entry::Entry;
use futures_util::future::BoxFuture;

pub use cluster::Clustered;
pub use local::Local;

use crate::fanout::Outbox;
use crate::protocol::{CalledGame, ErrorCode, GameSummary, Refusal, UserInfo};
use crate::room::{
    Gone, NewGame, Prepared, Rejoin, Room, RoomCmd, RoomContext, RoomHandle, RoomNews,
};
use crate::store::{GameRecord, StoreError};

/// Where games run, and what holding them costs: the part of the registry that differs
/// between one node and a cluster.
pub trait Placement: Send + Sync {
    /// The room of a game that has none running in the registry: rebuilt from its log
    /// here, or in a cluster (its lease claimed first) a mirror of the owner's.
    fn place<'a>(
        &'a self,
        registry: &'a Registry,
        game_id: &'a str,
    ) -> BoxFuture<'a, Result<RoomHandle, Refusal>>;
    /// Registers and starts the room of a game just stored (in a cluster, under this
    /// node's lease).
    fn open<'a>(&'a self, registry: &'a Registry, prepared: Prepared) -> BoxFuture<'a, ()>;
    /// A room of this node stopped under `fence`: its lease goes.
    fn disown(&self, game_id: &str, fence: Option<u64>);
    /// Wakes a sleeping correspondence game that is due (the waker's call): its room
    /// rebuilt here, unless one runs (in a cluster, anywhere: its owner's timer sees to
    /// it). Whether it was rebuilt here.
    fn wake<'a>(
        &'a self,
        registry: &'a Registry,
        game_id: &'a str,
    ) -> BoxFuture<'a, Result<bool, Refusal>>;
    /// Whether the registered room of a game runs here (not a mirror of one elsewhere).
    fn runs_here(&self, game_id: &str) -> bool;
    /// Stops every room here and hands their games to the other nodes (a graceful stop).
    fn hand_over<'a>(&'a self, registry: &'a Registry) -> BoxFuture<'a, ()>;
    /// How long a connection whose game stopped where it was joined tries to join it
    /// again (the game may need a lease's time to run somewhere else).
    fn patience(&self) -> Duration;
    /// Starts what keeps the placement current for as long as the registry lives.
    fn keep(&self, registry: Weak<Registry>);
}

pub struct Registry {
    /// The running rooms (and mirrors), by game id.
    rooms: DashMap<Arc<str>, RoomHandle>,
    /// What every room is given (the store, lag settings, news back up).
    ctx: RoomContext,
    place: Box<dyn Placement>,
    /// Flips to true once when the server begins to shut down: connections then stop
    /// following games that stopped.
    stopping: tokio::sync::watch::Receiver<bool>,
    /// Told whenever a room stops: the waker of sleeping correspondence games looks at
    /// the deadline index again.
    slept: Arc<tokio::sync::Notify>,
    me: Weak<Registry>,
}

impl Registry {
    pub fn new(
        ctx: RoomContext,
        place: Box<dyn Placement>,
        stopping: tokio::sync::watch::Receiver<bool>,
    ) -> Arc<Registry> {
        let registry = Arc::new_cyclic(|me| Registry {
            rooms: DashMap::new(),
            ctx,
            place,
            stopping,
            slept: Arc::default(),
            me: me.clone(),
        });
        registry.place.keep(Arc::downgrade(&registry));
        registry
    }

    /// What every room is given.
    pub fn context(&self) -> &RoomContext {
        &self.ctx
    }

    fn stopping(&self) -> bool {
        *self.stopping.borrow()
    }

    /// Registers and starts the room of a game just stored.
    pub async fn open(&self, game: NewGame) {
        let prepared = Room::open(self.ctx.clone(), game);
        self.place.open(self, prepared).await;
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
    /// not yet opened since a restart), or in a cluster a mirror of its owner's.
    pub async fn room(&self, game_id: &str) -> Result<RoomHandle, Refusal> {
        match self.running(game_id) {
            Some(room) => Ok(room),
            None => self.place.place(self, game_id).await,
        }
    }

    /// The registered room of a game, unless it stopped.
    fn running(&self, game_id: &str) -> Option<RoomHandle> {
        let room = self.rooms.get(game_id)?;
        (!room.is_closed()).then(|| room.clone())
    }

    /// A game's room rebuilt from its log, not yet running.
    async fn rebuild(&self, game_id: &str) -> Result<Prepared, Refusal> {
        let store = self.ctx.store.clone();
        let id = game_id.to_string();
        let unreadable = |e: &dyn std::fmt::Display| {
            Refusal::new(
                ErrorCode::Unavailable,
                format!("the store could not be read: {e}"),
            )
        };
        let read = tokio::task::spawn_blocking(move || {
            Ok::<_, StoreError>((store.events(&id)?, store.plans(&id)?))
        });
        let (events, plans) = read
            .await
            .map_err(|e| unreadable(&e))?
            .map_err(|e| unreadable(&e))?;
        if events.is_empty() {
            return Err(Refusal::new(
                ErrorCode::NotFound,
                format!("no game `{game_id}`"),
            ));
        }
        Room::restore(self.ctx.clone(), game_id.to_string(), &events, plans).map_err(|e| {
            tracing::error!(game = %game_id, error = %e, "could not rebuild a game from its log");
            Refusal::new(
                ErrorCode::Unavailable,
                format!("game `{game_id}` could not be rebuilt from its log: {e}"),
            )
        })
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

    /// Registers `room` for its game in place of whatever was there (returned).
    fn replace(&self, room: RoomHandle) -> Option<RoomHandle> {
        self.rooms.insert(room.game_id.clone(), room)
    }

    /// Rebuilds every unfinished game's room at start-up (before serving, so reading
    /// the store synchronously blocks nobody). Returns the records of those rebuilt.
    pub fn restore_unfinished(&self) -> Result<Vec<GameRecord>, StoreError> {
        let games = self.ctx.store.unfinished_games()?;
        let mut restored = Vec::new();
        for (record, events) in games {
            let plans = self.ctx.store.plans(&record.id)?;
            match Room::restore(self.ctx.clone(), record.id.clone(), &events, plans) {
                Ok(prepared) => {
                    self.register(prepared);
                    restored.push(record);
                }
                Err(e) => {
                    tracing::error!(game = %record.id, error = %e, "could not rebuild a game from its log; left as it is")
                }
            }
        }
        Ok(restored)
    }

    /// A running game as its room sums it up (ranks not filled in).
    pub async fn summary(&self, game_id: &str) -> Option<GameSummary> {
        let room = self.rooms.get(game_id)?.clone();
        room.ask(|reply| RoomCmd::Summary { reply }).await.ok()
    }

    /// The games running on this node, sorted by id (ranks not filled in).
    pub async fn local_games(&self) -> Vec<GameSummary> {
        let rooms = self.running_here();
        let mut games = Vec::with_capacity(rooms.len());
        for room in rooms {
            if let Ok(s) = room.ask(|reply| RoomCmd::Summary { reply }).await {
                games.push(s);
            }
        }
        games.sort_by(|a, b| a.game_id.cmp(&b.game_id));
        games
    }

    /// The games on this node with open referee calls that `user` may referee, and those
    /// not over that name `user` their referee, each sorted by id (ranks not filled in).
    /// Only unfinished games hold calls or need a referee, and each has a running room.
    pub async fn local_referee_calls(
        &self,
        user: &UserInfo,
    ) -> (Vec<CalledGame>, Vec<GameSummary>) {
        let (mut games, mut assigned) = (Vec::new(), Vec::new());
        for room in self.running_here() {
            let user = user.clone();
            if let Ok((called, mine)) = room.ask(|reply| RoomCmd::Calls { user, reply }).await {
                games.extend(called);
                assigned.extend(mine);
            }
        }
        games.sort_by(|a, b| a.game.game_id.cmp(&b.game.game_id));
        assigned.sort_by(|a, b| a.game_id.cmp(&b.game_id));
        (games, assigned)
    }

    /// Stops every room here and hands their games to the other nodes (in a cluster).
    pub async fn hand_over(&self) {
        self.place.hand_over(self).await;
    }

    /// What a room (or a mirror) says of where it runs: it stopped, or its game moved.
    pub fn placed(&self, news: RoomNews) {
        let (game_id, room, fence, members) = match news {
            RoomNews::Closed {
                game_id,
                room,
                fence,
            } => (game_id, room, fence, Vec::new()),
            RoomNews::Moved {
                game_id,
                room,
                fence,
                members,
            } => (game_id, room, fence, members),
            RoomNews::Ended(_)
            | RoomNews::ResultChanged { .. }
            | RoomNews::Replay { .. }
            | RoomNews::YourMove { .. }
            | RoomNews::DeadlineNear { .. } => {
                return;
            }
        };
        self.forget(&game_id, room);
        self.slept.notify_one();
        self.place.disown(&game_id, fence);
        self.rejoin(&game_id, members);
    }

    /// A node went (silent, restarted or stopped: see `cluster::members`): the rooms
    /// here stop counting its connections as players or spectators.
    pub async fn node_gone(&self, node: &str) {
        let node: Arc<str> = node.into();
        let rooms: Vec<RoomHandle> = self.rooms.iter().map(|r| r.clone()).collect();
        for room in rooms {
            let node = node.clone();
            room.tell(RoomCmd::LeaveNode { node }).await;
        }
    }

    /// Removes room `room` of a game from the registry, if it is still the one there.
    fn forget(&self, game_id: &str, room: u64) {
        self.rooms.remove_if(game_id, |_, h| h.instance() == room);
    }

    /// Whether a room (or a mirror) of the game runs here: a sleeping correspondence
    /// game has none.
    pub fn is_awake(&self, game_id: &str) -> bool {
        self.running(game_id).is_some()
    }

    /// The room (or mirror) the registry holds for a game now, if any.
    pub fn registered(&self, game_id: &str) -> Option<RoomHandle> {
        self.rooms.get(game_id).map(|r| r.clone())
    }

    /// The rooms that run on this node (in a cluster, not the mirrors of games that run
    /// elsewhere: their owners list them).
    /// How many rooms run on this node (mirrors left out).
    pub fn rooms_running(&self) -> usize {
        let rooms = self.rooms.iter();
        rooms.filter(|r| self.place.runs_here(r.key())).count()
    }

    fn running_here(&self) -> Vec<RoomHandle> {
        self.registered_where(true)
    }

    /// The rooms registered here that run elsewhere (mirrors).
    fn mirrors(&self) -> Vec<RoomHandle> {
        self.registered_where(false)
    }

    /// The rooms registered here whose game runs here (`here`) or elsewhere.
    fn registered_where(&self, here: bool) -> Vec<RoomHandle> {
        self.rooms
            .iter()
            .filter(|r| self.place.runs_here(r.key()) == here)
            .map(|r| r.clone())
            .collect()
    }

    /// Joins connections again to a game that stopped running where they were joined
    /// (its node went, or it moved here), from just after what each was sent; tries
    /// until the game runs somewhere again, a lease and a little more at most.
    fn rejoin(&self, game_id: &str, members: Vec<Rejoin>) {
        if members.is_empty() || self.stopping() {
            return;
        }
        let Some(registry) = self.me.upgrade() else {
            return;
        };
        let patience = self.place.patience() + Duration::from_secs(5);
        for member in members {
            let (registry, game) = (registry.clone(), game_id.to_owned());
            tokio::spawn(async move {
                let until = tokio::time::Instant::now() + patience;
                loop {
                    let (outbox, user) = (member.outbox.clone(), member.user.clone());
                    let joined = registry
                        .join(&game, outbox, user, Some(member.since_seq))
                        .await;
                    match joined {
                        Ok(_) => return,
                        Err(refusal) if refusal.code != ErrorCode::Unavailable => {
                            tracing::info!(%game, %refusal, "a connection could not follow its game");
                            return crate::cluster::mirror::unfollowed(
                                &member.outbox,
                                &game,
                                &refusal,
                            );
                        }
                        Err(refusal)
                            if tokio::time::Instant::now() > until || registry.stopping() =>
                        {
                            tracing::warn!(%game, "a game found no node to run on; a connection stops following it");
                            return crate::cluster::mirror::unfollowed(
                                &member.outbox,
                                &game,
                                &refusal,
                            );
                        }
                        Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
                    }
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;

    use super::*;
    use crate::lobby::create::{self, Seating};
    use crate::protocol::{GameSettings, Role};
    use crate::store::{SqliteStore, Store, StoreWriter, SyncMode};

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
        let store: Arc<dyn Store> =
            Arc::new(SqliteStore::open(&dir.path().join("t.db"), SyncMode::Normal).expect("store"));
        let writer = StoreWriter::spawn(store.clone(), 16, Duration::ZERO);
        // The rooms' news reaches the registry, as the hub routes it.
        let me: Arc<OnceLock<Weak<Registry>>> = Arc::default();
        let news_to = me.clone();
        let ctx = RoomContext {
            writer: writer.clone(),
            store,
            lag: Default::default(),
            vacation: Default::default(),
            deadline_warn_ms: 0,
            news: Arc::new(move |news| {
                if let Some(registry) = news_to.get().and_then(Weak::upgrade) {
                    registry.placed(news);
                }
            }),
            relay: None,
        };
        let (_stop, stopping) = tokio::sync::watch::channel(false);
        let registry = Registry::new(ctx, Box::new(Local), stopping);
        let _ = me.set(Arc::downgrade(&registry));
        let (alice, bob) = (user("alice"), user("bob"));
        let seating = Seating {
            id: "g1".into(),
            players: [alice.clone(), bob],
            settings: GameSettings::default(),
            nigiri: None,
        };
        let game = create::store(registry.context(), seating)
            .await
            .expect("a game");
        registry.open(game).await;
        let id = "g1";
        // Nobody has joined: the resignation ends the game and its room closes.
        let live = registry.room(id).await.expect("the live room");
        live.ask(|reply| RoomCmd::Act {
            user: alice.clone(),
            action: crate::protocol::GameAction::Resign {},
            lag_ms: 0,
            reply,
        })
        .await
        .expect("an answer")
        .expect("a resignation");
        while registry.rooms.contains_key(id) {
            tokio::task::yield_now().await;
        }
        // Eight requests rebuild the finished game at once: one room wins.
        let restores = (0..8).map(|_| registry.room(id));
        let rooms = futures_util::future::join_all(restores).await;
        let winner = rooms[0].as_ref().expect("a room").instance();
        assert!(
            rooms
                .iter()
                .all(|r| r.as_ref().ok().map(RoomHandle::instance) == Some(winner))
        );
        let (outbox, _inbox) = Outbox::new(1, 16, 1 << 20);
        registry.join(id, outbox, None, None).await.expect("joined");
        // The rooms that lost never ran, so none closed and took the winner's entry.
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        let registered = registry.rooms.get(id).map(|r| r.instance());
        assert_eq!(registered, Some(winner));
    }
}
