//! Tokens: who a connection is. JWTs with a pinned algorithm (HS256 with a secret by
//! default; RS256 or EdDSA public keys so an external identity service can issue them).
//! `exp` is required and checked, `nbf` checked when present, `iss`/`aud` when configured.

use std::path::{Path, PathBuf};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use crate::config::{AuthConfig, JwtAlgorithm};
use crate::protocol::{Role, UserInfo};

/// File in the data dir holding the generated HS256 secret.
pub const SECRET_FILE: &str = "jwt-secret";

/// The claims tengen reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The user id.
    pub sub: String,
    /// Display name (defaults to `sub`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default)]
    pub role: Role,
    /// Expiry, Unix seconds.
    pub exp: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nbf: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iss: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aud: Option<String>,
}

/// Why the token setup could not be loaded. Each message holds its cause, so none is
/// also a [`std::error::Error::source`] (the binary would print it twice).
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("cannot read or create the JWT secret {path}: {cause}")]
    Secret {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("cannot read the key file {path} (auth.public_key_file): {cause}")]
    KeyFile {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error(
        "the key file {path} (auth.public_key_file) is not {what} public key in PEM form, which auth.algorithm {algorithm:?} needs ({cause})"
    )]
    PublicKey {
        path: PathBuf,
        algorithm: JwtAlgorithm,
        /// "an RSA" or "an Ed25519".
        what: &'static str,
        cause: jsonwebtoken::errors::Error,
    },
    #[error(
        "the JWT secret in {path} is {bytes} bytes; an HS256 secret must have at least {} (delete the file to have a new one generated, which ends every session)",
        crate::config::MIN_SECRET_BYTES
    )]
    ShortSecret { path: PathBuf, bytes: usize },
    #[error("the secret is not usable: {0}")]
    SecretKey(jsonwebtoken::errors::Error),
    #[error("auth.algorithm {0:?} needs auth.public_key_file")]
    MissingPublicKey(JwtAlgorithm),
    #[error("cannot sign a token: {0}")]
    Sign(jsonwebtoken::errors::Error),
}

/// How far `exp` and `nbf` may be off: the issuer's clock and this server's never agree
/// exactly, and a token refused for a second of skew would be a puzzle for its holder.
pub const LEEWAY_SECS: u64 = 60;

/// Who signed a token, which decides what its `sub` may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signer {
    /// This server, with its HS256 secret (the account routes, `tengen token`, the dev
    /// login).
    Local,
    /// The external identity service's key (RS256 or EdDSA).
    External,
}

/// Checks tokens: the server's own HS256 tokens always, and with `auth.algorithm` RS256
/// or EdDSA also the identity service's, each with its own key and pinned algorithm, so
/// local accounts and an identity service's users can connect at once.
pub struct Verifier {
    local: Check,
    external: Option<Check>,
}

/// One key with the checks that go with it.
struct Check {
    key: DecodingKey,
    validation: Validation,
}

impl Check {
    fn new(algorithm: Algorithm, key: DecodingKey, claims_of: Option<&AuthConfig>) -> Check {
        let mut validation = Validation::new(algorithm);
        validation.leeway = LEEWAY_SECS;
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp", "sub"]);
        match claims_of.and_then(|c| c.audience.as_ref()) {
            Some(aud) => validation.set_audience(&[aud]),
            None => validation.validate_aud = false,
        }
        if let Some(iss) = claims_of.and_then(|c| c.issuer.as_ref()) {
            validation.set_issuer(&[iss]);
        }
        Check { key, validation }
    }
}

