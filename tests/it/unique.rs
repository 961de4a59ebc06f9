//! Unique constraints (`#[unique]`): claimed with the item in one transaction, moved by
//! updates and replaces, freed by deletes; a violation is `Error::Unique` naming the field;
//! concurrent claimers and movers never leave a value owned twice or a sentinel orphaned.

use std::collections::BTreeMap;

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::prelude::*;
use ddb_model::{
    DefaultTable, Item, Op,
    error::{RequestProblem, RetryAdvice},
};
use futures_util::future::join_all;
use serde::{Deserialize, Serialize};

use crate::support;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "USER#<id>", sk = "PROFILE")]
struct User {
    id: String,
    #[unique(scope = "email")]
    email: String,
    #[unique]
    handle: Option<String>,
    name: String,
}

fn user(id: &str, email: &str) -> User {
    User { id: id.into(), email: email.into(), handle: None, name: format!("user {id}") }
}

/// Shares the `email` scope with `User::email`: a user's login cannot be an organisation's
/// billing address.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "ORG#<id>", sk = "ORG", version = version)]
struct Org {
    id: String,
    #[unique(scope = "email")]
    billing: String,
    seats: u32,
    version: u64,
}

/// A name unique within its organisation.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "MEMBER#<id>", sk = "MEMBER", unique(org, name))]
struct Member {
    id: u32,
    org: String,
    name: String,
}

/// The sentinels stored: `(partition key, owner's partition key)`, read with a scan.
async fn sentinels<T: Table>(db: &Db<T>) -> BTreeMap<String, String> {
    let items = db.scan_items().consistent().all().await.expect("scan");
    let text = |item: &Item, attr: &str| match item.get(attr) {
        Some(AttributeValue::S(s)) => s.clone(),
        other => panic!("{attr}: {other:?}"),
    };
    items
        .iter()
        .filter(|item| text(item, T::PK).starts_with("_unique#"))
        .map(|item| (text(item, T::PK), text(item, "_owner_pk")))
        .collect()
}

fn sentinel(scope: &str, value: &str) -> String {
    let mut pk = String::from("_unique#");
    ddb_model::key::escape_into(scope, &mut pk);
    pk.push('#');
    ddb_model::key::escape_into(value, &mut pk);
    pk
}

#[tokio::test]
async fn a_create_claims_and_a_second_is_refused_naming_the_field() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    db.reset_requests();
    user("ann", "a@example.com").create(&db).await?;
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert_eq!(db.requests().total(), 1, "a create is one transaction");

    db.reset_requests();
    let err = user("bob", "a@example.com").create(&db).await.unwrap_err();
    assert!(err.is_unique_violation(), "{err}");
    match &err {
        Error::Unique { entity, field, scope, owner } => {
            assert_eq!((*entity, *field, *scope), ("User", "email", "email"));
            assert_eq!(owner.as_deref(), Some("(\"USER#ann\", \"PROFILE\")"));
        }
        other => panic!("{other:?}"),
    }
    // The owner's key is displayed once, in its own parentheses.
    assert_eq!(
        err.to_string(),
        "`User`.email is taken: another item (\"USER#ann\", \"PROFILE\") owns the value in \
         unique scope `email`"
    );
    assert_eq!(err.retry_advice(), RetryAdvice::DoNotRetry);
    assert!(!err.is_condition_failed() || err.is_unique_violation());
    assert_eq!(db.requests().total(), 1);
    assert!(User::get(&db, "bob").await?.is_none(), "nothing written");

    // A create of an existing item is AlreadyExists, whatever its values.
    let err = user("ann", "other@example.com").create(&db).await.unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    assert_eq!(
        sentinels(&db).await.into_iter().collect::<Vec<_>>(),
        vec![(sentinel("email", "a@example.com"), "USER#ann".to_owned())]
    );
    Ok(())
}

