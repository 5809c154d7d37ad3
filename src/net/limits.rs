//! Per-connection message rate limiting (a token bucket: refused messages are answered
//! with `rate_limited`, a connection that keeps flooding is closed), and the count of each
//! user's and each client address's open connections, so that no one user or address
//! can take every connection slot.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
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

    /// `per_minute` a minute, as many at once.
    pub fn per_minute(per_minute: u32) -> RateLimit {
        let n = f64::from(per_minute.max(1));
        RateLimit {
            tokens: n,
            burst: n,
            per_second: n / 60.0,
            last: Instant::now(),
            refused_in_row: 0,
        }
    }

    /// Whether the bucket has filled up again: its owner has been quiet, and a new
    /// bucket would be the same.
    pub fn is_full(&self) -> bool {
        let refill = self.last.elapsed().as_secs_f64() * self.per_second;
        self.tokens + refill >= self.burst
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

/// How long a connection without a login has followed nothing (no game joined, the
/// lobby not watched): such a connection costs a slot and serves no one, so it is closed
/// after `limits.anonymous_idle_secs`. Looked at on each heartbeat.
pub struct Unfollowed {
    limit: std::time::Duration,
    since: Option<Instant>,
}

impl Unfollowed {
    pub fn new(limit: std::time::Duration) -> Unfollowed {
        Unfollowed {
            limit,
            since: Some(Instant::now()),
        }
    }

    /// Whether a connection that `follows` something or not has now followed nothing
    /// for too long.
    pub fn too_long(&mut self, follows: bool) -> bool {
        if follows {
            self.since = None;
            return false;
        }
        self.since.get_or_insert_with(Instant::now).elapsed() >= self.limit
    }
}

/// Open connections counted by a key (a user, a client address), each key's count capped,
/// with the total of all keys. An entry lives only while its key has a connection, so
/// the table is bounded by the connections themselves.
#[derive(Debug)]
pub struct Counted<K: Hash + Eq> {
    open: Mutex<HashMap<K, usize>>,
    total: AtomicUsize,
}

impl<K: Hash + Eq> Default for Counted<K> {
    fn default() -> Self {
        Counted {
            open: Mutex::new(HashMap::new()),
            total: AtomicUsize::new(0),
        }
    }
}

/// One counted connection; dropping it frees the place.
#[derive(Debug)]
pub struct Slot<K: Hash + Eq> {
    table: Arc<Counted<K>>,
    key: K,
}

/// Open connections per logged-in user.
pub type PerUser = Counted<String>;
/// One counted connection of a user.
pub type UserSlot = Slot<String>;
/// Open connections per client address ([`AddressKey`]).
pub type PerAddress = Counted<AddressKey>;

impl<K: Hash + Eq + Clone> Counted<K> {
    /// Counts one more connection of `key`, unless it already has `max`; else the
    /// number it has.
    pub fn take(self: &Arc<Self>, key: &K, max: usize) -> Result<Slot<K>, usize> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let n = open.get(key).copied().unwrap_or(0);
        if n >= max {
            return Err(n);
        }
        open.insert(key.clone(), n + 1);
        self.total.fetch_add(1, Ordering::Relaxed);
        Ok(Slot {
            table: self.clone(),
            key: key.clone(),
        })
    }

    /// Connections counted, of every key.
    pub fn total(&self) -> usize {
        self.total.load(Ordering::Relaxed)
    }

    #[cfg(test)]
    fn keys(&self) -> usize {
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl PerUser {
    /// Counts one more connection of `user`, unless it already has `max`.
    pub fn enter(self: &Arc<Self>, user: &str, max: usize) -> Result<UserSlot, Refusal> {
        self.take(&user.to_string(), max).map_err(|_| {
            Refusal::new(
                ErrorCode::LimitReached,
                match max {
                    1 => "you already have a connection open; close it first".into(),
                    _ => format!("you already have {max} connections open; close one first"),
                },
            )
        })
    }
}

impl<K: Hash + Eq> Drop for Slot<K> {
    fn drop(&mut self) {
        let mut open = self
            .table
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = open.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.key);
            }
        }
        self.table.total.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What per-address limits count a client by: an IPv4 address, or the /64 network of an
/// IPv6 one, since one subscriber is given a whole /64 and can use any address in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressKey {
    V4(u32),
    /// The first 64 bits.
    V6(u64),
}

impl AddressKey {
    pub fn of(ip: IpAddr) -> AddressKey {
        match ip {
            IpAddr::V4(v4) => AddressKey::V4(v4.to_bits()),
            // An IPv4-mapped address is the IPv4 client it maps.
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => AddressKey::V4(v4.to_bits()),
                None => AddressKey::V6((v6.to_bits() >> 64) as u64),
            },
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

    #[tokio::test(start_paused = true)]
    async fn a_connection_that_follows_nothing_is_idle_from_its_start_or_its_last_follow() {
        let mut idle = Unfollowed::new(std::time::Duration::from_secs(30));
        tokio::time::advance(std::time::Duration::from_secs(20)).await;
        assert!(!idle.too_long(false));
        tokio::time::advance(std::time::Duration::from_secs(10)).await;
        assert!(idle.too_long(false));
        assert!(!idle.too_long(true), "following resets it");
        tokio::time::advance(std::time::Duration::from_secs(40)).await;
        assert!(
            !idle.too_long(false),
            "counted from the first look without a follow"
        );
        tokio::time::advance(std::time::Duration::from_secs(30)).await;
        assert!(idle.too_long(false));
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
        assert_eq!(table.total(), 3);
        drop((a2, a3, b));
        assert_eq!(table.keys(), 0, "entries go with their last connection");
        assert!(table.enter("carol", 0).is_err());
        assert_eq!((table.keys(), table.total()), (0, 0));
    }

    #[test]
    fn an_ipv6_client_is_its_64_bit_network() {
        let key = |s: &str| AddressKey::of(s.parse().unwrap());
        assert_eq!(key("2001:db8:1:2::1"), key("2001:db8:1:2:ffff::9"));
        assert_ne!(key("2001:db8:1:2::1"), key("2001:db8:1:3::1"));
        assert_eq!(key("::ffff:10.0.0.1"), key("10.0.0.1"));
        assert_ne!(key("10.0.0.1"), key("10.0.0.2"));
    }
}
