//! An account's notification preferences as the service uses them: the address, whether
//! it was verified, each kind's mail mode and whether it is pushed, read from and written
//! to the store's row. The row's `modes` is JSON text the store never reads: each kind's
//! mail mode by the kind's name, and the push choices under `"push"` (a name no kind
//! has, so a build without push keeps reading the modes).

use std::collections::BTreeMap;

use crate::protocol::{ErrorCode, MailMode, NoticeKind, NotificationSettings, Refusal};
use crate::store::MailPrefs;

/// The longest address taken (RFC 5321 §4.5.3.1.3 allows 254 octets in a path).
pub const MAX_ADDRESS_BYTES: usize = 254;

/// How a kind is mailed until the account says otherwise: what cannot wait (a deadline,
/// a round, the end of a vacation) at once, the rest in the digest.
pub fn default_mode(kind: NoticeKind) -> MailMode {
    match kind {
        NoticeKind::Deadline | NoticeKind::RoundPaired | NoticeKind::VacationEnding => {
            MailMode::Immediate
        }
        NoticeKind::YourMove | NoticeKind::GameEnded | NoticeKind::ChallengeReceived => {
            MailMode::Digest
        }
    }
}

/// One account's preferences.
#[derive(Debug, Clone, PartialEq)]
pub struct Prefs {
    pub address: Option<String>,
    pub verified: bool,
    /// Only the kinds set by the account; the rest take [`default_mode`].
    pub modes: BTreeMap<NoticeKind, MailMode>,
    /// Only the kinds set by the account; the rest are pushed.
    pub push: BTreeMap<NoticeKind, bool>,
    pub last_digest_ms: Option<i64>,
}

/// The key of the push choices in the row's `modes`.
const PUSH_KEY: &str = "push";

/// The entries of a JSON object whose key is a kind's name and whose value reads as a
/// `T`; the rest (a kind this build does not know, a value it cannot read) skipped.
fn by_kind<T: serde::de::DeserializeOwned>(
    named: serde_json::Map<String, serde_json::Value>,
) -> BTreeMap<NoticeKind, T> {
    named
        .into_iter()
        .filter_map(|(kind, v)| Some((NoticeKind::parse(&kind)?, serde_json::from_value(v).ok()?)))
        .collect()
}

impl Prefs {
    /// From the store's row (none: the defaults). A kind this build does not know (a
    /// newer one wrote it) is skipped.
    pub fn from_row(row: Option<MailPrefs>) -> Prefs {
        let Some(row) = row else {
            return Prefs {
                address: None,
                verified: false,
                modes: BTreeMap::new(),
                push: BTreeMap::new(),
                last_digest_ms: None,
            };
        };
        let mut named: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&row.modes).unwrap_or_default();
        let push = match named.remove(PUSH_KEY) {
            Some(serde_json::Value::Object(push)) => by_kind(push),
            _ => BTreeMap::new(),
        };
        Prefs {
            address: row.address,
            verified: row.verified,
            modes: by_kind(named),
            push,
            last_digest_ms: row.last_digest_ms,
        }
    }

    pub fn to_row(&self, account: &str) -> MailPrefs {
        let mut named = serde_json::Map::new();
        for (kind, mode) in &self.modes {
            named.insert(kind.as_str().into(), serde_json::json!(mode));
        }
        if !self.push.is_empty() {
            let push = self
                .push
                .iter()
                .map(|(k, on)| (k.as_str().into(), (*on).into()));
            named.insert(PUSH_KEY.into(), serde_json::Value::Object(push.collect()));
        }
        MailPrefs {
            account: account.to_string(),
            address: self.address.clone(),
            verified: self.verified,
            modes: serde_json::Value::Object(named).to_string(),
            last_digest_ms: self.last_digest_ms,
        }
    }

    /// Whether `kind` is pushed to the account's browsers.
    pub fn pushes(&self, kind: NoticeKind) -> bool {
        self.push.get(&kind).copied().unwrap_or(true)
    }

    /// How `kind` is mailed: never without a verified address.
    pub fn mode(&self, kind: NoticeKind) -> MailMode {
        match (&self.address, self.verified) {
            (Some(_), true) => self.modes.get(&kind).copied().unwrap_or(default_mode(kind)),
            _ => MailMode::Off,
        }
    }

    /// As the protocol shows them: every kind with its mode and whether it is pushed;
    /// `mail` and `push` say whether the server sends either at all.
    pub fn settings(&self, mail: bool, push: bool) -> NotificationSettings {
        let modes = NoticeKind::ALL
            .into_iter()
            .map(|k| (k, self.modes.get(&k).copied().unwrap_or(default_mode(k))))
            .collect();
        let push_kinds = NoticeKind::ALL
            .into_iter()
            .map(|k| (k, self.pushes(k)))
            .collect();
        NotificationSettings {
            address: self.address.clone(),
            verified: self.verified,
            modes,
            mail,
            push_kinds,
            push,
        }
    }
}

