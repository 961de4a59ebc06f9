//! Single-item operations: create, get, put, replace, delete, and the repository methods.

use ddb_model::prelude::*;
use ddb_model::{DefaultTable, Op};

use crate::model::{App, Config, Doc, DocId, Kv, Session, User};
use crate::support::{self, raw, s};

#[tokio::test]
async fn create_then_get_reads_back_the_same_struct() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let user = User::sample("u1");
    user.create(&db).await?;
    assert_eq!(User::get(&db, "u1").await?, Some(user.clone()));
    assert_eq!(User::get(&db, "u1").consistent().await?, Some(user.clone()));
    assert_eq!(db.get(User::key("u1")).send().await?, Some(user));
    assert_eq!(User::get(&db, "nobody").await?, None);
    Ok(())
}

#[tokio::test]
async fn stored_items_carry_keys_index_keys_and_the_entity_type() -> Result<(), Error> {
    let db = support::db::<App>().await;
    User::sample("u1").create(&db).await?;
    let item = raw(&db, "USER#u1", "PROFILE").await.expect("stored");
    assert_eq!(item["pk"], s("USER#u1"));
    assert_eq!(item["sk"], s("PROFILE"));
    assert_eq!(item["_type"], s("User"));
    assert_eq!(item["gsi1pk"], s("ORG#acme"));
    assert_eq!(item["gsi1sk"], s("USER#name-u1#u1"));
    assert_eq!(item["gsi2pk"], s("EMAIL#u1@acme.test"));
    assert_eq!(item["id"], s("u1"));
    Ok(())
}

#[tokio::test]
async fn an_index_with_an_empty_option_field_is_sparse() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut user = User::sample("u2");
    user.email = None;
    user.create(&db).await?;
    let item = raw(&db, "USER#u2", "PROFILE").await.expect("stored");
    assert!(!item.contains_key("gsi2pk"), "no e-mail, so not in gsi2: {item:?}");
    assert!(item.contains_key("gsi1pk"));

    // Putting an e-mail adds the item to the index; removing it takes it out again.
    user.email = Some("u2@acme.test".into());
    user.put(&db).await?;
    assert_eq!(raw(&db, "USER#u2", "PROFILE").await.unwrap()["gsi2pk"], s("EMAIL#u2@acme.test"));
    user.email = None;
    user.replace(&db).await?;
    assert!(!raw(&db, "USER#u2", "PROFILE").await.unwrap().contains_key("gsi2pk"));
    Ok(())
}

#[tokio::test]
async fn create_of_an_existing_item_is_already_exists_with_the_current_item() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let original = User::sample("u1");
    original.create(&db).await?;
    let before = support::snapshot(&db).await;

    let mut other = User::sample("u1");
    other.name = "someone else".into();
    let err = other.create(&db).await.unwrap_err();
    assert!(err.is_already_exists() && err.is_condition_failed(), "{err}");
    let current: User = err.current().expect("current item").expect("a User");
    assert_eq!(current, original);
    assert_eq!(support::snapshot(&db).await, before, "create must not overwrite");
    Ok(())
}

#[tokio::test]
async fn create_of_an_identical_item_still_fails() -> Result<(), Error> {
    // Only a retried request may recognise the stored item as its own write; a second create
    // with the same content is a second create.
    let db = support::db::<App>().await;
    let user = User::sample("u1");
    user.create(&db).await?;
    let err = user.create(&db).await.unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    Ok(())
}

#[tokio::test]
async fn put_inserts_and_overwrites() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut user = User::sample("u1");
    user.put(&db).await?;
    user.name = "renamed".into();
    user.put(&db).await?;
    assert_eq!(User::get(&db, "u1").await?.unwrap().name, "renamed");
    assert_eq!(raw(&db, "USER#u1", "PROFILE").await.unwrap()["gsi1sk"], s("USER#renamed#u1"));
    Ok(())
}

#[tokio::test]
async fn put_with_a_condition() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut user = User::sample("u1");
    user.put(&db).await?;
    user.logins = 5;
    let before = support::snapshot(&db).await;
    let err = user.put(&db).condition(User::LOGINS.gt(3)).await.unwrap_err();
    assert!(matches!(err, Error::ConditionFailed { .. }), "{err:?}");
    assert_eq!(support::snapshot(&db).await, before);
    user.put(&db).condition(User::LOGINS.eq(0)).await?;
    assert_eq!(User::get(&db, "u1").await?.unwrap().logins, 5);
    Ok(())
}

