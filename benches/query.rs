//! A query of 1,000 items through the embedded engine, end to end (request building, HTTP,
//! the engine, response parsing, item conversion), ddb-model against the hand-written
//! aws-sdk-dynamodb + serde_dynamo loop over pages.
//!
//!     cargo bench --bench query

mod support;

use std::time::Duration;

use criterion::{Criterion, criterion_group};
use ddb_model::aws_sdk_dynamodb::Client;
use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::{Db, Error, Item, Op, local};
use support::{App, DDB, HAND, Order, check_type, order};

const ITEMS: u64 = 1_000;
const GROUPS: [&str; 1] = ["query/1000_items"];

/// The hand-written query: the same key condition and entity-type filter as ddb-model's,
/// every page, the key attributes stripped, each item through serde_dynamo.
async fn hand_query(client: &Client, table: &str, user: &str) -> Vec<Order> {
    let mut out = Vec::new();
    let mut start: Option<Item> = None;
    loop {
        let page = client
            .query()
            .table_name(table)
            .key_condition_expression("#pk = :pk AND begins_with(#sk, :sk)")
            .filter_expression("#type = :type")
            .expression_attribute_names("#pk", "pk")
            .expression_attribute_names("#sk", "sk")
            .expression_attribute_names("#type", "_type")
            .expression_attribute_values(":pk", AttributeValue::S(format!("USER#{user}")))
            .expression_attribute_values(":sk", AttributeValue::S("ORDER#".into()))
            .expression_attribute_values(":type", AttributeValue::S("Order".into()))
            .set_exclusive_start_key(start)
            .send()
            .await
            .expect("query");
        for mut item in page.items.unwrap_or_default() {
            check_type(&item, "Order").expect("an order");
            for attr in ["pk", "sk", "_type"] {
                item.remove(attr);
            }
            out.push(serde_dynamo::from_item(item).expect("an order"));
        }
        start = page.last_evaluated_key;
        if start.is_none() {
            return out;
        }
    }
}

fn query(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let db: Db<App> = rt
        .block_on(async {
            let db = local::isolated_db::<App>().await?;
            let orders: Vec<Order> = (0..ITEMS).map(|i| order("ann", i)).collect();
            db.batch_put(&orders).await?;
            Ok::<_, Error>(db)
        })
        .expect("populate the table");
    let (client, table) = (db.client().clone(), db.table_name().to_owned());

    // Both sides read the same orders, in one request each.
    rt.block_on(async {
        db.reset_requests();
        let ours = Order::query(&db, "ann").all().await.expect("query");
        assert_eq!(db.requests().get(Op::Query), 1);
        assert_eq!(ours.len() as u64, ITEMS);
        assert_eq!(ours, hand_query(&client, &table, "ann").await);
    });

    let mut g = c.benchmark_group(GROUPS[0]);
    g.sample_size(20);
    g.bench_function(DDB, |b| {
        b.iter(|| rt.block_on(async { Order::query(&db, "ann").all().await.expect("query") }))
    });
    g.bench_function(HAND, |b| b.iter(|| rt.block_on(hand_query(&client, &table, "ann"))));
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8));
    targets = query
}

fn main() {
    let started = std::time::SystemTime::now();
    benches();
    Criterion::default().configure_from_args().final_summary();
    support::print_ratios(started, &GROUPS);
}
