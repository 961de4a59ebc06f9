//! Aggregates kept from the table's stream, exactly once (issue 29, item 2): records delivered
//! twice, out of order, in retried batches and to a processor killed at every request, and
//! random workloads; each ends with the totals equal to a recount by scan. Real records of
//! the streams API, on the embedded engine or `DDB_ENDPOINT`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use ddb_model::aws_sdk_dynamodbstreams::Client as StreamsClient;
use ddb_model::aws_sdk_dynamodbstreams::config::interceptors::BeforeTransmitInterceptorContextRef;
use ddb_model::aws_sdk_dynamodbstreams::config::{ConfigBag, Intercept};
use ddb_model::aws_sdk_dynamodbstreams::error::BoxError;
use ddb_model::aws_sdk_dynamodbstreams::types::ShardIteratorType;
use ddb_model::error::AggregateProblem;
use ddb_model::intercept::{Additions, Interceptor, Outcome, Request};
use ddb_model::prelude::*;
use ddb_model::stats::Op;
use ddb_model::stream::aggregate::{Aggregate, Processor, Totals};
use ddb_model::stream::{StreamRecord, ViewType};
use ddb_model::{DefaultTable, local};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use crate::support;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "ORDER#<id>", sk = "ORDER")]
struct Order {
    id: u32,
    customer: String,
    amount: i64,
    /// Cancelled orders are not counted.
    cancelled: bool,
    note: String,
}

/// Another entity of the table: never counted.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "CUSTOMER#<id>", sk = "PROFILE")]
struct Customer {
    id: String,
    name: String,
}

fn by_customer() -> Aggregate<Order> {
    Aggregate::new("by_customer", |o: &Order| (!o.cancelled).then(|| o.customer.clone()))
        .count("orders")
        .sum("amount", |o: &Order| o.amount)
}

fn order(id: u32, customer: &str, amount: i64) -> Order {
    Order { id, customer: customer.into(), amount, cancelled: false, note: String::new() }
}

pub(crate) async fn stream_db() -> Db {
    let db = support::db::<DefaultTable>().await;
    let stream = db.sync_table().stream(ddb_model::ops::ViewType::NewAndOldImages);
    stream.apply().await.expect("enable the stream");
    db
}

/// Every record of the table's stream so far, shard by shard from the oldest.
pub(crate) async fn read_stream(db: &Db) -> Vec<StreamRecord> {
    let streams = local::streams_client_for(&local::endpoint().expect("endpoint"));
    let listed =
        streams.list_streams().table_name(db.table_name()).send().await.expect("list streams");
    let arn = listed.streams()[0].stream_arn().expect("stream arn").to_owned();
    let described = streams.describe_stream().stream_arn(&arn).send().await.expect("describe");
    let shards = described.stream_description().map(|d| d.shards().to_vec()).unwrap_or_default();
    let mut records = Vec::new();
    for shard in shards {
        let mut iterator = streams
            .get_shard_iterator()
            .stream_arn(&arn)
            .shard_id(shard.shard_id().expect("shard id"))
            .shard_iterator_type(ShardIteratorType::TrimHorizon)
            .send()
            .await
            .expect("shard iterator")
            .shard_iterator;
        while let Some(it) = iterator {
            let page = streams.get_records().shard_iterator(it).send().await.expect("get records");
            if page.records().is_empty() {
                break;
            }
            records.extend(
                page.records().iter().cloned().map(|r| {
                    StreamRecord::try_from(r).expect("a record of the streams API converts")
                }),
            );
            iterator = page.next_shard_iterator;
        }
    }
    records
}

/// The totals equal a recount of the orders by scan (and `expected`, when given).
async fn assert_recounted(db: &Db, agg: &Aggregate<Order>) -> BTreeMap<String, Totals> {
    let totals = agg.totals(db).await.expect("totals");
    let recount = agg.recount(db).await.expect("recount");
    assert_eq!(totals, recount, "the totals are a recount of the orders");
    totals
}

fn pair(totals: &BTreeMap<String, Totals>, group: &str) -> (i64, i64) {
    totals
        .get(group)
        .map_or((0, 0), |t| (t.get("orders").expect("orders"), t.get("amount").expect("amount")))
}

