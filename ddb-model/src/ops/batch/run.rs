//! How a batch runs its chunks: parallel chunks, attempts per chunk, backoff between
//! attempts.

use std::collections::HashSet;
use std::future::Future;
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};

use super::keys::RawKey;
use crate::error::Error;
use crate::item::Item;
use crate::ops::retry::{Backoff, UNPROCESSED};

pub(super) const DEFAULT_CONCURRENCY: usize = 4;

/// How a batch runs: parallel chunks, and the attempts per chunk and backoff between them
/// (by default [`UNPROCESSED`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Retry {
    pub(super) concurrency: usize,
    pub(super) policy: Backoff,
}

impl Default for Retry {
    fn default() -> Self {
        Retry { concurrency: DEFAULT_CONCURRENCY, policy: UNPROCESSED }
    }
}

impl Retry {
    /// At most `chunks` chunks in flight at once (0 counts as 1).
    pub(super) fn concurrency(self, chunks: usize) -> Retry {
        Retry { concurrency: chunks.max(1), ..self }
    }

    /// At most `attempts` requests per chunk, the first included (0 counts as 1).
    pub(super) fn max_attempts(self, attempts: u32) -> Retry {
        Retry { policy: Backoff { tries: attempts.max(1), ..self.policy }, ..self }
    }

    /// The backoff between attempts (see [`Backoff::delay`]).
    pub(super) fn backoff(self, base: Duration, max: Duration) -> Retry {
        Retry { policy: Backoff { base, max, ..self.policy }, ..self }
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

/// What one chunk's requests ended with: the items read, the indexes (into the chunk) not
/// known to be processed, and the error of a request that failed, if one did.
pub(super) type Rounds = (Vec<Item>, Vec<usize>, Option<Error>);

/// Sends one chunk of `len` keys or writes (entry `i` has key `raw(i)`) until the service
/// leaves none unprocessed, at most `policy.tries` requests, pausing with [`Backoff::pause`]
/// between them. `round` sends one request for the pending indexes: the items it read and the
/// keys it left unprocessed. A failed request ends the rounds (the SDK has retried what it could).
pub(super) async fn until_processed<'r, F, Fut>(
    len: usize,
    raw: impl Fn(usize) -> &'r RawKey,
    policy: Backoff,
    mut round: F,
) -> Rounds
where
    F: FnMut(&[usize]) -> Fut,
    Fut: Future<Output = Result<(Vec<Item>, HashSet<RawKey>), Error>>,
{
    let mut found = Vec::new();
    let mut pending: Vec<usize> = (0..len).collect();
    let mut attempt = 0;
    loop {
        attempt += 1;
        let unprocessed = match round(&pending).await {
            Ok((items, unprocessed)) => {
                found.extend(items);
                unprocessed
            }
            Err(e) => return (found, pending, Some(e)),
        };
        pending.retain(|&i| unprocessed.contains(raw(i)));
        if pending.is_empty() || attempt >= policy.tries {
            return (found, pending, None);
        }
        policy.pause(attempt).await;
    }
}
