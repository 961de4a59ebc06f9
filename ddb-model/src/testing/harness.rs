//! [`Harness`]: a fresh table behind a fault proxy, the user's operations run concurrently
//! through it, and the user's invariants checked on a clean handle afterwards.

use std::fmt;
use std::future::Future;

use super::faults::Faults;
use super::proxy::{Counts, Proxy};
use crate::db::Db;
use crate::error::Error;
use crate::model::Table;
use crate::stats::RequestStats;

/// A fresh table of layout `T`, a [`Proxy`] injecting [`Faults`] in front of the engine, a
/// handle whose requests go through the proxy ([`db`](Harness::db)) and a handle on a clean
/// connection ([`direct`](Harness::direct)), to set up data and check invariants.
/// [`run`](Harness::run) runs operations concurrently under the faults and then checks the
/// invariants.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use ddb_model::testing::{Faults, Harness};
/// use ddb_model::{DefaultTable, Entity};
/// # use serde::{Deserialize, Serialize};
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[entity(pk = "HIT#<page>", sk = "HIT#<n>")]
/// struct Hit { page: String, n: u64 }
///
/// let harness = Harness::<DefaultTable>::start(Faults::mix(7)).await?;
/// let report = harness
///     .run(
///         4,  // tasks
///         10, // operations per task
///         |db, step| async move {
///             // A put is idempotent: repeated after a lost response, it writes the same item.
///             Hit { page: "home".into(), n: (step.task * 10 + step.op) as u64 }.put(&db).await
///         },
///         |direct| async move {
///             // The invariant, checked on a clean connection: only the 40 items written.
///             let hits = Hit::query(&direct, "home").all().await?;
///             match hits.iter().find(|h| h.n >= 40) {
///                 Some(h) => Err(format!("an item nobody wrote: {}", h.n).into()),
///                 None => Ok::<_, Box<dyn std::error::Error>>(()),
///             }
///         },
///     )
///     .await
///     .map_err(|failed| failed.to_string())?; // the seed and what was injected
/// assert_eq!((report.seed, report.ok + report.failed), (7, 40));
/// assert!(report.requests.total() >= 40);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Harness<T: Table> {
    proxy: Proxy,
    db: Db<T>,
    direct: Db<T>,
}

impl<T: Table> Harness<T> {
    /// A new, uniquely named table laid out as `T` on
    /// [`local::endpoint`](crate::local::endpoint) (the embedded engine, or `DDB_ENDPOINT`),
    /// and a proxy injecting `faults` in front of it.
    pub async fn start(faults: Faults) -> Result<Harness<T>, Error> {
        let direct = crate::local::isolated_db::<T>().await?;
        Harness::on(direct, faults).await
    }

    /// A proxy injecting `faults` in front of the endpoint of
    /// [`local::endpoint`](crate::local::endpoint), for the table of `direct` (which should
    /// be a clean connection to that endpoint).
    pub async fn on(direct: Db<T>, faults: Faults) -> Result<Harness<T>, Error> {
        let proxy = Proxy::start(faults).await?;
        let db = proxy.db(&direct);
        Ok(Harness { proxy, db, direct })
    }

    /// The harness, with both handles changed by `configure` (a keyring, a clock, an
    /// interceptor: what the code under test needs). `configure` is called once per handle.
    #[must_use]
    pub fn configure(self, configure: impl Fn(Db<T>) -> Db<T>) -> Harness<T> {
        let db = configure(self.db);
        let direct = configure(self.direct);
        Harness { proxy: self.proxy, db, direct }
    }

    /// The handle whose requests go through the proxy: give it to the code under test.
    pub fn db(&self) -> &Db<T> {
        &self.db
    }

    /// The handle on a clean connection: set up data and check invariants with it.
    pub fn direct(&self) -> &Db<T> {
        &self.direct
    }

    /// The proxy: its [`counts`](Proxy::counts), and [`set_faults`](Proxy::set_faults) to
    /// change the faults between phases of a test.
    pub fn proxy(&self) -> &Proxy {
        &self.proxy
    }

