//! Schema versions: a table whose items an older release wrote (version 1, no schema
//! attribute), read by the new release's entity (version 2) through its upgrade function,
//! then rewritten in place by the migration, with a progress bar, first through the library
//! (`Db::migrate`) and then through the command-line tool's ready-made migration.
//!
//!     cargo run --example schema_versions
//!
//! Runs against the embedded DynamoDB-compatible engine; set `DDB_ENDPOINT` to use another
//! endpoint (DynamoDB Local).

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::prelude::*;
use ddb_model::tooling::TableModel;
use ddb_model::tooling::cli::{Cli, SchemaMigration};
use ddb_model::{Item, error::UpgradeError, local};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "crm")]
struct Crm;

/// What release 1 stored: one `name`.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Crm, pk = "ACCOUNT#<account>", sk = "CONTACT#<id>", name = "Contact")]
struct ContactV1 {
    account: String,
    id: String,
    name: String,
}

/// Release 2: the name split in two, a list of phone numbers (empty for old contacts).
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(
    table = Crm,
    pk = "ACCOUNT#<account>",
    sk = "CONTACT#<id>",
    name = "Contact",
    schema = 2,
    upgrade = upgrade_contact
)]
struct Contact {
    account: String,
    id: String,
    given: String,
    family: String,
    phones: Vec<String>,
}

/// One step per call: from version `from` to `from + 1`, on the item as stored.
fn upgrade_contact(from: u32, item: &mut Item) -> Result<(), UpgradeError> {
    match from {
        1 => {
            let Some(AttributeValue::S(name)) = item.remove("name") else {
                return Err("a version 1 contact has a `name` string".into());
            };
            let (given, family) = name.rsplit_once(' ').unwrap_or((&name, ""));
            item.insert("given".into(), AttributeValue::S(given.to_owned()));
            item.insert("family".into(), AttributeValue::S(family.to_owned()));
            item.insert("phones".into(), AttributeValue::L(Vec::new()));
            Ok(())
        }
        _ => Err(format!("no upgrade from version {from}").into()),
    }
}

const NAMES: [&str; 6] =
    ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov", "Cher"];

/// What release 1 wrote: contacts `ids` spread over ten accounts.
async fn release_one(db: &Db<Crm>, ids: std::ops::Range<usize>) -> Result<(), Error> {
    let contacts: Vec<ContactV1> = ids
        .map(|i| ContactV1 {
            account: format!("a{}", i % 10),
            id: format!("c{i:04}"),
            name: NAMES[i % NAMES.len()].to_owned(),
        })
        .collect();
    db.batch_put(&contacts).await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let db = local::isolated_db::<Crm>().await?;
    release_one(&db, 0..600).await?;
    println!("release 1 wrote 600 contacts (schema version 1: no `_schema` attribute)");

    // Release 2 reads them upgraded; the reads write nothing.
    db.reset_requests();
    let ada = Contact::get(&db, "a0", "c0000").await?.ok_or("no contact c0000")?;
    println!("read as version 2: {} / {} / {:?}", ada.given, ada.family, ada.phones);
    let account: Vec<Contact> = Contact::query(&db, "a5").all().await?;
    println!("account a5: {} contacts, all upgraded on read", account.len());
    println!("requests of the reads: {} (no write)", db.requests());

    // A partial update of an old item is refused: it would change fields of another shape.
    let err = Contact::update(&db, "a1", "c0001").set(Contact::PHONES, vec!["+1 555".to_owned()]);
    match err.await {
        Err(e @ Error::SchemaOutdated { .. }) => println!("update before migrating: {e}"),
        other => return Err(format!("expected SchemaOutdated, got {other:?}").into()),
    }

    // The migration: 4 segments, a progress line per page, a checkpoint to resume from.
    // The bar is indicatif's, as the tool draws it: hidden when stderr is not a terminal.
    let total = db.item_count_estimate().await?;
    let bar = indicatif::ProgressBar::new(total.unwrap_or(0)).with_style(
        indicatif::ProgressStyle::with_template("migrating [{bar:30}] {pos}/{len} {msg}")?
            .progress_chars("#>."),
    );
    let report = db
        .migrate::<Contact>()
        .segments(4)
        .page_size(100)
        .on_progress(|p| {
            bar.set_position(p.counts.scanned);
            bar.set_message(format!("({} upgraded)", p.counts.upgraded));
        })
        .await?;
    bar.finish_and_clear();
    let c = report.counts;
    println!(
        "migrated: {} scanned, {} upgraded, {} already current, {} skipped, {} failed",
        c.scanned, c.upgraded, c.already_current, c.skipped, c.failed
    );
    let checkpoint = serde_json::to_string(&report.checkpoint)?;
    println!("final checkpoint: {checkpoint}");
    Contact::update(&db, "a1", "c0001").set(Contact::PHONES, vec!["+1 555".to_owned()]).await?;
    println!("update after migrating: ok");

    // The same through the command-line tool: `migrate contacts-v2 --endpoint ..`. A server
    // still on release 1 wrote 50 more contacts meanwhile, so there is something left to do.
    release_one(&db, 600..650).await?;
    let model = TableModel::of::<Crm>().entity::<Contact>();
    let cli = Cli::new(model).migration(SchemaMigration::<Contact>::new("contacts-v2"));
    let args: Vec<String> = ["migrate", "contacts-v2", "--endpoint", &local::endpoint()?]
        .into_iter()
        .chain(["--table", db.table_name()])
        .map(str::to_owned)
        .collect();
    cli.run_with(&args, &mut std::io::stdout().lock()).await?;
    let left = db.migrate::<Contact>().await?;
    println!("left to migrate after the tool: {}", left.counts.upgraded);
    Ok(())
}
