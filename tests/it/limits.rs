//! DynamoDB limits are checked before anything is sent: typed errors naming entity,
//! attribute and reason; no request; the table unchanged.

use ddb_model::prelude::*;
use ddb_model::{DefaultTable, error::KeyProblem};

use crate::model::{App, Doc, DocId, Kv, Session, Store, User};
use crate::support;

fn invalid_key(err: &Error) -> (&'static str, &str, &KeyProblem) {
    match err {
        Error::InvalidKey { entity, attribute, problem } => (entity, attribute.as_str(), problem),
        other => panic!("expected InvalidKey, got {other:?}"),
    }
}

#[tokio::test]
async fn partition_key_over_2048_bytes() -> Result<(), Error> {
    let db = support::db::<Kv>().await;
    // "SESSION#" + 2040 bytes = 2048: the largest allowed.
    let ok = Session { token: "x".repeat(2040), user: "u".into() };
    ok.create(&db).await?;
    let before = support::snapshot(&db).await;
    let too_long = Session { token: "x".repeat(2041), user: "u".into() };
    let err = crate::no_request!(db, too_long.create(&db).await.unwrap_err());
    let (entity, attribute, problem) = invalid_key(&err);
    assert_eq!((entity, attribute), ("Session", "id"));
    assert_eq!(problem, &KeyProblem::TooLong { len: 2049, max: 2048 });
    assert!(err.is_invalid_input());
    assert!(err.to_string().contains("Session") && err.to_string().contains("2049"), "{err}");

    // Every operation checks: get, update and delete send nothing either.
    let token = "x".repeat(2041);
    crate::no_request!(db, assert!(Session::get(&db, &token).await.is_err()));
    crate::no_request!(db, assert!(Session::delete(&db, &token).await.is_err()));
    let app = support::db::<App>().await;
    let id = "x".repeat(2044);
    crate::no_request!(app, assert!(User::update(&app, &id).set(User::NICK, "n").await.is_err()));
    assert_eq!(support::snapshot(&db).await, before, "nothing was written");
    Ok(())
}

#[tokio::test]
async fn escaping_counts_toward_the_limit() -> Result<(), Error> {
    let db = support::db::<App>().await;
    // 700 '#' escape to 2100 bytes.
    let err = crate::no_request!(db, User::sample(&"#".repeat(700)).put(&db).await.unwrap_err());
    assert!(matches!(invalid_key(&err).2, KeyProblem::TooLong { len: 2105, .. }), "{err}");
    assert!(support::snapshot(&db).await.is_empty());
    Ok(())
}

#[tokio::test]
async fn sort_key_over_1024_bytes() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let store = Store {
        country: "USA".into(),
        state: "s".repeat(1021),
        city: "c".into(),
        zip: "z".into(),
        address: String::new(),
        square_feet: 1,
    };
    let err = crate::no_request!(db, store.create(&db).await.unwrap_err());
    assert_eq!(invalid_key(&err).1, "sk");
    assert!(matches!(invalid_key(&err).2, KeyProblem::TooLong { len: 1025, max: 1024 }));
    assert!(support::snapshot(&db).await.is_empty());
    Ok(())
}

#[tokio::test]
async fn index_keys_are_checked_too() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut user = User::sample("u1");
    user.name = "n".repeat(1020); // gsi1sk = "USER#" + name + "#u1" > 1024
    let err = crate::no_request!(db, user.create(&db).await.unwrap_err());
    let (entity, attribute, _) = invalid_key(&err);
    assert_eq!((entity, attribute), ("User", "gsi1sk"));

    let mut user = User::sample("u1");
    user.org = "o".repeat(2045); // gsi1pk = "ORG#" + org = 2049 bytes
    let err = crate::no_request!(db, user.create(&db).await.unwrap_err());
    assert_eq!(invalid_key(&err).1, "gsi1pk");
    assert!(support::snapshot(&db).await.is_empty());
    Ok(())
}

#[tokio::test]
async fn an_empty_key_is_rejected() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let store = Store {
        country: String::new(), // pk template is "<country>" alone
        state: "NY".into(),
        city: "c".into(),
        zip: "z".into(),
        address: String::new(),
        square_feet: 1,
    };
    let err = crate::no_request!(db, store.create(&db).await.unwrap_err());
    assert_eq!(invalid_key(&err), ("Store", "pk", &KeyProblem::Empty));
    assert!(support::snapshot(&db).await.is_empty());
    Ok(())
}

#[tokio::test]
async fn items_over_400_kb() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let mut doc = Doc {
        doc_id: DocId("big".into()),
        revision: 1,
        title_text: "t".repeat(400 * 1024),
        cached_render: None,
        word_count: 0,
    };
    let err = crate::no_request!(db, doc.create(&db).await.unwrap_err());
    match &err {
        Error::ItemTooLarge { entity, size, max } => {
            assert_eq!(*entity, "Document");
            assert!(*size > *max && *max == 400 * 1024, "{err}");
        }
        other => panic!("expected ItemTooLarge, got {other:?}"),
    }
    assert!(support::snapshot(&db).await.is_empty());

    // Just under the limit is accepted by the service: the size estimate is not too strict.
    doc.title_text = "t".repeat(400 * 1024 - 200);
    doc.create(&db).await?;
    Ok(())
}
