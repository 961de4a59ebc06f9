//! Ranges and prefixes on sort-key levels over the whole of Unicode, on every backend: the
//! result of every range method and prefix query equals a model's (issue 13, items 2 and 3).
//!
//! Components compare as their escaped key text, the order the service sorts them in.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use ddb_model::{Db, DefaultTable, Entity, EntityQuery, Error};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde::{Deserialize, Serialize};

use crate::model::Store;
use crate::no_request;
use crate::support::db;

fn esc(text: &str) -> String {
    let mut out = String::new();
    ddb_model::key::escape_into(text, &mut out);
    out
}

fn store(country: &str, state: &str, city: &str, zip: &str) -> Store {
    Store {
        country: country.into(),
        state: state.into(),
        city: city.into(),
        zip: zip.into(),
        address: String::new(),
        square_feet: 0,
    }
}

/// The sort keys a query returns, in order.
async fn sks(query: EntityQuery<'_, Store>) -> Result<Vec<String>, Error> {
    Ok(query.all().await?.iter().map(|s| s.key().sk().unwrap_or_default().to_owned()).collect())
}

/// Issue 13, item 2: a range on a level missed the items whose next component starts with
/// U+10FFFF (the upper end was `prefix + "#" + U+10FFFF`, inclusive).
#[tokio::test]
async fn a_next_component_starting_with_the_last_character_is_in_the_range() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let max = "\u{10FFFF}";
    let cities = [max.to_owned(), format!("{max}x"), format!("{max}{max}"), "A".to_owned()];
    for (i, city) in cities.iter().enumerate() {
        store("USA", "NY", city, &format!("{i}")).put(&db).await?;
        store("USA", &format!("NY{max}"), city, &format!("{i}")).put(&db).await?;
    }
    let q = || Store::query(&db, "USA");
    let ny = sks(q().state("NY").into_query()).await?;
    assert_eq!(ny.len(), 4);
    assert_eq!(sks(q().state_le("NY")).await?, ny);
    assert_eq!(sks(q().state_between("A", "NY")).await?, ny);
    assert_eq!(sks(q().state_lt(format!("NY{max}"))).await?, ny);
    assert_eq!(sks(q().state_ge("NY")).await?.len(), 8);
    assert_eq!(sks(q().state_le(format!("NY{max}"))).await?.len(), 8);
    assert_eq!(sks(q().state_gt("NY")).await?.len(), 4);
    // One level down, with a prefix before the component.
    let zips = |v: Vec<Store>| v.into_iter().map(|s| s.zip).collect::<Vec<_>>();
    assert_eq!(zips(q().state("NY").city_ge(max).all().await?), ["0", "1", "2"]);
    assert_eq!(zips(q().state("NY").city_le(max).all().await?), ["3", "0"]);
    assert_eq!(zips(q().state("NY").city_begins_with(max).all().await?), ["0", "1", "2"]);
    Ok(())
}

/// An entity whose sort key is one placeholder: nothing before it, nothing after it.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "T#<group>", sk = "<name>")]
struct Tag {
    group: String,
    name: String,
}

