//! A placeholder directly followed by a literal that is not a separator (`<seq>x`), where the
//! field's type never writes the literal's first character: keys read back exactly, two
//! values never share a key, and level queries stay component-exact.

use std::borrow::Cow;

use ddb_model::key::{KeyChars, KeyPartError};
use ddb_model::prelude::*;
use ddb_model::{Op, error::KeyProblem};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use crate::model::App;
use crate::support;

/// Integers, a bool and a string, each directly followed by a letter or punctuation.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "ACC#<account>", sk = "<year>y<seq>n<flag>!<name>")]
#[index(gsi1, pk = "OPT#<opt>o", sk = "<year>_<name>")]
struct Entry {
    account: String,
    year: i32,
    seq: u64,
    flag: bool,
    name: String,
    opt: Option<u32>,
}

/// A number written in as few digits as it needs: variable width, digits only.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
struct Num(u64);

impl KeyPart for Num {
    fn key_text(&self) -> Cow<'_, str> {
        Cow::Owned(self.0.to_string())
    }
    fn from_key_text(text: &str) -> Result<Self, KeyPartError> {
        text.parse().map(Num).map_err(|e| KeyPartError::new::<Num>(text, e.to_string()))
    }
    const KEY_CHARS: KeyChars = KeyChars::Only("0123456789");
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "SHELF#<shelf>", sk = "LOT#<n>x<part>")]
struct Lot {
    shelf: String,
    n: Num,
    part: String,
}

/// A type that declares digits only and writes anything: its keys are refused, not stored.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Liar(String);

impl KeyPart for Liar {
    fn key_text(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.0)
    }
    fn from_key_text(text: &str) -> Result<Self, KeyPartError> {
        Ok(Liar(text.to_owned()))
    }
    const KEY_CHARS: KeyChars = KeyChars::Only("0123456789");
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "LIAR#<id>x", sk = "LIAR")]
struct Lying {
    id: Liar,
}

fn cases() -> u32 {
    std::env::var("DDB_PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(0).max(1024)
}

/// All of Unicode, with plenty of separators, escapes and the literals' letters.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::string::string_regex("[a-cxyno!#/|~:%é0-9-]{0,8}").unwrap(),
        any::<String>(),
    ]
}

fn entry() -> impl Strategy<Value = Entry> {
    (text(), any::<i32>(), any::<u64>(), any::<bool>(), text(), any::<Option<u32>>()).prop_map(
        |(account, year, seq, flag, name, opt)| Entry { account, year, seq, flag, name, opt },
    )
}

fn sk(key: &Key<impl Entity>) -> String {
    key.sk().unwrap_or_default().to_owned()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn keys_read_back_exactly(e in entry()) {
        let key = Entry::key(&e.account, e.year, e.seq, e.flag, &e.name);
        let parsed = Entry::parse_key(key.pk(), key.sk().unwrap()).unwrap();
        prop_assert_eq!(parsed, (e.account.clone(), e.year, e.seq, e.flag, e.name.clone()));
        // The stored item, index keys included, reads back as the entity.
        let item = ddb_model::entity::to_item(&e, None).unwrap();
        prop_assert_eq!(item.contains_key("gsi1pk"), e.opt.is_some());
        prop_assert_eq!(ddb_model::entity::from_item::<Entry>(item).unwrap(), e);
    }

    #[test]
    fn two_values_never_share_a_key(a in entry(), b in entry()) {
        let ka = Entry::key(&a.account, a.year, a.seq, a.flag, &a.name);
        let kb = Entry::key(&b.account, b.year, b.seq, b.flag, &b.name);
        let same = (&a.account, a.year, a.seq, a.flag, &a.name) == (&b.account, b.year, b.seq, b.flag, &b.name);
        prop_assert_eq!(ka == kb, same);
    }

    #[test]
    fn variable_width_values_read_back_and_prefixes_are_exact(a in any::<u64>(), b in any::<u64>(), pa in text(), pb in text()) {
        let key = Lot::key("s", Num(a), &pa);
        prop_assert_eq!(Lot::parse_key(key.pk(), key.sk().unwrap()).unwrap(), ("s".to_owned(), Num(a), pa.clone()));
        let kb = Lot::key("s", Num(b), &pb);
        prop_assert_eq!(key == kb, (a, &pa) == (b, &pb));
        // The level prefix of `n = a` is `LOT#<a>x`: it never matches a longer value.
        let prefix = format!("LOT#{a}x");
        prop_assert_eq!(sk(&kb).starts_with(&prefix), a == b);
    }
}

