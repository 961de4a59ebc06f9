//! Update expressions and typed conditions.

use ddb_model::prelude::*;
use ddb_model::{Op, UpdateActions, expr::AttrType};

use crate::model::{App, User};
use crate::support;

async fn with_user() -> (Db<App>, User) {
    let db = support::db::<App>().await;
    let user = User::sample("u1");
    user.create(&db).await.expect("create");
    (db, user)
}

#[tokio::test]
async fn set_remove_and_if_not_exists() -> Result<(), Error> {
    let (db, _) = with_user().await;
    let u = User::update(&db, "u1")
        .set(User::NICK, "annie")
        .set_if_not_exists(User::LOGINS, 7u64)
        .await?;
    assert_eq!((u.nick.as_deref(), u.logins), (Some("annie"), 0), "logins exists: kept");

    let u = User::update(&db, "u1").remove(User::NICK).await?;
    assert_eq!(u.nick, None);
    let u = User::update(&db, "u1").set_if_not_exists(User::NICK, "first").await?;
    assert_eq!(u.nick.as_deref(), Some("first"), "absent: set");
    Ok(())
}

#[tokio::test]
async fn nested_paths() -> Result<(), Error> {
    let (db, _) = with_user().await;
    let u = User::update(&db, "u1")
        .set(User::ADDRESS.at::<String>("city"), "Lyon")
        .set(User::TAGS, vec!["a".to_string(), "b".to_string()])
        .await?;
    assert_eq!(u.address.get("city").map(String::as_str), Some("Lyon"));
    let u = User::update(&db, "u1").set(User::TAGS.index::<String>(1), "B").await?;
    assert_eq!(u.tags, ["a", "B"]);
    let found = User::get(&db, "u1").await?.unwrap();
    assert_eq!(found, u);
    Ok(())
}

#[tokio::test]
async fn add_and_append_are_safe_to_retry_and_return_their_own_result() -> Result<(), Error> {
    let (db, _) = with_user().await;
    let before = db.requests();
    let u =
        User::update(&db, "u1").add(User::LOGINS, 2).append(User::TAGS, ["x".to_string()]).await?;
    assert_eq!((u.logins, u.tags.as_slice()), (2, ["x".to_string()].as_slice()));
    let spent = db.requests() - before;
    assert_eq!(spent.get(Op::UpdateItem), 2, "the marked update, then the marker removal");
    assert_eq!(spent.get(Op::GetItem), 0, "no read: ALL_NEW is this write's own state");
    assert_eq!(spent.get(Op::TransactWriteItems), 0);
    assert_eq!(User::get(&db, "u1").await?.as_ref(), Some(&u));

    let before = db.requests();
    User::update(&db, "u1").add(User::LOGINS, 3).no_return().await?;
    let spent = db.requests() - before;
    assert_eq!(spent.total(), 1, "no_return: one request");
    assert_eq!(spent.get(Op::TransactWriteItems), 1, "a token-carrying transaction");
    assert_eq!(User::get(&db, "u1").await?.unwrap().logins, 5);

    let before = db.requests();
    User::update(&db, "u1").set(User::NICK, "x").await?;
    assert_eq!((db.requests() - before).get(Op::UpdateItem), 1, "idempotent: one UpdateItem");
    Ok(())
}

#[tokio::test]
async fn update_of_a_missing_item_is_not_found_and_creates_nothing() -> Result<(), Error> {
    let db = support::db::<App>().await;
    for attempt in [
        User::update(&db, "ghost").set(User::NICK, "x").await.map(|_| ()),
        User::update(&db, "ghost").add(User::LOGINS, 1).no_return().await,
        User::update(&db, "ghost").add(User::LOGINS, 1).await.map(|_| ()),
        User::update(&db, "ghost").append(User::TAGS, ["x".to_string()]).await.map(|_| ()),
    ] {
        let err = attempt.unwrap_err();
        assert!(err.is_not_found(), "{err}");
    }
    assert!(support::snapshot(&db).await.is_empty(), "an update never creates a partial item");
    Ok(())
}

