//! The bridge between the synchronous [`Store`](crate::store::Store) trait and the async
//! PostgreSQL client: a small tokio runtime of its own holding a few connections. A call
//! spawns its work onto that runtime and waits for the answer on a plain channel, which is
//! safe from any thread (a tokio worker, the blocking pool, a CLI's main thread), where a
//! `block_on` inside a runtime would panic.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::runtime::Runtime;
use tokio::sync::Semaphore;
use tokio_postgres::{Client, Config, NoTls};

use super::pg_error;
use crate::store::StoreError;

/// How many connections one store holds at most; calls beyond wait for one to come back.
const CONNECTIONS: usize = 4;
/// How long opening a connection may take before the call fails.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one call may take in all (waiting for a connection, the queries, the commit)
/// before it fails and its connection is dropped, so a hung server never hangs a room.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the server lets a transaction of ours sit between statements before it ends
/// the session, rolling the transaction back. A node paused, or cut off with its host
/// gone, in the middle of a transaction (a batch of appends, a lease renewal) would
/// otherwise keep its games' rows locked until it woke or TCP gave up, hours later, and
/// no other node could take those games over; a node that is alive goes from one
/// statement to the next in milliseconds.
const IDLE_IN_TRANSACTION: &str = "SET idle_in_transaction_session_timeout = 2000";

/// The work of one call: borrows a connection for as long as it runs.
pub(super) type Work<'c, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'c>>;

/// The runtime and the connections; dropping it stops both.
pub(super) struct Connections {
    /// Always `Some` until dropped.
    runtime: Option<Runtime>,
    pool: Arc<Pool>,
}

struct Pool {
    /// Parsed once from the URL; never logged, since it holds the password.
    config: Config,
    idle: Mutex<Vec<Client>>,
    slots: Semaphore,
}

impl Connections {
    /// Parses the URL and starts the runtime; connects lazily, on the first call.
    pub(super) fn new(url: &str) -> Result<Self, StoreError> {
        let mut config: Config = url.parse().map_err(|_| StoreError::Postgres {
            detail: "the PostgreSQL URL could not be parsed (expected postgres://user:password@host:port/database)".into(),
        })?;
        config.connect_timeout(CONNECT_TIMEOUT);
        config.application_name("tengen");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("tengen-postgres")
            .enable_all()
            .build()
            .map_err(|e| StoreError::Postgres {
                detail: format!("the PostgreSQL client's threads could not start: {e}"),
            })?;
        Ok(Connections {
            runtime: Some(runtime),
            pool: Arc::new(Pool {
                config,
                idle: Mutex::new(Vec::new()),
                slots: Semaphore::new(CONNECTIONS),
            }),
        })
    }

    /// Runs `work` on a connection of the pool (opening one if none is idle or the idle
    /// one was lost) and waits for its answer.
    pub(super) fn run<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut Client) -> Work<'c, T> + Send + 'static,
    {
        let runtime = self.runtime.as_ref().ok_or_else(stopped)?;
        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        let pool = Arc::clone(&self.pool);
        runtime.spawn(async move {
            let out = tokio::time::timeout(CALL_TIMEOUT, pool.with_client(work))
                .await
                .unwrap_or_else(|_| {
                    Err(StoreError::Postgres {
                        detail: format!("PostgreSQL did not answer within {CALL_TIMEOUT:?}"),
                    })
                });
            let _ = reply.send(out);
        });
        answer.recv().unwrap_or_else(|_| Err(stopped()))
    }
}

impl Drop for Connections {
    fn drop(&mut self) {
        // The store may be dropped on an async thread, where waiting for the runtime's
        // threads is not allowed; its connections close as their tasks end.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

fn stopped() -> StoreError {
    StoreError::Postgres {
        detail: "the PostgreSQL client stopped before it answered".into(),
    }
}

impl Pool {
    async fn with_client<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        F: for<'c> FnOnce(&'c mut Client) -> Work<'c, T>,
    {
        let _slot = self.slots.acquire().await.map_err(|_| stopped())?;
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut client = match idle.filter(|c| !c.is_closed()) {
            Some(client) => client,
            None => self.connect().await?,
        };
        // If the work is cut short (the call timed out), the connection is dropped with
        // it, and with it any transaction it had open.
        let out = work(&mut client).await;
        if !client.is_closed() {
            self.idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(client);
        }
        out
    }

    async fn connect(&self) -> Result<Client, StoreError> {
        let (client, connection) = self.config.connect(NoTls).await.map_err(pg_error)?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::warn!(error = %e, "a PostgreSQL connection was lost");
            }
        });
        client
            .batch_execute(IDLE_IN_TRANSACTION)
            .await
            .map_err(pg_error)?;
        Ok(client)
    }
}
