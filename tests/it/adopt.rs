//! Tables laid out by other code: the path-pattern folder table (partition key `ID`, no sort
//! key, index `gsi1` on `Root` / `Path`, the name in `Folder Name`, no entity type), created
//! and filled with plain SDK calls, read and written through typed entities byte for byte;
//! entities told apart by their keys or by an attribute of their own; verbatim key parts.

use std::collections::HashMap;

use ddb_model::aws_sdk_dynamodb::Client;
use ddb_model::aws_sdk_dynamodb::types::{
    AttributeDefinition, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection,
    ProjectionType, ScalarAttributeType,
};
use ddb_model::prelude::*;
use ddb_model::{Item, entity::Identity, error::KeyProblem, local};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use crate::support::{self, s};

/// The folder table as the other code declared it.
#[derive(Table)]
#[table(
    name = "working-with-hierarchy-data",
    pk = "ID",
    no_sort_key,
    no_type_attr,
    gsi(name = "gsi1", pk = "Root", sk = "Path")
)]
struct Folders;

/// One folder: `ID` is its id, `Root` the drive it is on and `Path` the path of its parent
/// (`/V/d/`), both absent on a drive; every value verbatim, as the other code wrote them.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Folders, pk = "<id:verbatim>")]
#[index(gsi1, pk = "<root:verbatim>", sk = "<path:verbatim>")]
struct Folder {
    #[entity(from_key)]
    id: String,
    #[entity(from_key)]
    root: Option<String>,
    #[entity(from_key)]
    path: Option<String>,
    #[serde(rename = "Folder Name")]
    name: String,
}

impl Folder {
    fn drive(id: &str, name: &str) -> Folder {
        Folder { id: id.into(), root: None, path: None, name: name.into() }
    }

    fn under(id: &str, root: &str, path: &str, name: &str) -> Folder {
        Folder {
            id: id.into(),
            root: Some(root.into()),
            path: Some(path.into()),
            name: name.into(),
        }
    }
}

/// The example rows: (ID, Root, Path, Folder Name); an empty Root or Path is absent.
const ROWS: [(&str, &str, &str, &str); 15] = [
    ("C", "", "", "Drive C"),
    ("I", "C", "/", "Folder I"),
    ("II", "C", "/", "Folder II"),
    ("D", "", "", "Drive D"),
    ("III", "D", "/", "Folder III"),
    ("a", "D", "/III/", "Folder a"),
    ("b", "D", "/III/", "Folder b"),
    ("IV", "D", "/", "Folder IV"),
    ("c", "D", "/IV/", "Folder c"),
    ("V", "D", "/", "Folder V"),
    ("d", "D", "/V/", "Folder d"),
    ("i", "D", "/V/d/", "Folder i"),
    ("ii", "D", "/V/d/", "Folder ii"),
    ("iii", "D", "/V/d/", "Folder iii"),
    ("e", "D", "/V/", "Folder e"),
];

/// The item the other code writes for a row.
fn raw_row((id, root, path, name): (&str, &str, &str, &str)) -> Item {
    let mut item = HashMap::from([("ID".to_owned(), s(id)), ("Folder Name".to_owned(), s(name))]);
    if !root.is_empty() {
        item.insert("Root".to_owned(), s(root));
        item.insert("Path".to_owned(), s(path));
    }
    item
}

fn table_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("folders-{nanos}-{}", N.fetch_add(1, Ordering::Relaxed))
}

/// Creates the table with plain SDK calls, as the other code does, and fills it with `ROWS`
/// by plain `PutItem`s; returns the raw client, the table name and a typed handle on it.
async fn seeded() -> (Client, String, Db<Folders>) {
    let client = local::client().expect("a client of the test endpoint");
    let table = table_name();
    let s_attr = |name: &str| {
        AttributeDefinition::builder()
            .attribute_name(name)
            .attribute_type(ScalarAttributeType::S)
            .build()
            .expect("attribute")
    };
    let key = |name: &str, kind: KeyType| {
        KeySchemaElement::builder().attribute_name(name).key_type(kind).build().expect("key")
    };
    client
        .create_table()
        .table_name(&table)
        .attribute_definitions(s_attr("ID"))
        .attribute_definitions(s_attr("Root"))
        .attribute_definitions(s_attr("Path"))
        .key_schema(key("ID", KeyType::Hash))
        .global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name("gsi1")
                .key_schema(key("Root", KeyType::Hash))
                .key_schema(key("Path", KeyType::Range))
                .projection(Projection::builder().projection_type(ProjectionType::All).build())
                .build()
                .expect("index"),
        )
        .billing_mode(ddb_model::aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
        .send()
        .await
        .expect("create the folder table");
    for row in ROWS {
        client
            .put_item()
            .table_name(&table)
            .set_item(Some(raw_row(row)))
            .send()
            .await
            .expect("raw put");
    }
    let db = Db::<Folders>::with_table_name(client.clone(), &table);
    (client, table, db)
}

