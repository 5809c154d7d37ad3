//! The nodes' message bus: one NATS connection per node and the subjects it uses.
//!
//! Every subject starts with the cluster's name (`cluster.name`), so several clusters,
//! or several tests, share one NATS server without hearing each other. Game ids and
//! node ids are plain names ([`crate::config::is_plain_name`], base-36 game ids), so
//! they are subject tokens as they are.

use std::sync::Arc;

use bytes::Bytes;

use crate::config::redact_url;

/// Why the bus could not be reached or used.
#[derive(Debug, thiserror::Error)]
pub enum BusError {
    #[error("cannot connect to NATS at {url}: {detail}")]
    Connect { url: String, detail: String },
    #[error("NATS refused a message on {subject}: {detail}")]
    Publish { subject: String, detail: String },
    #[error("nobody answers on {subject}")]
    NoResponders { subject: String },
    #[error("no answer on {subject} in time")]
    TimedOut { subject: String },
    #[error("a request on {subject} failed: {detail}")]
    Request { subject: String, detail: String },
    #[error("not connected to NATS, so nothing was sent on {subject}")]
    NotConnected { subject: String },
    #[error(
        "another node runs under this node's cluster.node_id (as {twin}, started before this one); give each node its own id, or leave it unset to have one generated"
    )]
    SameId { twin: String },
}

/// A node's connection to the others.
#[derive(Clone, Debug)]
pub struct Bus {
    client: async_nats::Client,
    prefix: Arc<str>,
    node: Arc<str>,
}

impl Bus {
    /// Connects as node `node` of cluster `prefix`. The client reconnects by itself after
    /// a NATS restart; what was published meanwhile is lost, which the readers of game
    /// events make up from the store (see [`super::mirror`]).
    pub async fn connect(url: &str, prefix: &str, node: &str) -> Result<Bus, BusError> {
        let client = async_nats::ConnectOptions::new()
            .name(format!("tengen {prefix}/{node}"))
            .retry_on_initial_connect()
            .connect(url)
            .await
            .map_err(|e| BusError::Connect {
                url: redact_url(url),
                detail: e.to_string(),
            })?;
        // `retry_on_initial_connect` returns at once: wait until it is really up.
        for _ in 0..100 {
            if client.connection_state() == async_nats::connection::State::Connected {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        if client.connection_state() != async_nats::connection::State::Connected {
            return Err(BusError::Connect {
                url: redact_url(url),
                detail: "not connected after 5 s".into(),
            });
        }
        Ok(Bus {
            client,
            prefix: prefix.into(),
            node: node.into(),
        })
    }

    /// This node's name on the bus (its id and incarnation; see [`super::Node`]).
    pub fn node(&self) -> &str {
        &self.node
    }

    /// Whether the connection to NATS is up (it reconnects by itself when it is not).
    pub fn is_connected(&self) -> bool {
        self.client.connection_state() == async_nats::connection::State::Connected
    }

    pub fn client(&self) -> &async_nats::Client {
        &self.client
    }

    /// `<cluster>.<rest>`.
    pub fn subject(&self, rest: &str) -> String {
        format!("{}.{rest}", self.prefix)
    }

    /// Where a game's owner takes commands from the other nodes.
    pub fn game_commands(&self, game: &str) -> String {
        self.subject(&format!("game.{game}.cmd"))
    }

    /// Where a game's owner publishes each committed frame once for every node.
    pub fn game_events(&self, game: &str) -> String {
        self.subject(&format!("game.{game}.ev"))
    }

    /// Publishes without waiting for anyone; an error means the connection is gone.
    pub async fn publish(&self, subject: String, payload: Bytes) -> Result<(), BusError> {
        self.client
            .publish(subject.clone(), payload)
            .await
            .map_err(|e| BusError::Publish {
                subject,
                detail: e.to_string(),
            })
    }

    /// Sends a request and waits for the one answer, at most `timeout`. Refused at once
    /// while the connection is down: the client would keep the request and send it once
    /// reconnected, long after its sender was told nothing happened.
    pub async fn request(
        &self,
        subject: String,
        payload: Bytes,
        timeout: std::time::Duration,
    ) -> Result<Bytes, BusError> {
        use async_nats::RequestErrorKind;
        if !self.is_connected() {
            return Err(BusError::NotConnected { subject });
        }
        let request = async_nats::Request::new()
            .payload(payload)
            .timeout(Some(timeout));
        match self.client.send_request(subject.clone(), request).await {
            Ok(message) => Ok(message.payload),
            Err(e) => Err(match e.kind() {
                RequestErrorKind::NoResponders => BusError::NoResponders { subject },
                RequestErrorKind::TimedOut => BusError::TimedOut { subject },
                _ => BusError::Request {
                    subject,
                    detail: e.to_string(),
                },
            }),
        }
    }

    /// Returns once NATS has read everything this node sent before, subscriptions
    /// included: NATS reads one connection's operations in order, so a message this
    /// node sends itself comes back only after them.
    pub async fn round_trip(&self) -> Result<(), BusError> {
        use futures_util::StreamExt;
        let inbox = self.client.new_inbox();
        let mut echo = self.subscribe(inbox.clone()).await?;
        self.publish(inbox.clone(), Bytes::new()).await?;
        match tokio::time::timeout(std::time::Duration::from_secs(5), echo.next()).await {
            Ok(Some(_)) => Ok(()),
            _ => Err(BusError::TimedOut { subject: inbox }),
        }
    }

    /// Subscribes to `subject`.
    pub async fn subscribe(&self, subject: String) -> Result<async_nats::Subscriber, BusError> {
        self.client
            .subscribe(subject.clone())
            .await
            .map_err(|e| BusError::Publish {
                subject,
                detail: e.to_string(),
            })
    }
}
