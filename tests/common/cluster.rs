//! A cluster for the tests: nodes on one fresh PostgreSQL database and one NATS server
//! under a subject prefix of their own, sharing one token secret; nodes in this process
//! ([`Cluster::node`]) or as child processes ([`Cluster::spawn`]) to kill or pause.

use std::time::Duration;

use serde_json::json;
use tengen::auth::{claims_for, sign};
use tengen::config::{Config, StoreBackend};
use tengen::protocol::Role;

use super::process::{Running, cluster_env};
use super::services::{PgDb, nats_url, postgres_db, unique_prefix};
use super::{Client, TestServer};

/// The lease the tests' nodes hold games by: short, so takeovers come soon.
pub const LEASE_MS: u64 = 1500;

/// One cluster: its database (dropped with it, so keep it until its nodes are gone), its
/// name and its secret.
pub struct Cluster {
    pub db: PgDb,
    pub name: String,
    pub secret: String,
    /// The nodes' `cluster.lease_ms`.
    pub lease_ms: u64,
    /// The NATS server the nodes talk through.
    pub nats: String,
}

impl Cluster {
    pub fn new() -> Cluster {
        Cluster::with_lease(LEASE_MS)
    }

    pub fn with_lease(lease_ms: u64) -> Cluster {
        Cluster::build(lease_ms, nats_url())
    }

    /// A cluster whose nodes talk through the NATS server at `nats` (one a test stops),
    /// not the shared one.
    pub fn on_nats(nats: &str) -> Cluster {
        Cluster::build(LEASE_MS, nats.to_owned())
    }

    fn build(lease_ms: u64, nats: String) -> Cluster {
        Cluster {
            db: postgres_db(),
            name: unique_prefix(),
            secret: format!(
                "a shared test secret of 32 bytes or more {}",
                unique_prefix()
            ),
            lease_ms,
            nats,
        }
    }

    /// Makes `config` node `id` of this cluster.
    pub fn configure(&self, config: &mut Config, id: &str) {
        config.store.backend = StoreBackend::Postgres;
        config.store.postgres_url = Some(self.db.url().to_owned());
        config.cluster.nats_url = Some(self.nats.clone());
        config.cluster.name = self.name.clone();
        config.cluster.node_id = Some(id.to_owned());
        config.cluster.lease_ms = self.lease_ms;
        config.auth.secret = Some(self.secret.clone());
    }

    /// Starts node `id` in this process.
    pub async fn node(&self, id: &str) -> TestServer {
        TestServer::start_with(|c| self.configure(c, id)).await
    }

    /// Starts nodes `n1` … `n<count>`, one after the other, so that each has copied the
    /// lobby of those before it.
    pub async fn nodes(&self, count: usize) -> Vec<TestServer> {
        let mut nodes = Vec::with_capacity(count);
        for i in 1..=count {
            nodes.push(self.node(&format!("n{i}")).await);
        }
        nodes
    }

    /// Starts node `id` as a child process on data dir `dir`, with `more` settings.
    pub fn spawn(
        &self,
        dir: &std::path::Path,
        id: &str,
        more: &[(&'static str, String)],
    ) -> Running {
        super::process::spawn(dir, &self.env(id, more))
    }

    /// The settings of node `id` of this cluster, with `more`.
    fn env(&self, id: &str, more: &[(&'static str, String)]) -> Vec<(&'static str, String)> {
        let mut env = cluster_env(
            self.db.url(),
            &self.nats,
            &self.name,
            id,
            self.lease_ms,
            &self.secret,
        );
        env.extend_from_slice(more);
        env
    }

    /// A client of `user` on the node at `url`.
    pub async fn login(&self, url: &str, user: &str) -> Client {
        self.login_as(url, user, Role::Player).await
    }

    /// A client of `user` with `role` on the node at `url`.
    pub async fn login_as(&self, url: &str, user: &str, role: Role) -> Client {
        let claims = claims_for(user, None, role, 3600);
        let token = sign(self.secret.as_bytes(), &claims).expect("a token");
        Client::connect(&format!("{url}?token={token}")).await
    }
}

/// Node processes of one cluster (`n0`, `n1`, …), each with a data dir of its own, for
/// tests that kill, pause or restart them.
pub struct Processes {
    pub cluster: Cluster,
    dirs: Vec<tempfile::TempDir>,
    /// Settings every node gets besides the cluster's.
    more: Vec<(&'static str, String)>,
}

impl Processes {
    pub fn new(cluster: Cluster, nodes: usize, more: Vec<(&'static str, String)>) -> Processes {
        Processes {
            cluster,
            dirs: (0..nodes)
                .map(|_| tempfile::tempdir().expect("a data dir"))
                .collect(),
            more,
        }
    }

    /// Starts (or starts again) node `i`.
    pub fn spawn(&self, i: usize) -> Running {
        self.cluster
            .spawn(self.dirs[i].path(), &format!("n{i}"), &self.more)
    }

    /// Starts, with data dir `dir`, a process that names itself node `i` too, and
    /// waits for it to stop by itself (see [`super::process::run_to_end`]).
    pub fn run_twin(
        &self,
        i: usize,
        dir: &std::path::Path,
        within: std::time::Duration,
    ) -> Option<(std::process::ExitStatus, String)> {
        let env = self.cluster.env(&format!("n{i}"), &self.more);
        super::process::run_to_end(dir, &env, within)
    }

    /// Node `i`'s data dir.
    pub fn dir(&self, i: usize) -> &std::path::Path {
        self.dirs[i].path()
    }

    pub async fn login(&self, node: &Running, user: &str) -> Client {
        self.cluster.login(&node.url, user).await
    }
}

/// Starts `count` nodes of a new cluster; keep the cluster as long as the nodes.
pub async fn start_cluster(count: usize) -> (Cluster, Vec<TestServer>) {
    let cluster = Cluster::new();
    let nodes = cluster.nodes(count).await;
    (cluster, nodes)
}

/// Plays move `n` at `vertex` through `c` until it is in: an `unavailable` (the game is
/// moving between nodes) is sent again; a `stale_move` means an earlier try went in
/// after all. None when the connection breaks (its node died).
pub async fn play_through(c: &mut Client, game: &str, n: u32, vertex: &str) -> Option<()> {
    loop {
        let msg = json!({"type": "play", "game_id": game, "move_number": n, "vertex": vertex});
        let reply = c.try_request(msg).await?;
        match reply["code"].as_str() {
            None if reply["type"] == "ack" => return Some(()),
            Some("unavailable") => tokio::time::sleep(Duration::from_millis(200)).await,
            Some("stale_move") => return Some(()),
            _ => panic!("move {n} of {game} refused: {reply}"),
        }
    }
}
