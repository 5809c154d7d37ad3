//! Notices in the store: each account's list of what happened while it looked away (the
//! kind and payload kept as text the store never reads), bounded per account, and each
//! account's mail preferences. Written by the notification service (`src/notify/`).

use super::StoreError;

/// A notice to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewNotice {
    pub account: String,
    /// The kind's wire name (`your_move`, `game_ended`, …).
    pub kind: String,
    /// The payload as JSON text.
    pub payload: String,
    pub at_ms: i64,
    /// Whether it waits for the account's next mail digest.
    pub digest: bool,
}

/// A kept notice with its number, which grows with every notice of the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoticeRow {
    pub id: u64,
    pub account: String,
    pub kind: String,
    pub payload: String,
    pub at_ms: i64,
    pub read: bool,
}

/// An account's mail preferences: where mail goes, whether that address was proven, how
/// each kind is mailed (JSON text the store never reads), and when the last digest left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailPrefs {
    pub account: String,
    pub address: Option<String>,
    pub verified: bool,
    pub modes: String,
    pub last_digest_ms: Option<i64>,
}

/// Notices and mail preferences. Synchronous like the rest; async callers use
/// `spawn_blocking`.
pub trait NoticeStore {
    /// Keeps a notice and forgets the account's oldest beyond the newest `keep`, in one
    /// transaction; the new notice's id.
    fn add_notice(&self, notice: &NewNotice, keep: u32) -> Result<u64, StoreError>;

    /// The account's notices, newest first: those with an id below `before` (all, without
    /// it), at most `limit`.
    fn notices(
        &self,
        account: &str,
        before: Option<u64>,
        limit: u32,
    ) -> Result<Vec<NoticeRow>, StoreError>;

    /// How many of the account's notices are unread.
    fn unread_notices(&self, account: &str) -> Result<u64, StoreError>;

    /// Marks read every notice of the account with an id up to `up_to`; how many were
    /// unread.
    fn mark_notices_read(&self, account: &str, up_to: u64) -> Result<u64, StoreError>;

    /// The account's mail preferences, if it ever set any.
    fn mail_prefs(&self, account: &str) -> Result<Option<MailPrefs>, StoreError>;

    /// Replaces the account's mail preferences.
    fn set_mail_prefs(&self, prefs: &MailPrefs) -> Result<(), StoreError>;

    /// Accounts with notices waiting for a digest whose last digest left at or before
    /// `sent_before_ms` (or never), by account, at most `limit`.
    fn digests_due(&self, sent_before_ms: i64, limit: u32) -> Result<Vec<String>, StoreError>;

    /// The account's notices waiting for its digest, oldest first.
    fn digest_notices(&self, account: &str) -> Result<Vec<NoticeRow>, StoreError>;

    /// Takes the account's digest for the caller, once: its last digest becomes `at_ms`
    /// if it left at or before `sent_before_ms` (or never). False when another node (in
    /// a cluster) took it first.
    fn claim_digest(
        &self,
        account: &str,
        sent_before_ms: i64,
        at_ms: i64,
    ) -> Result<bool, StoreError>;

    /// A digest with the account's waiting notices up to `up_to` left: they wait no more.
    fn digest_sent(&self, account: &str, up_to: u64) -> Result<(), StoreError>;
}
