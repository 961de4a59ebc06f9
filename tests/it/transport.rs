//! Transport failures (issue 13, items 5, 6 and 9), through the fault-injecting proxy
//! (`proxy.rs`): typed errors, token-carrying retries, counters that return the caller's own
//! number, and request accounting of calls and HTTP attempts.

use ddb_model::DefaultTable;
use ddb_model::prelude::*;

use crate::model::Counter;
use crate::proxy::{Faults, Proxy, proxied_db};

/// The proxy forwards requests on keep-alive connections one by one, and injects each kind of
/// fault at about its rate (seeded, so the run is reproducible).
#[tokio::test]
async fn the_proxy_forwards_requests_and_injects_faults() -> Result<(), Error> {
    let (proxy, db, direct) = proxied_db::<DefaultTable>(Faults::none()).await;
    for i in 0..20 {
        Counter { name: format!("c{i}"), n: i, log: vec![] }.create(&db).await?;
    }
    let counts = proxy.counts();
    assert_eq!((counts.requests, counts.forwarded, counts.faults()), (20, 20, 0));
    for i in 0..20 {
        assert_eq!(Counter::get(&direct, format!("c{i}")).await?.map(|c| c.n), Some(i));
    }

    proxy.set_faults(Faults { drop_before: 0.1, drop_after: 0.1, error_500: 0.1, seed: 7 });
    let mut failed = 0;
    for _ in 0..100 {
        // Reads are safe to retry: the SDK's retries hide most faults.
        if Counter::get(&db, "c1").await.is_err() {
            failed += 1;
        }
    }
    let counts = proxy.counts();
    println!("proxy: {counts:?}, {failed} reads failed after the SDK's retries");
    assert!(counts.dropped_before > 10 && counts.dropped_after > 10 && counts.errors_500 > 10);
    assert_eq!(
        counts.requests,
        counts.forwarded + counts.faults(),
        "every request is forwarded or faulted"
    );
    Ok(())
}

/// A held request is parked until released, then lands even though its client gave up.
#[tokio::test]
async fn a_held_request_lands_after_its_client_gave_up() -> Result<(), Error> {
    let direct = crate::support::db::<DefaultTable>().await;
    let proxy = Proxy::start(Faults::none()).await;
    let db = proxy.db(&direct);
    let hold = proxy.hold(Some("PutItem"), "late-writer", 1);
    let write = tokio::spawn(async move {
        Counter { name: "late-writer".into(), n: 1, log: vec![] }.create(&db).await
    });
    assert!(hold.wait_held(1, std::time::Duration::from_secs(10)).await, "the put was held");
    write.abort(); // the writer is killed while its request is in flight
    assert!(Counter::get(&direct, "late-writer").await?.is_none(), "not applied while held");
    hold.release();
    let mut landed = false;
    for _ in 0..100 {
        if Counter::get(&direct, "late-writer").await?.is_some() {
            landed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(landed, "the released request was forwarded");
    assert_eq!(proxy.counts().held, 1);
    Ok(())
}
