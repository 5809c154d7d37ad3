//! Shutdown as mini-redis does it: one signal that every long-lived task listens for, and
//! a drop-guard held by every connection, so the server learns that the last one has
//! finished when the last guard is dropped, with no count kept by hand.
//!
//! The signal is a `watch` channel, tokio's broadcast that keeps its last value: a task
//! or a connection that starts listening after the signal went out sees it at once.

use std::sync::{Mutex, PoisonError};

use tokio::sync::{mpsc, watch};

pub struct Shutdown {
    signal: watch::Sender<bool>,
    /// Cloned into every connection's [`Guard`]; dropped here when the wait for the
    /// connections begins, so the channel closes with the last guard.
    guards: Mutex<Option<mpsc::Sender<()>>>,
    /// Counts the guards alive without keeping the channel open.
    counter: mpsc::WeakSender<()>,
    /// Yields nothing, ever: it ends once every sender (every guard) is gone.
    finished: tokio::sync::Mutex<mpsc::Receiver<()>>,
}

/// Held by a connection while it is open; dropping it says the connection has finished
/// (its leaving recorded, its last frames sent).
pub struct Guard {
    _open: mpsc::Sender<()>,
}

impl Default for Shutdown {
    fn default() -> Shutdown {
        let (sender, finished) = mpsc::channel(1);
        Shutdown {
            signal: watch::Sender::new(false),
            counter: sender.downgrade(),
            guards: Mutex::new(Some(sender)),
            finished: tokio::sync::Mutex::new(finished),
        }
    }
}

impl Shutdown {
    /// Sends the signal (once; later calls change nothing).
    pub fn begin(&self) {
        self.signal.send_replace(true);
    }

    /// Whether the signal has gone out.
    pub fn has_begun(&self) -> bool {
        *self.signal.borrow()
    }

    /// Ready once the signal has gone out (at once if it has already).
    pub fn begun(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut signal = self.signal.subscribe();
        async move {
            let _ = signal.wait_for(|stop| *stop).await;
        }
    }

    /// The signal, for a part that checks it now and then.
    pub fn signal(&self) -> watch::Receiver<bool> {
        self.signal.subscribe()
    }

    /// A guard for a connection that opens now. None once every connection has finished
    /// (a straggler after that is not waited for).
    pub fn guard(&self) -> Option<Guard> {
        let open = self.counter.upgrade()?;
        Some(Guard { _open: open })
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        let held = self.lock_guards().is_some();
        self.counter.strong_count() - usize::from(held)
    }

    /// Returns once every connection's guard has been dropped.
    pub async fn finished(&self) {
        drop(self.lock_guards().take());
        let _ = self.finished.lock().await.recv().await;
    }

    fn lock_guards(&self) -> std::sync::MutexGuard<'_, Option<mpsc::Sender<()>>> {
        // Each use takes or reads the sender whole: a panic cannot leave it torn.
        self.guards.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn finished_waits_for_the_last_guard_and_open_counts_them() {
        let shutdown = Shutdown::default();
        assert_eq!(shutdown.open(), 0);
        let (a, b) = (shutdown.guard(), shutdown.guard());
        assert_eq!(shutdown.open(), 2);
        shutdown.begin();
        assert!(shutdown.has_begun());
        shutdown.begun().await;
        drop(a);
        let mut finished = std::pin::pin!(shutdown.finished());
        assert!(futures_util::poll!(&mut finished).is_pending());
        drop(b);
        finished.await;
        assert_eq!(shutdown.open(), 0);
    }
}
