//! Lifecycle timestamps (`#[entity(created_at = .., updated_at = ..)]`): every write path
//! sets them from the handle's clock (a fixed, stepped clock here), in the same request as
//! the write; `&mut` targets hold what was stored; moves keep them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::prelude::*;
use ddb_model::{DefaultTable, Edge, Op, TreePath, tree::ClosureTree};
use serde::{Deserialize, Serialize};

use crate::support::{self, n, raw};

/// A clock tests step by hand: seconds since the epoch.
#[derive(Clone)]
struct Clock(Arc<AtomicU64>);

impl Clock {
    fn new(secs: u64) -> Clock {
        Clock(Arc::new(AtomicU64::new(secs)))
    }
    fn set(&self, secs: u64) {
        self.0.store(secs, Ordering::SeqCst);
    }
    fn install<T: Table>(&self, db: Db<T>) -> Db<T> {
        let at = Arc::clone(&self.0);
        db.with_clock(move || UNIX_EPOCH + Duration::from_secs(at.load(Ordering::SeqCst)))
    }
}

const T1: u64 = 1_800_000_000;
const T2: u64 = 1_800_000_100;
const T3: u64 = 1_800_000_200;

fn ms(secs: u64) -> i64 {
    i64::try_from(secs * 1000).expect("fits")
}

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

/// Integer milliseconds for one, `SystemTime` for the other: both stored forms at once.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "NOTE#<id>", sk = "NOTE", created_at = created, updated_at = updated)]
struct Note {
    id: String,
    body: String,
    #[serde(rename = "createdAt")]
    created: i64,
    updated: SystemTime,
}

impl Note {
    fn new(id: &str, body: &str) -> Note {
        Note { id: id.into(), body: body.into(), created: 0, updated: UNIX_EPOCH }
    }
}

/// Only `updated_at`, as an `Option` (unset: `None`).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "TAG#<id>", sk = "TAG", updated_at = touched)]
struct Tag {
    id: String,
    label: String,
    touched: Option<u64>,
}

async fn stored_created(db: &Db, id: &str) -> Option<AttributeValue> {
    raw(db, &format!("NOTE#{id}"), "NOTE").await.and_then(|mut i| i.remove("createdAt"))
}

#[tokio::test]
async fn create_put_and_replace_set_the_times_in_one_request() -> Result<(), Error> {
    let clock = Clock::new(T1);
    let db = clock.install(support::db::<DefaultTable>().await);

    // create: both set, whatever the value holds; the value holds them afterwards.
    let mut note = Note { created: 42, ..Note::new("a", "one") };
    db.reset_requests();
    note.create(&db).await?;
    assert_eq!(db.requests().get(Op::PutItem), 1);
    assert_eq!(db.requests().total(), 1);
    assert_eq!((note.created, note.updated), (ms(T1), at(T1)));
    assert_eq!(stored_created(&db, "a").await, Some(n(ms(T1))));
    assert_eq!(Note::get(&db, "a").await?, Some(note.clone()));

    // put of a value that was read: created kept, updated moves.
    clock.set(T2);
    note.body = "two".into();
    note.put(&db).await?;
    assert_eq!((note.created, note.updated), (ms(T1), at(T2)));
    assert_eq!(Note::get(&db, "a").await?, Some(note.clone()));

    // replace: the same.
    clock.set(T3);
    note.replace(&db).await?;
    assert_eq!((note.created, note.updated), (ms(T1), at(T3)));
    assert_eq!(Note::get(&db, "a").await?, Some(note.clone()));

    // put of a value built without a time: both set.
    let mut fresh = Note::new("b", "new");
    fresh.put(&db).await?;
    assert_eq!((fresh.created, fresh.updated), (ms(T3), at(T3)));
    assert_eq!(Note::get(&db, "b").await?, Some(fresh));

    // A failed write leaves the value as it was.
    let mut dup = Note::new("a", "dup");
    clock.set(T3 + 1);
    let err = dup.create(&db).await.unwrap_err();
    assert!(matches!(err, Error::AlreadyExists { .. }), "{err:?}");
    assert_eq!((dup.created, dup.updated), (0, UNIX_EPOCH));
    Ok(())
}

