//! A `None` is no attribute (issue 27): every write leaves it out, `set(field, None)` removes
//! it (and the index key and unique value it feeds), a `None` in a list stays `NULL`, items
//! stored with `NULL` still read as `None`, and the opt-ins (`#[entity(none_as_null)]`,
//! `#[table(none_as_null)]`) store `NULL`.

use std::collections::BTreeMap;

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::prelude::*;
use ddb_model::{DefaultTable, Item};
use proptest::prelude::*;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::support::{self, put_raw, raw, s};

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
struct Address {
    line1: String,
    line2: Option<String>,
    #[serde(default)]
    notes: Vec<Option<String>>,
}

/// Every shape of `Option` a struct holds: renamed, defaulted, in a sparse index key, a
/// nested struct, in a nested struct, in a list, a map of them, one kept as `NULL`, one
/// serde could not read back absent.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "CONTACT#<id>", sk = "CONTACT")]
#[index(gsi1, pk = "CITY#<city>", sk = "CONTACT#<id>")]
struct Contact {
    id: String,
    #[serde(rename = "emailAddress")]
    email: Option<String>,
    #[serde(default)]
    phone: Option<String>,
    city: Option<String>,
    address: Option<Address>,
    home: Address,
    #[serde(default)]
    extra: BTreeMap<String, Option<u32>>,
    #[entity(none_as_null)]
    legacy: Option<String>,
    #[serde(with = "upper")]
    code: Option<String>,
}

/// A `with` module for an `Option`: serde reads its field absent as an error (no `default`),
/// so the derive keeps its `None` as `NULL`.
mod upper {
    use super::*;

    pub fn serialize<S: Serializer>(v: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
        v.as_ref().map(|t| t.to_uppercase()).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Option::<String>::deserialize(d)
    }
}

fn empty(id: &str) -> Contact {
    Contact {
        id: id.into(),
        email: None,
        phone: None,
        city: None,
        address: None,
        home: Address {
            line1: "1 Main St".into(),
            line2: None,
            notes: vec![None, Some("x".into())],
        },
        extra: BTreeMap::new(),
        legacy: None,
        code: None,
    }
}

fn full(id: &str) -> Contact {
    Contact {
        id: id.into(),
        email: Some(format!("{id}@example.com")),
        phone: Some("555".into()),
        city: Some("Oslo".into()),
        address: Some(Address {
            line1: "2 Side St".into(),
            line2: Some("flat 3".into()),
            notes: vec![],
        }),
        home: Address { line1: "1 Main St".into(), line2: Some("b".into()), notes: vec![] },
        extra: [("a".to_owned(), Some(1))].into(),
        legacy: Some("old".into()),
        code: Some("ABC".into()),
    }
}

fn names(item: &Item) -> Vec<&str> {
    let mut names: Vec<&str> = item.keys().map(String::as_str).collect();
    names.sort_unstable();
    names
}

/// The item `empty(id)` is stored as: no attribute for a `None`, `NULL` for the kept ones and
/// in lists.
fn assert_stored_empty(item: &Item, id: &str) {
    assert_eq!(
        names(item),
        ["_type", "code", "extra", "home", "id", "legacy", "pk", "sk"],
        "{id}: {item:?}"
    );
    assert_eq!(item["legacy"], AttributeValue::Null(true));
    assert_eq!(item["code"], AttributeValue::Null(true));
    let AttributeValue::M(home) = &item["home"] else { panic!("{item:?}") };
    let mut home_names: Vec<&String> = home.keys().collect();
    home_names.sort_unstable();
    assert_eq!(home_names, ["line1", "notes"], "a nested `None` member is left out");
    assert_eq!(
        home["notes"],
        AttributeValue::L(vec![AttributeValue::Null(true), s("x")]),
        "a `None` in a list keeps its place"
    );
}

