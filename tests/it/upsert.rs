//! Upserts: an update that creates the item when it is missing.

use ddb_model::Op;
use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};

use crate::model::{App, User};
use crate::support;

/// Page statistics: gsi1 keys come from key fields only (an upsert computes them); gsi2 from
/// an `Option` that updates cannot write (an upserted page is not in gsi2).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "PAGE#<site>#<url>", sk = "STATS", version = version)]
#[index(gsi1, pk = "SITE#<site>", sk = "PAGE#<url>")]
#[index(gsi2, pk = "CAT#<category>")]
pub struct Page {
    site: String,
    url: String,
    title: String,
    #[serde(default)]
    views: u64,
    #[serde(default)]
    category: Option<String>,
    nested: Option<std::collections::BTreeMap<String, String>>,
    version: u64,
}

fn raw_key(site: &str, url: &str) -> (String, String) {
    let key = Page::key(site, url);
    (key.pk().to_owned(), key.sk().unwrap_or_default().to_owned())
}

#[tokio::test]
async fn upsert_creates_a_missing_item_with_its_keys_type_and_index_keys() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let before = db.requests();
    let page = Page::update(&db, "s", "/a")
        .upsert()
        .set_if_not_exists(Page::TITLE, "A")
        .set(Page::NESTED, None)
        .await?;
    assert_eq!((db.requests() - before).get(Op::UpdateItem), 1, "idempotent: one UpdateItem");
    assert_eq!((page.site.as_str(), page.url.as_str(), page.title.as_str()), ("s", "/a", "A"));
    assert_eq!((page.views, page.version, page.category.clone()), (0, 1, None));

    let (pk, sk) = raw_key("s", "/a");
    let item = support::raw(&db, &pk, &sk).await.expect("created");
    assert_eq!(item["_type"], support::s("Page"));
    assert_eq!((item["site"].clone(), item["url"].clone()), (support::s("s"), support::s("/a")));
    assert_eq!(item["gsi1pk"], support::s("SITE#s"));
    assert_eq!(item["gsi1sk"], support::s("PAGE#%2Fa"));
    assert!(!item.contains_key("gsi2pk"), "category is None: not in the sparse gsi2");
    assert_eq!(Page::get(&db, "s", "/a").await?.as_ref(), Some(&page));
    assert_eq!(
        Page::query_gsi1(&db, "s").all().await?,
        std::slice::from_ref(&page),
        "found through gsi1"
    );

    // The same upsert again is an update of the stored item: the default is not applied.
    let page = Page::update(&db, "s", "/a").upsert().set_if_not_exists(Page::TITLE, "B").await?;
    assert_eq!((page.title.as_str(), page.version), ("A", 2));
    Ok(())
}

#[tokio::test]
async fn upsert_of_an_existing_item_is_its_update_and_keeps_its_index_keys() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut page = Page {
        site: "s".into(),
        url: "/b".into(),
        title: "B".into(),
        views: 5,
        category: Some("news".into()),
        nested: None,
        version: 0,
    };
    page.create(&db).await?;
    let updated = Page::update(&db, "s", "/b")
        .upsert()
        .set_if_not_exists(Page::TITLE, "other")
        .add(Page::VIEWS, 1)
        .await?;
    assert_eq!((updated.title.as_str(), updated.views, updated.version), ("B", 6, 2));
    assert_eq!(updated.category.as_deref(), Some("news"));
    let (pk, sk) = raw_key("s", "/b");
    let item = support::raw(&db, &pk, &sk).await.expect("stored");
    assert_eq!(item["gsi2pk"], support::s("CAT#news"), "kept");
    assert!(!item.keys().any(|k| k.starts_with("_ddbm")), "markers removed");
    Ok(())
}

