//! Web Push (client-protocol/notifications.md#web-push): a notice, told to every browser
//! an account subscribed, through the push service each browser names. The message is
//! encrypted for the browser (RFC 8291, [`ece`]) and signed for the service as this
//! server (VAPID, RFC 8292, [`vapid`]).
//!
//! Off the notices' path: [`Pusher::push`] only queues (a bounded queue; a notice past
//! it is not pushed, and logged), and at most `push.concurrency` accounts are pushed to
//! at once. A subscription the service calls gone (404, 410) is forgotten. Each request
//! says how urgent its message is and what it replaces ([`headers`]).

pub mod ece;
mod headers;
mod send;
pub mod subscription;
pub mod vapid;

use std::sync::{Arc, Weak};
use std::time::Duration;

use hyper::header::{AUTHORIZATION, CONTENT_ENCODING, CONTENT_TYPE, HeaderName};
use p256::SecretKey;
use serde::Serialize;
use tokio::sync::{Semaphore, mpsc};

use crate::config::PushConfig;
use crate::protocol::{ErrorCode, Notice, NoticeKind, Refusal};
use crate::store::{PushSubscription, Store, Subscribed, blocking};
use crate::time::wall_ms;
use send::{Outcome, Sender};
pub use vapid::Vapid;

/// Why Web Push cannot be set up or a message made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PushError {
    #[error(
        "push.private_key is not a P-256 private key (32 bytes in base64url; `tengen push keys` makes one)"
    )]
    BadKey,
    #[error("a VAPID token could not be signed: {0}")]
    Sign(String),
    #[error("TLS for push requests cannot be set up: {0}")]
    Tls(String),
}

/// What a push message says: small JSON the service worker shows (web/sw.js).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    pub kind: NoticeKind,
    pub notice_id: u64,
    pub title: &'static str,
    pub body: String,
    /// What to open on a click: a path of this server's web client.
    pub url: String,
}

/// A notice's title, as the web client names its kind.
fn title(kind: NoticeKind) -> &'static str {
    match kind {
        NoticeKind::YourMove => "Your move",
        NoticeKind::Deadline => "Deadline near",
        NoticeKind::GameEnded => "Game ended",
        NoticeKind::ChallengeReceived => "Challenge",
        NoticeKind::RoundPaired => "Round paired",
        NoticeKind::VacationEnding => "Vacation ending",
    }
}

impl Message {
    pub fn of(notice: &Notice) -> Message {
        let p = &notice.payload;
        let url = match (&p.game_id, &p.tournament_id) {
            (Some(game), _) => format!("/#/game/{game}"),
            (None, Some(tournament)) => format!("/#/tournament/{tournament}"),
            (None, None) => "/#/".to_string(),
        };
        Message {
            kind: notice.kind,
            notice_id: notice.notice_id,
            title: title(notice.kind),
            body: super::mail::describe(notice),
            url,
        }
    }
}

/// A notice waiting to be pushed to its account's browsers.
struct Job {
    account: String,
    message: Message,
    /// The message's `Topic` ([`headers::topic`]).
    topic: String,
}

/// Checks `[push]` as `serve` will read it: the private key.
pub fn check(config: &PushConfig) -> Result<(), PushError> {
    match &config.private_key {
        Some(key) => Vapid::new(key, &config.subject).map(drop),
        None => Ok(()),
    }
}

/// The push side of the notification service.
pub struct Pusher {
    vapid: Vapid,
    store: Arc<dyn Store>,
    sender: Sender,
    allow_http: bool,
    max_subscriptions: u32,
    ttl_secs: u32,
    jobs: mpsc::Sender<Job>,
}

/// What a failed store call of a subscription request names.
const WHAT: &str = "push subscriptions";

impl Pusher {
    /// The pusher `[push]` asks for; None when push is off.
    pub fn new(
        config: &PushConfig,
        store: Arc<dyn Store>,
    ) -> Result<Option<Arc<Pusher>>, PushError> {
        let Some(key) = &config.private_key else {
            return Ok(None);
        };
        let (jobs, queue) = mpsc::channel(config.queue);
        let pusher = Arc::new(Pusher {
            vapid: Vapid::new(key, &config.subject)?,
            store,
            sender: Sender::new(Duration::from_secs(config.timeout_secs), config.allow_http)?,
            allow_http: config.allow_http,
            max_subscriptions: config.max_subscriptions,
            ttl_secs: config.ttl_secs,
            jobs,
        });
        let slots = Arc::new(Semaphore::new(config.concurrency));
        tokio::spawn(dispatch(Arc::downgrade(&pusher), queue, slots));
        Ok(Some(pusher))
    }

    /// The key browsers subscribe with.
    pub fn public_key(&self) -> &str {
        self.vapid.public_key()
    }

    /// Keeps `account`'s browser subscription, once checked.
    pub async fn subscribe(
        &self,
        account: &str,
        endpoint: &str,
        p256dh: &str,
        auth: &str,
    ) -> Result<(), Refusal> {
        subscription::check(endpoint, p256dh, auth, self.allow_http)?;
        let row = PushSubscription {
            account: account.to_string(),
            endpoint: endpoint.to_string(),
            p256dh: p256dh.trim_end_matches('=').to_string(),
            auth: auth.trim_end_matches('=').to_string(),
            created_ms: wall_ms(),
        };
        let (store, max) = (self.store.clone(), self.max_subscriptions);
        let kept = blocking(WHAT, move || store.add_push_subscription(&row, max)).await?;
        match kept {
            Subscribed::Kept => Ok(()),
            Subscribed::Disabled => Err(Refusal::new(
                ErrorCode::Unauthorized,
                "this account is disabled",
            )),
            Subscribed::Full => Err(Refusal::new(
                ErrorCode::LimitReached,
                format!(
                    "an account may subscribe at most {} browsers; remove one first",
                    self.max_subscriptions
                ),
            )),
        }
    }

