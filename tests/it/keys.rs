//! Key templates at run time: building, escaping, parsing, ordering, and the properties that
//! make keys safe (round trip, injectivity, numeric order, component-exact prefixes).

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::prelude::*;
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use crate::model::{App, Config, Doc, DocId, Event, Order, Session, Status, Store, User};
use crate::support;

#[test]
fn templates_build_the_documented_keys() {
    let key = User::key("u1");
    assert_eq!((key.pk(), key.sk()), ("USER#u1", Some("PROFILE")));

    let key = Order::key("u1", 2024, 7);
    assert_eq!(key.pk(), "USER#u1");
    assert_eq!(key.sk(), Some("ORDER#0000002024#00000000000000000007"));

    let key = Store::key("USA", "NY", "NEWYORKCITY", "10001");
    assert_eq!((key.pk(), key.sk()), ("USA", Some("NY#NEWYORKCITY#10001")));

    let key = Config::key();
    assert_eq!((key.pk(), key.sk()), ("CONFIG", Some("GLOBAL")));

    let key = Session::key("t0k");
    assert_eq!((key.pk(), key.sk()), ("SESSION#t0k", None));

    // `e.key()` and `E::key(fields)` agree.
    let user = User::sample("u1");
    assert_eq!(user.key(), User::key(&user.id));
}

#[test]
#[allow(clippy::needless_borrows_for_generic_args)] // references are what this tests
fn key_arguments_accept_values_references_and_str() {
    let owned = String::from("u1");
    assert_eq!(User::key(&owned), User::key("u1"));
    assert_eq!(User::key(owned.clone()), User::key(owned.as_str()));
    let year: i32 = 2024;
    assert_eq!(Order::key("u", &year, 1u64), Order::key("u", 2024, 1));
    assert_eq!(Doc::key(DocId("d".into()), 3).pk(), "DOC#d");
}

#[test]
fn separators_in_values_are_escaped_and_round_trip() {
    let nasty = "a#b/c|d~e:f%g";
    let key = User::key(nasty);
    assert_eq!(key.pk(), "USER#a%23b%2Fc%7Cd%7Ee%3Af%25g");
    assert_eq!(User::parse_key(key.pk(), "PROFILE").unwrap(), (nasty.to_string(),));

    // A value cannot forge the structure of the key.
    let forged = Store::key("USA", "NY#NEWYORKCITY", "10001", "x");
    let genuine = Store::key("USA", "NY", "NEWYORKCITY", "10001#x");
    assert_ne!(forged, genuine);
    assert_eq!(forged.sk(), Some("NY%23NEWYORKCITY#10001#x"));
}

#[test]
fn key_parts_of_every_kind_round_trip() {
    let key = Order::key("u", -3, u64::MAX);
    assert_eq!(Order::parse_key(key.pk(), key.sk().unwrap()).unwrap(), ("u".into(), -3, u64::MAX));

    let key = Doc::key(DocId("d/1".into()), 65535);
    assert_eq!(key.pk(), "DOC#d%2F1");
    assert_eq!(Doc::parse_key(key.pk(), key.sk().unwrap()).unwrap(), (DocId("d/1".into()), 65535));

    let stream = uuid::Uuid::new_v4();
    let at = chrono::DateTime::parse_from_rfc3339("2024-02-29T23:59:58.123456789Z")
        .unwrap()
        .with_timezone(&chrono::Utc);
    let key = Event::key(stream, at, -1);
    assert_eq!(key.sk(), Some("20240229T235958.123456789Z#-9223372036854775807"));
    assert_eq!(Event::parse_key(key.pk(), key.sk().unwrap()).unwrap(), (stream, at, -1));

    assert_eq!(Status::Shipped.key_text(), "SHIPPED");
    assert_eq!(Status::from_key_text("Open").unwrap(), Status::Open);
    let err = Status::from_key_text("Lost").unwrap_err();
    assert!(err.to_string().contains("expected one of: Open, SHIPPED"), "{err}");
}