#[tokio::test]
async fn concurrent_upserts_of_a_missing_item_each_apply_once() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let tasks = (0..20).map(|_| {
        let db = db.clone();
        tokio::spawn(async move {
            Page::update(&db, "s", "/hot")
                .upsert()
                .set_if_not_exists(Page::TITLE, "Hot")
                .add(Page::VIEWS, 1)
                .await
        })
    });
    let mut views = Vec::new();
    for task in tasks {
        views.push(task.await.expect("task")?.views);
    }
    views.sort();
    assert_eq!(views, (1..=20).collect::<Vec<_>>(), "each upsert returns its own result");
    let page = Page::get(&db, "s", "/hot").await?.expect("created");
    assert_eq!((page.views, page.version, page.title.as_str()), (20, 20, "Hot"));
    Ok(())
}

#[tokio::test]
async fn upserts_that_cannot_create_a_valid_item_are_refused_before_sending() -> Result<(), Error> {
    let db = support::db::<App>().await;
    // A required field no action writes: `title`.
    let err =
        crate::no_request!(db, Page::update(&db, "s", "/c").upsert().add(Page::VIEWS, 1).await);
    let Err(Error::InvalidRequest {
        problem: RequestProblem::UpsertIncomplete { reason, .. }, ..
    }) = err
    else {
        panic!("expected UpsertIncomplete, got {err:?}");
    };
    let UpsertReason::Unreadable { entity: "Page", message, .. } = &reason else {
        panic!("expected an unreadable item, got {reason:?}");
    };
    assert!(message.contains("title"), "{reason}");
    // Fields of index keys are read-only in updates: `User` needs `org` and `name`, which
    // no upsert can write, so every `User` upsert is refused, existing item or not.
    User::sample("u1").create(&db).await?;
    let err = crate::no_request!(
        db,
        User::update(&db, "u1").upsert().set(User::NICK, "x").await.unwrap_err()
    );
    assert!(
        matches!(
            &err,
            Error::InvalidRequest { problem: RequestProblem::UpsertIncomplete { .. }, .. }
        ),
        "{err:?}"
    );
    // A nested path: its parent is absent on an item being created.
    let err = crate::no_request!(
        db,
        Page::update(&db, "s", "/c")
            .upsert()
            .set(Page::TITLE, "C")
            .set(Page::NESTED.at::<String>("k"), "v")
            .await
            .unwrap_err()
    );
    assert!(
        matches!(&err, Error::InvalidRequest { problem: RequestProblem::NestedPathInUpsert, path } if path == "nested.k"),
        "{err:?}"
    );
    // Started from `Db::update`, the key fields' names are unknown: refused, with a hint.
    let err = crate::no_request!(
        db,
        db.update(Page::key("s", "/c")).upsert().set(Page::TITLE, "C").await.unwrap_err()
    );
    assert!(err.to_string().contains("generated `update(&db, ..)`"), "{err}");
    // So in a transaction.
    let err = crate::no_request!(
        db,
        db.transaction()
            .update(Page::key("s", "/c"), |u| u.upsert().set(Page::TITLE, "C"))
            .await
            .unwrap_err()
    );
    assert!(err.is_invalid_input(), "{err:?}");
    assert!(err.to_string().contains("#[entity(from_key)]"), "the fix is named: {err}");
    assert!(Page::get(&db, "s", "/c").await?.is_none());
    Ok(())
}

/// A counter whose key fields are read from its key: nothing to store, so it upserts in a
/// transaction too.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "HITS#<site>", sk = "DAY#<day>")]
struct Hits {
    #[entity(from_key)]
    site: String,
    #[entity(from_key)]
    day: u32,
    #[serde(default)]
    count: u64,
}

#[tokio::test]
async fn an_entity_with_from_key_fields_upserts_in_a_transaction() -> Result<(), Error> {
    let db = support::db::<App>().await;
    for _ in 0..2 {
        db.transaction().update(Hits::key("s", 7u32), |u| u.upsert().add(Hits::COUNT, 1)).await?;
    }
    let hits = Hits::get(&db, "s", 7u32).await?;
    assert_eq!(hits, Some(Hits { site: "s".into(), day: 7, count: 2 }));
    Ok(())
}