    /// Runs `op` `ops` times in each of `tasks` concurrent tasks (polled together on the
    /// caller's task), each call with the faulted handle and its [`Step`], then `check` with
    /// the direct handle. An operation may fail (that is what faults do): failures are
    /// counted in the [`Report`], not returned. A failed `check` returns its error with the
    /// report: the seed, what the proxy injected, what the operations did.
    pub async fn run<Op, OpFut, Check, CheckFut, E>(
        &self,
        tasks: usize,
        ops: usize,
        op: Op,
        check: Check,
    ) -> Result<Report, InvariantFailed<E>>
    where
        Op: Fn(Db<T>, Step) -> OpFut,
        OpFut: Future<Output = Result<(), Error>>,
        Check: FnOnce(Db<T>) -> CheckFut,
        CheckFut: Future<Output = Result<(), E>>,
    {
        let seed = self.proxy.faults().seed();
        let before = self.proxy.counts();
        let requests_before = self.db.requests();
        let op = &op;
        let runs = (0..tasks).map(|task| async move {
            let mut outcome = TaskOutcome::default();
            for n in 0..ops {
                let step = Step::new(seed, task, n);
                match op(self.db.clone(), step).await {
                    Ok(()) => outcome.ok += 1,
                    Err(e) => {
                        outcome.failed += 1;
                        if outcome.errors.len() < MAX_ERRORS {
                            outcome.errors.push(format!("task {task}, op {n}: {e}"));
                        }
                    }
                }
            }
            outcome
        });
        let outcomes = futures_util::future::join_all(runs).await;
        let mut report = Report {
            seed,
            tasks,
            ops,
            ok: 0,
            failed: 0,
            errors: Vec::new(),
            injected: self.proxy.counts().since(&before),
            requests: self.db.requests() - requests_before,
        };
        for outcome in outcomes {
            report.ok += outcome.ok;
            report.failed += outcome.failed;
            let room = MAX_ERRORS.saturating_sub(report.errors.len());
            report.errors.extend(outcome.errors.into_iter().take(room));
        }
        match check(self.direct.clone()).await {
            Ok(()) => Ok(report),
            Err(error) => Err(InvariantFailed { report, error }),
        }
    }
}

/// Most operation errors a [`Report`] keeps.
const MAX_ERRORS: usize = 8;

#[derive(Default)]
struct TaskOutcome {
    ok: u64,
    failed: u64,
    errors: Vec<String>,
}

impl Counts {
    /// The counts since `before` (a snapshot of the same proxy).
    fn since(&self, before: &Counts) -> Counts {
        Counts {
            requests: self.requests - before.requests,
            forwarded: self.forwarded - before.forwarded,
            dropped_before: self.dropped_before - before.dropped_before,
            dropped_after: self.dropped_after - before.dropped_after,
            errors_500: self.errors_500 - before.errors_500,
            throttled: self.throttled - before.throttled,
            canceled: self.canceled - before.canceled,
            unprocessed: self.unprocessed - before.unprocessed,
            held: self.held - before.held,
        }
    }
}

/// One call of the operation in [`Harness::run`]: which task and which operation of it, and
/// a deterministic generator seeded from the run's seed, the task and the operation, for the
/// operation's choices (which account, which amount): a run with the same seed makes the same
/// choices.
#[derive(Debug, Clone)]
pub struct Step {
    /// The task, `0..tasks`.
    pub task: usize,
    /// The operation within the task, `0..ops`.
    pub op: usize,
    state: u64,
}

impl Step {
    fn new(seed: u64, task: usize, op: usize) -> Step {
        // SplitMix64 of the three, so that neighbouring steps start far apart.
        let mut z = seed
            ^ (task as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (op as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Step { task, op, state: (z ^ (z >> 31)) | 1 }
    }

    /// The next number of the step's generator (xorshift64*).
    pub fn next_u64(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { (self.next_u64() >> 11) % n }
    }
}

/// What a [`Harness::run`] did: its seed and size, how many operations returned `Ok` and how
/// many an error (with the first few errors), what the proxy injected meanwhile and the
/// requests the faulted handle sent.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Report {
    /// The seed of the proxy's decisions and of the steps' generators.
    pub seed: u64,
    /// Concurrent tasks.
    pub tasks: usize,
    /// Operations per task.
    pub ops: usize,
    /// Operations that returned `Ok`.
    pub ok: u64,
    /// Operations that returned an error.
    pub failed: u64,
    /// The first errors (at most 8), each with its task and operation.
    pub errors: Vec<String>,
    /// What the proxy did during the run.
    pub injected: Counts,
    /// The requests and HTTP attempts of the faulted handle during the run.
    pub requests: RequestStats,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "seed {}, {} tasks x {} ops: {} ok, {} failed; proxy: {}",
            self.seed, self.tasks, self.ops, self.ok, self.failed, self.injected
        )?;
        for e in &self.errors {
            write!(f, "\n  {e}")?;
        }
        Ok(())
    }
}

/// An invariant that did not hold after a [`Harness::run`]: the check's error and the run's
/// [`Report`] (rerun with the same seed to reproduce).
#[derive(Debug)]
#[non_exhaustive]
pub struct InvariantFailed<E> {
    /// What the run did.
    pub report: Report,
    /// The check's error.
    pub error: E,
}

impl<E: fmt::Display> fmt::Display for InvariantFailed<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invariant failed: {} ({})", self.error, self.report)
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for InvariantFailed<E> {}

#[cfg(test)]
mod tests {
    use super::Step;

    #[test]
    fn steps_are_deterministic_and_distinct() {
        let draws = |seed, task, op| {
            let mut s = Step::new(seed, task, op);
            (s.next_u64(), s.below(10))
        };
        assert_eq!(draws(7, 1, 2), draws(7, 1, 2));
        assert_ne!(draws(7, 1, 2).0, draws(7, 2, 1).0);
        assert_ne!(draws(7, 1, 2).0, draws(8, 1, 2).0);
        assert!(draws(7, 0, 0).1 < 10);
        assert_eq!(Step::new(1, 0, 0).below(0), 0);
    }
}
