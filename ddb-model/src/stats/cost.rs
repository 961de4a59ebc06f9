//! The cost report (opt-in, [`Db::with_cost_report`](crate::Db::with_cost_report)): what
//! each access pattern costs, the hottest partition keys and the throttling reasons seen,
//! recorded per request by the one sender and read as a [`CostReport`].

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use aws_sdk_dynamodb::types::ConsumedCapacity;
use serde::{Deserialize, Serialize};

use super::{Op, from_milli, units};

/// What one finished request adds to the cost report, as the sender knows it.
pub(crate) struct Sample<'a> {
    pub(crate) op: Op,
    /// The entity the request was built for, where one was (`E::NAME`).
    pub(crate) entity: Option<&'static str>,
    pub(crate) index: Option<&'a str>,
    /// The capacity the response reported.
    pub(crate) capacity: &'a [ConsumedCapacity],
    /// Items the service read (a query's or scan's `ScannedCount`, the items a get found).
    pub(crate) items_read: u64,
    /// Items the response returned, and their sizes in bytes as DynamoDB counts them.
    pub(crate) items_returned: u64,
    pub(crate) bytes_returned: u64,
    pub(crate) max_item_bytes: u64,
    /// The size of the item a `PutItem` wrote.
    pub(crate) bytes_written: u64,
    /// The partition key the request named, as text.
    pub(crate) partition_key: Option<String>,
    /// The throttling reasons of each throttled attempt of a request.
    pub(crate) throttles: &'a [&'a str],
}

/// The recorder behind a handle's cost report: one lock per request, taken only by handles
/// that asked for a report.
pub(crate) struct CostRecorder {
    top_k: usize,
    state: Mutex<State>,
}

/// An access pattern: the entity, the operation, the index.
type Pattern = (Option<&'static str>, Op, Option<Box<str>>);

#[derive(Default)]
struct State {
    patterns: HashMap<Pattern, Counts>,
    /// The space-saving summary of the partition keys: at most `top_k` counters.
    keys: Vec<HotKey>,
    throttles: HashMap<Box<str>, u64>,
}

#[derive(Default, Clone, Copy)]
struct Counts {
    requests: u64,
    read_milli: u64,
    write_milli: u64,
    items_read: u64,
    items_returned: u64,
    bytes_returned: u64,
    max_item_bytes: u64,
    bytes_written: u64,
    writes: u64,
}

impl CostRecorder {
    /// A recorder keeping the `top_k` hottest partition keys.
    pub(crate) fn new(top_k: usize) -> CostRecorder {
        CostRecorder { top_k, state: Mutex::new(State::default()) }
    }

    pub(crate) fn record(&self, s: &Sample<'_>) {
        let (mut read, mut write) = (0u64, 0u64);
        for c in s.capacity {
            let (r, w) = units(
                c.read_capacity_units(),
                c.write_capacity_units(),
                c.capacity_units(),
                s.op.is_item_write(),
            );
            (read, write) = (read.saturating_add(r), write.saturating_add(w));
        }
        let Ok(mut state) = self.state.lock() else { return };
        let key = (s.entity, s.op, s.index.map(Box::from));
        let c = state.patterns.entry(key).or_default();
        c.requests += 1;
        c.read_milli = c.read_milli.saturating_add(read);
        c.write_milli = c.write_milli.saturating_add(write);
        c.items_read = c.items_read.saturating_add(s.items_read);
        c.items_returned = c.items_returned.saturating_add(s.items_returned);
        c.bytes_returned = c.bytes_returned.saturating_add(s.bytes_returned);
        c.max_item_bytes = c.max_item_bytes.max(s.max_item_bytes).max(s.bytes_written);
        if s.bytes_written > 0 {
            c.bytes_written = c.bytes_written.saturating_add(s.bytes_written);
            c.writes += 1;
        }
        if let Some(pk) = &s.partition_key {
            space_saving(&mut state.keys, self.top_k, pk);
        }
        for reason in s.throttles {
            *state.throttles.entry(Box::from(*reason)).or_default() += 1;
        }
    }

    pub(crate) fn report(&self, table: &str) -> CostReport {
        let Ok(state) = self.state.lock() else {
            return CostReport { table: table.to_owned(), ..CostReport::default() };
        };
        let mut patterns: Vec<PatternCost> = state
            .patterns
            .iter()
            .map(|((entity, op, index), c)| PatternCost {
                entity: entity.map(str::to_owned),
                operation: op.name().to_owned(),
                index: index.as_deref().map(str::to_owned),
                requests: c.requests,
                read_units: from_milli(c.read_milli),
                write_units: from_milli(c.write_milli),
                items_read: c.items_read,
                items_returned: c.items_returned,
                bytes_returned: c.bytes_returned,
                max_item_bytes: c.max_item_bytes,
                bytes_written: c.bytes_written,
                items_written: c.writes,
            })
            .collect();
        patterns.sort_by(|a, b| {
            let units = |p: &PatternCost| p.read_units + p.write_units;
            units(b).total_cmp(&units(a)).then(b.requests.cmp(&a.requests)).then_with(|| {
                (&a.entity, &a.operation, &a.index).cmp(&(&b.entity, &b.operation, &b.index))
            })
        });
        let mut hot_keys = state.keys.clone();
        hot_keys.sort_by(|a, b| b.requests.cmp(&a.requests).then_with(|| a.key.cmp(&b.key)));
        let mut throttles: Vec<ThrottleCount> = state
            .throttles
            .iter()
            .map(|(reason, &count)| ThrottleCount { reason: reason.to_string(), count })
            .collect();
        throttles.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.reason.cmp(&b.reason)));
        CostReport { table: table.to_owned(), patterns, hot_keys, throttles }
    }

    pub(crate) fn reset(&self) {
        if let Ok(mut state) = self.state.lock() {
            *state = State::default();
        }
    }
}

