//! Graph edges: relationships between nodes kept consistent in both directions.
//!
//! An edge is an entity whose own key is the *forward* direction: the partition of the node it
//! starts at, one item per target (`pk = "USER#<follower>"`, `sk = "FOLLOWS#<followee>"`).
//! `#[derive(Edge)]` with `#[edge(..)]` names the two endpoint fields and how the edges of a
//! node are found from the other side:
//!
//! | `#[edge(..)]` | incoming edges of a node are | link writes | incoming reads |
//! | --- | --- | --- | --- |
//! | `inverse(pk = "..", sk = "..")` | materialised *inverse* items with their own key templates | both items, one transaction | strongly consistent |
//! | `inverse(index = gsi1)` | the edge items, through an index whose keys invert them (`#[index(gsi1, ..)]`) | one item | eventually consistent |
//! | `symmetric` | the forward items of the other node: `a - b` is stored as `a -> b` and `b -> a` | both items, one transaction | strongly consistent |
//! | `inverse = none` | not stored: a one-directional edge (a like, a star, a reaction) | one item (and the counters), one transaction | do not compile ([`Incoming`]) |
//!
//! ```
//! use ddb_model::prelude::*;
//! use ddb_model::{Edge, Op};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Entity, Serialize, Deserialize, Debug)]
//! #[entity(pk = "USER#<id>", sk = "PROFILE")]
//! struct User { id: String, following: u64, followers: u64 }
//!
//! /// `follower` follows `followee`. Its followers are found through inverse items in the
//! /// followee's partition; both users' counters move in the same transaction.
//! #[derive(Entity, Edge, Serialize, Deserialize, Debug)]
//! #[entity(pk = "USER#<follower>", sk = "FOLLOWS#<followee>")]
//! #[edge(
//!     from = follower,
//!     to = followee,
//!     inverse(pk = "USER#<followee>", sk = "FOLLOWER#<follower>"),
//!     from_count = User::FOLLOWING,
//!     to_count = User::FOLLOWERS,
//! )]
//! struct Follow { follower: String, followee: String, since: u32 }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Error> {
//! let db: Db = ddb_model::local::isolated_db().await?;
//! for id in ["ann", "bob", "cy", "dee"] {
//!     User { id: id.into(), following: 0, followers: 0 }.create(&db).await?;
//! }
//! let follows = db.edges::<Follow>(); // the same as `Follow::edges(&db)`
//! for (a, b) in [("ann", "bob"), ("bob", "ann"), ("cy", "bob"), ("ann", "cy"), ("ann", "dee")] {
//!     follows.link(&Follow { follower: a.into(), followee: b.into(), since: 2025 }).await?;
//! }
//! // Linking again changes nothing, counters included.
//! let again = follows.link(&Follow { follower: "ann".into(), followee: "bob".into(), since: 1 }).await?;
//! assert!(!again.is_new());
//!
//! let followers: Vec<String> =
//!     follows.incoming("bob").all().await?.into_iter().map(|f| f.follower).collect();
//! assert_eq!(followers, ["ann", "cy"]);
//! assert_eq!(follows.in_degree("bob").await?, 2); // the counter on bob's profile
//! assert!(follows.exists("ann", "bob").await?);
//! db.reset_requests();
//! let mutual: Vec<String> = follows.mutual("ann").page_size(10).ids().await?;
//! assert_eq!(mutual, ["bob"]);
//! assert_eq!(db.requests().get(Op::Query), 2); // one per list: ann follows 3, has 1 follower
//! // Outgoing edges are a query of ann's partition, sorted by target, in pages.
//! let page = follows.outgoing("ann").limit(2).page(None).await?;
//! assert_eq!(page.items.iter().map(|f| f.followee.as_str()).collect::<Vec<_>>(), ["bob", "cy"]);
//! assert_eq!(db.requests().get(Op::Query), 3);
//! let rest = follows.outgoing("ann").limit(2).page(page.next.as_ref()).await?;
//! assert_eq!(rest.items[0].followee, "dee");
//!
//! follows.unlink("ann", "bob").await?;
//! assert_eq!(User::get(&db, "bob").await?.map(|u| u.followers), Some(1));
//! # Ok(()) }
//! ```
//!
//! # Declaring an edge
//!
//! | key of `#[edge(..)]` | meaning |
//! | --- | --- |
//! | `from = field`, `to = field` | the endpoint fields (required). The entity's `pk` holds `<from>` and no other placeholder; its `sk` ends with `<to>` and holds no other placeholder |
//! | `inverse(pk = "..", sk = "..")` | materialised inverse items: `pk` holds only `<to>`, `sk` ends with `<from>` |
//! | `inverse(.., name = "Follower")` | the entity type stored on inverse items (default: the entity name and `~inverse`) |
//! | `inverse(.., fields(since, name))` | only these fields (besides the endpoints) are copied onto inverse items; the others must be `Option` or `#[serde(default)]` (default: every field) |
//! | `inverse(index = gsi1)` | incoming edges through the entity's `#[index(gsi1, ..)]`, whose `pk` holds only `<to>` and whose `sk` ends with `<from>` |
//! | `symmetric` | an undirected edge: `from` and `to` have the same type |
//! | `inverse = none` | a one-directional edge: no other direction is stored or read |
//! | `from_count = User::FOLLOWING`, `to_count = User::FOLLOWERS` | degree counters: integer fields of the node entities, keyed by the endpoint alone (`User::key(follower)`) |
//! | `count = Device::LINKS` | the degree counter of a symmetric edge (on both endpoints) |
//! | `to_count(User::FOLLOWERS, shards = 16)` (and `from_count(..)`, `count(..)`) | a [sharded](#sharded-counters) counter: 2 to [`MAX_SHARDS`] shard items |
//!
//! Counters are plain integer fields ([`Count`]; an `Option` would be stored as NULL, which
//! `ADD` cannot add to).
//!
//! Endpoint types are any [`KeyPart`]; a node keyed by several values can use a
//! `#[derive(KeyPart)]` type that holds them. Every rule is checked at compile time.
//!
//! # Guarantees
//!
//! - **One request per write.** [`link`](Edges::link), [`unlink`](Edges::unlink) and
//!   [`update`](Edges::update) are one `TransactWriteItems` each (a `PutItem` for a link that
//!   writes one item), carrying an idempotency token: an SDK retry after a lost response
//!   applies once.
//! - **Idempotent.** The forward item is the source of truth. A link puts it only if it is
//!   absent; when it is present the link is [`Linked::Existing`] and nothing changes, counters
//!   included. An unlink deletes it only if it is present; otherwise [`Unlinked::Absent`].
//!   Counters move in the same transaction as the forward item, so they move exactly once per
//!   edge created or removed, whatever the concurrency and the retries.
//! - **Both sides or neither.** The inverse item (or the mirrored item of a symmetric edge) is
//!   written and removed in the same transaction as the forward item. Transactions that
//!   conflict with concurrent ones are sent again (with backoff) before an error is returned.
//! - **Counters need their nodes.** A link fails with [`Error::TransactionCanceled`]
//!   (`is_not_found()`) when a counted node item does not exist; an unlink or a node removal
//!   skips the counter of a node item that no longer exists.
//! - **Typed errors, nothing written.** Keys, sizes and items are checked before sending; an
//!   item of another entity type under an edge key is [`Error::WrongEntityType`] and is left
//!   alone.
//!
//! A whole-item write of a node (`put`, `replace`) writes its counter fields too: change
//! counted nodes with `update`, which leaves the counters alone.
//!
//! # One-directional edges
//!
//! A like, a star or a reaction is often read from one side only, and counted on the other:
//! "does ann like this post", "the posts ann liked", "how many likes". `inverse = none`
//! stores only the forward item, the marker, and moves the counters with it. The marker
//! lives in the `from` node's partition: declare the direction by the list you need to read
//! (`from = post, to = user, from_count = Post::LIKES` lists a post's likers, `from = user,
//! to = post, to_count = Post::LIKES` a user's likes). Either endpoint may carry a counter,
//! both, or neither.
//!
//! Writes are those of every edge: [`link`](Edges::link) is idempotent and tells
//! [`is_new`](Linked::is_new); [`link_new`](Edges::link_new) reports an existing edge as
//! [`Error::AlreadyExists`] instead, and changes nothing; [`unlink`](Edges::unlink) and
//! [`update`](Edges::update) as above; [`remove_outgoing`](Edges::remove_outgoing) removes the
//! edges of a `from` node. The reads that go backwards need a stored other direction, so they
//! do not compile ([`Incoming`]); [`in_degree`](Edges::in_degree) reads the `to_count`
//! counter, and does not compile without one ([`InDegree`]).
//!
//! Why `inverse = none` rather than leaving `inverse` out: a forgotten inverse stays a
//! compile error at the declaration, and the declaration says which reads exist.
//!
//! ```
//! use ddb_model::prelude::*;
//! use ddb_model::{Edge, Op};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Entity, Serialize, Deserialize)]
//! #[entity(pk = "POST#<id>", sk = "POST")]
//! struct Post { id: u32, #[serde(default)] likes: u64 }
//!
//! /// `user` likes `post`: a marker in the post's partition, and the post's counter (sharded
//! /// 8 ways, see [below](#sharded-counters)).
//! #[derive(Entity, Edge, Serialize, Deserialize)]
//! #[entity(pk = "POST#<post>", sk = "LIKE#<user>")]
//! #[edge(from = post, to = user, inverse = none, from_count(Post::LIKES, shards = 8))]
//! struct Like { post: u32, user: String }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Error> {
//! let db: Db = ddb_model::local::isolated_db().await?;
//! Post { id: 1, likes: 0 }.create(&db).await?;
//! let likes = Like::edges(&db);
//! db.reset_requests();
//! for fan in ["ann", "bob", "cy"] {
//!     likes.link(&Like { post: 1, user: fan.into() }).await?;
//! }
//! assert_eq!(db.requests().get(Op::TransactWriteItems), 3); // a marker and a shard each
//! assert!(!likes.link(&Like { post: 1, user: "ann".into() }).await?.is_new());
//! let again = likes.link_new(&Like { post: 1, user: "ann".into() }).await;
//! assert!(again.unwrap_err().is_already_exists());
//! assert_eq!(likes.out_degree(1u32).await?, 3);
//! assert_eq!(db.requests().get(Op::BatchGetItem), 1); // the node item and 8 shards
//! assert!(likes.exists(1u32, "ann").await?);
//! likes.unlink(1u32, "ann").await?;
//! assert_eq!(likes.out_degree(1u32).await?, 2);
//! # Ok(()) }
//! ```
//!
//! # Sharded counters
//!
//! Every link to a node writes its counter, and one partition takes at most 1,000 write
//! units a second (a transactional write costs two): a celebrity's follower count is a hot
//! item. `to_count(User::FOLLOWERS, shards = 16)` spreads it over 16 shard items, each in a
//! partition of its own (`USER#bob#SHARD#0` .. `USER#bob#SHARD#15`, with the node's sort
//! key): shards in the node's partition would share its limit and gain nothing.
//!
//! - **Writes.** A link or an unlink stays one `TransactWriteItems`: the counter move is an
//!   `ADD` to one shard item (created by its first `ADD`). The shard is a stable hash
//!   (FNV-1a) of the *other* endpoint's key text, so an unlink moves the shard its link
//!   moved, and no shard goes negative. The node item is not checked (a check in every link
//!   would put the links back on the hot item): a link to a node item that does not exist is
//!   counted.
//! - **Reads.** [`in_degree`](Edges::in_degree) / [`out_degree`](Edges::out_degree) read the
//!   node item and every shard in one consistent `BatchGetItem` and sum them: one request,
//!   `shards + 1` items (each rounded up to 4 KB of read capacity) instead of one. A Query
//!   would be cheaper in capacity, but it reads one partition.
//! - **Migration.** The node item's own counter attribute is the *base* the shards add to:
//!   declaring an existing counter sharded keeps its counts, with no rewrite. (Unlinks of
//!   edges counted in the base then move a shard below zero; the sum stays exact.) Shards can
//!   be added later, since a count reads every shard below the new number; they cannot be
//!   removed.
//! - **Errors.** A node item or a shard item of another entity type is
//!   [`Error::WrongEntityType`] (the link writes nothing); a node key whose shard keys pass
//!   the key limit is [`Error::InvalidKey`] before anything is sent.
//!
//! The [one-directional example](#one-directional-edges) shards its counter.
//!
//! # Reads
//!
//! [`outgoing`](Edges::outgoing) and [`incoming`](Edges::incoming) are ordinary [`Query`]s
//! (streams, pages behind cursors, counts, filters), sorted by the other endpoint.
//! [`mutual`](Edges::mutual), [`common_targets`](Edges::common_targets) and
//! [`common_sources`](Edges::common_sources) merge two of them in one pass.
//! [`neighbourhood`](Edges::neighbourhood), [`shortest_path`](Edges::shortest_path) and
//! [`also_linked`](Edges::also_linked) traverse the graph with bounded concurrency and a
//! request budget. [`remove_node`](Edges::remove_node) removes every edge of a node in
//! resumable chunks.