async fn raw_get(client: &Client, table: &str, id: &str) -> Option<Item> {
    client
        .get_item()
        .table_name(table)
        .key("ID", s(id))
        .consistent_read(true)
        .send()
        .await
        .expect("raw get")
        .item
}

/// The other code's queries of the index: `Root = root AND Path = path` (`begins_with` when
/// `prefix`), the folder ids it finds, sorted.
async fn raw_query(
    client: &Client,
    table: &str,
    root: &str,
    path: &str,
    prefix: bool,
) -> Vec<String> {
    let condition = if prefix {
        "#root = :root AND begins_with(#path, :path)"
    } else {
        "#root = :root AND #path = :path"
    };
    let out = client
        .query()
        .table_name(table)
        .index_name("gsi1")
        .key_condition_expression(condition)
        .expression_attribute_names("#root", "Root")
        .expression_attribute_names("#path", "Path")
        .expression_attribute_values(":root", s(root))
        .expression_attribute_values(":path", s(path))
        .send()
        .await
        .expect("raw query");
    let mut ids: Vec<String> = out
        .items()
        .iter()
        .filter_map(|item| item.get("ID").and_then(|v| v.as_s().ok()).cloned())
        .collect();
    ids.sort();
    ids
}

fn ids(folders: &[Folder]) -> Vec<String> {
    let mut ids: Vec<String> = folders.iter().map(|f| f.id.clone()).collect();
    ids.sort();
    ids
}

#[test]
fn the_folder_entity_is_told_apart_by_its_keys() {
    assert_eq!(<Folder as Entity>::IDENTITY, Identity::Keys);
    assert_eq!(<Folders as Table>::TYPE_ATTR, None);
}

#[tokio::test]
async fn the_other_codes_items_read_through_the_typed_api() -> Result<(), Error> {
    let (_client, _table, db) = seeded().await;

    // Get one folder by its id.
    let d = Folder::get(&db, "d").await?.expect("folder d");
    assert_eq!(d, Folder::under("d", "D", "/V/", "Folder d"));
    assert_eq!(Folder::get(&db, "D").await?, Some(Folder::drive("D", "Drive D")));

    // The folders directly below V: Root = D and Path = /V/.
    let children = Folder::query_gsi1(&db, "D").path("/V/").all().await?;
    assert_eq!(ids(&children), ["d", "e"]);
    // Everything below V: Path begins with /V/.
    let below = Folder::query_gsi1(&db, "D").path_begins_with("/V/").all().await?;
    assert_eq!(ids(&below), ["d", "e", "i", "ii", "iii"]);
    // The drives are in no index: a drive's folders are read by its root.
    assert_eq!(Folder::query_gsi1(&db, "C").all().await?.len(), 2);
    // Ranges compare the verbatim text.
    let range = Folder::query_gsi1(&db, "D").path_between("/III/", "/IV/").all().await?;
    assert_eq!(ids(&range), ["a", "b", "c"]);
    // A scan reads every folder.
    assert_eq!(db.scan::<Folder>().all().await?.len(), ROWS.len());
    assert_eq!(db.scan::<Folder>().count().await?, ROWS.len());
    Ok(())
}

