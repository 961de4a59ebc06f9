//! Strict reads (`#[entity(strict)]`): an item holding an attribute that is neither a field
//! (its stored name or a serde alias) nor the library's (keys, index keys, type tag,
//! constants, version, schema version, bookkeeping) is refused on every read path, naming the
//! attributes; a projected read asks for named attributes only and is never refused.

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::entity::{from_item, to_item};
use ddb_model::error::CorruptReason;
use ddb_model::prelude::*;
use ddb_model::stream::{Change, Image, StreamEvent, UnknownReason};
use ddb_model::{Collection, DefaultTable, Item};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::support::{self, s};

/// A strict entity with renamed fields, an alias, a version, a schema, a constant and an
/// index key.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "ACCT#<id>", sk = "ACCT", strict, version = version)]
#[entity(schema = 2, upgrade = upgrade_account, constant(source = "billing"))]
#[index(gsi1, pk = "MAIL#<email>", sk = "ACCT")]
#[serde(rename_all = "camelCase")]
struct Account {
    id: String,
    #[serde(rename = "mail")]
    email: String,
    display_name: String,
    #[serde(alias = "nick", default)]
    nickname: Option<String>,
    #[serde(skip)]
    cached: u32,
    #[serde(default)]
    version: u64,
}

fn upgrade_account(_from: u32, _item: &mut Item) -> Result<(), ddb_model::error::UpgradeError> {
    Ok(())
}

/// The same layout, not strict: extra attributes are ignored, as by default.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "LOOSE#<id>", sk = "LOOSE")]
struct Loose {
    id: String,
    name: String,
}

#[derive(Collection, Debug, PartialEq)]
enum Accounts {
    Account(Account),
    Loose(Loose),
}

#[derive(Deserialize, Debug, PartialEq)]
struct Card {
    #[serde(rename = "displayName")]
    display_name: String,
}

fn account(id: &str) -> Account {
    Account {
        id: id.into(),
        email: format!("{id}@example.com"),
        display_name: format!("Name {id}"),
        nickname: None,
        cached: 0,
        version: 0,
    }
}

/// The stored item of `account` with `extra` attributes, as another service writes it.
fn with_extra(account: &Account, extra: &[&str]) -> Item {
    let mut item = to_item(account, Some(1)).expect("an item");
    for name in extra {
        item.insert((*name).to_owned(), s("foreign"));
    }
    item
}

/// The attributes an error of a read refuses, if it is the strict reads' error.
fn refused<T>(read: Result<T, Error>) -> Option<Vec<String>> {
    read.err().as_ref().and_then(unknown)
}

fn unknown(err: &Error) -> Option<Vec<String>> {
    match err {
        Error::CorruptItem { reason: CorruptReason::UnknownAttributes { attributes }, .. } => {
            Some(attributes.clone())
        }
        _ => None,
    }
}