#[test]
fn a_text_the_type_would_not_write_is_a_parse_error() {
    // Leading zeros: the value writes `5`, not `05`.
    assert!(matches!(Lot::parse_key("SHELF#s", "LOT#05xa"), Err(Error::KeyParse { .. })));
    assert!(matches!(Lot::parse_key("SHELF#s", "LOT#5ax"), Err(Error::KeyParse { .. })));
    assert_eq!(
        Lot::parse_key("SHELF#s", "LOT#5xax").unwrap(),
        ("s".to_owned(), Num(5), "ax".to_owned())
    );
    let key = Entry::key("a", -1, 7, true, "x");
    assert_eq!(key.sk(), Some("-2147483647y00000000000000000007ntrue!x"));
}

#[tokio::test]
async fn level_queries_stay_component_exact() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let lots: Vec<Lot> = [5, 55, 505, 6, 50]
        .into_iter()
        .flat_map(|n| {
            ["a", "x", ""].map(|part| Lot { shelf: "s".into(), n: Num(n), part: part.into() })
        })
        .collect();
    db.batch_put(&lots).await?;
    db.reset_requests();
    let five = Lot::query(&db, "s").n(Num(5)).all().await?;
    assert_eq!(db.requests().get(Op::Query), 1);
    let parts: Vec<&str> = five.iter().map(|l| l.part.as_str()).collect();
    assert_eq!(parts, ["", "a", "x"]);
    assert!(five.iter().all(|l| l.n == Num(5)));
    assert_eq!(Lot::query(&db, "s").n(Num(50)).count().await?, 3);
    assert_eq!(Lot::query(&db, "s").all().await?.len(), 15);

    let entries: Vec<Entry> = (0..4)
        .map(|i| Entry {
            account: "acc#1".into(),
            year: 2024 - i,
            seq: u64::try_from(i).unwrap_or(0),
            flag: i % 2 == 0,
            name: format!("n{i}y"),
            opt: Some(7),
        })
        .collect();
    db.batch_put(&entries).await?;
    let got = Entry::query(&db, "acc#1").year(2023).seq(1).flag(false).all().await?;
    assert_eq!(got, [entries[1].clone()]);
    let newest = Entry::query(&db, "acc#1").year_ge(2023).all().await?;
    assert_eq!(newest.len(), 2);
    let by_opt = Entry::query_gsi1(&db, 7u32).all().await?;
    assert_eq!(by_opt.len(), 4);
    for e in &entries {
        assert_eq!(
            Entry::get(&db, &e.account, e.year, e.seq, e.flag, &e.name).await?.as_ref(),
            Some(e)
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_value_holding_the_literal_is_refused_before_sending() {
    let db = support::db::<App>().await;
    db.reset_requests();
    let err = Lying { id: Liar("1x2".into()) }.put(&db).await.unwrap_err();
    match &err {
        Error::InvalidKey { problem: KeyProblem::Ambiguous { placeholder, separator }, .. } => {
            assert_eq!((placeholder.as_str(), *separator), ("id", 'x'));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(db.requests().total(), 0, "nothing sent");
    Lying { id: Liar("12".into()) }.put(&db).await.expect("digits only");

    // A query whose level value holds the literal would match other values' keys.
    let err = Pick::query(&db, "p").id(Liar("1x".into())).all().await.unwrap_err();
    assert!(
        matches!(
            &err,
            Error::InvalidKey { problem: KeyProblem::Ambiguous { separator: 'x', .. }, .. }
        ),
        "{err:?}"
    );
    assert_eq!(db.requests().get(Op::Query), 0, "nothing sent");
    assert_eq!(Pick::query(&db, "p").id(Liar("1".into())).all().await.unwrap(), []);
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "PICK#<p>", sk = "<id>x<rest>")]
struct Pick {
    p: String,
    id: Liar,
    rest: String,
}
