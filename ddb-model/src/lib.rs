//! A typed ORM for single-table DynamoDB designs.
//!
//! Derive [`Entity`] on a plain struct, write its keys as templates, and get compile-time
//! checked key builders, typed conditions and updates, and repository methods. Every DynamoDB
//! limit is checked before a request leaves the process; every bad input or foreign item is a
//! typed [`Error`].
//!
//! ```
//! use ddb_model::prelude::*;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Table)]
//! #[table(name = "app", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
//! struct App;
//!
//! #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
//! #[entity(table = App, pk = "USER#<id>", sk = "PROFILE", version = version)]
//! #[index(gsi1, pk = "ORG#<org>", sk = "USER#<name>")]
//! struct User {
//!     id: String,
//!     org: String,
//!     name: String,
//!     nickname: Option<String>,
//!     logins: u64,
//!     version: u64,
//! }
//!
//! async fn demo(db: &Db<App>) -> Result<(), Error> {
//!     let mut ann = User {
//!         id: "ann".into(), org: "acme".into(), name: "Ann".into(),
//!         nickname: None, logins: 0, version: 0,
//!     };
//!     ann.create(db).await?;                      // Error::AlreadyExists if present
//!     assert_eq!(ann.version, 1);
//!     assert_eq!(User::get(db, "ann").await?.as_ref(), Some(&ann));
//!
//!     let updated = User::update(db, "ann")
//!         .set(User::NICKNAME, "annie")
//!         .add(User::LOGINS, 1)
//!         .condition(User::ORG.eq("acme"))
//!         .await?;
//!     assert_eq!((updated.logins, updated.version), (1, 2));
//!
//!     let err = ann.replace(db).await.unwrap_err(); // ann is at version 1, the item at 2
//!     assert!(err.is_version_conflict());
//!     User::delete(db, "ann").await?;
//!     Ok(())
//! }
//! # #[cfg(feature = "local")]
//! # #[tokio::main]
//! # async fn main() -> Result<(), Error> {
//! #     demo(&ddb_model::local::isolated_db::<App>().await?).await
//! # }
//! # #[cfg(not(feature = "local"))]
//! # fn main() {}
//! ```
//!
//! # Declaring a table
//!
//! `#[derive(Table)]` on a unit struct describes the physical table. Every key is optional:
//!
//! | key | meaning | default |
//! | --- | --- | --- |
//! | `name = "app"` | default physical table name ([`Db::with_table_name`] overrides it) | the struct name |
//! | `pk = "pk"`, `sk = "sk"` | key attribute names | `pk`, `sk` |
//! | `no_sort_key` | the table has a partition key only | |
//! | `type_attr = "_type"` | attribute holding each item's entity type | `_type` |
//! | `gsi(name = "..", pk = "..", sk = "..")` | a global secondary index (`sk` optional); repeatable | none |
//!
//! Entities that name no table use [`DefaultTable`]: `pk`/`sk`, `_type`, and `gsi1`..`gsi3`
//! keyed by `gsiNpk`/`gsiNsk`.
//!
//! # Declaring an entity
//!
//! `#[derive(Entity)]` needs `Serialize` and `Deserialize` too (fields are stored through
//! serde, so serde's `rename`, `rename_all`, `skip` and `default` apply).
//!
//! | attribute | meaning |
//! | --- | --- |
//! | `#[entity(pk = "USER#<id>")]` | partition key template (required) |
//! | `#[entity(sk = "PROFILE")]` | sort key template (required when the table has a sort key) |
//! | `#[entity(table = App)]` | the table type (default [`DefaultTable`]) |
//! | `#[entity(name = "User")]` | entity type written to every item (default: the struct name) |
//! | `#[entity(version = version)]` | optimistic locking on an integer field |
//! | `#[index(gsi1, pk = "ORG#<org>", sk = "USER#<name>")]` | keys of the item in an index the table declares; repeatable |
//!
//! The derive generates, on the struct:
//!
//! - `User::key(id) -> Key<User>` taking the key fields in order of first appearance (values,
//!   references, or `&str` for `String` fields), and `user.key()` (through [`Entity`]);
//! - `User::parse_key(pk, sk)` returning the key fields, rejecting keys the templates did not
//!   produce;
//! - one typed attribute per stored field, named after it in upper case (`User::NICKNAME`,
//!   an [`Attr`]) for conditions and updates; fields used in a key, and the version field, are
//!   read-only in updates;
//! - repository methods: `User::get(&db, id)`, `user.create(&db)`, `user.put(&db)`,
//!   `user.replace(&db)`, `User::update(&db, id)`, `User::delete(&db, id)` (versioned entities
//!   take `&mut self` so the new version is stored in the value);
//! - query constructors, one per access path (see [Queries](#queries)).
//!
//! # Queries
//!
//! Every access path of an entity (the table's primary key, and each `#[index]`) gets a query
//! constructor taking the partition-key fields, then one method per sort-key placeholder, in
//! template order. For `#[entity(pk = "<country>", sk = "<state>#<city>#<zip>")] struct
//! Store` the derive generates:
//!
//! | call | sort-key condition |
//! | --- | --- |
//! | `Store::query(&db, country)` | the whole partition (sort keys starting with the template's leading literal, if any) |
//! | `.state(s)` | `begins_with(sk, "<s>#")` — whole components only: `NY` never matches `NYC` |
//! | `.state(s).city(c)` | `begins_with(sk, "<s>#<c>#")` |
//! | `.state(s).city(c).zip(z)` | `sk = "<s>#<c>#<z>"` (the last placeholder gives the full key) |
//! | `.state(s).city_between(a, b)`, `_gt`, `_ge`, `_lt`, `_le` | a range on the next level |
//! | `.state(s).city_begins_with(p)` | the next level starts with `p` |
//! | `Store::partition(&db, country)` | every `Store` of the partition, whatever its sort key |
//!
//! Each level is its own type (`StoreQuery<'_, 0>`, `StoreQuery<'_, 1>`, ...), so a level
//! cannot be skipped: `Store::query(&db, "USA").city("OMAHA")` does not compile. Indexes get
//! `User::query_gsi1(&db, org)` / `User::partition_gsi1(&db, org)` and their own level type
//! (`UserGsi1Query`), on which `consistent()` does not exist (indexes are eventually
//! consistent). Placeholders that the partition key or an earlier level already fixes end
//! the levels there.
//!
//! Ranges compare the encoded text of the component (UTF-8 bytes, separators and `%` escaped),
//! which is the natural order for integers, dates, UUIDs and separator-free strings. They are
//! exact over the whole of Unicode, U+10FFFF and characters that sort below the separator
//! included: the service condition is a superset and each item's component is checked. `""`
//! is the smallest value: `_ge("")` is the whole level, and a range that holds nothing
//! (`_lt("")`) sends no request.
//!
//! Any level (or [`Query`]) then takes [`limit`](Query::limit),
//! [`page_size`](Query::page_size), [`reverse`](Query::reverse), typed
//! [`filter`](Query::filter)s, [`project`](Query::project),
//! [`consistent`](Query::consistent) (table only), and runs with [`all`](Query::all) (or
//! `.await`), [`first`](Query::first), [`count`](Query::count), [`stream`](Query::stream)
//! (a `futures` stream, one request per page) or [`page`](Query::page) (items and an opaque,
//! URL-safe [`Cursor`] bound to the query). An entity's query reads only items of its type;
//! [`collection`](Query::collection) reads several entity types of a partition as a
//! [`Collection`] enum in one request.
//!
//! # Key templates
//!
//! A template is literal text and `<field>` placeholders. The rules, all checked at compile
//! time: the template is not empty; every placeholder names a stored field whose type
//! implements [`KeyPart`] (for an index key, `Option` of one: the item is left out of the index
//! when it is `None`); two placeholders have text between them, and the text after a
//! placeholder starts with a separator, one of `# / | ~ :`.
//!
//! At run time, each value's text has `%` and the separators escaped (`a#b` is written
//! `a%23b`). A value can therefore never contain a raw separator: keys are injective, keys
//! parse back unambiguously, and a prefix ending at a separator is component-exact.
//! Integers are written at a fixed width per type (`u32` 7 is `0000000007`; negatives start
//! with `-` and an offset) so that byte order is numeric order.
//!
//! # Operations and errors
//!
//! Every operation goes through a [`Db`] (repository methods are thin wrappers) and is a
//! builder to `.await` (or `.send().await`). Writes are guarded: a write never overwrites an
//! item of another entity type ([`Error::WrongEntityType`]), `create` requires no item
//! ([`Error::AlreadyExists`] with the stored item), `replace` and `update` require one
//! ([`Error::NotFound`]), conditions and versions are checked
//! ([`Error::ConditionFailed`], [`Error::VersionConflict`]). Checks that need no request
//! (key sizes, empty keys, item size, expression mistakes) fail before anything is sent.
//!
//! When the SDK retries a request whose response was lost, the write may already have been
//! applied. `add` and `append` would then apply twice, so updates that use them are sent as a
//! one-action `TransactWriteItems` with an idempotency token. A retried `create`, `put` or
//! `replace` whose guard fails against exactly the item it writes reports success. A retried
//! conditional `update` or `delete` may still report a failed condition for a write that was
//! applied; the error carries the stored item.
//!
//! # Batches and scans
//!
//! [`Db::batch_get`] and [`Db::batch_read`] read many items with `BatchGetItem`,
//! [`Db::batch_write`] (and `batch_put`, `batch_delete`) write many with `BatchWriteItem`:
//! chunked, in parallel, unprocessed keys retried with backoff and reported in a typed error
//! when they stay unprocessed. `BatchWriteItem` takes no conditions, so batch writes are the
//! exception to the guards above: a batch put overwrites any item under its key, and entities
//! with a version field need `put_unchecked` (see [`ops::BatchWrite`]). [`Db::scan`] streams
//! every item of one entity type, in parallel segments; [`Db::scan_items`] every raw item.
//!
//! # Transactions
//!
//! [`Db::transaction`] builds one `TransactWriteItems` from any mix of `create`, `put`,
//! `replace`, `update`, `delete` and condition checks (`check`, `check_exists`,
//! `check_not_exists`, `check_version`) across the entity types of a table. Each action keeps
//! the guard of its single-item operation. Before sending, the builder checks the limits
//! (100 actions, one action per item, 4 MB, each item's keys and size). Every commit carries
//! an idempotency token, so an SDK retry after a lost response applies once. A canceled
//! transaction is [`Error::TransactionCanceled`], with one [`ActionReason`] per action: the
//! failed action's reason is the error its single-item operation would return (with the
//! stored item), or a conflict, throttling or validation reason. [`Db::transact_get`] reads
//! up to 100 keys atomically.
//!
//! ```
//! # use ddb_model::prelude::*;
//! # use serde::{Deserialize, Serialize};
//! #[derive(Entity, Serialize, Deserialize)]
//! #[entity(pk = "ACCOUNT#<id>", sk = "ACCOUNT")]
//! struct Account { id: String, balance: i64 }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Error> {
//! let db: Db = ddb_model::local::isolated_db().await?;
//! Account { id: "a".into(), balance: 100 }.create(&db).await?;
//! Account { id: "b".into(), balance: 0 }.create(&db).await?;
//! // Move 30 from a to b, only if a has enough: both or neither.
//! db.transaction()
//!     .update(Account::key("a"), |u| {
//!         u.add(Account::BALANCE, -30).condition(Account::BALANCE.ge(30))
//!     })
//!     .update(Account::key("b"), |u| u.add(Account::BALANCE, 30))
//!     .await?;
//! let err = db.transaction()
//!     .update(Account::key("a"), |u| {
//!         u.add(Account::BALANCE, -100).condition(Account::BALANCE.ge(100))
//!     })
//!     .update(Account::key("b"), |u| u.add(Account::BALANCE, 100))
//!     .await
//!     .unwrap_err();
//! assert!(err.is_condition_failed());
//! assert_eq!(err.failed_action().map(|r| r.action), Some(0));
//! assert_eq!(Account::get(&db, "a").await?.map(|a| a.balance), Some(70));
//! # Ok(()) }
//! ```
//!
//! # Trees
//!
//! `#[hierarchy(..)]` next to `#[derive(Entity)]` makes an entity the node type of a tree;
//! the partition key names the tree (one tree per drive, tenant, ...). Three strategies
//! share the operation names (`insert`, `get`, `children`, `descendants` with
//! `.depth(range)`, `ancestors`, `breadcrumbs`, `parent`, `at_depth`, `move_subtree`,
//! `delete_subtree`, `subtree_size`, `resume`), each on its own handle:
//!
//! | strategy | declaration | handle | nodes addressed by |
//! | --- | --- | --- | --- |
//! | path (default) | `#[hierarchy(path = path, index = gsi1)]`, `sk = "NODE#<path>"` | [`Tree`] | [`TreePath`] |
//! | closure | `#[hierarchy(strategy = closure, parent = manager)]`, `sk = "EMP#<id>"` | [`ClosureTree`] | id |
//! | adjacency | `#[hierarchy(strategy = adjacency, parent = parent, index = gsi1)]`, `sk = "CAT#<id>"` | [`AdjacencyTree`] | id |
//!
//! The generated `Node::tree(&db, ..partition fields)` returns the strategy's handle. The
//! parent field of the closure and adjacency strategies is an `Option` of the id type
//! (`None` for a top-level node). Optional `max_depth = n` (path: default and limit 128;
//! closure and adjacency: 96, so that an insert or a move fits one transaction). See
//! [`tree`] for the layouts and the guarantees.
//!
//! - **path**: the path in the sort key, a depth-keyed index for children and levels.
//!   Subtree and children are one query each; moves rewrite every moved node.
//! - **closure** (seed 002's replication pattern): one copy of each node under each ancestor
//!   with the relative depth in the copy's key, in the table, so children, a whole subtree
//!   and any range of relative depths are one (strongly consistent if asked) query that
//!   reads exactly the result. Writes cost one copy per level. A node's fields change
//!   through [`ClosureTree::replace`], which rewrites its copies in the same transaction
//!   (plain entity writes change the node's item only).
//! - **adjacency** (seed 001's adjacency list): the parent reference and an index on it.
//!   Inserts and moves are one transaction whatever the subtree; deeper reads go level by
//!   level.
//!
//! Measured on a 1,000-node tree (1 + 9 + 90 + 900 nodes) with the request counter, by
//! `cargo run --example tree_costs` (S is the number of nodes moved or deleted):
//!
//! | operation | path | closure | adjacency |
//! | --- | --- | --- | --- |
//! | children (10 of a 110-node subtree) | 1 Query, 10 items | 1 Query, 10 items | 1 Query, 10 items |
//! | whole subtree (110) | 1 Query, 110 items | 1 Query, 110 items | 11 Query (one per node with children), 110 items |
//! | depth range 1..=2 below the root (99) | 2 Query, 99 items | 1 Query, 99 items | 10 Query, 99 items |
//! | nodes at depth 3 (90) | 1 Query, 90 items | 1 Query, 90 items | 11 Query, 100 items |
//! | ancestors of a depth-4 node | 1 BatchGetItem, 3 items | 1 GetItem + 1 BatchGetItem, 4 items | 4 GetItem |
//! | subtree size (111) | 1 count Query + 1 GetItem | 1 count Query | 1 GetItem + 11 Query |
//! | insert | 1 TransactWriteItems | 1 GetItem + 1 TransactWriteItems | 1 TransactWriteItems |
//! | move of a 12-node team | 1 GetItem + 1 Query + 1 TransactWriteItems | 2 GetItem + 2 Query + 1 BatchGetItem + 1 TransactWriteItems | 3 GetItem (the destination's ancestors) + 1 TransactWriteItems |
//! | move of a division (100 to 112 nodes) | resumable: 4 fenced TransactWriteItems + 9 | resumable: 9 fenced TransactWriteItems + 12 | 3 GetItem + 1 TransactWriteItems |
//! | delete of an 11-node team | 1 GetItem + 1 Query + 1 TransactWriteItems | 1 GetItem + 2 Query + 1 BatchGetItem + 1 TransactWriteItems | 2 GetItem + 1 Query + 1 BatchGetItem + 1 TransactWriteItems |
//! | items stored per node at depth D | 1 | D + 2 (node, own copy, D copies) | 1 |
//!
//! (Pages aside: a query returns 1 MB per request.) Path moves and deletes are one
//! transaction up to 49 / 99 nodes; closure moves while `S * (Do + Dn + 3) + 3 <= 100` (Do,
//! Dn: the depths of the old and new parent), deletes while the subtree's items fit; beyond,
//! both go through the resumable protocol (`resume` finishes an interrupted one), whose
//! copies and deletes are transactions of up to 99 writes, each with a check of the intent
//! record's epoch, so a writer that recovery took over can no longer land a write.
//! Adjacency deletes go in transactions of 98 nodes.
//!
//! # Graph edges
//!
//! `#[derive(Edge)]` turns an entity into the edge of a graph (followers, likes, tags on
//! posts, links between devices): [`Edges`] links and unlinks both directions in one
//! transaction with optional degree counters, and reads outgoing and incoming edges, mutual
//! edges, neighbourhoods, shortest paths and recommendations. See [`edge`].
//!
//! # Testing and local development
//!
//! Feature `local` starts an embedded DynamoDB-compatible engine in-process, or uses the
//! endpoint in `DDB_ENDPOINT`; see [`local`].
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod db;
mod derive_support;
pub mod edge;
pub mod entity;
mod error;
pub mod expr;
pub mod item;
pub mod key;
#[cfg(feature = "local")]
pub mod local;
pub mod ops;
mod stats;
mod table;
pub mod tree;