/// `Startable` (run by `$send`) and `Future` for an edge builder whose fields are `running`,
/// the `take` fields (moved out, left empty) and the `copy` fields.
macro_rules! edge_future {
    (writes $($rest:tt)*) => {
        edge_future!(@ true; $($rest)*);
    };
    (@ $w:literal; [$($g:tt)*] $ty:ty => $raw:ty, $send:ident, take($($t:ident),*), copy($($c:ident),*)) => {
        impl<$($g)*> crate::ops::Startable<'a> for $ty {
            type Raw = $raw;
            const DRY_SENDS_READS: bool = $w;
            fn running(&mut self) -> &mut crate::ops::Running<'a, Self::Raw> {
                &mut self.running
            }
            fn take_settings(&mut self) -> Self {
                let running = crate::ops::Running::default();
                Self { $($t: std::mem::take(&mut self.$t),)* $($c: self.$c,)* running }
            }
            fn start(self) -> crate::ops::BoxFuture<'a, Self::Raw> {
                $crate::ops::boxed(|| self.$send())
            }
        }
        crate::ops::builder_future!([$($g)*] $ty => $raw, |r| r);
    };
    ($($rest:tt)*) => {
        edge_future!(@ false; $($rest)*);
    };
}

mod keys;
mod merge;
mod remove;
mod shard;
mod traverse;
mod write;