#[tokio::test]
async fn updates_set_updated_and_upserts_created_if_not_exists() -> Result<(), Error> {
    let clock = Clock::new(T1);
    let db = clock.install(support::db::<DefaultTable>().await);
    Note::new("a", "one").create(&db).await?;

    clock.set(T2);
    db.reset_requests();
    let note = Note::update(&db, "a").set(Note::BODY, "two").await?;
    assert_eq!(db.requests().total(), 1);
    assert_eq!((note.body.as_str(), note.created, note.updated), ("two", ms(T1), at(T2)));

    // An upsert that creates: both set.
    clock.set(T3);
    let made = Note::update(&db, "b").upsert().set(Note::BODY, "made").await?;
    assert_eq!((made.created, made.updated), (ms(T3), at(T3)));
    // An upsert of an existing item: created kept.
    clock.set(T3 + 5);
    let again = Note::update(&db, "b").upsert().set(Note::BODY, "again").await?;
    assert_eq!((again.created, again.updated), (ms(T3), at(T3 + 5)));
    assert_eq!(Note::get(&db, "b").await?, Some(again));

    // An update returning nothing writes the same; a plain update of a missing item is
    // refused and creates nothing.
    clock.set(T3 + 9);
    let mut tag = Tag { id: "t".into(), label: "x".into(), touched: None };
    tag.put(&db).await?;
    assert_eq!(tag.touched, Some(ms_u(T3 + 9)));
    clock.set(T3 + 10);
    db.reset_requests();
    Tag::update(&db, "t").set(Tag::LABEL, "y").no_return().await?;
    assert_eq!(db.requests().get(Op::UpdateItem), 1);
    let read = Tag::get(&db, "t").await?.expect("stored");
    assert_eq!((read.label.as_str(), read.touched), ("y", Some(ms_u(T3 + 10))));
    let err = Tag::update(&db, "none").set(Tag::LABEL, "y").no_return().await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
    assert!(raw(&db, "TAG#none", "TAG").await.is_none());
    Ok(())
}

fn ms_u(secs: u64) -> u64 {
    secs * 1000
}

#[tokio::test]
async fn batch_puts_and_transactions_stamp_every_item() -> Result<(), Error> {
    let clock = Clock::new(T1);
    let db = clock.install(support::db::<DefaultTable>().await);
    let kept = Note { created: ms(T1 - 50), ..Note::new("kept", "imported") };
    db.batch_write().put(&Note::new("a", "1")).put(&kept).await?;
    let a = Note::get(&db, "a").await?.expect("a");
    assert_eq!((a.created, a.updated), (ms(T1), at(T1)));
    let k = Note::get(&db, "kept").await?.expect("kept");
    assert_eq!((k.created, k.updated), (ms(T1 - 50), at(T1)), "an import keeps its created time");

    // A transaction: a create through `&mut` holds the times once committed, an update
    // sets `updated`, a put of a read value keeps `created`.
    clock.set(T2);
    let mut b = Note::new("b", "2");
    let mut k2 = k.clone();
    db.reset_requests();
    db.transaction()
        .create(&mut b)
        .put(&mut k2)
        .update(Note::key("a"), |u| u.set(Note::BODY, "1b"))
        .await?;
    assert_eq!(db.requests().total(), 1);
    assert_eq!((b.created, b.updated), (ms(T2), at(T2)));
    assert_eq!((k2.created, k2.updated), (ms(T1 - 50), at(T2)));
    assert_eq!(Note::get(&db, "b").await?, Some(b));
    assert_eq!(Note::get(&db, "kept").await?, Some(k2));
    let a = Note::get(&db, "a").await?.expect("a");
    assert_eq!((a.body.as_str(), a.created, a.updated), ("1b", ms(T1), at(T2)));

    // A cancelled transaction leaves the values as they were.
    clock.set(T3);
    let mut c = Note::new("c", "3");
    let mut dup = Note::new("b", "dup");
    let err = db.transaction().create(&mut c).create(&mut dup).await.unwrap_err();
    assert!(matches!(err, Error::TransactionCanceled { .. }), "{err:?}");
    assert_eq!((c.created, dup.created), (0, 0));
    assert!(Note::get(&db, "c").await?.is_none());
    Ok(())
}