pub use db::Db;
pub use entity::{Entity, VersionDef, VersionField};
pub use error::{Error, KeyProblem, TransportKind};
pub use expr::{Attr, AttrPath, AttrType, Condition, Path, RequestProblem, UpdateActions};
pub use item::Item;
pub use key::{Key, KeyArg, KeyPart, KeyPartError};
pub use ops::{ActionReason, CancelReason, TransactionProblem};
pub use ops::{BatchAction, BatchKey, UnprocessedWrite};
pub use ops::{Collection, Cursor, EntityQuery, OnIndex, OnTable, Page, Query};
pub use stats::{Op, RequestStats};
pub use table::{DefaultTable, IndexDef, Table};
pub use tree::{AdjacencyTree, ClosureTree, Hierarchy, IdHierarchy, Tree, TreePath};

pub use edge::{Edge, Edges};

/// Derive macros: `#[derive(Entity)]`, `#[derive(Table)]`, `#[derive(KeyPart)]`.
pub use ddb_model_derive::{Collection, Edge, Entity, KeyPart, Table};

/// Re-export of the SDK, for building clients and reading raw items.
pub use aws_sdk_dynamodb;

/// The traits and types most code needs: `use ddb_model::prelude::*;`.
pub mod prelude {
    pub use crate::{Collection, Condition, Cursor, Db, Entity, Error, Key, KeyPart, Page, Table};
    // The problem types an `Error` carries, for matching on.
    pub use crate::tree::{PathProblem, TreeProblem};
    pub use crate::{
        ActionReason, CancelReason, KeyProblem, RequestProblem, TransactionProblem, TransportKind,
    };
}

