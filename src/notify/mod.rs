//! notify: each account's notices (client-protocol/notifications.md). A notice is kept in
//! the store (the account's newest `notify.keep_per_account`), pushed at once to every
//! connection of its account on every node, sent by Web Push to the browsers the account
//! subscribed (when `[push]` is on), and mailed when the account asked for it: at once,
//! or in a digest at most every `mail.digest_hours`. Sources: the game-lifecycle
//! bus (a game ended), the lobby's challenges, a room's move with its player away, and
//! any part that calls [`Notices::notify`] (deadlines, vacations, tournament rounds).
//!
//! Never on a game's path: [`Notices::notify`] returns at once and the work runs on a
//! task of its own, so a slow store or SMTP server delays only the notice.

pub mod links;
mod mail;
mod prefs;
pub mod push;
pub mod your_move;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;

use crate::config::Config;
use crate::fanout::{Frame, encode};
use crate::lifecycle::GameNews;
use crate::lobby::Lobby;
use crate::protocol::{
    ErrorCode, MailMode, Notice, NoticeKind, NoticePayload, NotificationSettings, Refusal,
    ServerMsg, UserInfo,
};
use crate::store::{NewNotice, NoticeRow, Store, blocking};
use crate::time::wall_ms;
pub use links::{Link, LinkError, Links};
pub use mail::{MailError, Mailer, check as check_mail};
use prefs::{Prefs, check_address};
pub use push::{PushError, Pusher, check as check_push};

/// The most notices one `list_notices` page holds.
pub const MAX_PAGE: u32 = 100;
/// Accounts mailed a digest per sweep at most; the rest wait for the next.
const DIGESTS_PER_SWEEP: u32 = 100;

/// Where a notice is pushed: every connection of its account (in a cluster, on every
/// node). The lobby is one.
pub trait Deliver: Send + Sync {
    fn to_user(&self, user_id: &str, frame: &Frame);
}

impl Deliver for Lobby {
    fn to_user(&self, user_id: &str, frame: &Frame) {
        self.send_to_user(user_id, frame);
    }
}

/// How notices leave by mail: the links' key, and the SMTP server when `[mail]` is on.
pub struct Mailing {
    links: Links,
    mailer: Option<Mailer>,
}

impl Mailing {
    /// With the links' key derived from `secret`, the server's token secret, which every
    /// node of a cluster shares; the SMTP password is read here.
    pub fn new(config: &crate::config::MailConfig, secret: &[u8]) -> Result<Mailing, MailError> {
        let links = Links::new(secret);
        let mailer = match config.enabled {
            true => Some(Mailer::new(config, links.clone())?),
            false => None,
        };
        Ok(Mailing { links, mailer })
    }
}

/// The notification service.
pub struct Notices {
    store: Arc<dyn Store>,
    deliver: Arc<dyn Deliver>,
    keep: u32,
    your_move_min_ms: u64,
    digest_every_ms: i64,
    mail: Option<Mailer>,
    links: Links,
    push: Option<Arc<Pusher>>,
}

/// What a link did when followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Followed {
    /// These kinds are off for the account now.
    Unsubscribed(Vec<NoticeKind>),
    /// The account's address is verified.
    Verified,
    /// The link's address is no longer the account's: nothing changed.
    Stale,
}

/// What a failed store call of a notice request names.
const WHAT: &str = "notices";

fn notice_of(row: NoticeRow) -> Option<Notice> {
    Some(Notice {
        notice_id: row.id,
        kind: NoticeKind::parse(&row.kind)?,
        payload: serde_json::from_str(&row.payload).ok()?,
        at: row.at_ms,
        read: row.read,
    })
}