use std::fmt;
use std::marker::PhantomData;

pub use keys::AsIncoming;
pub use merge::{Merge, MergeKind};
pub use remove::{MAX_CHUNK, MAX_SHARDED_CHUNK, RemoveNode, Removed};
pub use shard::MAX_SHARDS;
pub use traverse::{Direction, Neighbourhood, Ranking, Reached, ShortestPath};
pub use write::{EdgeUpdate, LinkReport, Linked, Unlinked};

use crate::db::Db;
use crate::error::Error;
use crate::expr::{Attr, Writable};
use crate::key::{Key, KeyArg, KeyPart, KeySeg, KeyTemplate};
use crate::model::{Entity, Table};
use crate::ops::transact::{Explain, explain};
use crate::ops::{EntityQuery, Guard, OnIndex, OnTable, Query, WriteKind};
use crate::stats::Op;

/// An entity that is an edge of a graph. Derive it with `#[derive(Edge)]` next to
/// `#[derive(Entity)]`; see the [module documentation](crate::edge).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an edge",
    label = "add `#[derive(ddb_model::Edge)]` and an `#[edge(from = .., to = .., ..)]` attribute"
)]
pub trait Edge: Entity {
    /// The type of the node an edge starts at (the `from` field).
    type From: KeyPart + Send + Sync + 'static;
    /// The type of the node an edge ends at (the `to` field).
    type To: KeyPart + Send + Sync + 'static;
    /// Where incoming edges are read: [`OnTable`] for inverse items and symmetric edges,
    /// [`OnIndex`] for an index, [`OneWay`] for none (a one-directional edge).
    type IncomingOn: Send + Sync + 'static;
    /// The layout of the edge: templates, inverse, endpoint attributes.
    #[doc(hidden)]
    const SPEC: EdgeSpec;

