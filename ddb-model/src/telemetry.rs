//! Spans: with the feature `tracing`, every request the library sends is traced in a span
//! that follows OpenTelemetry's semantic conventions for DynamoDB client calls, and the
//! library's multi-request operations (a query's pages, a batch's chunks, a tree's
//! transactions) in a span of their own around them. Without the feature, every type here is
//! empty and every call does nothing.
//!
//! A request's span is named `DynamoDB` (`otel.name` `DynamoDB.<Operation>`, kind client)
//! and carries, as the conventions name them:
//!
//! | field | value |
//! | --- | --- |
//! | `db.system.name` | `aws.dynamodb` |
//! | `db.operation.name`, `rpc.method` | the operation (`Query`, `TransactWriteItems`, ...) |
//! | `rpc.system`, `rpc.service` | `aws-api`, `DynamoDB` |
//! | `db.collection.name`, `aws.dynamodb.table_names` | the table |
//! | `aws.dynamodb.index_name` | the index a query or scan reads |
//! | `aws.dynamodb.segment`, `aws.dynamodb.total_segments` | a parallel scan's segment |
//! | `aws.dynamodb.count`, `aws.dynamodb.scanned_count` | a query's or scan's counts |
//! | `aws.dynamodb.consumed_capacity` | the capacity report, as JSON (when asked for) |
//! | `aws.request_id` | the service's request id |
//! | `error.type`, `otel.status_code` | the error code (or `transport`), `ERROR` |
//!
//! and the library's own: `ddb_model.attempts` (the HTTP attempts of the call, the SDK's
//! retries included) and `ddb_model.round` (the call's number, when the library sent a
//! token-carrying write again).

use aws_sdk_dynamodb::types::ConsumedCapacity;

use crate::stats::Op;

/// A request, as its span names it.
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
pub(crate) struct Request<'a> {
    pub(crate) table: &'a str,
    pub(crate) op: Op,
    /// The index a query or scan reads.
    pub(crate) index: Option<&'a str>,
    /// `(segment, total_segments)` of a parallel scan.
    pub(crate) segment: Option<(u32, u32)>,
}

/// What a request's answer tells its span.
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
pub(crate) struct Answer<'a> {
    /// The call's number (1, or more when a token-carrying write was sent again).
    pub(crate) round: u32,
    /// HTTP attempts of every call so far.
    pub(crate) attempts: u32,
    /// A query's or scan's `Count` and `ScannedCount`.
    pub(crate) counts: Option<(i32, i32)>,
    pub(crate) request_id: Option<&'a str>,
    pub(crate) capacity: &'a [ConsumedCapacity],
}

/// What a request's failure tells its span.
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
pub(crate) struct Failure<'a> {
    pub(crate) round: u32,
    pub(crate) attempts: u32,
    /// The service's error code, or `transport`.
    pub(crate) code: &'a str,
    pub(crate) request_id: Option<&'a str>,
}

#[cfg(feature = "tracing")]
pub(crate) use on::{OperationSpan, RequestSpan, operation_items};

#[cfg(not(feature = "tracing"))]
pub(crate) use off::{OperationSpan, RequestSpan, operation_items};

#[cfg(feature = "tracing")]
mod on {
    use std::fmt::Write;
    use std::future::Future;

    use aws_sdk_dynamodb::types::{Capacity, ConsumedCapacity};
    use tracing::field::Empty;
    use tracing::{Instrument, Span};

    use super::{Answer, Failure, Request};

    /// The span of one request (all its calls, when a token-carrying write is sent again).
    pub(crate) struct RequestSpan(Span);

