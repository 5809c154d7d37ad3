//! Per-connection message rate limiting: a token bucket. Refused messages are answered
//! with `rate_limited`; a connection that keeps flooding is closed.

use tokio::time::Instant;

/// A token bucket of `burst` tokens refilled at `per_second`.
pub struct RateLimit {
    tokens: f64,
    burst: f64,
    per_second: f64,
    last: Instant,
    /// Messages refused in a row.
    pub refused_in_row: u32,
}

impl RateLimit {
    pub fn new(per_second: u32, burst: u32) -> RateLimit {
        RateLimit {
            tokens: f64::from(burst.max(1)),
            burst: f64::from(burst.max(1)),
            per_second: f64::from(per_second.max(1)),
            last: Instant::now(),
            refused_in_row: 0,
        }
    }

    /// Takes one token if there is one.
    pub fn allow(&mut self) -> bool {
        let now = Instant::now();
        let refill = now.duration_since(self.last).as_secs_f64() * self.per_second;
        self.tokens = (self.tokens + refill).min(self.burst);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            self.refused_in_row = 0;
            true
        } else {
            self.refused_in_row += 1;
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_burst_passes_then_the_rate_holds() {
        let mut r = RateLimit::new(10, 5);
        assert_eq!((0..5).filter(|_| r.allow()).count(), 5);
        assert!(!r.allow());
        assert_eq!(r.refused_in_row, 1);
        tokio::time::advance(std::time::Duration::from_millis(300)).await;
        assert_eq!((0..5).filter(|_| r.allow()).count(), 3);
        assert_eq!(r.refused_in_row, 2);
    }
}