/// Issue 13, item 3: `state_ge("")`, `state_gt("")` and `state_between("", ..)` sent
/// `sk >= ""`, which DynamoDB rejects. An empty lower bound is no lower bound; a range that
/// holds no key sends nothing; an empty key is a typed error sent nowhere.
#[tokio::test]
async fn empty_bounds_are_accepted_by_every_backend() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    for state in ["", "A", "B"] {
        store("USA", state, "c", "z").put(&db).await?;
    }
    let states = |v: Vec<Store>| v.into_iter().map(|s| s.state).collect::<Vec<_>>();
    let q = || Store::query(&db, "USA");
    assert_eq!(states(q().state_ge("").all().await?), ["", "A", "B"]);
    assert_eq!(states(q().state_gt("").all().await?), ["A", "B"]);
    assert_eq!(states(q().state_between("", "A").all().await?), ["", "A"]);
    assert_eq!(states(q().state_le("").all().await?), [""]);
    assert_eq!(states(q().state_begins_with("").all().await?), ["", "A", "B"]);
    assert_eq!(states(q().state("").all().await?), [""]);
    assert_eq!(q().state_ge("").count().await?, 3);
    db.reset_requests();
    assert!(no_request!(db, q().state_lt("").all().await?).is_empty());
    assert!(no_request!(db, q().state_between("B", "").all().await?).is_empty());

    for name in ["a", "b"] {
        Tag { group: "g".into(), name: name.into() }.put(&db).await?;
    }
    let names = |v: Vec<Tag>| v.into_iter().map(|t| t.name).collect::<Vec<_>>();
    assert_eq!(names(Tag::query(&db, "g").name_ge("").all().await?), ["a", "b"]);
    assert_eq!(names(Tag::query(&db, "g").name_gt("").all().await?), ["a", "b"]);
    assert_eq!(names(Tag::query(&db, "g").name_between("", "a").all().await?), ["a"]);
    assert_eq!(names(Tag::query(&db, "g").name_begins_with("").all().await?), ["a", "b"]);
    db.reset_requests();
    // `<= ""` on a component that is the whole sort key: only the empty key, which no item has.
    assert!(no_request!(db, Tag::query(&db, "g").name_le("").all().await?).is_empty());
    assert!(no_request!(db, Tag::query(&db, "g").name_lt("").all().await?).is_empty());
    assert_eq!(no_request!(db, Tag::query(&db, "g").name_le("").count().await?), 0);
    // Equality on the empty key: a typed error, nothing sent.
    let err = no_request!(db, Tag::query(&db, "g").name("").all().await.unwrap_err());
    assert!(matches!(err, Error::InvalidKey { .. }) && err.is_invalid_input(), "{err:?}");
    let err = no_request!(db, Tag { group: "g".into(), name: String::new() }.put(&db).await);
    assert!(err.is_err_and(|e| e.is_invalid_input()));
    Ok(())
}

/// Text rich in what matters for order: the separators, `%`, characters just below and above
/// them, U+10FFFF and other multi-byte characters, and the empty string.
fn text() -> impl Strategy<Value = String> {
    let chars = prop_oneof![
        8 => prop::sample::select(vec![
            '#', '/', '|', '~', ':', '%', ' ', '!', '$', '0', 'A', 'z', '\u{7F}', '\u{10FFFF}',
            '\u{FFFF}', '\u{E000}', 'é', '日',
        ]),
        1 => any::<char>().prop_filter("printable", |c| !c.is_control()),
    ];
    prop::collection::vec(chars, 0..4).prop_map(|v| v.into_iter().collect())
}

/// A bound: a stored value of the level (`Ok(i)`, the i-th item's, modulo) or any text.
fn pick() -> impl Strategy<Value = Result<usize, String>> {
    prop_oneof![any::<usize>().prop_map(Ok), text().prop_map(Err)]
}

#[derive(Debug, Clone)]
struct Case {
    items: Vec<(String, String, String)>,
    /// The item whose state (and city) the deeper levels fix.
    at: usize,
    a: Result<usize, String>,
    b: Result<usize, String>,
}

fn case() -> impl Strategy<Value = Case> {
    (prop::collection::vec((text(), text(), text()), 1..10), any::<usize>(), pick(), pick())
        .prop_map(|(items, at, a, b)| Case { items, at, a, b })
}

/// The model: stored stores by sort key (the service's order), as their three components.
type Model = BTreeMap<String, [String; 3]>;

/// What the model returns for a query fixing `fixed` and testing the next component's
/// escaped text with `keep`.
fn expect(model: &Model, fixed: &[String], keep: impl Fn(&str) -> bool) -> Vec<String> {
    model
        .iter()
        .filter(|(_, parts)| parts[..fixed.len()] == *fixed && keep(&esc(&parts[fixed.len()])))
        .map(|(sk, _)| sk.clone())
        .collect()
}

