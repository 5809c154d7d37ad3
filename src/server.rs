//! The server's life: open the store, rebuild unfinished games, bind the port, serve
//! ([`crate::net`]), and on shutdown tell every client, drain, and close the store.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::auth::{AuthError, Verifier};
use crate::cluster::{BusError, Node};
use crate::config::{Config, StoreBackend, SyncSetting, redact_url};
use crate::hub::Hub;
use crate::store::{Leases, PgStore, SqliteStore, Store, StoreError, StoreWriter, SyncMode};

/// The SQLite file's name in the data dir.
pub const DB_FILE: &str = "tengen.db";
/// How long shutdown waits for NATS to take this node's goodbye to the others.
const GOODBYE_WAIT: Duration = Duration::from_secs(2);
/// How long shutdown waits for connections to close before it stops waiting.
const DRAIN: Duration = Duration::from_secs(5);

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot create the data directory {path}: {cause}")]
    DataDir {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Auth(#[from] AuthError),
    #[error(transparent)]
    Bus(#[from] BusError),
    #[error(
        "cluster.nats_url is set, but the store is not one that several nodes can share; set store.backend = \"postgres\""
    )]
    ClusterNeedsSharedStore,
    #[error("cannot keep the node id in {path}: {cause}")]
    NodeId {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("cannot listen on {addr}: {cause}")]
    Listen {
        addr: SocketAddr,
        cause: std::io::Error,
    },
    #[error(transparent)]
    Locked(#[from] LockError),
    #[error(transparent)]
    Mail(#[from] crate::notify::MailError),
    #[error(transparent)]
    Push(#[from] crate::notify::PushError),
    #[error(
        "cannot make the store's files in {path} readable by their owner only (they hold password hashes): {cause}"
    )]
    Private {
        path: PathBuf,
        cause: std::io::Error,
    },
}

/// The lock file in a SQLite data directory.
pub const LOCK_FILE: &str = "tengen.lock";
/// How long a starting server waits for the data directory's lock.
const LOCK_WAIT: Duration = Duration::from_secs(1);

/// Why the data directory could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "another tengen process is using the data directory {path} (it holds {LOCK_FILE}); stop it first"
    )]
    Held { path: PathBuf },
    #[error("cannot lock the data directory {path}: {cause}")]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
}

/// A SQLite data directory's lock, held while it lives: one server at a time runs its
/// games (two would both rebuild and play them), and offline commands that rewrite what
/// a server keeps in memory (`ratings rebuild`) wait for it to stop. The operating
/// system releases it when the process ends, however it ends.
#[derive(Debug)]
pub struct DataLock {
    _file: std::fs::File,
}

impl DataLock {
    /// Takes the lock of `config`'s data directory when its store is the SQLite file
    /// there; None for a PostgreSQL store, which nodes share by design.
    pub fn for_store(config: &Config) -> Result<Option<DataLock>, LockError> {
        match config.store.backend {
            StoreBackend::Sqlite => DataLock::take(&config.data_dir).map(Some),
            StoreBackend::Postgres => Ok(None),
        }
    }

    /// As [`DataLock::for_store`], waiting up to [`LOCK_WAIT`] for a process that is
    /// ending to release the lock: a restart, or a child process that briefly shares the
    /// lock's descriptor between its spawn and its exec.
    async fn for_store_waiting(config: &Config) -> Result<Option<DataLock>, LockError> {
        let deadline = tokio::time::Instant::now() + LOCK_WAIT;
        loop {
            match DataLock::for_store(config) {
                Err(LockError::Held { .. }) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(50)).await
                }
                taken => return taken,
            }
        }
    }

    /// Takes the lock of the data directory `dir`.
    pub fn take(dir: &Path) -> Result<DataLock, LockError> {
        let path = dir.to_path_buf();
        let io = |cause| LockError::Io {
            path: path.clone(),
            cause,
        };
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path.join(LOCK_FILE))
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => Ok(DataLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(LockError::Held { path }),
            Err(std::fs::TryLockError::Error(e)) => Err(io(e)),
        }
    }
}

