//! Table definitions and `create_table`.

use ddb_model::prelude::*;
use ddb_model::{DefaultTable, Op, entity::IndexDef, local};

use crate::model::{App, Kv};

#[test]
fn derived_and_default_layouts() {
    assert_eq!(
        (App::NAME, App::PK, App::SK, App::TYPE_ATTR),
        ("app", "pk", Some("sk"), Some("_type"))
    );
    assert_eq!(
        App::INDEXES,
        &[
            IndexDef::synthetic("gsi1", "gsi1pk", Some("gsi1sk")),
            IndexDef::synthetic("gsi2", "gsi2pk", None),
        ]
    );
    assert_eq!((Kv::PK, Kv::SK, Kv::TYPE_ATTR), ("id", None, Some("kind")));
    assert_eq!(DefaultTable::INDEXES.len(), 3);
    assert_eq!(DefaultTable::INDEXES[2], IndexDef::synthetic("gsi3", "gsi3pk", Some("gsi3sk")));
}

#[tokio::test]
async fn create_table_is_idempotent_and_checks_the_layout() -> Result<(), Error> {
    let db = crate::support::db::<App>().await;
    let before = db.requests();
    db.create_table().await?;
    let spent = db.requests() - before;
    assert_eq!(spent.get(Op::CreateTable), 1);
    assert!(spent.get(Op::DescribeTable) >= 1);

    // The same physical table seen through another layout is a mismatch, not a silent misuse.
    let wrong: Db<Kv> = Db::with_table_name(local::client()?, db.table_name());
    let err = wrong.create_table().await.unwrap_err();
    assert!(matches!(err, Error::TableMismatch { .. }), "{err:?}");
    assert!(err.to_string().contains("key schema"), "{err}");

    db.delete_table().await?;
    db.delete_table().await?; // missing is fine
    Ok(())
}

#[tokio::test]
async fn a_missing_index_is_a_mismatch() -> Result<(), Error> {
    #[derive(Table)]
    #[table(name = "narrow", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
    struct Narrow;
    let narrow = crate::support::db::<Narrow>().await;
    let wide: Db<App> = Db::with_table_name(local::client()?, narrow.table_name());
    let err = wide.create_table().await.unwrap_err();
    assert!(err.to_string().contains("index `gsi2` is missing"), "{err}");
    Ok(())
}

#[tokio::test]
async fn the_table_name_is_chosen_at_run_time() -> Result<(), Error> {
    let db: Db<App> = Db::with_table_name(local::client()?, "app-dev-ddb-model-test");
    assert_eq!(db.table_name(), "app-dev-ddb-model-test");
    db.create_table().await?;
    let default_named = Db::<App>::new(local::client()?);
    assert_eq!(default_named.table_name(), "app");
    db.delete_table().await?;
    Ok(())
}
