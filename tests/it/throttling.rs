//! Throttling and multi-Region write conflicts as the service sends them: a client whose HTTP
//! layer answers every request with a canned DynamoDB error (the JSON the service returns),
//! so the whole path (the SDK's parsing and retries, the library's typing, spans and
//! statistics) runs as it would against a throttled table. No backend is involved.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_runtime_api::http::StatusCode;
use aws_smithy_types::body::SdkBody;
use ddb_model::aws_sdk_dynamodb::config::retry::RetryConfig;
use ddb_model::aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use ddb_model::aws_sdk_dynamodb::{Client, Config};
use ddb_model::prelude::*;
use ddb_model::testing::{Faults, Harness};
use ddb_model::{
    Op,
    error::{RetryAdvice, ThrottleLimit, ThrottledAccess},
};

use crate::model::{App, User};

/// Answers every request with `status` and the JSON `body`, counting the requests.
#[derive(Debug, Clone)]
struct Canned {
    status: u16,
    body: &'static str,
    calls: Arc<AtomicU64>,
}

impl HttpClient for Canned {
    fn http_connector(
        &self,
        _: &HttpConnectorSettings,
        _: &RuntimeComponents,
    ) -> SharedHttpConnector {
        SharedHttpConnector::new(self.clone())
    }
}

impl HttpConnector for Canned {
    fn call(&self, _: HttpRequest) -> HttpConnectorFuture {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let status = StatusCode::try_from(self.status).expect("a status");
        let mut response = HttpResponse::new(status, SdkBody::from(self.body));
        response.headers_mut().insert("content-type", "application/x-amz-json-1.0");
        HttpConnectorFuture::ready(Ok(response))
    }
}

/// A `Db` whose every request gets the canned answer; the SDK tries each request twice.
fn canned_db(status: u16, body: &'static str) -> (Db<App>, Arc<AtomicU64>) {
    let calls = Arc::new(AtomicU64::new(0));
    let config = Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("k", "s", None, None, "test"))
        .endpoint_url("http://127.0.0.1:9")
        .http_client(Canned { status, body, calls: Arc::clone(&calls) })
        .retry_partition(crate::support::own_retry_partition())
        .retry_config(
            RetryConfig::standard()
                .with_max_attempts(2)
                .with_initial_backoff(Duration::from_millis(1)),
        )
        .build();
    (Db::with_table_name(Client::from_conf(config), "app"), calls)
}

const HOT_KEY: &str = r#"{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"Throughput exceeds the current throughput limit for your table or index.","throttlingReasons":[{"reason":"TableWriteKeyRangeThroughputExceeded","resource":"arn:aws:dynamodb:us-east-1:123456789012:table/app"}]}"#;

const PROVISIONED: &str = r#"{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"The level of configured provisioned throughput for one or more global secondary indexes of the table was exceeded.","ThrottlingReasons":[{"reason":"IndexReadProvisionedThroughputExceeded","resource":"arn:aws:dynamodb:us-east-1:123456789012:table/app/index/gsi1"}]}"#;

const REPLICATED: &str = r#"{"__type":"com.amazonaws.dynamodb.v20120810#ReplicatedWriteConflictException","message":"One or more items in this request are being modified by a request in another Region."}"#;

