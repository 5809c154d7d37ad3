//! One load connection: its socket, the frames it reads (event numbers checked,
//! deliveries counted, spectators' latencies recorded) and the counters every task of a
//! share records into.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{WebSocketStream, client_async_with_config};

use super::Plan;
use super::hist::AtomicHistogram;
use crate::protocol::{
    ErrorCode, EventFrame, GameEvent, RequestId, ServerFrame, ServerMsg, decode_server,
};

type Ws = WebSocketStream<TcpStream>;

/// How long one setup step or one move may take before it counts as failed.
pub(super) const STEP_TIMEOUT: Duration = Duration::from_secs(20);
/// Sent moves remembered per game for matching spectators' receipts.
pub(super) const SENT_SLOTS: usize = 64;

/// Counters and histograms every task of the share records into.
pub(super) struct Stats {
    pub(super) epoch: Instant,
    pub(super) measuring: AtomicBool,
    pub(super) spectator: AtomicHistogram,
    pub(super) opponent: AtomicHistogram,
    pub(super) ack: AtomicHistogram,
    pub(super) deliveries: AtomicU64,
    pub(super) moves: AtomicU64,
    pub(super) gaps: AtomicU64,
    pub(super) out_of_order: AtomicU64,
    pub(super) unmatched: AtomicU64,
    pub(super) exhausted: AtomicU64,
    pub(super) errors: Mutex<BTreeMap<String, u64>>,
}

impl Stats {
    pub(super) fn new() -> Stats {
        Stats {
            epoch: Instant::now(),
            measuring: AtomicBool::new(false),
            spectator: AtomicHistogram::default(),
            opponent: AtomicHistogram::default(),
            ack: AtomicHistogram::default(),
            deliveries: AtomicU64::new(0),
            moves: AtomicU64::new(0),
            gaps: AtomicU64::new(0),
            out_of_order: AtomicU64::new(0),
            unmatched: AtomicU64::new(0),
            exhausted: AtomicU64::new(0),
            errors: Mutex::new(BTreeMap::new()),
        }
    }

    pub(super) fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    pub(super) fn measuring(&self) -> bool {
        self.measuring.load(Ordering::Relaxed)
    }

    pub(super) fn error(&self, kind: impl Into<String>) {
        let mut errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        *errors.entry(kind.into()).or_insert(0) += 1;
    }
}

/// What the spectators of one game share with its driver.
pub(super) struct GameShared {
    /// Send time of recent moves: `(move_number << 40) | micros`, by move number.
    sent: [AtomicU64; SENT_SLOTS],
    /// The last event each spectator has seen.
    pub(super) seen: Box<[AtomicU64]>,
    /// The seq of the game's last move once the driver stopped; 0 while it runs.
    pub(super) last: AtomicU64,
}

impl GameShared {
    pub(super) fn new(spectators: u32) -> GameShared {
        GameShared {
            sent: std::array::from_fn(|_| AtomicU64::new(0)),
            seen: (0..spectators).map(|_| AtomicU64::new(0)).collect(),
            last: AtomicU64::new(0),
        }
    }

    pub(super) fn record_send(&self, n: u32, us: u64) {
        let packed = (u64::from(n) << 40) | (us & ((1 << 40) - 1));
        self.sent[n as usize % SENT_SLOTS].store(packed, Ordering::Release);
    }

    pub(super) fn send_time(&self, n: u32) -> Option<u64> {
        let packed = self.sent[n as usize % SENT_SLOTS].load(Ordering::Acquire);
        (packed >> 40 == u64::from(n)).then_some(packed & ((1 << 40) - 1))
    }
}

/// What a received frame was, as far as the tool cares.
#[derive(Debug)]
pub(super) enum Got {
    Move(u32),
    Ack {
        id: Option<u64>,
        game_id: Option<String>,
    },
    Refused {
        id: Option<u64>,
        code: ErrorCode,
    },
    Other(Box<ServerFrame>),
}

/// The tool numbers its requests; any other id is not one of its own.
fn number(id: Option<RequestId>) -> Option<u64> {
    match id? {
        RequestId::Number(n) => Some(n),
        RequestId::Text(_) => None,
    }
}

/// A failure, named by its kind for the error counts.
#[derive(Debug)]
pub(super) struct Fail(pub(super) String);

impl Fail {
    pub(super) fn new(kind: impl Into<String>) -> Fail {
        Fail(kind.into())
    }
}

/// Whose connection this is: spectators' receipts are timed here, players' by the driver.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Seat {
    Player,
    Spectator,
}

/// One WebSocket connection and its view of one game's event numbers.
pub(super) struct Conn {
    pub(super) ws: Ws,
    pub(super) seat: Seat,
    /// The seq expected next; None before the snapshot.
    pub(super) next_seq: Option<u64>,
    pub(super) last_seq: u64,
}

