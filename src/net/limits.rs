//! Per-connection message rate limiting (a token bucket: refused messages are answered
//! with `rate_limited`, a connection that keeps flooding is closed), and the count of each
//! user's open connections, so that one user cannot take every connection slot.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::time::Instant;

use crate::protocol::{ErrorCode, Refusal};

/// A token bucket of `burst` tokens refilled at `per_second`.
pub struct RateLimit {
    tokens: f64,
    burst: f64,
    per_second: f64,
    last: Instant,
    /// Messages refused in a row.
    pub refused_in_row: u32,
}

impl RateLimit {
    pub fn new(per_second: u32, burst: u32) -> RateLimit {
        RateLimit {
            tokens: f64::from(burst.max(1)),
            burst: f64::from(burst.max(1)),
            per_second: f64::from(per_second.max(1)),
            last: Instant::now(),
            refused_in_row: 0,
        }
    }

    /// Takes one token if there is one.
    pub fn allow(&mut self) -> bool {
        let now = Instant::now();
        let refill = now.duration_since(self.last).as_secs_f64() * self.per_second;
        self.tokens = (self.tokens + refill).min(self.burst);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            self.refused_in_row = 0;
            true
        } else {
            self.refused_in_row += 1;
            false
        }
    }
}

/// Open connections per logged-in user. An entry lives only while its user has a
/// connection, so the table is bounded by the connections themselves.
#[derive(Debug, Default)]
pub struct PerUser {
    open: Mutex<HashMap<String, usize>>,
}

/// One counted connection of a user; dropping it frees the place.
#[derive(Debug)]
pub struct UserSlot {
    table: Arc<PerUser>,
    user: String,
}

impl PerUser {
    /// Counts one more connection of `user`, unless it already has `max`.
    pub fn enter(self: &Arc<Self>, user: &str, max: usize) -> Result<UserSlot, Refusal> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let n = open.entry(user.to_string()).or_insert(0);
        if *n >= max {
            if *n == 0 {
                open.remove(user);
            }
            return Err(Refusal::new(
                ErrorCode::LimitReached,
                match max {
                    1 => "you already have a connection open; close it first".into(),
                    _ => format!("you already have {max} connections open; close one first"),
                },
            ));
        }
        *n += 1;
        Ok(UserSlot {
            table: self.clone(),
            user: user.to_string(),
        })
    }

    #[cfg(test)]
    fn users(&self) -> usize {
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl Drop for UserSlot {
    fn drop(&mut self) {
        let mut open = self
            .table
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = open.get_mut(&self.user) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.user);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_burst_passes_then_the_rate_holds() {
        let mut r = RateLimit::new(10, 5);
        assert_eq!((0..5).filter(|_| r.allow()).count(), 5);
        assert!(!r.allow());
        assert_eq!(r.refused_in_row, 1);
        tokio::time::advance(std::time::Duration::from_millis(300)).await;
        assert_eq!((0..5).filter(|_| r.allow()).count(), 3);
        assert_eq!(r.refused_in_row, 2);
    }

    #[test]
    fn each_user_gets_at_most_max_places() {
        let table = Arc::new(PerUser::default());
        let a1 = table.enter("alice", 2).unwrap();
        let a2 = table.enter("alice", 2).unwrap();
        let refused = table.enter("alice", 2).unwrap_err();
        assert_eq!(refused.code, ErrorCode::LimitReached);
        // Others are not affected.
        let b = table.enter("bob", 2).unwrap();
        drop(a1);
        let a3 = table.enter("alice", 2).unwrap();
        drop((a2, a3, b));
        assert_eq!(table.users(), 0, "entries go with their last connection");
        assert!(table.enter("carol", 0).is_err());
        assert_eq!(table.users(), 0);
    }
}