/// Reads the HS256 secret: the configured one, or the one in `data_dir/jwt-secret`,
/// generated (64 random bytes, hex, mode 0600) on first use.
pub fn load_or_create_secret(config: &AuthConfig, data_dir: &Path) -> Result<Vec<u8>, AuthError> {
    if let Some(secret) = &config.secret {
        return Ok(secret.as_bytes().to_vec());
    }
    let path = data_dir.join(SECRET_FILE);
    let err = |cause| AuthError::Secret {
        path: path.clone(),
        cause,
    };
    match std::fs::read_to_string(&path) {
        // A configured secret is checked with the settings; one in the file, here.
        Ok(text)
            if text.trim().len() < crate::config::MIN_SECRET_BYTES && !text.trim().is_empty() =>
        {
            return Err(AuthError::ShortSecret {
                bytes: text.trim().len(),
                path,
            });
        }
        Ok(text) if !text.trim().is_empty() => return Ok(text.trim().as_bytes().to_vec()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(err(e)),
    }
    crate::config::create_data_dir(data_dir).map_err(err)?;
    let bytes: [u8; 64] = rand::random();
    let secret = hex::encode(bytes);
    write_private(&path, &secret).map_err(err)?;
    tracing::info!(path = %path.display(), "generated a new JWT secret");
    Ok(secret.into_bytes())
}

fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

impl Verifier {
    pub fn new(config: &AuthConfig, data_dir: &Path) -> Result<Verifier, AuthError> {
        let secret = load_or_create_secret(config, data_dir)?;
        let local_key = DecodingKey::from_secret(&secret).map_err(AuthError::SecretKey)?;
        let external =
            external_key(config)?.map(|(algorithm, key)| Check::new(algorithm, key, Some(config)));
        // `iss` and `aud` are the identity service's when there is one; with HS256 alone
        // they apply to the server's own tokens, which carry them ([`local_claims`]).
        let local_claims = external.is_none().then_some(config);
        Ok(Verifier {
            local: Check::new(Algorithm::HS256, local_key, local_claims),
            external,
        })
    }

    /// The user a token names, or why it is refused (a sentence for the client).
    pub fn verify(&self, token: &str) -> Result<UserInfo, String> {
        self.verify_signed(token).map(|(user, _)| user)
    }

    /// The user a token names and who signed it. The header's algorithm picks the key,
    /// and each key accepts only its own algorithm.
    pub fn verify_signed(&self, token: &str) -> Result<(UserInfo, Signer), String> {
        let header = jsonwebtoken::decode_header(token).map_err(|e| refusal_text(e.kind()))?;
        let (check, signer) = match (&self.external, header.alg) {
            (_, Algorithm::HS256) => (&self.local, Signer::Local),
            (Some(external), alg) if external.validation.algorithms.contains(&alg) => {
                (external, Signer::External)
            }
            _ => {
                return Err(refusal_text(
                    &jsonwebtoken::errors::ErrorKind::InvalidAlgorithm,
                ));
            }
        };
        let data = jsonwebtoken::decode::<Claims>(token, &check.key, &check.validation)
            .map_err(|e| refusal_text(e.kind()))?;
        Ok((user_of(data.claims)?, signer))
    }
}

/// Reads and parses `auth.public_key_file` as the server does at start-up, so that
/// `tengen config --check` refuses every key file `tengen serve` would refuse.
pub fn check_public_key(config: &AuthConfig) -> Result<(), AuthError> {
    external_key(config).map(drop)
}

/// The identity service's key and algorithm when `auth.algorithm` is RS256 or EdDSA.
fn external_key(config: &AuthConfig) -> Result<Option<(Algorithm, DecodingKey)>, AuthError> {
    let (algorithm, what): (_, &'static str) = match config.algorithm {
        JwtAlgorithm::HS256 => return Ok(None),
        JwtAlgorithm::RS256 => (Algorithm::RS256, "an RSA"),
        JwtAlgorithm::EdDSA => (Algorithm::EdDSA, "an Ed25519"),
    };
    let path = config
        .public_key_file
        .as_ref()
        .ok_or(AuthError::MissingPublicKey(config.algorithm))?;
    let pem = std::fs::read(path).map_err(|cause| AuthError::KeyFile {
        path: path.clone(),
        cause,
    })?;
    let key = match algorithm {
        Algorithm::RS256 => DecodingKey::from_rsa_pem(&pem),
        _ => DecodingKey::from_ed_pem(&pem),
    };
    let key = key.map_err(|cause| AuthError::PublicKey {
        path: path.clone(),
        algorithm: config.algorithm,
        what,
        cause,
    })?;
    Ok(Some((algorithm, key)))
}

/// Claims for a token this server signs for `sub`: with `iss` and `aud` as configured
/// when HS256 is the only algorithm (the verifier then checks them on every token).
pub fn local_claims(
    config: &AuthConfig,
    sub: &str,
    name: Option<&str>,
    role: Role,
    ttl_secs: u64,
) -> Claims {
    let mut claims = claims_for(sub, name, role, ttl_secs);
    if config.algorithm == JwtAlgorithm::HS256 {
        claims.iss = config.issuer.clone();
        claims.aud = config.audience.clone();
    }
    claims
}

/// The user the claims name, or why they name none (a sentence for the client). The
/// server checks this on every token; `tengen token` checks it before signing.
pub fn user_of(claims: Claims) -> Result<UserInfo, String> {
    plain_text(&claims.sub, MAX_SUB_CHARS).map_err(|why| format!("The token's `sub` {why}."))?;
    let name = match claims.name.as_deref().map(str::trim) {
        None | Some("") => claims.sub.clone(),
        Some(name) => display_name(name)
            .map_err(|why| format!("The token's `name` {why}."))?
            .to_string(),
    };
    Ok(UserInfo {
        id: claims.sub,
        name,
        role: claims.role,
    })
}

/// Longest user id (a token's `sub`), in characters.
pub const MAX_SUB_CHARS: usize = 64;
/// Longest display name, in characters after trimming: room for any real name, and
/// little enough that every list and board header can show it.
pub const MAX_NAME_CHARS: usize = 40;

/// Checks text everyone is shown: 1 to `max` characters (not bytes, so every script gets
/// the same room) and no control characters, which could break a line or a layout.
/// The refusal is the end of a sentence: "must have 1 to 40 characters, not 0".
fn plain_text(text: &str, max: usize) -> Result<(), String> {
    let chars = text.chars().count();
    if chars == 0 || chars > max {
        return Err(format!("must have 1 to {max} characters, not {chars}"));
    }
    if text.chars().any(char::is_control) {
        return Err("must not hold control characters".into());
    }
    Ok(())
}

/// A display name, trimmed, or why it is refused (as the end of a sentence). Beyond
/// [`plain_text`], a name must show something (not only spaces and invisible characters
/// such as U+200B), must hold no bidirectional controls (U+202E would show the rest of a
/// line backwards), and must write each word in one script (UTS #39: a Cyrillic `а` in a
/// Latin word passes for another name); words may differ (`Lee Sedol 이세돌`).
pub fn display_name(name: &str) -> Result<&str, String> {
    use unicode_security::MixedScript;
    let name = name.trim();
    plain_text(name, MAX_NAME_CHARS)?;
    if name.chars().any(is_bidi_control) {
        return Err("must not hold bidirectional controls".into());
    }
    if name.chars().all(is_invisible) {
        return Err("must show at least one visible character".into());
    }
    if let Some(word) = name.split_whitespace().find(|w| !w.is_single_script()) {
        return Err(format!(
            "must write each word in one script, and {word:?} mixes letters of several"
        ));
    }
    Ok(name)
}

/// The explicit bidirectional formatting characters (Unicode's Bidi_Control property).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// What shows nothing by itself: white space, a combining mark, the braille blank, and
/// Unicode's Default_Ignorable_Code_Point set (DerivedCoreProperties.txt: zero-width
/// spaces and joiners, fillers, variation selectors, tags, …).
fn is_invisible(c: char) -> bool {
    c.is_whitespace()
        || unicode_normalization::char::is_combining_mark(c)
        || is_bidi_control(c)
        || matches!(
            c,
            '\u{ad}'
                | '\u{34f}'
                | '\u{115f}'..='\u{1160}'
                | '\u{17b4}'..='\u{17b5}'
                | '\u{180b}'..='\u{180f}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2060}'..='\u{206f}'
                | '\u{2800}'
                | '\u{3164}'
                | '\u{fe00}'..='\u{fe0f}'
                | '\u{feff}'
                | '\u{ffa0}'
                | '\u{fff0}'..='\u{fff8}'
                | '\u{1bca0}'..='\u{1bca3}'
                | '\u{1d173}'..='\u{1d17a}'
                | '\u{e0000}'..='\u{e0fff}'
        )
}

/// Why a token was refused, as a sentence for the person holding it.
fn refusal_text(kind: &jsonwebtoken::errors::ErrorKind) -> String {
    use jsonwebtoken::errors::ErrorKind as K;
    match kind {
        K::ExpiredSignature => "The token has expired; get a new one.".into(),
        K::ImmatureSignature => "The token is not valid yet (its `nbf` is in the future).".into(),
        K::InvalidSignature => "The token's signature does not match this server's key.".into(),
        K::InvalidAlgorithm | K::MissingAlgorithm => {
            "The token is not signed with the algorithm this server accepts.".into()
        }
        K::InvalidIssuer => "The token was issued by someone this server does not accept.".into(),
        K::InvalidAudience => "The token is meant for another audience.".into(),
        K::MissingRequiredClaim(claim) => format!("The token lacks the `{claim}` claim."),
        K::InvalidSubject => "The token's subject is not valid.".into(),
        _ => "The token is malformed: it is not a JWT this server can read.".into(),
    }
}

/// Signs HS256 claims with `secret` (for `tengen token`, tests and the load tool).
pub fn sign(secret: &[u8], claims: &Claims) -> Result<String, AuthError> {
    let key = EncodingKey::from_secret(secret).map_err(AuthError::SecretKey)?;
    jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &key).map_err(AuthError::Sign)
}

/// Claims for `sub` that expire `ttl_secs` from now.
pub fn claims_for(sub: &str, name: Option<&str>, role: Role, ttl_secs: u64) -> Claims {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    Claims {
        sub: sub.to_string(),
        name: name.map(str::to_string),
        role,
        exp: now + ttl_secs,
        nbf: None,
        iss: None,
        aud: None,
    }
}
