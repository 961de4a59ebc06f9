//! Constant attributes (`#[entity(constant(..))]`), as ElectroDB tags its items: every write
//! path stores them (put, create, replace, upsert, batch, transaction, tree and edge writes),
//! and an item without one (or with another value) is not the entity's on every read (get,
//! query, collection, scan, count) and on every guarded write.

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::entity::to_item;
use ddb_model::prelude::*;
use ddb_model::{Collection, Edge, Item};
use serde::{Deserialize, Serialize};

use crate::support::{self, raw, s};

/// A table laid out as ElectroDB lays it out: the entity name in `__edb_e__`.
#[derive(Table)]
#[table(
    name = "electro",
    type_attr = "__edb_e__",
    gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk")
)]
struct Electro;

/// Two constants, one of them under a name that is no Rust identifier.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(
    table = Electro,
    name = "task",
    pk = "ORG#<org>",
    sk = "TASK#<id>",
    constant(__edb_v__ = "1", "edb tag" = "t")
)]
#[index(gsi1, pk = "STATUS#<status>", sk = "TASK#<id>")]
struct Task {
    org: String,
    id: String,
    title: String,
    status: String,
    #[serde(default)]
    done: bool,
}

impl Task {
    fn new(org: &str, id: &str) -> Task {
        Task {
            org: org.into(),
            id: id.into(),
            title: format!("title {id}"),
            status: "open".into(),
            done: false,
        }
    }
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Electro, name = "user", pk = "ORG#<org>", sk = "USER#<id>")]
#[entity(constant(__edb_v__ = "1"))]
struct User {
    org: String,
    id: String,
    name: String,
}

/// Told apart by its keys, and by a constant.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Electro, no_type_attr, pk = "NOTE#<id>", sk = "NOTE", constant(kind = "note"))]
struct Note {
    id: String,
    text: String,
}

#[derive(Collection, Debug)]
#[allow(dead_code)] // Read for their variant only.
enum OrgItems {
    User(User),
    Task(Task),
}

/// Not every variant is tagged by the table's type attribute: told apart on arrival.
#[derive(Collection, Debug)]
#[allow(dead_code)] // Read for their variant only.
enum Mixed {
    Task(Task),
    Note(Note),
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Electro, name = "dir", pk = "DRIVE#<drive>", sk = "DIR#<id>")]
#[entity(constant(__edb_v__ = "1"))]
#[hierarchy(strategy = closure, parent = parent)]
struct Dir {
    drive: String,
    id: String,
    parent: Option<String>,
}

#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Electro, name = "follow", pk = "USER#<follower>", sk = "FOLLOWS#<followee>")]
#[entity(constant(__edb_v__ = "1"))]
#[edge(
    from = follower,
    to = followee,
    inverse(pk = "USER#<followee>", sk = "FOLLOWER#<follower>")
)]
struct Follow {
    follower: String,
    followee: String,
}

fn text<'a>(item: &'a Item, attr: &str) -> Option<&'a str> {
    item.get(attr).and_then(|v| v.as_s().ok()).map(String::as_str)
}

/// The stored task `id` of org `o`, read with the SDK.
async fn raw_task(db: &Db<Electro>, id: &str) -> Item {
    let key = Task::key("o", id);
    raw(db, key.pk(), key.sk().unwrap_or_default()).await.expect("stored")
}

fn assert_tagged(item: &Item) {
    assert_eq!(text(item, "__edb_e__"), Some("task"), "{item:?}");
    assert_eq!(text(item, "__edb_v__"), Some("1"), "{item:?}");
    assert_eq!(text(item, "edb tag"), Some("t"), "{item:?}");
}