    impl RequestSpan {
        pub(crate) fn new(call: &Request<'_>) -> RequestSpan {
            let (table, op) = (call.table, call.op.name());
            let span = tracing::info_span!(
                target: "ddb_model::request",
                "DynamoDB",
                otel.name = call.op.span_name(),
                otel.kind = "client",
                otel.status_code = Empty,
                db.system.name = "aws.dynamodb",
                db.operation.name = op,
                db.collection.name = table,
                rpc.system = "aws-api",
                rpc.service = "DynamoDB",
                rpc.method = op,
                aws.dynamodb.table_names = table,
                aws.dynamodb.index_name = call.index,
                aws.dynamodb.segment = call.segment.map(|s| s.0),
                aws.dynamodb.total_segments = call.segment.map(|s| s.1),
                aws.dynamodb.count = Empty,
                aws.dynamodb.scanned_count = Empty,
                aws.dynamodb.consumed_capacity = Empty,
                aws.request_id = Empty,
                ddb_model.attempts = Empty,
                ddb_model.round = Empty,
                error.type = Empty,
            );
            RequestSpan(span)
        }

        /// `fut`, polled inside the span.
        pub(crate) fn run<F: Future>(&self, fut: F) -> impl Future<Output = F::Output> {
            fut.instrument(self.0.clone())
        }

        /// Whether anything listens: what to record is worked out only then.
        pub(crate) fn is_enabled(&self) -> bool {
            !self.0.is_disabled()
        }

        /// Records an answer.
        pub(crate) fn answered(&self, answer: &Answer<'_>) {
            let span = self.ended(answer.round, answer.attempts, answer.request_id);
            if let Some((count, scanned)) = answer.counts {
                span.record("aws.dynamodb.count", count);
                span.record("aws.dynamodb.scanned_count", scanned);
            }
            if !answer.capacity.is_empty() {
                span.record("aws.dynamodb.consumed_capacity", capacity_json(answer.capacity));
            }
            span.record("otel.status_code", "OK");
        }

        /// Records a failure.
        pub(crate) fn failed(&self, failure: &Failure<'_>) {
            let span = self.ended(failure.round, failure.attempts, failure.request_id);
            span.record("otel.status_code", "ERROR");
            span.record("error.type", failure.code);
        }

        /// Records what every end of a request tells: its calls, attempts and request id.
        fn ended(&self, round: u32, attempts: u32, request_id: Option<&str>) -> &Span {
            let span = &self.0;
            span.record("ddb_model.attempts", attempts);
            if round > 1 {
                span.record("ddb_model.round", round);
            }
            if let Some(id) = request_id {
                span.record("aws.request_id", id);
            }
            span
        }
    }

    /// The span of one operation of the library that sends several requests (a query's
    /// pages, a batch's chunks, a tree's transactions): the requests' spans are its children.
    pub(crate) struct OperationSpan(Span);

    impl OperationSpan {
        /// `operation` (`query`, `batch_write`, `tree.move`, ...) on `table`.
        pub(crate) fn new(operation: &'static str, table: &str) -> OperationSpan {
            OperationSpan(tracing::info_span!(
                target: "ddb_model::operation",
                "ddb_model",
                otel.name = operation,
                ddb_model.operation = operation,
                db.system.name = "aws.dynamodb",
                db.collection.name = table,
                ddb_model.items = Empty,
            ))
        }

        /// `fut`, polled inside the span.
        pub(crate) fn run<F: Future>(&self, fut: F) -> impl Future<Output = F::Output> {
            fut.instrument(self.0.clone())
        }
    }

    /// Records, on the operation's span (the current one, inside [`OperationSpan::run`]), the
    /// items it returned, counted or wrote.
    pub(crate) fn operation_items(n: usize) {
        Span::current().record("ddb_model.items", n);
    }

    /// The unit fields of a `ConsumedCapacity` or a `Capacity`, named as the service names them.
    macro_rules! units_of {
        ($c:expr) => {
            [
                ("CapacityUnits", $c.capacity_units()),
                ("ReadCapacityUnits", $c.read_capacity_units()),
                ("WriteCapacityUnits", $c.write_capacity_units()),
            ]
        };
    }