#[test]
fn malformed_keys_are_typed_errors() {
    let cases: &[(&str, &str, &str)] = &[
        ("USR#u1", "PROFILE", "expected `USER#`"),
        ("USER#u1", "PROFILES", "unexpected text"),
        ("USER#a%4", "PROFILE", "invalid escape"),
        ("USER#a%2f", "PROFILE", "invalid escape"),
        ("USER#a%41", "PROFILE", "invalid escape"),
    ];
    for (pk, sk, needle) in cases {
        let err = User::parse_key(pk, sk).unwrap_err();
        assert!(matches!(err, Error::KeyParse { .. }), "{pk} {sk}: {err:?}");
        assert!(err.to_string().contains(needle), "{pk} {sk}: {err}");
    }
    for sk in [
        "ORDER#2024#00000000000000000007",
        "ORDER#0000002024#7",
        "ORDER#+000002024#00000000000000000007",
    ] {
        let err = Order::parse_key("USER#u", sk).unwrap_err();
        assert!(matches!(err, Error::KeyParse { .. }), "{sk}: {err:?}");
    }
    let err = Doc::parse_key("DOC#d", "REV#99999").unwrap_err();
    assert!(err.to_string().contains("5 decimal digits"), "{err}");
}

/// An entity whose key repeats a placeholder: both copies must agree when parsed.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "NODE#<id>", sk = "NODE#<id>")]
struct Node {
    id: String,
}

#[test]
fn a_repeated_placeholder_must_agree() {
    let key = Node::key("n1");
    assert_eq!((key.pk(), key.sk()), ("NODE#n1", Some("NODE#n1")));
    assert_eq!(Node::parse_key("NODE#n1", "NODE#n1").unwrap(), ("n1".into(),));
    let err = Node::parse_key("NODE#n1", "NODE#n2").unwrap_err();
    assert!(err.to_string().contains("appears twice"), "{err}");
}

/// The generated `parse_key` reads the partition key whole (its literal runs, its fields, its
/// end) before it looks at the sort key; an entity without a sort-key template ignores one.
#[test]
fn stored_keys_are_read_in_template_order() {
    let read = |pk: &str, sk: Option<&str>| <Order as Entity>::parse_key(pk, sk);
    let sk = Order::key("u", 1, 2).sk().map(str::to_owned);
    assert_eq!(read("USER#u", sk.as_deref()).unwrap(), ("u".into(), 1, 2));
    let missing = read("USER#u", None).unwrap_err();
    assert!(missing.to_string().contains("the sort key is missing"), "{missing}");
    // A broken partition key is reported before a missing sort key.
    let err = read("USER#u#x", None).unwrap_err();
    assert!(err.to_string().contains("attribute `pk`"), "{err}");
    let err = read("USERS#u", Some("ORDER#")).unwrap_err();
    assert!(err.to_string().contains("expected `USER#`"), "{err}");
    assert_eq!(<Session as Entity>::parse_key("SESSION#t", Some("x")).unwrap(), ("t".into(),));
    assert_eq!(<Config as Entity>::parse_key("CONFIG", Some("GLOBAL")).unwrap(), ());
    let err = <Config as Entity>::parse_key("CONFIG", Some("GLOBALS")).unwrap_err();
    assert!(err.to_string().contains("unexpected text"), "{err}");
}

fn any_text() -> impl Strategy<Value = String> {
    // Plenty of separators and escape characters, some non-ASCII.
    proptest::string::string_regex("[a-c#/|~:%é]{0,8}").unwrap()
}

fn sk_of(key: &Key<Store>) -> String {
    key.sk().unwrap_or_default().to_owned()
}

