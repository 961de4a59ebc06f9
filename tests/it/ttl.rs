//! Expiry times (`#[entity(ttl = field)]`, `#[table(ttl = "..")]`): stored as a Number of
//! seconds whatever the field's type, written by every write path, enabled on the table by
//! `create_table`, and hidden from reads once past (at the handle's clock) until the service
//! deletes them.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ddb_model::aws_sdk_dynamodb::types::{AttributeValue, TimeToLiveStatus};
use ddb_model::chrono::{DateTime, Utc};
use ddb_model::error::{RequestProblem, TableMismatchReason};
use ddb_model::prelude::*;
use ddb_model::{Op, entity::MAX_EXPIRY_SECS, local};
use serde::{Deserialize, Serialize};

use crate::support::{self, n, raw};

#[derive(Table)]
#[table(name = "sessions", ttl = "expires")]
struct Sessions;

/// The same keys, another expiry attribute: the same physical table seen through it is a
/// mismatch.
#[derive(Table)]
#[table(name = "sessions", ttl = "gone")]
struct OtherTtl;

/// A `SystemTime` expiry.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Sessions, pk = "USER#<user>", sk = "SESSION#<id>", ttl = expires)]
struct Session {
    user: String,
    id: String,
    expires: SystemTime,
}

/// An optional chrono expiry, renamed to the table's attribute: `None` never expires.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Sessions, pk = "USER#<user>", sk = "TOKEN#<id>", ttl = until)]
struct Token {
    user: String,
    id: String,
    #[serde(rename = "expires")]
    until: Option<DateTime<Utc>>,
}

/// Integer seconds.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Sessions, pk = "INVITE#<code>", sk = "INVITE", ttl = expires)]
struct Invite {
    code: String,
    expires: u64,
}

/// The items of a user's partition, whatever their type.
#[derive(Collection, Debug, PartialEq)]
enum UserItems {
    Session(Session),
    Token(Token),
}

/// Far enough in the future that no emulator's own expiry deletes the items meanwhile.
const T: i64 = 2_000_000_000;

fn at(secs: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(u64::try_from(secs).expect("after the epoch"))
}

fn chrono_at(secs: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(secs, 0).expect("in range")
}

fn session(id: &str, expires: i64) -> Session {
    Session { user: "ann".into(), id: id.into(), expires: at(expires) }
}

/// A clock tests set by hand (seconds since the epoch).
#[derive(Clone)]
struct Clock(Arc<AtomicI64>);

impl Clock {
    fn new(secs: i64) -> Clock {
        Clock(Arc::new(AtomicI64::new(secs)))
    }
    fn set(&self, secs: i64) {
        self.0.store(secs, Ordering::SeqCst);
    }
    fn install(&self, db: Db<Sessions>) -> Db<Sessions> {
        let now = Arc::clone(&self.0);
        db.with_clock(move || at(now.load(Ordering::SeqCst)))
    }
}

async fn stored(db: &Db<Sessions>, pk: &str, sk: &str) -> Option<AttributeValue> {
    raw(db, pk, sk).await.expect("stored item").remove("expires")
}

#[tokio::test]
async fn every_type_is_stored_as_seconds_and_read_back() -> Result<(), Error> {
    let db = support::db::<Sessions>().await;
    // The sub-second part is dropped: the service's Time to Live reads whole seconds.
    let s = Session { expires: at(T) + Duration::from_millis(999), ..session("s", 0) };
    s.put(&db).await?;
    assert_eq!(stored(&db, "USER#ann", "SESSION#s").await, Some(n(T)));
    assert_eq!(Session::get(&db, "ann", "s").await?, Some(session("s", T)));

    let token = Token { user: "ann".into(), id: "t".into(), until: Some(chrono_at(T + 1)) };
    token.put(&db).await?;
    assert_eq!(stored(&db, "USER#ann", "TOKEN#t").await, Some(n(T + 1)));
    assert_eq!(Token::get(&db, "ann", "t").await?, Some(token));

    // `None`: no attribute, and it reads back as `None`.
    let forever = Token { user: "ann".into(), id: "f".into(), until: None };
    forever.put(&db).await?;
    assert_eq!(stored(&db, "USER#ann", "TOKEN#f").await, None);
    assert_eq!(Token::get(&db, "ann", "f").await?, Some(forever));

    let invite = Invite { code: "c".into(), expires: u64::try_from(T + 2).expect("positive") };
    invite.create(&db).await?;
    assert_eq!(stored(&db, "INVITE#c", "INVITE").await, Some(n(T + 2)));
    assert_eq!(Invite::get(&db, "c").await?, Some(invite));
    Ok(())
}

