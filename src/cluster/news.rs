//! The game-lifecycle bus across nodes: each node publishes its own games' news on one
//! subject, and hands every other node's to its [`Lifecycle`] as news from elsewhere.
//! What NATS loses while it is away is lost here too; a subscriber that must not miss
//! a game catches up from the store, where every event was committed first.

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast::error::RecvError;

use super::bus::{Bus, BusError};
use crate::lifecycle::{GameNews, Lifecycle};

/// One piece of news on the bus, with the node (its incarnation) that ran the game.
#[derive(Serialize, Deserialize)]
struct Envelope {
    from: String,
    #[serde(flatten)]
    news: GameNews,
}

/// Starts relaying: this node's news out, the others' in. Both tasks end with the bus.
pub async fn relay(lifecycle: Lifecycle, bus: Bus) -> Result<(), BusError> {
    let subject = bus.subject("lifecycle");
    let mut heard = bus.subscribe(subject.clone()).await?;
    // Subscribed at NATS before this returns, so news published after it is heard.
    bus.round_trip().await?;
    let mut here = lifecycle.subscribe();
    let me = bus.node().to_owned();
    tokio::spawn({
        let me = me.clone();
        async move {
            loop {
                let news = match here.recv().await {
                    Ok(news) => news,
                    Err(RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "lifecycle news not relayed to the other nodes");
                        continue;
                    }
                    Err(RecvError::Closed) => return,
                };
                let envelope = Envelope {
                    from: me.clone(),
                    news,
                };
                let Ok(payload) = serde_json::to_vec(&envelope) else {
                    continue;
                };
                if let Err(e) = bus.publish(subject.clone(), Bytes::from(payload)).await {
                    tracing::warn!(error = %e, "lifecycle news not relayed to the other nodes");
                }
            }
        }
    });
    tokio::spawn(async move {
        use futures_util::StreamExt;
        while let Some(message) = heard.next().await {
            match serde_json::from_slice::<Envelope>(&message.payload) {
                Ok(envelope) if envelope.from != me => lifecycle.heard_elsewhere(envelope.news),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "unreadable lifecycle news on the bus"),
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{GameSettings, Role, UserInfo};

    #[test]
    fn news_reads_back_as_it_was_sent() {
        let user = |name: &str| UserInfo {
            id: name.into(),
            name: name.into(),
            role: Role::Player,
        };
        let news = GameNews::Started {
            game_id: "g".into(),
            black: user("ann"),
            white: user("bob"),
            settings: GameSettings::default(),
        };
        let sent = Envelope {
            from: "a#1".into(),
            news: news.clone(),
        };
        let bytes = serde_json::to_vec(&sent).expect("JSON");
        let read: Envelope = serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)));
        assert_eq!((read.from.as_str(), read.news), ("a#1", news));
    }
}
