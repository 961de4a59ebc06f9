//! The cost report (`Db::with_cost_report`): a workload of known requests, filters and item
//! sizes gives exactly those numbers per access pattern, the hottest partition keys as the
//! space-saving summary keeps them, capacity equal to the handle's statistics, and a saved
//! report printed by the model tool. Runs on both backends (both report consumed capacity;
//! its amounts are compared with the statistics, not with constants).

use ddb_model::item::item_size;
use ddb_model::prelude::*;
use ddb_model::stats::{CostReport, HotKey, PatternCost};
use ddb_model::tooling::TableModel;
use ddb_model::tooling::cli::{Cli, CliError};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "costs", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct Costs;

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Costs, pk = "USER#<id>", sk = "PROFILE")]
struct Member {
    id: String,
    bio: String,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Costs, pk = "USER#<user>", sk = "ORDER#<seq>")]
#[index(gsi1, pk = "STATUS#<status>", sk = "<seq>")]
struct Purchase {
    user: String,
    seq: u32,
    status: String,
}

/// The sizes of the items stored in partition `pk`, in sort-key order, read around the
/// library.
async fn stored_sizes(db: &Db<Costs>, pk: &str) -> Vec<u64> {
    let out = db
        .client()
        .query()
        .table_name(db.table_name())
        .key_condition_expression("#pk = :pk")
        .expression_attribute_names("#pk", Costs::PK)
        .expression_attribute_values(":pk", crate::support::s(pk))
        .send()
        .await
        .expect("a raw query");
    out.items().iter().map(|i| item_size(i) as u64).collect()
}

fn row<'r>(report: &'r CostReport, name: &str) -> &'r PatternCost {
    report.patterns.iter().find(|p| p.name() == name).unwrap_or_else(|| panic!("no {name}"))
}