#[tokio::test]
async fn create_table_enables_time_to_live_once() -> Result<(), Error> {
    let db = support::db::<Sessions>().await;
    let out = db
        .client()
        .describe_time_to_live()
        .table_name(db.table_name())
        .send()
        .await
        .expect("DescribeTimeToLive");
    let description = out.time_to_live_description().expect("a description");
    assert_eq!(description.attribute_name(), Some("expires"));
    assert!(matches!(
        description.time_to_live_status(),
        Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling)
    ));

    // Again: checked, not enabled twice (the service refuses to enable it twice).
    let before = db.requests();
    db.create_table().await?;
    let spent = db.requests() - before;
    assert_eq!(spent.get(Op::DescribeTimeToLive), 1);
    assert_eq!(spent.get(Op::UpdateTimeToLive), 0);

    // Another expiry attribute on the same table is a mismatch, and changes nothing.
    let other: Db<OtherTtl> = Db::with_table_name(local::client()?, db.table_name());
    let err = other.create_table().await.unwrap_err();
    assert!(
        matches!(
            &err,
            Error::TableMismatch {
                reason: TableMismatchReason::TtlAttribute { declared, found: Some(f) },
                ..
            } if f == "expires" && declared == "gone"
        ),
        "{err:?}"
    );
    assert_eq!(other.requests().get(Op::UpdateTimeToLive), 0);
    Ok(())
}

#[tokio::test]
async fn reads_hide_expired_items_unless_asked() -> Result<(), Error> {
    let clock = Clock::new(T);
    let db = clock.install(support::db::<Sessions>().await);
    // Expired one second ago, expiring now (not expired: the service's rule is "less than
    // now"), later; and a token that never expires.
    for (id, secs) in [("a", T - 1), ("b", T), ("c", T + 10)] {
        session(id, secs).put(&db).await?;
    }
    Token { user: "ann".into(), id: "t".into(), until: None }.put(&db).await?;

    db.reset_requests();
    assert_eq!(Session::get(&db, "ann", "a").await?, None);
    assert_eq!(Session::get(&db, "ann", "a").include_expired().await?, Some(session("a", T - 1)));
    assert_eq!(Session::get(&db, "ann", "b").await?, Some(session("b", T)));
    assert_eq!(db.requests().total(), 3, "one GetItem each");

    let keys = ["a", "b", "c"].map(|id| Session::key("ann", id));
    let found = db.batch_get(keys.clone()).await?;
    assert_eq!(found, [None, Some(session("b", T)), Some(session("c", T + 10))]);
    let all = db.batch_get(keys.clone()).include_expired().await?;
    assert!(all.iter().all(Option::is_some));
    assert_eq!(db.batch_get(keys.clone()).by_key().await?.len(), 2);

    // Queries filter on the service: one request, and the limit counts kept items.
    db.reset_requests();
    let ids = |v: Vec<Session>| v.into_iter().map(|s| s.id).collect::<Vec<_>>();
    assert_eq!(ids(Session::query(&db, "ann").all().await?), ["b", "c"]);
    assert_eq!(db.requests().get(Op::Query), 1);
    assert_eq!(ids(Session::query(&db, "ann").limit(1).all().await?), ["b"]);
    assert_eq!(Session::query(&db, "ann").count().await?, 2);
    assert_eq!(ids(Session::query(&db, "ann").include_expired().all().await?), ["a", "b", "c"]);
    assert_eq!(Token::query(&db, "ann").count().await?, 1, "no expiry, never hidden");

    assert_eq!(db.scan::<Session>().count().await?, 2);
    assert_eq!(db.scan::<Session>().include_expired().count().await?, 3);

    // A page and its cursor stay valid as the clock moves; what expired meanwhile is hidden.
    let first = Session::query(&db, "ann").page_size(1).limit(1).page(None).await?;
    assert_eq!(ids(first.items), ["b"]);
    clock.set(T + 1);
    let rest = Session::query(&db, "ann").page_size(1).limit(1).page(first.next.as_ref()).await?;
    assert_eq!(ids(rest.items), ["c"]);
    assert_eq!(Session::get(&db, "ann", "b").await?, None, "expired at T + 1");
    assert_eq!(Token::get(&db, "ann", "t").await?.map(|t| t.until), Some(None));
    Ok(())
}

