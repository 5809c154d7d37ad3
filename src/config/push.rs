//! `[push]`: Web Push (VAPID) notifications to browsers, off unless the operator sets a
//! key pair (`tengen push keys` makes one). The private key is a setting like
//! `auth.secret`: `config --print` shows it redacted, and the logs never show it.

use serde::{Deserialize, Serialize};

/// Web Push.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PushConfig {
    /// The VAPID private key, a P-256 scalar in base64url; unset: no push at all.
    pub private_key: Option<String>,
    /// Who push services contact about this server: a `mailto:` or `https:` URL.
    pub subject: String,
    /// Browsers one account may subscribe at once.
    pub max_subscriptions: u32,
    /// How long a push service keeps a message for a browser that is offline, seconds.
    pub ttl_secs: u32,
    /// Push requests in flight at once; more wait in a queue of `queue` notices.
    pub concurrency: usize,
    /// Notices waiting to be pushed at most; past it a notice is not pushed (logged).
    pub queue: usize,
    /// How long one push request may take, seconds.
    pub timeout_secs: u64,
    /// Also take `http://` endpoints and addresses on this machine or a private network.
    /// Only for tests, where the push service is a local one.
    pub allow_http: bool,
}

impl Default for PushConfig {
    fn default() -> Self {
        PushConfig {
            private_key: None,
            subject: String::new(),
            max_subscriptions: 10,
            ttl_secs: 24 * 3600,
            concurrency: 8,
            queue: 1000,
            timeout_secs: 10,
            allow_http: false,
        }
    }
}

/// The most browsers an account may subscribe.
pub const MAX_SUBSCRIPTIONS: u32 = 100;
/// The longest a push service may be asked to keep a message: four weeks.
pub const MAX_TTL_SECS: u32 = 28 * 24 * 3600;

impl PushConfig {
    /// Whether push is on: a private key is set.
    pub fn enabled(&self) -> bool {
        self.private_key.is_some()
    }

    /// The first setting out of range or missing: its key and why. The key itself is
    /// checked where it is read (`notify::push`), so no message here can quote it.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !(1..=MAX_SUBSCRIPTIONS).contains(&self.max_subscriptions) {
            return Err((
                "push.max_subscriptions",
                format!("must be from 1 to {MAX_SUBSCRIPTIONS}"),
            ));
        }
        if self.ttl_secs > MAX_TTL_SECS {
            return Err((
                "push.ttl_secs",
                format!("must be at most {MAX_TTL_SECS} (4 weeks)"),
            ));
        }
        if !(1..=256).contains(&self.concurrency) {
            return Err(("push.concurrency", "must be from 1 to 256".into()));
        }
        if !(1..=100_000).contains(&self.queue) {
            return Err(("push.queue", "must be from 1 to 100000".into()));
        }
        if !(1..=120).contains(&self.timeout_secs) {
            return Err(("push.timeout_secs", "must be from 1 to 120".into()));
        }
        let contact = ["mailto:", "https://"]
            .iter()
            .any(|p| self.subject.len() > p.len() && self.subject.starts_with(p));
        if self.enabled() && !contact {
            return Err((
                "push.subject",
                format!(
                    "must be a mailto: or https:// URL when push.private_key is set, not {:?}",
                    self.subject
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_that_cannot_work_is_refused_naming_its_key() {
        assert_eq!(PushConfig::default().check(), Ok(()), "off needs nothing");
        let on = PushConfig {
            private_key: Some("k".into()),
            subject: "mailto:ops@example.org".into(),
            ..PushConfig::default()
        };
        assert_eq!(on.check(), Ok(()));
        let refused = |c: PushConfig| c.check().expect_err("refused").0;
        for subject in ["", "ops@example.org", "mailto:", "http://example.org"] {
            let c = PushConfig {
                subject: subject.into(),
                ..on.clone()
            };
            assert_eq!(refused(c), "push.subject", "{subject}");
        }
        assert_eq!(
            refused(PushConfig {
                max_subscriptions: 0,
                ..on.clone()
            }),
            "push.max_subscriptions"
        );
        assert_eq!(
            refused(PushConfig {
                ttl_secs: MAX_TTL_SECS + 1,
                ..on.clone()
            }),
            "push.ttl_secs"
        );
        assert_eq!(
            refused(PushConfig {
                concurrency: 0,
                ..on.clone()
            }),
            "push.concurrency"
        );
        assert_eq!(
            refused(PushConfig {
                timeout_secs: 0,
                ..on
            }),
            "push.timeout_secs"
        );
    }
}
