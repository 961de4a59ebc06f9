//! Fewer round trips: 64 concurrent puts, then 64 concurrent gets of what they wrote, through
//! a network that adds 2 ms to every request (the `testing` proxy's latency), first on a
//! plain handle, then on a handle `with_coalescing`. Prints the requests each sent and the
//! time each took, and checks the counts: 64 `PutItem`s against 3 `BatchWriteItem`s (25, 25
//! and 14 writes), 64 `GetItem`s against 1 `BatchGetItem`, and the same items read back.
//! The times are printed, not checked: `cargo bench --bench coalescing` measures them.
//!
//!     cargo run --example coalescing
//!
//! Runs against the embedded engine; set `DDB_ENDPOINT` to use another endpoint (DynamoDB
//! Local).

use std::time::{Duration, Instant};

use ddb_model::prelude::*;
use ddb_model::testing::{Faults, Proxy};
use ddb_model::{Op, local};
use futures_util::future::join_all;
use serde::{Deserialize, Serialize};

const N: u64 = 64;

/// Entities told apart by their keys: a put carries no condition, so puts may be coalesced
/// (a tagged entity's put is guarded by its type, and is sent alone).
#[derive(Table)]
#[table(name = "readings", pk = "pk", sk = "sk", no_type_attr)]
struct Readings;

/// A sensor reading.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Readings, pk = "DEVICE#<device>", sk = "READING#<n>")]
struct Reading {
    device: u32,
    n: u64,
    celsius: f64,
}

/// What one handle sent for the puts and the gets, and how long each took.
struct Pass {
    puts: (Vec<(Op, u64)>, Duration),
    gets: (Vec<(Op, u64)>, Duration),
    read: Vec<Option<Reading>>,
}

/// 64 concurrent puts of `device`'s readings, then 64 concurrent gets of them, on `db`.
async fn pass(db: &Db<Readings>, device: u32) -> Result<Pass, Error> {
    let readings: Vec<Reading> =
        (0..N).map(|n| Reading { device, n, celsius: 18.0 + (n % 16) as f64 / 4.0 }).collect();
    let sent = |db: &Db<Readings>| db.requests().iter().collect::<Vec<_>>();

    db.reset_requests();
    let start = Instant::now();
    join_all(readings.iter().map(|r| r.put(db))).await.into_iter().collect::<Result<(), _>>()?;
    let puts = (sent(db), start.elapsed());

    db.reset_requests();
    let start = Instant::now();
    let read = join_all((0..N).map(|n| Reading::get(db, device, n))).await;
    let gets = (sent(db), start.elapsed());
    let read = read.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(Pass { puts, gets, read })
}

fn requests(sent: &[(Op, u64)]) -> String {
    sent.iter().map(|(op, n)| format!("{n} {op}")).collect::<Vec<_>>().join(", ")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let direct: Db<Readings> = local::isolated_db().await?;
    let proxy = Proxy::start(Faults::default().latency(Duration::from_millis(2))).await?;
    let plain = proxy.db(&direct);
    let coalescing = proxy.db(&direct).with_coalescing(Duration::from_millis(1));

    let alone = pass(&plain, 1).await?;
    let gathered = pass(&coalescing, 2).await?;

    println!("{N} concurrent puts, then {N} concurrent gets, 2 ms added to every request\n");
    println!("{:<28} {:<18} {:>9}", "handle", "requests", "time");
    for (name, p) in [("plain", &alone), ("with_coalescing(1 ms)", &gathered)] {
        for (what, (sent, took)) in [("puts", &p.puts), ("gets", &p.gets)] {
            let took = format!("{:.1} ms", took.as_secs_f64() * 1000.0);
            println!("{:<28} {:<18} {took:>9}", format!("{name}: {what}"), requests(sent));
        }
    }

    // The counts the guide states, checked.
    assert_eq!(alone.puts.0, [(Op::PutItem, N)]);
    assert_eq!(alone.gets.0, [(Op::GetItem, N)]);
    assert_eq!(gathered.puts.0, [(Op::BatchWriteItem, 3)]);
    assert_eq!(gathered.gets.0, [(Op::BatchGetItem, 1)]);
    // Each caller got its own reading back, on both handles.
    let values = |p: &Pass| -> Vec<Option<(u64, f64)>> {
        p.read.iter().map(|r| r.as_ref().map(|r| (r.n, r.celsius))).collect()
    };
    let expected: Vec<Option<(u64, f64)>> =
        (0..N).map(|n| Some((n, 18.0 + (n % 16) as f64 / 4.0))).collect();
    assert_eq!(values(&alone), expected);
    assert_eq!(values(&gathered), expected);
    let stored = direct.scan::<Reading>().consistent().all().await?;
    assert_eq!(stored.len() as u64, 2 * N);
    println!("\nboth handles stored and read the same {N} readings");
    Ok(())
}