#[tokio::test]
async fn a_clock_the_field_cannot_hold_is_refused_before_sending() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await.with_clock(|| UNIX_EPOCH - Duration::from_secs(1));
    db.reset_requests();
    // `u64` milliseconds cannot hold a time before the epoch.
    let mut tag = Tag { id: "t".into(), label: "x".into(), touched: None };
    let err = tag.put(&db).await.unwrap_err();
    let before_epoch = |err: &Error| {
        matches!(
            err,
            Error::InvalidRequest {
                problem: RequestProblem::ClockOutOfRange { seconds: -1, .. },
                ..
            }
        )
    };
    assert!(before_epoch(&err), "{err:?}");
    assert!(err.to_string().contains("1s before the Unix epoch"), "{err}");
    let err = Tag::update(&db, "t").set(Tag::LABEL, "y").no_return().await.unwrap_err();
    assert!(before_epoch(&err), "{err:?}");
    assert_eq!(db.requests().total(), 0);
    // `i64` milliseconds can.
    let mut note = Note { updated: at(1), ..Note::new("n", "b") };
    let err = note.create(&db).await.unwrap_err();
    assert!(before_epoch(&err), "SystemTime cannot either: {err:?}");
    assert_eq!(db.requests().total(), 0);
    Ok(())
}

// ---- trees -------------------------------------------------------------------------------

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "SPACE#<space>", sk = "PAGE#<path>", created_at = created, updated_at = updated)]
#[hierarchy(path = path, index = gsi1)]
struct Page {
    space: String,
    path: TreePath,
    created: i64,
    updated: i64,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "ORG#<org>", sk = "UNIT#<id>", created_at = created, updated_at = updated)]
#[hierarchy(strategy = closure, parent = parent)]
struct Unit {
    org: String,
    id: String,
    parent: Option<String>,
    name: String,
    created: i64,
    updated: i64,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "CAT#<catalog>", sk = "ADJ#<id>", created_at = created, updated_at = updated)]
#[hierarchy(strategy = adjacency, parent = parent, index = gsi2)]
struct Shelf {
    catalog: String,
    id: String,
    parent: Option<String>,
    created: i64,
    updated: i64,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "CAT#<catalog>", sk = "NEST#<id>", created_at = created, updated_at = updated)]
#[hierarchy(strategy = nested_set, parent = parent, index = gsi3)]
struct Bin {
    catalog: String,
    id: String,
    parent: Option<String>,
    created: i64,
    updated: i64,
}

fn unit(id: &str, parent: Option<&str>) -> Unit {
    Unit {
        org: "o".into(),
        id: id.into(),
        parent: parent.map(Into::into),
        name: id.into(),
        created: 0,
        updated: 0,
    }
}

