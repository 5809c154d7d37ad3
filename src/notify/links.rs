//! The links mailed to players: unsubscribe (one click turns kinds of notice off) and
//! verify (proves an address is its owner's). Each is a signed token, so the route that
//! takes it needs no login: what it says cannot be forged, only replayed, and replaying
//! either link does what the first click did. The key is derived from the server's token
//! secret, which every node of a cluster shares, so a link works on any node.

use base64ct::{Base64UrlUnpadded, Encoding};
use hmac::{KeyInit, Mac};
use serde::{Deserialize, Serialize};

use crate::protocol::NoticeKind;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// What a link does when followed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "for", rename_all = "snake_case", deny_unknown_fields)]
pub enum Link {
    /// Turn these kinds of mail off for the account.
    Unsubscribe {
        account: String,
        kinds: Vec<NoticeKind>,
    },
    /// The account's address is `address` (a link to an address since replaced does
    /// nothing).
    Verify { account: String, address: String },
}

/// Why a token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error("this link is damaged or was not made by this server")]
    Forged,
}

/// Signs and checks links.
#[derive(Clone)]
pub struct Links {
    key: Vec<u8>,
}

/// Tokens longer than this are refused unread.
const MAX_TOKEN_BYTES: usize = 2048;

impl Links {
    /// Links signed with a key derived from `secret` for this one purpose, so a link's
    /// signature can never pass as anything else's.
    pub fn new(secret: &[u8]) -> Links {
        let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC takes a key of any length");
        mac.update(b"tengen notice links");
        Links {
            key: mac.finalize().into_bytes().to_vec(),
        }
    }

    fn mac(&self) -> HmacSha256 {
        HmacSha256::new_from_slice(&self.key).expect("HMAC takes a key of any length")
    }

    /// The token of a link: its JSON, then its signature, each in URL-safe base64.
    pub fn sign(&self, link: &Link) -> String {
        let body = serde_json::to_vec(link).unwrap_or_default();
        let mut mac = self.mac();
        mac.update(&body);
        let tag = mac.finalize().into_bytes();
        format!(
            "{}.{}",
            Base64UrlUnpadded::encode_string(&body),
            Base64UrlUnpadded::encode_string(&tag)
        )
    }

    /// The link a token carries, if this server signed it.
    pub fn check(&self, token: &str) -> Result<Link, LinkError> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(LinkError::Forged);
        }
        let (body, tag) = token.split_once('.').ok_or(LinkError::Forged)?;
        let body = Base64UrlUnpadded::decode_vec(body).map_err(|_| LinkError::Forged)?;
        let tag = Base64UrlUnpadded::decode_vec(tag).map_err(|_| LinkError::Forged)?;
        let mut mac = self.mac();
        mac.update(&body);
        mac.verify_slice(&tag).map_err(|_| LinkError::Forged)?;
        serde_json::from_slice(&body).map_err(|_| LinkError::Forged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unsubscribe() -> Link {
        Link::Unsubscribe {
            account: "ann".into(),
            kinds: vec![NoticeKind::GameEnded, NoticeKind::YourMove],
        }
    }

    #[test]
    fn a_signed_link_reads_back() {
        let links = Links::new(b"secret");
        let token = links.sign(&unsubscribe());
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        );
        assert_eq!(links.check(&token), Ok(unsubscribe()));
    }

    #[test]
    fn a_changed_or_foreign_link_is_refused() {
        let links = Links::new(b"secret");
        let token = links.sign(&unsubscribe());
        // Another server's link, or this one's with another account in it.
        assert_eq!(Links::new(b"other").check(&token), Err(LinkError::Forged));
        let (_, tag) = token.split_once('.').unwrap();
        let bob = Link::Unsubscribe {
            account: "bob".into(),
            kinds: vec![NoticeKind::GameEnded],
        };
        let body = Base64UrlUnpadded::encode_string(&serde_json::to_vec(&bob).unwrap());
        assert_eq!(
            links.check(&format!("{body}.{tag}")),
            Err(LinkError::Forged)
        );
        for junk in ["", ".", "abc", "abc.def", &"a".repeat(5000)] {
            assert_eq!(links.check(junk), Err(LinkError::Forged), "{junk}");
        }
    }
}