/// A workload with inserts, changes of amount, a customer change, a cancellation, a delete
/// and items of another entity.
async fn workload(db: &Db) -> Result<(), Error> {
    for (id, customer, amount) in [(1, "ann", 10), (2, "ann", 20), (3, "bob", 5), (4, "cy", 7)] {
        order(id, customer, amount).create(db).await?;
    }
    Customer { id: "ann".into(), name: "Ann".into() }.create(db).await?;
    Order::update(db, 1).set(Order::AMOUNT, 15).await?;
    Order::update(db, 2).set(Order::CUSTOMER, "bob".to_owned()).await?;
    Order::update(db, 3).set(Order::NOTE, "gift".to_owned()).await?;
    Order::update(db, 4).set(Order::CANCELLED, true).await?;
    order(5, "cy", 1).create(db).await?;
    Order::delete(db, 5).await?;
    Ok(())
}

#[tokio::test]
async fn duplicated_reordered_and_retried_deliveries_count_once() -> Result<(), Error> {
    let db = stream_db().await;
    let agg = by_customer();
    workload(&db).await?;
    let records = read_stream(&db).await;
    let processor = Processor::new(&db, &agg, ViewType::NewAndOldImages)?;

    // Newest first: each item's newest record is applied, the older ones are stale.
    let mut reversed = records.clone();
    reversed.reverse();
    for record in &reversed {
        processor.apply(std::slice::from_ref(record)).await?;
    }
    let totals = assert_recounted(&db, &agg).await;
    assert_eq!(pair(&totals, "ann"), (1, 15));
    assert_eq!(pair(&totals, "bob"), (2, 25));
    assert_eq!(pair(&totals, "cy"), (0, 0));

    // The whole stream again, in one batch and duplicated: nothing applies twice.
    let mut twice = records.clone();
    twice.extend(records.iter().cloned());
    let again = processor.apply(&twice).await?;
    assert_eq!(again.applied, 0);
    assert_eq!(again.stale, 5, "five orders");
    assert_eq!(again.ignored, 2, "the customer's record, twice");
    assert_eq!(assert_recounted(&db, &agg).await, totals);

    // The stream now holds the processor's own writes: decoded as bookkeeping, ignored.
    let with_own = read_stream(&db).await;
    assert!(with_own.len() > records.len());
    let own = processor.apply(&with_own).await?;
    assert_eq!((own.applied, own.stale), (0, 5));
    assert_eq!(own.ignored, with_own.len() - records.len() + 1);
    assert_eq!(assert_recounted(&db, &agg).await, totals);
    Ok(())
}

#[tokio::test]
async fn batches_in_stream_order_and_shuffled_agree() -> Result<(), Error> {
    let db = stream_db().await;
    let agg = by_customer();
    workload(&db).await?;
    let records = read_stream(&db).await;
    let processor = Processor::new(&db, &agg, ViewType::NewImage)?;
    for chunk in records.chunks(3) {
        processor.apply(chunk).await?;
    }
    let in_order = assert_recounted(&db, &agg).await;

    // A second aggregate fed the same records shuffled in overlapping batches.
    let other =
        Aggregate::new("by_customer_2", |o: &Order| (!o.cancelled).then(|| o.customer.clone()))
            .count("orders")
            .sum("amount", |o: &Order| o.amount);
    let p2 = Processor::new(&db, &other, ViewType::NewImage)?;
    let n = records.len();
    let shuffled: Vec<StreamRecord> = (0..n).map(|i| records[(i * 7 + 3) % n].clone()).collect();
    for window in shuffled.windows(4).step_by(2) {
        p2.apply(window).await?;
    }
    p2.apply(&shuffled).await?;
    let totals = other.totals(&db).await?;
    assert_eq!(totals, other.recount(&db).await?);
    let strip = |t: &BTreeMap<String, Totals>| -> Vec<(String, Vec<i64>)> {
        t.iter().map(|(g, t)| (g.clone(), t.values().iter().map(|(_, v)| *v).collect())).collect()
    };
    assert_eq!(strip(&totals), strip(&in_order));
    Ok(())
}

