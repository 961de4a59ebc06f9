//! Set fields (`#[serde(default, with = "ddb_model::set")]`): stored as DynamoDB sets, and
//! elements added and deleted by typed updates.

use std::collections::{BTreeSet, HashSet};

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::prelude::*;
use ddb_model::{DefaultTable, Op, UpdateActions};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::support;

/// Bytes that serialize as a binary value (what `serde_bytes::ByteBuf` does).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Bytes(Vec<u8>);

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Bytes, E> {
                Ok(Bytes(v.to_vec()))
            }
            fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
        }
        d.deserialize_byte_buf(V)
    }
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "TAGGED#<id>", sk = "TAGGED", version = version)]
pub struct Tagged {
    id: String,
    #[serde(default, with = "ddb_model::set")]
    tags: BTreeSet<String>,
    #[serde(default, with = "ddb_model::set")]
    scores: HashSet<i64>,
    #[serde(default, with = "ddb_model::set")]
    blobs: BTreeSet<Bytes>,
    #[serde(default, with = "ddb_model::set")]
    maybe: Option<BTreeSet<u32>>,
    logins: u64,
    version: u64,
}

fn tagged(id: &str) -> Tagged {
    Tagged {
        id: id.into(),
        tags: BTreeSet::new(),
        scores: HashSet::new(),
        blobs: BTreeSet::new(),
        maybe: None,
        logins: 0,
        version: 0,
    }
}

fn strings(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

async fn stored(db: &Db<DefaultTable>, id: &str) -> ddb_model::Item {
    support::raw(db, &format!("TAGGED#{id}"), "TAGGED").await.expect("stored")
}

#[tokio::test]
async fn empty_sets_are_stored_as_no_attribute_and_read_back_empty() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let mut t = tagged("a");
    t.create(&db).await?;
    let item = stored(&db, "a").await;
    for attr in ["tags", "scores", "blobs", "maybe"] {
        assert!(!item.contains_key(attr), "{attr}: {item:?}");
    }
    assert_eq!(Tagged::get(&db, "a").await?.as_ref(), Some(&t));

    t.tags = strings(&["x", "y"]);
    t.scores = [3, -1].into();
    t.blobs = [Bytes(vec![0, 255]), Bytes(vec![])].into();
    t.maybe = Some([7].into());
    t.replace(&db).await?;
    let item = stored(&db, "a").await;
    assert!(matches!(&item["tags"], AttributeValue::Ss(s) if s.len() == 2), "{item:?}");
    assert!(matches!(&item["scores"], AttributeValue::Ns(s) if s.len() == 2), "{item:?}");
    assert!(matches!(&item["blobs"], AttributeValue::Bs(s) if s.len() == 2), "{item:?}");
    assert!(matches!(&item["maybe"], AttributeValue::Ns(s) if s == &["7"]), "{item:?}");
    assert_eq!(Tagged::get(&db, "a").await?.as_ref(), Some(&t));
    Ok(())
}

#[tokio::test]
async fn add_to_set_creates_the_set_and_keeps_each_element_once() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    tagged("a").create(&db).await?;
    let before = db.requests();
    let t = Tagged::update(&db, "a")
        .add_to_set(Tagged::TAGS, ["b", "a", "b"])
        .add_to_set(Tagged::SCORES, [1, 2])
        .add_to_set(Tagged::BLOBS, [Bytes(vec![1])])
        .add_to_set(Tagged::MAYBE, [5u32])
        .await?;
    assert_eq!(
        (db.requests() - before).get(Op::UpdateItem),
        1,
        "idempotent: one UpdateItem, no marker"
    );
    assert_eq!(t.tags, strings(&["a", "b"]));
    assert_eq!(t.scores, [1, 2].into());
    assert_eq!(t.blobs, [Bytes(vec![1])].into());
    assert_eq!(t.maybe, Some([5].into()));
    assert_eq!(t.version, 2);

    // Again, with elements already there: each stays once.
    let t = Tagged::update(&db, "a").add_to_set(Tagged::TAGS, ["a", "c"]).await?;
    assert_eq!(t.tags, strings(&["a", "b", "c"]));
    assert_eq!(Tagged::get(&db, "a").await?.as_ref(), Some(&t));
    Ok(())
}

#[tokio::test]
async fn deleting_the_last_element_removes_the_attribute_and_the_entity_still_reads()
-> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let mut t = tagged("a");
    t.tags = strings(&["x", "y"]);
    t.scores = [1].into();
    t.create(&db).await?;

    let t = Tagged::update(&db, "a").delete_from_set(Tagged::TAGS, ["x", "absent"]).await?;
    assert_eq!(t.tags, strings(&["y"]));
    let t = Tagged::update(&db, "a")
        .delete_from_set(Tagged::TAGS, ["y"])
        .delete_from_set(Tagged::SCORES, [1])
        .delete_from_set(Tagged::MAYBE, [9u32]) // absent attribute: no error
        .await?;
    assert!(t.tags.is_empty() && t.scores.is_empty() && t.maybe.is_none());
    let item = stored(&db, "a").await;
    assert!(!item.contains_key("tags") && !item.contains_key("scores"), "{item:?}");
    assert_eq!(Tagged::get(&db, "a").await?.as_ref(), Some(&t));
    Ok(())
}