#[tokio::test]
async fn an_update_moves_the_value_and_frees_the_old_one() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    user("ann", "a@example.com").create(&db).await?;
    user("bob", "b@example.com").create(&db).await?;

    // Taken: nothing changes.
    let err = User::update(&db, "ann").set(User::EMAIL, "b@example.com").await.unwrap_err();
    assert!(matches!(err, Error::Unique { field: "email", .. }), "{err}");
    assert_eq!(User::get(&db, "ann").await?.map(|u| u.email).as_deref(), Some("a@example.com"));

    db.reset_requests();
    let ann =
        User::update(&db, "ann").set(User::EMAIL, "ann@example.com").set(User::NAME, "Ann").await?;
    assert_eq!((ann.email.as_str(), ann.name.as_str()), ("ann@example.com", "Ann"));
    assert_eq!(Some(ann), User::get(&db, "ann").await?);
    assert_eq!(db.requests().get(Op::GetItem), 2, "the read before the move, and the check");
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);

    // The old value is free, the new one is taken.
    user("cat", "a@example.com").create(&db).await?;
    let err = user("dan", "ann@example.com").create(&db).await.unwrap_err();
    assert!(err.is_unique_violation());

    // An update that leaves the unique fields alone costs what it did.
    db.reset_requests();
    User::update(&db, "ann").set(User::NAME, "Ann A.").await?;
    assert_eq!(db.requests().total(), 1);
    assert_eq!(db.requests().get(Op::UpdateItem), 1);

    // Setting the value it holds: a read and the plain update, no sentinel write.
    db.reset_requests();
    User::update(&db, "ann").set(User::EMAIL, "ann@example.com").await?;
    assert_eq!(db.requests().get(Op::GetItem), 1);
    assert_eq!(db.requests().get(Op::UpdateItem), 1);
    assert_eq!(db.requests().total(), 2);

    let owners = sentinels(&db).await;
    assert_eq!(owners.len(), 3, "{owners:?}");
    assert_eq!(
        owners.get(&sentinel("email", "ann@example.com")).map(String::as_str),
        Some("USER#ann")
    );
    assert_eq!(
        owners.get(&sentinel("email", "a@example.com")).map(String::as_str),
        Some("USER#cat")
    );
    Ok(())
}

#[tokio::test]
async fn put_and_replace_move_the_value() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let mut ann = user("ann", "a@example.com");
    ann.put(&db).await?;
    db.reset_requests();
    ann.email = "ann@example.com".into();
    ann.replace(&db).await?;
    assert_eq!(db.requests().get(Op::GetItem), 1);
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert_eq!(db.requests().total(), 2);

    // The same value again: the read and one `PutItem` conditioned on the value as read.
    db.reset_requests();
    ann.name = "Ann".into();
    ann.put(&db).await?;
    assert_eq!(db.requests().get(Op::GetItem), 1);
    assert_eq!(db.requests().get(Op::PutItem), 1);
    assert_eq!(db.requests().total(), 2);
    assert_eq!(User::get(&db, "ann").await?, Some(ann.clone()));

    let mut bob = user("bob", "b@example.com");
    bob.put(&db).await?;
    bob.email = "ann@example.com".into();
    let err = bob.put(&db).await.unwrap_err();
    assert!(err.is_unique_violation(), "{err}");
    let err = bob.replace(&db).await.unwrap_err();
    assert!(err.is_unique_violation(), "{err}");
    assert_eq!(User::get(&db, "bob").await?.map(|u| u.email).as_deref(), Some("b@example.com"));

    let owners = sentinels(&db).await;
    assert_eq!(owners.len(), 2, "{owners:?}");
    Ok(())
}

#[tokio::test]
async fn a_delete_frees_the_value_for_a_new_claim() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let mut ann = user("ann", "a@example.com");
    ann.handle = Some("annie".into());
    ann.create(&db).await?;
    assert_eq!(sentinels(&db).await.len(), 2);

    db.reset_requests();
    let old = User::delete(&db, "ann").return_old().await?;
    assert_eq!(old, Some(ann));
    assert_eq!(db.requests().get(Op::GetItem), 1);
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert!(sentinels(&db).await.is_empty());

    // A missing item: the read, nothing else.
    db.reset_requests();
    User::delete(&db, "ann").await?;
    assert_eq!(db.requests().total(), 1);
    let err = User::delete(&db, "ann").expect_version(0).await;
    assert!(err.is_err());

    let mut bob = user("bob", "a@example.com");
    bob.handle = Some("annie".into());
    bob.create(&db).await?;
    assert_eq!(sentinels(&db).await.values().filter(|o| *o == "USER#bob").count(), 2);
    Ok(())
}