#[tokio::test]
async fn every_write_path_stores_the_constants() -> Result<(), Error> {
    let db = support::db::<Electro>().await;
    Task::new("o", "create").create(&db).await?;
    Task::new("o", "put").put(&db).await?;
    Task::new("o", "replace").create(&db).await?;
    let mut replaced = Task::new("o", "replace");
    replaced.title = "again".into();
    replaced.replace(&db).await?;
    // An upsert that creates the item writes them; one of the item it created keeps them.
    let created =
        Task::update(&db, "o", "upsert").upsert().set(Task::TITLE, "t").set(Task::STATUS, "open");
    assert_eq!(created.await?.title, "t");
    Task::update(&db, "o", "upsert").set(Task::DONE, true).await?;
    let again = Task::update(&db, "o", "upsert").upsert().set(Task::TITLE, "u");
    again.set_if_not_exists(Task::STATUS, "open").await?;
    db.batch_write().put(&Task::new("o", "batch")).await?;
    db.transaction()
        .create(&Task::new("o", "tx-create"))
        .put(&Task::new("o", "tx-put"))
        .update(Task::key("o", "put"), |u| u.set(Task::DONE, true))
        .await?;
    for id in ["create", "put", "replace", "upsert", "batch", "tx-create", "tx-put"] {
        let item = raw_task(&db, id).await;
        assert_tagged(&item);
        // What the struct reads back does not see them.
        assert_eq!(Task::get(&db, "o", id).await?.map(|t| t.id), Some(id.to_owned()));
    }
    let upserted = raw_task(&db, "upsert").await;
    assert_eq!(
        (text(&upserted, "title"), upserted.get("done")),
        (Some("u"), Some(&AttributeValue::Bool(true)))
    );

    // A tree's node items hold the node entity's constants; its copies are not the node's.
    let tree = Dir::tree(&db, "d");
    tree.insert(&Dir { drive: "d".into(), id: "root".into(), parent: None }).await?;
    tree.insert(&Dir { drive: "d".into(), id: "a".into(), parent: Some("root".into()) }).await?;
    let items = db.scan_items().all().await?;
    let dirs: Vec<&Item> = items.iter().filter(|i| text(i, "__edb_e__") == Some("dir")).collect();
    assert_eq!(dirs.len(), 2, "{items:?}");
    assert!(dirs.iter().all(|i| text(i, "__edb_v__") == Some("1")), "{dirs:?}");
    let copies: Vec<&Item> = items
        .iter()
        .filter(|i| text(i, "__edb_e__").is_some_and(|t| t.starts_with("dir") && t != "dir"))
        .collect();
    assert!(!copies.is_empty(), "a closure tree keeps copies: {items:?}");
    assert!(copies.iter().all(|i| !i.contains_key("__edb_v__")), "{copies:?}");
    let children = tree.children("root").all().await?;
    assert_eq!(children.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(), ["a"]);

    // An edge's own item holds them, its inverse item (of another type) does not.
    let follows = Follow::edges(&db);
    follows.link(&Follow { follower: "ann".into(), followee: "bob".into() }).await?;
    let forward = raw(&db, "USER#ann", "FOLLOWS#bob").await.expect("forward item");
    assert_eq!(
        (text(&forward, "__edb_e__"), text(&forward, "__edb_v__")),
        (Some("follow"), Some("1"))
    );
    let inverse = raw(&db, "USER#bob", "FOLLOWER#ann").await.expect("inverse item");
    assert!(!inverse.contains_key("__edb_v__"), "{inverse:?}");
    assert_eq!(follows.outgoing("ann").all().await?.len(), 1);
    assert_eq!(follows.incoming("bob").all().await?.len(), 1);
    Ok(())
}

/// Plants, next to task `ok`, a task item without `__edb_v__` (`missing`), one with another
/// value (`other`) and one without `edb tag` (`half`), as another writer would.
async fn planted(db: &Db<Electro>) -> Result<(), Error> {
    Task::new("o", "ok").create(db).await?;
    let foreign = |id: &str, change: &dyn Fn(&mut Item)| -> Result<Item, Error> {
        let mut item = to_item(&Task::new("o", id), None)?;
        change(&mut item);
        Ok(item)
    };
    let missing = foreign("missing", &|i| {
        i.remove("__edb_v__");
    })?;
    let other = foreign("other", &|i| {
        i.insert("__edb_v__".into(), s("2"));
    })?;
    let half = foreign("half", &|i| {
        i.remove("edb tag");
    })?;
    for item in [missing, other, half] {
        support::put_raw(db, item).await;
    }
    Ok(())
}