    /// The node this edge starts at.
    fn source(&self) -> &Self::From;

    /// The node this edge ends at.
    fn target(&self) -> &Self::To;

    /// The degree counters of the endpoints that are given (none without counters: the
    /// derive writes this method only for an edge that declares some).
    #[doc(hidden)]
    fn counters(from: Option<&Self::From>, to: Option<&Self::To>) -> Counters {
        let _ = (from, to);
        Counters::default()
    }
}

/// The partition and sort key templates of one side of an edge, whose placeholders are the
/// endpoints: part 0 is the `from` node, part 1 the `to` node. Used by generated code.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Templates {
    pub pk: KeyTemplate,
    pub sk: KeyTemplate,
}

impl Templates {
    /// The templates `pk` and `sk` (texts as written, and their runs).
    pub const fn new(
        pk: &'static str,
        pk_segs: &'static [KeySeg],
        sk: &'static str,
        sk_segs: &'static [KeySeg],
    ) -> Self {
        Templates { pk: KeyTemplate::new(pk, pk_segs), sk: KeyTemplate::new(sk, sk_segs) }
    }
}

/// How the incoming edges of a node are stored. Used by generated code.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum InverseSpec {
    /// Materialised inverse items of entity type `name`, holding the endpoint fields and
    /// `fields` (every field when `None`).
    Items { key: Templates, name: &'static str, fields: Option<&'static [&'static str]> },
    /// The edge items, read through index `name`.
    Index { name: &'static str, key: Templates },
    /// A mirrored forward item per edge.
    Symmetric,
    /// None: a one-directional edge (`inverse = none`), found only from its `from` node.
    None,
}

/// The layout of an edge entity. Used by generated code.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct EdgeSpec {
    pub forward: Templates,
    pub inverse: InverseSpec,
    /// The stored attributes of the `from` and `to` fields.
    pub attrs: (&'static str, &'static str),
    /// True when a counter of the edge is sharded (`to_count(Node::FIELD, shards = n)`).
    pub sharded: bool,
}

/// Implemented when `Self` and `F` are one type: the endpoints of a symmetric edge. Used by
/// generated code.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "the endpoints of a symmetric edge have one type, but `to` is `{Self}` and `from` is `{F}`",
    label = "give `from` and `to` the same type",
    note = "a symmetric edge is stored from both ends: each endpoint is also the other"
)]
pub trait SameEndpoint<F> {}