impl Notices {
    /// The service, pushing through `deliver` and mailing through `mailing`.
    pub fn new(
        config: &Config,
        store: Arc<dyn Store>,
        deliver: Arc<dyn Deliver>,
        mailing: Mailing,
    ) -> Arc<Notices> {
        // `serve` checked the key before it got here (check_push).
        let push = Pusher::new(&config.push, store.clone()).unwrap_or_else(|e| {
            tracing::error!(error = %e, "Web Push is off");
            None
        });
        let notices = Arc::new(Notices {
            push,
            store,
            deliver,
            keep: config.notify.keep_per_account,
            your_move_min_ms: config.notify.your_move_min_secs.saturating_mul(1000),
            digest_every_ms: i64::from(config.mail.digest_hours) * 3_600_000,
            mail: mailing.mailer,
            links: mailing.links,
        });
        if notices.mail.is_some() {
            let sweep = Duration::from_secs(config.mail.sweep_secs);
            tokio::spawn(sweep_digests(Arc::downgrade(&notices), sweep));
        }
        notices
    }

    /// The Web Push side, when `[push]` is on.
    pub fn pusher(&self) -> Option<&Pusher> {
        self.push.as_deref()
    }

    /// Where mailed links point: the server's public URL.
    pub fn set_base_url(&self, url: &str) {
        if let Some(mail) = &self.mail {
            mail.set_base_url(url);
        }
    }

    /// Tells `account` of something: kept, pushed to its connections and browsers,
    /// mailed as it asked. Returns at once; a failure is logged, and costs only this notice.
    pub fn notify(self: &Arc<Self>, account: &str, kind: NoticeKind, payload: NoticePayload) {
        let (me, account) = (self.clone(), account.to_string());
        tokio::spawn(async move {
            if let Err(e) = me.notify_now(&account, kind, payload).await {
                tracing::warn!(%account, kind = kind.as_str(), error = %e, "a notice was lost");
            }
        });
    }

    /// [`Notices::notify`], waited for: the notice as kept.
    pub async fn notify_now(
        &self,
        account: &str,
        kind: NoticeKind,
        payload: NoticePayload,
    ) -> Result<Notice, Refusal> {
        let store = self.store.clone();
        let who = account.to_string();
        let prefs = blocking(WHAT, move || store.mail_prefs(&who)).await?;
        let prefs = Prefs::from_row(prefs);
        let mode = match &self.mail {
            Some(_) => prefs.mode(kind),
            None => MailMode::Off,
        };
        let at = wall_ms();
        let new = NewNotice {
            account: account.to_string(),
            kind: kind.as_str().to_string(),
            payload: serde_json::to_string(&payload).unwrap_or_else(|_| "{}".into()),
            at_ms: at,
            digest: mode == MailMode::Digest,
        };
        let (store, keep, who) = (self.store.clone(), self.keep, account.to_string());
        let (notice_id, unread) = blocking(WHAT, move || {
            let id = store.add_notice(&new, keep)?;
            Ok((id, store.unread_notices(&who)?))
        })
        .await?;
        let notice = Notice {
            notice_id,
            kind,
            payload,
            at,
            read: false,
        };
        self.deliver.to_user(
            account,
            &encode(&ServerMsg::Notice {
                notice: notice.clone(),
                unread,
            }),
        );
        if let Some(push) = &self.push
            && prefs.pushes(kind)
        {
            push.push(account, &notice);
        }
        if let (MailMode::Immediate, Some(mail), Some(address)) = (mode, &self.mail, &prefs.address)
            && let Err(e) = mail
                .send_notices(account, address, std::slice::from_ref(&notice))
                .await
        {
            tracing::warn!(%account, error = %e, "a notice could not be mailed");
        }
        Ok(notice)
    }

    /// The account's notices, newest first, before `before`; the unread count; and the
    /// `before` of the next page when there may be one.
    pub async fn list(
        &self,
        account: &str,
        before: Option<u64>,
        limit: Option<u32>,
    ) -> Result<(Vec<Notice>, u64, Option<u64>), Refusal> {
        let limit = limit.unwrap_or(MAX_PAGE / 2);
        if !(1..=MAX_PAGE).contains(&limit) {
            return Err(Refusal::new(
                ErrorCode::BadRequest,
                format!("limit must be from 1 to {MAX_PAGE}"),
            ));
        }
        let (store, who) = (self.store.clone(), account.to_string());
        let (rows, unread) = blocking(WHAT, move || {
            let rows = store.notices(&who, before, limit)?;
            Ok((rows, store.unread_notices(&who)?))
        })
        .await?;
        let next = (rows.len() == limit as usize)
            .then(|| rows.last().map(|r| r.id))
            .flatten();
        let notices = rows.into_iter().filter_map(notice_of).collect();
        Ok((notices, unread, next))
    }

