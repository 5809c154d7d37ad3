//! Passwords: the policy a new one must meet, and argon2id hashing with OWASP's
//! parameters. A hash costs tens of milliseconds of CPU and 19 MiB of memory, so it never
//! runs on the async workers that play games: a few hashing threads of their own do it,
//! each with its 19 MiB allocated once and reused, and a bounded queue in front. A storm
//! of logins waits in that queue (or is told "busy"), instead of taking every core, and
//! the server's memory stays flat (fresh 19 MiB blocks per hash on tokio's changing
//! blocking-pool threads left a 200-login storm 1.3 GiB behind; see BENCHMARKS.md).

use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, OnceLock};

use argon2::{Algorithm, Argon2, Block, Params, PasswordHash, PasswordVerifier, Version};
use base64ct::{Base64Unpadded, Encoding};

/// Fewest characters of a new password.
pub const MIN_CHARS: usize = 8;
/// Most bytes of a password, checked before anything is hashed.
pub const MAX_BYTES: usize = 256;
/// Hashes waiting for a thread, at most; past it a request is answered "busy".
pub const MAX_QUEUED: usize = 256;

/// OWASP's argon2id parameters: 19 MiB of memory, 2 passes, 1 lane.
const MEMORY_KIB: u32 = 19 * 1024;
const PASSES: u32 = 2;
const LANES: u32 = 1;
/// Bytes of the hash output, and of the salt.
const OUTPUT_LEN: usize = 32;
const SALT_LEN: usize = 16;
/// The PHC prefix of every hash made here, up to the salt.
const PHC_PREFIX: &str = "$argon2id$v=19$m=19456,t=2,p=1$";

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
    // The constants are within argon2's bounds; `Params::DEFAULT` (the same values) is
    // the fallback that can never be reached.
    let params =
        Params::new(MEMORY_KIB, PASSES, LANES, Some(OUTPUT_LEN)).unwrap_or(Params::DEFAULT);
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// The memory one hash works in.
fn new_memory() -> Vec<Block> {
    vec![Block::default(); MEMORY_KIB as usize]
}

/// The raw argon2id output for `password` and `salt`, computed in `memory`.
fn raw_hash(
    memory: &mut [Block],
    password: &str,
    salt: &[u8],
) -> Result<[u8; OUTPUT_LEN], PasswordError> {
    let mut out = [0u8; OUTPUT_LEN];
    argon2()
        .hash_password_into_with_memory(password.as_bytes(), salt, &mut out, memory)
        .map_err(|e| PasswordError::Hash(e.to_string()))?;
    Ok(out)
}

/// Hashes `password` into a PHC string (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`).
fn hash_in(memory: &mut [Block], password: &str) -> Result<String, PasswordError> {
    let salt: [u8; SALT_LEN] = rand::random();
    let out = raw_hash(memory, password, &salt)?;
    Ok(format!(
        "{PHC_PREFIX}{}${}",
        Base64Unpadded::encode_string(&salt),
        Base64Unpadded::encode_string(&out)
    ))
}

/// Whether `password` matches the stored PHC string; an unreadable one matches nothing.
/// Hashes made here are checked in `memory`; others (other parameters) by argon2 itself.
fn verify_in(memory: &mut [Block], password: &str, stored: &str) -> bool {
    let ours = stored.strip_prefix(PHC_PREFIX).and_then(|rest| {
        let (salt, hash) = rest.split_once('$')?;
        Some((
            Base64Unpadded::decode_vec(salt).ok()?,
            Base64Unpadded::decode_vec(hash).ok()?,
        ))
    });
    match ours {
        Some((salt, expected)) if expected.len() == OUTPUT_LEN => {
            match raw_hash(memory, password, &salt) {
                // Every byte is compared, so the time says nothing about where they differ.
                Ok(out) => {
                    out.iter()
                        .zip(&expected)
                        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                        == 0
                }
                Err(_) => false,
            }
        }
        _ => PasswordHash::new(stored)
            .map(|hash| argon2().verify_password(password.as_bytes(), &hash).is_ok())
            .unwrap_or(false),
    }
}

/// Hashes `password` here and now, with memory of its own (for the CLI).
pub fn hash_now(password: &str) -> Result<String, PasswordError> {
    hash_in(&mut new_memory(), password)
}

/// Checks `password` here and now, with memory of its own.
pub fn verify_now(password: &str, stored: &str) -> bool {
    verify_in(&mut new_memory(), password, stored)
}

/// Lowers the calling thread's scheduling priority (nice 10), so that when the cores are
/// busy the kernel runs the games' threads before a password hash: a login may wait a
/// little longer, a move should not.
fn yield_to_the_games() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority only changes the scheduling priority; on Linux, `who = 0`
    // with PRIO_PROCESS names the calling thread alone.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}

type Job = Box<dyn FnOnce(&mut [Block]) + Send>;

/// Hashes and verifies on its own threads, a bounded number waiting.
#[derive(Clone)]
pub struct Hasher {
    jobs: SyncSender<Job>,
    /// A hash of a random password, verified against when a login names no account so
    /// that the answer takes as long as for a real one.
    dummy: Arc<OnceLock<String>>,
}

impl Hasher {
    /// A hasher with `threads` (at least 1) hashing threads. They end when the last
    /// clone of the hasher is dropped.
    pub fn new(threads: usize) -> Hasher {
        let (jobs, queue) = sync_channel::<Job>(MAX_QUEUED);
        let queue = Arc::new(Mutex::new(queue));
        for i in 0..threads.max(1) {
            let queue = queue.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("argon2-{i}"))
                .spawn(move || hashing_thread(&queue));
            if let Err(e) = spawned {
                tracing::error!(error = %e, "cannot start a password-hashing thread");
            }
        }
        Hasher {
            jobs,
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
        work: impl FnOnce(&mut [Block]) -> T + Send + 'static,
    ) -> Result<T, PasswordError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |memory| {
            let _ = tx.send(work(memory));
        });
        self.jobs.try_send(job).map_err(|e| match e {
            TrySendError::Full(_) => PasswordError::Busy,
            TrySendError::Disconnected(_) => PasswordError::Hash("no hashing thread runs".into()),
        })?;
        rx.await
            .map_err(|_| PasswordError::Hash("the hashing thread stopped".into()))
    }

    /// The PHC hash of `password`.
    pub async fn hash(&self, password: String) -> Result<String, PasswordError> {
        self.run(move |memory| hash_in(memory, &password)).await?
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
        self.run(move |memory| match stored {
            Some(stored) => verify_in(memory, &password, &stored),
            None => {
                let dummy = dummy.get_or_init(|| {
                    let random: [u8; 16] = rand::random();
                    hash_in(memory, &hex::encode(random)).unwrap_or_default()
                });
                verify_in(memory, &password, dummy);
                false
            }
        })
        .await
    }
}

/// One hashing thread: takes jobs until the hasher is gone, always in the same memory.
fn hashing_thread(queue: &Mutex<Receiver<Job>>) {
    yield_to_the_games();
    let mut memory: Option<Vec<Block>> = None;
    loop {
        let job = match queue.lock() {
            Ok(queue) => queue.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else { return };
        job(memory.get_or_insert_with(new_memory));
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
