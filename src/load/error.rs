//! Why a load run could not start or finish: one error for the whole tool, below every
//! part of it, so the storm and the fleet both return it without importing each other.

/// Why a run could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{0}")]
    Url(String),
    #[error(
        "the load tool only targets this machine's loopback addresses (127.0.0.0/8, ::1, localhost), not {0}"
    )]
    NotLoopback(String),
    #[error("{0}")]
    TooBig(String),
    #[error("a worker process failed: {0}")]
    Worker(String),
}
