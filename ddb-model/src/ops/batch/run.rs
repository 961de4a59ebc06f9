//! How a batch runs its chunks: parallel chunks, attempts per chunk, backoff between
//! attempts.

use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};

use crate::ops::retry;

pub(super) const DEFAULT_CONCURRENCY: usize = 4;
pub(super) const DEFAULT_MAX_ATTEMPTS: u32 = 8;
pub(super) const DEFAULT_BACKOFF_BASE: Duration = Duration::from_millis(50);
pub(super) const DEFAULT_BACKOFF_MAX: Duration = Duration::from_secs(2);

/// How a batch runs: parallel chunks, attempts per chunk, backoff between attempts.
#[derive(Debug, Clone, Copy)]
pub(super) struct Retry {
    pub(super) concurrency: usize,
    pub(super) max_attempts: u32,
    pub(super) base: Duration,
    pub(super) max: Duration,
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            concurrency: DEFAULT_CONCURRENCY,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            base: DEFAULT_BACKOFF_BASE,
            max: DEFAULT_BACKOFF_MAX,
        }
    }
}

impl Retry {
    /// At most `chunks` chunks in flight at once (0 counts as 1).
    pub(super) fn concurrency(self, chunks: usize) -> Retry {
        Retry { concurrency: chunks.max(1), ..self }
    }

    /// At most `attempts` requests per chunk, the first included (0 counts as 1).
    pub(super) fn max_attempts(self, attempts: u32) -> Retry {
        Retry { max_attempts: attempts.max(1), ..self }
    }

    /// The backoff between attempts (see [`delay`](Retry::delay)).
    pub(super) fn backoff(self, base: Duration, max: Duration) -> Retry {
        Retry { base, max, ..self }
    }

    /// The pause after attempt `attempt` (1-based): full jitter, uniformly random between zero
    /// and `min(max, base * 2^(attempt - 1))`.
    pub(super) fn delay(&self, attempt: u32) -> Duration {
        retry::delay(self.base, self.max, attempt)
    }
}

/// What to do after a chunk finished.
pub(super) enum Flow {
    /// Go on.
    Continue,
    /// Start no more chunks; drive the ones in flight to their end (writes: their outcome
    /// must be known).
    Drain,
    /// Start no more chunks and drop the ones in flight (reads).
    Abort,
}

/// Sends `chunks` with at most `concurrency` of them in flight. `run` turns a chunk into its
/// future, `done` takes its result.
pub(super) async fn run_chunks<C, F, R>(
    chunks: impl Iterator<Item = C>,
    concurrency: usize,
    run: impl Fn(C) -> F,
    mut done: impl FnMut(R) -> Flow,
) where
    F: std::future::Future<Output = R>,
{
    let mut chunks = chunks.fuse();
    let mut in_flight = FuturesUnordered::new();
    let mut launch = true;
    loop {
        while launch && in_flight.len() < concurrency.max(1) {
            match chunks.next() {
                Some(chunk) => in_flight.push(run(chunk)),
                None => break,
            }
        }
        let Some(result) = in_flight.next().await else {
            return;
        };
        match done(result) {
            Flow::Continue => {}
            Flow::Drain => launch = false,
            Flow::Abort => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_bounded_by_the_exponential_and_the_cap() {
        let retry = Retry {
            concurrency: 1,
            max_attempts: 40,
            base: Duration::from_millis(10),
            max: Duration::from_millis(300),
        };
        for attempt in 1..40 {
            let bound = Duration::from_millis(10)
                .saturating_mul(1u32.checked_shl(attempt - 1).unwrap_or(u32::MAX))
                .min(Duration::from_millis(300));
            for _ in 0..20 {
                assert!(retry.delay(attempt) <= bound, "attempt {attempt}");
            }
        }
    }

    #[test]
    fn huge_backoffs_neither_overflow_nor_panic() {
        let retry = Retry { base: Duration::MAX, max: Duration::MAX, ..Retry::default() };
        assert!(retry.delay(u32::MAX) <= Duration::MAX);
    }
}