#[tokio::test]
async fn every_write_path_leaves_a_none_out() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;

    empty("create").create(&db).await?;
    empty("put").put(&db).await?;
    full("replace").create(&db).await?;
    empty("replace").replace(&db).await?;
    db.batch_put(&[empty("batch")]).await?;
    db.transaction().create(&empty("tx-create")).put(&empty("tx-put")).await?;
    full("tx-replace").create(&db).await?;
    db.transaction().replace(&empty("tx-replace")).await?;
    for id in ["create", "put", "replace", "batch", "tx-create", "tx-put", "tx-replace"] {
        let item = raw(&db, &format!("CONTACT#{id}"), "CONTACT").await.expect("stored");
        assert_stored_empty(&item, id);
        assert_eq!(Contact::get(&db, id).await?, Some(empty(id)), "{id} reads back");
    }

    // An upsert that creates the item: the fields it sets to `None` are absent.
    Contact::update(&db, "upsert")
        .upsert()
        .set(Contact::HOME, empty("upsert").home)
        .set(Contact::EMAIL, None)
        .set(Contact::LEGACY, None)
        .set(Contact::CODE, None)
        .set(Contact::EXTRA, BTreeMap::new())
        .await?;
    assert_stored_empty(&raw(&db, "CONTACT#upsert", "CONTACT").await.expect("stored"), "upsert");
    assert_eq!(Contact::get(&db, "upsert").await?, Some(empty("upsert")));
    Ok(())
}

#[tokio::test]
async fn set_none_removes_the_attribute_and_the_index_key_it_feeds() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    full("a").create(&db).await?;
    let stored = raw(&db, "CONTACT#a", "CONTACT").await.expect("stored");
    assert_eq!(stored["gsi1pk"], s("CITY#Oslo"));
    assert_eq!(Contact::query_gsi1(&db, "Oslo").all().await?.len(), 1);

    let updated = Contact::update(&db, "a")
        .set(Contact::EMAIL, None)
        .set(Contact::CITY, None)
        .set(Contact::ADDRESS.at::<Option<String>>("line2"), None)
        .set(Contact::EXTRA.entry("a"), None)
        .set(Contact::LEGACY, None)
        .set(Contact::CODE, None)
        .set_if_not_exists(Contact::PHONE, None)
        .await?;
    let item = raw(&db, "CONTACT#a", "CONTACT").await.expect("stored");
    for gone in ["emailAddress", "city", "gsi1pk", "gsi1sk"] {
        assert!(!item.contains_key(gone), "{gone} removed: {item:?}");
    }
    let AttributeValue::M(address) = &item["address"] else { panic!("{item:?}") };
    assert!(!address.contains_key("line2"), "a nested `None` is removed: {address:?}");
    let AttributeValue::M(extra) = &item["extra"] else { panic!("{item:?}") };
    assert!(extra.is_empty(), "a map entry set to `None` is removed: {extra:?}");
    assert_eq!(item["legacy"], AttributeValue::Null(true), "`none_as_null` writes NULL");
    assert_eq!(item["code"], AttributeValue::Null(true));
    assert_eq!(item["phone"], s("555"), "set_if_not_exists(None) writes nothing");

    let mut expected = full("a");
    expected.email = None;
    expected.city = None;
    expected.address.as_mut().unwrap().line2 = None;
    expected.extra.clear();
    expected.legacy = None;
    expected.code = None;
    assert_eq!(updated, expected, "the returned entity");
    assert_eq!(Contact::get(&db, "a").await?, Some(expected));
    assert!(Contact::query_gsi1(&db, "Oslo").all().await?.is_empty(), "out of the sparse index");

    // A value again puts it back, index key included.
    Contact::update(&db, "a").set(Contact::CITY, Some("Rome".to_owned())).await?;
    assert_eq!(Contact::query_gsi1(&db, "Rome").all().await?.len(), 1);
    // A condition on the removed attribute: it no longer exists.
    Contact::update(&db, "a")
        .set(Contact::PHONE, None)
        .condition(Contact::EMAIL.not_exists())
        .await?;
    assert!(!raw(&db, "CONTACT#a", "CONTACT").await.unwrap().contains_key("phone"));
    Ok(())
}