#[tokio::test]
async fn requests_per_applied_item() -> Result<(), Error> {
    let db = stream_db().await;
    let agg = by_customer();
    for id in 0..4 {
        order(id, "ann", 1).create(&db).await?;
    }
    let records = read_stream(&db).await;
    let processor = Processor::new(&db, &agg, ViewType::NewAndOldImages)?;
    let before = db.requests();
    processor.apply(&records).await?;
    let spent = db.requests() - before;
    // Per new item: its contribution read, then one transaction (contribution and total).
    assert_eq!((spent.get(Op::GetItem), spent.get(Op::TransactWriteItems)), (4, 4));
    assert_eq!(spent.total(), 8);

    // A duplicate: the read alone.
    let before = db.requests();
    processor.apply(&records).await?;
    let spent = db.requests() - before;
    assert_eq!((spent.get(Op::GetItem), spent.total()), (4, 4));

    // A change that leaves the contribution as it was: one PutItem moves its position.
    Order::update(&db, 0).set(Order::NOTE, "x".to_owned()).await?;
    let records = read_stream(&db).await;
    let before = db.requests();
    processor.apply(&records).await?;
    let spent = db.requests() - before;
    assert_eq!((spent.get(Op::GetItem), spent.get(Op::PutItem), spent.total()), (4, 1, 5));
    assert_recounted(&db, &agg).await;
    Ok(())
}

#[tokio::test]
async fn what_cannot_be_applied_is_refused_before_writing() -> Result<(), Error> {
    let db = stream_db().await;
    let agg = by_customer();
    for view in [ViewType::KeysOnly, ViewType::OldImage] {
        let err = Processor::new(&db, &agg, view).err().expect("refused");
        assert!(err.is_aggregate_problem(), "{err}");
        assert!(matches!(err, Error::Aggregate { problem: AggregateProblem::ViewType { .. }, .. }));
    }
    let bad = Aggregate::new("no spaces", |o: &Order| Some(o.customer.clone())).count("n");
    let err = Processor::new(&db, &bad, ViewType::NewImage).err().expect("refused");
    assert!(matches!(err, Error::Aggregate { problem: AggregateProblem::InvalidName { .. }, .. }));
    for taken in ["pk", "_type", "_seq"] {
        let bad = Aggregate::new("x", |o: &Order| Some(o.customer.clone())).count(taken);
        let err = Processor::new(&db, &bad, ViewType::NewImage).err().expect("refused");
        assert!(matches!(
            err,
            Error::Aggregate { problem: AggregateProblem::NameTaken { .. }, .. }
        ));
    }
    let twice =
        Aggregate::new("x", |o: &Order| Some(o.customer.clone())).count("n").sum("n", |o| o.amount);
    assert!(Processor::new(&db, &twice, ViewType::NewImage).is_err());

    order(1, "ann", 3).create(&db).await?;
    let records = read_stream(&db).await;
    let processor = Processor::new(&db, &agg, ViewType::NewAndOldImages)?;
    let before = db.requests();
    let mut keys_only = records.clone();
    keys_only[0].dynamodb.stream_view_type = Some("KEYS_ONLY".into());
    let err = processor.apply(&keys_only).await.unwrap_err();
    assert!(matches!(
        err,
        Error::Aggregate { problem: AggregateProblem::ViewType { view: "KEYS_ONLY" }, .. }
    ));
    let mut no_seq = records.clone();
    no_seq[0].dynamodb.sequence_number = None;
    let err = processor.apply(&no_seq).await.unwrap_err();
    assert!(matches!(
        err,
        Error::Aggregate { problem: AggregateProblem::NoSequenceNumber { .. }, .. }
    ));
    let mut bad_seq = records.clone();
    bad_seq[0].dynamodb.sequence_number = Some("12a".into());
    let err = processor.apply(&bad_seq).await.unwrap_err();
    assert!(matches!(
        err,
        Error::Aggregate { problem: AggregateProblem::InvalidSequenceNumber { .. }, .. }
    ));
    let mut no_image = records.clone();
    no_image[0].dynamodb.new_image = None;
    let err = processor.apply(&no_image).await.unwrap_err();
    assert!(matches!(err, Error::Aggregate { problem: AggregateProblem::NoNewImage { .. }, .. }));
    let mut unknown = records.clone();
    unknown[0].event_name = "UPSERT".into();
    assert!(processor.apply(&unknown).await.unwrap_err().is_invalid_stream_record());
    assert_eq!((db.requests() - before).total(), 0, "nothing was sent");
    assert!(agg.totals(&db).await?.is_empty());
    Ok(())
}

