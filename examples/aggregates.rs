//! Aggregates kept from the table's stream, exactly once: orders per customer and their total
//! amount, maintained by a stream processor that reads the streams API from a checkpoint per
//! shard, then checked against a recount by scan; and a denormalised copy, each customer's
//! name kept on their invoices, repaired when an invoice is written with a stale name.
//!
//!     cargo run --example aggregates
//!
//! The example enables the stream of a table, writes orders through the library (new orders,
//! a changed amount, an order moved to another customer, a cancelled and a deleted one), runs
//! the processor twice (the second run, a restart, resumes after its checkpoints), applies a
//! Lambda-style batch delivered twice, and prints the totals. Then it renames a customer, writes
//! an invoice with the name its writer read before the rename, and drains the stream until no
//! invoice holds an old name. Runs against the embedded
//! engine; set `DDB_ENDPOINT` to use another endpoint (AWS's DynamoDB Local serves streams
//! too).

use ddb_model::prelude::*;
use ddb_model::stream::ViewType;
use ddb_model::stream::aggregate::{Aggregate, CopyProcessor, FieldCopy, Processor};
use ddb_model::{DefaultTable, local};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "ORDER#<id>", sk = "ORDER")]
struct Order {
    id: u32,
    customer: String,
    amount: i64,
    cancelled: bool,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "CUSTOMER#<id>", sk = "PROFILE")]
struct Customer {
    id: String,
    name: String,
}

/// In the customer's partition, with a copy of the customer's name.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "CUSTOMER#<customer>", sk = "INVOICE#<seq>")]
struct Invoice {
    customer: String,
    seq: u32,
    customer_name: String,
}

fn order(id: u32, customer: &str, amount: i64) -> Order {
    Order { id, customer: customer.into(), amount, cancelled: false }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let db = local::isolated_db::<DefaultTable>().await?;
    db.sync_table().stream(ViewType::NewAndOldImages).apply().await?;

    // The declaration: cancelled orders belong to no group, so they are not counted.
    let by_customer = Aggregate::new("orders_by_customer", |o: &Order| {
        (!o.cancelled).then(|| o.customer.clone())
    })
    .count("orders")
    .sum("amount", |o: &Order| o.amount);

    for (id, customer, amount) in [(1, "ann", 120), (2, "ann", 80), (3, "bob", 45), (4, "cy", 10)] {
        order(id, customer, amount).create(&db).await?;
    }
    Order::update(&db, 1).set(Order::AMOUNT, 150).await?;
    Order::update(&db, 2).set(Order::CUSTOMER, "bob".to_owned()).await?;
    Order::update(&db, 4).set(Order::CANCELLED, true).await?;
    order(5, "cy", 99).create(&db).await?;
    Order::delete(&db, 5).await?;

    // The processor reads the stream with the streams API, shard by shard.
    let streams = local::streams_client_for(&local::endpoint()?);
    let listed = streams.list_streams().table_name(db.table_name()).send().await?;
    let arn = listed.streams().first().and_then(|s| s.stream_arn()).ok_or("no stream")?;
    let processor = Processor::new(&db, &by_customer, ViewType::NewAndOldImages)?;
    let first = processor.drain(&streams, arn).await?;
    println!(
        "first run: {} records in {} shard(s), {} orders applied",
        first.records, first.shards, first.applied.applied
    );

    // A restarted processor resumes after its checkpoints: only its own writes are new, and
    // they are the library's bookkeeping, never counted.
    order(6, "dee", 30).create(&db).await?;
    let restarted = Processor::new(&db, &by_customer, ViewType::NewAndOldImages)?;
    let second = restarted.drain(&streams, arn).await?;
    println!(
        "after a restart: {} records read, {} applied, {} of other items ignored",
        second.records, second.applied.applied, second.applied.ignored
    );
    assert_eq!(second.applied.applied, 1);

    // Exactly once: the totals equal a recount of the orders by scan.
    let totals = by_customer.totals(&db).await?;
    for (customer, t) in &totals {
        println!(
            "  {customer}: {} orders, {} in all",
            t.get("orders").unwrap_or(0),
            t.get("amount").unwrap_or(0)
        );
    }
    assert_eq!(totals, by_customer.recount(&db).await?, "the totals are a recount");
    let bob = by_customer.get(&db, "bob").await?;
    assert_eq!((bob.get("orders"), bob.get("amount")), (Some(2), Some(125)));
    assert!(!totals.contains_key("cy"), "cy's orders were cancelled or deleted");
    println!("the totals equal a recount by scan");

    // A denormalised copy: each customer's name on their invoices.
    let names = FieldCopy::new(
        "invoice_names",
        |c: &Customer| c.name.clone(),
        Invoice::CUSTOMER_NAME,
        |db, c: &Customer| Invoice::partition(db, &c.id),
        |i: &Invoice| Some(Customer::key(&i.customer)),
    );
    let copier = CopyProcessor::new(&db, &names, ViewType::NewAndOldImages)?;
    Customer { id: "ann".into(), name: "Ann".into() }.create(&db).await?;
    let invoice =
        |seq, name: &str| Invoice { customer: "ann".into(), seq, customer_name: name.into() };
    invoice(1, "Ann").create(&db).await?;
    copier.drain(&streams, arn).await?;
    // A writer reads the name, the customer is renamed and the rename copied, then the writer
    // writes its invoice with the name it read.
    let read = Customer::get(&db, "ann").await?.ok_or("ann")?.name;
    Customer::update(&db, "ann").set(Customer::NAME, "Ann Smith".to_owned()).await?;
    let renamed = copier.drain(&streams, arn).await?;
    invoice(2, &read).create(&db).await?;
    println!(
        "the rename copied to {} invoice(s); invoice 2 written with {read:?}",
        renamed.applied.targets_written
    );
    // Until a drain writes nothing (its own writes are records too): the stale invoice is
    // repaired by the first.
    let mut repaired = 0;
    for _ in 0..5 {
        match copier.drain(&streams, arn).await?.applied.targets_written {
            0 => break,
            n => repaired += n,
        }
    }
    assert_eq!(repaired, 1);
    for i in Invoice::partition(&db, "ann").consistent().all().await? {
        println!("  invoice {}: {}", i.seq, i.customer_name);
        assert_eq!(i.customer_name, "Ann Smith");
    }
    assert!(names.stale(&db).await?.is_empty());
    println!("no invoice holds an old name");
    Ok(())
}