proptest! {
    #[test]
    fn prop_round_trip(country in any_text(), state in any_text(), city in any_text(), zip in any_text()) {
        let key = Store::key(&country, &state, &city, &zip);
        let fields = Store::parse_key(key.pk(), key.sk().unwrap()).unwrap();
        prop_assert_eq!(fields, (country, state, city, zip));
    }

    #[test]
    fn prop_injective(a in (any_text(), any_text(), any_text()), b in (any_text(), any_text(), any_text())) {
        let ka = Store::key("C", &a.0, &a.1, &a.2);
        let kb = Store::key("C", &b.0, &b.1, &b.2);
        prop_assert_eq!(a == b, ka == kb);
    }

    #[test]
    fn prop_prefixes_are_component_exact(a in any_text(), b in any_text(), rest in any_text()) {
        // The begins_with prefix of "state = b" is the key text of b plus the separator.
        let prefix_b = {
            let sk = sk_of(&Store::key("C", &b, "", ""));
            sk[..sk.len() - 1].to_owned() // "<b>#" (drop the trailing "#" of the empty zip)
        };
        let key_a = sk_of(&Store::key("C", &a, &rest, &rest));
        prop_assert_eq!(key_a.starts_with(&prefix_b), a == b);
    }

    #[test]
    fn prop_signed_order_is_numeric(a in any::<i32>(), b in any::<i32>(), s1 in any::<u64>(), s2 in any::<u64>()) {
        let ka = sk_of_order(a, s1);
        let kb = sk_of_order(b, s2);
        prop_assert_eq!(ka.cmp(&kb), (a, s1).cmp(&(b, s2)));
    }

    #[test]
    fn prop_integer_widths_round_trip(v in any::<i64>(), u in any::<u8>()) {
        prop_assert_eq!(i64::from_key_text(&v.key_text()).unwrap(), v);
        prop_assert_eq!(u8::from_key_text(&u.key_text()).unwrap(), u);
    }
}

fn sk_of_order(year: i32, seq: u64) -> String {
    Order::key("u", year, seq).sk().unwrap_or_default().to_owned()
}

/// The store-locator data of seed 003, queried with raw `begins_with` on the keys ddb-model
/// built: a state prefix never matches a longer state name.
#[tokio::test]
async fn begins_with_on_a_state_never_matches_a_longer_state() -> Result<(), Error> {
    let db = support::db::<ddb_model::DefaultTable>().await;
    let stores = [
        ("NE", "OMAHA", "68118", "100 St Andrews lane", 921),
        ("NY", "NEWYORKCITY", "10001", "675 6th Ave", 1211),
        ("NY", "NEWYORKCITY", "10019", "1500 Broadway", 1924),
        ("NYC", "X", "1", "decoy state sharing the prefix NY", 1),
        ("NY#NEWYORKCITY", "Y", "2", "decoy with a separator in the value", 2),
    ];
    for (state, city, zip, address, square_feet) in stores {
        let store = Store {
            country: "USA".into(),
            state: state.into(),
            city: city.into(),
            zip: zip.into(),
            address: address.into(),
            square_feet,
        };
        store.create(&db).await?;
    }
    let prefix = {
        let sk = sk_of(&Store::key("USA", "NY", "", ""));
        sk[..sk.len() - 1].to_owned()
    };
    assert_eq!(prefix, "NY#");
    let out = db
        .client()
        .query()
        .table_name(db.table_name())
        .key_condition_expression("#pk = :pk AND begins_with(#sk, :prefix)")
        .expression_attribute_names("#pk", "pk")
        .expression_attribute_names("#sk", "sk")
        .expression_attribute_values(":pk", AttributeValue::S("USA".into()))
        .expression_attribute_values(":prefix", AttributeValue::S(prefix))
        .send()
        .await
        .expect("query");
    let mut zips: Vec<String> = Vec::new();
    for item in out.items.unwrap_or_default() {
        let store = ddb_model::entity::from_item::<Store>(item)?;
        assert_eq!(store.state, "NY");
        zips.push(store.zip);
    }
    assert_eq!(zips, ["10001", "10019"]);
    Ok(())
}

/// Every separator the runtime escapes is accepted by the derive after a placeholder, and the
/// two lists agree (the derive keeps its own copy).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "S#<a>#<b>/<c>|<d>~<e>:<f>", sk = "S")]
struct EverySeparator {
    a: String,
    b: String,
    c: String,
    d: String,
    e: String,
    f: String,
}

#[test]
fn every_separator_is_accepted_and_escaped() {
    assert_eq!(ddb_model::key::SEPARATORS, ['#', '/', '|', '~', ':']);
    let all = "#/|~:%";
    let key = EverySeparator::key(all, all, all, all, all, all);
    let escaped = "%23%2F%7C%7E%3A%25";
    assert_eq!(key.pk(), format!("S#{escaped}#{escaped}/{escaped}|{escaped}~{escaped}:{escaped}"));
    let fields = EverySeparator::parse_key(key.pk(), "S").unwrap();
    assert_eq!(fields.5, all);
}

