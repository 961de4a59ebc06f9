//! Requests DynamoDB would reject are refused before sending, with a typed error naming the
//! attribute path and the limit (issue 13, item 4); odd values never panic (item 8); the
//! caller's own failed condition is told apart from the library's guards (item 7).

use std::collections::{BTreeMap, HashMap};

use ddb_model::prelude::*;
use ddb_model::{DefaultTable, UpdateActions, error::RequestProblem};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::support;

/// Any value a caller may hand to an expression or store in a field: every serde shape,
/// serde_dynamo's set newtypes, numbers DynamoDB cannot store, deep nesting.
#[derive(Debug, Clone, PartialEq)]
pub enum Wild {
    S(String),
    F(f64),
    U(u128),
    I(i64),
    B(bool),
    Null,
    Bytes(Vec<u8>),
    L(Vec<Wild>),
    M(BTreeMap<String, Wild>),
    Ss(Vec<String>),
    Ns(Vec<i64>),
}

impl Serialize for Wild {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde_dynamo::{number_set::NumberSet, string_set::StringSet};
        match self {
            Wild::S(v) => s.serialize_str(v),
            Wild::F(v) => s.serialize_f64(*v),
            Wild::U(v) => s.serialize_u128(*v),
            Wild::I(v) => s.serialize_i64(*v),
            Wild::B(v) => s.serialize_bool(*v),
            Wild::Null => s.serialize_none(),
            Wild::Bytes(v) => s.serialize_bytes(v),
            Wild::L(v) => v.serialize(s),
            Wild::M(v) => v.serialize(s),
            Wild::Ss(v) => StringSet(v).serialize(s),
            Wild::Ns(v) => NumberSet(v).serialize(s),
        }
    }
}

// The tests never read a `Wild` back.
impl<'de> Deserialize<'de> for Wild {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d)?;
        Ok(Wild::Null)
    }
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "ODD#<id>", sk = "ODD")]
pub struct Odd {
    id: String,
    text: String,
    num: f64,
    wide: u128,
    doc: Wild,
    list: Vec<Wild>,
    #[serde(default, with = "serde_dynamo::string_set")]
    tags: Vec<String>,
    json: serde_json::Value,
}

fn odd(id: &str) -> Odd {
    Odd {
        id: id.into(),
        text: "t".into(),
        num: 1.5,
        wide: 7,
        doc: Wild::Null,
        list: vec![],
        tags: vec!["a".into()],
        json: serde_json::json!({"a": 1}),
    }
}

/// The problem of an [`Error::InvalidRequest`], and its path.
fn refused(err: &Error) -> (&str, &RequestProblem) {
    match err {
        Error::InvalidRequest { path, problem } => {
            assert!(err.is_invalid_input(), "{err}");
            (path.as_str(), problem)
        }
        other => panic!("expected InvalidRequest, got {other:?}"),
    }
}

fn nested(levels: usize) -> Wild {
    (1..levels).fold(Wild::S("x".into()), |v, _| Wild::L(vec![v]))
}