#[tokio::test]
async fn items_written_through_the_typed_api_are_the_other_codes_items() -> Result<(), Error> {
    let (client, table, db) = seeded().await;

    // A new folder under d, and a new drive.
    let iv = Folder::under("iv", "D", "/V/d/", "Folder iv");
    iv.create(&db).await?;
    Folder::drive("E", "Drive E").create(&db).await?;

    // Byte for byte what the other code writes: no entity type, no field copied.
    assert_eq!(
        raw_get(&client, &table, "iv").await,
        Some(raw_row(("iv", "D", "/V/d/", "Folder iv")))
    );
    assert_eq!(raw_get(&client, &table, "E").await, Some(raw_row(("E", "", "", "Drive E"))));

    // The other code's own queries find it.
    assert_eq!(raw_query(&client, &table, "D", "/V/d/", false).await, ["i", "ii", "iii", "iv"]);
    assert_eq!(raw_query(&client, &table, "D", "/V/", true).await.len(), 6);

    // Replace, update and delete keep the layout.
    Folder::under("iv", "D", "/V/d/", "Folder four").replace(&db).await?;
    assert_eq!(
        raw_get(&client, &table, "iv").await,
        Some(raw_row(("iv", "D", "/V/d/", "Folder four")))
    );
    let renamed = Folder::update(&db, "iv").set(Folder::NAME, "Folder 4").await?;
    assert_eq!(renamed, Folder::under("iv", "D", "/V/d/", "Folder 4"));
    assert_eq!(
        raw_get(&client, &table, "iv").await,
        Some(raw_row(("iv", "D", "/V/d/", "Folder 4")))
    );
    Folder::delete(&db, "iv").await?;
    assert_eq!(raw_get(&client, &table, "iv").await, None);
    // A create of an existing folder is refused and reports the stored one.
    let err = Folder::drive("C", "again").create(&db).await.unwrap_err();
    assert!(err.is_already_exists(), "{err:?}");
    assert_eq!(raw_get(&client, &table, "C").await, Some(raw_row(("C", "", "", "Drive C"))));
    // An update of a missing folder is not found, and writes nothing.
    let err = Folder::update(&db, "nope").set(Folder::NAME, "x").await.unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    assert_eq!(raw_get(&client, &table, "nope").await, None);
    Ok(())
}

#[tokio::test]
async fn a_foreign_item_is_the_right_struct_or_a_typed_error() -> Result<(), Error> {
    let (client, table, db) = seeded().await;
    let put = |item: Item| {
        let (client, table) = (client.clone(), table.clone());
        async move {
            client.put_item().table_name(table).set_item(Some(item)).send().await.expect("put");
        }
    };
    // Extra attributes the struct does not know are left out (serde's rule), not an error.
    let mut extra = raw_row(("x", "D", "/", "Folder x"));
    extra.insert("Owner".into(), s("ann"));
    put(extra).await;
    assert_eq!(Folder::get(&db, "x").await?, Some(Folder::under("x", "D", "/", "Folder x")));

    // A name of the wrong type, or none: a typed error naming the item.
    let mut wrong = raw_row(("y", "D", "/", "Folder y"));
    wrong.insert("Folder Name".into(), support::n(7));
    put(wrong).await;
    let err = Folder::get(&db, "y").await.unwrap_err();
    assert!(matches!(err, Error::Deserialize { entity: "Folder", .. }), "{err:?}");
    let mut nameless = raw_row(("z", "D", "/", ""));
    nameless.remove("Folder Name");
    put(nameless).await;
    assert!(matches!(Folder::get(&db, "z").await, Err(Error::Deserialize { .. })));
    // A Root without a Path is not in the index, and so has no parent path: still the
    // folder, its path absent, as the other code would read it.
    let mut half = raw_row(("h", "D", "/", "Folder h"));
    half.remove("Path");
    put(half).await;
    assert_eq!(
        Folder::get(&db, "h").await?,
        Some(Folder { id: "h".into(), root: None, path: None, name: "Folder h".into() })
    );
    Ok(())
}