    /// Forgets `account`'s subscription at `endpoint`; whether there was one.
    pub async fn unsubscribe(&self, account: &str, endpoint: &str) -> Result<bool, Refusal> {
        let (store, account, endpoint) = (
            self.store.clone(),
            account.to_string(),
            endpoint.to_string(),
        );
        blocking(WHAT, move || {
            store.remove_push_subscription(&endpoint, Some(&account))
        })
        .await
    }

    /// Queues `notice` for every browser `account` subscribed. Returns at once.
    pub fn push(&self, account: &str, notice: &Notice) {
        let job = Job {
            account: account.to_string(),
            message: Message::of(notice),
            topic: headers::topic(notice),
        };
        if self.jobs.try_send(job).is_err() {
            tracing::warn!(%account, "the push queue is full: a notice was not pushed");
        }
    }

    /// Pushes one notice to each of its account's browsers.
    async fn deliver(&self, job: Job) {
        let store = self.store.clone();
        let account = job.account.clone();
        let subs = match tokio::task::spawn_blocking(move || store.push_subscriptions(&account))
            .await
        {
            Ok(Ok(subs)) => subs,
            Ok(Err(e)) => {
                tracing::warn!(account = %job.account, error = %e, "push subscriptions cannot be read: a notice was not pushed");
                return;
            }
            Err(_) => return,
        };
        let payload = serde_json::to_vec(&job.message).unwrap_or_default();
        for sub in subs {
            self.deliver_one(&sub, &job, &payload).await;
        }
    }

    async fn deliver_one(&self, sub: &PushSubscription, job: &Job, payload: &[u8]) {
        let account = &sub.account;
        let checked = match subscription::check(
            &sub.endpoint,
            &sub.p256dh,
            &sub.auth,
            self.allow_http,
        ) {
            Ok(checked) => checked,
            Err(refusal) => {
                tracing::warn!(%account, why = %refusal.message, "a kept push subscription is not usable now; skipped");
                return;
            }
        };
        let endpoint = &checked.endpoint;
        // The origin names the service; the rest of the endpoint is the browser's secret.
        let origin = format!(
            "{}://{}",
            endpoint.scheme_str().unwrap_or("https"),
            endpoint.authority().map_or("", |a| a.as_str())
        );
        let salt: [u8; 16] = rand::random();
        let sender = loop {
            if let Ok(key) = SecretKey::from_slice(&rand::random::<[u8; 32]>()) {
                break key;
            }
        };
        let body = match ece::encrypt(payload, &checked.p256dh, &checked.auth, &sender, &salt) {
            Ok(body) => body,
            Err(e) => {
                tracing::warn!(%account, error = %e, "a push message cannot be encrypted");
                return;
            }
        };
        let now_secs = u64::try_from(wall_ms() / 1000).unwrap_or(0);
        let authorization = match self.vapid.authorization(&origin, now_secs) {
            Ok(a) => a,
            Err(e) => {
                tracing::warn!(%account, error = %e, "a push request cannot be signed");
                return;
            }
        };
        let headers = vec![
            (AUTHORIZATION, authorization),
            (CONTENT_ENCODING, "aes128gcm".to_string()),
            (CONTENT_TYPE, "application/octet-stream".to_string()),
            (HeaderName::from_static("ttl"), self.ttl_secs.to_string()),
            (
                HeaderName::from_static("urgency"),
                headers::urgency(job.message.kind).to_string(),
            ),
            (HeaderName::from_static("topic"), job.topic.clone()),
        ];
        match self.sender.post(endpoint, headers, body).await {
            Outcome::Accepted => {}
            Outcome::Gone => {
                tracing::info!(%account, service = %origin, "a push subscription is gone; forgotten");
                let (store, endpoint) = (self.store.clone(), sub.endpoint.clone());
                let forgot = tokio::task::spawn_blocking(move || {
                    store.remove_push_subscription(&endpoint, None)
                })
                .await;
                if let Ok(Err(e)) = forgot {
                    tracing::warn!(%account, error = %e, "a gone push subscription cannot be forgotten");
                }
            }
            Outcome::Refused(status) => {
                tracing::warn!(%account, service = %origin, %status, "a push service refused a message");
            }
            Outcome::Failed(why) => {
                tracing::warn!(%account, service = %origin, %why, "a push message could not be sent");
            }
        }
    }
}

/// Takes queued notices and pushes each on a task of its own, `slots` at once, for as
/// long as the pusher lives.
async fn dispatch(pusher: Weak<Pusher>, mut queue: mpsc::Receiver<Job>, slots: Arc<Semaphore>) {
    while let Some(job) = queue.recv().await {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let Some(pusher) = pusher.upgrade() else {
            return;
        };
        tokio::spawn(async move {
            pusher.deliver(job).await;
            drop(slot);
        });
    }
}

/// A fresh VAPID key pair in `[push]` form, for `tengen push keys`.
pub fn key_pair_config() -> String {
    let (private, public) = vapid::new_key_pair();
    format!(
        "# The public key browsers subscribe with (the server also serves it at GET /api/push/key):\n\
         # {public}\n\
         [push]\n\
         private_key = \"{private}\"\n\
         subject = \"mailto:you@example.org\"\n"
    )
}
