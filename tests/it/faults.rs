//! Faults injected below the SDK, at the HTTP layer: a wrapping HTTP client that fails a
//! request before sending it, or sends it and then loses the response (so the SDK retries a
//! write the service already applied).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;
use ddb_model::aws_sdk_dynamodb::config::retry::RetryConfig;
use ddb_model::aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::aws_sdk_dynamodb::{Client, Config};
use ddb_model::prelude::*;
use ddb_model::{DefaultTable, local};

use crate::model::{App, Counter, Order, Status, User};
use crate::support::{self, s};

/// Which requests fail, and how. Request numbers count every HTTP attempt, retries included.
#[derive(Debug, Default)]
pub struct Plan {
    /// Every `every`-th request (at `offset`) fails.
    every: u64,
    offset: u64,
    /// Fail after forwarding (the write happens, the response is lost) instead of before.
    after: bool,
    /// Every request from this number on fails (a process that lost its connection for good).
    from: Option<u64>,
    /// Every `unprocess`-th `BatchWriteItem` is answered, without reaching the service, with
    /// all its items unprocessed (what a throttled table answers).
    unprocess: u64,
    batch_writes: AtomicU64,
    calls: AtomicU64,
    injected: AtomicU64,
}

impl Plan {
    pub fn injected(&self) -> u64 {
        self.injected.load(Ordering::SeqCst)
    }
}

#[derive(Debug)]
struct Faulty {
    inner: SharedHttpClient,
    plan: Arc<Plan>,
}

impl HttpClient for Faulty {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        let inner = self.inner.http_connector(settings, components);
        SharedHttpConnector::new(FaultyConnector { inner, plan: Arc::clone(&self.plan) })
    }
}

struct FaultyConnector {
    inner: SharedHttpConnector,
    plan: Arc<Plan>,
}

impl fmt::Debug for FaultyConnector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FaultyConnector")
    }
}

impl HttpConnector for FaultyConnector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let plan = Arc::clone(&self.plan);
        let inner = self.inner.clone();
        HttpConnectorFuture::new(async move {
            let n = plan.calls.fetch_add(1, Ordering::SeqCst);
            if plan.unprocess > 0 && is_batch_write(&request) {
                let k = plan.batch_writes.fetch_add(1, Ordering::SeqCst);
                if k.is_multiple_of(plan.unprocess)
                    && let Some(response) = all_unprocessed(&request)
                {
                    plan.injected.fetch_add(1, Ordering::SeqCst);
                    return Ok(response);
                }
            }
            let fail = plan.from.is_some_and(|k| n >= k)
                || (plan.every > 0 && n % plan.every == plan.offset);
            if !fail {
                return inner.call(request).await;
            }
            plan.injected.fetch_add(1, Ordering::SeqCst);
            if plan.after {
                let _applied = inner.call(request).await;
                Err(ConnectorError::io("injected fault: response lost after the write".into()))
            } else {
                Err(ConnectorError::io("injected fault: connection reset before sending".into()))
            }
        })
    }
}

fn is_batch_write(request: &HttpRequest) -> bool {
    request.headers().get("x-amz-target").is_some_and(|t| t.ends_with(".BatchWriteItem"))
}

/// The answer of a service that processed none of a `BatchWriteItem`'s items.
fn all_unprocessed(request: &HttpRequest) -> Option<HttpResponse> {
    let body: serde_json::Value = serde_json::from_slice(request.body().bytes()?).ok()?;
    let answer = serde_json::json!({ "UnprocessedItems": body.get("RequestItems")? });
    let mut response = HttpResponse::new(
        200u16.try_into().ok()?,
        SdkBody::from(serde_json::to_vec(&answer).ok()?),
    );
    response.headers_mut().insert("content-type", "application/x-amz-json-1.0");
    Some(response)
}

/// Every `every`-th `BatchWriteItem` (the first included) leaves all its items unprocessed.
pub fn unprocess_batch_writes(every: u64) -> Arc<Plan> {
    Arc::new(Plan { unprocess: every, ..Plan::default() })
}

/// A client for the test endpoint whose requests fail according to `plan`, retried quickly.
pub fn faulty_client(plan: &Arc<Plan>) -> Client {
    let endpoint = local::endpoint().expect("endpoint");
    let inner = aws_smithy_http_client::Builder::new().build_http();
    let config = Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("local", "local", None, None, "test"))
        .endpoint_url(endpoint)
        .http_client(Faulty { inner, plan: Arc::clone(plan) })
        .retry_partition(crate::support::own_retry_partition())
        .retry_config(
            RetryConfig::standard()
                .with_max_attempts(6)
                .with_initial_backoff(Duration::from_millis(1)),
        )
        .build();
    Client::from_conf(config)
}

/// Requests `0..k` go through, every later one fails before it is sent.
pub fn fail_from(k: u64) -> Arc<Plan> {
    Arc::new(Plan { from: Some(k), ..Plan::default() })
}

/// How many HTTP requests the plan's client has sent (or tried to).
pub fn calls(plan: &Plan) -> u64 {
    plan.calls.load(Ordering::SeqCst)
}

