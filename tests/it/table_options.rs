//! Table options on `create_table`: deletion protection, warm throughput and on-demand
//! maxima for the table and its indexes, checked before sending and reported back by
//! `DescribeTable` as far as each backend keeps them.

use std::sync::atomic::{AtomicU64, Ordering};

use ddb_model::prelude::*;
use ddb_model::{
    Op,
    error::RequestProblem,
    local,
    ops::{OnDemandMax, WarmThroughput},
};

use crate::model::App;

/// A handle on a table that does not exist yet.
fn fresh() -> Result<Db<App>, Error> {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let name = format!("options-{}-{n}-{}", std::process::id(), rand_suffix());
    Ok(Db::with_table_name(local::client()?, name))
}

fn rand_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{nanos:08x}")
}

/// DynamoDB Local rather than the embedded engine.
fn on_dynamodb_local() -> bool {
    std::env::var("DDB_ENDPOINT").is_ok_and(|e| !e.is_empty())
}

#[tokio::test]
async fn options_below_the_minimums_are_refused_before_sending() -> Result<(), Error> {
    let db = fresh()?;
    let below = |err: &Error, at: &str, v: i64, m: i64| {
        matches!(err, Error::InvalidRequest { path, problem: RequestProblem::BelowMinimum { value, min } }
            if path == at && *value == v && *min == m)
    };
    let err = db.create_table().warm_throughput(WarmThroughput::new(100, 5_000)).await.unwrap_err();
    assert!(below(&err, "WarmThroughput.ReadUnitsPerSecond", 100, 12_000), "{err:?}");
    let warm = WarmThroughput { read_units_per_second: None, write_units_per_second: Some(3_999) };
    let err = db.create_table().warm_throughput(warm).await.unwrap_err();
    assert!(below(&err, "WarmThroughput.WriteUnitsPerSecond", 3_999, 4_000), "{err:?}");
    let err = db.create_table().max_on_demand(OnDemandMax::new(10, 0)).await.unwrap_err();
    assert!(below(&err, "OnDemandThroughput.MaxWriteRequestUnits", 0, 1), "{err:?}");
    let err = db.create_table().max_on_demand(OnDemandMax::new(-1, 5)).await.unwrap_err();
    assert!(below(&err, "OnDemandThroughput.MaxReadRequestUnits", -1, 1), "{err:?}");
    let err =
        db.create_table().index_max_on_demand("gsi2", OnDemandMax::new(0, 1)).await.unwrap_err();
    assert!(
        below(&err, "GlobalSecondaryIndexes[gsi2].OnDemandThroughput.MaxReadRequestUnits", 0, 1),
        "{err:?}"
    );
    let err = db
        .create_table()
        .index_warm_throughput("nope", WarmThroughput::new(12_000, 4_000))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidRequest { problem: RequestProblem::UnknownIndex { index }, .. } if index == "nope"),
        "{err:?}"
    );
    assert_eq!(db.requests().total(), 0, "nothing sent");
    Ok(())
}

#[tokio::test]
async fn options_are_sent_and_reported_back() -> Result<(), Error> {
    let db = fresh()?;
    db.create_table()
        .deletion_protection(true)
        .max_on_demand(OnDemandMax::new(100, 50))
        .warm_throughput(WarmThroughput::new(15_000, 5_000))
        .index_max_on_demand("gsi1", OnDemandMax::new(40, 20))
        .index_warm_throughput("gsi1", WarmThroughput::new(12_000, 4_000))
        .await?;
    assert_eq!(db.requests().get(Op::CreateTable), 1);
    let out =
        db.client().describe_table().table_name(db.table_name()).send().await.expect("describe");
    let table = out.table().expect("a table");

    // Both backends keep deletion protection and refuse to delete the table.
    assert_eq!(table.deletion_protection_enabled(), Some(true));
    let err = db.delete_table().await.unwrap_err();
    assert!(err.to_string().to_lowercase().contains("protect"), "{err}");

    // Both keep the table's on-demand maxima; neither reports warm throughput (they have
    // no capacity to warm), for the table or an index.
    let max = table.on_demand_throughput();
    assert_eq!(max.and_then(|m| m.max_read_request_units()), Some(100));
    assert_eq!(max.and_then(|m| m.max_write_request_units()), Some(50));
    assert!(table.warm_throughput().is_none());
    let gsi1 = table.global_secondary_indexes().iter().find(|i| i.index_name() == Some("gsi1"));
    let gsi1 = gsi1.expect("gsi1");
    assert!(gsi1.warm_throughput().is_none());
    let index_max = gsi1.on_demand_throughput().and_then(|m| m.max_read_request_units());
    if on_dynamodb_local() {
        // DynamoDB Local keeps the index's maxima too.
        assert_eq!(index_max, Some(40));
    } else {
        // The embedded engine accepts them and keeps none per index.
        assert_eq!(index_max, None);
    }

    // The same call again: the table exists, its options are left as they are.
    db.create_table().await?;

    // Turned off, the table can be deleted.
    db.client()
        .update_table()
        .table_name(db.table_name())
        .deletion_protection_enabled(false)
        .send()
        .await
        .expect("update table");
    db.delete_table().await?;
    Ok(())
}
