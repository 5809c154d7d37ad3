//! Abuse limits on the account routes: failed logins per account and per client address,
//! answered with delays that double with every failure past a free allowance, and new
//! identities (accounts and guests) per address per hour. The counters live in memory
//! only: a restart forgets them, which costs an attacker a restart they cannot cause.
//! Every table is bounded; when one is full the stalest entry makes room.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// Failed logins of one account allowed before delays begin.
pub const ACCOUNT_FREE_FAILURES: u32 = 5;
/// Failed logins from one address allowed before delays begin (several people may share
/// an address).
pub const ADDRESS_FREE_FAILURES: u32 = 20;
/// The first delay; each further failure doubles it.
pub const FIRST_DELAY: Duration = Duration::from_secs(1);
/// The longest delay.
pub const MAX_DELAY: Duration = Duration::from_secs(15 * 60);
/// Failures are forgotten after this long without a new one.
pub const FORGET_AFTER: Duration = Duration::from_secs(60 * 60);
/// The window of the per-address limit on new identities.
pub const REGISTRATION_WINDOW: Duration = Duration::from_secs(60 * 60);
/// Entries each table keeps at most.
const MAX_ENTRIES: usize = 100_000;

/// Failures of one key: how many, the last one, and until when attempts are refused.
#[derive(Debug, Clone, Copy)]
struct Strikes {
    failures: u32,
    last: Instant,
    blocked_until: Instant,
}

/// Failed attempts per key, with a doubling delay past `free` failures.
struct StrikeTable<K> {
    free: u32,
    entries: HashMap<K, Strikes>,
}

impl<K: Hash + Eq + Clone> StrikeTable<K> {
    fn new(free: u32) -> Self {
        StrikeTable {
            free,
            entries: HashMap::new(),
        }
    }

    /// How long `key` must still wait, if it must.
    fn wait(&self, key: &K, now: Instant) -> Option<Duration> {
        let s = self.entries.get(key)?;
        (s.blocked_until > now).then(|| s.blocked_until - now)
    }

    fn fail(&mut self, key: &K, now: Instant) {
        if !self.entries.contains_key(key) {
            make_room(&mut self.entries, now, |s| s.last);
        }
        let s = self.entries.entry(key.clone()).or_insert(Strikes {
            failures: 0,
            last: now,
            blocked_until: now,
        });
        if now.duration_since(s.last) >= FORGET_AFTER {
            s.failures = 0;
        }
        s.failures = s.failures.saturating_add(1);
        s.last = now;
        if s.failures > self.free {
            let doublings = (s.failures - self.free - 1).min(20);
            let delay = FIRST_DELAY.saturating_mul(1 << doublings).min(MAX_DELAY);
            s.blocked_until = now + delay;
        }
    }

    fn clear(&mut self, key: &K) {
        self.entries.remove(key);
    }
}

/// Removes stale entries when `entries` is full, and the stalest one if none is stale.
fn make_room<K: Hash + Eq + Clone, V>(
    entries: &mut HashMap<K, V>,
    now: Instant,
    last: impl Fn(&V) -> Instant,
) {
    if entries.len() < MAX_ENTRIES {
        return;
    }
    entries.retain(|_, v| now.duration_since(last(v)) < FORGET_AFTER);
    if entries.len() >= MAX_ENTRIES
        && let Some(oldest) = entries
            .iter()
            .min_by_key(|(_, v)| last(v))
            .map(|(k, _)| k.clone())
    {
        entries.remove(&oldest);
    }
}

/// New identities from one address in the current window.
#[derive(Debug, Clone, Copy)]
struct Window {
    start: Instant,
    count: u32,
}

/// The limits of one server, shared by every request.
pub struct Limiter {
    accounts: Mutex<StrikeTable<String>>,
    addresses: Mutex<StrikeTable<IpAddr>>,
    registrations: Mutex<HashMap<IpAddr, Window>>,
    registrations_per_hour: u32,
}

/// Why an attempt is refused before it is tried: wait this long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryAfter(pub Duration);

