//! Observability: a `tracing` span per request with OpenTelemetry's DynamoDB fields, a span
//! per multi-request operation around its requests, and `Db::stats` broken down per
//! operation and per target (table or index), on both backends and under injected faults.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use ddb_model::prelude::*;
use ddb_model::testing::{Faults, Harness};
use ddb_model::{Op, stats::Stats};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Subscriber, subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

use crate::model::{App, User};
use crate::support::db;

/// A span as the test saw it: its name, its parent's name, its fields as text.
#[derive(Debug, Clone)]
struct Seen {
    id: u64,
    name: &'static str,
    parent: Option<&'static str>,
    fields: BTreeMap<String, String>,
}

impl Seen {
    fn get(&self, field: &str) -> Option<&str> {
        self.fields.get(field).map(String::as_str)
    }
}

/// Records every span and every value recorded on it.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Seen>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let parent = ctx.span(id).and_then(|s| s.parent()).map(|p| p.name());
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let seen = Seen { id: id.into_u64(), name: attrs.metadata().name(), parent, fields };
        self.0.lock().unwrap().push(seen);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        // Ids are reused once a span closes: the latest span with the id is this one.
        if let Some(seen) = spans.iter_mut().rev().find(|s| s.id == id.into_u64()) {
            values.record(&mut Fields(&mut seen.fields));
        }
    }
}

thread_local! {
    /// The capture of the test running on this thread, if it installed one.
    static ACTIVE: std::cell::RefCell<Option<Capture>> = const { std::cell::RefCell::new(None) };
}

/// Routes spans to the capture of the thread they are made on.
///
/// One global subscriber for the whole test binary, installed once: per-test scoped
/// subscribers (`set_default`) race with each other in `tracing-core`'s callsite-interest
/// cache, and a span made while another test installs or drops its subscriber can be
/// skipped. With one dispatcher that never changes, every callsite is always enabled.
struct Router;

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Router {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if let Some(capture) = ACTIVE.with(|a| a.borrow().clone()) {
            capture.on_new_span(attrs, id, ctx);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(capture) = ACTIVE.with(|a| a.borrow().clone()) {
            capture.on_record(id, values, ctx);
        }
    }
}

/// Uninstalls a capture when dropped.
struct Installed;

impl Drop for Installed {
    fn drop(&mut self) {
        ACTIVE.with(|a| a.borrow_mut().take());
    }
}

impl Capture {
    /// Captures the spans made on this thread (the tests run on current-thread runtimes)
    /// until the guard is dropped.
    fn install(&self) -> Installed {
        static GLOBAL: std::sync::Once = std::sync::Once::new();
        GLOBAL.call_once(|| {
            let global = tracing_subscriber::registry().with(Router);
            subscriber::set_global_default(global).expect("the only global subscriber");
        });
        ACTIVE.with(|a| *a.borrow_mut() = Some(self.clone()));
        Installed
    }

