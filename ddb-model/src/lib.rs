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
//! The repository's `docs/` directory is the guide, one chapter per concern, whose examples
//! run as this crate's doctests: `keys.md` (tables, entities, key templates, index keys),
//! `queries.md`, `writes.md`, `trees.md`, `edges.md`, `adopting.md` (tables other code
//! wrote), `lifecycle.md` (timestamps, expiry, table options, schema versions) and
//! `operations.md` (AWS, errors, accounting, tracing, streams, tooling, tests).
//!
//! # Modules
//!
//! - [`entity`]: the [`Entity`] trait and the conversion between entities and raw items.
//! - [`key`]: key templates, [`KeyPart`] values and their encoding, typed keys ([`Key`]).
//! - [`expr`]: typed attribute paths, conditions and update expressions.
//! - [`item`]: raw items ([`Item`]) and their size as DynamoDB counts it.
//! - [`ops`]: the operations of a [`Db`]: items, queries, scans, batches, transactions, tables.
//! - [`tree`]: trees (`#[hierarchy]`) and their strategies, with the cost of each operation.
//! - [`edge`]: graph edges (`#[derive(Edge)]`): links, counters, reads and traversals.
//! - [`stream`]: DynamoDB Streams records read as the table's entities.
//! - `tooling` (feature `tooling`): the model as data (Mermaid, Markdown, NoSQL Workbench)
//!   and a command-line tool for your own `main`.
//! - [`local`]: the embedded engine for tests, examples and local development.
//! - [`prelude`]: the traits and types most code needs.
#![deny(missing_docs)]
#![warn(unreachable_pub)]

// Dependencies run one way, bottom up: the leaves escape, item and stats (they import nothing
// from the crate) and telemetry (stats only), then error, key, expr, model, db, ops, tree, edge; local aside. Each module
// imports only modules before it in that order (`shared/tools/modcycles.py` checks the cycles).
mod db;
mod derive_support;
pub mod edge;
mod error;
mod escape;
pub mod expr;
// The guide under `docs/` and the README, as doctests (only when rustdoc collects them).
#[cfg(doctest)]
mod guide;
pub mod item;
pub mod key;
#[cfg(feature = "local")]
pub mod local;
mod model;
pub mod ops;
mod stats;
pub mod stream;
mod telemetry;
#[cfg(feature = "tooling")]
pub mod tooling;
mod trace;
pub mod tree;

/// The [`Entity`] trait and the conversion between entities and raw items.
pub mod entity {
    pub use crate::model::{
        AttrArg, AttrKind, AttrPrefix, Entity, Expiry, ExpiryField, Identity, IndexAttribute,
        KeyAttr, MAX_EXPIRY_SECS, SchemaDef, Stamp, TextAttribute, TimestampField, TimestampsDef,
        TtlDef, TypeTag, UNVERSIONED, UniqueDef, UniqueField, UpgradeFn, VersionDef, VersionField,
        from_item, to_item,
    };
    #[doc(hidden)]
    pub use crate::model::{VersionFns, version_fns};
}

pub use db::Db;
pub use edge::{Edge, Edges};
pub use error::{
    ActionReason, BatchAction, BatchKey, CancelReason, Error, InternalProblem, KeyProblem,
    RequestProblem, RetryAdvice, Throttle, ThrottleLimit, ThrottledAccess, TransactionProblem,
    TransportKind, UnprocessedWrite, UpgradeError, VectorProblem,
};
pub use expr::{Attr, AttrPath, AttrType, Condition, Path, UpdateActions};
pub use item::{Item, set};
pub use key::{Key, KeyArg, KeyPart, KeyPartError};
pub use model::{
    AttrKind, DefaultTable, Entity, Expiry, ExpiryField, Identity, IndexAttribute, IndexDef,
    KeyAttr, MAX_EXPIRY_SECS, MAX_VECTOR_DIMS, Metric, SchemaDef, Table, TimestampField,
    TimestampsDef, TypeTag, UNVERSIONED, UniqueDef, UniqueField, UpgradeFn, VectorField,
    VectorIndexDef, VersionDef, VersionField,
};
pub use ops::{
    Collection, Cursor, EntityQuery, MAX_TOP_K, Nearest, OnIndex, OnTable, Page, Projection, Query,
    Scored,
};
pub use ops::{OnDemandMax, TableOptions, WarmThroughput};
pub use stats::{Op, OpStats, RequestStats, Stats, TargetStats};
#[doc(hidden)]
pub use tree::Tree;
pub use tree::{
    AdjacencyTree, ClosureTree, Hierarchy, IdHierarchy, NestedTree, PathTree, TreePath,
    TreeProtocol,
};

/// Derive macros: `#[derive(Entity)]`, `#[derive(Table)]`, `#[derive(KeyPart)]`.
pub use ddb_model_derive::{Collection, Edge, Entity, KeyPart, Projection, Table};