impl RetryAfter {
    /// Whole seconds, rounded up, at least 1: what `Retry-After` says.
    pub fn secs(self) -> u64 {
        let d = self.0;
        (d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(1)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding one of these locks leaves consistent counters behind.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Limiter {
    pub fn new(registrations_per_hour: u32) -> Limiter {
        Limiter {
            accounts: Mutex::new(StrikeTable::new(ACCOUNT_FREE_FAILURES)),
            addresses: Mutex::new(StrikeTable::new(ADDRESS_FREE_FAILURES)),
            registrations: Mutex::new(HashMap::new()),
            registrations_per_hour,
        }
    }

    /// Whether a login for `account` from `address` may be tried now.
    pub fn may_log_in(&self, account: &str, address: IpAddr) -> Result<(), RetryAfter> {
        let now = Instant::now();
        let by_account = lock(&self.accounts).wait(&account.to_string(), now);
        let by_address = lock(&self.addresses).wait(&address, now);
        match by_account.max(by_address) {
            Some(wait) => Err(RetryAfter(wait)),
            None => Ok(()),
        }
    }

    /// Counts a failed login against the account and the address.
    pub fn login_failed(&self, account: &str, address: IpAddr) {
        let now = Instant::now();
        lock(&self.accounts).fail(&account.to_string(), now);
        lock(&self.addresses).fail(&address, now);
    }

    /// A successful login clears the account's failures (not the address's: an attacker
    /// must not wipe their record by logging in to an account of their own).
    pub fn login_succeeded(&self, account: &str) {
        lock(&self.accounts).clear(&account.to_string());
    }

    /// Whether `address` may create a new identity (an account or a guest) now, or
    /// when its hourly window ends.
    pub fn may_register(&self, address: IpAddr) -> Result<(), RetryAfter> {
        let now = Instant::now();
        match lock(&self.registrations).get(&address) {
            Some(w)
                if now.duration_since(w.start) < REGISTRATION_WINDOW
                    && w.count >= self.registrations_per_hour =>
            {
                Err(RetryAfter(w.start + REGISTRATION_WINDOW - now))
            }
            _ => Ok(()),
        }
    }

    /// Counts a new identity created from `address`.
    pub fn registered(&self, address: IpAddr) {
        let now = Instant::now();
        let mut table = lock(&self.registrations);
        if !table.contains_key(&address) {
            make_room(&mut table, now, |w| w.start);
        }
        let w = table.entry(address).or_insert(Window {
            start: now,
            count: 0,
        });
        if now.duration_since(w.start) >= REGISTRATION_WINDOW {
            *w = Window {
                start: now,
                count: 0,
            };
        }
        w.count = w.count.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOME: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 1));
    const AWAY: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 2));

    #[tokio::test(start_paused = true)]
    async fn an_account_waits_twice_as_long_after_each_failure_past_the_free_ones() {
        let limiter = Limiter::new(5);
        for _ in 0..ACCOUNT_FREE_FAILURES {
            assert_eq!(limiter.may_log_in("alice", HOME), Ok(()));
            limiter.login_failed("alice", HOME);
        }
        assert_eq!(limiter.may_log_in("alice", HOME), Ok(()));
        let mut expected = FIRST_DELAY;
        for _ in 0..5 {
            limiter.login_failed("alice", AWAY);
            // From any address: the account itself is held.
            assert_eq!(limiter.may_log_in("alice", AWAY), Err(RetryAfter(expected)));
            tokio::time::advance(expected - Duration::from_millis(1)).await;
            assert_eq!(
                limiter.may_log_in("alice", HOME),
                Err(RetryAfter(Duration::from_millis(1)))
            );
            tokio::time::advance(Duration::from_millis(1)).await;
            assert_eq!(limiter.may_log_in("alice", HOME), Ok(()));
            expected *= 2;
        }
        // Other accounts are not held.
        assert_eq!(limiter.may_log_in("bob", HOME), Ok(()));
    }

    #[tokio::test(start_paused = true)]
    async fn delays_stop_growing_at_the_cap_and_are_forgotten_after_an_hour() {
        let limiter = Limiter::new(5);
        for _ in 0..40 {
            limiter.login_failed("alice", HOME);
        }
        assert_eq!(
            limiter.may_log_in("alice", AWAY),
            Err(RetryAfter(MAX_DELAY))
        );
        tokio::time::advance(FORGET_AFTER).await;
        assert_eq!(limiter.may_log_in("alice", AWAY), Ok(()));
        limiter.login_failed("alice", AWAY);
        assert_eq!(limiter.may_log_in("alice", AWAY), Ok(()), "counting anew");
    }

    #[tokio::test(start_paused = true)]
    async fn an_address_trying_many_accounts_is_held_and_success_clears_only_the_account() {
        let limiter = Limiter::new(5);
        for i in 0..ADDRESS_FREE_FAILURES {
            limiter.login_failed(&format!("user{i}"), HOME);
        }
        assert_eq!(limiter.may_log_in("someone", HOME), Ok(()));
        limiter.login_failed("someone", HOME);
        assert_eq!(
            limiter.may_log_in("someone-else", HOME),
            Err(RetryAfter(FIRST_DELAY))
        );
        assert_eq!(limiter.may_log_in("someone-else", AWAY), Ok(()));
        limiter.login_succeeded("someone");
        assert!(limiter.may_log_in("anyone", HOME).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn new_identities_per_address_per_hour() {
        let limiter = Limiter::new(3);
        for _ in 0..3 {
            assert_eq!(limiter.may_register(HOME), Ok(()));
            limiter.registered(HOME);
        }
        tokio::time::advance(Duration::from_secs(600)).await;
        assert_eq!(
            limiter.may_register(HOME),
            Err(RetryAfter(Duration::from_secs(3000)))
        );
        assert_eq!(limiter.may_register(AWAY), Ok(()));
        tokio::time::advance(Duration::from_secs(3000)).await;
        assert_eq!(limiter.may_register(HOME), Ok(()));
        limiter.registered(HOME);
        assert_eq!(limiter.may_register(HOME), Ok(()), "a new window");
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        assert_eq!(RetryAfter(Duration::from_millis(1)).secs(), 1);
        assert_eq!(RetryAfter(Duration::from_millis(2001)).secs(), 3);
        assert_eq!(RetryAfter(Duration::from_secs(2)).secs(), 2);
    }
}
