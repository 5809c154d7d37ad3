//! How long a plain HTTP connection may stay quiet. A connection waiting for a request (its
//! first, or the next one on a kept-alive connection) or for its client to read a response
//! is idle, and is closed after `http.keep_alive_secs`; once a request's first byte comes,
//! its headers must be complete within `http.header_read_timeout_secs`; once they are, its
//! body must be read within `http.body_read_timeout_secs`. A connection upgraded to a
//! WebSocket leaves all of this (its session has its own heartbeat and idle timeout) and
//! gives back its place among the plain HTTP connections.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker, ready};
use std::time::Duration;

use axum::body::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::limits::{AddressKey, Slot};

/// The settings the clock keeps a connection to.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub header: Duration,
    pub body: Duration,
    pub keep_alive: Duration,
}

impl Timeouts {
    pub fn of(http: &crate::config::HttpConfig) -> Timeouts {
        Timeouts {
            header: Duration::from_secs(http.header_read_timeout_secs),
            body: Duration::from_secs(http.body_read_timeout_secs),
            keep_alive: Duration::from_secs(http.keep_alive_secs),
        }
    }
}

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// No request under way since this instant.
    Idle(Instant),
    /// A request's first byte came at this instant; its headers are not complete yet.
    Head(Instant),
    /// This many requests are being answered (their bodies have deadlines of their own).
    Busy(usize),
    /// A WebSocket now: no deadline here.
    Upgraded,
}

/// The places a plain HTTP connection holds: one of all, and one of its address's
/// (none for a trusted proxy).
pub type HttpSlots = (Slot<()>, Option<Slot<AddressKey>>);

/// One connection's phase and places, shared by its socket ([`Watched`]) and its
/// requests (which mark when they start and end, and the upgrade).
#[derive(Debug)]
pub struct ConnState {
    timeouts: Timeouts,
    phase: Mutex<Phase>,
    slots: Mutex<Option<HttpSlots>>,
    /// The connection's task, as last seen waiting on its socket without a deadline:
    /// woken when a request ends, so the idle deadline is set even though hyper reads
    /// the socket again only when woken.
    waiting: Mutex<Option<Waker>>,
}

impl ConnState {
    pub fn new(timeouts: Timeouts, slots: HttpSlots) -> Arc<ConnState> {
        Arc::new(ConnState {
            timeouts,
            phase: Mutex::new(Phase::Idle(Instant::now())),
            slots: Mutex::new(Some(slots)),
            waiting: Mutex::new(None),
        })
    }

    fn phase(&self) -> std::sync::MutexGuard<'_, Phase> {
        self.phase.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn timeouts(&self) -> Timeouts {
        self.timeouts
    }

    /// When the connection must have moved on, if it must.
    fn deadline(&self) -> Option<Instant> {
        match *self.phase() {
            Phase::Idle(since) => Some(since + self.timeouts.keep_alive),
            Phase::Head(since) => Some(since + self.timeouts.header),
            Phase::Busy(_) | Phase::Upgraded => None,
        }
    }

    /// Bytes came in: an idle connection has begun a request.
    fn read_some(&self) {
        let mut phase = self.phase();
        if let Phase::Idle(_) = *phase {
            *phase = Phase::Head(Instant::now());
        }
    }

    /// Bytes went out: an idle connection's wait starts anew (its client is reading).
    fn wrote_some(&self) {
        let mut phase = self.phase();
        if let Phase::Idle(_) = *phase {
            *phase = Phase::Idle(Instant::now());
        }
    }

    /// A request's headers are in: it is answered without a deadline of the socket's
    /// until the returned guard goes.
    pub fn begin(self: &Arc<Self>) -> Answering {
        let mut phase = self.phase();
        *phase = match *phase {
            Phase::Busy(n) => Phase::Busy(n + 1),
            Phase::Upgraded => Phase::Upgraded,
            Phase::Idle(_) | Phase::Head(_) => Phase::Busy(1),
        };
        Answering(self.clone())
    }

    /// The connection is a WebSocket now: no deadline, and its places among the plain
    /// HTTP connections are given back.
    pub fn upgraded(&self) {
        *self.phase() = Phase::Upgraded;
        drop(
            self.waiting
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        drop(
            self.slots
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
    }
}

/// A request being answered; when it goes, the connection is idle again (unless another
/// request is under way).
pub struct Answering(Arc<ConnState>);

impl Drop for Answering {
    fn drop(&mut self) {
        let idle = {
            let mut phase = self.0.phase();
            *phase = match *phase {
                Phase::Busy(n) if n > 1 => Phase::Busy(n - 1),
                Phase::Busy(_) => Phase::Idle(Instant::now()),
                other => other,
            };
            matches!(*phase, Phase::Idle(_))
        };
        if idle
            && let Some(task) = &*self
                .0
                .waiting
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
        {
            task.wake_by_ref();
        }
    }
}

/// A socket whose reads and writes fail with `TimedOut` once its connection has stayed
/// quiet past its deadline.
pub struct Watched<T> {
    io: T,
    state: Arc<ConnState>,
    /// Made at the first wait, dropped at the upgrade.
    sleep: Option<Pin<Box<Sleep>>>,
}

impl<T> Watched<T> {
    pub fn new(io: T, state: Arc<ConnState>) -> Watched<T> {
        Watched {
            io,
            state,
            sleep: None,
        }
    }

    /// Keeps the task that uses the socket, to be woken when a request ends. An upgraded
    /// socket's task is the WebSocket session's, and nothing wakes it from here.
    fn remember(&self, cx: &Context<'_>) {
        if matches!(*self.state.phase(), Phase::Upgraded) {
            return;
        }
        let mut waiting = self
            .state
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !waiting.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            *waiting = Some(cx.waker().clone());
        }
    }

    /// The socket is waiting: pending until the deadline, then `TimedOut`.
    fn poll_deadline(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        let Some(deadline) = self.state.deadline() else {
            self.sleep = None;
            return Poll::Pending;
        };
        let sleep = self
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if sleep.deadline() != deadline {
            sleep.as_mut().reset(deadline);
        }
        ready!(sleep.as_mut().poll(cx));
        Poll::Ready(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client was quiet past the connection's deadline",
        ))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Watched<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.remember(cx);
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    this.state.read_some();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => this.poll_deadline(cx).map(Err),
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Watched<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.remember(cx);
        match Pin::new(&mut this.io).poll_write(cx, buf) {
            Poll::Ready(Ok(n)) => {
                if n > 0 {
                    this.state.wrote_some();
                }
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => this.poll_deadline(cx).map(Err),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// A request body that must be read whole within its deadline; past it, reading fails.
pub struct TimedBody<B> {
    inner: B,
    within: Duration,
    sleep: Pin<Box<Sleep>>,
    timed_out: bool,
}

impl<B> TimedBody<B> {
    pub fn new(inner: B, within: Duration) -> TimedBody<B> {
        TimedBody {
            inner,
            within,
            sleep: Box::pin(tokio::time::sleep(within)),
            timed_out: false,
        }
    }
}

/// What reading a body past its deadline fails with.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?}")]
pub struct BodyTimedOut(Duration);

impl<B> Body for TimedBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<axum::BoxError>,
{
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if this.timed_out {
            return Poll::Ready(None);
        }
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        ready!(this.sleep.as_mut().poll(cx));
        this.timed_out = true;
        Poll::Ready(Some(Err(Box::new(BodyTimedOut(this.within)))))
    }

    fn is_end_stream(&self) -> bool {
        self.timed_out || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
