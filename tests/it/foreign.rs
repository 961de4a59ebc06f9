//! Items that are not what the entity expects: another entity's item under the key, a
//! corrupted item, an item written by hand. Always a typed error, never a panic or a
//! silently wrong struct, and writes leave such items alone.

use std::collections::HashMap;

use ddb_model::prelude::*;

use crate::model::{App, Order, Status, User};
use crate::support::{self, put_raw, s};

fn raw_user(id: &str) -> HashMap<String, ddb_model::aws_sdk_dynamodb::types::AttributeValue> {
    HashMap::from([
        ("pk".to_owned(), s(&format!("USER#{id}"))),
        ("sk".to_owned(), s("PROFILE")),
        ("_type".to_owned(), s("User")),
        ("id".to_owned(), s(id)),
        ("org".to_owned(), s("acme")),
        ("name".to_owned(), s("n")),
    ])
}

/// An entity of another type whose key template collides with `User`'s by design.
#[derive(Entity, serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "USER#<id>", sk = "PROFILE", name = "LegacyUser")]
struct LegacyUser {
    id: String,
}

#[tokio::test]
async fn another_entity_under_the_key_is_wrong_entity_type() -> Result<(), Error> {
    let db = support::db::<App>().await;
    LegacyUser { id: "u1".into() }.create(&db).await?;
    let before = support::snapshot(&db).await;

    let err = User::get(&db, "u1").await.unwrap_err();
    assert!(
        matches!(&err, Error::WrongEntityType { expected: "User", found: Some(f), .. } if f == "LegacyUser"),
        "{err:?}"
    );
    // No write of `User` touches it.
    let user = User::sample("u1");
    for err in [
        user.put(&db).await.unwrap_err(),
        user.replace(&db).await.unwrap_err(),
        User::update(&db, "u1").set(User::NICK, "x").await.unwrap_err(),
        User::delete(&db, "u1").await.unwrap_err(),
    ] {
        assert!(matches!(err, Error::WrongEntityType { .. }), "{err:?}");
    }
    assert!(user.create(&db).await.unwrap_err().is_already_exists());
    assert_eq!(support::snapshot(&db).await, before, "the foreign item is untouched");
    Ok(())
}

#[tokio::test]
async fn an_item_without_entity_type_is_refused() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut item = raw_user("u1");
    item.remove("_type");
    put_raw(&db, item).await;
    let err = User::get(&db, "u1").await.unwrap_err();
    assert!(matches!(err, Error::WrongEntityType { found: None, .. }), "{err:?}");
    Ok(())
}

#[tokio::test]
async fn a_stored_key_that_disagrees_with_the_fields_is_corrupt() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut item = raw_user("u1");
    item.insert("id".into(), s("u2")); // the fields say u2, the key says u1
    put_raw(&db, item).await;
    let err = User::get(&db, "u1").await.unwrap_err();
    assert!(matches!(err, Error::CorruptItem { .. }), "{err:?}");
    assert!(err.to_string().contains("USER#u2"), "{err}");
    Ok(())
}

#[tokio::test]
async fn attributes_of_the_wrong_type_are_a_deserialize_error() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut item = raw_user("u1");
    item.insert("logins".into(), s("many"));
    put_raw(&db, item).await;
    let err = User::get(&db, "u1").await.unwrap_err();
    assert!(matches!(err, Error::Deserialize { entity: "User", .. }), "{err:?}");
    assert!(std::error::Error::source(&err).is_some(), "the serde error is the source");

    let mut item = raw_user("u2");
    item.remove("org");
    put_raw(&db, item).await;
    let err = User::get(&db, "u2").await.unwrap_err();
    assert!(matches!(err, Error::Deserialize { .. }), "missing field: {err:?}");
    Ok(())
}

#[tokio::test]
async fn a_versioned_item_with_a_garbled_version() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut order = Order {
        user: "u1".into(),
        year: 1,
        seq: 1,
        status: Status::Open,
        total_cents: 1,
        version: 0,
    };
    order.create(&db).await?;
    let sk = Order::key("u1", 1, 1u64).sk().unwrap_or_default().to_owned();
    let mut item = support::raw(&db, "USER#u1", &sk).await.unwrap();
    item.insert("version".into(), s("not a number"));
    put_raw(&db, item).await;
    let before = support::snapshot(&db).await;
    let err = order.replace(&db).await.unwrap_err();
    assert!(matches!(err, Error::VersionConflict { expected: 1, actual: None, .. }), "{err:?}");
    assert_eq!(support::snapshot(&db).await, before);
    Ok(())
}

#[tokio::test]
async fn a_flattened_field_cannot_overwrite_a_key_attribute() -> Result<(), Error> {
    #[derive(serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
    struct Extra {
        pk: String,
    }
    #[derive(Entity, serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
    #[entity(table = App, pk = "SNEAKY#<id>", sk = "S")]
    struct Sneaky {
        id: String,
        #[serde(flatten)]
        extra: Extra,
    }
    let db = support::db::<App>().await;
    let sneaky = Sneaky { id: "1".into(), extra: Extra { pk: "USER#victim".into() } };
    let err = crate::no_request!(db, sneaky.put(&db).await.unwrap_err());
    assert!(
        matches!(&err, Error::AttributeCollision { attribute, .. } if attribute == "pk"),
        "{err:?}"
    );
    assert!(support::snapshot(&db).await.is_empty());
    Ok(())
}