#[tokio::test]
async fn items_stored_with_null_still_read_as_none_and_updates_clean_them() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    // What earlier versions wrote: `NULL` for every `None`, nested ones too.
    let null = AttributeValue::Null(true);
    let mut home = std::collections::HashMap::new();
    home.insert("line1".to_owned(), s("1 Main St"));
    home.insert("line2".to_owned(), null.clone());
    home.insert("notes".to_owned(), AttributeValue::L(vec![null.clone(), s("x")]));
    let mut item: Item = [
        ("pk", s("CONTACT#old")),
        ("sk", s("CONTACT")),
        ("_type", s("Contact")),
        ("id", s("old")),
        ("home", AttributeValue::M(home)),
        ("extra", AttributeValue::M(Default::default())),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    for attr in ["emailAddress", "phone", "city", "address", "legacy", "code"] {
        item.insert(attr.to_owned(), null.clone());
    }
    put_raw(&db, item).await;
    assert_eq!(Contact::get(&db, "old").await?, Some(empty("old")));
    // Filters see what is stored: `attribute_exists` holds for a stored NULL.
    let with_email = Contact::update(&db, "old")
        .set(Contact::EMAIL, None)
        .condition(Contact::EMAIL.exists())
        .await?;
    assert_eq!(with_email, empty("old"));
    let item = raw(&db, "CONTACT#old", "CONTACT").await.expect("stored");
    assert!(!item.contains_key("emailAddress"), "{item:?}");
    assert_eq!(item["phone"], null, "untouched attributes keep their NULL");
    Ok(())
}

/// A unique value held by an `Option` field.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "HANDLE#<id>", sk = "HANDLE")]
struct Handle {
    id: String,
    #[unique]
    handle: Option<String>,
}

#[tokio::test]
async fn setting_a_unique_option_to_none_releases_its_claim() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    Handle { id: "a".into(), handle: Some("h".into()) }.create(&db).await?;
    let taken = Handle { id: "b".into(), handle: Some("h".into()) }.create(&db).await;
    assert!(taken.is_err_and(|e| e.is_unique_violation()));
    Handle::update(&db, "a").set(Handle::HANDLE, None).await?;
    assert!(!raw(&db, "HANDLE#a", "HANDLE").await.expect("stored").contains_key("handle"));
    Handle { id: "b".into(), handle: Some("h".into()) }.create(&db).await?;
    Ok(())
}

/// A table whose items keep `NULL` for every `None` (the layout before issue 27).
#[derive(Table)]
#[table(name = "nulls", none_as_null)]
struct Nulls;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Nulls, pk = "N#<id>", sk = "N")]
struct Kept {
    id: String,
    note: Option<String>,
    home: Address,
}

#[tokio::test]
async fn a_none_as_null_table_stores_null_everywhere() -> Result<(), Error> {
    let db = support::db::<Nulls>().await;
    let kept = Kept { id: "k".into(), note: None, home: Address::default() };
    kept.create(&db).await?;
    let item = raw(&db, "N#k", "N").await.expect("stored");
    assert_eq!(item["note"], AttributeValue::Null(true));
    let AttributeValue::M(home) = &item["home"] else { panic!("{item:?}") };
    assert_eq!(home["line2"], AttributeValue::Null(true));
    Kept::update(&db, "k").set(Kept::NOTE, Some("n".to_owned())).await?;
    Kept::update(&db, "k").set(Kept::NOTE, None).await?;
    assert_eq!(raw(&db, "N#k", "N").await.expect("stored")["note"], AttributeValue::Null(true));
    assert_eq!(Kept::get(&db, "k").await?, Some(kept));
    Ok(())
}