/// One step of the space-saving summary (Metwally et al.): a key already counted is
/// incremented; a new one takes a free counter, or else replaces the smallest, inheriting
/// its count (kept as the new key's `overcount`). Every key requested more than `n / k` times
/// in `n` requests is in the summary, and each count is at most `overcount` too high.
fn space_saving(keys: &mut Vec<HotKey>, k: usize, key: &str) {
    if let Some(hot) = keys.iter_mut().find(|h| h.key == key) {
        hot.requests += 1;
    } else if keys.len() < k {
        keys.push(HotKey { key: key.to_owned(), requests: 1, overcount: 0 });
    } else if let Some(min) = keys.iter_mut().min_by_key(|h| h.requests) {
        *min = HotKey { key: key.to_owned(), requests: min.requests + 1, overcount: min.requests };
    }
}

/// What a handle's requests cost, per access pattern, with the hottest partition keys and
/// the throttling reasons seen ([`Db::cost_report`](crate::Db::cost_report)). It prints as a
/// table to log (`Display`) and serializes (serde), so the model tool prints a saved one
/// (`cost-report FILE`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CostReport {
    /// The physical table.
    pub table: String,
    /// One row per access pattern, the most expensive (capacity, then requests) first.
    pub patterns: Vec<PatternCost>,
    /// The most requested partition keys, the hottest first (at most the `top_k` asked for).
    pub hot_keys: Vec<HotKey>,
    /// The throttling reasons of the attempts the service throttled (those the SDK retried
    /// included), the most frequent first.
    pub throttles: Vec<ThrottleCount>,
}

/// The cost of one access pattern: an entity's requests of one operation on the table or
/// one index. A batch or a transaction is its entity's when all its items are one entity's
/// (a tree's moves are its entity's; an aggregate's transactions are named by the aggregate);
/// requests of several entities, and table requests, have no entity.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PatternCost {
    /// The entity (`Entity::NAME`), when the request was built for one.
    pub entity: Option<String>,
    /// The DynamoDB operation (`GetItem`, `Query`, ...).
    pub operation: String,
    /// The index read, `None` for the table.
    pub index: Option<String>,
    /// Requests sent (answered or failed).
    pub requests: u64,
    /// Read capacity consumed, as the service reported it (0 unless the handle asks for it:
    /// [`Db::with_capacity`](crate::Db::with_capacity)).
    pub read_units: f64,
    /// Write capacity consumed, as reported.
    pub write_units: f64,
    /// Items the service read: a query's or scan's `ScannedCount`, the items a get found.
    pub items_read: u64,
    /// Items returned to the library.
    pub items_returned: u64,
    /// The size of the returned items, bytes as DynamoDB counts them.
    pub bytes_returned: u64,
    /// The largest item returned or written, bytes.
    pub max_item_bytes: u64,
    /// The size of the items written by `PutItem`, bytes.
    pub bytes_written: u64,
    /// Items written by `PutItem`.
    pub items_written: u64,
}

