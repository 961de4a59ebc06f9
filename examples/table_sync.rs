//! Keeping a live table's settings in sync with the code that declares it.
//!
//! The table was deployed long ago with one index and no settings. The code now declares a
//! second index and Time to Live (`#[table(..)]`), and the operations settings are declared
//! beside it in a `TableOptions`: deletion protection, a stream for a processor, tags for the
//! bill. `sync_table` compares the two and prints what differs; `apply` sends the changes in
//! an order the service accepts (one `UpdateTable` at a time, waiting until the table is
//! active between them); a second sync finds nothing.
//!
//!     cargo run --example table_sync
//!
//! Runs against the embedded DynamoDB-compatible engine; set `DDB_ENDPOINT` to use another
//! endpoint (AWS's DynamoDB Local, for example). Point-in-time recovery and resource
//! policies are left out here: neither the embedded engine nor DynamoDB Local has them, and
//! asking for them there is `Error::Unsupported`. DynamoDB Local has no tags either (there the
//! example says so and syncs without them), and can leave an index added to a live table in
//! `CREATING`, so CI runs this example on the embedded engine only.

use ddb_model::local;
use ddb_model::ops::{TableOptions, ViewType};
use ddb_model::prelude::*;

/// The table as it was deployed.
#[derive(Table)]
#[table(name = "shop", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct Deployed;

/// The table as the code declares it now.
#[derive(Table)]
#[table(
    name = "shop",
    gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
    gsi(name = "gsi2", pk = "gsi2pk", sk = "gsi2sk"),
    ttl = "expires"
)]
struct Shop;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let deployed: Db<Deployed> = local::isolated_db().await?;
    let db: Db<Shop> = Db::with_table_name(deployed.client().clone(), deployed.table_name());

    let settings =
        TableOptions::default().deletion_protection(true).stream(ViewType::NewAndOldImages);
    let tagged = settings.clone().tag("team", "shop").tag("cost-center", "4711");

    // The report: what differs, and the request that would change it.
    let (options, diff) = match db.sync_table().options(tagged.clone()).await {
        Ok(diff) => (tagged, diff),
        Err(e) if e.is_unsupported() => {
            println!("{e}: syncing without tags");
            (settings.clone(), db.sync_table().options(settings).await?)
        }
        Err(e) => return Err(e.into()),
    };
    print!("{diff}");
    // gsi2, Time to Live, deletion protection, the stream (and the two tags).
    assert_eq!(diff.changes.len(), 4 + options.tags.as_ref().map_or(0, |t| t.len()));

    // Applied, then checked again: nothing left.
    db.reset_requests();
    db.sync_table().options(options.clone()).apply().await?;
    println!("applied with {} requests", db.requests().total());
    let again = db.sync_table().options(options).await?;
    print!("{again}");
    assert!(again.is_empty());

    // The same report as JSON, for a pipeline that gates a deploy on it.
    println!("{}", serde_json::to_string(&diff)?);

    db.sync_table().deletion_protection(false).apply().await?;
    db.delete_table().await?;
    Ok(())
}