#[tokio::test]
async fn updates_batches_and_transactions_write_seconds() -> Result<(), Error> {
    let db = support::db::<Sessions>().await;
    session("s", T).put(&db).await?;

    // A typed update takes the field's type and writes seconds; conditions compare them.
    let extended = Session::update(&db, "ann", "s")
        .set(Session::EXPIRES, at(T + 60))
        .condition(Session::EXPIRES.lt(at(T + 60)))
        .await?;
    assert_eq!(extended.expires, at(T + 60));
    assert_eq!(stored(&db, "USER#ann", "SESSION#s").await, Some(n(T + 60)));
    let err = Session::update(&db, "ann", "s")
        .set(Session::EXPIRES, at(T))
        .condition(Session::EXPIRES.lt(at(T + 60)))
        .await
        .unwrap_err();
    assert!(err.is_condition_failed(), "{err:?}");

    // An optional expiry: set to a time, cleared with `remove` (never expires).
    let token = Token { user: "ann".into(), id: "t".into(), until: None };
    token.put(&db).await?;
    Token::update(&db, "ann", "t").set(Token::UNTIL, chrono_at(T + 5)).await?;
    assert_eq!(stored(&db, "USER#ann", "TOKEN#t").await, Some(n(T + 5)));
    let cleared = Token::update(&db, "ann", "t").remove(Token::UNTIL).await?;
    assert_eq!(cleared.until, None);
    assert_eq!(stored(&db, "USER#ann", "TOKEN#t").await, None);

    // An upsert that creates the item.
    let made = Invite::update(&db, "u").upsert().set(Invite::EXPIRES, 2_000_000_007u64).await?;
    assert_eq!(made.expires, 2_000_000_007);
    assert_eq!(stored(&db, "INVITE#u", "INVITE").await, Some(n(2_000_000_007u64)));

    // Batch puts and transactions.
    db.batch_write().put(&session("b1", T + 1)).put(&session("b2", T + 2)).await?;
    assert_eq!(stored(&db, "USER#ann", "SESSION#b2").await, Some(n(T + 2)));
    let mut created = session("x", T + 3);
    db.transaction()
        .create(&mut created)
        .update(Session::key("ann", "b1"), |u| u.set(Session::EXPIRES, at(T + 4)))
        .await?;
    assert_eq!(stored(&db, "USER#ann", "SESSION#x").await, Some(n(T + 3)));
    assert_eq!(stored(&db, "USER#ann", "SESSION#b1").await, Some(n(T + 4)));
    Ok(())
}

#[tokio::test]
async fn out_of_range_expiries_are_refused_before_sending() -> Result<(), Error> {
    let db = support::db::<Sessions>().await;
    let out_of_range = |err: &Error, secs: i64| {
        matches!(err, Error::InvalidRequest { path, problem: RequestProblem::ExpiryOutOfRange { seconds, .. } }
            if path == "expires" && *seconds == secs)
    };
    db.reset_requests();
    let before_epoch =
        Session { expires: UNIX_EPOCH - Duration::from_millis(1), ..session("old", 0) };
    let err = before_epoch.put(&db).await.unwrap_err();
    assert!(out_of_range(&err, -1), "{err:?}");
    // Milliseconds by mistake: the service would never expire the item.
    let millis = Invite { code: "ms".into(), expires: 2_000_000_000_000 };
    let err = millis.create(&db).await.unwrap_err();
    assert!(out_of_range(&err, 2_000_000_000_000), "{err:?}");
    let err = db.batch_write().put(&millis).await.unwrap_err();
    assert!(out_of_range(&err, 2_000_000_000_000), "{err:?}");
    // A transaction names the action.
    let err = db.transaction().put(&before_epoch).await.unwrap_err();
    assert!(
        matches!(&err, Error::InvalidAction { action: 0, source } if out_of_range(source, -1)),
        "{err:?}"
    );
    // In an update: the value is refused, naming the path.
    let err = Invite::update(&db, "ms").set(Invite::EXPIRES, 1u64 << 40).await.unwrap_err();
    assert!(err.to_string().contains("expires"), "{err}");
    let far = chrono_at(MAX_EXPIRY_SECS + 1);
    let err = Token::update(&db, "ann", "t").set(Token::UNTIL, far).await.unwrap_err();
    assert!(err.to_string().contains("expires"), "{err}");
    assert_eq!(db.requests().total(), 0, "nothing sent");
    Ok(())
}

