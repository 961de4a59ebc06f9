//! Testing your own retry logic with the fault harness (feature `testing`): a transfer
//! between accounts, as an application would write it, run from 8 concurrent tasks through a
//! proxy that drops requests before and after the engine applied them, answers 500s,
//! throttles and cancels transactions. Afterwards, on a clean connection, the invariants:
//! the total balance is conserved and no balance is negative.
//!
//!     cargo run --example fault_harness -- [SEED]
//!
//! Runs against the embedded engine; set `DDB_ENDPOINT` to use another endpoint (AWS's
//! DynamoDB Local). `DDB_HARNESS_OPS` sets the transfers per task (default 25).

use ddb_model::error::ThrottleLimit;
use ddb_model::prelude::*;
use ddb_model::testing::{CancelCode, Faults, Harness};
use ddb_model::{DefaultTable, Op};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "ACCOUNT#<id>", sk = "ACCOUNT")]
struct Account {
    id: u32,
    balance: i64,
}

const ACCOUNTS: u32 = 6;
const OPENING: i64 = 1_000;

/// The code under test: moves `amount` from one account to another in one transaction, which
/// the library sends again under the same token when a response is lost (so it applies once),
/// and which fails whole when `from` lacks the money.
async fn transfer(db: &Db, from: u32, to: u32, amount: i64) -> Result<(), Error> {
    db.transaction()
        .update(Account::key(from), |u| {
            u.add(Account::BALANCE, -amount).condition(Account::BALANCE.ge(amount))
        })
        .update(Account::key(to), |u| u.add(Account::BALANCE, amount))
        .await
}

/// The retry logic under test: a transfer that failed for a transient reason is sent again,
/// unless it may have been applied (a lost response after the library's own resends): sending
/// a new transaction then could move the money twice, which the invariant would catch.
async fn transfer_with_retries(db: &Db, from: u32, to: u32, amount: i64) -> Result<(), Error> {
    let mut attempt = 0;
    loop {
        match transfer(db, from, to, amount).await {
            Err(e) if e.is_transient() && !e.maybe_applied() && attempt < 4 => {
                attempt += 1;
                tokio::time::sleep(std::time::Duration::from_millis(5 << attempt)).await;
            }
            other => return other,
        }
    }
}

/// The invariants, on a clean connection.
async fn conserved(direct: &Db) -> Result<(), String> {
    let mut total = 0;
    for id in 0..ACCOUNTS {
        let account = Account::get(direct, id).await.map_err(|e| e.to_string())?;
        let balance = account.map_or(0, |a| a.balance);
        if balance < 0 {
            return Err(format!("account {id} is overdrawn: {balance}"));
        }
        total += balance;
    }
    let expected = OPENING * i64::from(ACCOUNTS);
    if total == expected { Ok(()) } else { Err(format!("total {total}, expected {expected}")) }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seed = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(29);
    let ops = std::env::var("DDB_HARNESS_OPS").ok().and_then(|v| v.parse().ok()).unwrap_or(25);
    let faults = Faults::mix(seed)
        .throttle(0.03, ThrottleLimit::KeyRange)
        .cancel(0.05, CancelCode::TransactionConflict);
    let harness = Harness::<DefaultTable>::start(faults).await?;
    for id in 0..ACCOUNTS {
        Account { id, balance: OPENING }.create(harness.direct()).await?;
    }

    let report = harness
        .run(
            8,
            ops,
            |db, mut step| async move {
                let from = step.below(u64::from(ACCOUNTS)) as u32;
                let to = (from + 1 + step.below(u64::from(ACCOUNTS) - 1) as u32) % ACCOUNTS;
                let amount = 1 + step.below(300) as i64;
                match transfer_with_retries(&db, from, to, amount).await {
                    // Not enough money is an answer, not a fault.
                    Err(e) if e.is_condition_failed() => Ok(()),
                    other => other,
                }
            },
            |direct| async move { conserved(&direct).await },
        )
        .await?;

    println!("{report}");
    println!(
        "{} transactions sent in {} HTTP attempts",
        report.requests.get(Op::TransactWriteItems),
        report.requests.attempts(Op::TransactWriteItems)
    );
    assert!(report.injected.faults() > 0, "faults were injected");
    println!("invariants hold: the total balance is {}", OPENING * i64::from(ACCOUNTS));
    Ok(())
}
