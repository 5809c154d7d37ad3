//! Several nodes acting as one server (docs/ARCHITECTURE.md §8): games owned through
//! leases with fencing numbers in the shared store ([`crate::store::Leases`]), commands
//! forwarded to a game's owner ([`owner`], [`mirror`]) and its frames relayed to every
//! node over NATS ([`relay`]), the lobby shared by every node ([`lobby`], with who is
//! alive in [`members`]), the game-lifecycle news of every node ([`news`]), and the
//! jobs one node does for all under a lease of their own ([`singleton`]).

pub mod automatch;
pub mod bus;
pub mod lobby;
pub mod lobby_wire;
pub mod members;
pub mod mirror;
pub mod news;
pub mod numbers;
pub mod owner;
pub mod relay;
mod renewal;
pub mod singleton;
pub mod wire;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use dashmap::DashMap;

pub use bus::{Bus, BusError};

use crate::config::{ClusterConfig, is_plain_name};
use crate::room::Relay;
use crate::store::{Claim, Leases, StoreError};

/// The games this node owns and when it last renewed their leases: a node that cannot
/// say it renewed a game's lease within a lease (it was paused, or cut off from the
/// store) must not answer for it, since the lease may have passed to another node.
pub struct Tenure {
    /// The games this node owns, with the fencing numbers it owns them by.
    owned: DashMap<Arc<str>, u64>,
    base: Instant,
    /// Milliseconds after `base` of the start of the last renewal that succeeded.
    at_ms: AtomicU64,
    lease_ms: u64,
}

impl Tenure {
    fn new(lease_ms: u64) -> Tenure {
        Tenure {
            owned: DashMap::new(),
            base: Instant::now(),
            at_ms: AtomicU64::new(0),
            lease_ms,
        }
    }

    /// Whether this node owns `game` under `fence` by a lease known to run still. The
    /// number matters: a room that has not yet stopped after this node claimed its game
    /// again (a newer room, rebuilt from the store) holds an older number, and its state
    /// may be behind the game's.
    pub fn holds(&self, game: &str, fence: u64) -> bool {
        self.fresh() && self.owned.get(game).is_some_and(|f| *f == fence)
    }

    /// Forgets `game` if this node still owns it under `fence` (and not under a newer
    /// claim); whether it did.
    fn forget(&self, game: &str, fence: u64) -> bool {
        let forgotten = self.owned.remove_if(game, |_, f| *f == fence).is_some();
        if forgotten {
            crate::metrics::owned_games(-1);
        }
        forgotten
    }

    fn mark(&self, started: Instant) {
        let ms = started.duration_since(self.base).as_millis() as u64;
        self.at_ms.fetch_max(ms, Ordering::Relaxed);
    }

    /// Whether the leases held at the last renewal still run.
    fn fresh(&self) -> bool {
        let now = self.base.elapsed().as_millis() as u64;
        now.saturating_sub(self.at_ms.load(Ordering::Relaxed)) < self.lease_ms
    }
}

/// The file in the data dir that keeps a generated node id across restarts.
const NODE_ID_FILE: &str = "node-id";

/// This node's part in the cluster: its bus, its leases, and what it hears of the others.
pub struct Node {
    /// The node's id: the owner the store's leases name.
    id: String,
    /// Its bus, named by the id and this process's incarnation (`<id>#<random>`): the
    /// connections of a node that crashed and came back under the same id are another
    /// incarnation's, so they are counted gone with it.
    pub bus: Bus,
    leases: Arc<dyn Leases>,
    lease_ms: u64,
    relay: Arc<relay::BusRelay>,
    tenure: Arc<Tenure>,
    /// One claim at a time here: two claims of one game by this node would leave the
    /// first room holding a fencing number the store no longer accepts.
    pub(crate) claiming: tokio::sync::Mutex<()>,
    /// Stops the renewal thread when taken or dropped ([`Node::keep_leases`]).
    renewing: Mutex<Option<std::sync::mpsc::Sender<()>>>,
}

/// This node's id: the configured one, else the one generated at its first start and
/// kept in the data dir.
pub fn node_id(config: &ClusterConfig, data_dir: &Path) -> std::io::Result<String> {
    if let Some(id) = &config.node_id {
        return Ok(id.clone());
    }
    let path = data_dir.join(NODE_ID_FILE);
    if let Ok(kept) = std::fs::read_to_string(&path) {
        let kept = kept.trim();
        if is_plain_name(kept) {
            return Ok(kept.to_string());
        }
    }
    let id = format!("node-{}", crate::ids::new_id());
    crate::config::create_data_dir(data_dir)?;
    std::fs::write(&path, format!("{id}\n"))?;
    Ok(id)
}