    /// The capacity reports as the conventions write them: a JSON array of the
    /// `ConsumedCapacity` objects, in the service's own field names.
    pub(super) fn capacity_json(reports: &[ConsumedCapacity]) -> String {
        let mut out = String::from("[");
        for (i, c) in reports.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('{');
            let mut first = true;
            if let Some(name) = c.table_name() {
                field(&mut out, &mut first, "TableName");
                json_string(&mut out, name);
            }
            units(&mut out, &mut first, units_of!(c));
            if let Some(t) = c.table() {
                field(&mut out, &mut first, "Table");
                capacity(&mut out, t);
            }
            for (key, map) in [
                ("GlobalSecondaryIndexes", c.global_secondary_indexes()),
                ("LocalSecondaryIndexes", c.local_secondary_indexes()),
            ] {
                let Some(map) = map else { continue };
                field(&mut out, &mut first, key);
                out.push('{');
                let mut names: Vec<_> = map.iter().collect();
                names.sort_by(|a, b| a.0.cmp(b.0));
                for (j, (name, part)) in names.into_iter().enumerate() {
                    if j > 0 {
                        out.push(',');
                    }
                    json_string(&mut out, name);
                    out.push(':');
                    capacity(&mut out, part);
                }
                out.push('}');
            }
            out.push('}');
        }
        out.push(']');
        out
    }

    fn capacity(out: &mut String, c: &Capacity) {
        out.push('{');
        units(out, &mut true, units_of!(c));
        out.push('}');
    }

    fn units(out: &mut String, first: &mut bool, units: [(&str, Option<f64>); 3]) {
        for (key, value) in units {
            if let Some(v) = value.filter(|v| v.is_finite()) {
                field(out, first, key);
                let _ = write!(out, "{v}");
            }
        }
    }

    fn field(out: &mut String, first: &mut bool, key: &str) {
        if !*first {
            out.push(',');
        }
        *first = false;
        json_string(out, key);
        out.push(':');
    }

    fn json_string(out: &mut String, s: &str) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }
}

#[cfg(not(feature = "tracing"))]
mod off {
    use std::future::Future;

    use super::{Answer, Failure, Request};

    /// Nothing: the feature `tracing` is off.
    pub(crate) struct RequestSpan;

    impl RequestSpan {
        #[inline(always)]
        pub(crate) fn new(_call: &Request<'_>) -> RequestSpan {
            RequestSpan
        }

        #[inline(always)]
        pub(crate) fn run<F: Future>(&self, fut: F) -> F {
            fut
        }

        #[inline(always)]
        pub(crate) fn is_enabled(&self) -> bool {
            false
        }

        #[inline(always)]
        pub(crate) fn answered(&self, _answer: &Answer<'_>) {}

        #[inline(always)]
        pub(crate) fn failed(&self, _failure: &Failure<'_>) {}
    }

    /// Nothing: the feature `tracing` is off.
    pub(crate) struct OperationSpan;

    impl OperationSpan {
        #[inline(always)]
        pub(crate) fn new(_operation: &'static str, _table: &str) -> OperationSpan {
            OperationSpan
        }

        #[inline(always)]
        pub(crate) fn run<F: Future>(&self, fut: F) -> F {
            fut
        }
    }

    #[inline(always)]
    pub(crate) fn operation_items(_n: usize) {}
}

#[cfg(all(test, feature = "tracing"))]
mod tests {
    use aws_sdk_dynamodb::types::{Capacity, ConsumedCapacity};

    #[test]
    fn capacity_reports_are_json_in_the_services_names() {
        let report = ConsumedCapacity::builder()
            .table_name("app \"x\"")
            .capacity_units(3.5)
            .table(Capacity::builder().capacity_units(1.0).build())
            .global_secondary_indexes("gsi2", Capacity::builder().write_capacity_units(1.5).build())
            .global_secondary_indexes("gsi1", Capacity::builder().capacity_units(1.0).build())
            .build();
        assert_eq!(
            super::on::capacity_json(&[report]),
            r#"[{"TableName":"app \"x\"","CapacityUnits":3.5,"Table":{"CapacityUnits":1},"GlobalSecondaryIndexes":{"gsi1":{"CapacityUnits":1},"gsi2":{"WriteCapacityUnits":1.5}}}]"#
        );
        assert_eq!(super::on::capacity_json(&[]), "[]");
    }
}