    /// Marks read the account's notices up to `up_to`, and tells every connection of the
    /// account how many remain unread.
    pub async fn mark_read(&self, account: &str, up_to: u64) -> Result<u64, Refusal> {
        let (store, who) = (self.store.clone(), account.to_string());
        let unread = blocking(WHAT, move || {
            store.mark_notices_read(&who, up_to)?;
            store.unread_notices(&who)
        })
        .await?;
        self.deliver
            .to_user(account, &encode(&ServerMsg::UnreadNotices { unread }));
        Ok(unread)
    }

    async fn prefs(&self, account: &str) -> Result<Prefs, Refusal> {
        let (store, who) = (self.store.clone(), account.to_string());
        Ok(Prefs::from_row(
            blocking(WHAT, move || store.mail_prefs(&who)).await?,
        ))
    }

    /// The account's notification settings.
    pub async fn settings(&self, account: &str) -> Result<NotificationSettings, Refusal> {
        Ok(self.shown(&self.prefs(account).await?))
    }

    fn shown(&self, prefs: &Prefs) -> NotificationSettings {
        prefs.settings(self.mail.is_some(), self.push.is_some())
    }

    /// Changes the account's settings: `address` (empty: none; a new one is unverified
    /// and is sent its link), the mail modes named and the push choices named. An address
    /// that does not parse is refused with `invalid_address`, and nothing changes.
    pub async fn set_settings(
        &self,
        account: &str,
        address: Option<String>,
        modes: BTreeMap<NoticeKind, MailMode>,
        push_kinds: BTreeMap<NoticeKind, bool>,
    ) -> Result<NotificationSettings, Refusal> {
        let address = match address.as_deref().map(str::trim) {
            None => None,
            Some("") => Some(None),
            Some(text) => Some(Some(check_address(text)?.to_string())),
        };
        let mut prefs = self.prefs(account).await?;
        let mut verify = None;
        if let Some(address) = address
            && address != prefs.address
        {
            prefs.verified = false;
            verify = address.clone();
            prefs.address = address;
        }
        prefs.modes.extend(modes);
        prefs.push.extend(push_kinds);
        let (store, row) = (self.store.clone(), prefs.to_row(account));
        blocking(WHAT, move || store.set_mail_prefs(&row)).await?;
        if let (Some(mail), Some(address)) = (&self.mail, verify)
            && let Err(e) = mail.send_verify(account, &address).await
        {
            tracing::warn!(%account, error = %e, "the verification mail could not be sent");
        }
        Ok(self.shown(&prefs))
    }

    /// Does what a mailed link says, once its signature is checked.
    pub async fn follow(&self, token: &str) -> Result<Followed, Refusal> {
        let link = self
            .links
            .check(token)
            .map_err(|e| Refusal::new(ErrorCode::Forbidden, e.to_string()))?;
        let account = match &link {
            Link::Unsubscribe { account, .. } | Link::Verify { account, .. } => account.clone(),
        };
        let mut prefs = self.prefs(&account).await?;
        let followed = match link {
            Link::Unsubscribe { kinds, .. } => {
                prefs
                    .modes
                    .extend(kinds.iter().map(|k| (*k, MailMode::Off)));
                Followed::Unsubscribed(kinds)
            }
            Link::Verify { address, .. } if prefs.address.as_ref() == Some(&address) => {
                prefs.verified = true;
                Followed::Verified
            }
            Link::Verify { .. } => return Ok(Followed::Stale),
        };
        let (store, row) = (self.store.clone(), prefs.to_row(&account));
        blocking(WHAT, move || store.set_mail_prefs(&row)).await?;
        Ok(followed)
    }