fn cases() -> u32 {
    std::env::var("DDB_PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(32)
}

/// Stores with arbitrary states, cities and zips; every range method and prefix query of
/// every level, with bounds that are stored values or arbitrary text, compared with the model
/// (results and their order); one range also read page by page through cursors.
#[test]
fn every_range_and_prefix_query_agrees_with_a_model() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let db = rt.block_on(db::<DefaultTable>());
    let runs = AtomicUsize::new(0);
    let mut runner =
        TestRunner::new(Config { cases: cases(), failure_persistence: None, ..Config::default() });
    let result = runner.run(&case(), |case| {
        let country = format!("c{}", runs.fetch_add(1, Ordering::SeqCst));
        rt.block_on(run_case(&db, &country, &case))
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

fn fail(e: Error) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

async fn run_case(db: &Db, country: &str, case: &Case) -> Result<(), TestCaseError> {
    let mut model = Model::new();
    for (state, city, zip) in &case.items {
        let s = store(country, state, city, zip);
        s.put(db).await.map_err(fail)?;
        let sk = s.key().sk().unwrap_or_default().to_owned();
        model.insert(sk, [state.clone(), city.clone(), zip.clone()]);
    }
    let at = &case.items[case.at % case.items.len()];
    let (s0, c0) = (at.0.clone(), at.1.clone());
    let n = case.items.len();
    let value = |p: &Result<usize, String>, level: usize| match p {
        Ok(i) => {
            let item = &case.items[i % n];
            [&item.0, &item.1, &item.2][level].clone()
        }
        Err(text) => text.clone(),
    };
    let q = || Store::query(db, country);
    for level in 0..3 {
        let (a, b) = (value(&case.a, level), value(&case.b, level));
        let (ea, eb) = (esc(&a), esc(&b));
        let fixed: Vec<String> = [s0.clone(), c0.clone()][..level].to_vec();
        macro_rules! same {
            ($name:literal, $query:expr, $keep:expr) => {{
                let got = sks($query).await.map_err(fail)?;
                let want = expect(&model, &fixed, $keep);
                prop_assert_eq!(got, want, "{} on level {} with {:?}, {:?}", $name, level, a, b);
            }};
        }
        macro_rules! level_methods {
            ($start:expr, $eq:ident, $between:ident, $gt:ident, $ge:ident, $lt:ident, $le:ident, $begins:ident) => {
                same!("between", $start.$between(&a, &b), |x| ea.as_str() <= x && x <= eb.as_str());
                same!("gt", $start.$gt(&a), |x| x > ea.as_str());
                same!("ge", $start.$ge(&a), |x| x >= ea.as_str());
                same!("lt", $start.$lt(&b), |x| x < eb.as_str());
                same!("le", $start.$le(&b), |x| x <= eb.as_str());
                same!("begins_with", $start.$begins(&a), |x| x.starts_with(ea.as_str()));
            };
        }
        match level {
            0 => {
                level_methods!(
                    q(),
                    state,
                    state_between,
                    state_gt,
                    state_ge,
                    state_lt,
                    state_le,
                    state_begins_with
                );
                same!("eq", q().state(&a).into_query(), |x| x == ea);
            }
            1 => {
                level_methods!(
                    q().state(&s0),
                    city,
                    city_between,
                    city_gt,
                    city_ge,
                    city_lt,
                    city_le,
                    city_begins_with
                );
                same!("eq", q().state(&s0).city(&a).into_query(), |x| x == ea);
            }
            _ => {
                level_methods!(
                    q().state(&s0).city(&c0),
                    zip,
                    zip_between,
                    zip_gt,
                    zip_ge,
                    zip_lt,
                    zip_le,
                    zip_begins_with
                );
                same!("eq", q().state(&s0).city(&c0).zip(&a), |x| x == ea);
            }
        }
    }

    // Page by page through cursors (checked against the query's key condition), and counted.
    let b = value(&case.b, 0);
    let eb = esc(&b);
    let want = expect(&model, &[], |x| x <= eb.as_str());
    let (mut got, mut cursor) = (Vec::new(), None);
    for _ in 0..=n {
        let page = q().state_le(&b).limit(2).page(cursor.as_ref()).await.map_err(fail)?;
        got.extend(page.items.iter().map(|s| s.key().sk().unwrap_or_default().to_owned()));
        cursor = page.next;
        if cursor.is_none() {
            break;
        }
    }
    prop_assert_eq!(&got, &want, "pages of state_le({:?})", b);
    prop_assert_eq!(q().state_le(&b).count().await.map_err(fail)?, want.len());
    Ok(())
}