/// What generated code calls. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::db::Db;
    pub use crate::derive_support::*;
    pub use crate::entity::{Entity, VersionDef, VersionField, version_fns};
    pub use crate::error::Error;
    pub use crate::expr::{Attr, ReadOnly, Writable};
    pub use crate::expr::{Condition, Path};
    pub use crate::item::Item;
    pub use crate::key::{
        IndexArg, IndexKeyPart, Key, KeyArg, KeyPart, KeyPartError, KeyReader, KeyWriter,
        index_key_text, key_part,
    };
    pub use crate::ops::Target;
    pub use crate::ops::{AsCollection, AsItem, AsProjection, BoxFuture, Cursor, Page, Query};
    pub use crate::ops::{
        Collection, Delete, EntityQuery, Get, KeyStart, OnIndex, OnTable, Put, QueryFrom, Update,
        item_type, unknown_type,
    };
    pub use core::ops::Bound::{self, Excluded, Included, Unbounded};
    pub use futures_util::stream::BoxStream;
    pub use serde::de::DeserializeOwned;
    pub use std::vec::Vec;

    pub use crate::tree::{
        AdjacencyTree, ClosureTree, IdHierarchy, IdTreeDef, TreeStrategy, adjacency_index_keys,
        parent_fns,
    };
    pub use crate::tree::{Hierarchy, Tree, TreeDef, TreePath, path_fns, tree_index_keys};

    /// Compiles only when `B` is stored in `A`'s table (item collections).
    pub const fn same_table<A: Entity, B: Entity<Table = A::Table>>() {}
    pub use crate::table::{IndexDef, Table, find_index, str_eq};

    // Graph edges (`#[derive(Edge)]`).
    pub use crate::edge::{
        CounterRef, Counters, Edge, EdgeSpec, Edges, InverseSpec, Seg, Templates, edge_counter,
        symmetric_endpoints,
    };
    pub use core::option::Option::{self, None, Some};
    pub use core::result::Result::{self, Err, Ok};
    pub use std::borrow::Cow;
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

    /// The table's index `name`.
    pub const fn table_index<E: Entity>(name: &str) -> Option<&'static IndexDef> {
        find_index::<E::Table>(name)
    }

    /// What the table uses `attr` for: 0 nothing, 1 partition key, 2 sort key, 3 entity type,
    /// 4 an index key.
    pub const fn table_attr_role<E: Entity>(attr: &str) -> u8 {
        crate::table::attribute_role::<E::Table>(attr)
    }

    /// Reads `item` as entity `E` (generated collections dispatch to this).
    pub fn entity_from_item<E: Entity>(item: crate::Item) -> Result<E, Error> {
        crate::entity::from_item::<E>(item)
    }

    /// The type attribute of the table of `E`.
    pub const fn table_type_attr<E: Entity>() -> &'static str {
        <E::Table as Table>::TYPE_ATTR
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
