//! 64 concurrent gets through a network that adds 2 ms to every request (the `testing`
//! proxy's latency, in front of the embedded engine): ddb-model with coalescing
//! (`with_coalescing`, one `BatchGetItem`) against 64 hand-written concurrent `GetItem`s with
//! aws-sdk-dynamodb and serde_dynamo.
//!
//!     cargo bench --bench coalescing
//!
//! Under `cargo test --benches` (CI) it checks once that both sides read the same orders and
//! counts the requests: 1 `BatchGetItem` against 64 `GetItem`s.

mod support;

use std::time::Duration;

use criterion::{Criterion, criterion_group};
use ddb_model::aws_sdk_dynamodb::Client;
use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::testing::{Faults, Proxy};
use ddb_model::{Db, Error, Op, local};
use support::{App, DDB, HAND, Order, check_type, hand_keys, order};

const GETS: u64 = 64;
const LATENCY: Duration = Duration::from_millis(2);
const WINDOW: Duration = Duration::from_millis(1);
const GROUPS: [&str; 1] = ["coalescing/64_concurrent_gets"];

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
