//! [`Faults`]: what the proxy injects and how often, and the service's answers it injects
//! (throttling and transaction cancellations, as DynamoDB writes them).

use std::time::Duration;

use crate::error::ThrottleLimit;

/// The faults a [`Proxy`](super::Proxy) injects: for each kind, the probability (0.0 ..= 1.0)
/// that a request meets it, and the seed of the proxy's random decisions. One draw per
/// request decides its fate, checked in the order drop-before, 500, throttle, cancel,
/// unprocessed, drop-after (so the rates add up, at most to 1). A cut
/// ([`fail_from`](Faults::fail_from)) overrides the draw. Built with [`Faults::seeded`] and
/// the setters:
///
/// ```
/// use std::time::Duration;
/// use ddb_model::error::ThrottleLimit;
/// use ddb_model::testing::{CancelCode, Faults};
///
/// let faults = Faults::seeded(7)
///     .drop_before(0.03)                      // lost on the way: nothing applied
///     .drop_after(0.03)                       // applied, the response lost
///     .error_500(0.02)                        // 500 Internal Server Error
///     .throttle(0.02, ThrottleLimit::KeyRange) // ThrottlingException, a hot key
///     .cancel(0.05, CancelCode::TransactionConflict) // transactions only
///     .unprocessed(0.1)                       // batches only: nothing processed
///     .fail_from(500)                         // request 500 and later: the runner is gone
///     .latency(Duration::from_millis(2));     // before every request, as a network
/// assert_eq!(faults.seed(), 7);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Faults {
    pub(super) seed: u64,
    pub(super) drop_before: f64,
    pub(super) drop_after: f64,
    pub(super) error_500: f64,
    pub(super) throttle: f64,
    pub(super) throttle_limit: ThrottleLimit,
    pub(super) cancel: f64,
    pub(super) cancel_code: CancelCode,
    pub(super) unprocessed: f64,
    pub(super) fail_from: Option<u64>,
    pub(super) latency: Duration,
}

impl Default for Faults {
    fn default() -> Self {
        Faults::seeded(0)
    }
}

/// Clamps a rate into 0.0 ..= 1.0 (NaN is 0).
fn rate(p: f64) -> f64 {
    if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) }
}

impl Faults {
    /// No faults (every request forwarded at once), with the proxy's decisions seeded by
    /// `seed`.
    pub fn seeded(seed: u64) -> Faults {
        Faults {
            seed,
            drop_before: 0.0,
            drop_after: 0.0,
            error_500: 0.0,
            throttle: 0.0,
            throttle_limit: ThrottleLimit::Provisioned,
            cancel: 0.0,
            cancel_code: CancelCode::TransactionConflict,
            unprocessed: 0.0,
            fail_from: None,
            latency: Duration::ZERO,
        }
    }

    /// A mix for retry tests: 3% of requests dropped before they reach the engine, 3% after
    /// it applied them, 4% answered with a 500.
    pub fn mix(seed: u64) -> Faults {
        Faults::seeded(seed).drop_before(0.03).drop_after(0.03).error_500(0.04)
    }

    /// The seed of the proxy's decisions.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The share of requests whose connection is closed before forwarding: nothing is
    /// applied, and the client sees a dropped connection.
    #[must_use]
    pub fn drop_before(mut self, p: f64) -> Faults {
        self.drop_before = rate(p);
        self
    }

    /// The share of requests forwarded, applied by the engine, whose response is then lost
    /// with the connection: the client cannot tell whether the write happened.
    #[must_use]
    pub fn drop_after(mut self, p: f64) -> Faults {
        self.drop_after = rate(p);
        self
    }

    /// The share of requests answered `500 Internal Server Error` without forwarding.
    #[must_use]
    pub fn error_500(mut self, p: f64) -> Faults {
        self.error_500 = rate(p);
        self
    }