impl Node {
    /// Joins the cluster: connects to NATS and starts relaying.
    pub async fn join(
        config: &ClusterConfig,
        url: &str,
        node: &str,
        leases: Arc<dyn Leases>,
    ) -> Result<Arc<Node>, BusError> {
        let incarnation = format!("{node}#{}", crate::ids::new_id());
        let bus = Bus::connect(url, &config.name, &incarnation).await?;
        let tenure = Arc::new(Tenure::new(config.lease_ms));
        let node = Arc::new(Node {
            id: node.to_owned(),
            relay: Arc::new(relay::BusRelay::spawn(bus.clone(), tenure.clone())),
            tenure,
            bus,
            leases,
            lease_ms: config.lease_ms,
            claiming: tokio::sync::Mutex::new(()),
            renewing: Mutex::new(None),
        });
        Ok(node)
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn lease(&self) -> Duration {
        Duration::from_millis(self.lease_ms)
    }

    /// The shared store's leases, for what else runs on one node at a time (tournaments'
    /// directors).
    pub fn leases(&self) -> Arc<dyn Leases> {
        self.leases.clone()
    }

    pub fn relay(&self) -> Arc<dyn Relay> {
        self.relay.clone()
    }

    /// Takes `game` for this node if nobody else holds it.
    pub async fn claim(&self, game: &str) -> Result<Claim, StoreError> {
        let (leases, id, node, ms) = (
            self.leases.clone(),
            game.to_owned(),
            self.id().to_owned(),
            self.lease_ms,
        );
        let claim = tokio::task::spawn_blocking(move || leases.claim(&id, &node, ms))
            .await
            .map_err(|_| StoreError::WriterStopped)??;
        if let Claim::Ours(fence) = claim {
            if self.tenure.owned.insert(game.into(), fence).is_none() {
                crate::metrics::owned_games(1);
            }
            if fence > 1 {
                crate::metrics::cluster_takeover();
            }
        }
        Ok(claim)
    }

    /// Tells every node that `game` runs here from now on: their mirrors of its previous
    /// room stop and join their connections to it here, as when a room closes. A node
    /// that died said nothing, and a connection that sends nothing would otherwise stay
    /// with a mirror of a room that is gone, unseen here, and be counted absent.
    pub fn took_over(&self, game: &str) {
        self.relay.closed(game);
    }

    /// Whether this node holds `game`'s lease.
    pub fn owns(&self, game: &str) -> bool {
        self.tenure.owned.contains_key(game)
    }

    /// Lets `game` go: its room under `fence` stopped here. A newer claim of the game
    /// here (a room that replaced it) keeps its lease.
    pub async fn disown(&self, game: &str, fence: u64) {
        if !self.tenure.forget(game, fence) {
            return;
        }
        let (leases, node, games) = (
            self.leases.clone(),
            self.id().to_owned(),
            vec![(game.to_owned(), fence)],
        );
        let released = tokio::task::spawn_blocking(move || leases.release(&node, &games)).await;
        if let Ok(Err(e)) = released {
            tracing::warn!(%game, error = %e, "a lease was not released; it lapses instead");
        }
    }

    /// Renews this node's leases from now on, on a thread of its own (`renewal.rs` says
    /// why, and why a paused or cut-off node still stops answering); the games
    /// it loses come out of the returned queue, already out of this node's tenure, for
    /// their rooms to stop. Calling it again replaces the thread; [`Node::release_all`]
    /// and dropping the node stop it.
    pub fn keep_leases(&self) -> std::io::Result<tokio::sync::mpsc::Receiver<Vec<String>>> {
        let (stop, stopped) = std::sync::mpsc::channel();
        let renewer = renewal::Renewer {
            tenure: self.tenure.clone(),
            leases: self.leases.clone(),
            node: self.id.clone(),
            lease_ms: self.lease_ms,
        };
        let lost = renewer.spawn(stopped)?;
        *self.renewing.lock().unwrap_or_else(PoisonError::into_inner) = Some(stop);
        Ok(lost)
    }

    /// Games whose owner died (or that never had one): for this node to take over.
    pub async fn orphans(&self) -> Vec<String> {
        let leases = self.leases.clone();
        match tokio::task::spawn_blocking(move || leases.orphans(64)).await {
            Ok(Ok(games)) => games,
            Ok(Err(e)) => {
                tracing::error!(error = %e, "could not look for games without an owner");
                Vec::new()
            }
            Err(_) => Vec::new(),
        }
    }

    /// Gives up every lease at once (the node stops), so the others need not wait. The
    /// renewal thread is stopped first; a renewal already under way keeps nothing, since
    /// the store renews only leases whose owner is still this node.
    pub async fn release_all(&self) {
        drop(
            self.renewing
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        let games: Vec<(String, u64)> = self
            .tenure
            .owned
            .iter()
            .map(|e| (e.key().to_string(), *e.value()))
            .collect();
        let n = games.len();
        self.tenure.owned.clear();
        crate::metrics::owned_games(-(n as i64));
        let (leases, node) = (self.leases.clone(), self.id().to_owned());
        match tokio::task::spawn_blocking(move || leases.release(&node, &games)).await {
            Ok(Ok(())) => tracing::info!(games = n, "leases released for the other nodes"),
            Ok(Err(e)) => tracing::warn!(error = %e, "leases not released; they lapse instead"),
            Err(_) => {}
        }
    }
}