/// Kills the processor at one request: a panic in the interceptor, in its task, before the
/// request is sent (`before`) or after it was applied and answered (`after`), so the answer
/// is lost with the process.
struct KillAt {
    seen: AtomicU64,
    at: u64,
    after: bool,
}

const KILLED: &str = "aggregate test: processor killed";

impl Interceptor for KillAt {
    fn before(&self, _: &Request, _: &mut Additions) {
        if !self.after && self.seen.fetch_add(1, Ordering::SeqCst) + 1 == self.at {
            std::panic::panic_any(KILLED);
        }
    }

    fn after(&self, _: &Request, _: Outcome<'_>) {
        if self.after && self.seen.fetch_add(1, Ordering::SeqCst) + 1 == self.at {
            std::panic::panic_any(KILLED);
        }
    }
}

/// Keeps the kills out of the test output; every other panic is reported as before.
pub(crate) fn quiet_kills() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&KILLED) {
                previous(info);
            }
        }));
    });
}

fn named(name: &'static str) -> Aggregate<Order> {
    Aggregate::new(name, |o: &Order| (!o.cancelled).then(|| o.customer.clone()))
        .count("orders")
        .sum("amount", |o: &Order| o.amount)
}

/// Runs the processor of `agg` over `records` in a task killed at its request `at` (0: never);
/// true when it was killed.
async fn run_killed(
    db: &Db,
    agg: &Arc<Aggregate<Order>>,
    records: &Arc<Vec<StreamRecord>>,
    at: u64,
    after: bool,
) -> Result<bool, Error> {
    let (records, agg) = (records.clone(), agg.clone());
    killed(db, at, after, async move |db| {
        Processor::new(&db, &*agg, ViewType::NewAndOldImages)?.apply(&records).await.map(|_| ())
    })
    .await
}

/// Runs `run` in a task, on `db` with a [`KillAt`] of request `at` (0: never); true when it
/// was killed.
pub(crate) async fn killed<Fut>(
    db: &Db,
    at: u64,
    after: bool,
    run: impl FnOnce(Db) -> Fut,
) -> Result<bool, Error>
where
    Fut: std::future::Future<Output = Result<(), Error>> + Send + 'static,
{
    let killer = Arc::new(KillAt { seen: AtomicU64::new(0), at, after });
    match tokio::spawn(run(db.clone().with_interceptor(killer))).await {
        Ok(done) => done.map(|()| false),
        Err(e) if e.is_panic() => Ok(true),
        Err(e) => panic!("{e}"),
    }
}

#[tokio::test]
async fn a_processor_killed_at_every_request_resumes_exactly_once() -> Result<(), Error> {
    quiet_kills();
    let db = stream_db().await;
    workload(&db).await?;
    let records = Arc::new(read_stream(&db).await);
    // The requests of an uninterrupted run.
    let reference = Arc::new(named("reference"));
    let before = db.requests();
    Processor::new(&db, &*reference, ViewType::NewAndOldImages)?.apply(&records).await?;
    let requests = (db.requests() - before).total();
    assert_eq!(requests, 10, "five orders: a read and a write each");
    let expected = assert_recounted(&db, &reference).await;

    // Killed at each request (before it is sent, or after it was applied and its answer
    // lost), then the same batch again (a Lambda retrying it), to the end.
    const NAMES: [[&str; 10]; 2] = [
        ["b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9", "b10"],
        ["a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10"],
    ];
    for (after, names) in [false, true].into_iter().zip(NAMES) {
        for (at, name) in (1..=requests).zip(names) {
            let agg = Arc::new(named(name));
            assert!(run_killed(&db, &agg, &records, at, after).await?, "{name}: killed");
            assert!(!run_killed(&db, &agg, &records, 0, after).await?);
            let totals = agg.totals(&db).await?;
            assert_eq!(totals, agg.recount(&db).await?, "{name}");
            assert_eq!(totals, expected, "{name}");
        }
    }

    // Killed again and again, each run getting one request further.
    let agg = Arc::new(named("again"));
    let mut kills = 0;
    for at in 1.. {
        if !run_killed(&db, &agg, &records, at, true).await? {
            break;
        }
        kills += 1;
    }
    assert!(kills >= 5, "killed {kills} times");
    assert_eq!(agg.totals(&db).await?, expected);
    Ok(())
}