    fn take(&self) -> Vec<Seen> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

fn requests(spans: &[Seen]) -> Vec<&Seen> {
    spans.iter().filter(|s| s.name == "DynamoDB").collect()
}

fn user(id: &str, org: &str) -> User {
    User { org: org.into(), ..User::sample(id) }
}

#[tokio::test(flavor = "current_thread")]
async fn every_request_is_a_span_with_the_conventions_fields() -> Result<(), Error> {
    let db = db::<App>().await.with_capacity(true);
    let capture = Capture::default();
    let _guard = capture.install();

    user("ann", "acme").put(&db).await?;
    User::get(&db, "ann").await?;
    let found = User::query_gsi1(&db, "acme").all().await?;
    assert_eq!(found.len(), 1);
    let spans = capture.take();
    let reqs = requests(&spans);
    assert_eq!(reqs.len(), 3, "{spans:#?}");

    for (span, op) in reqs.iter().zip(["PutItem", "GetItem", "Query"]) {
        assert_eq!(span.get("otel.name"), Some(format!("DynamoDB.{op}").as_str()));
        assert_eq!(span.get("otel.kind"), Some("client"));
        assert_eq!(span.get("db.system.name"), Some("aws.dynamodb"));
        assert_eq!(span.get("db.operation.name"), Some(op));
        assert_eq!(span.get("rpc.method"), Some(op));
        assert_eq!(span.get("rpc.system"), Some("aws-api"));
        assert_eq!(span.get("rpc.service"), Some("DynamoDB"));
        assert_eq!(span.get("aws.dynamodb.table_names"), Some(db.table_name()));
        assert_eq!(span.get("db.collection.name"), Some(db.table_name()));
        assert_eq!(span.get("ddb_model.attempts"), Some("1"));
        assert_eq!(span.get("otel.status_code"), Some("OK"));
        assert_eq!(span.get("error.type"), None);
        // Asked for: the capacity report, as JSON in the service's names.
        let capacity = span.get("aws.dynamodb.consumed_capacity").expect("a capacity report");
        let json: serde_json::Value = serde_json::from_str(capacity).expect("JSON");
        assert_eq!(json[0]["TableName"], db.table_name(), "{capacity}");
    }
    let query = reqs[2];
    assert_eq!(query.get("aws.dynamodb.index_name"), Some("gsi1"));
    assert_eq!(query.get("aws.dynamodb.count"), Some("1"));
    assert_eq!(query.get("aws.dynamodb.scanned_count"), Some("1"));
    assert_eq!(reqs[0].get("aws.dynamodb.index_name"), None);
    // The query's pages are children of the query's own span.
    assert_eq!(query.parent, Some("ddb_model"));
    let op = spans.iter().find(|s| s.name == "ddb_model").expect("the query's span");
    assert_eq!(op.get("ddb_model.operation"), Some("query"));
    assert_eq!(op.get("ddb_model.items"), Some("1"));
    assert_eq!(reqs[0].parent, None);
    Ok(())
}

#[tokio::test(flavor = "current_thread")]
async fn failures_carry_the_error_code() -> Result<(), Error> {
    let db = db::<App>().await;
    user("ann", "acme").put(&db).await?;
    let capture = Capture::default();
    let _guard = capture.install();
    let err = user("ann", "acme").create(&db).await.unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    let spans = capture.take();
    let reqs = requests(&spans);
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].get("otel.status_code"), Some("ERROR"));
    assert_eq!(reqs[0].get("error.type"), Some("ConditionalCheckFailedException"));
    // Not asked for: no capacity field.
    assert_eq!(reqs[0].get("aws.dynamodb.consumed_capacity"), None);
    Ok(())
}

#[tokio::test(flavor = "current_thread")]
async fn batches_and_parallel_scans_group_their_requests() -> Result<(), Error> {
    let db = db::<App>().await;
    let users: Vec<User> = (0..60).map(|i| user(&format!("u{i:02}"), "acme")).collect();
    let capture = Capture::default();
    let _guard = capture.install();
    db.batch_put(&users).await?;
    let spans = capture.take();
    let op = spans.iter().find(|s| s.name == "ddb_model").expect("the batch's span");
    assert_eq!(op.get("ddb_model.operation"), Some("batch_write"));
    assert_eq!(op.get("ddb_model.items"), Some("60"));
    let chunks = requests(&spans);
    assert_eq!(chunks.len(), 3, "25 + 25 + 10");
    assert!(chunks.iter().all(|c| c.get("db.operation.name") == Some("BatchWriteItem")));
    assert!(chunks.iter().all(|c| c.parent == Some("ddb_model")));

    let all: Vec<User> = db.scan::<User>().segments(3).all().await?;
    assert_eq!(all.len(), 60);
    let spans = capture.take();
    let pages = requests(&spans);
    let mut segments: Vec<&str> =
        pages.iter().filter_map(|p| p.get("aws.dynamodb.segment")).collect();
    segments.sort_unstable();
    segments.dedup();
    assert_eq!(segments, ["0", "1", "2"], "{pages:#?}");
    assert!(pages.iter().all(|p| p.get("aws.dynamodb.total_segments") == Some("3")));
    let scanned: u64 =
        pages.iter().filter_map(|p| p.get("aws.dynamodb.scanned_count")?.parse::<u64>().ok()).sum();
    assert_eq!(scanned, 60);
    Ok(())
}

