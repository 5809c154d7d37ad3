//! How frames leave the server: serialised once ([`encode`]) and queued on each
//! connection's own bounded outbound queue ([`Outbox`]). Rooms, the lobby and the
//! connections all use it, so it belongs to none of them.

use std::sync::Arc;

use serde::Serialize;
use tokio::sync::{Notify, mpsc};

/// One serialised JSON text frame, shared by every queue it is pushed to.
pub type Frame = axum::extract::ws::Utf8Bytes;

/// Serialises a message once, for any number of receivers.
pub fn encode<T: Serialize>(msg: &T) -> Frame {
    match serde_json::to_string(msg) {
        Ok(text) => Frame::from(text),
        // Our message types always serialise; if one ever does not, say so on the wire.
        Err(e) => Frame::from(format!(
            r#"{{"type":"error","code":"unavailable","message":"the server could not encode a message: {e}"}}"#
        )),
    }
}

/// The sending side of one connection's outbound queue.
#[derive(Clone, Debug)]
pub struct Outbox {
    conn: u64,
    tx: mpsc::Sender<Frame>,
    overflow: Arc<Notify>,
}

/// The connection's side: frames to write, and a signal that it fell too far behind.
pub struct Inbox {
    pub frames: mpsc::Receiver<Frame>,
    pub overflow: Arc<Notify>,
}

impl Outbox {
    /// A queue of `capacity` frames for connection `conn`.
    pub fn new(conn: u64, capacity: usize) -> (Outbox, Inbox) {
        let (tx, frames) = mpsc::channel(capacity.max(1));
        let overflow = Arc::new(Notify::new());
        (
            Outbox {
                conn,
                tx,
                overflow: overflow.clone(),
            },
            Inbox { frames, overflow },
        )
    }

    pub fn conn(&self) -> u64 {
        self.conn
    }

    /// Queues a frame without waiting. False when the connection is gone or its queue is
    /// full; in the second case the connection is told to close as a slow consumer.
    pub fn push(&self, frame: Frame) -> bool {
        match self.tx.try_send(frame) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                crate::metrics::slow_consumer();
                self.overflow.notify_one();
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }
}
