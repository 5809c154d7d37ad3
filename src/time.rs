//! Wall-clock time as the server records it. Clocks never read it (they run on tokio's
//! monotonic time, which tests can pause); it stamps records, scheduled starts and the
//! `server_time` that clients use to correct for their own clock's offset.

/// Server Unix time in milliseconds.
pub fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