/// Items whose expiry attribute another program wrote: a decimal (the service expires it by
/// its whole seconds), a string (never expires, and not this field's form: a typed error).
#[tokio::test]
async fn foreign_expiry_attributes() -> Result<(), Error> {
    let clock = Clock::new(T);
    let db = clock.install(support::db::<Sessions>().await);
    let put = |id: &str, v: AttributeValue| {
        let mut item = ddb_model::entity::to_item(&session(id, T), None).expect("item");
        item.insert("expires".into(), v);
        db.client().put_item().table_name(db.table_name()).set_item(Some(item)).send()
    };
    put("dec", n("1999999999.5")).await.expect("put");
    put("str", AttributeValue::S("soon".into())).await.expect("put");
    assert_eq!(Session::get(&db, "ann", "dec").await?, None, "expired at its whole seconds");
    let read = Session::get(&db, "ann", "dec").include_expired().await?;
    assert_eq!(read.map(|s| s.expires), Some(at(T - 1)));
    let err = Session::get(&db, "ann", "str").await.unwrap_err();
    assert!(matches!(err, Error::Deserialize { .. }), "{err:?}");
    // Not expired for the query's filter either: the typed error again.
    let err = Session::query(&db, "ann").all().await.unwrap_err();
    assert!(matches!(err, Error::Deserialize { .. }), "{err:?}");
    Ok(())
}

mod props {
    use proptest::prelude::*;

    use super::*;

    fn run<F: std::future::Future<Output = Result<(), Error>>>(f: F) -> Result<(), Error> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        runtime.expect("runtime").block_on(f)
    }

    /// Every instant from any number of seconds (all of `i64`) and nanoseconds: within range it
    /// is stored as its whole seconds and read back truncated; outside it is refused and
    /// nothing is written.
    async fn check(instants: Vec<(i64, u32)>) -> Result<(), Error> {
        let db = support::db::<Sessions>().await.with_clock(|| UNIX_EPOCH);
        for (i, (secs, nanos)) in instants.into_iter().enumerate() {
            let id = i.to_string();
            let time = if secs >= 0 {
                UNIX_EPOCH.checked_add(Duration::new(secs.unsigned_abs(), nanos))
            } else {
                UNIX_EPOCH.checked_sub(Duration::new(secs.unsigned_abs(), 0))
            };
            let Some(time) = time else { continue };
            let value = Session { user: "p".into(), id: id.clone(), expires: time };
            let result = value.put(&db).await;
            // The floor of the instant, in seconds.
            if (0..=MAX_EXPIRY_SECS).contains(&secs) {
                result?;
                let read = Session::get(&db, "p", &id).include_expired().await?.expect("stored");
                assert_eq!(read.expires, at(secs));
                assert_eq!(stored(&db, "USER#p", &format!("SESSION#{id}")).await, Some(n(secs)));
            } else {
                let err = result.unwrap_err();
                assert!(
                    matches!(err, Error::InvalidRequest { problem: RequestProblem::ExpiryOutOfRange { seconds, .. }, .. } if seconds == secs),
                    "{secs}: {err:?}"
                );
                assert!(raw(&db, "USER#p", &format!("SESSION#{id}")).await.is_none());
            }
        }
        Ok(())
    }

    fn instant() -> impl Strategy<Value = (i64, u32)> {
        let secs = prop_oneof![
            0..=MAX_EXPIRY_SECS,
            Just(0i64),
            Just(MAX_EXPIRY_SECS),
            Just(MAX_EXPIRY_SECS + 1),
            (MAX_EXPIRY_SECS + 1)..=i64::MAX,
            i64::MIN..0,
            Just(-1i64),
        ];
        (secs, 0u32..1_000_000_000)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn prop_any_expiry_round_trips_or_is_refused(instants in prop::collection::vec(instant(), 1..6)) {
            run(check(instants)).expect("expiry writes");
        }
    }
}

// ---- trees and edges ----------------------------------------------------------------------

#[derive(Table)]
#[table(name = "expiring", ttl = "expires", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct Expiring;