    /// The share of requests answered, without forwarding, as DynamoDB throttles: a 400 with
    /// `ProvisionedThroughputExceededException` (for [`ThrottleLimit::Provisioned`]) or
    /// `ThrottlingException` (any other limit), and one throttling reason
    /// `<Table|Index><Read|Write><limit>` naming the table (or the index a query or scan
    /// reads) by its ARN.
    #[must_use]
    pub fn throttle(mut self, p: f64, limit: ThrottleLimit) -> Faults {
        self.throttle = rate(p);
        self.throttle_limit = limit;
        self
    }

    /// The share of transactions (`TransactWriteItems`, `TransactGetItems`) answered, without
    /// forwarding, with `TransactionCanceledException`: one cancellation reason per action,
    /// `code` for one of them (drawn) and `None` for the others. Other requests are not
    /// affected by this rate.
    #[must_use]
    pub fn cancel(mut self, p: f64, code: CancelCode) -> Faults {
        self.cancel = rate(p);
        self.cancel_code = code;
        self
    }

    /// The share of batches (`BatchWriteItem`, `BatchGetItem`) answered, without forwarding,
    /// with every item (or key) unprocessed, as a throttled table answers them; the library
    /// sends them again under the batch's `max_attempts` and `backoff`. Other requests are
    /// not affected by this rate.
    #[must_use]
    pub fn unprocessed(mut self, p: f64) -> Faults {
        self.unprocessed = rate(p);
        self
    }

    /// Every request from the proxy's `n`-th on (0-based, counting each request the proxy
    /// has read since it started, retries included: `n` requests pass) is dropped before it
    /// reaches the engine, whatever the rates draw: the runner is killed, or cut off by a
    /// partition, after `n` requests. What those `n` requests did is all that happened;
    /// recover from it with another handle (as after a crash) and check the result. Counted
    /// in [`Counts::dropped_before`](super::Counts::dropped_before).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::testing::{Faults, Harness};
    /// use ddb_model::{DefaultTable, Entity};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "JOB#<id>", sk = "JOB")]
    /// struct Job { id: u32 }
    ///
    /// // The runner dies after its second request.
    /// let harness = Harness::<DefaultTable>::start(Faults::seeded(1).fail_from(2)).await?;
    /// for id in 0..4 {
    ///     let _ = Job { id }.put(harness.db()).await; // the last two fail
    /// }
    /// assert!(Job::get(harness.direct(), 1).await?.is_some());
    /// assert!(Job::get(harness.direct(), 2).await?.is_none());
    /// let counts = harness.proxy().counts();
    /// assert_eq!((counts.forwarded, counts.dropped_before), (2, counts.requests - 2));
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn fail_from(mut self, n: u64) -> Faults {
        self.fail_from = Some(n);
        self
    }

    /// A delay before every request is answered or forwarded, as a network adds.
    #[must_use]
    pub fn latency(mut self, latency: Duration) -> Faults {
        self.latency = latency;
        self
    }
}

/// The reason code of the canceled action in an injected `TransactionCanceledException`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CancelCode {
    /// `TransactionConflict`: another transaction or write was in progress on the item.
    TransactionConflict,
    /// `ThrottlingError`: the action was throttled.
    ThrottlingError,
    /// `ProvisionedThroughputExceeded`: the table's provisioned capacity was exceeded.
    ProvisionedThroughputExceeded,
}

impl CancelCode {
    /// The code as the service writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            CancelCode::TransactionConflict => "TransactionConflict",
            CancelCode::ThrottlingError => "ThrottlingError",
            CancelCode::ProvisionedThroughputExceeded => "ProvisionedThroughputExceeded",
        }
    }
}

/// What the proxy does with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fate {
    Forward,
    DropBefore,
    DropAfter,
    Error500,
    Throttle,
    Cancel,
    Unprocessed,
}