#[tokio::test]
async fn every_read_path_refuses_attributes_the_entity_does_not_declare() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let mut clean = account("clean");
    clean.create(&db).await?;
    let mut planted = account("planted");
    support::put_raw(&db, with_extra(&planted, &["zeta", "audit_by"])).await;
    let names = || Some(vec!["audit_by".to_owned(), "zeta".to_owned()]);

    // get
    assert_eq!(Account::get(&db, "clean").await?.as_ref(), Some(&clean));
    let err = Account::get(&db, "planted").await.unwrap_err();
    assert!(err.is_unknown_attributes(), "{err}");
    assert_eq!(unknown(&err), names());
    assert!(err.to_string().contains("audit_by, zeta"), "{err}");
    // query, on the table and on an index
    assert_eq!(refused(Account::query(&db, "planted").all().await), names());
    assert_eq!(Account::query(&db, "clean").all().await?, [clean.clone()]);
    let by_mail = Account::query_gsi1(&db, "planted@example.com").all().await;
    assert_eq!(refused(by_mail), names());
    // scan
    assert_eq!(refused(db.scan::<Account>().all().await), names());
    // batch get
    let keys = [Account::key("clean"), Account::key("planted")];
    assert_eq!(refused(db.batch_get(keys).await), names());
    // transaction reads
    let mut read = db.transact_get();
    let (ok, bad) = (read.get(Account::key("clean")), read.get(Account::key("planted")));
    let out = read.await?;
    assert_eq!(out.get(&ok)?.as_ref(), Some(&clean));
    assert_eq!(refused(out.get(&bad)), names());
    // a collection
    let all = Account::partition(&db, "planted").collection::<Accounts>().all().await;
    assert_eq!(refused(all), names());
    // the stored item a failed write reports
    let err = planted.create(&db).await.unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    assert_eq!(err.current::<Account>().and_then(refused), names());
    // a stream record
    let raw = support::raw(&db, "ACCT#planted", "ACCT").await.expect("stored");
    let event = json!({ "Records": [
        crate::streams::lambda_record("INSERT", "NEW_IMAGE", None, Some(&raw)),
    ]});
    let event: StreamEvent = serde_json::from_value(event).expect("a Lambda event");
    let decoded: Vec<Result<Change<Accounts>, Error>> = event.decode();
    let change = decoded.into_iter().next().expect("one record")?;
    // A record decodes whatever its images hold; the image says why it is no entity.
    match change.new.as_ref().and_then(Image::unknown).map(|u| &u.reason) {
        Some(UnknownReason::Corrupt(e)) => assert_eq!(unknown(e), names()),
        other => panic!("{other:?}"),
    }

    // A projected read asks for the attributes it names: the others are not read.
    let cards: Vec<Card> =
        Account::query(&db, "planted").project([Account::DISPLAY_NAME.path()]).all().await?;
    assert_eq!(cards, [Card { display_name: "Name planted".into() }]);

    // Not strict: the same extra attributes are ignored.
    let loose = Loose { id: "l".into(), name: "n".into() };
    let mut item = to_item(&loose, None)?;
    item.insert("zeta".into(), s("foreign"));
    support::put_raw(&db, item).await;
    assert_eq!(Loose::get(&db, "l").await?, Some(loose));
    Ok(())
}

#[tokio::test]
async fn renamed_fields_aliases_and_library_attributes_are_known() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    // Written by the library: version, schema, constant, type tag, keys and index keys.
    let mut ann = account("ann");
    ann.nickname = Some("A".into());
    ann.create(&db).await?;
    ann.display_name = "Ann B".into();
    ann.put(&db).await?;
    Account::update(&db, "ann").set(Account::NICKNAME, Some("Annie".to_owned())).await?;
    let read = Account::get(&db, "ann").await?.expect("stored");
    assert_eq!((read.nickname.as_deref(), read.version), (Some("Annie"), 3));

    // The field under its alias reads; under its Rust name (not its stored name) it does not.
    let mut item = with_extra(&account("bob"), &[]);
    item.insert("nick".into(), s("B"));
    support::put_raw(&db, item).await;
    assert_eq!(Account::get(&db, "bob").await?.and_then(|a| a.nickname).as_deref(), Some("B"));
    let mut item = with_extra(&account("cy"), &[]);
    item.insert("display_name".into(), s("Cy"));
    support::put_raw(&db, item).await;
    let err = Account::get(&db, "cy").await.unwrap_err();
    assert_eq!(unknown(&err), Some(vec!["display_name".to_owned()]));
    // A skipped field is not read: its attribute is unknown.
    let mut item = with_extra(&account("dee"), &[]);
    item.insert("cached".into(), AttributeValue::N("3".into()));
    support::put_raw(&db, item).await;
    let err = Account::get(&db, "dee").await.unwrap_err();
    assert_eq!(unknown(&err), Some(vec!["cached".to_owned()]));
    Ok(())
}

/// The stored names of `Account`'s fields, and the attributes the library writes on its
/// items or may find there (the table's keys and index keys, the type tag, the constant, the
/// schema version, update markers).
const FIELDS: &[&str] = &["id", "mail", "displayName", "nickname", "nick", "version"];
const LIBRARY: &[&str] = &[
    "pk", "sk", "_type", "source", "_schema", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk", "gsi3pk",
    "gsi3sk",
];