/// The totals of `stats` agree with each other: per operation, per target, and overall.
fn assert_consistent(stats: &Stats) {
    let totals = stats.totals();
    let calls: u64 = stats.ops().iter().map(|o| o.calls).sum();
    assert_eq!(calls, totals.total());
    let attempts: u64 = stats.ops().iter().map(|o| o.attempts).sum();
    assert_eq!(attempts, totals.total_attempts());
    let by_target: u64 = stats.targets().iter().map(|t| t.calls).sum();
    assert_eq!(by_target, totals.total());
    let target_attempts: u64 = stats.targets().iter().map(|t| t.attempts).sum();
    assert_eq!(target_attempts, totals.total_attempts());
    let items: u64 = stats.targets().iter().map(|t| t.items_read).sum();
    assert_eq!(items, totals.items_read());
    for (ours, theirs) in [
        (stats.ops().iter().map(|o| o.read_units).sum::<f64>(), totals.read_units()),
        (stats.ops().iter().map(|o| o.write_units).sum::<f64>(), totals.write_units()),
        (stats.targets().iter().map(|t| t.read_units).sum::<f64>(), totals.read_units()),
        (stats.targets().iter().map(|t| t.write_units).sum::<f64>(), totals.write_units()),
    ] {
        assert!((ours - theirs).abs() < 1e-6, "{ours} != {theirs}\n{stats}");
    }
}

#[tokio::test]
async fn stats_break_requests_down_per_operation_and_target() -> Result<(), Error> {
    let db = db::<App>().await.with_capacity(true);
    db.reset_requests(); // the table's creation
    for i in 0..5 {
        user(&format!("u{i}"), "acme").put(&db).await?;
    }
    User::get(&db, "u1").await?;
    assert_eq!(User::query_gsi1(&db, "acme").all().await?.len(), 5);
    assert_eq!(User::query_gsi2(&db, "u3@acme.test").all().await?.len(), 1);
    let stats = db.stats();
    println!("{stats}");
    assert_consistent(&stats);
    assert_eq!(stats.op(Op::PutItem).calls, 5);
    assert_eq!(stats.op(Op::GetItem).calls, 1);
    assert_eq!(stats.op(Op::Query).calls, 2);
    assert_eq!(stats.op(Op::Scan).calls, 0);
    assert!(stats.op(Op::PutItem).write_units >= 5.0, "{stats}");
    assert_eq!(stats.op(Op::PutItem).read_units, 0.0);
    assert!(stats.op(Op::Query).read_units > 0.0, "{stats}");
    let table = stats.target(None).expect("the table");
    assert_eq!((table.calls, table.items_read), (6, 1));
    assert_eq!(table.table, db.table_name());
    let gsi1 = stats.target(Some("gsi1")).expect("gsi1");
    assert_eq!((gsi1.calls, gsi1.items_read), (1, 5));
    assert!(gsi1.read_units > 0.0, "{stats}");
    assert_eq!(stats.target(Some("gsi2")).map(|t| (t.calls, t.items_read)), Some((1, 1)));
    // The display lists every operation and target.
    let text = stats.to_string();
    for needle in ["PutItem", "GetItem", "Query", "/gsi1", "/gsi2"] {
        assert!(text.contains(needle), "{text}");
    }
    db.reset_requests();
    assert_eq!(db.stats(), Stats::default());
    Ok(())
}

#[tokio::test]
async fn retried_attempts_are_counted_in_spans_and_stats() -> Result<(), Error> {
    let direct = db::<App>().await;
    let harness = Harness::on(direct.clone(), Faults::seeded(3).drop_before(0.25)).await?;
    let db = harness.db();
    let capture = Capture::default();
    let _guard = capture.install();
    for i in 0..12 {
        user(&format!("u{i}"), "acme").put(db).await?;
    }
    let spans = capture.take();
    let reqs = requests(&spans);
    assert_eq!(reqs.len(), 12);
    let attempts: Vec<u64> =
        reqs.iter().map(|s| s.get("ddb_model.attempts").unwrap().parse().unwrap()).collect();
    let calls = harness.proxy().counts().requests;
    assert_eq!(attempts.iter().sum::<u64>(), calls);
    assert!(attempts.iter().any(|&a| a > 1), "{attempts:?}");
    let stats = db.stats();
    assert_consistent(&stats);
    assert_eq!(stats.op(Op::PutItem).attempts, calls);
    assert_eq!(stats.target(None).map(|t| (t.calls, t.attempts)), Some((12, calls)));
    Ok(())
}