impl Faults {
    /// The fate of the proxy's request `n` (0-based) for the draw `r` in [0, 1), of `kind`.
    pub(super) fn fate(&self, n: u64, r: f64, kind: Kind) -> Fate {
        if self.fail_from.is_some_and(|from| n >= from) {
            return Fate::DropBefore;
        }
        let mut edge = 0.0;
        let mut hit = |p: f64| {
            edge += p;
            r < edge
        };
        if hit(self.drop_before) {
            Fate::DropBefore
        } else if hit(self.error_500) {
            Fate::Error500
        } else if hit(self.throttle) {
            Fate::Throttle
        } else if hit(self.cancel) {
            if kind == Kind::Transaction { Fate::Cancel } else { Fate::Forward }
        } else if hit(self.unprocessed) {
            if kind == Kind::Batch { Fate::Unprocessed } else { Fate::Forward }
        } else if hit(self.drop_after) {
            Fate::DropAfter
        } else {
            Fate::Forward
        }
    }
}

/// What a request is, as far as the faults that hit only some requests care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Transaction,
    Batch,
    Other,
}

impl Kind {
    /// The kind of a request whose `X-Amz-Target` is `target`.
    pub(super) fn of(target: &str) -> Kind {
        match target.rsplit('.').next() {
            Some("TransactWriteItems" | "TransactGetItems") => Kind::Transaction,
            Some("BatchWriteItem" | "BatchGetItem") => Kind::Batch,
            _ => Kind::Other,
        }
    }
}

/// The JSON body of a throttling answer to a request of `target` (`DynamoDB_20120810.PutItem`)
/// on `table` (and `index`, when it reads one).
pub(super) fn throttle_body(
    limit: &ThrottleLimit,
    target: &str,
    table: &str,
    index: Option<&str>,
) -> String {
    let read = ["GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems"]
        .iter()
        .any(|op| target.ends_with(&format!(".{op}")));
    let limit_text = match limit {
        ThrottleLimit::Provisioned => "ProvisionedThroughputExceeded",
        ThrottleLimit::AccountLimit => "AccountLimitExceeded",
        ThrottleLimit::KeyRange => "KeyRangeThroughputExceeded",
        ThrottleLimit::MaxOnDemand => "MaxOnDemandThroughputExceeded",
        ThrottleLimit::Other(reason) => reason.as_str(),
    };
    let reason = match limit {
        ThrottleLimit::Other(_) => limit_text.to_owned(),
        _ => format!(
            "{}{}{limit_text}",
            if index.is_some() { "Index" } else { "Table" },
            if read { "Read" } else { "Write" }
        ),
    };
    let mut resource = format!("arn:aws:dynamodb:us-east-1:000000000000:table/{table}");
    if let Some(index) = index {
        resource.push_str("/index/");
        resource.push_str(index);
    }
    // The two exceptions spell their list of reasons differently.
    let (exception, reasons) = match limit {
        ThrottleLimit::Provisioned => {
            ("ProvisionedThroughputExceededException", "ThrottlingReasons")
        }
        _ => ("ThrottlingException", "throttlingReasons"),
    };
    let mut body = serde_json::json!({
        "__type": format!("com.amazonaws.dynamodb.v20120810#{exception}"),
        "message": "Throughput exceeds the current throughput limit for your table or index.",
    });
    body[reasons] = serde_json::json!([{ "reason": reason, "resource": resource }]);
    body.to_string()
}

/// The JSON body of a `TransactionCanceledException` for a transaction of `actions` actions,
/// the one at `at` canceled for `code`.
pub(super) fn cancel_body(code: CancelCode, actions: usize, at: usize) -> String {
    let reasons: Vec<serde_json::Value> = (0..actions.max(1))
        .map(|i| {
            if i == at {
                serde_json::json!({ "Code": code.as_str(), "Message": "injected by the fault proxy" })
            } else {
                serde_json::json!({ "Code": "None" })
            }
        })
        .collect();
    let codes: Vec<&str> =
        (0..actions.max(1)).map(|i| if i == at { code.as_str() } else { "None" }).collect();
    serde_json::json!({
        "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
        "Message": format!(
            "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
            codes.join(", ")
        ),
        "CancellationReasons": reasons,
    })
    .to_string()
}