#[tokio::test]
async fn a_known_workload_gives_exactly_its_numbers() -> Result<(), Box<dyn std::error::Error>> {
    let db = crate::support::db::<Costs>().await.with_capacity(true).with_cost_report(3);
    db.reset_requests(); // the counters are shared with the handle that created the table
    Member { id: "ann".into(), bio: "x".repeat(100) }.put(&db).await?;
    Member { id: "bob".into(), bio: "y".into() }.put(&db).await?;
    for (seq, status) in [(1, "open"), (2, "shipped"), (3, "open"), (4, "shipped")] {
        Purchase { user: "ann".into(), seq, status: status.into() }.put(&db).await?;
    }
    for id in ["ann", "bob", "carl"] {
        Member::get(&db, id).await?;
    }
    let open = Purchase::query(&db, "ann").filter(Purchase::STATUS.eq("open")).all().await?;
    assert_eq!(open.len(), 2);
    let by_status = Purchase::query_gsi1(&db, "open").all().await?;
    assert_eq!(by_status.len(), 2);

    let report = db.cost_report().expect("the handle keeps one");
    // Sort keys `ORDER#..` (1 to 4) before `PROFILE`.
    let mut orders = stored_sizes(&db, "USER#ann").await;
    let ann = orders.pop().expect("the profile");
    let bob = stored_sizes(&db, "USER#bob").await[0];
    assert_eq!(orders.len(), 4);
    let open_sizes = orders[0] + orders[2];

    let puts = row(&report, "Member PutItem");
    assert_eq!((puts.requests, puts.items_written, puts.bytes_written), (2, 2, ann + bob));
    assert_eq!(puts.max_item_bytes, ann);
    let order_puts = row(&report, "Purchase PutItem");
    assert_eq!((order_puts.requests, order_puts.bytes_written), (4, orders.iter().sum::<u64>()));
    let gets = row(&report, "Member GetItem");
    assert_eq!((gets.requests, gets.items_read, gets.items_returned), (3, 2, 2));
    assert_eq!(
        (gets.bytes_returned, gets.max_item_bytes, gets.filter_waste()),
        (ann + bob, ann, 0)
    );
    // The filter kept 2 of the 4 orders the key condition read: 2 paid for, never seen.
    let query = row(&report, "Purchase Query");
    assert_eq!((query.requests, query.items_read, query.items_returned), (1, 4, 2));
    assert_eq!((query.filter_waste(), query.bytes_returned), (2, open_sizes));
    let on_index = row(&report, "Purchase Query on gsi1");
    assert_eq!(
        (on_index.index.as_deref(), on_index.items_read, on_index.items_returned),
        (Some("gsi1"), 2, 2)
    );
    assert_eq!(report.patterns.len(), 5, "{report}");

    // The capacity is the statistics', split by pattern; every request read or wrote some.
    let stats = db.requests();
    let sum = |f: fn(&PatternCost) -> f64| report.patterns.iter().map(f).sum::<f64>();
    assert!((sum(|p| p.read_units) - stats.read_units()).abs() < 1e-9, "{report}");
    assert!((sum(|p| p.write_units) - stats.write_units()).abs() < 1e-9, "{report}");
    assert!(report.patterns.iter().all(|p| p.read_units + p.write_units > 0.0), "{report}");
    assert_eq!(report.patterns.iter().map(|p| p.requests).sum::<u64>(), stats.total());

    // Keys in request order: ann 1, bob 1, ann +4, ann +1, bob +1, carl 1, ann +1 (query),
    // then STATUS#open finds the 3 counters taken and replaces the smallest (carl, 1).
    let hot = |key: &str, requests, overcount| HotKey { key: key.into(), requests, overcount };
    assert_eq!(
        report.hot_keys,
        [hot("USER#ann", 7, 0), hot("STATUS#open", 2, 1), hot("USER#bob", 2, 0)]
    );
    assert!(report.throttles.is_empty());

    // Logged as a table; saved as JSON and printed by the model tool.
    let text = report.to_string();
    assert!(text.contains("Purchase Query on gsi1") && text.contains("USER#ann"), "{text}");
    let path = std::env::temp_dir().join(format!("cost-{}.json", std::process::id()));
    std::fs::write(&path, serde_json::to_string(&report)?)?;
    let cli = Cli::new(TableModel::of::<Costs>().entity::<Member>().entity::<Purchase>());
    let mut out = Vec::new();
    let args = vec!["cost-report".to_owned(), path.display().to_string()];
    cli.run_with(&args, &mut out).await?;
    assert_eq!(String::from_utf8(out)?, text);
    std::fs::write(&path, "{\"table\": 3}")?;
    let err = cli.run_with(&args, &mut Vec::new()).await.expect_err("not a report");
    assert!(matches!(err, CliError::BadReport { .. }), "{err}");
    std::fs::remove_file(&path)?;
    let err = cli.run_with(&args, &mut Vec::new()).await.expect_err("no file");
    assert!(matches!(err, CliError::ReadReport { .. }), "{err}");

    // A reset empties it; a handle without a report has none.
    db.reset_requests();
    assert_eq!(db.cost_report().map(|r| r.patterns.len()), Some(0));
    assert!(crate::support::db::<Costs>().await.cost_report().is_none());
    Ok(())
}

#[tokio::test]
async fn batches_and_transactions_of_one_entity_are_that_entitys() -> Result<(), Error> {
    let db = crate::support::db::<Costs>().await.with_cost_report(3);
    db.reset_requests();
    let member = |id: &str| Member { id: id.into(), bio: String::new() };
    let purchase = |seq| Purchase { user: "ann".into(), seq, status: "open".into() };
    db.batch_write().put(&member("ann")).put(&member("bob")).await?;
    db.transaction().create(&purchase(1)).create(&purchase(2)).await?;
    db.batch_get(["ann", "bob"].map(Member::key)).await?;
    // Of two entities: named by none.
    db.batch_write().put(&member("cy")).put(&purchase(3)).await?;
    let mut batch = db.batch_read();
    batch.get(Member::key("ann"));
    batch.get(Purchase::key("ann", 1));
    batch.await?;
    db.transaction().create(&member("dee")).create(&purchase(4)).await?;

    let report = db.cost_report().expect("the handle keeps one");
    let mut names: Vec<(String, u64)> =
        report.patterns.iter().map(|p| (p.name(), p.requests)).collect();
    names.sort();
    let expected = [
        ("BatchGetItem", 1),
        ("BatchWriteItem", 1),
        ("Member BatchGetItem", 1),
        ("Member BatchWriteItem", 1),
        ("Purchase TransactWriteItems", 1),
        ("TransactWriteItems", 1),
    ];
    assert_eq!(names, expected.map(|(n, r)| (n.to_owned(), r)), "{report}");
    Ok(())
}