#[tokio::test]
async fn replace_requires_an_item() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut user = User::sample("u1");
    let err = user.replace(&db).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    assert!(support::snapshot(&db).await.is_empty(), "replace of a missing item writes nothing");

    user.create(&db).await?;
    user.nick = Some("nick".into());
    user.replace(&db).await?;
    assert_eq!(User::get(&db, "u1").await?, Some(user));
    Ok(())
}

#[tokio::test]
async fn delete_is_idempotent_and_can_return_the_old_item() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let user = User::sample("u1");
    user.create(&db).await?;
    let old = User::delete(&db, "u1").return_old().await?;
    assert_eq!(old, Some(user));
    assert_eq!(User::get(&db, "u1").await?, None);
    // Deleting again is fine and returns nothing.
    User::delete(&db, "u1").await?;
    assert_eq!(User::delete(&db, "u1").return_old().await?, None);
    Ok(())
}

#[tokio::test]
async fn delete_with_a_condition() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let user = User::sample("u1");
    user.create(&db).await?;
    let err = User::delete(&db, "u1").condition(User::LOGINS.gt(0)).await.unwrap_err();
    assert!(matches!(err, Error::ConditionFailed { .. }), "{err:?}");
    assert!(User::get(&db, "u1").await?.is_some(), "still there");
    User::delete(&db, "u1").condition(User::LOGINS.eq(0)).await?;
    assert!(User::get(&db, "u1").await?.is_none());
    // With a condition, the item must exist.
    let err = User::delete(&db, "u1").condition(User::LOGINS.eq(0)).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    Ok(())
}

#[tokio::test]
async fn the_generic_db_api_matches_the_repository_methods() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let user = User::sample("g1");
    db.create(&user).await?;
    db.put(&user).await?;
    db.replace(&user).await?;
    assert_eq!(db.get(user.key()).consistent().await?, Some(user.clone()));
    let updated = db.update(user.key()).set(User::NICK, "G").await?;
    assert_eq!(updated.nick.as_deref(), Some("G"));
    assert_eq!(db.delete(user.key()).return_old().await?.and_then(|u| u.nick), Some("G".into()));
    Ok(())
}

#[tokio::test]
async fn serde_attributes_are_respected() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let doc = Doc {
        doc_id: DocId("d1".into()),
        revision: 2,
        title_text: "Hello".into(),
        cached_render: Some("<h1>Hello</h1>".into()),
        word_count: 1,
    };
    doc.create(&db).await?;
    let item = raw(&db, "DOC#d1", "REV#00002").await.expect("stored");
    assert_eq!(item["heading"], s("Hello"), "field rename");
    assert_eq!(item["docId"], s("d1"), "rename_all camelCase");
    assert!(item.contains_key("wordCount"));
    assert!(!item.contains_key("cachedRender"), "skipped field is not stored");
    assert_eq!(item["_type"], s("Document"), "#[entity(name)]");
    // deny_unknown_fields: key and type attributes never reach the struct.
    let read = Doc::get(&db, DocId("d1".into()), 2u16).await?.expect("found");
    assert_eq!(read, Doc { cached_render: None, ..doc });
    assert_eq!(Doc::TITLE_TEXT.name(), "heading");
    assert_eq!(Doc::WORD_COUNT.name(), "wordCount");
    Ok(())
}

#[tokio::test]
async fn singletons_and_tables_without_sort_key() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let config = Config { maintenance: false, motd: "hi".into() };
    config.put(&db).await?;
    assert_eq!(Config::get(&db).await?, Some(config));

    let kv = support::db::<Kv>().await;
    let session = Session { token: "t#1".into(), user: "u1".into() };
    session.create(&kv).await?;
    assert_eq!(Session::get(&kv, "t#1").await?, Some(session.clone()));
    let item = support::raw(&kv, "SESSION#t%231", "").await.expect("stored");
    assert_eq!(item["kind"], s("Session"), "custom type attribute");
    assert_eq!(Session::delete(&kv, "t#1").return_old().await?, Some(session));
    Ok(())
}