#[tokio::test]
async fn upsert_never_overwrites_another_entity_and_checks_versions() -> Result<(), Error> {
    let db = support::db::<App>().await;
    // An item of another entity type under the key.
    let (pk, sk) = raw_key("s", "/x");
    let mut foreign = ddb_model::Item::new();
    foreign.insert("pk".into(), support::s(&pk));
    foreign.insert("sk".into(), support::s(&sk));
    foreign.insert("_type".into(), support::s("Other"));
    support::put_raw(&db, foreign.clone()).await;
    let err = Page::update(&db, "s", "/x").upsert().set(Page::TITLE, "X").await.unwrap_err();
    assert!(matches!(err, Error::WrongEntityType { .. }), "{err:?}");
    assert_eq!(support::raw(&db, &pk, &sk).await, Some(foreign));

    // expect_version(0): only while the item is missing.
    let created =
        Page::update(&db, "s", "/v").upsert().set(Page::TITLE, "V").expect_version(0).await?;
    assert_eq!(created.version, 1);
    let err = Page::update(&db, "s", "/v").upsert().set(Page::TITLE, "W").expect_version(0).await;
    assert!(err.as_ref().is_err_and(Error::is_version_conflict), "{err:?}");
    let page =
        Page::update(&db, "s", "/v").upsert().set(Page::TITLE, "W").expect_version(1).await?;
    assert_eq!((page.title.as_str(), page.version), ("W", 2));
    // expect_version(n > 0) on a missing item.
    let err =
        Page::update(&db, "s", "/none").upsert().set(Page::TITLE, "N").expect_version(3).await;
    assert!(err.as_ref().is_err_and(Error::is_version_conflict), "{err:?}");
    assert!(Page::get(&db, "s", "/none").await?.is_none());
    // A user condition on a missing item is evaluated against no item.
    let err = Page::update(&db, "s", "/none")
        .upsert()
        .set(Page::TITLE, "N")
        .condition(Page::TITLE.eq("old"))
        .await
        .unwrap_err();
    assert!(err.is_own_condition_failed(), "{err:?}");
    // no_return with `add`: a token-carrying transaction, creating the item.
    Page::update(&db, "s", "/t")
        .upsert()
        .set(Page::TITLE, "T")
        .add(Page::VIEWS, 2)
        .no_return()
        .await?;
    let page = Page::get(&db, "s", "/t").await?.expect("created");
    assert_eq!((page.views, page.version), (2, 1));
    Ok(())
}

/// A number whose key text (zero-padded) is not its stored value (a number).
#[derive(KeyPart, Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
struct Code(u32);

/// Key fields whose key texts are not their stored values: a case-insensitive name (its key
/// text in lower case), a `KeyPart` newtype, a negative number (fixed-width text in the key)
/// and a verbatim text.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "LABEL#<name>#<code>", sk = "N#<n>#P#<path:verbatim>")]
struct Label {
    name: ddb_model::key::CaseInsensitive,
    code: Code,
    n: i64,
    path: String,
    note: String,
}

async fn raw_label(db: &Db<App>, label: &Label) -> ddb_model::Item {
    let key = label.key();
    support::raw(db, key.pk(), key.sk().unwrap_or_default()).await.expect("stored")
}