#[tokio::test]
async fn an_item_without_the_constants_is_not_the_entitys() -> Result<(), Error> {
    let db = support::db::<Electro>().await;
    planted(&db).await?;
    User { org: "o".into(), id: "u".into(), name: "Ann".into() }.create(&db).await?;
    for id in ["missing", "other", "half"] {
        let err = Task::get(&db, "o", id).await.unwrap_err();
        assert!(
            matches!(&err, Error::WrongEntityType { expected: "task", found: None, .. }),
            "{id}: {err:?}"
        );
        assert!(err.to_string().contains("without the entity's type or constants"), "{err}");
    }
    // Queries, the index, scans and counts skip them, on the server (a tagged entity's
    // count is the service's `Select=COUNT`: it counts only what the filter keeps).
    let ids = |tasks: Vec<Task>| tasks.into_iter().map(|t| t.id).collect::<Vec<_>>();
    assert_eq!(ids(Task::partition(&db, "o").all().await?), ["ok"]);
    assert_eq!(Task::partition(&db, "o").count().await?, 1);
    assert_eq!(ids(Task::query_gsi1(&db, "open").all().await?), ["ok"]);
    assert_eq!(ids(db.scan::<Task>().all().await?), ["ok"]);
    assert_eq!(db.scan::<Task>().count().await?, 1);
    // A collection of only its types skips them; a collection of every item names them.
    let only = Task::partition(&db, "o").collection_only::<OrgItems>().all().await?;
    assert_eq!(only.len(), 2, "{only:?}");
    assert_eq!(Task::partition(&db, "o").collection_only::<OrgItems>().count().await?, 2);
    // A collection with a keys-identified variant tells its items apart on arrival, by
    // their constants too: its count reads what that needs, and counts what `all` reads.
    let mixed = Task::partition(&db, "o").collection_only::<Mixed>();
    assert_eq!(mixed.all().await?.len(), 1);
    let mixed = Task::partition(&db, "o").collection_only::<Mixed>();
    assert_eq!(mixed.count().await?, 1);
    let err = Task::partition(&db, "o").collection::<OrgItems>().all().await.unwrap_err();
    assert!(matches!(err, Error::UnknownEntityType { .. }), "{err:?}");

    // Writes leave them alone: each guarded write of the key is refused, nothing written.
    let before = support::snapshot(&db).await;
    let refused = [
        Task::update(&db, "o", "missing").set(Task::TITLE, "x").await.map(drop).unwrap_err(),
        Task::update(&db, "o", "other")
            .upsert()
            .set(Task::TITLE, "x")
            .set(Task::STATUS, "open")
            .await
            .map(drop)
            .unwrap_err(),
        Task::delete(&db, "o", "half").await.map(drop).unwrap_err(),
        Task::new("o", "missing").put(&db).await.map(drop).unwrap_err(),
        Task::new("o", "other").replace(&db).await.map(drop).unwrap_err(),
    ];
    for err in refused {
        assert!(matches!(err, Error::WrongEntityType { expected: "task", .. }), "{err:?}");
    }
    assert_eq!(support::snapshot(&db).await, before, "nothing written");
    Ok(())
}

