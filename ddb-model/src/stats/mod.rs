//! Request accounting: every request a [`Db`](crate::Db) sends is counted by operation, as
//! calls and as HTTP attempts, with the capacity the service reports as consumed; and, for a
//! handle that asks for it, the [`CostReport`] per access pattern (`cost.rs`).

mod cost;

use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use aws_sdk_dynamodb::types::ConsumedCapacity;

pub(crate) use cost::{CostRecorder, Sample};
pub use cost::{CostReport, HotKey, PatternCost, ThrottleCount};

/// Declares [`Op`]: its `$n` variants in display order, each named as the API names it.
macro_rules! ops {
    ($n:literal: $($op:ident),* $(,)?) => {
        /// A DynamoDB operation, as counted by [`RequestStats`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Op {
            $(#[doc = concat!("`", stringify!($op), "`.")] $op,)*
        }

        impl Op {
            /// Every operation, in display order.
            pub const ALL: [Op; $n] = [$(Op::$op),*];

            /// The DynamoDB API name.
            pub fn name(self) -> &'static str {
                match self {
                    $(Op::$op => stringify!($op),)*
                }
            }

            /// The name of a request's span: `DynamoDB.<Operation>`.
            #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
            pub(crate) fn span_name(self) -> &'static str {
                match self {
                    $(Op::$op => concat!("DynamoDB.", stringify!($op)),)*
                }
            }
        }
    };
}

ops!(
    28:
    GetItem,
    PutItem,
    UpdateItem,
    DeleteItem,
    Query,
    Scan,
    BatchGetItem,
    BatchWriteItem,
    TransactGetItems,
    TransactWriteItems,
    CreateTable,
    DescribeTable,
    DeleteTable,
    SearchVectors,
    DescribeTimeToLive,
    UpdateTimeToLive,
    UpdateTable,
    DescribeContinuousBackups,
    UpdateContinuousBackups,
    ListTagsOfResource,
    TagResource,
    UntagResource,
    GetResourcePolicy,
    PutResourcePolicy,
    DeleteResourcePolicy,
    DescribeStream,
    GetShardIterator,
    GetRecords,
);

impl Op {
    /// True for the operations that write (or change tables).
    pub fn is_write(self) -> bool {
        self.is_item_write()
            || matches!(
                self,
                Op::CreateTable
                    | Op::DeleteTable
                    | Op::UpdateTimeToLive
                    | Op::UpdateTable
                    | Op::UpdateContinuousBackups
                    | Op::TagResource
                    | Op::UntagResource
                    | Op::PutResourcePolicy
                    | Op::DeleteResourcePolicy
            )
    }

    /// True for the operations that write items (their capacity is write capacity).
    fn is_item_write(self) -> bool {
        matches!(
            self,
            Op::PutItem
                | Op::UpdateItem
                | Op::DeleteItem
                | Op::BatchWriteItem
                | Op::TransactWriteItems
        )
    }

    /// The position in [`Op::ALL`]: `ops!` declares the variants in its order.
    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

const N: usize = Op::ALL.len();

/// Live counters shared by clones of a `Db`.
#[derive(Default)]
pub(crate) struct Counters {
    requests: [AtomicU64; N],
    attempts: [AtomicU64; N],
    items_read: AtomicU64,
    /// Consumed capacity per operation, in thousandths of a unit, so it can be added
    /// atomically (the totals are their sums).
    read_milli: [AtomicU64; N],
    write_milli: [AtomicU64; N],
    /// Per target (the table, or one of its indexes): a short list, one entry per index
    /// the requests named, in the order they were first used.
    targets: Mutex<Vec<TargetCounts>>,
}

/// The counts of one target, kept under [`Counters::targets`]'s lock.
#[derive(Debug, Clone, Default)]
struct TargetCounts {
    index: Option<Box<str>>,
    calls: u64,
    attempts: u64,
    items_read: u64,
    read_milli: u64,
    write_milli: u64,
}

/// What a finished request adds to the counters: the target it named (`index`: `None` for
/// the table), its HTTP attempts, the items the service read for it, and the capacity the
/// response reported.
pub(crate) struct Finished<'a> {
    pub(crate) op: Op,
    pub(crate) index: Option<&'a str>,
    pub(crate) attempts: u32,
    pub(crate) items_read: u64,
    pub(crate) capacity: &'a [ConsumedCapacity],
}