impl<T> SameEndpoint<T> for T {}

/// Compiles only when both endpoints of a symmetric edge have one type.
#[doc(hidden)]
pub const fn symmetric_endpoints<F, T: SameEndpoint<F>>() {}

/// An edge whose incoming edges can be read: it declares `inverse(..)` or `symmetric`.
/// `#[derive(Edge)]` implements it; a one-directional edge (`inverse = none`) does not, so
/// the reads that go backwards ([`incoming`](Edges::incoming), [`mutual`](Edges::mutual),
/// [`common_sources`](Edges::common_sources), [`shortest_path`](Edges::shortest_path),
/// [`also_linked`](Edges::also_linked), [`recommend`](Edges::recommend), a traversal's
/// [`direction`](Neighbourhood::direction), [`remove_node`](Edges::remove_node),
/// [`remove_incoming`](Edges::remove_incoming)) do not compile for it.
///
/// Implemented for every edge whose [`IncomingOn`](Edge::IncomingOn) is
/// [`OnTable`] or [`OnIndex`]; a one-directional edge has [`OneWay`] there.
pub trait Incoming: Edge {}

impl<E: Edge> Incoming for E where E::IncomingOn: Backward {}

/// An edge whose in-degree can be read: it declares a `to_count` counter, or its incoming
/// edges can be counted ([`Incoming`]).
pub trait InDegree: Edge {}

impl<E: Edge> InDegree for E where E::IncomingOn: CountsIncoming {}

/// The [`IncomingOn`](Edge::IncomingOn) of a one-directional edge (`inverse = none`): its
/// incoming edges are not stored. `COUNTED` when it declares a `to_count`.
#[derive(Debug, Clone, Copy)]
pub struct OneWay<const COUNTED: bool>;

/// Where incoming edges can be read from. Used in bounds.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this edge is one-directional (`inverse = none`): the edges that end at a node cannot be read",
    label = "this reads edges backwards, from their `to` node",
    note = "to read them, declare where they are found instead of `inverse = none`: inverse(pk = \"..\", sk = \"..\") for inverse items, inverse(index = ..) for an index that inverts the keys, or `symmetric`"
)]
pub trait Backward {}

impl Backward for OnTable {}
impl Backward for OnIndex {}

/// Where the in-degree of a node can be read from. Used in bounds.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this edge is one-directional (`inverse = none`) without a `to_count`: the number of edges that end at a node cannot be read",
    label = "this counts edges by their `to` node",
    note = "declare `to_count = Node::FIELD` to keep the count on the node item, or an inverse (inverse(..) or `symmetric`) to count incoming edges"
)]
pub trait CountsIncoming {}

impl CountsIncoming for OnTable {}
impl CountsIncoming for OnIndex {}
impl CountsIncoming for OneWay<true> {}

/// A type a degree counter can have: a plain integer (an `Option` stores `None` as NULL, which
/// `ADD` cannot add to; `#[serde(default)]` reads node items written before the counter).
#[diagnostic::on_unimplemented(
    message = "a degree counter counts edges: it is an integer field, not `{Self}`",
    label = "give the counter field an integer type such as `u64`",
    note = "the counter moves by 1 per edge linked and by -1 per edge unlinked; an `Option` is stored as NULL when it is `None`, which cannot be added to: use a plain integer with #[serde(default)]"
)]
pub trait Count {}

