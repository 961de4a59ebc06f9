//! Request accounting: every request a [`Db`](crate::Db) sends is counted by operation, as
//! calls and as HTTP attempts, with the capacity the service reports as consumed.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use aws_sdk_dynamodb::types::ConsumedCapacity;

/// A DynamoDB operation, as counted by [`RequestStats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Op {
    /// `GetItem`.
    GetItem,
    /// `PutItem`.
    PutItem,
    /// `UpdateItem`.
    UpdateItem,
    /// `DeleteItem`.
    DeleteItem,
    /// `Query`.
    Query,
    /// `Scan`.
    Scan,
    /// `BatchGetItem`.
    BatchGetItem,
    /// `BatchWriteItem`.
    BatchWriteItem,
    /// `TransactGetItems`.
    TransactGetItems,
    /// `TransactWriteItems`.
    TransactWriteItems,
    /// `CreateTable`.
    CreateTable,
    /// `DescribeTable`.
    DescribeTable,
    /// `DeleteTable`.
    DeleteTable,
}

impl Op {
    /// Every operation, in display order.
    pub const ALL: [Op; 13] = [
        Op::GetItem,
        Op::PutItem,
        Op::UpdateItem,
        Op::DeleteItem,
        Op::Query,
        Op::Scan,
        Op::BatchGetItem,
        Op::BatchWriteItem,
        Op::TransactGetItems,
        Op::TransactWriteItems,
        Op::CreateTable,
        Op::DescribeTable,
        Op::DeleteTable,
    ];

    /// The DynamoDB API name.
    pub fn name(self) -> &'static str {
        match self {
            Op::GetItem => "GetItem",
            Op::PutItem => "PutItem",
            Op::UpdateItem => "UpdateItem",
            Op::DeleteItem => "DeleteItem",
            Op::Query => "Query",
            Op::Scan => "Scan",
            Op::BatchGetItem => "BatchGetItem",
            Op::BatchWriteItem => "BatchWriteItem",
            Op::TransactGetItems => "TransactGetItems",
            Op::TransactWriteItems => "TransactWriteItems",
            Op::CreateTable => "CreateTable",
            Op::DescribeTable => "DescribeTable",
            Op::DeleteTable => "DeleteTable",
        }
    }

    /// True for the operations that write (or change tables).
    pub fn is_write(self) -> bool {
        matches!(
            self,
            Op::PutItem
                | Op::UpdateItem
                | Op::DeleteItem
                | Op::BatchWriteItem
                | Op::TransactWriteItems
                | Op::CreateTable
                | Op::DeleteTable
        )
    }

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

// `Op::index` relies on `ALL` listing the variants in declaration order.
const _: () = {
    let mut i = 0;
    while i < N {
        assert!(Op::ALL[i] as usize == i, "Op::ALL must list every variant in order");
        i += 1;
    }
};

/// Live counters shared by clones of a `Db`.
#[derive(Default)]
pub(crate) struct Counters {
    requests: [AtomicU64; N],
    attempts: [AtomicU64; N],
    items_read: AtomicU64,
    /// Consumed capacity in thousandths of a unit, so it can be added atomically.
    read_milli: AtomicU64,
    write_milli: AtomicU64,
}

impl Counters {
    pub(crate) fn record(&self, op: Op) {
        self.requests[op.index()].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn record_attempt(&self, op: Op) {
        self.attempts[op.index()].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn record_items(&self, n: u64) {
        self.items_read.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn record_capacity<'a>(
        &self,
        op: Op,
        capacity: impl IntoIterator<Item = &'a ConsumedCapacity>,
    ) {
        let is_write = matches!(
            op,
            Op::PutItem
                | Op::UpdateItem
                | Op::DeleteItem
                | Op::BatchWriteItem
                | Op::TransactWriteItems
        );
        for c in capacity {
            let (read, write) = match (c.read_capacity_units(), c.write_capacity_units()) {
                (None, None) => {
                    let total = c.capacity_units().unwrap_or(0.0);
                    if is_write { (0.0, total) } else { (total, 0.0) }
                }
                (r, w) => (r.unwrap_or(0.0), w.unwrap_or(0.0)),
            };
            self.read_milli.fetch_add(to_milli(read), Ordering::Relaxed);
            self.write_milli.fetch_add(to_milli(write), Ordering::Relaxed);
        }
    }

    pub(crate) fn snapshot(&self) -> RequestStats {
        let mut requests = [0; N];
        for (slot, counter) in requests.iter_mut().zip(&self.requests) {
            *slot = counter.load(Ordering::Relaxed);
        }
        let mut attempts = [0; N];
        for (slot, counter) in attempts.iter_mut().zip(&self.attempts) {
            *slot = counter.load(Ordering::Relaxed);
        }
        RequestStats {
            requests,
            attempts,
            items_read: self.items_read.load(Ordering::Relaxed),
            read_units: self.read_milli.load(Ordering::Relaxed) as f64 / 1000.0,
            write_units: self.write_milli.load(Ordering::Relaxed) as f64 / 1000.0,
        }
    }

    pub(crate) fn reset(&self) {
        for c in self.requests.iter().chain(&self.attempts) {
            c.store(0, Ordering::Relaxed);
        }
        self.items_read.store(0, Ordering::Relaxed);
        self.read_milli.store(0, Ordering::Relaxed);
        self.write_milli.store(0, Ordering::Relaxed);
    }
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
/// Subtracting two snapshots gives the requests of the work done between them.
///
/// ```
/// # use ddb_model::{Op, RequestStats};
/// let stats = RequestStats::default();
/// assert_eq!(stats.total(), 0);
/// assert_eq!(stats.get(Op::Query), 0);
/// ```
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
        let mut requests = [0; N];
        let mut attempts = [0; N];
        for i in 0..N {
            requests[i] = self.requests[i].saturating_sub(earlier.requests[i]);
            attempts[i] = self.attempts[i].saturating_sub(earlier.attempts[i]);
        }
        RequestStats {
            requests,
            attempts,
            items_read: self.items_read.saturating_sub(earlier.items_read),
            read_units: (self.read_units - earlier.read_units).max(0.0),
            write_units: (self.write_units - earlier.write_units).max(0.0),
        }
    }
}

impl fmt::Display for RequestStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (op, n) in self.iter() {
            if !first {
                f.write_str(", ")?;
            }
            first = false;
            write!(f, "{op} {n}")?;
            let attempts = self.attempts(op);
            if attempts != n {
                write!(f, " ({attempts} attempts)")?;
            }
        }
        if first {
            f.write_str("no requests")?;
        }
        Ok(())
    }
}