#[tokio::test]
async fn tree_inserts_updates_and_loads_stamp_and_moves_keep_the_times() -> Result<(), Error> {
    let clock = Clock::new(T1);
    let db = clock.install(support::db::<DefaultTable>().await);

    // Path strategy: insert through `&mut`, a bulk load, a move (the copy keeps the times).
    let pages = Page::tree(&db, "s");
    let mut root =
        Page { space: "s".into(), path: "a".parse().expect("path"), created: 0, updated: 0 };
    pages.insert(&mut root).await?;
    assert_eq!((root.created, root.updated), (ms(T1), ms(T1)));
    clock.set(T2);
    let loaded = ["a/b", "a/b/c"].map(|p| Page {
        space: "s".into(),
        path: p.parse().expect("path"),
        created: 0,
        updated: 0,
    });
    pages.bulk_load(loaded).await?;
    clock.set(T3);
    pages.move_to_top(&"a/b".parse().expect("path")).await?;
    let moved = pages.get(&"b/c".parse().expect("path")).await?.expect("moved");
    assert_eq!((moved.created, moved.updated), (ms(T2), ms(T2)), "a move keeps the times");

    // Closure strategy: insert, replace and update write the node and its copies at once.
    clock.set(T1);
    let units: ClosureTree<'_, Unit> = Unit::tree(&db, "o");
    units.insert(&unit("top", None)).await?;
    let mut child = unit("kid", Some("top"));
    units.insert(&mut child).await?;
    assert_eq!((child.created, child.updated), (ms(T1), ms(T1)));
    clock.set(T2);
    child.name = "renamed".into();
    units.replace(&mut child).await?;
    assert_eq!((child.created, child.updated), (ms(T1), ms(T2)));
    clock.set(T3);
    units.update("kid").set(Unit::NAME, "again").await?;
    let got = units.get("kid").await?.expect("kid");
    assert_eq!((got.name.as_str(), got.created, got.updated), ("again", ms(T1), ms(T3)));
    // The copy under the parent (what `children` reads) carries the same times.
    let kids = units.children("top").await?;
    assert_eq!(kids, vec![got.clone()]);
    clock.set(T3 + 1);
    units.move_to_top("kid").await?;
    assert_eq!(units.get("kid").await?.map(|u| (u.created, u.updated)), Some((ms(T1), ms(T3))));

    // Adjacency and nested set: insert through `&mut`; a load sets unset times.
    clock.set(T1);
    let shelves = Shelf::tree(&db, "c");
    let mut s1 =
        Shelf { catalog: "c".into(), id: "s1".into(), parent: None, created: 0, updated: 0 };
    shelves.insert(&mut s1).await?;
    assert_eq!((s1.created, s1.updated), (ms(T1), ms(T1)));
    let bins = Bin::tree(&db, "c");
    let mut b1 = Bin { catalog: "c".into(), id: "b1".into(), parent: None, created: 0, updated: 0 };
    bins.insert(&mut b1).await?;
    assert_eq!(bins.get("b1").await?, Some(b1.clone()));
    assert_eq!((b1.created, b1.updated), (ms(T1), ms(T1)));
    clock.set(T2);
    let imported = Bin {
        catalog: "c".into(),
        id: "b2".into(),
        parent: Some("b1".into()),
        created: ms(7),
        updated: 0,
    };
    bins.bulk_load([imported]).await?;
    let b2 = bins.get("b2").await?.expect("b2");
    assert_eq!((b2.created, b2.updated), (ms(7), ms(T2)));
    clock.set(T3);
    shelves
        .insert(&Shelf {
            catalog: "c".into(),
            id: "s2".into(),
            parent: None,
            created: 0,
            updated: 0,
        })
        .await?;
    shelves.move_under("s2", "s1").await?;
    let s2 = shelves.get("s2").await?.expect("s2");
    assert_eq!((s2.parent.as_deref(), s2.created, s2.updated), (Some("s1"), ms(T3), ms(T3)));
    Ok(())
}

// ---- edges -------------------------------------------------------------------------------

#[derive(Table)]
#[table(name = "lifecycle_graph")]
struct Graph;

#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Graph, pk = "U#<from>", sk = "WATCHES#<to>", created_at = since, updated_at = changed)]
#[edge(from = from, to = to, inverse(pk = "U#<to>", sk = "WATCHED_BY#<from>"))]
struct Watch {
    from: String,
    to: String,
    level: u8,
    since: i64,
    changed: i64,
}

#[tokio::test]
async fn edge_links_and_updates_stamp_both_items() -> Result<(), Error> {
    let clock = Clock::new(T1);
    let db = clock.install(support::db::<Graph>().await);
    let watches = Watch::edges(&db);
    watches
        .link(&Watch { from: "a".into(), to: "b".into(), level: 1, since: 0, changed: 0 })
        .await?;
    let fwd = raw(&db, "U#a", "WATCHES#b").await.expect("forward");
    let inv = raw(&db, "U#b", "WATCHED_BY#a").await.expect("inverse");
    for item in [&fwd, &inv] {
        assert_eq!(item.get("since"), Some(&n(ms(T1))));
        assert_eq!(item.get("changed"), Some(&n(ms(T1))));
    }
    // A second link changes nothing.
    clock.set(T2);
    watches
        .link(&Watch { from: "a".into(), to: "b".into(), level: 1, since: 0, changed: 0 })
        .await?;
    assert_eq!(raw(&db, "U#a", "WATCHES#b").await.expect("forward"), fwd);

    clock.set(T3);
    db.reset_requests();
    watches.update("a", "b").set(Watch::LEVEL, 2).await?;
    assert_eq!(db.requests().total(), 1);
    for (pk, sk) in [("U#a", "WATCHES#b"), ("U#b", "WATCHED_BY#a")] {
        let item = raw(&db, pk, sk).await.expect("item");
        assert_eq!(item.get("level"), Some(&n(2)), "{pk}");
        assert_eq!(item.get("since"), Some(&n(ms(T1))), "{pk}");
        assert_eq!(item.get("changed"), Some(&n(ms(T3))), "{pk}");
    }
    Ok(())
}
