//! Zero-setup DynamoDB for tests, examples and local development (feature `local`).
//!
//! [`endpoint`] is the URL of a DynamoDB-compatible server: the one named by the
//! `DDB_ENDPOINT` environment variable when it is set (for example AWS's DynamoDB Local),
//! otherwise an embedded [dynoxide](https://crates.io/crates/dynoxide-rs) engine (SQLite in
//! memory) that this module starts on an ephemeral loopback port the first time it is needed.
//! The embedded server runs on its own thread and runtime for the rest of the process, so it
//! outlives any one `#[tokio::test]` runtime; the SDK talks real HTTP to it.
//!
//! ```
//! # #[tokio::main] async fn main() -> Result<(), ddb_model::Error> {
//! use ddb_model::DefaultTable;
//!
//! // A fresh, uniquely named table: tests sharing the server never see each other's items.
//! let db = ddb_model::local::isolated_db::<DefaultTable>().await?;
//! assert!(db.table_name().starts_with("ddb-model-"));
//! # Ok(()) }
//! ```

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use aws_sdk_dynamodb::Client;

use crate::db::Db;
use crate::error::{Error, LocalProblem};
use crate::model::Table;

/// The environment variable that points tests and examples at another endpoint.
pub const ENDPOINT_ENV: &str = "DDB_ENDPOINT";

static EMBEDDED: OnceLock<Result<String, LocalProblem>> = OnceLock::new();

/// The endpoint to use: `DDB_ENDPOINT` if set, else the embedded engine (started on first
/// use).
pub fn endpoint() -> Result<String, Error> {
    match std::env::var(ENDPOINT_ENV) {
        Ok(url) if !url.trim().is_empty() => Ok(url.trim().to_owned()),
        _ => embedded_endpoint(),
    }
}

/// True when [`endpoint`] is the embedded engine (no `DDB_ENDPOINT`).
pub fn is_embedded() -> bool {
    !matches!(std::env::var(ENDPOINT_ENV), Ok(url) if !url.trim().is_empty())
}

/// The URL of the embedded engine, starting it on first use.
pub fn embedded_endpoint() -> Result<String, Error> {
    EMBEDDED.get_or_init(start_embedded).clone().map_err(Error::Local)
}

fn start_embedded() -> Result<String, LocalProblem> {
    let port = |e: std::io::Error| LocalProblem::Port { reason: e.to_string() };
    let thread = |e: std::io::Error| LocalProblem::Thread { reason: e.to_string() };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(port)?;
    listener.set_nonblocking(true).map_err(port)?;
    let addr = listener.local_addr().map_err(port)?;
    let database =
        dynoxide::Database::memory().map_err(|e| LocalProblem::Engine { reason: e.to_string() })?;

    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), LocalProblem>>();
    std::thread::Builder::new()
        .name("ddb-model-embedded".into())
        .spawn(move || {
            let started = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("ddb-model-embedded")
                .enable_all()
                .build()
                .map_err(thread)
                .and_then(|runtime| {
                    // Registered with the runtime's reactor, so created inside it.
                    let listener = {
                        let _in = runtime.enter();
                        tokio::net::TcpListener::from_std(listener).map_err(port)?
                    };
                    Ok((runtime, listener))
                });
            let _ = ready_tx.send(started.as_ref().map(drop).map_err(LocalProblem::clone));
            if let Ok((runtime, listener)) = started {
                // Serves until the process exits.
                let serve = dynoxide::server::serve_with_shutdown(
                    listener,
                    database,
                    std::future::pending(),
                );
                let _ = runtime.block_on(serve);
            }
        })
        .map_err(thread)?;

    match ready_rx.recv() {
        Ok(Ok(())) => Ok(format!("http://{addr}")),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(LocalProblem::Stopped),
    }
}

/// An SDK client for `endpoint` with fixed local credentials and region.
///
/// Build one client per Tokio runtime: the SDK's connection pool belongs to the runtime that
/// created its connections.
pub fn client_for(endpoint: &str) -> Client {
    crate::db::endpoint_client(endpoint)
}

/// An SDK client for [`endpoint`].
pub fn client() -> Result<Client, Error> {
    Ok(client_for(&endpoint()?))
}

/// A [`Db`] on the table `T::NAME`, created if it does not exist.
pub async fn db<T: Table>() -> Result<Db<T>, Error> {
    let db = Db::new(client()?);
    db.create_table().await?;
    Ok(db)
}

/// A [`Db`] on a new table with a unique name (`T::NAME` and a suffix), laid out as `T`.
/// Each test takes one, so tests sharing a server never see each other's items.
pub async fn isolated_db<T: Table>() -> Result<Db<T>, Error> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let token = crate::ops::idempotency_token();
    let name = format!("{}-{}-{n}-{}", T::NAME, std::process::id(), &token[..8]);
    let db = Db::with_table_name(client()?, name);
    db.create_table().await?;
    Ok(db)
}

/// A DynamoDB Streams client for `endpoint`, with the same local credentials and region as
/// [`client_for`] (feature `streams-sdk`). Both the embedded engine and DynamoDB Local serve
/// the streams API at the same endpoint as the tables.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let streams = ddb_model::local::streams_client_for(&ddb_model::local::endpoint()?);
/// let listed = streams.list_streams().table_name("no-such-table").send().await?;
/// assert!(listed.streams().is_empty());
/// # Ok(()) }
/// ```
#[cfg(feature = "streams-sdk")]
pub fn streams_client_for(endpoint: &str) -> aws_sdk_dynamodbstreams::Client {
    crate::db::endpoint_client_of!(aws_sdk_dynamodbstreams, endpoint)
}