#[tokio::test]
async fn two_entities_share_a_scope() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    user("ann", "shared@example.com").create(&db).await?;
    let mut acme =
        Org { id: "acme".into(), billing: "shared@example.com".into(), seats: 3, version: 0 };
    let err = acme.create(&db).await.unwrap_err();
    match &err {
        Error::Unique { entity, field, scope, .. } => {
            assert_eq!((*entity, *field, *scope), ("Org", "billing", "email"));
        }
        other => panic!("{other:?}"),
    }
    acme.billing = "billing@acme.example".into();
    acme.create(&db).await?;
    assert_eq!(acme.version, 1);
    let err = User::update(&db, "ann").set(User::EMAIL, "billing@acme.example").await.unwrap_err();
    assert!(err.is_unique_violation());

    // A versioned update that moves the value returns exactly what it stored.
    let org = Org::update(&db, "acme")
        .set(Org::BILLING, "ap@acme.example")
        .add(Org::SEATS, 0)
        .no_return()
        .await;
    assert!(org.is_ok());
    let org =
        Org::update(&db, "acme").set(Org::BILLING, "pay@acme.example").set(Org::SEATS, 5).await?;
    assert_eq!(Some(org.clone()), Org::get(&db, "acme").await?);
    assert_eq!((org.version, org.seats), (3, 5));
    user("bob", "ap@acme.example").create(&db).await?;
    Ok(())
}

#[tokio::test]
async fn none_owns_nothing() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    user("ann", "a@example.com").create(&db).await?;
    user("bob", "b@example.com").create(&db).await?;
    assert_eq!(sentinels(&db).await.len(), 2, "the handles are None");

    User::update(&db, "ann").set(User::HANDLE, Some("x".to_owned())).await?;
    let err = User::update(&db, "bob").set(User::HANDLE, Some("x".to_owned())).await.unwrap_err();
    assert!(matches!(err, Error::Unique { field: "handle", scope: "User.handle", .. }), "{err}");
    User::update(&db, "ann").remove(User::HANDLE).await?;
    User::update(&db, "bob").set(User::HANDLE, Some("x".to_owned())).await?;
    User::update(&db, "bob").set(User::HANDLE, None::<String>).await?;
    assert_eq!(sentinels(&db).await.len(), 2);
    Ok(())
}

#[tokio::test]
async fn a_composite_constraint_compares_the_combination() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let m = |id, org: &str, name: &str| Member { id, org: org.into(), name: name.into() };
    m(1, "acme", "ann").create(&db).await?;
    m(2, "acme", "bob").create(&db).await?;
    m(3, "globex", "ann").create(&db).await?;
    // "acme#x" + "y" and "acme" + "x#y" are different combinations.
    m(4, "acme#x", "y").create(&db).await?;
    m(5, "acme", "x#y").create(&db).await?;
    let err = m(6, "acme", "ann").create(&db).await.unwrap_err();
    assert!(
        matches!(err, Error::Unique { field: "org, name", scope: "Member.org+name", .. }),
        "{err}"
    );
    assert!(err.to_string().ends_with("owns the value in unique scope `Member.org+name`"), "{err}");
    // Moving one part moves the combination.
    Member::update(&db, 1).set(Member::ORG, "globex2").await?;
    m(6, "acme", "ann").create(&db).await?;
    let err = Member::update(&db, 3).set(Member::ORG, "acme").await.unwrap_err();
    assert!(err.is_unique_violation());
    assert_eq!(sentinels(&db).await.len(), 6);
    Ok(())
}

#[tokio::test]
async fn separators_escapes_and_empty_values_are_distinct() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let values = ["", "a", "a#", "#a", "a%23", "a#b", "a/b", "%", "é", "🦀", "a b"];
    for (i, v) in values.iter().enumerate() {
        user(&format!("u{i}"), v).create(&db).await?;
    }
    for (i, v) in values.iter().enumerate() {
        let err = user(&format!("x{i}"), v).create(&db).await.unwrap_err();
        assert!(err.is_unique_violation(), "{v:?}: {err}");
    }
    assert_eq!(sentinels(&db).await.len(), values.len());
    // A value too long for a key is refused before sending, naming the field.
    let long = "x".repeat(2100);
    db.reset_requests();
    let err = user("big", &long).create(&db).await.unwrap_err();
    assert!(
        matches!(&err, Error::InvalidKey { entity: "User", attribute, .. } if attribute == "email"),
        "{err}"
    );
    assert_eq!(db.requests().total(), 0);
    Ok(())
}