#[tokio::test]
async fn refuses_values_dynamodb_cannot_store() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    odd("a").create(&db).await?;
    let update = || Odd::update(&db, "a");

    // Numbers: NaN, infinities, magnitudes out of range, more than 38 digits.
    for (value, problem) in [
        (f64::NAN, "NotANumber"),
        (f64::INFINITY, "NotANumber"),
        (f64::NEG_INFINITY, "NotANumber"),
        (1e300, "NumberOutOfRange"),
        (1e-200, "NumberOutOfRange"),
    ] {
        let err = crate::no_request!(db, update().set(Odd::NUM, value).await.unwrap_err());
        let (path, p) = refused(&err);
        assert_eq!(path, "num");
        assert!(format!("{p:?}").starts_with(problem), "{value}: {p:?}");
        let err = crate::no_request!(
            db,
            update().set(Odd::TEXT, "x").condition(Odd::NUM.eq(value)).await.unwrap_err()
        );
        assert_eq!(refused(&err).0, "num");
        let mut item = odd("b");
        item.num = value;
        let err = crate::no_request!(db, item.put(&db).await.unwrap_err());
        assert_eq!(refused(&err).0, "num");
    }
    let err = crate::no_request!(db, update().set(Odd::WIDE, u128::MAX).await.unwrap_err());
    assert_eq!(
        refused(&err),
        (
            "wide",
            &RequestProblem::TooManyDigits { number: u128::MAX.to_string(), digits: 39, max: 38 }
        )
    );
    // What DynamoDB stores passes: 38 digits, 1E+125, 1E-130, u128 written as a number.
    let wide = 10u128.pow(38) - 1;
    let stored = update().set(Odd::WIDE, wide).set(Odd::NUM, 1e125).await?;
    assert_eq!((stored.wide, stored.num), (wide, 1e125));
    assert_eq!(update().set(Odd::NUM, 1e-130).await?.num, 1e-130);

    // Sets: empty, duplicates (in items and nested in values).
    let mut item = odd("b");
    item.tags = vec![];
    let err = crate::no_request!(db, item.put(&db).await.unwrap_err());
    assert_eq!(refused(&err), ("tags", &RequestProblem::EmptySet));
    item.tags = vec!["x".into(), "x".into()];
    let err = crate::no_request!(db, item.create(&db).await.unwrap_err());
    assert!(matches!(refused(&err), ("tags", RequestProblem::DuplicateInSet { .. })));
    let doc = Wild::M([("n".to_owned(), Wild::Ns(vec![1, 1]))].into());
    let err = crate::no_request!(db, update().set(Odd::DOC, doc).await.unwrap_err());
    assert!(matches!(refused(&err), ("doc.n", RequestProblem::DuplicateInSet { .. })));

    // Empty map keys.
    let err = crate::no_request!(
        db,
        update().set(Odd::JSON, serde_json::json!({"ok": {"": 1}})).await.unwrap_err()
    );
    assert_eq!(refused(&err), ("json.ok.", &RequestProblem::EmptyName));

    // Nesting: 32 levels are stored, 33 are not; below a path, the path's depth counts.
    update().set(Odd::DOC, nested(32)).await?;
    let err = crate::no_request!(db, update().set(Odd::DOC, nested(33)).await.unwrap_err());
    let (path, problem) = refused(&err);
    assert!(path.starts_with("doc[0][0]"), "the deepest value is named: {path}");
    assert_eq!(problem, &RequestProblem::TooDeep { levels: 33, max: 32 });
    update().set(Odd::JSON, serde_json::json!({"a": {"b": 1}})).await?;
    let below = Odd::JSON.at::<Wild>("a").at::<Wild>("b");
    update().set(below.clone(), nested(30)).await?;
    let err = crate::no_request!(db, update().set(below, nested(31)).await.unwrap_err());
    assert_eq!(refused(&err), ("json.a.b", &RequestProblem::TooDeep { levels: 33, max: 32 }));
    let err = crate::no_request!(
        db,
        update().set(Odd::TEXT, "x").condition(Odd::DOC.eq(nested(33))).await.unwrap_err()
    );
    assert!(matches!(refused(&err).1, RequestProblem::TooDeep { .. }));
    Ok(())
}