#[tokio::test]
async fn a_hot_key_is_a_typed_throttle_with_advice() {
    let (db, calls) = canned_db(400, HOT_KEY);
    let err = User::sample("ann").put(&db).await.unwrap_err();
    assert!(matches!(&err, Error::Throttled { operation: Op::PutItem, .. }), "{err:?}");
    assert!(err.is_throttled() && err.is_hot_key() && err.is_transient());
    assert!(!err.maybe_applied(), "a 400 answer: nothing was written");
    let reason = &err.throttle_reasons()[0];
    assert_eq!(
        (reason.limit.clone(), reason.access, reason.on_index),
        (ThrottleLimit::KeyRange, Some(ThrottledAccess::Write), false)
    );
    assert!(reason.resource.as_deref().is_some_and(|r| r.ends_with("table/app")));
    match err.retry_advice() {
        RetryAdvice::RetryAfter { after, why } => {
            assert!(after >= Duration::from_millis(100));
            assert!(why.contains("hot partition key"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    // The SDK retried the throttled request once; both attempts are counted.
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(db.requests().get(Op::PutItem), 1);
    assert_eq!(db.requests().attempts(Op::PutItem), 2);
}

/// The cost report counts the throttling reasons of every throttled attempt (here both
/// attempts of each request), under the pattern that sent them.
#[tokio::test]
async fn the_cost_report_counts_the_throttling_reasons() {
    let (db, _) = canned_db(400, HOT_KEY);
    let db = db.with_cost_report(2);
    for _ in 0..2 {
        User::sample("ann").put(&db).await.unwrap_err();
    }
    let (plain, _) = canned_db(400, PROVISIONED);
    let db2 = plain.with_cost_report(2);
    User::query_gsi1(&db2, "acme").all().await.unwrap_err();
    let report = db.cost_report().expect("kept");
    let reasons: Vec<(&str, u64)> =
        report.throttles.iter().map(|t| (t.reason.as_str(), t.count)).collect();
    assert_eq!(reasons, [("TableWriteKeyRangeThroughputExceeded", 4)], "2 requests, 2 attempts");
    let put = &report.patterns[0];
    assert_eq!((put.name().as_str(), put.requests, put.items_written), ("User PutItem", 2, 0));
    assert_eq!(report.hot_keys[0].requests, 2);
    let report = db2.cost_report().expect("kept");
    assert_eq!(report.throttles[0].reason, "IndexReadProvisionedThroughputExceeded");
    assert_eq!(report.throttles[0].count, 2);
    assert_eq!(report.patterns[0].name(), "User Query on gsi1");
    assert!(report.to_string().contains("throttled:"), "{report}");
}

/// Throttles the SDK retried with success are in the cost report too: one count per
/// throttled attempt, as the proxy injected them, whether the request then succeeded or not.
#[tokio::test]
async fn the_cost_report_counts_the_throttles_the_sdk_retried() -> Result<(), Error> {
    let faults = Faults::seeded(11).throttle(0.3, ThrottleLimit::KeyRange);
    let harness = Harness::<App>::start(faults).await?;
    let db = harness.db().clone().with_cost_report(4);
    let mut failed = 0;
    for i in 0..40 {
        let put = User::sample(&format!("u{i:02}")).put(&db).await;
        let get = User::get(&db, format!("u{i:02}")).await;
        failed += u64::from(put.is_err()) + u64::from(get.is_err());
    }
    let report = db.cost_report().expect("kept");
    let injected = harness.proxy().counts().throttled;
    let counted: Vec<(&str, u64)> =
        report.throttles.iter().map(|t| (t.reason.as_str(), t.count)).collect();
    let total: u64 = counted.iter().map(|(_, n)| n).sum();
    assert_eq!(total, injected, "{counted:?}");
    assert!(counted.iter().all(|(r, _)| r.ends_with("KeyRangeThroughputExceeded")), "{counted:?}");
    assert!(counted.len() == 2, "reads and writes: {counted:?}");
    // A request that failed was throttled on each of its 3 attempts: the others were retried
    // with success, and counted all the same.
    assert!(injected > 3 * failed, "{injected} throttles, {failed} failed requests");
    Ok(())
}

#[tokio::test]
async fn an_index_over_its_provisioned_capacity_is_told_apart() {
    let (db, _) = canned_db(400, PROVISIONED);
    let err = User::query_gsi1(&db, "acme").all().await.unwrap_err();
    assert!(matches!(&err, Error::Throttled { operation: Op::Query, .. }), "{err:?}");
    assert!(!err.is_hot_key());
    let reason = &err.throttle_reasons()[0];
    assert!(reason.on_index);
    assert_eq!(reason.limit, ThrottleLimit::Provisioned);
    assert_eq!(reason.access, Some(ThrottledAccess::Read));
    assert!(err.to_string().contains("IndexReadProvisionedThroughputExceeded"), "{err}");
    // The statistics put the query under its index.
    assert_eq!(db.stats().target(Some("gsi1")).map(|t| (t.calls, t.attempts)), Some((1, 2)));
}

#[tokio::test]
async fn a_replicated_write_conflict_is_typed_and_transient() {
    let (db, _) = canned_db(400, REPLICATED);
    let err = User::update(&db, "ann").add(User::LOGINS, 1).await.unwrap_err();
    assert!(err.is_replicated_write_conflict(), "{err:?}");
    assert!(err.is_transient() && !err.is_throttled());
    assert!(err.retry_advice().may_retry());
}