pub fn lose_responses(every: u64) -> Arc<Plan> {
    Arc::new(Plan { every, offset: every / 2, after: true, ..Plan::default() })
}

/// Every `every`-th request fails before it reaches the service (the SDK retries it).
pub fn fail_before_sending(every: u64) -> Arc<Plan> {
    Arc::new(Plan { every, offset: every / 2, after: false, ..Plan::default() })
}

const WRITES: i64 = 200;

/// The hazard DESIGN.md describes, reproduced: a plain `ADD` whose response is lost is applied
/// again by the SDK's retry.
#[tokio::test]
async fn a_plain_add_is_applied_twice_when_its_response_is_lost() -> Result<(), Error> {
    let clean = support::db::<DefaultTable>().await;
    Counter { name: "raw".into(), n: 0, log: vec![] }.create(&clean).await?;
    let plan = lose_responses(20);
    let client = faulty_client(&plan);
    for _ in 0..WRITES {
        client
            .update_item()
            .table_name(clean.table_name())
            .key("pk", s("COUNTER#raw"))
            .key("sk", s("COUNTER"))
            .update_expression("ADD #n :one")
            .expression_attribute_names("#n", "n")
            .expression_attribute_values(":one", AttributeValue::N("1".into()))
            .send()
            .await
            .expect("retried until it succeeded");
    }
    let counter = Counter::get(&clean, "raw").await?.expect("counter");
    println!("plain ADD x{WRITES}, {} responses lost: n = {}", plan.injected(), counter.n);
    assert!(plan.injected() >= 10, "faults were injected: {}", plan.injected());
    assert_eq!(counter.n, WRITES + plan.injected() as i64, "every lost response added once more");
    Ok(())
}

/// ddb-model sends `add` / `append` as a transaction with an idempotency token: the retry of a
/// request whose response was lost is not applied again.
#[tokio::test]
async fn add_and_append_are_applied_exactly_once_under_lost_responses() -> Result<(), Error> {
    let clean = support::db::<DefaultTable>().await;
    Counter { name: "safe".into(), n: 0, log: vec![] }.create(&clean).await?;
    let plan = lose_responses(20);
    let db: Db = Db::with_table_name(faulty_client(&plan), clean.table_name());
    for i in 0..WRITES {
        Counter::update(&db, "safe")
            .add(Counter::N, 1)
            .append(Counter::LOG, [i.to_string()])
            .no_return()
            .await?;
    }
    let counter = Counter::get(&clean, "safe").await?.expect("counter");
    println!("ddb-model add x{WRITES}, {} responses lost: n = {}", plan.injected(), counter.n);
    assert!(plan.injected() >= 10, "faults were injected: {}", plan.injected());
    assert_eq!(counter.n, WRITES);
    let expected: Vec<String> = (0..WRITES).map(|i| i.to_string()).collect();
    assert_eq!(counter.log, expected, "each append once, in order");
    Ok(())
}

/// A create whose response is lost is retried, and the retry finds the item the first attempt
/// stored: that is this write's own item, so the create succeeds instead of reporting
/// `AlreadyExists`. Versioned writes likewise end at the right version.
#[tokio::test]
async fn conditional_writes_recognise_their_own_applied_write() -> Result<(), Error> {
    let clean = support::db::<App>().await;
    let plan = lose_responses(4);
    let db: Db<App> = Db::with_table_name(faulty_client(&plan), clean.table_name());
    for i in 0..20 {
        User::sample(&format!("u{i}")).create(&db).await?;
    }
    let mut order = Order {
        user: "u1".into(),
        year: 2024,
        seq: 1,
        status: Status::Open,
        total_cents: 0,
        version: 0,
    };
    order.create(&db).await?;
    for cents in 1..=20 {
        order.total_cents = cents;
        order.replace(&db).await?;
    }
    assert!(plan.injected() >= 10, "faults were injected: {}", plan.injected());
    assert_eq!(support::snapshot(&clean).await.len(), 21);
    let stored = Order::get(&clean, "u1", 2024, 1u64).await?.expect("order");
    assert_eq!((stored.total_cents, stored.version), (20, 21));
    assert_eq!(order, stored);
    Ok(())
}

/// Requests that fail before reaching the service are retried by the SDK; nothing is lost or
/// duplicated, and the request counter counts logical requests, not attempts.
#[tokio::test]
async fn failures_before_sending_are_retried() -> Result<(), Error> {
    let clean = support::db::<DefaultTable>().await;
    let plan = Arc::new(Plan { every: 3, offset: 1, after: false, ..Plan::default() });
    let db: Db = Db::with_table_name(faulty_client(&plan), clean.table_name());
    Counter { name: "c".into(), n: 0, log: vec![] }.create(&db).await?;
    for _ in 0..30 {
        Counter::update(&db, "c").add(Counter::N, 1).no_return().await?;
    }
    assert!(plan.injected() >= 10);
    assert_eq!(Counter::get(&clean, "c").await?.map(|c| c.n), Some(30));
    assert_eq!(db.requests().total(), 31, "logical requests");
    Ok(())
}