/// The JSON body of the answer to a batch (`body`, of `kind`) that processed none of its
/// items: its `RequestItems` handed back as unprocessed.
pub(super) fn unprocessed_body(target: &str, body: &[u8]) -> String {
    let json: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let items = json.get("RequestItems").cloned().unwrap_or_else(|| serde_json::json!({}));
    if target.ends_with(".BatchGetItem") {
        serde_json::json!({ "Responses": {}, "UnprocessedKeys": items }).to_string()
    } else {
        serde_json::json!({ "UnprocessedItems": items }).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_add_up_in_order_and_cancel_and_unprocessed_hit_their_requests_only() {
        let f = Faults::seeded(1)
            .drop_before(0.1)
            .error_500(0.1)
            .throttle(0.1, ThrottleLimit::KeyRange);
        let f = f.cancel(0.1, CancelCode::ThrottlingError).unprocessed(0.1).drop_after(0.1);
        let (tx, batch, other) = (Kind::Transaction, Kind::Batch, Kind::Other);
        assert_eq!(f.fate(0, 0.05, other), Fate::DropBefore);
        assert_eq!(f.fate(0, 0.15, other), Fate::Error500);
        assert_eq!(f.fate(0, 0.25, other), Fate::Throttle);
        assert_eq!(f.fate(0, 0.35, other), Fate::Forward);
        assert_eq!(f.fate(0, 0.35, batch), Fate::Forward);
        assert_eq!(f.fate(0, 0.35, tx), Fate::Cancel);
        assert_eq!(f.fate(0, 0.45, tx), Fate::Forward);
        assert_eq!(f.fate(0, 0.45, batch), Fate::Unprocessed);
        assert_eq!(f.fate(0, 0.55, tx), Fate::DropAfter);
        assert_eq!(f.fate(0, 0.65, tx), Fate::Forward);
        // A cut overrides every draw from its request on.
        let cut = f.fail_from(3);
        assert_eq!(cut.fate(2, 0.65, other), Fate::Forward);
        assert!([(3, other), (4, tx), (u64::MAX, batch)].iter().all(|&(n, k)| {
            [0.05, 0.35, 0.65, 0.99].iter().all(|&r| cut.fate(n, r, k) == Fate::DropBefore)
        }));
        assert_eq!(Kind::of("DynamoDB_20120810.BatchGetItem"), batch);
        assert_eq!(Kind::of("DynamoDB_20120810.TransactGetItems"), tx);
        assert_eq!(Kind::of("DynamoDB_20120810.PutItem"), other);
        assert_eq!(Faults::seeded(0).drop_before(f64::NAN).drop_after(7.0).drop_after, 1.0);
    }

    #[test]
    fn bodies_name_the_services_codes() {
        let t = throttle_body(&ThrottleLimit::KeyRange, "DynamoDB_20120810.PutItem", "app", None);
        assert!(t.contains("TableWriteKeyRangeThroughputExceeded") && t.contains("table/app"));
        let q = throttle_body(
            &ThrottleLimit::Provisioned,
            "DynamoDB_20120810.Query",
            "app",
            Some("gsi1"),
        );
        assert!(q.contains("IndexReadProvisionedThroughputExceeded") && q.contains("/index/gsi1"));
        assert!(q.contains("ProvisionedThroughputExceededException"));
        let c = cancel_body(CancelCode::TransactionConflict, 3, 1);
        assert!(c.contains(r#"[None, TransactionConflict, None]"#), "{c}");
        let items = r#"{"RequestItems":{"app":[{"PutRequest":{"Item":{}}}]}}"#.as_bytes();
        let w = unprocessed_body("DynamoDB_20120810.BatchWriteItem", items);
        assert_eq!(w, r#"{"UnprocessedItems":{"app":[{"PutRequest":{"Item":{}}}]}}"#);
        let g = unprocessed_body("DynamoDB_20120810.BatchGetItem", br#"{"RequestItems":{}}"#);
        assert_eq!(g, r#"{"Responses":{},"UnprocessedKeys":{}}"#);
    }
}