impl PatternCost {
    /// Items read but not returned: what a filter threw away (paid for, never seen).
    pub fn filter_waste(&self) -> u64 {
        self.items_read.saturating_sub(self.items_returned)
    }

    /// The pattern's name: `Entity Operation` and `on index` when it reads one.
    pub fn name(&self) -> String {
        let mut name = match &self.entity {
            Some(entity) => format!("{entity} {}", self.operation),
            None => self.operation.clone(),
        };
        if let Some(index) = &self.index {
            name.push_str(" on ");
            name.push_str(index);
        }
        name
    }
}

/// A partition key among the most requested (space-saving summary).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HotKey {
    /// The partition key value, as text.
    pub key: String,
    /// Requests counted for it: at most `overcount` more than it really had.
    pub requests: u64,
    /// How much `requests` may overstate: the count of the key it displaced (0 when it
    /// never displaced one: then `requests` is exact).
    pub overcount: u64,
}

/// A throttling reason and the attempts the service throttled with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThrottleCount {
    /// The service's reason (`TableWriteKeyRangeThroughputExceeded`, ...), or the error code
    /// when it gave none.
    pub reason: String,
    /// Attempts throttled with it, whether the SDK retried them or the request failed.
    pub count: u64,
}

impl fmt::Display for CostReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "cost report of table `{}`", self.table)?;
        let names: Vec<String> = self.patterns.iter().map(PatternCost::name).collect();
        let width = names.iter().map(String::len).chain([7]).max().unwrap_or(7);
        writeln!(
            f,
            "{:<width$} {:>8} {:>10} {:>10} {:>8} {:>8} {:>7} {:>9} {:>9}",
            "pattern",
            "requests",
            "read RCU",
            "write WCU",
            "read",
            "returned",
            "waste%",
            "avg B",
            "max B"
        )?;
        for (p, name) in self.patterns.iter().zip(&names) {
            let waste = match p.items_read {
                0 => 0.0,
                read => p.filter_waste() as f64 * 100.0 / read as f64,
            };
            let sized = p.items_returned + p.items_written;
            let avg = (p.bytes_returned + p.bytes_written).checked_div(sized).unwrap_or(0);
            writeln!(
                f,
                "{name:<width$} {:>8} {:>10.1} {:>10.1} {:>8} {:>8} {:>6.1}% {:>9} {:>9}",
                p.requests,
                p.read_units,
                p.write_units,
                p.items_read,
                p.items_returned,
                waste,
                avg,
                p.max_item_bytes
            )?;
        }
        if !self.hot_keys.is_empty() {
            writeln!(f, "hottest partition keys:")?;
            for h in &self.hot_keys {
                match h.overcount {
                    0 => writeln!(f, "  {:>8}  {}", h.requests, h.key)?,
                    over => writeln!(f, "  {:>8}  {} (at most {over} fewer)", h.requests, h.key)?,
                }
            }
        }
        if !self.throttles.is_empty() {
            writeln!(f, "throttled:")?;
            for t in &self.throttles {
                writeln!(f, "  {:>8}  {}", t.count, t.reason)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Against exact counts: every key whose true count exceeds n / k is kept, and
        /// each kept count lies in [true, true + overcount].
        #[test]
        fn space_saving_keeps_the_heavy_keys(stream in proptest::collection::vec(0u8..20, 0..300), k in 1usize..8) {
            let mut keys = Vec::new();
            let mut exact: HashMap<String, u64> = HashMap::new();
            for v in &stream {
                let key = format!("K{v}");
                space_saving(&mut keys, k, &key);
                *exact.entry(key).or_default() += 1;
            }
            prop_assert!(keys.len() <= k);
            for h in &keys {
                let truth = exact[&h.key];
                prop_assert!(h.requests >= truth && h.requests - h.overcount <= truth, "{h:?} {truth}");
            }
            let n = stream.len() as u64;
            for (key, &count) in &exact {
                if count * k as u64 > n {
                    prop_assert!(keys.iter().any(|h| &h.key == key), "{key} ({count} of {n}) lost");
                }
            }
        }
    }

    #[test]
    fn filter_waste_and_names() {
        let p = PatternCost {
            entity: Some("User".into()),
            operation: "Query".into(),
            index: Some("gsi1".into()),
            items_read: 10,
            items_returned: 4,
            ..PatternCost::default()
        };
        assert_eq!((p.filter_waste(), p.name().as_str()), (6, "User Query on gsi1"));
    }
}