/// Opens the store the configuration names: the SQLite file in the data directory, or
/// the PostgreSQL database (whose URL is logged only with its password redacted).
pub fn open_store(config: &Config) -> Result<Arc<dyn Store>, StoreError> {
    open_shared(config).map(|(store, _)| store)
}

/// A store, with its leases when several nodes can share it (PostgreSQL).
type Shared = (Arc<dyn Store>, Option<Arc<dyn Leases>>);

/// [`open_store`], with the store's leases when several nodes can share it.
fn open_shared(config: &Config) -> Result<Shared, StoreError> {
    match (config.store.backend, &config.store.postgres_url) {
        (StoreBackend::Postgres, Some(url)) => {
            tracing::info!(url = %redact_url(url), "opening the PostgreSQL store");
            let store = Arc::new(PgStore::open(url)?);
            Ok((store.clone(), Some(store)))
        }
        // Config::validate refuses postgres without a URL; should one get here, it says so.
        (StoreBackend::Postgres, None) => Err(StoreError::Postgres {
            detail: "store.backend is \"postgres\" but store.postgres_url is not set".into(),
        }),
        (StoreBackend::Sqlite, _) => {
            let sync = match config.store.sync {
                SyncSetting::Full => SyncMode::Full,
                SyncSetting::Normal => SyncMode::Normal,
            };
            let path = config.data_dir.join(DB_FILE);
            Ok((Arc::new(SqliteStore::open(&path, sync)?), None))
        }
    }
}

/// Makes the store's files (`tengen.db` and every file beside it named after it) readable
/// by their owner only: they hold password hashes, and a data directory an operator made
/// may let others in. With `create`, makes an empty `tengen.db` 0600 when there is none.
fn private_files(dir: &Path, create: bool) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        if create {
            let made = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(dir.join(DB_FILE));
            match made {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            }
        }
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            if !entry.file_name().to_string_lossy().starts_with(DB_FILE) {
                continue;
            }
            let mode = entry.metadata()?.permissions().mode();
            if mode & 0o077 != 0 {
                std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o600))?;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = (dir, create);
    Ok(())
}

/// A running server.
pub struct Server {
    addr: SocketAddr,
    hub: Arc<Hub>,
    task: JoinHandle<()>,
    /// Released when the server is dropped, after [`Server::shutdown`] closed the store.
    _lock: Option<DataLock>,
}