#[tokio::test]
async fn an_entity_told_apart_by_its_keys_checks_its_constants() -> Result<(), Error> {
    let db = support::db::<Electro>().await;
    Note { id: "n1".into(), text: "one".into() }.create(&db).await?;
    let stored = raw(&db, "NOTE#n1", "NOTE").await.expect("stored");
    assert_eq!(text(&stored, "kind"), Some("note"));
    assert!(!stored.contains_key("__edb_e__"), "no tag: {stored:?}");
    Note::update(&db, "n1").set(Note::TEXT, "uno").await?;
    assert_eq!(Note::get(&db, "n1").await?.map(|n| n.text), Some("uno".into()));

    let mut other = to_item(&Note { id: "n2".into(), text: "two".into() }, None)?;
    other.insert("kind".into(), s("memo"));
    support::put_raw(&db, other).await;
    let err = Note::get(&db, "n2").await.unwrap_err();
    assert!(matches!(err, Error::WrongEntityType { found: None, .. }), "{err:?}");
    assert_eq!(Note::partition(&db, "n2").all().await?.len(), 0);
    assert_eq!(Note::partition(&db, "n2").count().await?, 0);
    // Counting reads what the check needs: the constant, not only the keys.
    assert_eq!(Note::partition(&db, "n1").count().await?, 1);
    assert_eq!(db.scan::<Note>().count().await?, 1);
    let before = support::snapshot(&db).await;
    for err in [
        Note::update(&db, "n2").set(Note::TEXT, "x").await.map(drop).unwrap_err(),
        Note::update(&db, "n2").upsert().set(Note::TEXT, "x").await.map(drop).unwrap_err(),
        Note::delete(&db, "n2").await.map(drop).unwrap_err(),
        Note { id: "n2".into(), text: "x".into() }.put(&db).await.map(drop).unwrap_err(),
    ] {
        assert!(matches!(err, Error::WrongEntityType { expected: "Note", .. }), "{err:?}");
    }
    assert_eq!(support::snapshot(&db).await, before, "nothing written");
    // The item is taken over by writing its constant (as a migration would).
    let mut fixed = raw(&db, "NOTE#n2", "NOTE").await.expect("stored");
    fixed.insert("kind".into(), s("note"));
    support::put_raw(&db, fixed).await;
    assert_eq!(Note::get(&db, "n2").await?.map(|n| n.text), Some("two".into()));
    Ok(())
}

#[test]
fn the_constants_are_declared_data() {
    let tags: Vec<(&str, &str)> = Task::CONSTANTS.iter().map(|c| (c.attr, c.value)).collect();
    assert_eq!(tags, [("__edb_v__", "1"), ("edb tag", "t")]);
    assert!(<Dir as Entity>::CONSTANTS.len() == 1 && User::CONSTANTS[0].value == "1");
    let item = to_item(&Task::new("o", "x"), None).expect("item");
    assert_tagged(&item);
    let back: Task = ddb_model::entity::from_item(item.clone()).expect("reads back");
    assert_eq!(back, Task::new("o", "x"));
    let mut wrong = item;
    wrong.insert("edb tag".into(), AttributeValue::N("1".into()));
    let err = ddb_model::entity::from_item::<Task>(wrong).unwrap_err();
    assert!(matches!(err, Error::WrongEntityType { found: None, .. }), "{err:?}");
}

#[test]
fn the_model_export_shows_the_constants() {
    let model = ddb_model::tooling::TableModel::of::<Electro>().entity::<Task>();
    assert_eq!(model.entities[0].constants, Task::CONSTANTS);
    let mermaid = model.mermaid();
    assert!(mermaid.contains("__edb_v__") && mermaid.contains("constant: 1"), "{mermaid}");
}

proptest::proptest! {
    /// An item is a `Task` exactly when it holds both constants with their values, whatever
    /// else it holds under those names (absent, another string, a number).
    #[test]
    fn an_item_is_the_entitys_only_with_every_constant(
        version in proptest::option::of(proptest::prop_oneof!["1", "2", "", "1 "]),
        tag in proptest::option::of(proptest::prop_oneof!["t", "T", "u"]),
        numeric in proptest::bool::ANY,
    ) {
        let mut item = to_item(&Task::new("o", "p"), None).expect("item");
        let value = |v: &str| if numeric { AttributeValue::N(v.into()) } else { s(v) };
        for (attr, held) in [("__edb_v__", &version), ("edb tag", &tag)] {
            match held {
                Some(v) => item.insert(attr.into(), value(v)),
                None => item.remove(attr),
            };
        }
        let mine = !numeric && version.as_deref() == Some("1") && tag.as_deref() == Some("t");
        let read = ddb_model::entity::from_item::<Task>(item);
        proptest::prop_assert_eq!(read.is_ok(), mine, "{:?}", read);
        if let Err(err) = read {
            let wrong = matches!(err, Error::WrongEntityType { found: None, .. });
            proptest::prop_assert!(wrong, "{:?}", err);
        }
    }
}