#[tokio::test]
async fn conditions_cover_every_operator() -> Result<(), Error> {
    let (db, _) = with_user().await;
    User::update(&db, "u1").set(User::TAGS, vec!["red".to_string(), "blue".to_string()]).await?;
    let holds: Vec<(&str, Condition<User>)> = vec![
        ("eq", User::NAME.eq("name-u1")),
        ("ne", User::NAME.ne("x")),
        ("lt", User::LOGINS.lt(1)),
        ("le", User::LOGINS.le(0)),
        ("gt", User::LOGINS.gt(-1i64 as u64 / 2).not()),
        ("ge", User::LOGINS.ge(0)),
        ("between", User::LOGINS.between(0, 10)),
        ("in", User::ORG.is_in(["acme", "globex"])),
        ("exists", User::EMAIL.exists()),
        (
            "not_exists",
            User::NICK.is_type(AttrType::Null) | User::NICK.not_exists() | User::NICK.eq("n"),
        ),
        ("begins_with", User::EMAIL.begins_with("u1@")),
        ("contains string", User::NAME.contains("me-u")),
        ("contains element", User::TAGS.contains("blue")),
        ("size", User::TAGS.size().eq(2)),
        ("type", User::LOGINS.is_type(AttrType::N)),
        ("and/or/not", (User::LOGINS.eq(1) | User::LOGINS.eq(0)) & !User::ORG.eq("globex")),
        ("option value", User::EMAIL.eq("u1@acme.test")),
        ("nested", User::TAGS.index::<String>(0).eq("red")),
    ];
    for (name, condition) in holds {
        let result = User::update(&db, "u1").set(User::NICK, "n").condition(condition).await;
        assert!(result.is_ok(), "{name} should hold: {result:?}");
    }
    let fails: Vec<(&str, Condition<User>)> = vec![
        ("eq", User::NAME.eq("nope")),
        ("lt", User::LOGINS.lt(0)),
        ("in", User::ORG.is_in(["globex"])),
        ("begins_with", User::EMAIL.begins_with("u2@")),
        ("size", User::TAGS.size().gt(5)),
        ("not", !User::ORG.eq("acme")),
    ];
    for (name, condition) in fails {
        let before = support::snapshot(&db).await;
        let err = User::update(&db, "u1")
            .set(User::NICK, "changed")
            .condition(condition)
            .await
            .unwrap_err();
        assert!(matches!(err, Error::ConditionFailed { .. }), "{name}: {err:?}");
        assert!(err.current::<User>().is_some(), "{name}: carries the current item");
        assert_eq!(support::snapshot(&db).await, before, "{name}: nothing written");
    }
    Ok(())
}

#[tokio::test]
async fn invalid_updates_are_rejected_before_sending() -> Result<(), Error> {
    let (db, _) = with_user().await;
    let before = support::snapshot(&db).await;
    let overlapping = crate::no_request!(
        db,
        User::update(&db, "u1")
            .set(User::TAGS, Vec::<String>::new())
            .set(User::TAGS.index::<String>(0), "x")
            .await
    );
    assert!(
        matches!(
            &overlapping,
            Err(Error::InvalidRequest { problem: RequestProblem::OverlappingPaths { .. }, .. })
        ),
        "{overlapping:?}"
    );

    let empty = crate::no_request!(db, User::update(&db, "u1").await);
    assert!(
        matches!(empty, Err(Error::InvalidRequest { problem: RequestProblem::EmptyUpdate, .. })),
        "{empty:?}"
    );

    let too_many: Vec<String> = (0..101).map(|i| i.to_string()).collect();
    let big_in = crate::no_request!(
        db,
        User::update(&db, "u1").set(User::NICK, "x").condition(User::ORG.is_in(too_many)).await
    );
    assert!(
        matches!(
            big_in,
            Err(Error::InvalidRequest {
                problem: RequestProblem::InOperands { count: 101, max: 100 },
                ..
            })
        ),
        "{big_in:?}"
    );
    assert_eq!(support::snapshot(&db).await, before);
    Ok(())
}

