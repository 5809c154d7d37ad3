//! A store call from a request's async code. The store is synchronous (see the module
//! above), so each call runs on tokio's blocking pool; a failure is the client's
//! `unavailable`, naming what could not be read or changed, and nothing is changed.

use super::StoreError;
use crate::protocol::{ErrorCode, Refusal};

/// Runs `f` on the blocking pool; a store failure (or a call that did not finish) is
/// refused `unavailable`: "`what` cannot be read or changed now".
pub async fn blocking<T: Send + 'static>(
    what: &'static str,
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, Refusal> {
    let failed = |e: &dyn std::fmt::Display| {
        Refusal::new(
            ErrorCode::Unavailable,
            format!("{what} cannot be read or changed now: {e}"),
        )
    };
    match tokio::task::spawn_blocking(f).await {
        Ok(done) => done.map_err(|e| failed(&e)),
        Err(e) => Err(failed(&e)),
    }
}
