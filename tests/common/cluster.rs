//! A cluster for the tests: nodes on one fresh PostgreSQL database and one NATS server
//! under a subject prefix of their own, sharing one token secret; nodes in this process
//! ([`Cluster::node`]) or as child processes ([`Cluster::spawn`]) to kill or pause.

use tengen::auth::{claims_for, sign};
use tengen::config::{Config, StoreBackend};
use tengen::protocol::Role;

use super::process::Running;
use super::services::{PgDb, nats_url, postgres_db, unique_prefix};
use super::{Client, TestServer};

/// The lease the tests' nodes hold games by: short, so takeovers come soon.
pub const LEASE_MS: u64 = 1500;

/// One cluster: its database (dropped with it, so keep it until its nodes are gone), its
/// name and its secret.
pub struct Cluster {
    pub db: PgDb,
    pub name: String,
    secret: String,
}

impl Cluster {
    pub fn new() -> Cluster {
        Cluster {
            db: postgres_db(),
            name: unique_prefix(),
            secret: format!("secret-{}", unique_prefix()),
        }
    }

    /// Makes `config` node `id` of this cluster.
    pub fn configure(&self, config: &mut Config, id: &str) {
        config.store.backend = StoreBackend::Postgres;
        config.store.postgres_url = Some(self.db.url().to_owned());
        config.cluster.nats_url = Some(nats_url());
        config.cluster.name = self.name.clone();
        config.cluster.node_id = Some(id.to_owned());
        config.cluster.lease_ms = LEASE_MS;
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

    /// Starts node `id` as a child process on data dir `dir`.
    pub fn spawn(&self, dir: &std::path::Path, id: &str) -> Running {
        let env = [
            ("TENGEN_STORE__BACKEND", "postgres".to_owned()),
            ("TENGEN_STORE__POSTGRES_URL", self.db.url().to_owned()),
            ("TENGEN_CLUSTER__NATS_URL", nats_url()),
            ("TENGEN_CLUSTER__NAME", self.name.clone()),
            ("TENGEN_CLUSTER__NODE_ID", id.to_owned()),
            ("TENGEN_CLUSTER__LEASE_MS", LEASE_MS.to_string()),
            ("TENGEN_AUTH__SECRET", self.secret.clone()),
        ];
        super::process::spawn(dir, &env)
    }

    /// A client of `user` on the node at `url`.
    pub async fn login(&self, url: &str, user: &str) -> Client {
        let claims = claims_for(user, None, Role::Player, 3600);
        let token = sign(self.secret.as_bytes(), &claims).expect("a token");
        Client::connect(&format!("{url}?token={token}")).await
    }
}

/// Starts `count` nodes of a new cluster; keep the cluster as long as the nodes.
pub async fn start_cluster(count: usize) -> (Cluster, Vec<TestServer>) {
    let cluster = Cluster::new();
    let nodes = cluster.nodes(count).await;
    (cluster, nodes)
}