#[tokio::test]
async fn a_verbatim_value_that_would_read_back_differently_is_refused_before_sending()
-> Result<(), Error> {
    let db = support::db::<Adopted>().await;
    let before = support::snapshot(&db).await;
    // `<org:verbatim>#<id:verbatim>`: an org holding `#` would make another key.
    let bad = Member { org: "a#b".into(), id: "c".into(), email: "m@x".into(), role: "dev".into() };
    for err in [
        bad.create(&db).await.unwrap_err(),
        bad.put(&db).await.unwrap_err(),
        Member::delete(&db, "a#b", "c").await.unwrap_err(),
        Member::get(&db, "a#b", "c").await.unwrap_err(),
    ] {
        assert!(
            matches!(
                &err,
                Error::InvalidKey { problem: KeyProblem::Ambiguous { separator: '#', .. }, .. }
            ),
            "{err:?}"
        );
        assert!(err.is_invalid_input());
    }
    // The last part may hold it: nothing follows it.
    let fine =
        Member { org: "acme".into(), id: "c#1".into(), email: "m@x".into(), role: "dev".into() };
    fine.create(&db).await?;
    assert_eq!(Member::get(&db, "acme", "c#1").await?, Some(fine.clone()));
    assert_eq!(
        support::raw(&db, "ORG#acme#c#1", "MEMBER").await.map(|i| i.contains_key("org")),
        Some(false),
        "from_key fields are stored in the key only"
    );
    // A query whose verbatim value holds the separator that follows it is refused, nothing
    // sent: in the partition key, on a level, in a range bound.
    let sent = db.requests().total();
    for err in [
        Member::query(&db, "a#b", "c").all().await.unwrap_err(),
        Member::query_gsi1(&db, "x#y").all().await.unwrap_err(),
        Member::query_gsi2(&db).org("a#b").all().await.unwrap_err(),
        Member::query_gsi2(&db).org_ge("a#").all().await.unwrap_err(),
        Member::query_gsi2(&db).org_between("a", "b#").all().await.unwrap_err(),
    ] {
        assert!(
            matches!(err, Error::InvalidKey { problem: KeyProblem::Ambiguous { .. }, .. }),
            "{err:?}"
        );
    }
    assert_eq!(db.requests().total(), sent, "nothing was sent");
    let err = Member::query_gsi2(&db).org_ge("a#").all().await.unwrap_err();
    assert!(
        matches!(&err, Error::InvalidKey { attribute, problem: KeyProblem::Ambiguous { placeholder, .. }, .. }
            if placeholder == "org" && attribute == "gsi2sk"),
        "{err:?}"
    );
    // The last part of a template may hold it.
    assert!(Member::query_gsi1(&db, "m@x").org("a#b").all().await?.is_empty());
    let members = Member::query_gsi2(&db).org("acme").all().await?;
    assert_eq!(members, std::slice::from_ref(&fine));
    assert_eq!(
        Member::query_gsi2(&db).org("acme").id("c#1").all().await?,
        std::slice::from_ref(&fine)
    );
    // An index key part is checked too.
    let bad_index =
        Member { org: "acme".into(), id: "d".into(), email: "x#y".into(), role: "dev".into() };
    let err = bad_index.create(&db).await.unwrap_err();
    assert!(matches!(err, Error::InvalidKey { .. }), "{err:?}");
    assert_eq!(Member::query_gsi1(&db, "m@x").org("acme").all().await?, [fine]);
    let mut after = support::snapshot(&db).await;
    after.retain(|i| !i.contains("c#1"));
    assert_eq!(after, before, "nothing refused was written");
    Ok(())
}

#[derive(Table)]
#[table(
    name = "adopted",
    gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
    gsi(name = "gsi2", pk = "gsi2pk", sk = "gsi2sk")
)]
struct Adopted;

/// Verbatim parts in the middle of a template, fields read back from the keys, on a table
/// with a type attribute that this entity does not use.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Adopted, pk = "ORG#<org:verbatim>#<id:verbatim>", sk = "MEMBER", no_type_attr)]
#[index(gsi1, pk = "<email:verbatim>#", sk = "<org:verbatim>")]
#[index(gsi2, pk = "MEMBERS", sk = "<org:verbatim>#<id:verbatim>")]
struct Member {
    #[entity(from_key)]
    org: String,
    #[entity(from_key)]
    id: String,
    email: String,
    role: String,
}

/// A tagged entity of the same table whose key the `Member` template would also parse.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Adopted, pk = "ORG#<org>#<team>", sk = "MEMBER")]
struct Team {
    org: String,
    team: String,
}

/// An entity told apart by an attribute and value of its own (`kind = "invoice"`).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Adopted, pk = "ORG#<org>", sk = "DOC#<n>", type_attr = "kind", name = "invoice")]
struct Invoice {
    org: String,
    n: u32,
    total: u64,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Adopted, pk = "ORG#<org>", sk = "DOC#<n>", type_attr = "kind", name = "memo")]
