//! A DynamoDB Streams consumer: a Lambda-style handler that reads the table's stream records as
//! entity changes (a welcome mail for each new user, an audit line for each changed order
//! total), skips the library's own bookkeeping items and reports what it does not know.
//!
//!     cargo run --example streams
//!
//! The sample event is built from real writes: the example enables the stream of a table,
//! writes users, orders and a tree through the library, reads the records with the streams API
//! (`GetRecords`, feature `streams-sdk`) and writes them as the JSON event Lambda delivers,
//! which the handler then reads back. Runs against the embedded engine; set `DDB_ENDPOINT` to
//! use another endpoint (AWS's DynamoDB Local serves streams too).

use std::collections::HashMap;

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::aws_sdk_dynamodbstreams::types::ShardIteratorType;
use ddb_model::prelude::*;
use ddb_model::stream::{EventKind, Image, StreamEvent, StreamRecord, UnknownReason};
use ddb_model::{Collection, local};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "shop", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct Shop;

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Shop, pk = "USER#<id>", sk = "PROFILE")]
struct User {
    id: String,
    email: String,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Shop, pk = "USER#<user>", sk = "ORDER#<seq>")]
struct Order {
    user: String,
    seq: u32,
    total: u64,
}

/// Product categories: a tree, whose bookkeeping items (copies, intent records) are in the
/// stream too.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Shop, pk = "CATALOG#<catalog>", sk = "CAT#<id>")]
#[hierarchy(strategy = closure, parent = parent)]
struct Category {
    catalog: String,
    id: String,
    parent: Option<String>,
}

/// The entities the consumer cares about: the same enum a query of an item collection uses.
#[derive(Collection, Debug)]
enum ShopChange {
    User(User),
    Order(Order),
    Category(Category),
}

/// What the handler did with one event.
#[derive(Debug, Default)]
struct Handled {
    mails: Vec<String>,
    audit: Vec<String>,
    skipped_bookkeeping: usize,
    unknown: Vec<String>,
}

/// The Lambda handler: one event in, the work done out. Never fails on an item: an item that
/// is not one of `ShopChange`'s entities is reported, and a record that no stream writes is
/// reported with its id (a real handler would return it as a batch item failure).
fn handle(event: &StreamEvent) -> Handled {
    let mut out = Handled::default();
    for (record, change) in event.records.iter().zip(event.decode::<ShopChange>()) {
        let change = match change {
            Ok(change) => change,
            Err(e) => {
                out.unknown.push(format!("record {:?}: {e}", record.event_id));
                continue;
            }
        };
        if change.is_bookkeeping_only() {
            out.skipped_bookkeeping += 1;
            continue;
        }
        match (change.kind, change.old_entity(), change.new_entity()) {
            (EventKind::Insert, _, Some(ShopChange::User(u))) => {
                out.mails.push(format!("welcome mail to {}", u.email))
            }
            (EventKind::Modify, Some(ShopChange::Order(old)), Some(ShopChange::Order(new)))
                if old.total != new.total =>
            {
                out.audit.push(format!(
                    "order {}/{}: total {} -> {}",
                    new.user, new.seq, old.total, new.total
                ))
            }
            (EventKind::Insert, _, Some(ShopChange::Category(c))) => {
                out.audit.push(format!("new category {} in {}", c.id, c.catalog))
            }
            (EventKind::Remove, Some(ShopChange::Order(old)), None) => {
                out.audit.push(format!("order {}/{} cancelled", old.user, old.seq))
            }
            _ => {}
        }
        for image in [&change.old, &change.new].into_iter().flatten() {
            if let Image::Unknown(unknown) = image {
                match &unknown.reason {
                    UnknownReason::Bookkeeping { .. } => out.skipped_bookkeeping += 1,
                    reason => out.unknown.push(format!("{}: {reason:?}", change.key_display())),
                }
            }
        }
    }
    out
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let db = local::isolated_db::<Shop>().await?;
    db.sync_table().stream(ddb_model::ops::ViewType::NewAndOldImages).apply().await?;

    // The writes whose records make the sample event.
    User { id: "ann".into(), email: "ann@example.com".into() }.create(&db).await?;
    Order { user: "ann".into(), seq: 1, total: 250 }.put(&db).await?;
    Order::update(&db, "ann", 1u32).set(Order::TOTAL, 300).no_return().await?;
    Order { user: "ann".into(), seq: 2, total: 40 }.put(&db).await?;
    Order::delete(&db, "ann", 2u32).await?;
    let tree = Category::tree(&db, "main");
    tree.insert(&Category { catalog: "main".into(), id: "books".into(), parent: None }).await?;
    // Another program's item in the same table.
    let mut foreign = HashMap::new();
    foreign.insert("pk".to_owned(), AttributeValue::S("LEGACY#1".into()));
    foreign.insert("sk".to_owned(), AttributeValue::S("ROW".into()));
    db.client().put_item().table_name(db.table_name()).set_item(Some(foreign)).send().await?;

    // The records, as the streams API returns them.
    let streams = local::streams_client_for(&local::endpoint()?);
    let listed = streams.list_streams().table_name(db.table_name()).send().await?;
    let arn = listed.streams().first().and_then(|s| s.stream_arn()).ok_or("no stream")?;
    let described = streams.describe_stream().stream_arn(arn).send().await?;
    let mut records = Vec::new();
    for shard in described.stream_description().map(|d| d.shards()).unwrap_or_default() {
        let mut iterator = streams
            .get_shard_iterator()
            .stream_arn(arn)
            .shard_id(shard.shard_id().unwrap_or_default())
            .shard_iterator_type(ShardIteratorType::TrimHorizon)
            .send()
            .await?
            .shard_iterator;
        while let Some(it) = iterator {
            let page = streams.get_records().shard_iterator(it).send().await?;
            if page.records().is_empty() {
                break;
            }
            for record in page.records() {
                records.push(StreamRecord::try_from(record.clone())?);
            }
            iterator = page.next_shard_iterator;
        }
    }

    // The same records as the JSON event Lambda delivers, and read back from it.
    let json = serde_json::to_string_pretty(&StreamEvent { records })?;
    println!("The first record of the event Lambda would deliver:");
    let first_record: String = json.lines().take(24).collect::<Vec<_>>().join("\n");
    println!("{first_record}\n  ...\n");
    let event: StreamEvent = serde_json::from_str(&json)?;

    let handled = handle(&event);
    println!("{} records", event.records.len());
    for mail in &handled.mails {
        println!("  {mail}");
    }
    for line in &handled.audit {
        println!("  {line}");
    }
    println!("  {} bookkeeping images skipped", handled.skipped_bookkeeping);
    for unknown in &handled.unknown {
        println!("  not ours: {unknown}");
    }
    assert_eq!(handled.mails, ["welcome mail to ann@example.com"]);
    assert_eq!(
        handled.audit,
        ["order ann/1: total 250 -> 300", "order ann/2 cancelled", "new category books in main"]
    );
    assert_eq!(handled.unknown.len(), 1);
    Ok(())
}