#[tokio::test]
async fn expect_version_needs_a_version_field() -> Result<(), Error> {
    let db = support::db::<App>().await;
    User::sample("u1").create(&db).await?;
    let err = crate::no_request!(
        db,
        User::update(&db, "u1").set(User::NICK, "n").expect_version(1).await.unwrap_err()
    );
    assert!(
        matches!(
            err,
            Error::InvalidRequest {
                problem: RequestProblem::NoVersionField { entity: "User" },
                ..
            }
        ),
        "{err:?}"
    );
    let err = crate::no_request!(db, User::delete(&db, "u1").expect_version(1).await.unwrap_err());
    assert!(
        matches!(
            err,
            Error::InvalidRequest {
                problem: RequestProblem::NoVersionField { entity: "User" },
                ..
            }
        ),
        "{err:?}"
    );
    Ok(())
}

#[tokio::test]
async fn operations_are_counted() -> Result<(), Error> {
    let db = support::db::<App>().await.with_capacity(true);
    db.reset_requests();
    let user = User::sample("u1");
    user.create(&db).await?;
    user.put(&db).await?;
    User::get(&db, "u1").await?;
    User::update(&db, "u1").set(User::NICK, "n").await?;
    User::delete(&db, "u1").await?;
    let stats = db.requests();
    assert_eq!(stats.get(Op::PutItem), 2);
    assert_eq!(stats.get(Op::GetItem), 1);
    assert_eq!(stats.get(Op::UpdateItem), 1);
    assert_eq!(stats.get(Op::DeleteItem), 1);
    assert_eq!(stats.total(), 5);
    assert!(stats.write_units() > 0.0 && stats.read_units() > 0.0, "capacity: {stats:?}");
    // A clone shares the counters; subtraction isolates a span of work.
    let clone = db.clone();
    let before = clone.requests();
    User::get(&clone, "u1").await?;
    assert_eq!((db.requests() - before).get(Op::GetItem), 1);
    assert_eq!(format!("{}", db.requests() - before), "GetItem 1");
    Ok(())
}

#[tokio::test]
async fn capacity_reports_are_opt_in() -> Result<(), Error> {
    let db = support::db::<App>().await;
    db.reset_requests();
    let user = User::sample("cap");
    user.create(&db).await?;
    User::get(&db, "cap").await?;
    let stats = db.requests();
    assert_eq!((stats.get(Op::PutItem), stats.get(Op::GetItem)), (1, 1), "still counted");
    assert_eq!((stats.write_units(), stats.read_units()), (0.0, 0.0), "no capacity asked");
    // A handle that asks shares the counters; the default one still does not ask.
    let metered = db.clone().with_capacity(true);
    User::get(&metered, "cap").await?;
    User::update(&metered, "cap").set(User::NICK, "m").await?;
    let asked = db.requests();
    assert!(asked.read_units() > 0.0 && asked.write_units() > 0.0, "{asked:?}");
    // Turned off again, and on the default handle: counted, no capacity.
    User::get(&db, "cap").await?;
    User::get(&metered.clone().with_capacity(false), "cap").await?;
    let after = db.requests() - asked;
    assert_eq!(after.get(Op::GetItem), 2);
    assert_eq!((after.read_units(), after.write_units()), (0.0, 0.0), "{after:?}");
    Ok(())
}

#[tokio::test]
async fn a_db_made_from_another_dbs_client_counts_each_attempt_once() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let again: Db<App> = Db::with_table_name(db.client().clone(), db.table_name());
    let third: Db<App> = Db::with_table_name(again.client().clone(), db.table_name());
    for handle in [&db, &again, &third] {
        handle.reset_requests();
    }
    User::sample("twice").create(&third).await?;
    let stats = third.requests();
    assert_eq!((stats.get(Op::PutItem), stats.attempts(Op::PutItem)), (1, 1), "{stats:?}");
    assert_eq!(db.requests().total_attempts(), 0, "the other handles count nothing");
    assert_eq!(again.requests().total_attempts(), 0);
    // A request sent through the client directly is nobody's: counted nowhere, and it works.
    let out = db.client().describe_table().table_name(db.table_name()).send().await;
    assert!(out.is_ok(), "{out:?}");
    assert_eq!(db.requests().total_attempts(), 0);
    Ok(())
}

#[tokio::test]
async fn requests_joined_in_one_task_each_count_their_own_attempts() -> Result<(), Error> {
    let db = support::db::<App>().await;
    db.reset_requests();
    let gets = (0..24).map(|i| {
        let db = db.clone();
        async move { User::get(&db, format!("none{i}").as_str()).await }
    });
    for found in futures_util::future::join_all(gets).await {
        assert!(found?.is_none());
    }
    let stats = db.requests();
    assert_eq!((stats.get(Op::GetItem), stats.attempts(Op::GetItem)), (24, 24), "{stats:?}");
    Ok(())
}