impl Conn {
    /// Opens connection number `index` of the run to node `node` of the plan.
    pub(super) async fn open(
        plan: &Plan,
        node: usize,
        index: u64,
        token: Option<&str>,
    ) -> Result<Conn, Fail> {
        let (server, base) = (plan.servers[node], &plan.urls[node]);
        let socket = if server.is_ipv4() {
            TcpSocket::new_v4()
        } else {
            TcpSocket::new_v6()
        }
        .map_err(|e| Fail::new(format!("socket: {}", e.kind())))?;
        if !plan.sources.is_empty() {
            let source = plan.sources[(index % plan.sources.len() as u64) as usize];
            socket
                .set_reuseaddr(true)
                .map_err(|e| Fail::new(format!("bind: {}", e.kind())))?;
            socket
                .bind(std::net::SocketAddr::new(source, 0))
                .map_err(|e| Fail::new(format!("bind: {}", e.kind())))?;
        }
        let stream = socket
            .connect(server)
            .await
            .map_err(|e| Fail::new(format!("connect: {}", e.kind())))?;
        let _ = stream.set_nodelay(true);
        let url = match token {
            Some(t) => format!("{base}?token={t}"),
            None => base.clone(),
        };
        let config = WebSocketConfig::default()
            .read_buffer_size(8 * 1024)
            .write_buffer_size(8 * 1024);
        let (ws, _) = client_async_with_config(url, stream, Some(config))
            .await
            .map_err(|e| Fail::new(format!("handshake: {}", short(&e.to_string()))))?;
        Ok(Conn {
            ws,
            seat: Seat::Player,
            next_seq: None,
            last_seq: 0,
        })
    }

    pub(super) async fn send(&mut self, text: String) -> Result<(), Fail> {
        self.ws
            .send(Message::text(text))
            .await
            .map_err(|_| Fail::new("send failed"))
    }

    /// The next frame that matters, with event numbers checked, deliveries counted and,
    /// for a spectator, the move's latency recorded.
    pub(super) async fn recv(
        &mut self,
        stats: &Stats,
        game: Option<&GameShared>,
    ) -> Result<Got, Fail> {
        loop {
            let msg = match self.ws.next().await {
                Some(Ok(msg)) => msg,
                Some(Err(_)) | None => return Err(Fail::new("connection lost")),
            };
            let text = match msg {
                Message::Text(t) => t,
                Message::Close(frame) => {
                    let code = frame.map_or(0, |f| u16::from(f.code));
                    return Err(Fail::new(format!("closed by server ({code})")));
                }
                _ => continue,
            };
            let Ok(frame) = decode_server(text.as_str()) else {
                stats.error("unreadable frame");
                continue;
            };
            match &frame {
                ServerFrame::Msg(ServerMsg::Snapshot(s)) => {
                    self.next_seq = Some(s.seq + 1);
                    self.last_seq = s.seq;
                }
                ServerFrame::Event(EventFrame { seq, .. })
                | ServerFrame::Unknown {
                    seq: Some(seq),
                    game_id: Some(_),
                    ..
                } => self.numbered(stats, *seq),
                _ => {}
            }
            return Ok(match frame {
                ServerFrame::Event(EventFrame {
                    event: GameEvent::MovePlayed { move_number, .. },
                    ..
                }) => {
                    if stats.measuring() {
                        stats.deliveries.fetch_add(1, Ordering::Relaxed);
                        if self.seat == Seat::Spectator {
                            match game.and_then(|g| g.send_time(move_number)) {
                                Some(t) => stats.spectator.record(stats.now_us().saturating_sub(t)),
                                None => {
                                    stats.unmatched.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                        }
                    }
                    Got::Move(move_number)
                }
                ServerFrame::Msg(ServerMsg::Ack { id, game_id, .. }) => Got::Ack {
                    id: number(id),
                    game_id,
                },
                ServerFrame::Msg(ServerMsg::Error { id, code, .. }) => Got::Refused {
                    id: number(id),
                    code,
                },
                other => Got::Other(Box::new(other)),
            });
        }
    }

    /// Checks a numbered event's `seq` against the last one: gaps and reordering counted.
    fn numbered(&mut self, stats: &Stats, seq: u64) {
        match self.next_seq {
            Some(next) if seq == next => {}
            Some(next) if seq > next => {
                stats.gaps.fetch_add(1, Ordering::Relaxed);
            }
            Some(_) => {
                stats.out_of_order.fetch_add(1, Ordering::Relaxed);
            }
            None => {}
        }
        if seq >= self.next_seq.unwrap_or(0) {
            self.next_seq = Some(seq + 1);
            self.last_seq = seq;
        }
    }

    /// Reads until `want` picks a frame out, within [`STEP_TIMEOUT`]; a refusal of
    /// request `id` fails.
    pub(super) async fn until<T>(
        &mut self,
        stats: &Stats,
        id: Option<u64>,
        mut want: impl FnMut(&Got) -> Option<T>,
    ) -> Result<T, Fail> {
        let wait = async {
            loop {
                let got = self.recv(stats, None).await?;
                match &got {
                    Got::Refused {
                        id: Some(rid),
                        code,
                    } if Some(*rid) == id => {
                        return Err(Fail::new(format!("refused: {}", code.as_str())));
                    }
                    _ => {}
                }
                if let Some(t) = want(&got) {
                    return Ok(t);
                }
            }
        };
        tokio::time::timeout(STEP_TIMEOUT, wait)
            .await
            .map_err(|_| Fail::new("setup timed out"))?
    }

    /// Sends a request and waits for its `ack`; returns the ack's `game_id`.
    pub(super) async fn request(
        &mut self,
        stats: &Stats,
        id: u64,
        text: String,
    ) -> Result<Option<String>, Fail> {
        self.send(text).await?;
        self.until(stats, Some(id), |got| match got {
            Got::Ack {
                id: Some(a),
                game_id,
            } if *a == id => Some(game_id.clone()),
            _ => None,
        })
        .await
    }

    /// Closes politely, but never waits long.
    pub(super) async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(1), self.ws.close(None)).await;
    }
}

fn short(s: &str) -> String {
    s.chars().take(80).collect()
}