/// Reads a notification address: a bare mail address (no display name), within
/// [`MAX_ADDRESS_BYTES`].
pub fn check_address(text: &str) -> Result<lettre::Address, Refusal> {
    let refuse = |why: &str| {
        Refusal::new(
            ErrorCode::InvalidAddress,
            format!("the notification address is not a mail address: {why}"),
        )
    };
    if text.len() > MAX_ADDRESS_BYTES {
        return Err(refuse(&format!("it is over {MAX_ADDRESS_BYTES} bytes")));
    }
    text.parse::<lettre::Address>()
        .map_err(|e| refuse(&e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_round_trip_through_the_row_and_unknown_kinds_are_skipped() {
        let mut prefs = Prefs::from_row(None);
        prefs.address = Some("ann@example.org".into());
        prefs.modes.insert(NoticeKind::GameEnded, MailMode::Off);
        prefs.push.insert(NoticeKind::YourMove, false);
        let mut row = prefs.to_row("ann");
        assert_eq!(Prefs::from_row(Some(row.clone())), prefs);
        assert!(!prefs.pushes(NoticeKind::YourMove));
        assert!(
            prefs.pushes(NoticeKind::GameEnded),
            "pushed until turned off"
        );
        row.modes = r#"{"game_ended":"off","comet_seen":"immediate","your_move":"sideways",
            "push":{"your_move":false,"comet_seen":true,"deadline":"loud"}}"#
            .into();
        let read = Prefs::from_row(Some(row));
        assert_eq!(read.modes, prefs.modes);
        assert_eq!(read.push, prefs.push);
    }

    #[test]
    fn nothing_is_mailed_before_the_address_is_verified() {
        let mut prefs = Prefs::from_row(None);
        assert_eq!(prefs.mode(NoticeKind::Deadline), MailMode::Off);
        prefs.address = Some("ann@example.org".into());
        assert_eq!(prefs.mode(NoticeKind::Deadline), MailMode::Off);
        prefs.verified = true;
        assert_eq!(prefs.mode(NoticeKind::Deadline), MailMode::Immediate);
        assert_eq!(prefs.mode(NoticeKind::GameEnded), MailMode::Digest);
        let shown = prefs.settings(true, false);
        assert_eq!(shown.modes.len(), NoticeKind::ALL.len());
        assert_eq!(shown.push_kinds.len(), NoticeKind::ALL.len());
    }

    #[test]
    fn addresses_that_do_not_parse_are_refused_with_their_code() {
        assert!(check_address("ann@example.org").is_ok());
        let long = format!("{}@example.org", "a".repeat(250));
        for bad in [
            "",
            "ann",
            "ann@",
            "@example.org",
            "Ann <ann@example.org>",
            &long,
        ] {
            let refusal = check_address(bad).expect_err(bad);
            assert_eq!(refusal.code, ErrorCode::InvalidAddress, "{bad}");
        }
    }
}