#[tokio::test]
async fn user_data_never_reaches_expression_text() -> Result<(), Error> {
    let (db, _) = with_user().await;
    // Values that look like expression syntax are plain values.
    let hostile = "x) OR attribute_exists(#n0) OR (:v0 = :v0";
    let u = User::update(&db, "u1")
        .set(User::NICK, hostile)
        .set(User::ADDRESS.at::<String>("a.b #c :d"), hostile)
        .condition(User::NICK.ne(hostile))
        .await?;
    assert_eq!(u.nick.as_deref(), Some(hostile));
    assert_eq!(u.address.get("a.b #c :d").map(String::as_str), Some(hostile));
    Ok(())
}

#[tokio::test]
async fn prepared_actions_compose() -> Result<(), Error> {
    let (db, _) = with_user().await;
    let actions = UpdateActions::<User>::new().set(User::NICK, "c").add(User::LOGINS, 1);
    let u = User::update(&db, "u1").actions(actions).set(User::TAGS, vec!["t".to_string()]).await?;
    assert_eq!((u.nick.as_deref(), u.logins, u.tags.len()), (Some("c"), 1, 1));
    Ok(())
}

#[tokio::test]
async fn map_entries_are_set_removed_and_tested_without_an_option_type() -> Result<(), Error> {
    let (db, _) = with_user().await;
    let u = User::update(&db, "u1")
        .set(User::ADDRESS.entry("city"), "Lyon")
        .set(User::ADDRESS.entry("zip"), "69001")
        .await?;
    assert_eq!(u.address.len(), 2);
    let u = User::update(&db, "u1")
        .remove(User::ADDRESS.entry("zip"))
        .condition(User::ADDRESS.entry("zip").exists() & User::ADDRESS.entry("city").eq("Lyon"))
        .await?;
    assert_eq!(u.address.into_iter().collect::<Vec<_>>(), [("city".into(), "Lyon".into())]);
    // An absent key: nothing to remove, no error.
    let u = User::update(&db, "u1").remove(User::ADDRESS.entry("nowhere")).await?;
    assert_eq!(u.address.len(), 1);
    // The condition on an entry that is gone fails.
    let err = User::update(&db, "u1")
        .remove(User::ADDRESS.entry("city"))
        .condition(User::ADDRESS.entry("zip").exists())
        .await
        .unwrap_err();
    assert!(err.is_own_condition_failed(), "{err:?}");
    // Keys that need escaping in an expression are placeholders like any name.
    let u = User::update(&db, "u1").set(User::ADDRESS.entry("a.b #c"), "x").await?;
    assert_eq!(u.address.get("a.b #c").map(String::as_str), Some("x"));
    let u = User::update(&db, "u1").remove(User::ADDRESS.entry("a.b #c")).await?;
    assert!(!u.address.contains_key("a.b #c"));
    // An empty key is refused before sending.
    let err = crate::no_request!(db, User::update(&db, "u1").remove(User::ADDRESS.entry("")).await);
    assert!(err.is_err_and(|e| e.is_invalid_input()));
    // In prepared actions (and so in transactions).
    let actions = UpdateActions::new().remove(User::ADDRESS.entry("city"));
    db.transaction().update(User::key("u1"), |u| u.actions(actions)).await?;
    assert!(!User::get(&db, "u1").await?.unwrap().address.contains_key("city"));
    Ok(())
}

#[tokio::test]
async fn removing_an_entry_of_an_absent_map() -> Result<(), Error> {
    let (db, user) = with_user().await;
    // An item written without the map attribute (`address` has a serde default).
    let key = User::key(&user.id);
    let mut item = support::raw(&db, key.pk(), key.sk().unwrap()).await.unwrap();
    item.remove("address");
    support::put_raw(&db, item).await;
    let out = User::update(&db, "u1").remove(User::ADDRESS.entry("city")).await;
    // DynamoDB rejects a REMOVE whose parent document is absent.
    let err = out.expect_err("the parent map is absent");
    assert!(err.to_string().contains("document path"), "{err}");
    Ok(())
}