/// Re-export of the SDK, for building clients and reading raw items.
pub use aws_sdk_dynamodb;
/// The DynamoDB Streams SDK (feature `streams-sdk`), the version whose records
/// [`StreamRecord`](stream::StreamRecord) converts.
#[cfg(feature = "streams-sdk")]
pub use aws_sdk_dynamodbstreams;

/// Re-export of [`chrono`](https://docs.rs/chrono) (feature `chrono`, with chrono's `serde`
/// feature on), so that entity fields and key parts use the version ddb-model implements
/// [`KeyPart`] for: `ddb_model::chrono::DateTime<ddb_model::chrono::Utc>`.
#[cfg(feature = "chrono")]
pub use chrono;

/// Re-export of [`uuid`](https://docs.rs/uuid) (feature `uuid`, with uuid's `serde` feature
/// on), so that entity fields and key parts use the version ddb-model implements [`KeyPart`]
/// for: `ddb_model::uuid::Uuid`.
#[cfg(feature = "uuid")]
pub use uuid;

/// The traits and types most code needs: `use ddb_model::prelude::*;`.
pub mod prelude {
    pub use crate::{
        Collection, Condition, Cursor, Db, Entity, Error, Key, KeyPart, Page, Projection, Scored,
        Table,
    };
    // The problem types an `Error` carries, for matching on.
    pub use crate::tree::{PathProblem, TreeProblem};
    pub use crate::{
        ActionReason, CancelReason, InternalProblem, KeyProblem, RequestProblem,
        TransactionProblem, TransportKind, VectorProblem,
    };
}