#[tokio::test]
async fn an_upsert_stores_key_fields_as_a_put_of_the_same_entity_does() -> Result<(), Error> {
    use ddb_model::key::CaseInsensitive;
    let db = support::db::<App>().await;
    let label = |name: &str| Label {
        name: name.into(),
        code: Code(7),
        n: -5,
        path: "a/b:c".into(),
        note: "x".into(),
    };
    // Each kind of argument the key field takes: `&str`, `String`, the value, a reference.
    let names = ["Ups-06", "Ups-07", "Ups-08", "ÄÖ-09"];
    fn upsert(u: ddb_model::ops::Update<'_, Label>) -> ddb_model::ops::Update<'_, Label> {
        u.upsert().set(Label::NOTE, "x")
    }
    // A reference is one of the arguments under test.
    #[allow(clippy::needless_borrows_for_generic_args)]
    let created = [
        upsert(Label::update(&db, names[0], Code(7), -5i64, "a/b:c")).await?,
        upsert(Label::update(&db, names[1].to_owned(), Code(7), -5i64, "a/b:c")).await?,
        upsert(Label::update(&db, CaseInsensitive::from(names[2]), Code(7), -5i64, "a/b:c"))
            .await?,
        upsert(Label::update(&db, &CaseInsensitive::from(names[3]), &Code(7), -5i64, "a/b:c"))
            .await?,
    ];
    for (name, created) in names.iter().zip(&created) {
        let expected = label(name);
        assert_eq!(created.name.as_str(), *name, "the value returned keeps its case");
        let raw = raw_label(&db, &expected).await;
        assert_eq!(raw.get("name"), Some(&support::s(name)), "stored in its own case");
        assert_eq!(raw, ddb_model::entity::to_item(&expected, None)?, "what a put stores");
        let read = Label::get(&db, name.to_lowercase().as_str(), Code(7), -5i64, "a/b:c").await?;
        assert_eq!(read.map(|l| l.name.as_str().to_owned()), Some((*name).to_owned()));
    }
    // An existing item keeps the case it stores, whatever the case the upsert is given.
    let again = Label::update(&db, "UPS-06", Code(7), -5i64, "a/b:c")
        .upsert()
        .set(Label::NOTE, "y")
        .await?;
    assert_eq!((again.name.as_str(), again.note.as_str()), ("Ups-06", "y"));
    let raw = raw_label(&db, &label("Ups-06")).await;
    assert_eq!(raw.get("name"), Some(&support::s("Ups-06")));
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(
        std::env::var("DDB_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12)
    ))]

    /// Over any name, number and verbatim text: the item an upsert creates is, attribute for
    /// attribute, the item a put of the same entity stores.
    #[test]
    fn an_upserted_item_is_the_item_a_put_stores(
        name in "\\PC{1,8}",
        code in proptest::prelude::any::<u32>(),
        n in proptest::prelude::any::<i64>(),
        path in "[a-zA-Z0-9/:.%#-]{1,6}",
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async {
            let db = support::db::<App>().await;
            let created = Label::update(&db, name.as_str(), Code(code), n, path.as_str())
                .upsert()
                .set(Label::NOTE, "")
                .await
                .expect("upserted");
            let expected = Label { name: name.as_str().into(), code: Code(code), n, path: path.clone(), note: String::new() };
            proptest::prop_assert_eq!(created.name.as_str(), name.as_str());
            let raw = raw_label(&db, &expected).await;
            proptest::prop_assert_eq!(raw, ddb_model::entity::to_item(&expected, None).expect("converts"));
            Ok(())
        })?;
    }
}

/// Key fields under lossy formats: a lower-cased name and a time in milliseconds. The key
/// holds `ann-01` and the millisecond text; the fields hold what they were given.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "T#<name:lower>", sk = "AT#<at:iso8601(ms):lower>")]
struct Shift {
    name: String,
    at: ddb_model::chrono::DateTime<ddb_model::chrono::Utc>,
    note: String,
}

#[tokio::test]
async fn an_upsert_stores_fields_under_lossy_key_formats_as_given() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let at =
        ddb_model::chrono::DateTime::from_timestamp(1_767_607_213, 56_000_000).expect("a time");
    let shift = Shift { name: "Ann-01".into(), at, note: "x".into() };
    let created = Shift::update(&db, "Ann-01", at).upsert().set(Shift::NOTE, "x").await?;
    assert_eq!(created, shift, "the value returned holds the fields as given");
    let key = shift.key();
    assert_eq!((key.pk(), key.sk()), ("T#ann-01", Some("AT#2026-01-05t10:00:13.056z")));
    let raw = support::raw(&db, key.pk(), key.sk().unwrap_or_default()).await.expect("stored");
    assert_eq!(raw, ddb_model::entity::to_item(&shift, None)?, "what a put stores");
    assert_eq!(Shift::get(&db, "ANN-01", at).await?, Some(shift));
    Ok(())
}