#[tokio::test]
async fn refuses_updates_and_expressions_over_the_limits() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    odd("a").create(&db).await?;
    let update = || Odd::update(&db, "a");
    let before = support::snapshot(&db).await;

    // One value larger than an item.
    let huge = "x".repeat(410 * 1024);
    let err = crate::no_request!(db, update().set(Odd::TEXT, huge.as_str()).await.unwrap_err());
    assert!(matches!(
        refused(&err),
        ("text", RequestProblem::ValueTooLarge { size: 419_840, max: 409_600 })
    ));
    let err = crate::no_request!(
        db,
        update().set_if_not_exists(Odd::TEXT, huge.as_str()).await.unwrap_err()
    );
    assert!(matches!(refused(&err).1, RequestProblem::ValueTooLarge { .. }));
    let err = crate::no_request!(
        db,
        update().append(Odd::LIST, [Wild::S(huge.clone())]).await.unwrap_err()
    );
    assert!(matches!(refused(&err), ("list", RequestProblem::ValueTooLarge { .. })));
    // Values that fit one by one but not together.
    let half = "x".repeat(210 * 1024);
    let err = crate::no_request!(
        db,
        update()
            .set(Odd::TEXT, half.as_str())
            .set(Odd::DOC, Wild::S(half.clone()))
            .await
            .unwrap_err()
    );
    assert!(matches!(refused(&err), ("", RequestProblem::UpdateTooLarge { max: 409_600, .. })));
    // In a transaction too: the action is refused, nothing is sent.
    let err = crate::no_request!(
        db,
        db.transaction()
            .update(Odd::key("a"), |u| u.set(Odd::TEXT, huge.as_str()))
            .await
            .unwrap_err()
    );
    assert!(err.is_invalid_input(), "{err}");
    // A condition may compare with a large value (the service accepts it)...
    let big = "y".repeat(300 * 1024);
    let err = update().set(Odd::NUM, 2.0).condition(Odd::TEXT.eq(big.as_str())).await.unwrap_err();
    assert!(err.is_own_condition_failed(), "{err}");
    // ... but the values of one request are limited to 2 MB.
    let values: Vec<String> = (0..7).map(|i| format!("{i}{big}")).collect();
    let err = crate::no_request!(
        db,
        update().set(Odd::NUM, 2.0).condition(Odd::TEXT.is_in(values.iter())).await.unwrap_err()
    );
    assert!(matches!(refused(&err).1, RequestProblem::ValuesTooLarge { max: 2_097_152, .. }));

    // Expressions longer than 4 KB.
    let in_100 = |k: i32| Odd::NUM.is_in((0..100).map(|i| f64::from(k * 100 + i)));
    let many = (1..8).fold(in_100(0), |c, k| c | in_100(k));
    let err =
        crate::no_request!(db, update().set(Odd::TEXT, "x").condition(many).await.unwrap_err());
    assert!(matches!(
        refused(&err).1,
        RequestProblem::ExpressionTooLong { expression: "ConditionExpression", max: 4096, .. }
    ));
    let keys: Vec<String> = (0..400).map(|i| format!("key{i}")).collect();
    let actions = keys
        .iter()
        .fold(UpdateActions::<Odd>::new(), |u, k| u.set(Odd::JSON.at::<i32>(k.clone()), 1));
    let err = crate::no_request!(db, update().actions(actions).await.unwrap_err());
    assert!(matches!(
        refused(&err).1,
        RequestProblem::ExpressionTooLong { expression: "UpdateExpression", .. }
    ));

    // Overlapping paths.
    let err = crate::no_request!(
        db,
        update()
            .set(Odd::JSON, serde_json::json!({}))
            .set(Odd::JSON.at::<i32>("a"), 1)
            .await
            .unwrap_err()
    );
    assert_eq!(
        refused(&err),
        ("json", &RequestProblem::OverlappingPaths { other: "json.a".into() })
    );
    assert_eq!(support::snapshot(&db).await, before, "nothing was written");
    Ok(())
}