impl Counters {
    pub(crate) fn record(&self, op: Op) {
        self.requests[op.index()].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn record_attempt(&self, op: Op) {
        self.attempts[op.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// Adds a finished request (answered or failed) to the totals and to its target's counts;
    /// the capacity of an index named in a response goes to that index, the rest to the
    /// request's target.
    pub(crate) fn record_finished(&self, done: &Finished<'_>) {
        let op = done.op;
        self.items_read.fetch_add(done.items_read, Ordering::Relaxed);
        let is_write = op.is_item_write();
        let mut split: Vec<(Option<&str>, u64, u64)> = Vec::new();
        for c in done.capacity {
            let (read, write) = units(
                c.read_capacity_units(),
                c.write_capacity_units(),
                c.capacity_units(),
                is_write,
            );
            self.read_milli[op.index()].fetch_add(read, Ordering::Relaxed);
            self.write_milli[op.index()].fetch_add(write, Ordering::Relaxed);
            // With per-index reports (`ReturnConsumedCapacity: INDEXES`), each index's part
            // goes to it and the table's part to the table.
            let mut named = (0u64, 0u64);
            let global = c.global_secondary_indexes().into_iter().flatten();
            for (name, part) in global.chain(c.local_secondary_indexes().into_iter().flatten()) {
                let (r, w) = units(
                    part.read_capacity_units(),
                    part.write_capacity_units(),
                    part.capacity_units(),
                    is_write,
                );
                named = (named.0.saturating_add(r), named.1.saturating_add(w));
                split.push((Some(name.as_str()), r, w));
            }
            if named == (0, 0) {
                split.push((done.index, read, write));
            } else {
                split.push((None, read.saturating_sub(named.0), write.saturating_sub(named.1)));
            }
        }
        let Ok(mut targets) = self.targets.lock() else {
            return;
        };
        let target = entry(&mut targets, done.index);
        target.calls += 1;
        target.attempts = target.attempts.saturating_add(u64::from(done.attempts));
        target.items_read = target.items_read.saturating_add(done.items_read);
        for (index, read, write) in split {
            let t = entry(&mut targets, index);
            t.read_milli = t.read_milli.saturating_add(read);
            t.write_milli = t.write_milli.saturating_add(write);
        }
    }

    pub(crate) fn snapshot(&self) -> RequestStats {
        let load = |counters: &[AtomicU64; N]| {
            std::array::from_fn(|i| counters[i].load(Ordering::Relaxed))
        };
        let total = |counters: &[AtomicU64; N]| from_milli(load(counters).iter().sum());
        RequestStats {
            requests: load(&self.requests),
            attempts: load(&self.attempts),
            items_read: self.items_read.load(Ordering::Relaxed),
            read_units: total(&self.read_milli),
            write_units: total(&self.write_milli),
        }
    }

    /// The counters broken down per operation and per target, for the table `table`.
    pub(crate) fn stats(&self, table: &str) -> Stats {
        let totals = self.snapshot();
        let ops = Op::ALL
            .iter()
            .map(|&op| OpStats {
                op,
                calls: totals.get(op),
                attempts: totals.attempts(op),
                read_units: from_milli(self.read_milli[op.index()].load(Ordering::Relaxed)),
                write_units: from_milli(self.write_milli[op.index()].load(Ordering::Relaxed)),
            })
            .filter(|s| s.calls > 0 || s.attempts > 0)
            .collect();
        let targets = self
            .targets
            .lock()
            .map(|t| t.clone())
            .unwrap_or_default()
            .into_iter()
            .map(|t| TargetStats {
                table: table.to_owned(),
                index: t.index.map(String::from),
                calls: t.calls,
                attempts: t.attempts,
                items_read: t.items_read,
                read_units: from_milli(t.read_milli),
                write_units: from_milli(t.write_milli),
            })
            .collect();
        Stats { totals, ops, targets }
    }

    pub(crate) fn reset(&self) {
        let arrays = [&self.requests, &self.attempts, &self.read_milli, &self.write_milli];
        for c in arrays.into_iter().flatten().chain([&self.items_read]) {
            c.store(0, Ordering::Relaxed);
        }
        if let Ok(mut targets) = self.targets.lock() {
            targets.clear();
        }
    }
}

/// The entry of `index` in `targets`, added when missing.
fn entry<'t>(targets: &'t mut Vec<TargetCounts>, index: Option<&str>) -> &'t mut TargetCounts {
    let at = match targets.iter().position(|t| t.index.as_deref() == index) {
        Some(at) => at,
        None => {
            targets.push(TargetCounts { index: index.map(Box::from), ..TargetCounts::default() });
            targets.len() - 1
        }
    };
    &mut targets[at]
}

/// Read and write units, in thousandths, of one capacity report: its read and write parts,
/// or else its total, counted as a write for the operations that write.
fn units(read: Option<f64>, write: Option<f64>, total: Option<f64>, is_write: bool) -> (u64, u64) {
    match (read, write) {
        (None, None) => {
            let total = to_milli(total.unwrap_or(0.0));
            if is_write { (0, total) } else { (total, 0) }
        }
        (r, w) => (to_milli(r.unwrap_or(0.0)), to_milli(w.unwrap_or(0.0))),
    }
}

fn from_milli(milli: u64) -> f64 {
    milli as f64 / 1000.0
}

fn to_milli(units: f64) -> u64 {
    if units.is_finite() && units > 0.0 { (units * 1000.0).round() as u64 } else { 0 }
}

/// A snapshot of the requests a [`Db`](crate::Db) has sent.
///
/// Two counts per operation:
/// - **calls** ([`get`](RequestStats::get), [`total`](RequestStats::total)): the requests
///   the library made, one per request it handed to the SDK. A write that carries an
///   idempotency token and is sent again after the SDK's attempts ran out counts once per
///   call. Without faults, these are the round trips an operation costs.
/// - **attempts** ([`attempts`](RequestStats::attempts),
///   [`total_attempts`](RequestStats::total_attempts)): the HTTP requests the SDK made for
///   those calls, its own retries included (counted when an attempt starts, whether or not it
///   got an answer). Never fewer than the calls that reached the SDK's send; more when the
///   SDK retried (a dropped connection, a 5xx, throttling).
///
/// Requests sent through [`Db::client`](crate::Db::client) directly are not counted.
/// Subtracting two snapshots gives the requests of the work done between them (example on
/// [`Stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RequestStats {
    requests: [u64; N],
    attempts: [u64; N],
    items_read: u64,
    read_units: f64,
    write_units: f64,
}