#[tokio::test]
async fn replace_set_writes_a_set_and_an_empty_one_removes_it() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    tagged("a").create(&db).await?;
    let t = Tagged::update(&db, "a").replace_set(Tagged::TAGS, ["p", "q"]).await?;
    assert_eq!(t.tags, strings(&["p", "q"]));
    assert!(matches!(stored(&db, "a").await["tags"], AttributeValue::Ss(_)));
    // Still a set: elements can be added.
    let t = Tagged::update(&db, "a").add_to_set(Tagged::TAGS, ["r"]).await?;
    assert_eq!(t.tags, strings(&["p", "q", "r"]));
    let t = Tagged::update(&db, "a").replace_set(Tagged::TAGS, Vec::<String>::new()).await?;
    assert!(t.tags.is_empty());
    assert!(!stored(&db, "a").await.contains_key("tags"));
    Ok(())
}

#[tokio::test]
async fn set_elements_mix_with_markers_and_transactions() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    tagged("a").create(&db).await?;
    // `add` makes the update a marked one: the set action rides along in the same UpdateItem.
    let t = Tagged::update(&db, "a")
        .add(Tagged::LOGINS, 1)
        .add_to_set(Tagged::TAGS, ["m"])
        .delete_from_set(Tagged::SCORES, [4])
        .await?;
    assert_eq!((t.logins, t.tags.clone()), (1, strings(&["m"])));
    let item = stored(&db, "a").await;
    assert!(!item.keys().any(|k| k.starts_with("_ddbm")), "markers removed: {item:?}");

    // no_return: a transaction with a token.
    Tagged::update(&db, "a")
        .add(Tagged::LOGINS, 1)
        .add_to_set(Tagged::TAGS, ["n"])
        .no_return()
        .await?;
    // In a transaction, through prepared actions.
    let actions =
        UpdateActions::new().add_to_set(Tagged::TAGS, ["o"]).delete_from_set(Tagged::TAGS, ["m"]);
    let err = db.transaction().update(Tagged::key("a"), |u| u.actions(actions)).await.unwrap_err();
    assert!(err.is_invalid_input(), "ADD and DELETE of one path overlap: {err}");
    let actions =
        UpdateActions::new().add_to_set(Tagged::TAGS, ["o"]).add_to_set(Tagged::SCORES, [8]);
    db.transaction().update(Tagged::key("a"), |u| u.actions(actions)).await?;
    let t = Tagged::get(&db, "a").await?.expect("stored");
    assert_eq!((t.logins, t.tags, t.scores), (2, strings(&["m", "n", "o"]), [8].into()));
    Ok(())
}

#[tokio::test]
async fn invalid_elements_are_refused_before_sending() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    tagged("a").create(&db).await?;
    let before = support::snapshot(&db).await;
    let refused = |err: Error| match err {
        Error::InvalidRequest { path, problem } => (path, problem),
        other => panic!("expected InvalidRequest, got {other:?}"),
    };
    let none: [&str; 0] = [];
    let err = crate::no_request!(
        db,
        Tagged::update(&db, "a").add_to_set(Tagged::TAGS, none).await.unwrap_err()
    );
    assert_eq!(refused(err), ("tags".into(), RequestProblem::EmptySet));
    let err = crate::no_request!(
        db,
        Tagged::update(&db, "a").delete_from_set(Tagged::SCORES, [0i64; 0]).await.unwrap_err()
    );
    assert_eq!(refused(err), ("scores".into(), RequestProblem::EmptySet));
    // Elements of another type than the first, or that are no string, number or binary (an
    // attribute typed by hand: generated ones fix the element type).
    let mixed: ddb_model::Attr<Tagged, HashSet<serde_json::Value>> = ddb_model::Attr::new("tags");
    for (elements, found) in [
        (vec![serde_json::json!("a"), serde_json::json!(1)], "N"),
        (vec![serde_json::json!(true)], "BOOL"),
        (vec![serde_json::json!({"a": 1})], "M"),
    ] {
        let err = crate::no_request!(
            db,
            Tagged::update(&db, "a").add_to_set(mixed, elements).await.unwrap_err()
        );
        assert_eq!(refused(err), ("tags".into(), RequestProblem::NotASetElement { found }));
    }
    let err = crate::no_request!(
        db,
        Tagged::update(&db, "a")
            .add_to_set(Tagged::TAGS, ["x"])
            .add_to_set(Tagged::TAGS, ["y"])
            .await
            .unwrap_err()
    );
    assert!(matches!(refused(err).1, RequestProblem::OverlappingPaths { .. }));
    assert_eq!(support::snapshot(&db).await, before, "nothing written");

    // The empty string and empty binary are elements like any other.
    let t = Tagged::update(&db, "a")
        .add_to_set(Tagged::TAGS, [""])
        .add_to_set(Tagged::BLOBS, [Bytes(vec![])])
        .await?;
    assert_eq!((t.tags, t.blobs), (strings(&[""]), [Bytes(vec![])].into()));
    Ok(())
}