macro_rules! count_types {
    ($($t:ty),*) => {$( impl Count for $t {} )*};
}
count_types!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);

/// A degree counter: a number field of a node item. Made by generated code.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct CounterRef {
    pub(crate) entity: &'static str,
    pub(crate) attr: &'static str,
    pub(crate) pk: String,
    pub(crate) sk: Option<String>,
    pub(crate) explain: Explain,
    /// How many shards the counter is spread over (1: not sharded).
    pub(crate) shards: u16,
    /// The shard this reference writes (`pk` is then the shard's partition).
    pub(crate) shard: Option<u16>,
}

/// The counter `attr` of node `key`, for edge `E` (the node must be stored in `E`'s table).
#[doc(hidden)]
pub fn edge_counter<E: Entity, N: Entity<Table = E::Table>, V: Count>(
    key: Key<N>,
    attr: Attr<N, V, Writable>,
) -> Result<CounterRef, Error> {
    key.validate()?;
    Ok(CounterRef {
        entity: N::NAME,
        attr: attr.name(),
        pk: key.pk().to_owned(),
        sk: key.sk().map(str::to_owned),
        explain: explain::<N>,
        shards: 1,
        shard: None,
    })
}

/// The counter `attr` of node `key`, for edge `E`, sharded `shards` ways (the derive checks
/// `2..=MAX_SHARDS`); the keys of every shard are checked here.
#[doc(hidden)]
pub fn edge_counter_sharded<E: Entity, N: Entity<Table = E::Table>, V: Count>(
    key: Key<N>,
    attr: Attr<N, V, Writable>,
    shards: u16,
) -> Result<CounterRef, Error> {
    shard::check_shard_keys(&key, shards)?;
    let counter = edge_counter::<E, N, V>(key, attr)?;
    Ok(CounterRef { shards: shards.clamp(1, MAX_SHARDS), ..counter })
}

/// The degree counters of an edge's endpoints. Made by generated code.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct Counters {
    pub(crate) from: Option<Result<CounterRef, Error>>,
    pub(crate) to: Option<Result<CounterRef, Error>>,
}

impl Counters {
    pub fn new(
        from: Option<Result<CounterRef, Error>>,
        to: Option<Result<CounterRef, Error>>,
    ) -> Self {
        Counters { from, to }
    }
}

/// The edges of entity `E`: writes that keep both directions consistent, and graph reads.
/// Made by [`Db::edges`] or the generated `E::edges(&db)`; cheap to copy.
///
/// Node arguments take what the endpoint's key constructor takes (the value, a reference,
/// or `&str` for a `String` node).
pub struct Edges<'a, E: Edge> {
    db: &'a Db<E::Table>,
    _edge: PhantomData<fn() -> E>,
}

impl<E: Edge> Clone for Edges<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E: Edge> Copy for Edges<'_, E> {}

impl<E: Edge> fmt::Debug for Edges<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Edges").field("edge", &E::NAME).field("db", self.db).finish()
    }
}

impl<T: Table> Db<T> {
    /// The edges of entity `E` in this table (see [`Edges`]; the [module example](crate::edge)
    /// uses it).
    pub fn edges<E: Edge<Table = T>>(&self) -> Edges<'_, E> {
        Edges { db: self, _edge: PhantomData }
    }
}

/// The key text of a node argument.
fn arg_text<T, A: KeyArg<T>>(arg: &A) -> String {
    arg.arg_key_text().into_owned()
}

/// The key text of a node value.
pub(crate) fn node_text<T: KeyPart>(node: &T) -> String {
    node.key_text().into_owned()
}

/// Reads a node value back from its key text: only a text the value writes back byte for
/// byte (as key parsing does).
pub(crate) fn parse_node<E: Edge, N: KeyPart>(attr: &'static str, text: &str) -> Result<N, Error> {
    use crate::error::KeyParseReason as Why;
    let error = |reason| Error::KeyParse {
        entity: E::NAME,
        attribute: attr,
        template: "<node>",
        input: text.to_owned(),
        reason: Box::new(reason),
    };
    let node = N::from_key_text(text).map_err(|e| error(Why::Part { field: None, problem: e }))?;
    if !N::CANONICAL_PARSE && node.key_text() != text {
        let type_name = std::any::type_name::<N>();
        return Err(error(Why::NotCanonical { field: None, text: text.into(), type_name }));
    }
    Ok(node)
}