/// Values serde_dynamo panics on (map keys that serialise as sequences, maps or bytes),
/// and other odd shapes, through every path that converts a value.
#[tokio::test]
async fn odd_values_are_errors_not_panics() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    odd("a").create(&db).await?;
    let seq_key: HashMap<Vec<String>, u8> = [(vec!["k".to_owned()], 1)].into();
    let map_key: BTreeMap<BTreeMap<String, u8>, u8> = [(BTreeMap::new(), 1)].into();
    #[derive(Serialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
    struct Bytes(#[serde(with = "bytes")] Vec<u8>);
    mod bytes {
        pub fn serialize<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(v)
        }
    }
    let bytes_key: BTreeMap<Bytes, u8> = [(Bytes(vec![1]), 1)].into();
    for (name, path_value) in [
        ("sequence key", update_value(&db, &seq_key).await),
        ("map key", update_value(&db, &map_key).await),
        ("bytes key", update_value(&db, &bytes_key).await),
    ] {
        let err = path_value.expect_err(name);
        assert!(matches!(err, Error::Serialize { .. }), "{name}: {err:?}");
        assert!(err.is_invalid_input());
    }
    // The same values in conditions, `is_in`, `append`, transactions and batches.
    let list = || Odd::update(&db, "a");
    for err in [
        list().condition(Odd::DOC.contains(&seq_key)).set(Odd::TEXT, "x").await.unwrap_err(),
        list()
            .append(Odd::LIST, [Wild::Null])
            .condition(Odd::LIST.contains(&map_key))
            .await
            .unwrap_err(),
        db.transaction()
            .update(Odd::key("a"), |u| {
                u.set(Odd::TEXT, "x").condition(Odd::DOC.contains(&bytes_key))
            })
            .await
            .unwrap_err(),
    ] {
        assert!(err.is_invalid_input(), "{err:?}");
    }
    // Former panics inside stored entities (through `to_item`): a field holding such a map.
    #[derive(Entity, Serialize, Deserialize, Debug)]
    #[entity(pk = "KEYED#<id>", sk = "KEYED")]
    struct Keyed {
        id: String,
        #[serde(skip_deserializing)]
        by_list: HashMap<Vec<String>, u8>,
    }
    let keyed = Keyed { id: "k".into(), by_list: seq_key.clone() };
    for err in [
        crate::no_request!(db, keyed.put(&db).await.unwrap_err()),
        crate::no_request!(db, db.batch_write().put(&keyed).await.unwrap_err()),
        crate::no_request!(db, db.transaction().put(&keyed).await.unwrap_err()),
    ] {
        assert!(err.is_invalid_input(), "{err:?}");
    }
    // i128 and u128, units, chars, newtype variants, JSON numbers: stored and compared.
    #[derive(Serialize)]
    enum Shape {
        Circle(f64),
        Unit,
    }
    #[derive(Serialize)]
    struct Unit;
    let value = serde_json::json!([1, -2, 3.5, u64::MAX, "é", null]);
    let stored = Odd::update(&db, "a")
        .set(Odd::JSON, value.clone())
        .set(Odd::WIDE, u128::from(u64::MAX) * 4)
        .condition(Odd::WIDE.ne(0u128))
        .await?;
    assert_eq!((stored.json, stored.wide), (value, u128::from(u64::MAX) * 4));
    for v in [
        serde_json::to_value(Shape::Circle(1.0)).unwrap_or_default(),
        serde_json::to_value(Shape::Unit).unwrap_or_default(),
        serde_json::to_value(Unit).unwrap_or_default(),
        serde_json::json!('c'),
        serde_json::json!(i64::MIN),
    ] {
        Odd::update(&db, "a").set(Odd::JSON, v.clone()).condition(Odd::JSON.ne(v)).await?;
    }
    Ok(())
}

async fn update_value<V: Serialize>(db: &Db, value: &V) -> Result<(), Error> {
    let before = db.requests();
    let result = Odd::update(db, "a")
        .set(Odd::TEXT, "x")
        .condition(Odd::DOC.contains(value))
        .no_return()
        .await;
    assert_eq!((db.requests() - before).total(), 0);
    result
}

