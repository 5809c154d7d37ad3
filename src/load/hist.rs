//! Latency histograms: log-linear buckets over microseconds (under 1% error per bucket),
//! recorded lock-free by many connection tasks at once and merged across processes.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// Values below this are their own bucket.
const LINEAR: u64 = 256;
/// Sub-buckets per power of two above [`LINEAR`] (2^7: under 0.8% relative error).
const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
/// Powers of two covered above [`LINEAR`]: up to 2^40 µs, about 12 days.
const OCTAVES: u64 = 40 - 8;
const BUCKETS: usize = (LINEAR + OCTAVES * SUB) as usize;

fn bucket(us: u64) -> usize {
    if us < LINEAR {
        return us as usize;
    }
    let e = 63 - u64::from(us.leading_zeros());
    let shift = e - u64::from(SUB_BITS);
    let m = (us >> shift) - SUB;
    ((LINEAR + (e - 8) * SUB + m) as usize).min(BUCKETS - 1)
}

/// The middle of a bucket's range, in microseconds.
fn value(bucket: usize) -> f64 {
    let b = bucket as u64;
    if b < LINEAR {
        return b as f64;
    }
    let e = (b - LINEAR) / SUB + 8;
    let m = (b - LINEAR) % SUB + SUB;
    let shift = e - u64::from(SUB_BITS);
    let low = m << shift;
    low as f64 + ((1u64 << shift) as f64 - 1.0) / 2.0
}

/// A histogram many tasks record into at once.
pub struct AtomicHistogram {
    counts: Box<[AtomicU64]>,
    max: AtomicU64,
    sum: AtomicU64,
}

impl Default for AtomicHistogram {
    fn default() -> Self {
        AtomicHistogram {
            counts: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            max: AtomicU64::new(0),
            sum: AtomicU64::new(0),
        }
    }
}

impl AtomicHistogram {
    pub fn record(&self, us: u64) {
        self.counts[bucket(us)].fetch_add(1, Ordering::Relaxed);
        self.max.fetch_max(us, Ordering::Relaxed);
        self.sum.fetch_add(us, Ordering::Relaxed);
    }

    /// What has been recorded so far, as a plain value.
    pub fn snapshot(&self) -> Histogram {
        let counts = self
            .counts
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let n = c.load(Ordering::Relaxed);
                (n > 0).then_some((i as u32, n))
            })
            .collect();
        Histogram {
            counts,
            max_us: self.max.load(Ordering::Relaxed),
            sum_us: self.sum.load(Ordering::Relaxed),
        }
    }
}

/// Recorded latencies: the non-empty buckets, the exact maximum and the sum.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    /// (bucket, count), by bucket.
    counts: Vec<(u32, u64)>,
    pub max_us: u64,
    pub sum_us: u64,
}

impl Histogram {
    pub fn count(&self) -> u64 {
        self.counts.iter().map(|&(_, n)| n).sum()
    }

    /// Adds another histogram's recordings to this one.
    pub fn merge(&mut self, other: &Histogram) {
        let mut all = std::collections::BTreeMap::new();
        for &(b, n) in self.counts.iter().chain(&other.counts) {
            *all.entry(b).or_insert(0) += n;
        }
        self.counts = all.into_iter().collect();
        self.max_us = self.max_us.max(other.max_us);
        self.sum_us += other.sum_us;
    }

    /// The value below which a fraction `q` (0..=1) of recordings fall, in microseconds
    /// (the middle of its bucket, never above the exact maximum); 0 when empty.
    pub fn quantile(&self, q: f64) -> f64 {
        let total = self.count();
        if total == 0 {
            return 0.0;
        }
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for &(b, n) in &self.counts {
            seen += n;
            if seen >= rank {
                return value(b as usize).min(self.max_us as f64);
            }
        }
        self.max_us as f64
    }

    pub fn mean(&self) -> f64 {
        match self.count() {
            0 => 0.0,
            n => self.sum_us as f64 / n as f64,
        }
    }

    /// The usual summary, in milliseconds.
    pub fn summary(&self) -> Summary {
        let ms = |us: f64| (us / 10.0).round() / 100.0;
        Summary {
            count: self.count(),
            p50_ms: ms(self.quantile(0.50)),
            p90_ms: ms(self.quantile(0.90)),
            p99_ms: ms(self.quantile(0.99)),
            p999_ms: ms(self.quantile(0.999)),
            max_ms: ms(self.max_us as f64),
            mean_ms: ms(self.mean()),
        }
    }
}

/// Percentiles of a histogram, in milliseconds (two decimals).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub count: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "p50 {:.2} ms  p90 {:.2}  p99 {:.2}  p99.9 {:.2}  max {:.2}  (n = {})",
            self.p50_ms, self.p90_ms, self.p99_ms, self.p999_ms, self.max_ms, self.count
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_ordered_and_tight() {
        let mut last = 0;
        for us in (0..5_000_000u64).step_by(7) {
            let b = bucket(us);
            assert!(b >= last, "bucket order at {us}");
            last = b;
            let mid = value(b);
            assert!(
                (mid - us as f64).abs() <= (us as f64 * 0.008).max(0.5),
                "{us} -> {mid}"
            );
        }
    }

    #[test]
    fn quantiles_of_one_to_a_thousand_ms() {
        let h = AtomicHistogram::default();
        for ms in 1..=1000u64 {
            h.record(ms * 1000);
        }
        let mut s = h.snapshot();
        let near = |a: f64, b: f64| (a - b).abs() <= b * 0.01;
        assert!(near(s.quantile(0.5), 500_000.0), "{}", s.quantile(0.5));
        assert!(near(s.quantile(0.99), 990_000.0), "{}", s.quantile(0.99));
        assert_eq!(s.max_us, 1_000_000);
        s.merge(&h.snapshot());
        assert_eq!(s.count(), 2000);
        assert!(near(s.quantile(0.999), 999_000.0));
        assert_eq!(Histogram::default().quantile(0.99), 0.0);
    }
}