/// A path-tree node that may expire.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Expiring, pk = "SPACE#<space>", sk = "PAGE#<path>", ttl = expires)]
#[hierarchy(path = path, index = gsi1)]
struct Page {
    space: String,
    path: ddb_model::TreePath,
    expires: Option<u64>,
}

/// An edge that expires, with a materialised inverse.
#[derive(Entity, ddb_model::Edge, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Expiring, pk = "U#<from>", sk = "GRANTS#<to>", ttl = expires)]
#[edge(from = from, to = to, inverse(pk = "U#<to>", sk = "GRANTED_BY#<from>"))]
struct Grant {
    from: String,
    to: String,
    expires: i64,
}

#[tokio::test]
async fn tree_and_edge_writes_store_seconds() -> Result<(), Error> {
    let db = support::db::<Expiring>().await;
    let secs = |item: Option<ddb_model::Item>| item.expect("stored").remove("expires");
    let pages = Page::tree(&db, "s");
    let page = |p: &str, e: Option<u64>| Page {
        space: "s".into(),
        path: p.parse().expect("path"),
        expires: e,
    };
    pages.insert(&page("a", Some(2_000_000_001))).await?;
    pages.bulk_load([page("a/b", Some(2_000_000_002)), page("a/c", None)]).await?;
    // Each node's stored expiry, by its path (the keys encode the path their own way).
    let mut stored: Vec<(String, Option<AttributeValue>)> = db
        .scan_items()
        .await?
        .into_iter()
        .filter_map(|mut item| match item.remove("path") {
            Some(AttributeValue::S(path)) => Some((path, item.remove("expires"))),
            _ => None,
        })
        .collect();
    stored.sort_by(|a, b| a.0.cmp(&b.0));
    let expected = [
        ("a".to_owned(), Some(n(2_000_000_001u64))),
        ("a/b".to_owned(), Some(n(2_000_000_002u64))),
        ("a/c".to_owned(), None),
    ];
    assert_eq!(stored, expected);
    let read = pages.get(&"a/b".parse().expect("path")).await?;
    assert_eq!(read, Some(page("a/b", Some(2_000_000_002))));

    let grants = Grant::edges(&db);
    grants.link(&Grant { from: "a".into(), to: "b".into(), expires: T }).await?;
    for (pk, sk) in [("U#a", "GRANTS#b"), ("U#b", "GRANTED_BY#a")] {
        assert_eq!(secs(raw(&db, pk, sk).await), Some(n(T)), "{pk}");
    }
    grants.update("a", "b").set(Grant::EXPIRES, T + 9).await?;
    for (pk, sk) in [("U#a", "GRANTS#b"), ("U#b", "GRANTED_BY#a")] {
        assert_eq!(secs(raw(&db, pk, sk).await), Some(n(T + 9)), "{pk}");
    }
    Ok(())
}

/// A collection query hides expired items of every type (the service expires any item with
/// a Number in the table's attribute); `delete_all` deletes them, hidden or not.
#[tokio::test]
async fn collections_hide_expired_items_and_delete_all_deletes_them() -> Result<(), Error> {
    let clock = Clock::new(T);
    let db = clock.install(support::db::<Sessions>().await);
    session("old", T - 1).put(&db).await?;
    session("new", T + 10).put(&db).await?;
    Token { user: "ann".into(), id: "gone".into(), until: Some(chrono_at(T - 5)) }.put(&db).await?;
    Token { user: "ann".into(), id: "kept".into(), until: None }.put(&db).await?;

    db.reset_requests();
    let items: Vec<UserItems> =
        Session::partition(&db, "ann").collection::<UserItems>().all().await?;
    assert_eq!(
        items,
        [
            UserItems::Session(session("new", T + 10)),
            UserItems::Token(Token { user: "ann".into(), id: "kept".into(), until: None }),
        ]
    );
    assert_eq!(db.requests().get(Op::Query), 1, "filtered by the service");
    let all: Vec<UserItems> =
        Session::partition(&db, "ann").collection::<UserItems>().include_expired().all().await?;
    assert_eq!(all.len(), 4);

    // The expired session is hidden from the query, and deleted by its delete_all.
    assert_eq!(Session::query(&db, "ann").delete_all().await?, 2);
    assert!(raw(&db, "USER#ann", "SESSION#old").await.is_none());
    assert_eq!(Session::query(&db, "ann").include_expired().count().await?, 0);
    assert_eq!(Token::query(&db, "ann").include_expired().count().await?, 2, "tokens stay");
    Ok(())
}