impl RequestStats {
    /// Calls of one operation (requests the library made).
    pub fn get(&self, op: Op) -> u64 {
        self.requests[op.index()]
    }

    /// All calls.
    pub fn total(&self) -> u64 {
        self.requests.iter().sum()
    }

    /// HTTP attempts of one operation (the SDK's retries included).
    pub fn attempts(&self, op: Op) -> u64 {
        self.attempts[op.index()]
    }

    /// All HTTP attempts.
    pub fn total_attempts(&self) -> u64 {
        self.attempts.iter().sum()
    }

    /// Items the service read for the requests: the items examined by queries and scans
    /// (their `ScannedCount`, filtered-out items included) and the items returned by gets,
    /// batch gets and transactional gets.
    pub fn items_read(&self) -> u64 {
        self.items_read
    }

    /// Read capacity units the service reported as consumed: 0 unless the requests asked
    /// for reports ([`Db::with_capacity`](crate::Db::with_capacity), off by default).
    pub fn read_units(&self) -> f64 {
        self.read_units
    }

    /// Write capacity units the service reported as consumed: 0 unless the requests asked
    /// for reports ([`Db::with_capacity`](crate::Db::with_capacity), off by default).
    pub fn write_units(&self) -> f64 {
        self.write_units
    }

    /// The operations with a non-zero count of calls, with their counts of calls.
    pub fn iter(&self) -> impl Iterator<Item = (Op, u64)> + '_ {
        Op::ALL.iter().map(|&op| (op, self.get(op))).filter(|&(_, n)| n > 0)
    }
}

impl std::ops::Sub for RequestStats {
    type Output = RequestStats;
    fn sub(self, earlier: RequestStats) -> RequestStats {
        let sub =
            |now: [u64; N], then: [u64; N]| std::array::from_fn(|i| now[i].saturating_sub(then[i]));
        RequestStats {
            requests: sub(self.requests, earlier.requests),
            attempts: sub(self.attempts, earlier.attempts),
            items_read: self.items_read.saturating_sub(earlier.items_read),
            read_units: (self.read_units - earlier.read_units).max(0.0),
            write_units: (self.write_units - earlier.write_units).max(0.0),
        }
    }
}

impl fmt::Display for RequestStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (op, n)) in self.iter().enumerate() {
            let sep = if i > 0 { ", " } else { "" };
            write!(f, "{sep}{op} {n}")?;
            let attempts = self.attempts(op);
            if attempts != n {
                write!(f, " ({attempts} attempts)")?;
            }
        }
        if self.total() == 0 { f.write_str("no requests") } else { Ok(()) }
    }
}

