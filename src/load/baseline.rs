//! The baseline: the least a WebSocket fan-out server can do, so that tengen's figures
//! can be read against this machine's limit. No game logic, no tokens, no store: a
//! client's first frame `{"type":"join","id":N,"game_id":"ROOM"}` puts it in a room
//! (answered `{"type":"ack","id":N}`), and every later text frame it sends is written,
//! as the same shared bytes, once to each member of that room, sender included.
//!
//! Per connection it does what tengen does at its edge and nothing more: one task, a
//! bounded outbound queue (a member whose queue is full leaves the room), batched writes
//! with one flush, the same tungstenite buffer sizes, TCP_NODELAY.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

/// Frames queued for one connection at most (tengen's default `outbound_queue`).
const QUEUE: usize = 256;
/// Frames written per flush at most (as tengen).
const BATCH: usize = 64;

type Members = Vec<(u64, mpsc::Sender<Utf8Bytes>)>;

#[derive(Default)]
struct Rooms {
    rooms: Mutex<HashMap<Box<str>, Members>>,
    next_conn: AtomicU64,
}

impl Rooms {
    fn join(&self, room: &str, conn: u64, tx: mpsc::Sender<Utf8Bytes>) {
        let mut rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        rooms.entry(room.into()).or_default().push((conn, tx));
    }

    fn leave(&self, room: &str, conn: u64) {
        let mut rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(members) = rooms.get_mut(room) {
            members.retain(|(c, _)| *c != conn);
            if members.is_empty() {
                rooms.remove(room);
            }
        }
    }

    /// Queues `frame` for every member; a member that cannot take it leaves the room.
    fn broadcast(&self, room: &str, frame: &Utf8Bytes) {
        let mut rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(members) = rooms.get_mut(room) {
            members.retain(|(_, tx)| tx.try_send(frame.clone()).is_ok());
        }
    }
}

#[derive(Deserialize)]
struct Join {
    #[serde(default)]
    id: u64,
    game_id: String,
}

/// The WebSocket settings of the baseline's connections: tengen's.
pub fn ws_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(crate::net::READ_BUFFER_BYTES)
        .write_buffer_size(crate::net::WRITE_BUFFER_BYTES)
        .max_write_buffer_size(QUEUE * 64 * 1024)
        .max_message_size(Some(64 * 1024))
        .max_frame_size(Some(64 * 1024))
}

/// Serves on `listener` until `stop` completes.
pub async fn serve(listener: TcpListener, stop: impl Future<Output = ()>) {
    let rooms = Arc::new(Rooms::default());
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(connection(rooms.clone(), stream));
                }
                // Out of descriptors or a reset before accept: wait a little, go on.
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(10)).await,
            }
        }
    }
}

async fn connection(rooms: Arc<Rooms>, stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let Ok(mut ws) = tokio_tungstenite::accept_async_with_config(stream, Some(ws_config())).await
    else {
        return;
    };
    let conn = rooms.next_conn.fetch_add(1, Ordering::Relaxed);
    let (tx, mut rx) = mpsc::channel::<Utf8Bytes>(QUEUE);
    let mut room: Option<Box<str>> = None;
    loop {
        tokio::select! {
            msg = ws.next() => {
                let text = match msg {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                    Some(Ok(_)) => continue,
                };
                match &room {
                    Some(name) => rooms.broadcast(name, &text),
                    None => {
                        let Ok(join) = serde_json::from_str::<Join>(text.as_str()) else {
                            break;
                        };
                        rooms.join(&join.game_id, conn, tx.clone());
                        room = Some(join.game_id.into());
                        let ack = format!(r#"{{"type":"ack","id":{}}}"#, join.id);
                        let _ = tx.try_send(Utf8Bytes::from(ack));
                    }
                }
            }
            Some(first) = rx.recv() => {
                if write_batch(&mut ws, first, &mut rx).await.is_err() {
                    break;
                }
            }
        }
    }
    if let Some(name) = room {
        rooms.leave(&name, conn);
    }
}

async fn write_batch(
    ws: &mut tokio_tungstenite::WebSocketStream<TcpStream>,
    first: Utf8Bytes,
    rx: &mut mpsc::Receiver<Utf8Bytes>,
) -> Result<(), tokio_tungstenite::tungstenite::Error> {
    ws.feed(Message::Text(first)).await?;
    for _ in 1..BATCH {
        match rx.try_recv() {
            Ok(f) => ws.feed(Message::Text(f)).await?,
            Err(_) => break,
        }
    }
    ws.flush().await
}