/// What generated code calls. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::db::Db;
    pub use crate::derive_support::*;
    pub use crate::error::Error;
    pub use crate::expr::{Attr, ReadOnly, Writable};
    pub use crate::expr::{Condition, Path, UpdateActions};
    pub use crate::item::Item;
    pub use crate::key::{
        IndexArg, IndexKeyPart, Key, KeyArg, KeyPart, KeyPartError, KeyReader, KeySeg, KeyTemplate,
        PartText, index_key_text, key_part, lit, part, push_component, split_components,
        split_variant, verbatim,
    };
    pub use crate::model::{
        AttrShape, EntityShape, FieldShape, IndexShape, MultiIndexShape, TreeShape, VectorShape,
    };
    pub use crate::model::{Entity, Identity, TypeTag, VersionDef, VersionField, version_fns};
    pub use crate::model::{Expiry, ExpiryField, TtlDef, TtlFns, ttl_fns};
    pub use crate::model::{SchemaDef, UpgradeFn};
    pub use crate::model::{Stamp, TimestampField, TimestampsDef, stamp_now, stamp_value, stamped};
    pub use crate::model::{UniqueDef, UniqueField, UniqueText};
    pub use crate::ops::Target;
    pub use crate::ops::{AsCollection, AsItem, AsProjection, BoxFuture, Cursor, Page, Query};
    pub use crate::ops::{
        Collection, Delete, EntityQuery, Get, KeyStart, OnIndex, OnTable, Put, QueryFrom, Update,
        item_type, unknown_type,
    };
    pub use crate::ops::{
        ProjectedFields, Projection, ProjectsAs, Variant, collection_projection, projected_field,
        projection_variant,
    };
    pub use aws_sdk_dynamodb::types::AttributeValue;
    pub use core::ops::Bound::{self, Excluded, Included, Unbounded};
    pub use futures_util::stream::BoxStream;
    pub use serde::de::DeserializeOwned;
    pub use serde_dynamo::Error as SerdeDynamoError;
    pub use std::vec::Vec;

    pub use crate::tree::{
        AdjacencyTree, ClosureTree, IdHierarchy, IdTreeDef, NESTED_BOOKKEEPING_ATTRS, NestedTree,
        TreeStrategy, adjacency_index_keys, parent_fns,
    };
    pub use crate::tree::{
        Hierarchy, PathTree, TREE_BOOKKEEPING_ATTRS, Tree, TreeDef, TreePath, path_fns,
        tree_index_keys,
    };

    /// Compiles only when `B` is stored in `A`'s table (item collections).
    pub const fn same_table<A: Entity, B: Entity<Table = A::Table>>() {}
    /// Compiles only when variant `B` reads an entity of `A`'s table (item collections).
    pub const fn same_table_variant<A: Variant, B: Variant>()
    where
        B::Entity: Entity<Table = <A::Entity as Entity>::Table>,
    {
    }
    pub use crate::model::{
        AttrArg, AttrKind, AttrPrefix, IndexAttribute, IndexDef, KeyAttr, Metric, Table,
        VectorField, VectorIndexDef, find_index, find_vector_index, str_eq,
    };
    pub use crate::ops::{Nearest, nearest};

    // Graph edges (`#[derive(Edge)]`).
    pub use crate::edge::{
        CounterRef, Counters, Edge, EdgeSpec, Edges, InverseSpec, OneWay, Templates, edge_counter,
        edge_counter_sharded, symmetric_endpoints,
    };
    pub use core::option::Option::{self, None, Some};
    pub use core::result::Result::{self, Err, Ok};
    /// What a generated fallible step returns.
    pub type Done = Result<(), Error>;
    pub use std::borrow::{Cow, ToOwned};
    pub use std::string::String;

    // Generated code reaches the entity's table only through these helpers, generic over the
    // entity: a table type that is not a `Table` is then one error, at `type Table = ..`,
    // instead of one per use.

    /// The table's partition key attribute.
    pub const fn table_pk<E: Entity>() -> &'static str {
        <E::Table as Table>::PK
    }

    /// The table's sort key attribute.
    pub const fn table_sk<E: Entity>() -> Option<&'static str> {
        <E::Table as Table>::SK
    }

    /// The table's expiry attribute (`#[table(ttl = "..")]`).
    pub const fn table_ttl<E: Entity>() -> Option<&'static str> {
        <E::Table as Table>::TTL
    }

    /// The table's index `name`.
    pub const fn table_index<E: Entity>(name: &str) -> Option<&'static IndexDef> {
        find_index::<E::Table>(name)
    }

    /// The table's vector index `name`.
    pub const fn table_vector_index<E: Entity>(name: &str) -> Option<&'static VectorIndexDef> {
        find_vector_index::<E::Table>(name)
    }

    /// Compiles only for a type that holds a vector.
    pub const fn vector_field<T: VectorField>() {}

    /// What the table uses `attr` for: 0 nothing, 1 partition key, 2 sort key, 3 entity type,
    /// 4 an index key.
    pub const fn table_attr_role<E: Entity>(attr: &str) -> u8 {
        crate::model::attribute_role::<E::Table>(attr)
    }

    /// Whether `item` is one of `E`'s items, in one of a collection's two passes: first the
    /// entities tagged by an attribute (`keys` false), then those told apart by their keys.
    pub fn identifies<E: Entity>(item: &crate::Item, keys: bool) -> bool {
        E::IDENTITY.tag().is_none() == keys && crate::model::is_entity_item::<E>(item)
    }

    /// The position of the variant whose entity `item` is (`ids` holds each variant's
    /// [`identifies`]): a tagged one first, then one told apart by its keys.
    pub fn variant_of(item: &crate::Item, ids: &[fn(&crate::Item, bool) -> bool]) -> Option<usize> {
        ids.iter()
            .position(|id| id(item, false))
            .or_else(|| ids.iter().position(|id| id(item, true)))
    }

    /// True when `E`'s key templates read the key attributes of `keys`.
    pub fn parses_key<E: Entity>(keys: &crate::Item) -> bool {
        let text = |attr: &str| match keys.get(attr) {
            Some(AttributeValue::S(s)) => Some(s.as_str()),
            _ => None,
        };
        match text(<E::Table as Table>::PK) {
            Some(pk) => E::parse_key(pk, <E::Table as Table>::SK.and_then(text)).is_ok(),
            None => false,
        }
    }

    /// The type attribute of the table of `E`, if it has one.
    pub const fn table_type_attr<E: Entity>() -> Option<&'static str> {
        <E::Table as Table>::TYPE_ATTR
    }

    /// True when `E` is tagged by its table's type attribute: what trees and edges need.
    pub const fn tagged_by_table<E: Entity>() -> bool {
        match (<E::Table as Table>::TYPE_ATTR, E::IDENTITY) {
            (Some(attr), crate::model::Identity::Tagged(tag)) => str_eq(attr, tag.attr),
            _ => false,
        }
    }

    pub fn db_get<E: Entity>(db: &Db<E::Table>, key: Key<E>) -> Get<'_, E> {
        db.get(key)
    }

    pub fn db_update<E: Entity>(db: &Db<E::Table>, key: Key<E>) -> Update<'_, E> {
        db.update(key)
    }

    pub fn db_delete<E: Entity>(db: &Db<E::Table>, key: Key<E>) -> Delete<'_, E> {
        db.delete(key)
    }

    pub fn db_create<'a, E: Entity>(
        db: &'a Db<E::Table>,
        e: impl Into<Target<'a, E>>,
    ) -> Put<'a, E> {
        db.create(e)
    }

    pub fn db_put<'a, E: Entity>(db: &'a Db<E::Table>, e: impl Into<Target<'a, E>>) -> Put<'a, E> {
        db.put(e)
    }

    pub fn db_replace<'a, E: Entity>(
        db: &'a Db<E::Table>,
        e: impl Into<Target<'a, E>>,
    ) -> Put<'a, E> {
        db.replace(e)
    }
}
