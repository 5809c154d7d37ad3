//! The server's life: open the store, rebuild unfinished games, bind the port, serve
//! ([`crate::net`]), and on shutdown tell every client, drain, and close the store.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::auth::{AuthError, Verifier};
use crate::config::{Config, SyncSetting};
use crate::hub::Hub;
use crate::store::{SqliteStore, Store, StoreError, StoreWriter, SyncMode};

/// The SQLite file's name in the data dir.
pub const DB_FILE: &str = "tengen.db";
/// How long shutdown waits for connections to close before it stops waiting.
const DRAIN: Duration = Duration::from_secs(5);

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot create the data directory {path}: {source}")]
    DataDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Auth(#[from] AuthError),
    #[error(transparent)]
    Bus(#[from] crate::cluster::BusError),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// A running server.
pub struct Server {
    addr: SocketAddr,
    hub: Arc<Hub>,
    task: JoinHandle<()>,
}

impl Server {
    /// Opens the store, rebuilds unfinished games, binds and starts serving.
    pub async fn start(config: Config) -> Result<Server, StartError> {
        let data = config.data_dir.clone();
        std::fs::create_dir_all(&data).map_err(|source| StartError::DataDir {
            path: data.clone(),
            source,
        })?;
        let sync = match config.store.sync {
            SyncSetting::Full => SyncMode::Full,
            SyncSetting::Normal => SyncMode::Normal,
        };
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&data.join(DB_FILE), sync)?);
        let writer = StoreWriter::spawn(store.clone(), 4096);
        let verifier = Verifier::new(&config.auth, &data)?;
        let listen = config.listen;
        let hub = Hub::new(config, verifier, store, writer);
        let restored = hub.restore_unfinished()?;
        hub.lobby.blocks.load(hub.store().blocks()?);
        if let Some(url) = &hub.config.cluster.nats_url {
            let cluster = &hub.config.cluster;
            let node = (cluster.node_id.clone()).unwrap_or_else(crate::lobby::new_id);
            let bus = crate::cluster::Bus::connect(url, &cluster.name, &node).await?;
            crate::cluster::lobby::start(&hub, bus).await?;
        }
        let listener = TcpListener::bind(listen)
            .await
            .map_err(|source| StartError::Listen {
                addr: listen,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| StartError::Listen {
            addr: listen,
            source,
        })?;
        tracing::info!(%addr, data = %data.display(), restored, "tengen is serving: ws://{addr}/ws");
        let app = crate::net::router(hub.clone());
        let mut stop = hub.shutdown.subscribe();
        let task = tokio::spawn(async move {
            let serving = axum::serve(
                listener,
                app.into_make_service_with_connect_info::<SocketAddr>(),
            )
            .with_graceful_shutdown(async move {
                let _ = stop.wait_for(|s| *s).await;
            });
            if let Err(e) = serving.await {
                tracing::error!(error = %e, "the server stopped with an error");
            }
        });
        Ok(Server { addr, hub, task })
    }

    /// The address actually bound (useful with port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// Stops accepting, tells every client, waits (bounded) for connections to close,
    /// finishes in-flight commits and closes the store.
    pub async fn shutdown(self) {
        tracing::info!("shutting down");
        self.hub.shutdown.send_replace(true);
        if tokio::time::timeout(DRAIN, self.task).await.is_err() {
            tracing::warn!("connections did not close within {DRAIN:?}; closing the store anyway");
        }
        if let Some(link) = self.hub.lobby.cluster() {
            link.leave().await;
        }
        self.hub.writer().clone().close().await;
        tracing::info!("store closed; bye");
    }
}
