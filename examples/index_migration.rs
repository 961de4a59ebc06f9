//! From a concatenated index key to a multi-attribute one, on a live table.
//!
//! Before: tickets are listed by tenant and status, by priority then creation date, through
//! `gsi1`, whose keys the entity writes as strings (`TENANT#acme#open`,
//! `0000000009#2026-01-02`): every item carries two synthetic attributes, copies of its
//! fields, and other code reading the table must know the encoding. After: the index
//! `by_status` is keyed by the fields themselves (`tenant`, `status`; `priority` as a
//! number, `created`), so nothing is copied and the index reads as the data. The steps:
//!
//! 1. add the new index alongside the old one (`sync_table` of the table declaring both sends
//!    the `UpdateTable`): the fields are stored already, so the service fills it from the
//!    existing items;
//! 2. switch the queries (and the writers) to the entity declaring the new index;
//! 3. rewrite the items without the synthetic attributes (here a scan and a `put` each; on a
//!    table that takes writes meanwhile, give the entity a `version` field so a rewrite never
//!    overwrites a newer write), then drop the old index (`sync_table` of the final
//!    declaration, asked to delete the indexes it does not declare).
//!
//!     cargo run --example index_migration
//!
//! Runs against the embedded DynamoDB-compatible engine; set `DDB_ENDPOINT` to use another
//! endpoint (AWS's DynamoDB Local, for example).

use ddb_model::local;
use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};

/// The table as it was: one index keyed by two string attributes.
#[derive(Table)]
#[table(name = "helpdesk", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct Before;

/// The table during the migration: both indexes.
#[derive(Table)]
#[table(
    name = "helpdesk",
    gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
    gsi(name = "by_status", pk = ["tenant", "status"], sk = ["priority": N, "created"])
)]
struct During;

/// The table after it: the multi-attribute index only.
#[derive(Table)]
#[table(
    name = "helpdesk",
    gsi(name = "by_status", pk = ["tenant", "status"], sk = ["priority": N, "created"])
)]
struct After;

/// The ticket as it was written: its index key concatenated into strings.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Before, name = "Ticket", pk = "TICKET#<id>", sk = "TICKET")]
#[index(gsi1, pk = "TENANT#<tenant>#<status>", sk = "<priority>#<created>")]
struct OldTicket {
    id: String,
    tenant: String,
    status: String,
    priority: u32,
    created: String,
}

/// The ticket with the multi-attribute index (on the table with both indexes, then on the
/// final one: the same fields, so the same items).
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = During, name = "Ticket", pk = "TICKET#<id>", sk = "TICKET")]
#[index(by_status, pk = [tenant, status], sk = [priority, created])]
struct Ticket {
    id: String,
    tenant: String,
    status: String,
    priority: u32,
    created: String,
}

/// The same ticket on the final table.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = After, name = "Ticket", pk = "TICKET#<id>", sk = "TICKET")]
#[index(by_status, pk = [tenant, status], sk = [priority, created])]
struct FinalTicket {
    id: String,
    tenant: String,
    status: String,
    priority: u32,
    created: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let before: Db<Before> = local::isolated_db().await?;
    let name = before.table_name().to_owned();
    for (id, priority, created) in
        [("a", 9, "2026-01-02"), ("b", 10, "2026-01-01"), ("c", 2, "2026-01-03")]
    {
        let t = OldTicket {
            id: id.into(),
            tenant: "acme".into(),
            status: "open".into(),
            priority,
            created: created.into(),
        };
        t.create(&before).await?;
    }
    let old: Vec<(String, u32)> = OldTicket::query_gsi1(&before, "acme", "open")
        .all()
        .await?
        .into_iter()
        .map(|t| (t.id, t.priority))
        .collect();
    println!("before, gsi1 (keys written from templates): {old:?}");

    // Step 1: add `by_status` alongside `gsi1`: the table as `During` declares it. The
    // sync reports the missing index, then creates it (one `UpdateTable`) and waits until it
    // is active; the service fills it from the existing items.
    let during: Db<During> = Db::with_table_name(before.client().clone(), name.clone());
    println!("{}", during.sync_table().await?);
    during.sync_table().apply().await?;

    // Step 2: the queries use the new index; it holds the items written before.
    let new: Vec<(String, u32)> = Ticket::query_by_status(&during, "acme", "open")
        .all()
        .await?
        .into_iter()
        .map(|t| (t.id, t.priority))
        .collect();
    println!("step 2, by_status (the fields themselves): {new:?}");
    let urgent = Ticket::query_by_status(&during, "acme", "open").priority_ge(9).count().await?;
    println!("step 2, priority >= 9: {urgent} tickets");

    // Step 3: rewrite the items without `gsi1pk` / `gsi1sk`, then drop `gsi1`.
    let tickets: Vec<Ticket> = during.scan::<Ticket>().all().await?;
    for t in &tickets {
        t.put(&during).await?;
    }
    let left = OldTicket::query_gsi1(&before, "acme", "open").all().await?.len();
    println!("step 3, rewrote {} tickets; gsi1 now holds {left}", tickets.len());
    // `gsi1` is not declared by `After`: a sync reports it and keeps it, unless asked.
    let after: Db<After> = Db::with_table_name(before.client().clone(), name);
    after.sync_table().delete_undeclared_indexes(true).apply().await?;
    assert!(after.sync_table().await?.is_empty());
    let last = FinalTicket::query_by_status(&after, "acme", "open").priority(10).all().await?;
    println!(
        "after, by_status priority = 10: {:?}",
        last.iter().map(|t| &t.id).collect::<Vec<_>>()
    );
    Ok(())
}
