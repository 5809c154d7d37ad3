//! The server's identity towards push services (VAPID, RFC 8292): a P-256 key pair whose
//! public half browsers subscribe with, and the ES256 token each push request carries.
//! The private key is read once here and kept only inside the signing key: never logged,
//! never in an error.

use base64ct::{Base64UrlUnpadded, Encoding};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::SecretKey;
use p256::pkcs8::EncodePrivateKey;
use serde::Serialize;

use super::PushError;

/// How long a token is good for: RFC 8292 §2 allows at most 24 hours.
pub const TOKEN_SECS: u64 = 12 * 3600;

/// The server's VAPID key and contact.
pub struct Vapid {
    key: EncodingKey,
    /// The public key, uncompressed, base64url: what browsers subscribe with.
    public: String,
    subject: String,
}

#[derive(Serialize)]
struct Claims<'a> {
    aud: &'a str,
    exp: u64,
    sub: &'a str,
}

/// The public key of `secret`, uncompressed (65 bytes), in base64url.
fn public_of(secret: &SecretKey) -> String {
    Base64UrlUnpadded::encode_string(&secret.public_key().to_sec1_bytes())
}

/// A fresh key pair: (private, public), both base64url.
pub fn new_key_pair() -> (String, String) {
    let secret = loop {
        let bytes: [u8; 32] = rand::random();
        // Nearly every 32 bytes are a key; the few at or past the group order are not.
        if let Ok(secret) = SecretKey::from_slice(&bytes) {
            break secret;
        }
    };
    (
        Base64UrlUnpadded::encode_string(&secret.to_bytes()),
        public_of(&secret),
    )
}

impl Vapid {
    /// From the configured private key (base64url) and subject (`mailto:` or `https:`).
    pub fn new(private_key: &str, subject: &str) -> Result<Vapid, PushError> {
        let bytes =
            Base64UrlUnpadded::decode_vec(private_key.trim()).map_err(|_| PushError::BadKey)?;
        let secret = SecretKey::from_slice(&bytes).map_err(|_| PushError::BadKey)?;
        let der = secret.to_pkcs8_der().map_err(|_| PushError::BadKey)?;
        Ok(Vapid {
            key: EncodingKey::from_ec_der(der.as_bytes()),
            public: public_of(&secret),
            subject: subject.to_string(),
        })
    }

    /// The public key browsers subscribe with (`applicationServerKey`).
    pub fn public_key(&self) -> &str {
        &self.public
    }

    /// The `Authorization` header for a push to a service at `origin` (the endpoint's
    /// scheme, host and port), made at `now_secs` (Unix seconds).
    pub fn authorization(&self, origin: &str, now_secs: u64) -> Result<String, PushError> {
        let claims = Claims {
            aud: origin,
            exp: now_secs + TOKEN_SECS,
            sub: &self.subject,
        };
        let token = jsonwebtoken::encode(&Header::new(Algorithm::ES256), &claims, &self.key)
            .map_err(|e| PushError::Sign(e.to_string()))?;
        Ok(format!("vapid t={token}, k={}", self.public))
    }
}

#[cfg(test)]
mod tests {
    use jsonwebtoken::{DecodingKey, Validation};

    use super::*;

    #[derive(serde::Deserialize)]
    struct Read {
        aud: String,
        exp: u64,
        sub: String,
    }

    #[test]
    fn a_token_verifies_with_the_public_key_and_names_the_service() {
        let (private, public) = new_key_pair();
        let vapid = Vapid::new(&private, "mailto:ops@example.org").expect("a key");
        assert_eq!(vapid.public_key(), public);
        let now = 1_800_000_000;
        let header = vapid
            .authorization("https://push.example.net", now)
            .expect("signed");
        let (token, key) = header
            .strip_prefix("vapid t=")
            .and_then(|rest| rest.split_once(", k="))
            .expect("vapid t=…, k=…");
        assert_eq!(key, public);
        let point = Base64UrlUnpadded::decode_vec(key).expect("base64url");
        let mut check = Validation::new(Algorithm::ES256);
        check.set_audience(&["https://push.example.net"]);
        check.validate_exp = false;
        let read = jsonwebtoken::decode::<Read>(token, &DecodingKey::from_ec_der(&point), &check)
            .expect("verified");
        assert_eq!(read.claims.aud, "https://push.example.net");
        assert_eq!(read.claims.sub, "mailto:ops@example.org");
        assert_eq!(read.claims.exp, now + TOKEN_SECS);
        let (other, _) = new_key_pair();
        let forged = Vapid::new(&other, "mailto:x@example.org")
            .expect("a key")
            .authorization("https://push.example.net", now)
            .expect("signed");
        let forged = forged
            .strip_prefix("vapid t=")
            .and_then(|r| r.split_once(", k="))
            .expect("shape")
            .0;
        assert!(
            jsonwebtoken::decode::<Read>(forged, &DecodingKey::from_ec_der(&point), &check)
                .is_err()
        );
    }

    #[test]
    fn keys_that_are_not_p256_private_keys_are_refused() {
        for bad in ["", "not base64!", "AAAA", &"_".repeat(43)] {
            assert_eq!(
                Vapid::new(bad, "mailto:a@b.c").err(),
                Some(PushError::BadKey),
                "{bad}"
            );
        }
    }
}
