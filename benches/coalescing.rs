//! 64 concurrent gets, and 64 concurrent puts, through a network that adds 2 ms to every
//! request (the `testing` proxy's latency, in front of the embedded engine): ddb-model with
//! coalescing (`with_coalescing`: one `BatchGetItem`; three `BatchWriteItem`s of 25, 25 and
//! 14) against 64 hand-written concurrent `GetItem`s and `PutItem`s with aws-sdk-dynamodb
//! and serde_dynamo.
//!
//!     cargo bench --bench coalescing
//!
//! Under `cargo test --benches` (CI) it checks once that both sides read the same orders and
//! write the same readings, and counts the requests: 1 `BatchGetItem` against 64 `GetItem`s,
//! 3 `BatchWriteItem`s against 64 `PutItem`s.

mod support;

use std::time::Duration;

use criterion::{Criterion, criterion_group};
use ddb_model::aws_sdk_dynamodb::Client;
use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::testing::{Faults, Proxy};
use ddb_model::{Db, Entity, Error, Op, Table, local};
use serde::{Deserialize, Serialize};
use support::{App, DDB, HAND, Order, check_type, hand_keys, order};

const GETS: u64 = 64;
const LATENCY: Duration = Duration::from_millis(2);
const WINDOW: Duration = Duration::from_millis(1);
const GROUPS: [&str; 2] = ["coalescing/64_concurrent_gets", "coalescing/64_concurrent_puts"];

/// A table whose entities are told apart by their keys: a put carries no condition, so
/// concurrent puts may be coalesced (a tagged entity's put is guarded by its type).
#[derive(Table)]
#[table(name = "readings", pk = "pk", sk = "sk", no_type_attr)]
struct Readings;

/// A sensor reading.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Readings, pk = "DEVICE#<device>", sk = "READING#<n>")]
struct Reading {
    device: u32,
    n: u64,
    celsius: f64,
    note: String,
}

fn reading(n: u64) -> Reading {
    Reading { device: 7, n, celsius: 20.0 + (n % 10) as f64 / 4.0, note: format!("probe {n}") }
}

/// 64 `PutItem`s at once, each item serialized and given its keys.
async fn hand_puts(client: &Client, table: &str) {
    let puts = (0..GETS).map(|n| async move {
        let mut item: std::collections::HashMap<String, AttributeValue> =
            serde_dynamo::to_item(reading(n)).expect("an item");
        // The integers at the widths that keep byte order numeric (ddb-model's).
        item.insert("pk".into(), AttributeValue::S(format!("DEVICE#{:010}", 7u32)));
        item.insert("sk".into(), AttributeValue::S(format!("READING#{n:020}")));
        client.put_item().table_name(table).set_item(Some(item)).send().await.expect("put");
    });
    futures_util::future::join_all(puts).await;
}

/// The same 64 puts through ddb-model, concurrently, on a coalescing handle.
async fn ddb_puts(db: &Db<Readings>) {
    let readings: Vec<Reading> = (0..GETS).map(reading).collect();
    let puts = futures_util::future::join_all(readings.iter().map(|r| r.put(db))).await;
    assert!(puts.iter().all(Result::is_ok));
}

/// 64 `GetItem`s at once, each item checked for its entity type and decoded.
async fn hand_gets(client: &Client, table: &str) -> Vec<Option<Order>> {
    let gets = (0..GETS).map(|seq| async move {
        let o = order("ann", seq);
        let (pk, sk) = hand_keys::order("ann", o.year, seq);
        let out = client
            .get_item()
            .table_name(table)
            .key("pk", AttributeValue::S(pk))
            .key("sk", AttributeValue::S(sk))
            .send()
            .await
            .expect("get");
        out.item.map(|mut item| {
            check_type(&item, "Order").expect("an order");
            for attr in ["pk", "sk", "_type"] {
                item.remove(attr);
            }
            serde_dynamo::from_item(item).expect("an order")
        })
    });
    futures_util::future::join_all(gets).await
}

/// The same 64 gets through ddb-model, concurrently, on a coalescing handle.
async fn ddb_gets(db: &Db<App>) -> Vec<Option<Order>> {
    let gets = (0..GETS).map(|seq| {
        let o = order("ann", seq);
        async move { Order::get(db, "ann", o.year, seq).await.expect("get") }
    });
    futures_util::future::join_all(gets).await
}

fn coalescing(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (proxy, direct) = rt
        .block_on(async {
            let direct = local::isolated_db::<App>().await?;
            let orders: Vec<Order> = (0..GETS).map(|i| order("ann", i)).collect();
            direct.batch_put(&orders).await?;
            let proxy = Proxy::start(Faults::seeded(0).latency(LATENCY)).await?;
            Ok::<_, Error>((proxy, direct))
        })
        .expect("populate the table");
    let db = proxy.db(&direct).with_coalescing(WINDOW);
    let (client, table) = (proxy.client(), direct.table_name().to_owned());

    // Both sides read the same orders: 1 request against 64 (the proxy counts both).
    rt.block_on(async {
        let before = proxy.counts().requests;
        let ours = ddb_gets(&db).await;
        assert_eq!(db.requests().get(Op::BatchGetItem), 1);
        assert_eq!(db.requests().get(Op::GetItem), 0);
        assert_eq!(proxy.counts().requests - before, 1);
        assert!(ours.iter().all(Option::is_some));
        let before = proxy.counts().requests;
        assert_eq!(ours, hand_gets(&client, &table).await);
        assert_eq!(proxy.counts().requests - before, GETS);
    });

    let mut g = c.benchmark_group(GROUPS[0]);
    g.sample_size(20);
    g.bench_function(DDB, |b| b.iter(|| rt.block_on(ddb_gets(&db))));
    g.bench_function(HAND, |b| b.iter(|| rt.block_on(hand_gets(&client, &table))));
    g.finish();

    // Puts: both sides write the same items, 3 requests against 64.
    let (writer, written) = rt
        .block_on(async {
            let ours = local::isolated_db::<Readings>().await?;
            let theirs = local::isolated_db::<Readings>().await?;
            Ok::<_, Error>((proxy.db(&ours).with_coalescing(WINDOW), (ours, theirs)))
        })
        .expect("the readings tables");
    let (ours, theirs) = written;
    let their_table = theirs.table_name().to_owned();
    rt.block_on(async {
        let before = proxy.counts().requests;
        ddb_puts(&writer).await;
        assert_eq!(writer.requests().get(Op::BatchWriteItem), 3);
        assert_eq!(writer.requests().get(Op::PutItem), 0);
        assert_eq!(proxy.counts().requests - before, 3);
        let before = proxy.counts().requests;
        hand_puts(&client, &their_table).await;
        assert_eq!(proxy.counts().requests - before, GETS);
        let stored = |db: Db<Readings>| async move {
            let mut all = db.scan::<Reading>().consistent().all().await.expect("scan");
            all.sort_by_key(|r| r.n);
            all
        };
        let mine = stored(ours).await;
        assert_eq!(mine.len(), 64);
        assert_eq!(mine, stored(theirs).await);
    });

    let mut g = c.benchmark_group(GROUPS[1]);
    g.sample_size(20);
    g.bench_function(DDB, |b| b.iter(|| rt.block_on(ddb_puts(&writer))));
    g.bench_function(HAND, |b| b.iter(|| rt.block_on(hand_puts(&client, &their_table))));
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8));
    targets = coalescing
}

fn main() {
    let started = std::time::SystemTime::now();
    benches();
    Criterion::default().configure_from_args().final_summary();
    support::print_ratios(started, &GROUPS);
}