fn wild() -> impl Strategy<Value = Wild> {
    let text = prop_oneof![
        6 => any::<String>(),
        1 => Just(String::new()),
        1 => Just("\u{10FFFF}\u{0}#".to_owned()),
        // Large strings, away from the item limit (the item holds other fields too).
        1 => (300_000usize..380_000).prop_map(|n| "x".repeat(n)),
        1 => (420_000usize..480_000).prop_map(|n| "é".repeat(n / 2)),
    ];
    let number = prop_oneof![
        any::<f64>().prop_map(Wild::F),
        prop_oneof![
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(1e125),
            Just(1e126),
            Just(1e-130),
            Just(5e-324),
            Just(-0.0)
        ]
        .prop_map(Wild::F),
        any::<u128>().prop_map(Wild::U),
        prop_oneof![Just(10u128.pow(38) - 1), Just(10u128.pow(38)), Just(u128::MAX)]
            .prop_map(Wild::U),
        any::<i64>().prop_map(Wild::I),
    ];
    let leaf = prop_oneof![
        3 => text.prop_map(Wild::S),
        3 => number,
        1 => any::<bool>().prop_map(Wild::B),
        1 => Just(Wild::Null),
        1 => proptest::collection::vec(any::<u8>(), 0..4).prop_map(Wild::Bytes),
        1 => proptest::collection::vec("[ab]?", 0..3).prop_map(Wild::Ss),
        1 => proptest::collection::vec(-2i64..2, 0..3).prop_map(Wild::Ns),
    ];
    let tree = leaf.clone().prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Wild::L),
            proptest::collection::btree_map("\\PC{0,3}", inner, 0..4).prop_map(Wild::M),
        ]
    });
    // Deep chains, around the nesting limit.
    let deep = (28usize..36, leaf, any::<bool>()).prop_map(|(levels, leaf, map)| {
        (1..levels).fold(leaf, |v, _| {
            if map { Wild::M([("k".to_owned(), v)].into()) } else { Wild::L(vec![v]) }
        })
    });
    prop_oneof![4 => tree, 1 => deep]
}

/// Every outcome is a success, the caller's condition failing, or an error raised before
/// anything was sent; never a service rejection.
fn judge(
    db: &Db,
    before: ddb_model::RequestStats,
    what: &str,
    out: Result<(), Error>,
) -> Result<(), TestCaseError> {
    let sent = (db.requests() - before).total();
    match out {
        Ok(()) => Ok(()),
        Err(e) if e.is_invalid_input() => {
            prop_assert_eq!(sent, 0, "{}: refused after sending: {}", what, e);
            Ok(())
        }
        Err(e) if e.is_own_condition_failed() => Ok(()),
        Err(e) => Err(TestCaseError::fail(format!("{what}: {e} ({e:?})"))),
    }
}

async fn send_everywhere(db: &Db, case: usize, v: &Wild) -> Result<(), TestCaseError> {
    let mut item = odd("put");
    item.doc = v.clone();
    let b = db.requests();
    judge(db, b, "put", item.put(db).await)?;
    let b = db.requests();
    judge(db, b, "batch put", db.batch_write().put(&item).await.map(|_| ()))?;
    let b = db.requests();
    let out = Odd::update(db, "base").set(Odd::DOC, v).no_return().await;
    judge(db, b, "set", out)?;
    let b = db.requests();
    let out =
        Odd::update(db, "base").set(Odd::TEXT, "x").condition(Odd::DOC.eq(v)).no_return().await;
    judge(db, b, "condition", out)?;
    let b = db.requests();
    let out = Odd::update(db, "base")
        .set(Odd::TEXT, "y")
        .condition(Odd::DOC.is_in([v, &Wild::Null]) | Odd::LIST.contains(v))
        .no_return()
        .await;
    judge(db, b, "is_in", out)?;
    // `append` is sent as a transaction: a fresh item each time, so that lists do not grow.
    let id = format!("list{case}");
    odd(&id).put(db).await.map_err(|e| TestCaseError::fail(e.to_string()))?;
    let b = db.requests();
    let out = Odd::update(db, &id).append(Odd::LIST, [v.clone()]).no_return().await;
    judge(db, b, "append", out)?;
    let b = db.requests();
    let out = db
        .transaction()
        .update(Odd::key(&id), |u| u.set(Odd::DOC, v).condition(Odd::LIST.ne(vec![v.clone()])))
        .await;
    judge(db, b, "transaction", out)?;
    Odd::delete(db, &id).await.map_err(|e| TestCaseError::fail(e.to_string()))?;
    Ok(())
}