#[tokio::test]
async fn batches_are_refused_and_transactions_carry_the_sentinels() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    db.reset_requests();
    let err = db.batch_write().put(&user("ann", "a@example.com")).await.unwrap_err();
    let refused = |e: &Error| {
        let inner = match e {
            Error::BatchWriteIncomplete { .. } => None,
            Error::InvalidAction { source, .. } => Some(&**source),
            other => Some(other),
        };
        matches!(
            inner,
            Some(Error::InvalidRequest {
                problem: RequestProblem::UniqueUnenforced { entity: "User", .. },
                ..
            })
        )
    };
    assert!(refused(&err), "{err:?}");
    let err = db.batch_write().delete(User::key("ann")).await.unwrap_err();
    assert!(refused(&err), "{err:?}");
    let err = db.batch_write().put_unchecked(&user("ann", "a@example.com")).await.unwrap_err();
    assert!(refused(&err), "{err:?}");
    let err = User::query(&db, "ann").delete_all().await.unwrap_err();
    assert!(refused(&err), "{err:?}");
    assert_eq!(db.requests().total(), 0, "nothing sent");

    // A transaction's create claims in the same transaction; the claims count as actions.
    let (ann, bob) = (user("ann", "a@example.com"), user("bob", "b@example.com"));
    let tx = db.transaction().create(&ann).create(&bob);
    assert_eq!(tx.len(), 4);
    tx.await?;
    let err = db
        .transaction()
        .create(&user("cat", "c@example.com"))
        .create(&user("dan", "a@example.com"))
        .await
        .unwrap_err();
    assert!(err.is_unique_violation(), "{err}");
    let failed = err.failed_action().expect("a failed action");
    assert!(matches!(failed.reason.condition_error(), Some(Error::Unique { field: "email", .. })));
    assert!(User::get(&db, "cat").await?.is_none(), "nothing written");

    // What needs the stored values reads them when sent: a move, a replace and a delete in
    // one transaction, each with its sentinel actions (1 GetItem each, 1 transaction).
    let (ann2, cat) = (user("ann", "ann@example.com"), user("cat", "cat@example.com"));
    cat.create(&db).await?;
    db.reset_requests();
    let mut dan = user("dan", "d@example.com");
    dan.handle = Some("dd".into());
    db.transaction()
        .replace(&ann2)
        .update(User::key("bob"), |u| u.set(User::EMAIL, "bob@example.com").set(User::NAME, "Bob"))
        .delete(User::key("cat"))
        .create(&dan)
        .await?;
    assert_eq!(db.requests().get(Op::GetItem), 3);
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert_eq!(db.requests().total(), 4);
    let ids = ["ann", "bob", "cat", "dan"];
    check_agreement(&db, &ids).await?;
    // A claim that fails in a composed transaction names the field; nothing is written.
    let err = db
        .transaction()
        .update(User::key("ann"), |u| u.set(User::EMAIL, "bob@example.com"))
        .update(User::key("dan"), |u| u.set(User::NAME, "Dan"))
        .await
        .unwrap_err();
    assert!(err.is_unique_violation(), "{err}");
    check_agreement(&db, &ids).await?;
    // Freeing a value and claiming it for another item touches its sentinel twice.
    let err = db
        .transaction()
        .update(User::key("ann"), |u| u.set(User::EMAIL, "new@example.com"))
        .update(User::key("dan"), |u| u.set(User::EMAIL, "ann@example.com"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidTransaction { .. }), "{err}");
    db.transaction().update(User::key("ann"), |u| u.set(User::NAME, "Ann")).await?;
    check_agreement(&db, &ids).await?;

    // The 100-action limit counts the claims: 50 creates of two values each are 150.
    let users: Vec<User> = (0..50)
        .map(|i| {
            let mut u = user(&format!("n{i}"), &format!("n{i}@example.com"));
            u.handle = Some(format!("n{i}"));
            u
        })
        .collect();
    let mut tx = db.transaction();
    for u in &users {
        tx = tx.create(u);
    }
    let err = tx.await.unwrap_err();
    assert!(matches!(err, Error::InvalidTransaction { .. }), "{err}");
    Ok(())
}

#[tokio::test]
async fn computed_unique_values_are_refused() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    user("ann", "a@example.com").create(&db).await?;
    db.reset_requests();
    let err =
        User::update(&db, "ann").set_if_not_exists(User::EMAIL, "x@example.com").await.unwrap_err();
    assert!(
        matches!(
            &err,
            Error::InvalidRequest { problem: RequestProblem::UniqueComputed { .. }, .. }
        ),
        "{err}"
    );
    assert_eq!(db.requests().total(), 0);
    Ok(())
}

