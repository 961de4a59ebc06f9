//! A fault harness for your own code (feature `testing`): the embedded engine (or
//! `DDB_ENDPOINT`) behind a [`Proxy`] that drops requests before they reach the engine and
//! responses after it applied them, answers 500s, throttles with the service's errors and
//! throttling reasons, cancels transactions with the service's reason codes, leaves batches
//! unprocessed and adds latency, at the rates a test sets ([`Faults`]), seeded, or cuts every
//! request from the n-th on (a runner killed mid-way); and [`Harness`], which runs your operations
//! concurrently under it and then checks your invariants on a clean connection, reporting the
//! seed and what was injected when one fails.
//!
//! This is the way to test retry logic: the SDK's retries, the library's (token-carrying
//! transactions, unprocessed batch items, conflicts) and yours all run as they would against
//! a failing network and a throttled table. The guide's chapter `docs/testing.md` walks
//! through it; the example `examples/fault_harness.rs` runs a transfer between accounts
//! under faults and checks that the total balance is conserved.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), ddb_model::Error> {
//! use ddb_model::error::ThrottleLimit;
//! use ddb_model::testing::{Faults, Harness};
//! use ddb_model::{DefaultTable, Entity};
//! # use serde::{Deserialize, Serialize};
//!
//! #[derive(Entity, Serialize, Deserialize)]
//! #[entity(pk = "USER#<id>", sk = "PROFILE")]
//! struct User { id: String }
//!
//! // Every request throttled: the SDK retries (3 attempts), then the error is typed.
//! let faults = Faults::seeded(1).throttle(1.0, ThrottleLimit::KeyRange);
//! let harness = Harness::<DefaultTable>::start(faults).await?;
//! let err = User { id: "ann".into() }.put(harness.db()).await.unwrap_err();
//! assert!(err.is_throttled() && err.is_hot_key());
//! assert_eq!(harness.proxy().counts().throttled, 3);
//! assert!(User::get(harness.direct(), "ann").await?.is_none()); // nothing was written
//! # Ok(()) }
//! ```

mod faults;
mod harness;
mod http;
mod proxy;

pub use faults::{CancelCode, Faults};
pub use harness::{Harness, InvariantFailed, Report, Step};
pub use proxy::{Counts, Hold, Proxy};