fn attr_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z_.#:-]{1,10}",
        proptest::sample::select([FIELDS, LIBRARY].concat()).prop_map(str::to_owned),
        "_ddbm\\.[a-z]{1,4}",
        // Near misses of known names.
        proptest::sample::select(FIELDS.to_vec()).prop_map(|f| f.to_uppercase()),
    ]
}

proptest! {
    /// Any extra attribute names: the item reads when each is a field's or the library's, and
    /// otherwise is refused naming exactly the others, sorted.
    #[test]
    fn strict_reads_name_exactly_the_undeclared_attributes(
        extra in proptest::collection::btree_set(attr_name(), 0..6),
    ) {
        let stored = account("p");
        let mut item = to_item(&stored, Some(1)).expect("an item");
        // Extra attributes beside those stored (a planted key or field would change the
        // item's meaning, not its strictness).
        // The field under its name and its alias at once does not deserialize: one of them.
        let both = extra.contains("nick") && extra.contains("nickname");
        let extra: Vec<String> = extra
            .into_iter()
            .filter(|e| !(item.contains_key(e) || both && e == "nick"))
            .collect();
        for name in &extra {
            let value = if name == "nick" || name == "nickname" { s("n") } else { s("x") };
            item.insert(name.clone(), value);
        }
        let expected: Vec<String> = extra
            .iter()
            .filter(|e| {
                !FIELDS.contains(&e.as_str())
                    && !LIBRARY.contains(&e.as_str())
                    && !e.starts_with("_ddbm.")
            })
            .cloned()
            .collect();
        match from_item::<Account>(item) {
            Ok(read) => {
                prop_assert!(expected.is_empty(), "read although {expected:?} are unknown");
                prop_assert_eq!(read.id, "p");
            }
            Err(e) => prop_assert_eq!(unknown(&e), Some(expected), "{}", e),
        }
    }
}

/// A strict tree node (closure: its copies hold bookkeeping of their own) and a strict edge
/// with a counter on a strict node: everything the library writes reads back.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "DRIVE#<drive>", sk = "DIR#<id>", strict)]
#[hierarchy(strategy = closure, parent = parent)]
struct Dir {
    drive: String,
    id: String,
    parent: Option<String>,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "USER#<id>", sk = "PROFILE", strict)]
struct User {
    id: String,
    #[serde(default)]
    followers: u64,
}

#[derive(Entity, ddb_model::Edge, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "USER#<follower>", sk = "FOLLOWS#<followee>", strict)]
#[edge(
    from = follower,
    to = followee,
    inverse(pk = "USER#<followee>", sk = "FOLLOWER#<follower>"),
    to_count = User::FOLLOWERS
)]
struct Follow {
    follower: String,
    followee: String,
}

#[tokio::test]
async fn what_trees_and_edges_write_reads_back_strictly() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let dir = |id: &str, parent: Option<&str>| Dir {
        drive: "d".into(),
        id: id.into(),
        parent: parent.map(str::to_owned),
    };
    let tree = Dir::tree(&db, "d");
    tree.insert(&dir("root", None)).await?;
    tree.insert(&dir("a", Some("root"))).await?;
    tree.insert(&dir("b", Some("a"))).await?;
    assert_eq!(tree.children("root").all().await?, [dir("a", Some("root"))]);
    assert_eq!(tree.descendants("root").all().await?.len(), 2);
    assert_eq!(Dir::get(&db, "d", "b").await?, Some(dir("b", Some("a"))));

    User { id: "bob".into(), followers: 0 }.create(&db).await?;
    let follows = Follow::edges(&db);
    follows.link(&Follow { follower: "ann".into(), followee: "bob".into() }).await?;
    assert_eq!(User::get(&db, "bob").await?.map(|u| u.followers), Some(1));
    assert_eq!(follows.outgoing("ann").all().await?.len(), 1);
    assert_eq!(follows.incoming("bob").all().await?.len(), 1);
    Ok(())
}