#[tokio::test]
async fn a_rebuild_fills_and_repairs_and_the_stream_applies_on_top() -> Result<(), Error> {
    let db = stream_db().await;
    let agg = by_customer();
    // Items written before the aggregate existed: the rebuild counts them.
    for (id, customer, amount) in [(1, "ann", 10), (2, "ann", 20), (3, "bob", 5)] {
        order(id, customer, amount).create(&db).await?;
    }
    let report = agg.rebuild(&db).await?;
    assert_eq!((report.sources, report.contributions_fixed, report.totals_fixed), (3, 3, 2));
    let totals = assert_recounted(&db, &agg).await;
    assert_eq!(pair(&totals, "ann"), (2, 30));
    assert_eq!(agg.rebuild(&db).await?.contributions_fixed, 0, "a second rebuild changes nothing");

    // A total damaged by something else is repaired.
    let key = [("pk", "~agg=by_customer#ann"), ("sk", "~agg")];
    let mut update = db.client().update_item().table_name(db.table_name());
    for (k, v) in key {
        update = update.key(k, ddb_model::aws_sdk_dynamodb::types::AttributeValue::S(v.into()));
    }
    update
        .update_expression("SET orders = :n")
        .expression_attribute_values(
            ":n",
            ddb_model::aws_sdk_dynamodb::types::AttributeValue::N("99".into()),
        )
        .send()
        .await
        .expect("damage");
    assert_ne!(agg.totals(&db).await?, agg.recount(&db).await?);
    assert_eq!(agg.rebuild(&db).await?.totals_fixed, 1);
    assert_recounted(&db, &agg).await;

    // Later changes, and the whole stream from its start, apply on top of the rebuild.
    Order::update(&db, 1).set(Order::CUSTOMER, "bob".to_owned()).await?;
    Order::delete(&db, 3).await?;
    let processor = Processor::new(&db, &agg, ViewType::NewAndOldImages)?;
    processor.apply(&read_stream(&db).await).await?;
    let totals = assert_recounted(&db, &agg).await;
    assert_eq!(pair(&totals, "bob"), (1, 10));
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Random workloads: random writes, then the stream delivered shuffled, duplicated and in
// random batches; the totals equal a recount by scan and an in-memory model.

#[derive(Debug, Clone)]
enum Step {
    Put { id: u32, customer: u8, amount: i64, cancelled: bool },
    Amount { id: u32, amount: i64 },
    Move { id: u32, customer: u8 },
    Delete { id: u32 },
}

fn step() -> impl Strategy<Value = Step> {
    let id = 0..6u32;
    prop_oneof![
        3 => (id.clone(), 0..3u8, -50..100i64, prop::bool::weighted(0.2))
            .prop_map(|(id, customer, amount, cancelled)| Step::Put { id, customer, amount, cancelled }),
        2 => (id.clone(), -50..100i64).prop_map(|(id, amount)| Step::Amount { id, amount }),
        2 => (id.clone(), 0..3u8).prop_map(|(id, customer)| Step::Move { id, customer }),
        1 => id.prop_map(|id| Step::Delete { id }),
    ]
}

fn customer(c: u8) -> String {
    format!("c{c}")
}

/// Runs the steps through the library and returns what the model says the orders are.
async fn run_steps(db: &Db, steps: &[Step]) -> Result<BTreeMap<u32, Order>, Error> {
    let mut model: BTreeMap<u32, Order> = BTreeMap::new();
    for step in steps {
        match step.clone() {
            Step::Put { id, customer: c, amount, cancelled } => {
                let o = Order { cancelled, ..order(id, &customer(c), amount) };
                o.put(db).await?;
                model.insert(id, o);
            }
            Step::Amount { id, amount } => {
                if let Some(o) = model.get_mut(&id) {
                    Order::update(db, id).set(Order::AMOUNT, amount).await?;
                    o.amount = amount;
                }
            }
            Step::Move { id, customer: c } => {
                if let Some(o) = model.get_mut(&id) {
                    Order::update(db, id).set(Order::CUSTOMER, customer(c)).await?;
                    o.customer = customer(c);
                }
            }
            Step::Delete { id } => {
                if model.remove(&id).is_some() {
                    Order::delete(db, id).await?;
                }
            }
        }
    }
    Ok(model)
}

fn cases() -> u32 {
    std::env::var("DDB_AGGREGATE_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(6)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn prop_random_workloads_and_deliveries_match_a_recount(
        steps in prop::collection::vec(step(), 1..24),
        order_seed in any::<u64>(),
        batch in 1..6usize,
        duplicates in 0..3usize,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let result: Result<(), Error> = runtime.expect("runtime").block_on(async {
            let db = stream_db().await;
            let model = run_steps(&db, &steps).await?;
            let records = read_stream(&db).await;
            // Shuffled (a seeded permutation), each record delivered 1 + `duplicates` times.
            let mut delivered: Vec<(u64, StreamRecord)> = Vec::new();
            for copy in 0..=duplicates as u64 {
                for (i, r) in records.iter().enumerate() {
                    let rank = (i as u64 + 1).wrapping_mul(order_seed | 1).wrapping_add(copy).rotate_left(17);
                    delivered.push((rank, r.clone()));
                }
            }
            delivered.sort_by_key(|(rank, _)| *rank);
            let delivered: Vec<StreamRecord> = delivered.into_iter().map(|(_, r)| r).collect();
            let agg = by_customer();
            let processor = Processor::new(&db, &agg, ViewType::NewAndOldImages)?;
            for chunk in delivered.chunks(batch) {
                processor.apply(chunk).await?;
            }
            let totals = assert_recounted(&db, &agg).await;
            let mut expected: BTreeMap<String, (i64, i64)> = BTreeMap::new();
            for o in model.values().filter(|o| !o.cancelled) {
                let e = expected.entry(o.customer.clone()).or_default();
                e.0 += 1;
                e.1 += o.amount;
            }
            expected.retain(|_, (n, sum)| *n != 0 || *sum != 0);
            let got: BTreeMap<String, (i64, i64)> =
                totals.keys().map(|g| (g.clone(), pair(&totals, g))).collect();
            assert_eq!(got, expected, "the totals are the model's");
            Ok(())
        });
        prop_assert!(result.is_ok(), "{result:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// The streams API, read by the processor itself: shards, iterators, a checkpoint per shard.

#[tokio::test]
async fn draining_the_stream_resumes_from_checkpoints() -> Result<(), Error> {
    let db = stream_db().await;
    let agg = by_customer();
    workload(&db).await?;
    let (streams, sent) = counting_streams_client(&local::endpoint()?);
    let listed = streams.list_streams().table_name(db.table_name()).send().await.expect("list");
    let arn = listed.streams()[0].stream_arn().expect("stream arn").to_owned();
    let processor = Processor::new(&db, &agg, ViewType::NewAndOldImages)?;
    let first = processor.drain(&streams, &arn).await?;
    assert!(first.shards >= 1);
    assert_eq!(first.applied.applied, 5, "{first:?}");
    // Every request of the streams API is in the handle's counts, as the client sent it.
    let stream_ops = [Op::DescribeStream, Op::GetShardIterator, Op::GetRecords];
    let counted = |db: &Db| stream_ops.map(|op| (op.name(), db.requests().get(op)));
    let expected = stream_ops.map(|op| (op.name(), sent.get(op.name())));
    assert_eq!(counted(&db), expected);
    assert_eq!(db.requests().get(Op::GetShardIterator), first.shards as u64);
    assert!(db.requests().get(Op::GetRecords) > first.shards as u64, "a page, then the end");
    let totals = assert_recounted(&db, &agg).await;
    assert_eq!(pair(&totals, "bob"), (2, 25));

    // A processor started again reads after its checkpoints: only what was written since
    // (its own writes, ignored), and stops.
    let restarted = Processor::new(&db, &agg, ViewType::NewAndOldImages)?;
    let again = restarted.drain(&streams, &arn).await?;
    assert_eq!((again.applied.applied, again.applied.stale), (0, 0), "{again:?}");
    assert!(again.records < first.records, "{again:?} after {first:?}");

    // New writes: applied from the checkpoint on.
    Order::update(&db, 3).set(Order::AMOUNT, 50).await?;
    order(9, "dee", 4).create(&db).await?;
    let more = restarted.drain(&streams, &arn).await?;
    assert_eq!(more.applied.applied, 2, "{more:?}");
    let expected = stream_ops.map(|op| (op.name(), sent.get(op.name())));
    assert_eq!(counted(&db), expected, "three drains");
    assert_eq!(db.requests().get(Op::DescribeStream), 3);
    let totals = assert_recounted(&db, &agg).await;
    assert_eq!(pair(&totals, "bob"), (2, 70));
    assert_eq!(pair(&totals, "dee"), (1, 4));
    Ok(())
}

/// The requests a streams client sent, by operation (from the `X-Amz-Target` header of
/// each attempt).
#[derive(Debug, Clone, Default)]
struct SentByOperation(Arc<std::sync::Mutex<BTreeMap<String, u64>>>);

impl SentByOperation {
    fn get(&self, operation: &str) -> u64 {
        self.0.lock().unwrap().get(operation).copied().unwrap_or(0)
    }
}

impl Intercept for SentByOperation {
    fn name(&self) -> &'static str {
        "test::SentByOperation"
    }

    fn read_before_transmit(
        &self,
        context: &BeforeTransmitInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let target = context.request().headers().get("x-amz-target").unwrap_or_default();
        let operation = target.rsplit('.').next().unwrap_or_default().to_owned();
        *self.0.lock().unwrap().entry(operation).or_default() += 1;
        Ok(())
    }
}

fn counting_streams_client(endpoint: &str) -> (StreamsClient, SentByOperation) {
    let sent = SentByOperation::default();
    let config = local::streams_client_for(endpoint).config().to_builder();
    (StreamsClient::from_conf(config.interceptor(sent.clone()).build()), sent)
}

#[tokio::test]
async fn the_model_tool_rebuilds_an_aggregate() -> Result<(), Error> {
    use ddb_model::tooling::aggregate::RebuildAggregate;
    use ddb_model::tooling::cli::{Migration, MigrationProgress};

    let db = support::db::<DefaultTable>().await;
    for (id, customer, amount) in [(1, "ann", 10), (2, "bob", 20), (3, "bob", 5)] {
        order(id, customer, amount).create(&db).await?;
    }
    let rebuild = RebuildAggregate::new(by_customer());
    assert_eq!(rebuild.name(), "by_customer");
    let mut seen = Vec::new();
    let mut progress = |p: MigrationProgress| seen.push(p);
    rebuild.run(db.client().clone(), db.table_name(), &mut progress).await?;
    assert_eq!(seen, [MigrationProgress { done: 5, total: Some(5) }], "3 contributions, 2 totals");
    let totals = assert_recounted(&db, &by_customer()).await;
    assert_eq!(pair(&totals, "bob"), (2, 25));

    // Through the tool's `rebuild` command, as a user's `main` runs it.
    use ddb_model::tooling::TableModel;
    use ddb_model::tooling::cli::{Cli, MigrationKind};
    assert_eq!(rebuild.kind(), MigrationKind::Rebuild);
    order(4, "ann", 7).create(&db).await?;
    let cli = Cli::new(TableModel::of::<DefaultTable>().entity::<Order>()).migration(rebuild);
    let endpoint = ddb_model::local::endpoint()?;
    let mut out = Vec::new();
    let list = ["rebuild"].map(String::from);
    cli.run_with(&list, &mut out).await.expect("list");
    assert!(String::from_utf8_lossy(&out).starts_with("by_customer\t"), "{out:?}");
    let run = ["rebuild", "by_customer", "--endpoint", &endpoint, "--table", db.table_name()]
        .map(String::from);
    cli.run_with(&run, &mut Vec::new()).await.expect("rebuild");
    let totals = assert_recounted(&db, &by_customer()).await;
    assert_eq!(pair(&totals, "ann"), (2, 17));
    Ok(())
}