/// The requests a [`Db`](crate::Db) has sent, broken down per operation and per target (the
/// table, or one of its indexes): what [`Db::stats`](crate::Db::stats) returns.
///
/// Per operation: calls, HTTP attempts and the capacity the service reported. Per target:
/// calls, attempts, items read and capacity; a query or scan of an index counts under the
/// index, every other request under the table. Capacity is reported only by a handle that
/// asks for it ([`Db::with_capacity`](crate::Db::with_capacity)); such a handle asks for
/// the per-index breakdown, so that the capacity a write spends on each index it changes is
/// counted under that index and the rest under the table.
///
/// `Display` prints both breakdowns as aligned tables.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ddb_model::Error> {
/// use ddb_model::{Entity, Op, local};
/// # use serde::{Deserialize, Serialize};
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[entity(pk = "USER#<id>", sk = "PROFILE")]
/// #[index(gsi1, pk = "ORG#<org>", sk = "USER#<id>")]
/// struct User { id: String, org: String }
///
/// let db = local::isolated_db().await?.with_capacity(true);
/// db.reset_requests(); // the table's creation
/// User { id: "ann".into(), org: "acme".into() }.put(&db).await?;
/// User::query_gsi1(&db, "acme").all().await?;
///
/// let stats = db.stats();
/// assert_eq!((stats.totals().total(), stats.totals().get(Op::Query)), (2, 1));
/// assert_eq!((db.requests() - *stats.totals()).total(), 0);
/// assert_eq!(stats.op(Op::PutItem).calls, 1);
/// assert_eq!(stats.target(Some("gsi1")).map(|t| t.calls), Some(1)); // the query
/// assert_eq!(stats.target(None).map(|t| t.calls), Some(1)); // the put
/// println!("{stats}");
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Stats {
    totals: RequestStats,
    ops: Vec<OpStats>,
    targets: Vec<TargetStats>,
}

/// The requests of one operation kind ([`Stats::op`]).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct OpStats {
    /// The operation.
    pub op: Op,
    /// Requests the library made.
    pub calls: u64,
    /// HTTP attempts the SDK made for them (its retries included).
    pub attempts: u64,
    /// Read capacity units reported as consumed.
    pub read_units: f64,
    /// Write capacity units reported as consumed.
    pub write_units: f64,
}

/// The requests of one target: the table or one of its indexes ([`Stats::target`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TargetStats {
    /// The physical table name.
    pub table: String,
    /// The index; `None` for the table itself.
    pub index: Option<String>,
    /// Requests made to the target.
    pub calls: u64,
    /// HTTP attempts the SDK made for them.
    pub attempts: u64,
    /// Items the service read for them (see [`RequestStats::items_read`]).
    pub items_read: u64,
    /// Read capacity units reported as consumed by the target.
    pub read_units: f64,
    /// Write capacity units reported as consumed by the target.
    pub write_units: f64,
}

impl Stats {
    /// The totals, as [`Db::requests`](crate::Db::requests) returns them.
    pub fn totals(&self) -> &RequestStats {
        &self.totals
    }

    /// The requests of `op` (all zero when none was sent).
    pub fn op(&self, op: Op) -> OpStats {
        self.ops.iter().find(|s| s.op == op).copied().unwrap_or(OpStats {
            op,
            calls: 0,
            attempts: 0,
            read_units: 0.0,
            write_units: 0.0,
        })
    }

    /// Every operation that sent a request, in [`Op::ALL`]'s order.
    pub fn ops(&self) -> &[OpStats] {
        &self.ops
    }

    /// The requests of the table (`None`) or of the index `index`, if any was sent or
    /// reported capacity.
    pub fn target(&self, index: Option<&str>) -> Option<&TargetStats> {
        self.targets.iter().find(|t| t.index.as_deref() == index)
    }

    /// Every target that was sent a request or reported capacity, in the order first used.
    pub fn targets(&self) -> &[TargetStats] {
        &self.targets
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self
            .targets
            .iter()
            .map(|t| match &t.index {
                Some(index) => format!("{}/{index}", t.table),
                None => t.table.clone(),
            })
            .collect();
        let w = names.iter().map(|n| n.chars().count()).chain([18]).max().unwrap_or(18);
        writeln!(
            f,
            "{:<w$} {:>8} {:>9} {:>10} {:>10}",
            "operation", "calls", "attempts", "read CU", "write CU"
        )?;
        for s in &self.ops {
            let (op, calls, attempts) = (s.op.name(), s.calls, s.attempts);
            let (read, write) = (s.read_units, s.write_units);
            writeln!(f, "{op:<w$} {calls:>8} {attempts:>9} {read:>10.1} {write:>10.1}")?;
        }
        writeln!(
            f,
            "{:<w$} {:>8} {:>9} {:>10} {:>10} {:>10}",
            "table / index", "calls", "attempts", "read CU", "write CU", "items read"
        )?;
        for (t, name) in self.targets.iter().zip(&names) {
            let (calls, attempts, items) = (t.calls, t.attempts, t.items_read);
            let (read, write) = (t.read_units, t.write_units);
            writeln!(
                f,
                "{name:<w$} {calls:>8} {attempts:>9} {read:>10.1} {write:>10.1} {items:>10}"
            )?;
        }
        Ok(())
    }
}
