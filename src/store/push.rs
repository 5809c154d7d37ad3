//! Browsers' Web Push subscriptions (client-protocol/notifications.md#web-push): where a
//! push service takes messages for one browser of an account, and the keys a message is
//! encrypted with. Written by the notification service (`src/notify/push/`), which checks
//! them first.

use super::StoreError;

/// One browser's subscription, by its endpoint URL (a push service gives each browser
/// its own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushSubscription {
    pub account: String,
    pub endpoint: String,
    /// The browser's P-256 public key, base64url.
    pub p256dh: String,
    /// The browser's auth secret, base64url.
    pub auth: String,
    pub created_ms: i64,
}

/// What became of a subscription asked to be kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subscribed {
    /// Kept: new, or the endpoint's keys and account replaced.
    Kept,
    /// Not kept: the account already has its most.
    Full,
    /// Not kept: the account is disabled (it was disabled while the request was on its
    /// way: a disabled account's subscriptions are forgotten with the change).
    Disabled,
}

/// Push subscriptions. Synchronous like the rest; async callers use `spawn_blocking`.
pub trait PushStore {
    /// Keeps `sub`, replacing a subscription with the same endpoint (whichever account
    /// had it: a browser is one account's at a time); a new endpoint only while the
    /// account has fewer than `max`.
    fn add_push_subscription(
        &self,
        sub: &PushSubscription,
        max: u32,
    ) -> Result<Subscribed, StoreError>;

    /// The account's subscriptions, oldest first.
    fn push_subscriptions(&self, account: &str) -> Result<Vec<PushSubscription>, StoreError>;

    /// Forgets the subscription at `endpoint`: the account's (`Some`), or whoever's (the
    /// push service said it is gone). Whether there was one.
    fn remove_push_subscription(
        &self,
        endpoint: &str,
        account: Option<&str>,
    ) -> Result<bool, StoreError>;
}