    /// A move was played in `game_id` and `player`, to move, has no connection to it:
    /// told when the game is slow enough (`notify.your_move_min_secs`).
    pub fn your_move(
        self: &Arc<Self>,
        game_id: &str,
        player: &UserInfo,
        opponent: &UserInfo,
        clock: &crate::clock::TimeControl,
    ) {
        if your_move::tells_absent_player(clock, self.your_move_min_ms) {
            let payload = NoticePayload {
                game_id: Some(game_id.to_string()),
                opponent: Some(opponent.clone()),
                ..NoticePayload::default()
            };
            self.notify(&player.id, NoticeKind::YourMove, payload);
        }
    }

    /// `player`'s deadline in `game_id` is near (`correspondence.deadline_warn_hours`).
    pub fn deadline_near(
        self: &Arc<Self>,
        game_id: &str,
        player: &UserInfo,
        opponent: UserInfo,
        deadline_ms: i64,
    ) {
        let payload = NoticePayload {
            game_id: Some(game_id.to_string()),
            opponent: Some(opponent),
            deadline: Some(deadline_ms),
            ..NoticePayload::default()
        };
        self.notify(&player.id, NoticeKind::Deadline, payload);
    }

    /// Hears the game-lifecycle bus: each player of a game that ended is told.
    pub fn listen(self: &Arc<Self>, mut news: broadcast::Receiver<GameNews>) {
        let me = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let summary = match news.recv().await {
                    Ok(GameNews::Ended(summary)) => summary,
                    Ok(_) => continue,
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(missed = n, "notices missed games that ended");
                        continue;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                let Some(me) = me.upgrade() else { return };
                for (player, opponent) in [
                    (&summary.black, &summary.white),
                    (&summary.white, &summary.black),
                ] {
                    let payload = NoticePayload {
                        game_id: Some(summary.game_id.clone()),
                        opponent: Some(opponent.clone()),
                        result: summary.result,
                        ..NoticePayload::default()
                    };
                    me.notify(&player.id, NoticeKind::GameEnded, payload);
                }
            }
        });
    }

    /// Mails every digest that is due: each account's waiting notices in one mail, at
    /// most once in `mail.digest_hours`. How many went.
    pub async fn send_digests(&self) -> Result<usize, Refusal> {
        let Some(mail) = &self.mail else {
            return Ok(0);
        };
        let store = self.store.clone();
        let before = wall_ms() - self.digest_every_ms;
        let due = blocking(WHAT, move || store.digests_due(before, DIGESTS_PER_SWEEP)).await?;
        let mut sent = 0;
        for account in due {
            // In a cluster every node sweeps: the one that claims the digest sends it.
            let (store, who) = (self.store.clone(), account.clone());
            let claimed = blocking(WHAT, move || {
                if !store.claim_digest(&who, before, wall_ms())? {
                    return Ok(None);
                }
                Ok(Some((store.mail_prefs(&who)?, store.digest_notices(&who)?)))
            })
            .await?;
            let Some((prefs, rows)) = claimed else {
                continue;
            };
            let prefs = Prefs::from_row(prefs);
            let Some(up_to) = rows.last().map(|r| r.id) else {
                continue;
            };
            // A kind turned off since it was kept is left out.
            let notices: Vec<Notice> = rows
                .into_iter()
                .filter_map(notice_of)
                .filter(|n| prefs.mode(n.kind) == MailMode::Digest)
                .collect();
            if let (Some(address), false) = (&prefs.address, notices.is_empty())
                && let Err(e) = mail.send_notices(&account, address, &notices).await
            {
                tracing::warn!(%account, error = %e, "a digest could not be mailed; its notices wait for the next");
                continue;
            }
            let (store, who) = (self.store.clone(), account.clone());
            blocking(WHAT, move || store.digest_sent(&who, up_to)).await?;
            sent += usize::from(!notices.is_empty());
        }
        Ok(sent)
    }
}

/// Sends the digests that are due every `every`, for as long as the service lives.
async fn sweep_digests(notices: std::sync::Weak<Notices>, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(notices) = notices.upgrade() else {
            return;
        };
        if let Err(e) = notices.send_digests().await {
            tracing::warn!(error = %e, "digests could not be sent; trying again at the next sweep");
        }
    }
}
