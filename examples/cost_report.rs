//! The cost report: a small shop workload (profiles, orders, a filtered query that reads more
//! than it returns, an index query, a hot customer) run through a handle that keeps a report,
//! then the report as an application would log it, and saved as JSON for the model tool
//! (`model_tool cost-report FILE`).
//!
//!     cargo run --example cost_report
//!
//! Runs against the embedded engine; set `DDB_ENDPOINT` to use another endpoint (DynamoDB
//! Local).

use ddb_model::local;
use ddb_model::prelude::*;
use ddb_model::tooling::TableModel;
use ddb_model::tooling::cli::Cli;
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "shop", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct Shop;

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Shop, pk = "CUSTOMER#<id>", sk = "PROFILE")]
struct Customer {
    id: String,
    name: String,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Shop, pk = "CUSTOMER#<customer>", sk = "ORDER#<seq>")]
#[index(gsi1, pk = "STATUS#<status>", sk = "<seq>")]
struct Order {
    customer: String,
    seq: u32,
    status: String,
    lines: Vec<String>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Capacity asked for, the 5 hottest partition keys kept.
    let db = local::isolated_db::<Shop>().await?.with_capacity(true).with_cost_report(5);
    for (i, name) in ["ann", "bob", "cy", "dee"].into_iter().enumerate() {
        Customer { id: name.into(), name: name.to_uppercase() }.put(&db).await?;
        for seq in 0..(3 + 4 * i as u32) {
            let status = if seq % 3 == 0 { "open" } else { "shipped" };
            let lines = (0..=seq % 5).map(|l| format!("item-{l}")).collect();
            Order { customer: name.into(), seq, status: status.into(), lines }.put(&db).await?;
        }
    }
    // dee is the busy customer: her profile read again and again.
    for _ in 0..20 {
        Customer::get(&db, "dee").await?;
    }
    // Open orders of one customer: the filter throws away the shipped ones it read.
    let open = Order::query(&db, "dee").filter(Order::STATUS.eq("open")).all().await?;
    // All open orders, through the index.
    let everywhere = Order::query_gsi1(&db, "open").all().await?;
    println!("dee has {} open orders, the shop {}", open.len(), everywhere.len());

    let report = db.cost_report().ok_or("the handle keeps a report")?;
    println!("\n{report}");

    // Saved and printed again by the model tool, as `model_tool cost-report costs.json` does.
    let path = std::env::temp_dir().join(format!("cost-report-{}.json", std::process::id()));
    std::fs::write(&path, serde_json::to_string_pretty(&report)?)?;
    let cli = Cli::new(TableModel::of::<Shop>().entity::<Customer>().entity::<Order>());
    let mut out = Vec::new();
    cli.run_with(&["cost-report".into(), path.display().to_string()], &mut out).await?;
    std::fs::remove_file(&path)?;
    assert_eq!(String::from_utf8(out)?, report.to_string());
    println!("(the same table, from the saved JSON: model_tool cost-report FILE)");
    Ok(())
}
