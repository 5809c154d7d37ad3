//! Passwords: the policy a new one must meet, and argon2id hashing with OWASP's
//! parameters. Hashing costs tens of milliseconds of CPU and 19 MiB of memory, so it
//! runs on tokio's blocking pool, never on the async workers that play games, and only a
//! few hashes run at once: a storm of logins queues for a permit instead of taking every
//! core and gigabytes of memory.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use argon2::{Algorithm, Argon2, Params, PasswordHash, PasswordHasher, PasswordVerifier, Version};
use tokio::sync::Semaphore;

/// Fewest characters of a new password.
pub const MIN_CHARS: usize = 8;
/// Most bytes of a password, checked before anything is hashed.
pub const MAX_BYTES: usize = 256;
/// How long a request waits for a hashing permit before it is answered "busy".
const PERMIT_WAIT: Duration = Duration::from_secs(10);

/// OWASP's argon2id parameters: 19 MiB of memory, 2 passes, 1 lane.
const MEMORY_KIB: u32 = 19 * 1024;
const PASSES: u32 = 2;
const LANES: u32 = 1;

const COMMON: &str = include_str!("common-passwords.txt");

/// Why a password is refused or could not be checked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    #[error("a password must have at least {MIN_CHARS} characters, not {0}")]
    TooShort(usize),
    #[error("a password may have at most {MAX_BYTES} bytes")]
    TooLong,
    #[error("this password is among the most common ones; choose another")]
    TooCommon,
    #[error("a password must not be the username")]
    SameAsUsername,
    #[error("the server is busy checking other passwords; try again in a moment")]
    Busy,
    #[error("the password could not be hashed: {0}")]
    Hash(String),
}

/// Checks a new password against the policy (length, the common list, the username).
pub fn check_new(password: &str, username: &str) -> Result<(), PasswordError> {
    check_length(password)?;
    let chars = password.chars().count();
    if chars < MIN_CHARS {
        return Err(PasswordError::TooShort(chars));
    }
    let lower = password.to_lowercase();
    if lower == username.to_lowercase() {
        return Err(PasswordError::SameAsUsername);
    }
    if common().iter().any(|c| *c == lower) {
        return Err(PasswordError::TooCommon);
    }
    Ok(())
}

/// The length cap, which every password given to the server passes before hashing.
pub fn check_length(password: &str) -> Result<(), PasswordError> {
    if password.len() > MAX_BYTES {
        return Err(PasswordError::TooLong);
    }
    Ok(())
}

fn common() -> &'static [&'static str] {
    static LIST: OnceLock<Vec<&'static str>> = OnceLock::new();
    LIST.get_or_init(|| {
        COMMON
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect()
    })
}

fn argon2() -> Argon2<'static> {
    // The constants are within argon2's bounds; `Params::DEFAULT` is the fallback that
    // can never be reached.
    let params = Params::new(MEMORY_KIB, PASSES, LANES, None).unwrap_or(Params::DEFAULT);
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// Hashes `password` into a PHC string (`$argon2id$v=19$m=19456,t=2,p=1$…`), here and
/// now: for the CLI, and inside [`Hasher`] on the blocking pool.
pub fn hash_now(password: &str) -> Result<String, PasswordError> {
    let salt: [u8; 16] = rand::random();
    argon2()
        .hash_password_with_salt(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| PasswordError::Hash(e.to_string()))
}

/// Whether `password` matches the stored PHC string; an unreadable one matches nothing.
pub fn verify_now(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored)
        .map(|hash| argon2().verify_password(password.as_bytes(), &hash).is_ok())
        .unwrap_or(false)
}

/// Hashes and verifies on the blocking pool, a bounded number at a time.
#[derive(Clone)]
pub struct Hasher {
    permits: Arc<Semaphore>,
    /// A hash of a random password, verified against when a login names no account so
    /// that the answer takes as long as for a real one.
    dummy: Arc<OnceLock<String>>,
}

impl Hasher {
    /// A hasher running at most `concurrency` (at least 1) hashes at once.
    pub fn new(concurrency: usize) -> Hasher {
        Hasher {
            permits: Arc::new(Semaphore::new(concurrency.max(1))),
            dummy: Arc::new(OnceLock::new()),
        }
    }

    /// Half the machine's cores (at least one), so hashing never takes every core from
    /// the games.
    pub fn for_this_machine() -> Hasher {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Hasher::new(cores / 2)
    }

    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, PasswordError> {
        let permit = tokio::time::timeout(PERMIT_WAIT, self.permits.clone().acquire_owned())
            .await
            .map_err(|_| PasswordError::Busy)?
            .map_err(|_| PasswordError::Busy)?;
        let out = tokio::task::spawn_blocking(move || {
            let out = work();
            drop(permit);
            out
        })
        .await
        .map_err(|e| PasswordError::Hash(e.to_string()))?;
        Ok(out)
    }

    /// The PHC hash of `password`.
    pub async fn hash(&self, password: String) -> Result<String, PasswordError> {
        self.run(move || hash_now(&password)).await?
    }

    /// Whether `password` matches `stored`; with no stored hash (no such account, or one
    /// without a password) it checks against a dummy hash and answers false, in about
    /// the same time.
    pub async fn verify(
        &self,
        password: String,
        stored: Option<String>,
    ) -> Result<bool, PasswordError> {
        let dummy = self.dummy.clone();
        self.run(move || match stored {
            Some(stored) => verify_now(&password, &stored),
            None => {
                let dummy = dummy.get_or_init(|| {
                    let random: [u8; 16] = rand::random();
                    hash_now(&hex::encode(random)).unwrap_or_default()
                });
                verify_now(&password, dummy);
                false
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_refuses_short_long_common_and_the_username() {
        assert_eq!(check_new("short", "alice"), Err(PasswordError::TooShort(5)));
        assert_eq!(
            check_new(&"x".repeat(MAX_BYTES + 1), "alice"),
            Err(PasswordError::TooLong)
        );
        assert_eq!(
            check_new("Password1", "alice"),
            Err(PasswordError::TooCommon)
        );
        assert_eq!(
            check_new("AliceAlice", "alicealice"),
            Err(PasswordError::SameAsUsername)
        );
        assert_eq!(check_new("correct horse battery", "alice"), Ok(()));
        // Eight characters, not eight bytes.
        assert_eq!(check_new("天元天元天元天元", "alice"), Ok(()));
    }

    #[test]
    fn a_hash_is_argon2id_with_owasp_parameters_and_verifies_only_its_password() {
        let hash = hash_now("correct horse battery").expect("hash");
        assert!(
            hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{hash}"
        );
        assert!(verify_now("correct horse battery", &hash));
        assert!(!verify_now("correct horse batterY", &hash));
        assert!(!verify_now("correct horse battery", "not a hash"));
        assert_ne!(
            hash,
            hash_now("correct horse battery").expect("hash"),
            "salted"
        );
    }

    #[tokio::test]
    async fn an_unknown_account_is_checked_against_a_dummy_and_never_matches() {
        let hasher = Hasher::new(1);
        assert!(
            !hasher
                .verify("anything at all".into(), None)
                .await
                .expect("runs")
        );
        let hash = hasher
            .hash("correct horse battery".into())
            .await
            .expect("hash");
        assert!(
            hasher
                .verify("correct horse battery".into(), Some(hash))
                .await
                .expect("runs")
        );
    }
}