#[tokio::test]
async fn concurrent_claims_of_one_value_have_one_winner() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let users: Vec<User> = (0..20).map(|i| user(&format!("u{i}"), "same@example.com")).collect();
    let results = join_all(users.iter().map(|u| u.create(&db))).await;
    let won = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(won, 1, "{results:?}");
    for r in results.iter().filter_map(|r| r.as_ref().err()) {
        assert!(r.is_unique_violation(), "{r}");
    }
    let owners = sentinels(&db).await;
    assert_eq!(owners.len(), 1);
    let winner = users.iter().zip(&results).find(|(_, r)| r.is_ok()).map(|(u, _)| u.id.clone());
    assert_eq!(owners.values().next().cloned(), winner.map(|id| format!("USER#{id}")));
    Ok(())
}

#[tokio::test]
async fn concurrent_swaps_never_leave_a_value_owned_twice_or_orphaned() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    user("a", "x@example.com").create(&db).await?;
    user("b", "y@example.com").create(&db).await?;
    for round in 0..6 {
        let (to_a, to_b) = if round % 2 == 0 {
            ("y@example.com", "x@example.com")
        } else {
            ("x@example.com", "y@example.com")
        };
        let moves = [
            User::update(&db, "a").set(User::EMAIL, to_a).no_return(),
            User::update(&db, "b").set(User::EMAIL, to_b).no_return(),
            User::update(&db, "a").set(User::EMAIL, "free@example.com").no_return(),
        ];
        let results = join_all(moves).await;
        for r in results.iter().filter_map(|r| r.as_ref().err()) {
            assert!(r.is_unique_violation() || r.is_transaction_conflict(), "{r}");
        }
        check_agreement(&db, &["a", "b"]).await?;
    }
    Ok(())
}

/// The sentinels are exactly the values the users hold, each owned by its holder.
async fn check_agreement(db: &Db, ids: &[&str]) -> Result<(), Error> {
    let mut expected = BTreeMap::new();
    for id in ids {
        if let Some(u) = User::get(db, *id).consistent().await? {
            let owner = format!("USER#{}", u.id);
            assert!(
                expected.insert(sentinel("email", &u.email), owner.clone()).is_none(),
                "email twice"
            );
            if let Some(h) = &u.handle {
                assert!(expected.insert(sentinel("User.handle", h), owner).is_none());
            }
        }
    }
    assert_eq!(sentinels(db).await, expected);
    Ok(())
}

mod props {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Write {
        Create(usize, usize),
        Put(usize, usize),
        SetEmail(usize, usize),
        SetHandle(usize, Option<usize>),
        Delete(usize),
    }

    /// Values from all of Unicode, separators and the escape character, and the empty text.
    fn values() -> impl Strategy<Value = Vec<String>> {
        prop::collection::btree_set(
            prop_oneof![
                "[#%/|~:a]{0,3}",
                any::<String>().prop_map(|s| s.chars().take(5).collect::<String>()),
            ],
            2..5,
        )
        .prop_map(|set| set.into_iter().collect())
    }

    fn writes(values: usize) -> impl Strategy<Value = Vec<Write>> {
        let ids = 0..3usize;
        let write = prop_oneof![
            3 => (ids.clone(), 0..values).prop_map(|(i, v)| Write::Create(i, v)),
            2 => (ids.clone(), 0..values).prop_map(|(i, v)| Write::Put(i, v)),
            3 => (ids.clone(), 0..values).prop_map(|(i, v)| Write::SetEmail(i, v)),
            2 => (ids.clone(), proptest::option::of(0..values)).prop_map(|(i, v)| Write::SetHandle(i, v)),
            1 => ids.prop_map(Write::Delete),
        ];
        prop::collection::vec(write, 1..16)
    }