/// Bad input for keys: values built to imitate another item's key write their own item and
/// leave the imitated one alone; a tampered key string is a typed error.
#[tokio::test]
async fn forged_values_never_reach_another_item() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let victim = User::sample("victim");
    victim.create(&db).await?;
    let before = support::snapshot(&db).await;

    // `id` imitating the victim's key, its sort key, or an escape of it.
    for forged in ["victim#PROFILE", "victim%23", "victim/", "victim\u{0}", "VICTIM"] {
        let mut attacker = User::sample(forged);
        attacker.name = "attacker".into();
        attacker.put(&db).await?;
        assert_ne!(attacker.key(), victim.key());
    }
    assert_eq!(User::get(&db, "victim").await?, Some(victim.clone()), "the victim is untouched");
    let after = support::snapshot(&db).await;
    assert_eq!(after.len(), before.len() + 5, "five new items, no overwrite");
    assert!(before.iter().all(|item| after.contains(item)));

    // A tampered stored key is refused when parsed.
    let err = User::parse_key("USER#victim%2", "PROFILE").unwrap_err();
    assert!(matches!(err, Error::KeyParse { .. }), "{err:?}");
    Ok(())
}

/// Issue 13, item 1: a key whose last component holds a separator unescaped parsed to a value
/// that encodes to another key (`USER#a#b` gave `a#b`, whose key is `USER#a%23b`). Every
/// raw reserved character in any component is now a typed error.
#[test]
fn parse_key_rejects_raw_separators_in_any_component() {
    for pk in ["USER#a#b", "USER#a/b", "USER#a:b", "USER#a|b", "USER#a~b", "USER##", "USER#%23#"] {
        let err = User::parse_key(pk, "PROFILE").unwrap_err();
        assert!(matches!(err, Error::KeyParse { .. }), "{pk}: {err:?}");
        assert!(err.is_invalid_input(), "{pk}");
        assert!(err.to_string().contains("unescaped"), "{pk}: {err}");
    }
    // A middle component: the value ends at its separator, and holds no other one.
    for sk in ["N/Y#NYC#10001", "NY#N:YC#10001", "NY#NYC#100|01", "NY#NYC#10001#"] {
        let err = Store::parse_key("USA", sk).unwrap_err();
        assert!(matches!(err, Error::KeyParse { .. }), "{sk}: {err:?}");
    }
    for pk in ["S#a#b#c/d|e~f:g:h", "S#a#b#c/d|e~f:g/"] {
        assert!(EverySeparator::parse_key(pk, "S").is_err(), "{pk}");
    }
    // The escaped forms are the values' keys and parse.
    assert_eq!(User::parse_key("USER#a%23b", "PROFILE").unwrap(), ("a#b".to_owned(),));
    assert_eq!(User::key("a#b").pk(), "USER#a%23b");
}

/// Pieces that keys of the test models are made of, valid and invalid escapes, separators,
/// digits, signs, and characters up to U+10FFFF: concatenations of them are often keys.
fn key_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "USER#", "ORDER#", "PROFILE", "REV#", "DOC#", "NODE#", "EVENT#", "S#", "S", "#", "/",
            "|", "~", ":", "%", "%23", "%25", "%2F", "%3A", "%7C", "%7E", "%41", "%2f", "0000002024",
            "00000000000000000007", "-", "00001", "65535", "a", "é", "\u{10FFFF}", "", "Z",
            "20240229T235958.123456789Z", "-9223372036854775807",
            "67e55044-10b1-426f-9247-bb680e5fe0c8",
        ])
        .prop_map(str::to_owned),
        1 => any::<char>().prop_map(String::from),
    ]
}

fn key_text() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => prop::collection::vec(key_piece(), 0..8).prop_map(|v| v.concat()),
        1 => any::<String>(),
    ]
}