struct Memo {
    org: String,
    n: u32,
    text: String,
}

#[derive(Collection, Debug, PartialEq)]
enum Docs {
    Invoice(Invoice),
    Memo(Memo),
}

#[tokio::test]
async fn entities_told_apart_by_keys_or_by_their_own_attribute() -> Result<(), Error> {
    let db = support::db::<Adopted>().await;
    // A tagged item under a key the keys-identified entity would parse is not a Member.
    Team { org: "acme".into(), team: "red".into() }.create(&db).await?;
    let err = Member::get(&db, "acme", "red").await.unwrap_err();
    assert!(
        matches!(&err, Error::WrongEntityType { expected: "Member", found: Some(t), .. } if t == "Team"),
        "{err:?}"
    );
    // No write of Member touches it: the tagged item is another entity's.
    let before = support::snapshot(&db).await;
    let member =
        Member { org: "acme".into(), id: "red".into(), email: "m@x".into(), role: "dev".into() };
    for err in [
        member.put(&db).await.unwrap_err(),
        member.replace(&db).await.unwrap_err(),
        Member::update(&db, "acme", "red").set(Member::ROLE, "ops").await.unwrap_err(),
        Member::delete(&db, "acme", "red").await.unwrap_err(),
    ] {
        assert!(matches!(err, Error::WrongEntityType { .. }), "{err:?}");
    }
    assert!(member.create(&db).await.unwrap_err().is_already_exists());
    assert_eq!(support::snapshot(&db).await, before, "the Team item is untouched");
    assert!(db.scan::<Member>().all().await?.is_empty(), "the scan skips the Team item");
    assert_eq!(db.scan::<Member>().count().await?, 0);

    // Entities with an attribute of their own.
    let invoice = Invoice { org: "acme".into(), n: 1, total: 250 };
    let memo = Memo { org: "acme".into(), n: 2, text: "hi".into() };
    invoice.create(&db).await?;
    memo.create(&db).await?;
    let raw = support::raw(&db, "ORG#acme", "DOC#0000000001").await.expect("stored");
    assert_eq!(raw.get("kind"), Some(&s("invoice")));
    assert!(!raw.contains_key("_type"), "the table's type attribute is not written");
    assert_eq!(Invoice::query(&db, "acme").all().await?, std::slice::from_ref(&invoice));
    assert_eq!(Memo::query(&db, "acme").all().await?, std::slice::from_ref(&memo));
    let err = Invoice::get(&db, "acme", 2u32).await.unwrap_err();
    assert!(
        matches!(&err, Error::WrongEntityType { found: Some(t), .. } if t == "memo"),
        "{err:?}"
    );
    // A put of a memo over the invoice's key is refused: the stored item is an invoice.
    let err = Memo { org: "acme".into(), n: 1, text: "x".into() }.put(&db).await.unwrap_err();
    assert!(matches!(err, Error::WrongEntityType { .. }), "{err:?}");
    let docs: Vec<Docs> = Invoice::partition(&db, "acme").collection::<Docs>().all().await?;
    assert_eq!(docs, [Docs::Invoice(invoice), Docs::Memo(memo)]);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("DDB_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
    ))]

    /// Over the whole of Unicode: a verbatim key is the values as they are when it reads
    /// back to them, and refused otherwise; never a key of other values.
    #[test]
    fn verbatim_keys_are_the_values_or_refused(org in "\\PC*", id in "\\PC*") {
        let key = Member::key(&org, &id);
        match key.validate() {
            Ok(()) => {
                prop_assert!(!org.contains('#'));
                prop_assert_eq!(key.pk(), format!("ORG#{org}#{id}"));
                prop_assert_eq!(Member::parse_key(key.pk(), "MEMBER").ok(), Some((org, id)));
            }
            Err(Error::InvalidKey { problem: KeyProblem::Ambiguous { separator, .. }, .. }) => {
                prop_assert_eq!(separator, '#');
                prop_assert!(org.contains('#'));
            }
            Err(Error::InvalidKey { problem: KeyProblem::TooLong { .. }, .. }) => {
                prop_assert!(key.pk().len() > 2048);
            }
            Err(e) => prop_assert!(false, "unexpected {e:?}"),
        }
    }
}