impl Server {
    /// Opens the store, rebuilds unfinished games, binds and starts serving.
    pub async fn start(config: Config) -> Result<Server, StartError> {
        // A key file that cannot be used is refused before anything is created.
        crate::auth::check_public_key(&config.auth)?;
        let data = config.data_dir.clone();
        crate::config::create_data_dir(&data).map_err(|cause| StartError::DataDir {
            path: data.clone(),
            cause,
        })?;
        let lock = DataLock::for_store_waiting(&config).await?;
        let private = |cause| StartError::Private {
            path: data.clone(),
            cause,
        };
        // SQLite gives its -wal and -shm files the database's mode: made 0600 first, they
        // are all private whatever the directory's mode and the umask.
        let sqlite = config.store.backend == StoreBackend::Sqlite;
        if sqlite {
            private_files(&data, true).map_err(private)?;
        }
        let (store, leases) = open_shared(&config)?;
        if sqlite {
            private_files(&data, false).map_err(private)?;
        }
        let group_wait = Duration::from_micros(config.store.group_wait_us);
        let writer = StoreWriter::spawn(store.clone(), 4096, group_wait);
        let verifier = Verifier::new(&config.auth, &data)?;
        let secret = crate::auth::load_or_create_secret(&config.auth, &data)?;
        let mailing = crate::notify::Mailing::new(&config.mail, &secret)?;
        crate::notify::check_push(&config.push)?;
        let listen = config.listen;
        let cluster = match &config.cluster.nats_url {
            None => None,
            Some(url) => {
                let leases = leases.ok_or(StartError::ClusterNeedsSharedStore)?;
                let id = crate::cluster::node_id(&config.cluster, &data).map_err(|cause| {
                    StartError::NodeId {
                        path: data.clone(),
                        cause,
                    }
                })?;
                let node = Node::join(&config.cluster, url, &id, leases).await?;
                tracing::info!(node = %id, cluster = %config.cluster.name, "joined the cluster");
                Some(node)
            }
        };
        let single = cluster.is_none();
        let hub = Hub::new(config, verifier, store, writer, cluster, mailing);
        // A cluster's games are taken by whichever node finds them without an owner.
        let restored = if single { hub.restore_unfinished()? } else { 0 };
        if single && let Err(refusal) = hub.tournaments.restore().await {
            tracing::error!(%refusal, "the tournaments not finished could not be restored");
        }
        hub.lobby.blocks.load(hub.store().blocks()?);
        hub.lobby.mutes.load(hub.store().mutes()?);
        let lobby = Arc::downgrade(&hub);
        use crate::accounts::revoke::Ending;
        tokio::spawn(crate::accounts::revoke::watch(
            hub.store().clone(),
            hub.shutdown.signal(),
            move |ending, frame, code, reason| {
                if let Some(hub) = lobby.upgrade() {
                    match ending {
                        Ending::User(user) => hub.lobby.end_connections(user, frame, code, reason),
                        Ending::Token(token) => hub.open_tokens.end(token, frame, code, reason),
                    }
                }
            },
        ));
        if let Some(node) = &hub.cluster {
            hub.join_cluster(node.bus.clone()).await?;
        }
        let listener = TcpListener::bind(listen)
            .await
            .map_err(|cause| StartError::Listen {
                addr: listen,
                cause,
            })?;
        let addr = listener.local_addr().map_err(|cause| StartError::Listen {
            addr: listen,
            cause,
        })?;
        let public_url = (hub.config.auth.public_url.clone()).unwrap_or(format!("http://{addr}"));
        hub.notices.set_base_url(&public_url);
        tracing::info!(%addr, data = %data.display(), restored, "tengen is serving: ws://{addr}/ws");
        let stop = hub.shutdown.signal();
        let task = tokio::spawn(crate::net::serve(listener, hub.clone(), stop));
        Ok(Server {
            addr,
            hub,
            task,
            _lock: lock,
        })
    }

    /// The address actually bound (useful with port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// Returns once the server must stop of its own accord, and why: in a cluster,
    /// another process runs under its node id, started first. Never on a single node.
    pub async fn must_stop(&self) -> BusError {
        match self.hub.starter.cluster() {
            Some(link) => link.displaced().await,
            None => std::future::pending().await,
        }
    }

    /// Stops accepting, tells every client, waits (bounded) for connections to close,
    /// finishes in-flight commits and closes the store.
    pub async fn shutdown(self) {
        tracing::info!("shutting down");
        self.hub.shutdown.begin();
        // The other nodes take this node's games at once rather than after a lease.
        self.hub.games.hand_over().await;
        // The HTTP server's task ends without waiting for upgraded WebSocket sessions;
        // a session busy with a request sees the shutdown only after it.
        let drained = async {
            let _ = self.task.await;
            self.hub.shutdown.finished().await;
        };
        if tokio::time::timeout(DRAIN, drained).await.is_err() {
            tracing::warn!("connections did not close within {DRAIN:?}; closing the store anyway");
        }
        // A goodbye cannot reach nodes through a NATS that is down; they find this one
        // gone by its silence instead.
        if let Some(link) = self.hub.starter.cluster()
            && tokio::time::timeout(GOODBYE_WAIT, link.leave())
                .await
                .is_err()
        {
            tracing::warn!("the other nodes could not be told goodbye within {GOODBYE_WAIT:?}");
        }
        self.hub.writer().clone().close().await;
        tracing::info!("store closed; bye");
    }
}