fn key_cases() -> u32 {
    // Pure and fast: `DDB_PROPTEST_CASES` only ever raises the count.
    std::env::var("DDB_PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(0).max(4096)
}

/// Parses `(pk, sk)` with every test model: whatever parses encodes back to the same bytes.
/// Returns how many models parsed it.
fn check_round_trip(pk: &str, sk: &str) -> Result<usize, TestCaseError> {
    let mut parsed = 0;
    macro_rules! model {
        ($parse:expr, $encode:expr) => {
            if let Ok(fields) = $parse {
                let key = $encode(fields);
                prop_assert_eq!((key.pk(), key.sk().unwrap_or(sk)), (pk, sk), "{:?}", key);
                parsed += 1;
            }
        };
    }
    model!(User::parse_key(pk, sk), |(id,): (String,)| User::key(id));
    model!(Store::parse_key(pk, sk), |(c, s, t, z): (String, String, String, String)| {
        Store::key(c, s, t, z)
    });
    model!(Order::parse_key(pk, sk), |(u, y, s): (String, i32, u64)| Order::key(u, y, s));
    model!(Doc::parse_key(pk, sk), |(d, r): (DocId, u16)| Doc::key(d, r));
    model!(Event::parse_key(pk, sk), |(s, a, i)| Event::key(s, a, i));
    model!(Node::parse_key(pk, sk), |(id,): (String,)| Node::key(id));
    model!(Session::parse_key(pk), |(t,): (String,)| Session::key(t));
    model!(EverySeparator::parse_key(pk, sk), |(a, b, c, d, e, f)| EverySeparator::key(
        a, b, c, d, e, f
    ));
    Ok(parsed)
}

/// For every key string `k`, `parse_key(k) == Ok(v)` implies that encoding `v` gives `k` byte
/// for byte: single- and multi-placeholder templates, strings, signed and unsigned integers,
/// a newtype, UUIDs and timestamps, a repeated placeholder, every separator.
#[test]
fn parse_key_then_encode_gives_the_same_bytes() {
    use proptest::test_runner::{Config, TestRunner};
    let cases = key_cases();
    let mut runner =
        TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let parsed = std::cell::Cell::new(0usize);
    let strategy = (key_text(), key_text(), any::<bool>());
    let result = runner.run(&strategy, |(pk, sk, swap)| {
        let (pk, sk) = if swap { (sk, pk) } else { (pk, sk) };
        parsed.set(parsed.get() + check_round_trip(&pk, &sk)?);
        // The same with a valid key whose component gets one raw reserved character.
        for (model_pk, model_sk) in [
            (format!("USER#{pk}"), "PROFILE".to_owned()),
            ("USA".to_owned(), format!("{pk}#{sk}#z")),
            (format!("NODE#{pk}"), format!("NODE#{sk}")),
        ] {
            parsed.set(parsed.get() + check_round_trip(&model_pk, &model_sk)?);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // Not vacuous: many of the generated keys are keys of some model.
    assert!(parsed.get() > cases as usize / 4, "only {} parses in {cases} cases", parsed.get());
}

/// The concrete keys of the issue, as stored items: an item whose stored key does not
/// round-trip from its fields is a typed error when read back, never a wrong struct.
#[tokio::test]
async fn stored_keys_that_do_not_round_trip_are_typed_errors() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut item = ddb_model::entity::to_item(&User::sample("a#b"), None)?;
    item.insert("pk".into(), support::s("USER#a#b"));
    assert!(matches!(User::parse_key("USER#a#b", "PROFILE"), Err(Error::KeyParse { .. })));
    support::put_raw(&db, item.clone()).await;
    let err = ddb_model::entity::from_item::<User>(item).unwrap_err();
    assert!(
        matches!(&err, Error::CorruptItem { reason: CorruptReason::KeyMismatch { expected }, .. }
            if expected.contains("USER#a%23b")),
        "{err:?}"
    );
    // The genuine item of "a#b" is another item, which reads back.
    User::sample("a#b").create(&db).await?;
    assert_eq!(User::get(&db, "a#b").await?.map(|u| u.id), Some("a#b".to_owned()));
    Ok(())
}

/// Items read by a query: a stored sort key with a raw separator inside a component
/// (`NY#NYC#1#0`: zip `1#0` would be stored as `1%230`) is a typed error whether the query
/// reads entities or projections, never a struct built from the wrong key.
#[tokio::test]
async fn queried_items_whose_key_does_not_round_trip_are_typed_errors() -> Result<(), Error> {
    #[derive(Deserialize, Debug)]
    struct Zip {
        #[allow(dead_code)]
        zip: String,
    }
    let db = support::db::<ddb_model::DefaultTable>().await;
    let genuine = Store {
        country: "USA".into(),
        state: "NY".into(),
        city: "NYC".into(),
        zip: "1".into(),
        address: String::new(),
        square_feet: 1,
    };
    genuine.put(&db).await?;
    let project = || Store::query(&db, "USA").project::<Zip>([Store::ZIP.path()]);
    assert_eq!(project().all().await?.len(), 1);
    let mut forged = ddb_model::entity::to_item(&Store { zip: "1#0".into(), ..genuine }, None)?;
    forged.insert("sk".into(), support::s("NY#NYC#1#0"));
    support::put_raw(&db, forged).await;
    let err = project().all().await.unwrap_err();
    let foreign = |e: &Error| match e {
        Error::CorruptItem { reason: CorruptReason::ForeignKey { problem }, .. } => {
            matches!(**problem, Error::KeyParse { .. })
        }
        _ => false,
    };
    assert!(foreign(&err), "{err:?}");
    let err = Store::query(&db, "USA").all().await.unwrap_err();
    assert!(matches!(err, Error::CorruptItem { .. }), "{err:?}");
    Ok(())
}

/// Tree paths and their key texts follow the same rule: a raw separator inside a segment's
/// text is not the text of any path.
#[test]
fn tree_path_texts_reject_raw_separators() {
    for text in ["D/V#d", "a:b", "a|b/c", "x~"] {
        let err = text.parse::<ddb_model::TreePath>().unwrap_err();
        assert!(err.to_string().contains("unescaped"), "{text}: {err}");
    }
    let odd = ddb_model::TreePath::new(["a#b", "c/d"]).unwrap();
    assert_eq!(odd.to_string(), "a%23b/c%2Fd");
    assert_eq!(odd.to_string().parse::<ddb_model::TreePath>().unwrap(), odd);
}

/// An entity written only with the re-exported crates (`ddb_model::chrono`,
/// `ddb_model::uuid`): no version of its own to match.
#[derive(ddb_model::Entity, serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "LOG#<source>", sk = "AT#<at>")]
pub struct LogLine {
    source: ddb_model::uuid::Uuid,
    at: ddb_model::chrono::DateTime<ddb_model::chrono::Utc>,
    seen: ddb_model::chrono::DateTime<ddb_model::chrono::Utc>,
    day: Option<ddb_model::chrono::NaiveDate>,
}

#[tokio::test]
async fn reexported_chrono_and_uuid_types_round_trip_as_key_parts_and_fields() -> Result<(), Error>
{
    use ddb_model::chrono::{DateTime, NaiveDate, TimeZone, Utc};
    let db = support::db::<ddb_model::DefaultTable>().await;
    let source = ddb_model::uuid::Uuid::from_u128(0x1234_5678_9abc_def0_1234_5678_9abc_def0);
    let at: DateTime<Utc> = Utc.with_ymd_and_hms(2024, 2, 29, 23, 59, 58).single().unwrap()
        + ddb_model::chrono::Duration::nanoseconds(123_456_789);
    let line = LogLine {
        source,
        at,
        seen: Utc.with_ymd_and_hms(1999, 12, 31, 0, 0, 0).single().unwrap(),
        day: NaiveDate::from_ymd_opt(2024, 2, 29),
    };
    line.create(&db).await?;
    assert_eq!(LogLine::get(&db, source, at).await?.as_ref(), Some(&line));
    let found = LogLine::query(&db, source).all().await?;
    assert_eq!(found, std::slice::from_ref(&line));
    let key = line.key();
    let parsed = <LogLine as Entity>::parse_key(key.pk(), key.sk())?;
    assert_eq!(parsed, (source, at));
    Ok(())
}
