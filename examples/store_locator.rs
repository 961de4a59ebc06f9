//! A store locator on a composite sort key: every store of a country sits in one partition,
//! sorted by `<state>#<city>#<zip>`, so one query answers "stores in this country / state /
//! city / zip code", and ranges work on the next level down. Prints each level's results
//! and the requests each query sent.
//!
//!     cargo run --example store_locator
//!
//! Runs against the embedded DynamoDB-compatible engine; set `DDB_ENDPOINT` to use another
//! endpoint (AWS's DynamoDB Local, for example).

use ddb_model::prelude::*;
use ddb_model::{RequestStats, local};
use futures_util::TryStreamExt;
use serde::{Deserialize, Serialize};

/// A store, in its country's partition, sorted by state, city and zip code.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "<country>", sk = "<state>#<city>#<zip>")]
struct Store {
    country: String,
    state: String,
    city: String,
    zip: String,
    address: String,
    square_feet: u32,
}

fn store(country: &str, state: &str, city: &str, zip: &str, address: &str, sq: u32) -> Store {
    Store {
        country: country.into(),
        state: state.into(),
        city: city.into(),
        zip: zip.into(),
        address: address.into(),
        square_feet: sq,
    }
}

fn show<T: Table>(db: &Db<T>, title: &str, before: RequestStats, stores: &[Store]) {
    println!("\n{title}  [{}]", db.requests() - before);
    for s in stores {
        println!(
            "  {:<7} {:<14} {:<12} {:<6} {:<26} {:>5} sq ft",
            s.country, s.state, s.city, s.zip, s.address, s.square_feet
        );
    }
    if stores.is_empty() {
        println!("  (none)");
    }
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let db: Db = local::isolated_db().await?;

    // The four stores of the pattern, and more, among them names that share a prefix with
    // others (NY / NYC, NEWYORK / NEWYORKCITY): a level matches whole components only.
    let stores = [
        store("USA", "NE", "OMAHA", "68118", "#100 St Andrews lane", 921),
        store("USA", "NY", "NEWYORKCITY", "10001", "#675 6th Ave", 1211),
        store("USA", "NY", "NEWYORKCITY", "10019", "1500 Broadway", 1924),
        store("FRANCE", "ILE-DE-FRANCE", "PARIS", "75001", "26 Avenue de I'Opera", 2102),
        store("USA", "NY", "NEWYORK", "10036", "Times Square kiosk", 300),
        store("USA", "NYC", "NEWYORKCITY", "10002", "(a state called NYC)", 450),
        store("USA", "WA", "SEATTLE", "98101", "1st & Pike", 1500),
        store("USA", "WA", "SEATTLE", "98109", "South Lake Union", 1300),
        store("USA", "WA", "SPOKANE", "99201", "Riverside Ave", 800),
    ];
    let before = db.requests();
    for s in &stores {
        s.put(&db).await?;
    }
    println!("wrote {} stores  [{}]", stores.len(), db.requests() - before);

    let before = db.requests();
    let found = Store::query(&db, "USA").all().await?;
    show(&db, "1. country = USA", before, &found);

    let before = db.requests();
    let found = Store::query(&db, "USA").state("NY").all().await?;
    show(&db, "2. country = USA, state = NY (not NYC)", before, &found);

    let before = db.requests();
    let found = Store::query(&db, "USA").state("NY").city("NEWYORKCITY").all().await?;
    show(&db, "3. ... city = NEWYORKCITY (not NEWYORK)", before, &found);

    let before = db.requests();
    let found = Store::query(&db, "USA").state("NY").city("NEWYORKCITY").zip("10019").all().await?;
    show(&db, "4. ... zip = 10019", before, &found);

    let before = db.requests();
    let found = Store::query(&db, "USA").state("WA").city_between("A", "SEATTLE").all().await?;
    show(&db, "range: state = WA, city from A to SEATTLE", before, &found);

    let before = db.requests();
    let found = Store::query(&db, "USA").state("WA").city("SEATTLE").zip_ge("98105").all().await?;
    show(&db, "range: state = WA, city = SEATTLE, zip >= 98105", before, &found);

    // Larger results: a stream across pages (2 stores per request here), and pages behind
    // a cursor that a web client can hold.
    let before = db.requests();
    let streamed: Vec<Store> = Store::query(&db, "USA").page_size(2).stream().try_collect().await?;
    show(&db, "stream of the USA partition, 2 per request", before, &streamed);

    let before = db.requests();
    let first = Store::query(&db, "USA").state_begins_with("N").limit(2).page(None).await?;
    show(&db, "page 1 of states starting with N", before, &first.items);
    if let Some(cursor) = &first.next {
        println!("  next cursor: {cursor}");
        let before = db.requests();
        let second =
            Store::query(&db, "USA").state_begins_with("N").limit(2).page(Some(cursor)).await?;
        show(&db, "page 2 (from the cursor)", before, &second.items);
        let before = db.requests();
        match Store::query(&db, "FRANCE").limit(2).page(Some(cursor)).await {
            Err(e) => {
                println!("\nthe cursor with another partition: {e}  [{}]", db.requests() - before)
            }
            Ok(_) => println!("\nunexpected: a foreign cursor was accepted"),
        }
    }

    let before = db.requests();
    let n = Store::query(&db, "USA").state("WA").count().await?;
    println!("\ncount of stores in WA: {n}  [{}]", db.requests() - before);
    Ok(())
}