/// Random values of every shape through puts, batch puts, updates, conditions, `is_in`,
/// `append` and transactions, on the backend under test: each either succeeds or is refused
/// before sending. `VALIDATION_CASES` sets the number of values (default 48).
#[test]
fn random_values_pass_or_are_refused_before_sending() {
    let cases = std::env::var("VALIDATION_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(48);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let db = rt.block_on(support::db::<DefaultTable>());
    rt.block_on(odd("base").create(&db).send()).expect("base item");
    let mut runner =
        TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let counter = std::sync::atomic::AtomicUsize::new(0);
    let result = runner.run(&wild(), |v| {
        let case = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        rt.block_on(send_everywhere(&db, case, &v))
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "ODD#<id>", sk = "ODD", name = "Imposter", version = version)]
pub struct Imposter {
    id: String,
    text: String,
    version: u64,
}

/// `is_own_condition_failed` is true only when the caller's condition failed, never for the
/// library's guards; a loop retrying on it ends once the item is deleted.
#[tokio::test]
async fn own_condition_failed_is_only_the_callers_condition() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    odd("a").create(&db).await?;
    let unmet = || Odd::TEXT.eq("never");
    let err = Odd::update(&db, "a").set(Odd::NUM, 2.0).condition(unmet()).await.unwrap_err();
    assert!(err.is_own_condition_failed() && err.is_condition_failed(), "{err}");
    let err = db
        .transaction()
        .update(Odd::key("a"), |u| u.set(Odd::NUM, 2.0).condition(unmet()))
        .await
        .unwrap_err();
    assert!(err.is_own_condition_failed(), "{err}");
    let err = db.transaction().check(Odd::key("a"), unmet()).await.unwrap_err();
    assert!(err.is_own_condition_failed(), "{err}");

    // The guards: exists already, another entity type, another version.
    let err = odd("a").create(&db).await.unwrap_err();
    assert!(err.is_already_exists() && !err.is_own_condition_failed(), "{err}");
    let err = Imposter::update(&db, "a")
        .set(Imposter::TEXT, "x")
        .condition(Imposter::TEXT.eq("t"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::WrongEntityType { .. }) && !err.is_own_condition_failed(),
        "{err}"
    );
    let mut imposter = Imposter { id: "i".into(), text: "t".into(), version: 0 };
    imposter.create(&db).await?;
    let err = Imposter::update(&db, "i")
        .set(Imposter::TEXT, "x")
        .expect_version(7)
        .condition(Imposter::TEXT.eq("no"))
        .await
        .unwrap_err();
    assert!(err.is_version_conflict() && !err.is_own_condition_failed(), "{err}");

    // Deleted: a missing item, whatever the condition says; in transactions too.
    Odd::delete(&db, "a").await?;
    let err = Odd::update(&db, "a").set(Odd::NUM, 2.0).condition(unmet()).await.unwrap_err();
    assert!(
        err.is_not_found() && err.is_condition_failed() && !err.is_own_condition_failed(),
        "{err}"
    );
    let err = db
        .transaction()
        .update(Odd::key("a"), |u| u.add(Odd::WIDE, 1u128).condition(unmet()))
        .await
        .unwrap_err();
    assert!(err.is_not_found() && !err.is_own_condition_failed(), "{err}");

    // The retry loop: waits while its own condition fails, ends when the item is deleted.
    odd("b").create(&db).await?;
    let mut attempts = 0;
    let outcome = loop {
        attempts += 1;
        assert!(attempts < 10, "the loop would spin");
        if attempts == 3 {
            Odd::delete(&db, "b").await?; // someone else deletes the item meanwhile
        }
        match Odd::update(&db, "b").set(Odd::NUM, 3.0).condition(unmet()).no_return().await {
            Err(e) if e.is_own_condition_failed() => continue,
            other => break other,
        }
    };
    assert!(outcome.is_err_and(|e| e.is_not_found()));
    assert_eq!(attempts, 3);
    Ok(())
}