impl<'a, E: Edge> Edges<'a, E> {
    /// The handle's database.
    pub fn db(&self) -> &'a Db<E::Table> {
        self.db
    }

    /// The edge from `from` to `to`, read consistently from its forward item (`None` when
    /// they are not linked). One `GetItem`.
    ///
    /// The example of a symmetric edge, also for [`update`](Edges::update) and
    /// [`neighbourhood`](Edges::neighbourhood):
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use ddb_model::Edge;
    /// # use serde::{Deserialize, Serialize};
    /// #[derive(Entity, Edge, Serialize, Deserialize)]
    /// #[entity(pk = "DEVICE#<a>", sk = "LINK#<b>")]
    /// #[edge(from = a, to = b, symmetric)]
    /// struct Cable { a: String, b: String, meters: u32 }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Error> {
    /// let db: Db = ddb_model::local::isolated_db().await?;
    /// let cables = Cable::edges(&db);
    /// for (a, b) in [("sw1", "sw2"), ("sw2", "sw3"), ("sw3", "sw4"), ("sw1", "sw5")] {
    ///     cables.link(&Cable { a: a.into(), b: b.into(), meters: 3 }).await?;
    /// }
    /// // A symmetric edge reads the same from both ends.
    /// let back = cables.get("sw2", "sw1").await?.expect("linked");
    /// assert_eq!((back.a.as_str(), back.b.as_str(), back.meters), ("sw2", "sw1", 3));
    /// assert!(cables.get("sw1", "sw3").await?.is_none());
    /// // An update changes both sides; the edge must exist.
    /// cables.update("sw1", "sw2").set(Cable::METERS, 5u32).await?;
    /// assert!(cables.get("sw2", "sw1").await?.is_some_and(|c| c.meters == 5));
    /// let absent = cables.update("sw1", "sw3").set(Cable::METERS, 1u32).await;
    /// assert!(absent.unwrap_err().is_not_found());
    /// // The nodes within 2 hops, by distance.
    /// let reached = cables.neighbourhood("sw1", 2).budget(20).await?;
    /// assert_eq!(reached.nodes, [("sw2".to_string(), 1), ("sw5".into(), 1), ("sw3".into(), 2)]);
    /// // Too small a budget is an error, not a partial answer.
    /// let err = cables.neighbourhood("sw1", 3).budget(2).await.unwrap_err();
    /// assert!(matches!(err, Error::BudgetExhausted { budget: 2, .. }));
    /// # Ok(()) }
    /// ```
    pub async fn get(
        &self,
        from: impl KeyArg<E::From>,
        to: impl KeyArg<E::To>,
    ) -> Result<Option<E>, Error> {
        let key = keys::forward_key::<E>(&arg_text(&from), &arg_text(&to));
        self.db.get(key).consistent().send().await
    }

    /// True when `from` is linked to `to` (a consistent `GetItem` of the forward item's key
    /// attributes).
    pub async fn exists(
        &self,
        from: impl KeyArg<E::From>,
        to: impl KeyArg<E::To>,
    ) -> Result<bool, Error> {
        let key = keys::forward_key::<E>(&arg_text(&from), &arg_text(&to));
        key.validate()?;
        let item = crate::ops::key_item(&key);
        let stored = get_attrs(self.db, item, &[<E::Table as Table>::PK]).await?;
        let Some(item) = stored else { return Ok(false) };
        keys::check_type::<E::Table>(Some(&item), E::NAME, E::NAME, || key.to_string())
            .map(|()| true)
    }

    /// The edges that start at `from`, sorted by their target: a query of `from`'s partition
    /// on the table (one request per page; `consistent()`, `page_size`, `limit`, `filter`,
    /// `stream`, `page(cursor)`, `count` as for any [`Query`]; paged in the
    /// [module example](crate::edge)).
    pub fn outgoing(&self, from: impl KeyArg<E::From>) -> EntityQuery<'a, E> {
        self.outgoing_text(&arg_text(&from))
    }

    pub(crate) fn outgoing_text(&self, from: &str) -> EntityQuery<'a, E> {
        crate::ops::table_query::<E, _>(self.db, keys::out_start::<E>(from))
    }

    /// The edges that end at `to`, sorted by their source: a query of the inverse items of
    /// `to` (strongly consistent reads allowed), of the index that inverts the edges
    /// (eventually consistent), or, for a symmetric edge, of `to`'s own edges read in the
    /// other direction.
    ///
    /// Does not compile for a one-directional edge (`inverse = none`, see [`Incoming`]).
    pub fn incoming(
        &self,
        to: impl KeyArg<E::To>,
    ) -> Query<'a, E::Table, AsIncoming<E>, E::IncomingOn>
    where
        E: Incoming,
    {
        self.incoming_text(&arg_text(&to))
    }

    pub(crate) fn incoming_text(
        &self,
        to: &str,
    ) -> Query<'a, E::Table, AsIncoming<E>, E::IncomingOn> {
        crate::ops::query_from::<E, AsIncoming<E>, E::IncomingOn>(self.db, keys::in_start::<E>(to))
    }

    /// The number of edges that start at `from`: its degree counter when the edge declares
    /// one (one consistent `GetItem`; a sharded counter is one consistent `BatchGetItem` of
    /// the node item and its shards, summed), else a consistent count query.
    pub async fn out_degree(&self, from: impl KeyArg<E::From>) -> Result<u64, Error> {
        let text = arg_text(&from);
        let node: E::From = parse_node::<E, _>(E::SPEC.attrs.0, &text)?;
        match E::counters(Some(&node), None).from {
            Some(counter) => self.read_counter(counter?).await,
            None => count(self.outgoing_text(&text).consistent().count().await?),
        }
    }

    /// The number of edges that end at `to`, read as [`out_degree`](Edges::out_degree) reads
    /// (else a count query of its incoming edges). A one-directional edge (`inverse = none`)
    /// needs its `to_count` for it (see [`InDegree`]).
    pub async fn in_degree(&self, to: impl KeyArg<E::To>) -> Result<u64, Error>
    where
        E: InDegree,
    {
        let text = arg_text(&to);
        let node: E::To = parse_node::<E, _>(E::SPEC.attrs.1, &text)?;
        match E::counters(None, Some(&node)).to {
            Some(counter) => self.read_counter(counter?).await,
            None => count(self.incoming_text(&text).count().await?),
        }
    }

    async fn read_counter(&self, counter: CounterRef) -> Result<u64, Error> {
        if counter.shards > 1 {
            return shard::read_sharded::<E>(self.db, &counter).await;
        }
        let key = write::key_attrs::<E::Table>(&counter.pk, counter.sk.as_deref());
        let stored = get_attrs(self.db, key, &[counter.attr]).await?;
        let guard = Guard { kind: WriteKind::Update, expected_version: None };
        let Some(item) = stored else {
            return Err((counter.explain)(guard, &counter.pk, counter.sk.as_deref(), None));
        };
        if crate::model::string_attr(&item, crate::model::type_attr::<E::Table>())
            != Some(counter.entity)
        {
            return Err((counter.explain)(guard, &counter.pk, counter.sk.as_deref(), Some(item)));
        }
        let n = shard::number(&counter, &item, &counter.pk)?;
        u64::try_from(n).map_err(|_| Error::CorruptItem {
            entity: counter.entity,
            key: crate::model::key_display(Some(&counter.pk), counter.sk.as_deref()),
            reason: crate::error::CorruptReason::NotACount {
                attribute: counter.attr,
                value: n.to_string(),
            },
        })
    }
}

/// A consistent `GetItem` of the attributes `attrs` and the entity type of the item `key`.
async fn get_attrs<T: Table>(
    db: &Db<T>,
    key: crate::item::Item,
    attrs: &[&str],
) -> Result<Option<crate::item::Item>, Error> {
    let mut b = crate::expr::ExprBuilder::default();
    let mut projection: Vec<String> = attrs.iter().map(|a| b.name(a)).collect();
    projection.push(b.name(crate::model::type_attr::<T>()));
    let (names, _) = b.finish();
    crate::ops::tenant::key(db, Op::GetItem, &key)?;
    let request = db
        .client()
        .get_item()
        .table_name(db.table_name())
        .set_key(Some(key))
        .projection_expression(projection.join(", "))
        .set_expression_attribute_names(names)
        .consistent_read(true)
        .set_return_consumed_capacity(db.capacity_mode());
    let out = crate::ops::retry::send(db, Op::GetItem, request).await?;
    Ok(out.item)
}

fn count(n: usize) -> Result<u64, Error> {
    Ok(u64::try_from(n).unwrap_or(u64::MAX))
}
