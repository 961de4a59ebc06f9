//! Data rules for a table several services write, one section each:
//!
//! - strict reads: an item another service wrote with an attribute the model does not
//!   declare is refused, naming it;
//! - generated ids: orders created with an empty id get a ULID, and the sort key lists them
//!   in creation order;
//! - hooks: a validation refuses an order before anything is sent, and a transformation
//!   after read tidies what other services wrote.
//!
//!     cargo run --example data_rules
//!
//! Runs against the embedded engine; set `DDB_ENDPOINT` to use another endpoint (AWS's
//! DynamoDB Local).

use std::fmt;

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::entity::to_item;
use ddb_model::error::{CorruptReason, HookProblem};
use ddb_model::prelude::*;
use ddb_model::{DefaultTable, local};
use serde::{Deserialize, Serialize};

/// An order: its id generated, its total checked before every write, its note tidied after
/// every read, and any attribute it does not declare refused.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "CUST#<customer>", sk = "ORDER#<id>", strict)]
#[entity(validate = Order::check, after_read = Order::tidy)]
struct Order {
    customer: String,
    #[generated(ulid)]
    id: String,
    total: u32,
    #[serde(default)]
    note: String,
}

/// Why an order is refused.
#[derive(Debug)]
struct EmptyOrder;

impl fmt::Display for EmptyOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an order totals more than 0")
    }
}

impl std::error::Error for EmptyOrder {}

impl Order {
    fn new(customer: &str, total: u32) -> Order {
        Order { customer: customer.into(), id: String::new(), total, note: String::new() }
    }

    fn check(&self) -> Result<(), EmptyOrder> {
        if self.total == 0 { Err(EmptyOrder) } else { Ok(()) }
    }

    fn tidy(&mut self) {
        self.note = self.note.trim().to_owned();
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let db = local::isolated_db::<DefaultTable>().await?;
    generated_ids(&db).await?;
    hooks(&db).await?;
    strict_reads(&db).await?;
    Ok(())
}

/// Orders created one after another, several within a millisecond: their ids sort as they
/// were made, so the sort key range lists them in creation order.
async fn generated_ids(db: &Db) -> Result<(), Error> {
    println!("== generated ids");
    let mut made = Vec::new();
    for total in [30, 10, 20] {
        let mut order = Order::new("ann", total);
        order.create(db).await?;
        println!("created  ORDER#{}  total {}", order.id, order.total);
        made.push(order);
    }
    let listed = Order::query(db, "ann").all().await?;
    assert_eq!(listed, made, "the sort key lists orders in creation order");
    println!("query    {} orders, in creation order", listed.len());
    // A given id is kept.
    let mut given = Order { id: "manual-1".into(), ..Order::new("bob", 5) };
    given.create(db).await?;
    assert_eq!(given.id, "manual-1");
    Ok(())
}

/// The validation refuses an empty order with the user's own error, before any request.
async fn hooks(db: &Db) -> Result<(), Error> {
    println!("== hooks");
    db.reset_requests();
    let err = Order::new("ann", 0).create(db).await.unwrap_err();
    assert!(matches!(err, Error::Hook { problem: HookProblem::Invalid { .. }, .. }));
    assert!(err.validation_error().is_some_and(|e| e.is::<EmptyOrder>()));
    assert_eq!(db.requests().total(), 0);
    println!("refused  {err} (requests sent: {})", db.requests().total());

    // Another service pads notes; reads see them tidied.
    let mut order = Order::new("cy", 12);
    order.generate_ids();
    let mut item = to_item(&order, None)?;
    item.insert("note".into(), AttributeValue::S("  gift wrap  ".into()));
    put_raw(db, item).await;
    let read = Order::get(db, "cy", &order.id).await?.map(|o| o.note);
    assert_eq!(read.as_deref(), Some("gift wrap"));
    println!("read     note {:?}", read.unwrap_or_default());
    Ok(())
}

/// An item another service wrote with an attribute the model does not have is refused,
/// naming it.
async fn strict_reads(db: &Db) -> Result<(), Error> {
    println!("== strict reads");
    let mut order = Order::new("dee", 7);
    order.generate_ids();
    let mut item = to_item(&order, None)?;
    item.insert("couponCode".into(), AttributeValue::S("X-MAS".into()));
    put_raw(db, item).await;
    let err = Order::get(db, "dee", &order.id).await.unwrap_err();
    let Error::CorruptItem { reason: CorruptReason::UnknownAttributes { attributes }, .. } = &err
    else {
        panic!("expected unknown attributes: {err}");
    };
    assert_eq!(attributes, &["couponCode"]);
    println!("refused  {err}");
    Ok(())
}

/// Writes an item as another service would, with the SDK directly.
async fn put_raw(db: &Db, item: ddb_model::Item) {
    let put = db.client().put_item().table_name(db.table_name()).set_item(Some(item));
    put.send().await.expect("a raw put");
}
