//! Lifecycle attributes and table settings, one section each:
//!
//! - timestamps: `created_at` / `updated_at` set by every write from the handle's clock (a
//!   clock the example steps by hand, as tests do);
//! - expiry (Time to Live): a session stored with its expiry in seconds, hidden from reads
//!   once past although the service has not deleted it yet;
//! - table options: deletion protection, warm throughput and an on-demand maximum, set when
//!   `create_table` creates the table, and what the backend reports back.
//!
//!     cargo run --example lifecycle
//!
//! Runs against the embedded engine; set `DDB_ENDPOINT` to use another endpoint (AWS's
//! DynamoDB Local).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ddb_model::prelude::*;
use ddb_model::{
    local,
    ops::{OnDemandMax, WarmThroughput},
};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "lifecycle", ttl = "expires", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct App;

/// A document with both timestamps, in milliseconds since the epoch.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = App, pk = "DOC#<id>", sk = "DOC", created_at = created, updated_at = updated)]
struct Doc {
    id: String,
    title: String,
    created: u64,
    updated: u64,
}

/// A login session that expires.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = App, pk = "USER#<user>", sk = "SESSION#<id>", ttl = expires)]
struct Session {
    user: String,
    id: String,
    expires: SystemTime,
}

/// A clock the example moves by hand: seconds since the epoch.
#[derive(Clone)]
struct Clock(Arc<AtomicU64>);

impl Clock {
    fn now(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(self.0.load(Ordering::SeqCst))
    }
    fn advance(&self, by: Duration) {
        self.0.fetch_add(by.as_secs(), Ordering::SeqCst);
    }
}

fn iso(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    ddb_model::chrono::DateTime::from_timestamp(i64::try_from(secs).unwrap_or(0), 0)
        .map_or_else(|| secs.to_string(), |d| d.to_rfc3339())
}

fn iso_ms(ms: u64) -> String {
    iso(UNIX_EPOCH + Duration::from_millis(ms))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 2030-01-01T00:00:00Z: in the future, so no backend deletes the example's items.
    let clock = Clock(Arc::new(AtomicU64::new(1_893_456_000)));
    let tick = clock.clone();
    let db = local::isolated_db::<App>().await?.with_clock(move || tick.now());

    timestamps(&db, &clock).await?;
    expiry(&db, &clock).await?;
    table_options().await?;
    Ok(())
}

/// `created_at` is set when the item is created and kept; `updated_at` by every write, in
/// the write's own request.
async fn timestamps(db: &Db<App>, clock: &Clock) -> Result<(), Error> {
    println!("== timestamps");
    let mut doc = Doc { id: "spec".into(), title: "Draft".into(), created: 0, updated: 0 };
    doc.create(db).await?;
    println!(
        "created  {:<28} created={} updated={}",
        doc.title,
        iso_ms(doc.created),
        iso_ms(doc.updated)
    );

    clock.advance(Duration::from_secs(3600));
    db.reset_requests();
    let doc = Doc::update(db, "spec").set(Doc::TITLE, "Final").await?;
    println!(
        "updated  {:<28} created={} updated={}",
        doc.title,
        iso_ms(doc.created),
        iso_ms(doc.updated)
    );
    println!("requests for the update: {} (the time travels in it)", db.requests().total());
    Ok(())
}

/// A session expiring in 30 minutes: read while valid, hidden once past (the service deletes
/// it within days), still there for a read that asks for expired items.
async fn expiry(db: &Db<App>, clock: &Clock) -> Result<(), Error> {
    println!("\n== expiry (Time to Live)");
    let expires = clock.now() + Duration::from_secs(30 * 60);
    Session { user: "ann".into(), id: "s1".into(), expires }.put(db).await?;
    Session { user: "ann".into(), id: "s2".into(), expires: expires + Duration::from_secs(86_400) }
        .put(db)
        .await?;
    println!(
        "s1 expires {} (stored as seconds: the attribute the table's TTL reads)",
        iso(expires)
    );

    let live = Session::get(db, "ann", "s1").await?.is_some();
    println!(
        "now {}: s1 readable = {live}, sessions = {}",
        iso(clock.now()),
        Session::query(db, "ann").count().await?
    );

    clock.advance(Duration::from_secs(31 * 60));
    let live = Session::get(db, "ann", "s1").await?.is_some();
    let kept = Session::get(db, "ann", "s1").include_expired().await?.is_some();
    println!(
        "now {}: s1 readable = {live}, stored until the service deletes it = {kept}, sessions = {}",
        iso(clock.now()),
        Session::query(db, "ann").count().await?
    );

    // Extending a session is a typed update of the field; it stores seconds again.
    let later = clock.now() + Duration::from_secs(3600);
    Session::update(db, "ann", "s1").set(Session::EXPIRES, later).await?;
    println!(
        "s1 extended to {}: readable = {}",
        iso(later),
        Session::get(db, "ann", "s1").await?.is_some()
    );
    Ok(())
}

/// Options `create_table` sets on a table it creates, and what the backend reports back.
async fn table_options() -> Result<(), Box<dyn std::error::Error>> {
    println!("\n== table options");
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let name = format!("lifecycle-options-{}-{nanos}", std::process::id());
    let db: Db<App> = Db::with_table_name(local::client()?, name.clone());

    // Below the service's minimum: refused before anything is sent.
    let err = db.create_table().warm_throughput(WarmThroughput::new(1_000, 1_000)).await;
    if let Err(err) = err {
        println!("refused: {err}");
    }

    db.create_table()
        .deletion_protection(true)
        .warm_throughput(WarmThroughput::new(20_000, 8_000))
        .max_on_demand(OnDemandMax::new(500, 100))
        .index_max_on_demand("gsi1", OnDemandMax::new(200, 50))
        .await?;
    let described = db.client().describe_table().table_name(&name).send().await?;
    if let Some(table) = described.table() {
        println!("deletion protection: {:?}", table.deletion_protection_enabled());
        println!("on-demand maximum:   {:?}", table.on_demand_throughput());
        println!("warm throughput:     {:?} (emulators report none)", table.warm_throughput());
    }
    match db.delete_table().await {
        Ok(()) => println!("deleted (protection not kept by this backend)"),
        Err(err) => println!("delete refused: {err}"),
    }
    // Turn protection off, then the table can go.
    db.client().update_table().table_name(&name).deletion_protection_enabled(false).send().await?;
    db.delete_table().await?;
    println!("protection off, table deleted");
    Ok(())
}