    fn run<F: std::future::Future<Output = Result<(), Error>>>(f: F) -> Result<(), Error> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        runtime.expect("runtime").block_on(f)
    }

    /// The model: each id's (email, handle), if it exists.
    type Model = BTreeMap<usize, (usize, Option<usize>)>;

    fn taken(model: &Model, except: usize, email: Option<usize>, handle: Option<usize>) -> bool {
        model
            .iter()
            .filter(|(id, _)| **id != except)
            .any(|(_, (e, h))| Some(*e) == email || (handle.is_some() && *h == handle))
    }

    async fn check(values: Vec<String>, writes: Vec<Write>) -> Result<(), Error> {
        let db = support::db::<DefaultTable>().await;
        let mut model: Model = BTreeMap::new();
        let id = |i: usize| format!("p{i}");
        for w in writes {
            let result = match w.clone() {
                Write::Create(i, e) => {
                    let expect = if model.contains_key(&i) {
                        Some(false)
                    } else if taken(&model, i, Some(e), None) {
                        Some(true)
                    } else {
                        model.insert(i, (e, None));
                        None
                    };
                    (user(&id(i), &values[e]).create(&db).await, expect)
                }
                Write::Put(i, e) => {
                    let expect = if taken(&model, i, Some(e), None) {
                        Some(true)
                    } else {
                        model.insert(i, (e, None));
                        None
                    };
                    (user(&id(i), &values[e]).put(&db).await, expect)
                }
                Write::SetEmail(i, e) => {
                    let expect = match model.get(&i).copied() {
                        None => Some(false),
                        Some(_) if taken(&model, i, Some(e), None) => Some(true),
                        Some((_, h)) => {
                            model.insert(i, (e, h));
                            None
                        }
                    };
                    (
                        User::update(&db, id(i)).set(User::EMAIL, &values[e]).no_return().await,
                        expect,
                    )
                }
                Write::SetHandle(i, h) => {
                    let expect = match model.get(&i).copied() {
                        None => Some(false),
                        Some(_) if taken(&model, i, None, h) => Some(true),
                        Some((e, _)) => {
                            model.insert(i, (e, h));
                            None
                        }
                    };
                    let handle = h.map(|h| values[h].clone());
                    (User::update(&db, id(i)).set(User::HANDLE, handle).no_return().await, expect)
                }
                Write::Delete(i) => {
                    model.remove(&i);
                    (User::delete(&db, id(i)).await, None)
                }
            };
            match result {
                (Ok(()), None) => {}
                (Err(e), Some(true)) => assert!(e.is_unique_violation(), "{w:?}: {e}"),
                (Err(e), Some(false)) => {
                    assert!(e.is_already_exists() || e.is_not_found(), "{w:?}: {e}")
                }
                (other, expect) => panic!("{w:?}: {other:?}, expected {expect:?}"),
            }
        }
        let ids: Vec<String> = (0..3).map(id).collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        check_agreement(&db, &ids).await?;
        for (i, (e, h)) in &model {
            let stored = User::get(&db, id(*i)).await?.expect("stored");
            assert_eq!(stored.email, values[*e]);
            assert_eq!(stored.handle, h.map(|h| values[h].clone()));
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn prop_sentinels_agree_with_a_model(
            (values, writes) in values().prop_flat_map(|v| {
                let n = v.len();
                (Just(v), writes(n))
            })
        ) {
            run(check(values, writes)).expect("writes");
        }
    }
}

/// What a stream consumer of the table reads: the sentinels are bookkeeping, never a user.
#[derive(ddb_model::Collection, Debug)]
enum Changed {
    User(User),
    Org(Org),
}

