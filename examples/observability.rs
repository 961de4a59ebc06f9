//! Observability: every request as a `tracing` span with OpenTelemetry's DynamoDB fields,
//! multi-request operations (a query's pages, a batch's chunks) as a span around their
//! requests, and `Db::stats()` broken down per operation and per table/index.
//!
//!     cargo run --example observability
//!
//! Needs the feature `tracing` of ddb-model (the examples enable it). Prints each span as it
//! closes, with `tracing-subscriber`'s formatter; an OpenTelemetry exporter
//! (`tracing-opentelemetry`) reads the same fields: `otel.name`, `otel.kind`,
//! `db.system.name`, `aws.dynamodb.*`. Runs against the embedded engine, or `DDB_ENDPOINT`.

use ddb_model::prelude::*;
use ddb_model::{Op, local};
use serde::{Deserialize, Serialize};
use tracing_subscriber::fmt::format::FmtSpan;

#[derive(Table)]
#[table(name = "shop", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct Shop;

/// An order, listed per customer in the table and per day on gsi1.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Shop, pk = "CUSTOMER#<customer>", sk = "ORDER#<id>")]
#[index(gsi1, pk = "DAY#<day>", sk = "ORDER#<id>")]
struct Order {
    customer: String,
    id: u32,
    day: String,
    total: u64,
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    // Capacity reports are opt-in: they make each response a little longer.
    let db: Db<Shop> = local::isolated_db().await?.with_capacity(true);
    db.reset_requests();

    tracing_subscriber::fmt()
        .with_span_events(FmtSpan::CLOSE)
        .with_target(false)
        .without_time()
        .with_ansi(false)
        .init();

    println!("1. One put: one span, closed when the answer arrives");
    Order { customer: "ann".into(), id: 1, day: "2026-11-27".into(), total: 1200 }.put(&db).await?;

    println!("\n2. A batch of 40 orders: the batch's span around its two BatchWriteItem chunks");
    let orders: Vec<Order> = (2..42)
        .map(|id| Order {
            customer: ["ann", "bob", "cy"][id as usize % 3].into(),
            id,
            day: format!("2026-11-{}", 26 + id % 2),
            total: u64::from(id) * 100,
        })
        .collect();
    db.batch_put(&orders).await?;

    println!("\n3. A query on gsi1 with pages of 8: the query's span around its pages");
    let day: Vec<Order> = Order::query_gsi1(&db, "2026-11-27").page_size(8).all().await?;
    println!("   {} orders on 2026-11-27", day.len());

    println!("\n4. A refused create: the span records the error code");
    let again = Order { customer: "ann".into(), id: 1, day: "2026-11-27".into(), total: 0 };
    let err = again.create(&db).await.unwrap_err();
    println!("   {err}");

    let stats = db.stats();
    println!("\n5. db.stats(): per operation and per table/index\n");
    println!("{stats}");
    assert_eq!(stats.op(Op::BatchWriteItem).calls, 2);
    assert_eq!(stats.target(Some("gsi1")).map(|t| t.items_read), Some(day.len() as u64));
    Ok(())
}
