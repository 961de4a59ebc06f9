//! Re-keying a live table: 10,000 accounts stored under `ACCOUNT#<id>` move into their
//! region's partition (`REGION#<region>` / `ACCOUNT#<id>`) while another task keeps writing
//! through the library, then every account is checked against what the writer did.
//!
//!     cargo run --example rekey [ITEMS]        (or REKEY_ITEMS=..., default 10000)
//!
//! The steps of the re-keying chapter, in order: the items written before (phase `Old`),
//! the writer in `WriteBoth` while the copy runs, reads switched to the new layout
//! (`ReadNew`), then every process in `New` while the cleanup removes the old copies.
//! Runs against the embedded engine; set `DDB_ENDPOINT` to use another endpoint (AWS's
//! DynamoDB Local).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ddb_model::ops::BatchWrite;
use ddb_model::ops::{RekeyPhase, RekeyReport};
use ddb_model::prelude::*;
use ddb_model::{DefaultTable, local};
use serde::{Deserialize, Serialize};

/// An account: its key used to be `ACCOUNT#<id>` / `REGION#<region>`.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(
    pk = "REGION#<region>",
    sk = "ACCOUNT#<id>",
    rekey(pk = "ACCOUNT#<id>", sk = "REGION#<region>"),
    version = version
)]
#[index(gsi1, pk = "PLAN#<plan>", sk = "ACCOUNT#<id>")]
struct Account {
    region: String,
    id: String,
    plan: String,
    balance: i64,
    #[serde(default)]
    version: u64,
}

/// The old deployment's declaration of the same items (before `rekey` was declared).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(name = "Account", pk = "ACCOUNT#<id>", sk = "REGION#<region>")]
#[index(gsi1, pk = "PLAN#<plan>", sk = "ACCOUNT#<id>")]
struct OldAccount {
    region: String,
    id: String,
    plan: String,
    balance: i64,
    version: u64,
}

fn account(i: u64) -> Account {
    Account {
        region: ["eu", "us", "ap"][(i % 3) as usize].to_owned(),
        id: format!("a{i:06}"),
        plan: if i.is_multiple_of(10) { "pro" } else { "free" }.to_owned(),
        balance: 100,
        version: 0,
    }
}

/// What the writer did, account by account: `None` once deleted.
type Model = Arc<Mutex<BTreeMap<String, Option<Account>>>>;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u64 = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("REKEY_ITEMS").ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let db = local::isolated_db::<DefaultTable>().await?;

    // Before: the accounts as the old deployment wrote them, in batches.
    let model: Model = Arc::default();
    let all: Vec<Account> = (0..n).map(account).collect();
    for chunk in all.chunks(1000) {
        let old: Vec<OldAccount> = chunk
            .iter()
            .map(|a| OldAccount {
                region: a.region.clone(),
                id: a.id.clone(),
                plan: a.plan.clone(),
                balance: a.balance,
                version: a.version,
            })
            .collect();
        let batch: BatchWrite<'_, DefaultTable> = db.batch_write().put_all(&old);
        batch.await?;
    }
    model.lock().unwrap().extend(all.into_iter().map(|a| (a.id.clone(), Some(a))));
    println!("{n} accounts stored under ACCOUNT#<id>");

    // Every process in `WriteBoth`; a writer keeps going while the copy runs.
    let both = db.clone().with_rekey_phase::<Account>(RekeyPhase::WriteBoth);
    let stop = Arc::new(AtomicBool::new(false));
    let writer = tokio::spawn(write_while(both.clone(), model.clone(), n, stop.clone()));
    let started = Instant::now();
    let before = db.requests();
    let report: RekeyReport = both
        .rekey::<Account>()
        .segments(4)
        .on_progress(|p| {
            if p.segments_done == p.segments {
                println!("copy: every segment done, {} items scanned", p.counts.scanned);
            }
        })
        .await?;
    let seconds = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::SeqCst);
    let writes = writer.await??;
    let after = db.requests();
    println!(
        "copied {} ({} already new, {} changed under the copy, {} deleted under it) in {seconds:.1} s, while the writer made {writes} writes",
        report.counts.copied, report.counts.already_new, report.counts.changed, report.counts.gone
    );
    let sent = |op| after.get(op) - before.get(op);
    println!(
        "the copy's requests: {} Scan, {} TransactWriteItems (up to {} items each)",
        sent(ddb_model::stats::Op::Scan),
        sent(ddb_model::stats::Op::TransactWriteItems),
        ddb_model::ops::REKEY_BATCH
    );

    // Reads switch to the new layout; then every process writes the new one only, and the
    // cleanup removes the old copies.
    let read_new = db.clone().with_rekey_phase::<Account>(RekeyPhase::ReadNew);
    verify(&read_new, &model).await?;
    let new = db.clone().with_rekey_phase::<Account>(RekeyPhase::New);
    let cleanup = new.rekey::<Account>().cleanup().segments(4).await?;
    println!(
        "cleanup removed {} old copies ({} not copied)",
        cleanup.counts.removed, cleanup.counts.not_copied
    );
    assert_eq!(cleanup.counts.not_copied, 0);
    verify(&new, &model).await?;
    let pro = Account::query_gsi1(&new, "pro").count().await?;
    let want = model.lock().unwrap().values().flatten().filter(|a| a.plan == "pro").count();
    assert_eq!(pro, want, "the index holds each account once");
    println!("verified: every account reads back as the writer left it; {pro} on the pro plan");
    Ok(())
}

/// Writes through the library (deposits, deletes, new accounts) until `stop`; returns how
/// many writes it made.
async fn write_while(db: Db, model: Model, n: u64, stop: Arc<AtomicBool>) -> Result<u64, Error> {
    let mut writes = 0;
    let mut i = 0u64;
    while !stop.load(Ordering::SeqCst) {
        let target = (i * 7919) % n;
        let a = account(target);
        match i % 10 {
            // A new account.
            9 => {
                let mut fresh = account(n + i);
                fresh.create(&db).await?;
                model.lock().unwrap().insert(fresh.id.clone(), Some(fresh));
            }
            // A closed account.
            8 => {
                if Account::delete(&db, &a.region, &a.id).await.is_ok() {
                    model.lock().unwrap().insert(a.id.clone(), None);
                }
            }
            // A deposit.
            _ => {
                if let Ok(updated) =
                    Account::update(&db, &a.region, &a.id).add(Account::BALANCE, 5).await
                {
                    model.lock().unwrap().insert(a.id.clone(), Some(updated));
                }
            }
        }
        writes += 1;
        i += 1;
    }
    Ok(writes)
}

/// Every account of the model reads back as the writer left it; deleted ones are gone.
async fn verify(db: &Db, model: &Model) -> Result<(), Error> {
    let want = model.lock().unwrap().clone();
    for (id, account) in &want {
        let region = account.as_ref().map_or_else(|| region_of(id), |a| a.region.clone());
        let got = Account::get(db, &region, id).await?;
        match (account, got) {
            (None, None) => {}
            (Some(a), Some(g)) => {
                assert_eq!((a.balance, a.version), (g.balance, g.version), "{id}");
            }
            (a, g) => panic!("{id}: the writer left {a:?}, the table holds {g:?}"),
        }
    }
    Ok(())
}

fn region_of(id: &str) -> String {
    let i: u64 = id.trim_start_matches('a').parse().unwrap_or(0);
    ["eu", "us", "ap"][(i % 3) as usize].to_owned()
}