fn contact() -> impl Strategy<Value = Contact> {
    let text = || proptest::option::of("[a-z]{1,4}");
    let address = (text(), proptest::collection::vec(text(), 0..3))
        .prop_map(|(line2, notes)| Address { line1: "l".into(), line2, notes });
    (
        (text(), text(), text(), proptest::option::of(address.clone())),
        (
            address,
            proptest::collection::btree_map("[a-z]{1,3}", proptest::option::of(0u32..9), 0..3),
        ),
        (text(), text()),
    )
        .prop_map(|((email, phone, city, address), (home, extra), (legacy, code))| Contact {
            id: "p".into(),
            email,
            phone,
            city,
            address,
            home,
            extra,
            legacy,
            code: code.map(|c| c.to_uppercase()),
        })
}

/// The fields a `Contact` is stored as, by the rule: a member holding `None` is absent
/// (except `legacy` and `code`, `NULL`), a `None` in a list is `NULL`.
fn model_item(c: &Contact) -> Item {
    let null = || AttributeValue::Null(true);
    let opt = |v: &Option<String>| v.as_deref().map(s);
    let address = |a: &Address| {
        let mut m = std::collections::HashMap::new();
        m.insert("line1".to_owned(), s(&a.line1));
        if let Some(l) = &a.line2 {
            m.insert("line2".to_owned(), s(l));
        }
        let notes = a.notes.iter().map(|n| opt(n).unwrap_or_else(null)).collect();
        m.insert("notes".to_owned(), AttributeValue::L(notes));
        AttributeValue::M(m)
    };
    let extra = c
        .extra
        .iter()
        .filter_map(|(k, v)| v.map(|v| (k.clone(), AttributeValue::N(v.to_string()))));
    let fields = [
        ("emailAddress", opt(&c.email)),
        ("phone", opt(&c.phone)),
        ("city", opt(&c.city)),
        ("address", c.address.as_ref().map(address)),
        ("home", Some(address(&c.home))),
        ("extra", Some(AttributeValue::M(extra.collect()))),
        ("legacy", Some(opt(&c.legacy).unwrap_or_else(null))),
        ("code", Some(opt(&c.code).unwrap_or_else(null))),
        ("id", Some(s(&c.id))),
    ];
    fields.into_iter().filter_map(|(k, v)| v.map(|v| (k.to_owned(), v))).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("DDB_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24)
    ))]

    /// Any shape of `None`s: the stored fields are the model's, and they read back as the
    /// value (a map entry holding `None` reads back as no entry).
    #[test]
    fn stored_items_follow_the_model(c in contact()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let (stored, read) = runtime.expect("runtime").block_on(async {
            let db = support::db::<DefaultTable>().await;
            c.put(&db).await.expect("put");
            let mut item = raw(&db, "CONTACT#p", "CONTACT").await.expect("stored");
            for attr in ["pk", "sk", "_type", "gsi1pk", "gsi1sk"] {
                item.remove(attr);
            }
            (item, Contact::get(&db, "p").await.expect("get"))
        });
        prop_assert_eq!(stored, model_item(&c));
        let mut read_back = c.clone();
        read_back.extra.retain(|_, v| v.is_some());
        prop_assert_eq!(read, Some(read_back));
    }
}

#[tokio::test]
async fn a_tree_node_without_a_parent_stores_no_parent_attribute() -> Result<(), Error> {
    use crate::model::Nest;
    let db = support::db::<DefaultTable>().await;
    let tree = Nest::tree(&db, "c");
    tree.insert(&Nest::new("c", "root", None)).await?;
    tree.insert(&Nest::new("c", "kid", Some("root"))).await?;
    let root = raw(&db, "CATALOG#c", "NEST#root").await.expect("stored");
    assert!(!root.contains_key("parent"), "{root:?}");
    assert_eq!(raw(&db, "CATALOG#c", "NEST#kid").await.expect("stored")["parent"], s("root"));
    assert_eq!(tree.ancestors("kid").await?.len(), 1);
    Ok(())
}
