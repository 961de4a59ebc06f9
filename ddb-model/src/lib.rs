//! A typed ORM for single-table DynamoDB designs.
//!
//! Derive [`Entity`] on a plain struct, write its keys as templates (`"USER#<id>"`), and get
//! compile-time checked key builders, typed queries, conditions and updates, and repository
//! methods; `#[hierarchy]` and `#[derive(Edge)]` make entities the nodes of trees and the
//! edges of graphs, with transactional writes. Every DynamoDB limit is checked before a
//! request leaves the process; every bad input or foreign item is a typed [`Error`]. Requests
//! go through [`aws_sdk_dynamodb`].
//!
//! ```
//! use ddb_model::prelude::*;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
//! #[entity(pk = "USER#<id>", sk = "PROFILE", version = version)]
//! struct User { id: String, nickname: Option<String>, logins: u64, version: u64 }
//!
//! async fn demo(db: &Db) -> Result<(), Error> {
//!     let mut ann = User { id: "ann".into(), nickname: None, logins: 0, version: 0 };
//!     ann.create(db).await?;                      // Error::AlreadyExists if present
//!     let updated = User::update(db, "ann")
//!         .set(User::NICKNAME, "annie")
//!         .add(User::LOGINS, 1)
//!         .await?;
//!     assert_eq!((updated.logins, updated.version), (1, 2));
//!     assert!(ann.replace(db).await.unwrap_err().is_version_conflict()); // 1 < 2
//!     Ok(())
//! }
//! # #[cfg(feature = "local")]
//! # #[tokio::main]
//! # async fn main() -> Result<(), Error> { demo(&ddb_model::local::isolated_db().await?).await }
//! # #[cfg(not(feature = "local"))]
//! # fn main() {}
//! ```
//!
//! # The guide
//!
//! The repository's `docs/` directory is the guide, one chapter per concern (keys, queries,
//! writes, trees, edges, adopting, lifecycle, data rules, operations, requests, tenants,
//! encryption, testing under faults), whose examples run as doctests.
//!
//! # Modules
//!
//! - [`entity`]: the [`Entity`] and [`Table`] traits, the model's definitions, entities as items.
//! - [`key`]: key templates, [`KeyPart`] values and their encoding, typed keys ([`Key`]).
//! - [`expr`]: typed attribute paths, conditions and update expressions.
//! - [`item`]: raw items ([`Item`]) and their size as DynamoDB counts it.
//! - [`ops`]: the operations of a [`Db`]: items, queries, scans, batches, transactions, tables.
//! - [`tree`]: trees (`#[hierarchy]`) and their strategies, with the cost of each operation.
//! - [`edge`]: graph edges (`#[derive(Edge)]`): links, counters, reads and traversals.
//! - [`stream`]: DynamoDB Streams records read as the table's entities.
//! - `tooling` (feature `tooling`): the model as data (Mermaid, Markdown, Workbench), a CLI.
//! - [`error`]: the [`Error`] type and the problems its variants carry (`KeyProblem`, ...).
//! - [`stats`]: request accounting ([`RequestStats`], per [`Op`]).
//! - [`local`]: the embedded engine; `testing` (feature `testing`): a fault harness for tests.
//! - [`prelude`]: the traits and types most code needs.
#![deny(missing_docs)]
#![warn(unreachable_pub)]

// Dependencies run one way (the layers of ARCHITECTURE.md); crate code uses module paths.
mod db;
mod derive_support;
pub mod edge;
#[cfg(feature = "encryption")]
pub mod encryption;
pub mod error;
mod escape;
pub mod expr;
#[cfg(doctest)] // The guide under `docs/` and the README, as doctests.
mod guide;
pub mod intercept;
pub mod item;
pub mod key;
#[cfg(feature = "local")]
pub mod local;
mod model;
pub mod ops;
pub mod stats;
pub mod stream;
mod telemetry;
#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "tooling")]
pub mod tooling;
mod trace;
pub mod tree;

/// The model: the [`Entity`] and [`Table`] traits, the definitions the derives fill in (indexes,
/// versions, timestamps, expiry, schemas, unique values, vectors), entities to items and back.
pub mod entity {
    pub use crate::model::{
        AttrArg, AttrKind, AttrPrefix, Crypto, CryptoField, DefaultTable, Entity, Expiry,
        ExpiryField, GeneratedField, Identity, IndexAttribute, IndexDef, KeyAttr, MAX_EXPIRY_SECS,
        MAX_VECTOR_DIMS, Metric, SDK_ATTRS, SchemaDef, Stamp, Table, TenantTable, TextAttribute,
        TimestampField, TimestampsDef, TtlDef, TypeTag, UNVERSIONED, UniqueDef, UniqueField,
        UpgradeFn, VectorField, VectorIndexDef, VersionDef, VersionField, from_item, is_sealed,
        to_item,
    };
    #[cfg(feature = "chrono")]
    pub use crate::model::{Iso8601, IsoMicros, IsoMillis, IsoNanos, IsoSeconds};
}

// What user code names; everything else is at its module path.
pub use db::Db;
pub use edge::{Edge, Edges};
pub use error::Error;
pub use expr::{Attr, Condition, UpdateActions, UpdateVerbs};
pub use item::{Item, set};
pub use key::{Key, KeyPart};
pub use model::{DefaultTable, Entity, Table};
pub use ops::{Collection, Cursor, EntityQuery, Page, Projection, Query, Scored};
pub use stats::{Op, RequestStats};
pub use tree::TreePath;

/// The derive macros: `Entity`, `Table`, `KeyPart`, `Collection`, `Projection` and `Edge`.
pub use ddb_model_derive::{Collection, Edge, Entity, KeyPart, Projection, Table};

/// Re-export of the SDK, for building clients and reading raw items.
pub use aws_sdk_dynamodb;
/// The DynamoDB Streams SDK (feature `streams-sdk`), the version whose records
/// [`StreamRecord`](stream::StreamRecord) converts.
#[cfg(feature = "streams-sdk")]
pub use aws_sdk_dynamodbstreams;
/// The [`chrono`](https://docs.rs/chrono) ddb-model implements [`KeyPart`] for (feature `chrono`).
#[cfg(feature = "chrono")]
pub use chrono;
/// The [`uuid`](https://docs.rs/uuid) ddb-model implements [`KeyPart`] for (feature `uuid`).
#[cfg(feature = "uuid")]
pub use uuid;

/// What generated code calls. Not a public API.
#[doc(hidden)]
pub use derive_support::private as __private;

/// The traits and types most code needs: `use ddb_model::prelude::*;`.
pub mod prelude {
    pub use crate::{
        Collection, Condition, Cursor, Db, Entity, Error, Key, KeyPart, Page, Projection, Scored,
        Table, UpdateVerbs,
    };
    // The problem types an `Error` carries, for matching on.
    pub use crate::error::{
        ActionReason, CancelReason, CorruptReason, CursorReason, InternalProblem, KeyParseReason,
        KeyProblem, LocalProblem, PathProblem, RequestProblem, StreamRecordReason,
        TableMismatchReason, TransactionProblem, TransportKind, TreeProblem, UpsertReason,
        VectorProblem,
    };
}