#[tokio::test]
async fn the_stream_decoder_reports_sentinels_as_bookkeeping() -> Result<(), Error> {
    use ddb_model::stream::{Image, StreamRecord, UnknownReason};
    let db = support::db::<DefaultTable>().await;
    user("ann", "a@example.com").create(&db).await?;
    let items = db.scan_items().consistent().all().await?;
    let text = |item: &Item| -> serde_json::Value {
        let map = item
            .iter()
            .map(|(k, v)| match v {
                AttributeValue::S(s) => (k.clone(), serde_json::json!({ "S": s })),
                AttributeValue::Null(n) => (k.clone(), serde_json::json!({ "NULL": n })),
                other => panic!("{other:?}"),
            })
            .collect::<serde_json::Map<_, _>>();
        serde_json::Value::Object(map)
    };
    let mut kinds = Vec::new();
    for item in &items {
        let record = serde_json::json!({
            "eventID": "1",
            "eventName": "INSERT",
            "eventSource": "aws:dynamodb",
            "dynamodb": {
                "Keys": { "pk": text(item)["pk"], "sk": text(item)["sk"] },
                "NewImage": text(item),
                "SequenceNumber": "1",
                "StreamViewType": "NEW_IMAGE",
            },
        });
        let record: StreamRecord = serde_json::from_value(record).expect("a record");
        let change = record.decode::<Changed>()?;
        kinds.push(match change.new {
            Some(Image::Entity(Changed::User(u))) => format!("user {}", u.id),
            Some(Image::Entity(Changed::Org(o))) => format!("org {}", o.id),
            Some(Image::Unknown(u)) => match u.reason {
                UnknownReason::Bookkeeping { kind } => format!("bookkeeping {kind}"),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        });
    }
    kinds.sort();
    assert_eq!(kinds, ["bookkeeping User:unique", "user ann"]);
    Ok(())
}

#[tokio::test]
async fn an_upsert_claims_when_it_creates_and_moves_when_it_updates() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    user("ann", "a@example.com").create(&db).await?;
    let zed = User::update(&db, "zed")
        .upsert()
        .set(User::EMAIL, "z@example.com")
        .set(User::NAME, "Zed")
        .await?;
    assert_eq!((zed.email.as_str(), zed.name.as_str()), ("z@example.com", "Zed"));
    let err = User::update(&db, "yan")
        .upsert()
        .set(User::EMAIL, "a@example.com")
        .set(User::NAME, "Yan")
        .await
        .unwrap_err();
    assert!(err.is_unique_violation(), "{err}");
    assert!(User::get(&db, "yan").await?.is_none());
    User::update(&db, "zed")
        .upsert()
        .set(User::EMAIL, "zz@example.com")
        .set(User::NAME, "Z")
        .await?;
    check_agreement(&db, &["ann", "zed", "yan"]).await
}

#[tokio::test]
async fn concurrent_puts_of_one_item_leave_one_value_owned() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    user("ann", "v0@example.com").create(&db).await?;
    // Eight writers replace ann with eight values at once: each write reads, then moves; the
    // ones overtaken read again. Whatever wins, ann owns exactly the value she holds.
    let versions: Vec<User> = (1..=8).map(|i| user("ann", &format!("v{i}@example.com"))).collect();
    let results = join_all(versions.iter().map(|u| u.put(&db))).await;
    for r in results.iter().filter_map(|r| r.as_ref().err()) {
        assert!(r.is_transaction_conflict() || r.is_condition_failed(), "{r}");
    }
    assert!(results.iter().any(Result::is_ok));
    check_agreement(&db, &["ann"]).await?;
    // Every other value is free again.
    for i in 0..=8 {
        let email = format!("v{i}@example.com");
        let holder = User::get(&db, "ann").await?.map(|u| u.email);
        if holder.as_deref() != Some(email.as_str()) {
            user(&format!("o{i}"), &email).create(&db).await?;
        }
    }
    Ok(())
}

/// Two fields in one scope: an address is a contact's primary or backup, never both, and
/// never another contact's.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "CONTACT#<id>", sk = "CONTACT")]
struct Contact {
    id: u32,
    #[unique(scope = "address")]
    primary: String,
    #[unique(scope = "address")]
    backup: Option<String>,
}

#[tokio::test]
async fn two_fields_of_one_scope() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let c =
        |id, p: &str, b: Option<&str>| Contact { id, primary: p.into(), backup: b.map(Into::into) };
    c(1, "a", Some("b")).create(&db).await?;
    let err = c(2, "b", None).create(&db).await.unwrap_err();
    assert!(matches!(err, Error::Unique { field: "primary", scope: "address", .. }), "{err}");
    // One value in both fields of one item: refused before sending.
    db.reset_requests();
    let err = c(3, "x", Some("x")).create(&db).await.unwrap_err();
    assert!(matches!(err, Error::Unique { field: "backup", .. }), "{err}");
    assert_eq!(db.requests().total(), 0);
    // Swapping the two fields keeps both sentinels: only the item is written.
    c(1, "b", Some("a")).put(&db).await?;
    let owners = sentinels(&db).await;
    assert_eq!(owners.len(), 2, "{owners:?}");
    let one = Contact::key(1u32).pk().to_owned();
    assert!(owners.values().all(|o| *o == one), "{owners:?}");
    Contact::update(&db, 1u32).set(Contact::BACKUP, Some("c".to_owned())).await?;
    c(2, "a", None).create(&db).await?;
    assert_eq!(sentinels(&db).await.len(), 3);
    Ok(())
}
