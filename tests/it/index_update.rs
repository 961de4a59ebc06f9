//! Updating fields that index keys are made of: the update writes those keys again in the
//! same `UpdateItem`, or refuses before sending when it cannot know the whole new key.

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::chrono::{DateTime, NaiveDate, Utc};
use ddb_model::prelude::*;
use ddb_model::{Item, Op};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use crate::support::{self, s};

#[derive(Table)]
#[table(
    name = "index-update",
    gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
    gsi(name = "gsi2", pk = "gsi2pk", sk = "gsi2sk"),
    gsi(name = "gsi3", pk = "gsi3pk", sk = "gsi3sk")
)]
struct App;

/// A member of an organisation: listed by organisation and name (every member), by
/// nickname (members that have one), and among the active members (while `active`).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "USER#<id>", sk = "PROFILE")]
#[index(gsi1, pk = "ORG#<org>", sk = "USER#<name>#<id>")]
#[index(gsi2, pk = "NICK#<nick>", sk = "USER#<id>")]
#[index(gsi3, pk = "ACTIVE", sk = "USER#<id>", when = active)]
struct Member {
    id: String,
    org: String,
    name: String,
    nick: Option<String>,
    active: bool,
    score: u32,
    email: String,
}

/// A repository listed by its owner, the most recently updated first: touching `updated`
/// moves it in the owner's list (the owner comes from the key).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "REPO#<owner>#<name>", sk = "REPO")]
#[index(gsi1, pk = "ACCOUNT#<owner>", sk = "#<updated>")]
struct Repo {
    owner: String,
    name: String,
    updated: u64,
}

/// An index key with a verbatim part, and a number in an index key.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "DOC#<id>", sk = "DOC")]
#[index(gsi1, pk = "<path:verbatim>/", sk = "RANK#<rank>")]
struct Doc {
    id: String,
    path: String,
    rank: u32,
}

/// Two keys on one index, chosen by bool fields: an update of either field decides again.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "TASK#<id>", sk = "TASK")]
#[index(gsi1, pk = "OPEN", sk = "TASK#<id>", when = open, query = open_tasks)]
#[index(gsi1, pk = "DONE#<by>", sk = "TASK#<id>", when = done, query = done_tasks)]
struct Task {
    id: String,
    by: String,
    open: bool,
    done: bool,
}

/// Index keys computed from fields: orders by day (from their timestamp) and by brand,
/// matched whatever the brand's case.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "ORDER#<id>", sk = "ORDER")]
#[index(gsi1, pk = "DAY#<day>", sk = "<created_at>", computed(day: NaiveDate = day_of(created_at)))]
#[index(gsi2, pk = "BRAND#<brand_key>", sk = "<total>#<id>", computed(brand_key: String = Self::key_of(brand)))]
struct Order {
    id: String,
    created_at: DateTime<Utc>,
    brand: String,
    total: u32,
}

fn day_of(at: &DateTime<Utc>) -> NaiveDate {
    at.date_naive()
}

impl Order {
    fn key_of(brand: &str) -> String {
        brand.to_uppercase()
    }
}

fn order(id: &str, at: &str, brand: &str, total: u32) -> Order {
    Order { id: id.into(), created_at: at.parse().expect("time"), brand: brand.into(), total }
}

/// A task laid out as ElectroDB lays it out: its status index (gsi2) has the status alone
/// in its partition key and the due date and id in its sort key, so a change of status
/// rewrites only `gsi2pk`. gsi1's sort key is made of two fields (`team` and `rank`), and
/// gsi3 is sparse: a task is in it while it has a tag.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "$taskapp#taskid_<id>", sk = "$task_1")]
#[index(gsi1, pk = "$taskapp#owner_<owner>", sk = "$task_1#team_<team>#rank_<rank>")]
#[index(gsi2, pk = "$taskapp#status_<status>", sk = "$task_1#due_<due>#taskid_<id>")]
#[index(gsi3, pk = "$taskapp#tag_<tag>", sk = "$task_1#due_<due>")]
struct Ticket {
    id: String,
    status: String,
    due: String,
    owner: String,
    team: String,
    rank: u32,
    tag: Option<String>,
    note: String,
}

fn ticket(id: &str) -> Ticket {
    Ticket {
        id: id.into(),
        status: "open".into(),
        due: "2026-01-05".into(),
        owner: "ann".into(),
        team: "blue".into(),
        rank: 1,
        tag: None,
        note: String::new(),
    }
}

async fn stored_ticket(db: &Db<App>, id: &str) -> Item {
    let key = Ticket::key(id);
    support::raw(db, key.pk(), key.sk().unwrap_or_default()).await.expect("stored")
}

fn ann() -> Member {
    Member {
        id: "ann".into(),
        org: "acme".into(),
        name: "Ann".into(),
        nick: Some("annie".into()),
        active: true,
        score: 1,
        email: "ann@example.com".into(),
    }
}

const INDEX_ATTRS: [&str; 6] = ["gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk", "gsi3pk", "gsi3sk"];

/// The index-key attributes of a stored item.
fn index_attrs(item: &Item) -> Vec<(String, AttributeValue)> {
    INDEX_ATTRS.iter().filter_map(|a| item.get(*a).map(|v| ((*a).to_owned(), v.clone()))).collect()
}

/// The index-key attributes a put of `member` writes.
fn put_index_attrs(member: &Member) -> Vec<(String, AttributeValue)> {
    index_attrs(&ddb_model::entity::to_item(member, None).expect("converts"))
}

async fn stored(db: &Db<App>, id: &str) -> Item {
    support::raw(db, &format!("USER#{id}"), "PROFILE").await.expect("stored")
}

#[tokio::test]
async fn setting_every_field_of_an_index_key_rewrites_it_in_one_request() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut member = ann();
    member.create(&db).await?;

    let sent = db.requests().total();
    let updated =
        Member::update(&db, "ann").set(Member::ORG, "globex").set(Member::NAME, "Ann B").await?;
    assert_eq!(db.requests().total() - sent, 1);
    member.org = "globex".into();
    member.name = "Ann B".into();
    assert_eq!(updated, member);
    assert_eq!(index_attrs(&stored(&db, "ann").await), put_index_attrs(&member));
    assert_eq!(
        index_attrs(&stored(&db, "ann").await)[..2],
        [("gsi1pk".to_owned(), s("ORG#globex")), ("gsi1sk".to_owned(), s("USER#Ann B#ann")),]
    );
    // Found under the new key only (DynamoDB Local's indexes are updated synchronously).
    assert_eq!(Member::query_gsi1(&db, "globex").all().await?, [member.clone()]);
    assert!(Member::query_gsi1(&db, "acme").all().await?.is_empty());

    // A key made of a primary-key field and one other: "touch" in one request.
    let repos = [("ann", "a", 1), ("ann", "b", 2), ("ann", "c", 3)];
    for (owner, name, updated) in repos {
        Repo { owner: owner.into(), name: name.into(), updated }.create(&db).await?;
    }
    let sent = db.requests().total();
    Repo::update(&db, "ann", "a").set(Repo::UPDATED, 10u64).await?;
    assert_eq!(db.requests().total() - sent, 1);
    let newest: Vec<String> =
        Repo::query_gsi1(&db, "ann").reverse().all().await?.into_iter().map(|r| r.name).collect();
    assert_eq!(newest, ["a", "c", "b"]);
    Ok(())
}

#[tokio::test]
async fn an_update_that_leaves_out_part_of_a_key_is_refused_before_sending() -> Result<(), Error> {
    let db = support::db::<App>().await;
    ann().create(&db).await?;
    ticket("t").create(&db).await?;
    let before = support::snapshot(&db).await;
    let sent = db.requests().total();

    // `team` alone: gsi1's sort key also holds `rank`, which one UpdateItem cannot read.
    let err = Ticket::update(&db, "t").set(Ticket::TEAM, "red").await.unwrap_err();
    match &err {
        Error::InvalidRequest {
            path,
            problem: RequestProblem::IndexKeyIncomplete { index: "gsi1", field: "rank" },
        } => assert_eq!(path, "rank"),
        other => panic!("unexpected {other:?}"),
    }
    assert!(err.to_string().contains("set `rank` in the same update"), "{err}");
    // A value for the `Option` of gsi3's partition key may put the item into the index,
    // which takes both attributes: the sort key's `due` too.
    let err = Ticket::update(&db, "t").set(Ticket::TAG, Some("x".to_owned())).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidRequest {
                problem: RequestProblem::IndexKeyIncomplete { index: "gsi3", field: "due" },
                ..
            }
        ),
        "{err:?}"
    );
    let err = Ticket::update(&db, "t").set(Ticket::TEAM, "red").add(Ticket::RANK, 1u32).await;
    assert!(
        matches!(
            err,
            Err(Error::InvalidRequest {
                problem: RequestProblem::IndexKeyNotSet { index: "gsi1", field: "rank" },
                ..
            })
        ),
        "{err:?}"
    );

    // A number added, not set: the new key is unknown.
    let err = Doc::update(&db, "d").add(Doc::RANK, 1u32).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidRequest {
                problem: RequestProblem::IndexKeyNotSet { index: "gsi1", field: "rank" },
                ..
            }
        ),
        "{err:?}"
    );
    let err = Member::update(&db, "ann")
        .set_if_not_exists(Member::NICK, Some("x".to_owned()))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::InvalidRequest { problem: RequestProblem::IndexKeyNotSet { .. }, .. }),
        "{err:?}"
    );
    // The same in a transaction: refused as a whole.
    let err = db
        .transaction()
        .update(Ticket::key("t"), |u| u.set(Ticket::RANK, 3u32))
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::InvalidAction { action: 0, source }
                if matches!(**source, Error::InvalidRequest {
                    problem: RequestProblem::IndexKeyIncomplete { .. },
                    ..
                })
        ),
        "{err:?}"
    );
    // A verbatim part that would read back differently, and a key over the size limit.
    let err = Doc::update(&db, "d").set(Doc::PATH, "a/b").set(Doc::RANK, 1u32).await.unwrap_err();
    assert!(
        matches!(err, Error::InvalidKey { problem: KeyProblem::Ambiguous { .. }, .. }),
        "{err:?}"
    );
    let err = Member::update(&db, "ann")
        .set(Member::ORG, "o".repeat(3000))
        .set(Member::NAME, "n")
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::InvalidKey { problem: KeyProblem::TooLong { .. }, .. }),
        "{err:?}"
    );

    assert_eq!(db.requests().total(), sent, "nothing was sent");
    assert_eq!(support::snapshot(&db).await, before);
    Ok(())
}

#[tokio::test]
async fn an_update_moves_an_item_in_and_out_of_sparse_indexes() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut member = ann();
    member.create(&db).await?;

    // `nick` removed: out of gsi2; `active` false: out of gsi3; one request.
    let sent = db.requests().total();
    Member::update(&db, "ann").remove(Member::NICK).set(Member::ACTIVE, false).await?;
    assert_eq!(db.requests().total() - sent, 1);
    member.nick = None;
    member.active = false;
    let raw = stored(&db, "ann").await;
    assert_eq!(index_attrs(&raw), put_index_attrs(&member));
    assert!(!raw.contains_key("gsi2pk") && !raw.contains_key("gsi3pk"), "{raw:?}");
    assert!(Member::query_gsi3(&db).all().await?.is_empty());

    // Back in: a nick set to `Some`, `active` true (gsi3's key holds only the id).
    Member::update(&db, "ann")
        .set(Member::NICK, Some("a2".to_owned()))
        .set(Member::ACTIVE, true)
        .await?;
    member.nick = Some("a2".into());
    member.active = true;
    assert_eq!(index_attrs(&stored(&db, "ann").await), put_index_attrs(&member));
    assert_eq!(Member::query_gsi2(&db, "a2").all().await?, [member.clone()]);
    assert_eq!(Member::query_gsi3(&db).all().await?, [member.clone()]);

    // `Some` set to `None` is a removal too.
    Member::update(&db, "ann").set(Member::NICK, None::<String>).await?;
    member.nick = None;
    assert_eq!(index_attrs(&stored(&db, "ann").await), put_index_attrs(&member));

    // Several keys on one index: both `when` fields decide, in one update.
    let task = Task { id: "t".into(), by: String::new(), open: true, done: false };
    task.create(&db).await?;
    assert_eq!(Task::query_open_tasks(&db).all().await?.len(), 1);
    let err = Task::update(&db, "t").set(Task::OPEN, false).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidRequest {
                problem: RequestProblem::IndexKeyIncomplete { index: "gsi1", field: "done" },
                ..
            }
        ),
        "{err:?}"
    );
    Task::update(&db, "t")
        .set(Task::OPEN, false)
        .set(Task::DONE, true)
        .set(Task::BY, "bob")
        .await?;
    assert!(Task::query_open_tasks(&db).all().await?.is_empty());
    assert_eq!(Task::query_done_tasks(&db, "bob").all().await?.len(), 1);
    let err = Task::update(&db, "t")
        .set(Task::OPEN, true)
        .set(Task::DONE, true)
        .set(Task::BY, "bob")
        .await
        .unwrap_err();
    assert!(matches!(err, Error::AttributeCollision { .. }), "{err:?}");
    Task::update(&db, "t").set(Task::OPEN, false).set(Task::DONE, false).await?;
    let raw = support::raw(&db, "TASK#t", "TASK").await.expect("stored");
    assert!(!raw.contains_key("gsi1pk"), "in neither key: out of the index: {raw:?}");
    Ok(())
}

#[tokio::test]
async fn transactions_and_upserts_rewrite_index_keys_too() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut member = ann();
    member.create(&db).await?;
    db.transaction()
        .update(Member::key("ann"), |u| u.set(Member::ORG, "initech").set(Member::NAME, "A"))
        .send()
        .await?;
    member.org = "initech".into();
    member.name = "A".into();
    assert_eq!(index_attrs(&stored(&db, "ann").await), put_index_attrs(&member));

    // An upsert of a missing item writes the keys of what it sets; of an existing one, the
    // keys follow the fields it sets (not kept as `if_not_exists` would).
    let created = Member::update(&db, "bo")
        .upsert()
        .set(Member::ORG, "acme")
        .set(Member::NAME, "Bo")
        .set(Member::ACTIVE, false)
        .set(Member::SCORE, 0u32)
        .set(Member::EMAIL, "bo@example.com")
        .await?;
    assert_eq!(index_attrs(&stored(&db, "bo").await), put_index_attrs(&created));
    let moved = Member::update(&db, "bo")
        .upsert()
        .set(Member::ORG, "globex")
        .set(Member::NAME, "Bo")
        .set_if_not_exists(Member::SCORE, 0u32)
        .set_if_not_exists(Member::EMAIL, "x")
        .set(Member::ACTIVE, false)
        .await?;
    assert_eq!((moved.org.as_str(), moved.active), ("globex", false));
    assert_eq!(index_attrs(&stored(&db, "bo").await), put_index_attrs(&moved));
    // Defaults given with `set_if_not_exists` on an item that is created: its keys are the
    // keys of those values; on one that exists, the stored fields and keys stay.
    // A sparse index's membership given only as a default cannot be decided in one request:
    // an existing member out of gsi3 would be put in.
    let sent = db.requests().total();
    let err = Member::update(&db, "bo")
        .upsert()
        .set_if_not_exists(Member::ORG, "acme")
        .set_if_not_exists(Member::NAME, "Bo")
        .set_if_not_exists(Member::ACTIVE, true)
        .set_if_not_exists(Member::SCORE, 0u32)
        .set_if_not_exists(Member::EMAIL, "bo@example.com")
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidRequest {
                problem: RequestProblem::UpsertSparseIndex { index: "gsi3" },
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(db.requests().total(), sent);
    assert!(!stored(&db, "bo").await.contains_key("gsi3pk"));
    let carl = Member::update(&db, "carl")
        .upsert()
        .set_if_not_exists(Member::ORG, "acme")
        .set_if_not_exists(Member::NAME, "Carl")
        .set(Member::ACTIVE, true)
        .set_if_not_exists(Member::SCORE, 0u32)
        .set_if_not_exists(Member::EMAIL, "c@example.com")
        .await?;
    assert_eq!(index_attrs(&stored(&db, "carl").await), put_index_attrs(&carl));
    let again = Member::update(&db, "carl")
        .upsert()
        .set_if_not_exists(Member::ORG, "other")
        .set_if_not_exists(Member::NAME, "Other")
        .set(Member::ACTIVE, true)
        .set_if_not_exists(Member::SCORE, 0u32)
        .set_if_not_exists(Member::EMAIL, "c@example.com")
        .await?;
    assert_eq!(again, carl);
    assert_eq!(index_attrs(&stored(&db, "carl").await), put_index_attrs(&carl));
    // A key attribute given as a value is written as it says; the other one, given as a
    // default, is kept by an existing item (and written by a created one).
    let moved = Member::update(&db, "carl")
        .upsert()
        .set(Member::ORG, "x")
        .set_if_not_exists(Member::NAME, "y")
        .set(Member::ACTIVE, true)
        .set_if_not_exists(Member::SCORE, 0u32)
        .set_if_not_exists(Member::EMAIL, "c@example.com")
        .await?;
    assert_eq!((moved.org.as_str(), moved.name.as_str()), ("x", "Carl"));
    assert_eq!(index_attrs(&stored(&db, "carl").await), put_index_attrs(&moved));
    let dan = Member::update(&db, "dan")
        .upsert()
        .set(Member::ORG, "x")
        .set_if_not_exists(Member::NAME, "Dan")
        .set(Member::ACTIVE, false)
        .set_if_not_exists(Member::SCORE, 0u32)
        .set_if_not_exists(Member::EMAIL, "d@example.com")
        .await?;
    assert_eq!(index_attrs(&stored(&db, "dan").await), put_index_attrs(&dan));
    // One attribute given partly as a value and partly as a default cannot be known.
    let err = Ticket::update(&db, "t9")
        .upsert()
        .set(Ticket::TEAM, "red")
        .set_if_not_exists(Ticket::RANK, 1u32)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidRequest {
                problem: RequestProblem::IndexKeyIncomplete { index: "gsi1", field: "rank" },
                ..
            }
        ),
        "{err:?}"
    );
    Ok(())
}

/// One update of a random subset of the member's fields.
#[derive(Debug, Clone)]
struct Change {
    org: Option<String>,
    name: Option<String>,
    nick: Option<Option<String>>,
    active: Option<bool>,
    email: Option<String>,
}

fn change() -> impl Strategy<Value = Change> {
    // Any text: separators, escapes, all of Unicode, the empty string.
    let text = || "(\\PC{0,6}|[#%:/~|]{0,3})";
    (
        proptest::option::of(text()),
        proptest::option::of(text()),
        proptest::option::of(proptest::option::of(text())),
        proptest::option::of(any::<bool>()),
        proptest::option::of(text()),
    )
        .prop_map(|(org, name, nick, active, email)| Change { org, name, nick, active, email })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("DDB_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12)
    ))]

    /// Against a model: after every update the stored index keys are exactly those a put of
    /// the model's value would write, and no update is refused: each key attribute of
    /// gsi1 and gsi2 is made of one field (and key fields), and gsi3 holds only key fields.
    #[test]
    fn updated_index_keys_are_the_keys_a_put_writes(changes in proptest::collection::vec(change(), 1..12)) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async {
            let db = support::db::<App>().await;
            let mut model = ann();
            model.create(&db).await.expect("created");
            for c in changes {
                let mut update = Member::update(&db, "ann");
                let mut next = model.clone();
                if let Some(v) = &c.org { update = update.set(Member::ORG, v); next.org = v.clone(); }
                if let Some(v) = &c.name { update = update.set(Member::NAME, v); next.name = v.clone(); }
                match &c.nick {
                    Some(None) => { update = update.remove(Member::NICK); next.nick = None; }
                    Some(Some(v)) => { update = update.set(Member::NICK, Some(v.clone())); next.nick = Some(v.clone()); }
                    None => {}
                }
                if let Some(v) = c.active { update = update.set(Member::ACTIVE, v); next.active = v; }
                if let Some(v) = &c.email { update = update.set(Member::EMAIL, v); next.email = v.clone(); }
                let any = c.org.is_some() || c.name.is_some() || c.nick.is_some() || c.active.is_some() || c.email.is_some();
                let sent = db.requests().total();
                let result = update.await;
                match result {
                    Ok(member) => {
                        prop_assert!(any, "accepted: {c:?}");
                        prop_assert_eq!(db.requests().total() - sent, 1);
                        prop_assert_eq!(&member, &next);
                        model = next;
                    }
                    Err(Error::InvalidRequest { problem: RequestProblem::EmptyUpdate, .. }) => prop_assert!(!any),
                    Err(e) => prop_assert!(false, "unexpected {e:?} for {c:?}"),
                }
                let raw = stored(&db, "ann").await;
                prop_assert_eq!(index_attrs(&raw), put_index_attrs(&model));
                prop_assert_eq!(Member::get(&db, "ann").await.expect("read"), Some(model.clone()));
            }
            Ok(())
        })?;
    }
}

#[tokio::test]
async fn computed_index_keys_are_written_queried_and_follow_their_fields() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let orders = [
        order("a", "2026-03-01T09:00:00Z", "Acme", 30),
        order("b", "2026-03-01T23:59:59Z", "acme", 10),
        order("c", "2026-03-02T00:00:00Z", "ACME", 20),
        order("d", "2026-03-02T08:00:00Z", "Globex", 5),
    ];
    for o in &orders {
        o.create(&db).await?;
    }
    let raw = support::raw(&db, "ORDER#a", "ORDER").await.expect("stored");
    assert_eq!(raw.get("gsi1pk"), Some(&s("DAY#2026-03-01")));
    assert_eq!(raw.get("gsi2pk"), Some(&s("BRAND#ACME")));

    // Queries take the computed type: one request each.
    let day: NaiveDate = "2026-03-01".parse().expect("date");
    let sent = db.requests().total();
    let ids: Vec<String> =
        Order::query_gsi1(&db, day).all().await?.into_iter().map(|o| o.id).collect();
    assert_eq!(ids, ["a", "b"]);
    let ids: Vec<String> =
        Order::query_gsi2(&db, "ACME").all().await?.into_iter().map(|o| o.id).collect();
    assert_eq!(ids, ["b", "c", "a"], "by total");
    assert_eq!(db.requests().total() - sent, 2);

    // An update of the field a computed key is made of writes the key again.
    let moved = Order::update(&db, "b")
        .set(Order::CREATED_AT, "2026-03-02T10:00:00Z".parse::<DateTime<Utc>>().expect("time"))
        .await?;
    let raw = support::raw(&db, "ORDER#b", "ORDER").await.expect("stored");
    assert_eq!(index_attrs(&raw), index_attrs(&ddb_model::entity::to_item(&moved, None)?));
    assert_eq!(raw.get("gsi1pk"), Some(&s("DAY#2026-03-02")));
    // The brand alone: the computed partition key follows it, the sort key stays.
    let moved = Order::update(&db, "b").set(Order::BRAND, "Initech").await?;
    let raw = support::raw(&db, "ORDER#b", "ORDER").await.expect("stored");
    assert_eq!(raw.get("gsi2pk"), Some(&s("BRAND#INITECH")));
    assert_eq!(index_attrs(&raw), index_attrs(&ddb_model::entity::to_item(&moved, None)?));
    let moved =
        Order::update(&db, "b").set(Order::BRAND, "initech").set(Order::TOTAL, 7u32).await?;
    let raw = support::raw(&db, "ORDER#b", "ORDER").await.expect("stored");
    assert_eq!(index_attrs(&raw), index_attrs(&ddb_model::entity::to_item(&moved, None)?));
    assert_eq!(Order::query_gsi2(&db, "INITECH").all().await?, [moved]);
    Ok(())
}

/// Computed index keys of every shape: computed from a field with only key fields beside it
/// (gsi1), computed from a key field beside a field the update sets (gsi2), and computed
/// from a key field and a field together (gsi3).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "SHIFT#<id>", sk = "SHIFT")]
#[index(gsi1, pk = "D#<day>", sk = "A#<id>", computed(day: NaiveDate = day_of_secs(at)))]
#[index(gsi2, pk = "O#<o>", sk = "<at>", computed(o: String = upper(id)))]
#[index(gsi3, pk = "W#<w>", sk = "S", computed(w: String = week_of(id, at)))]
struct Shift {
    id: String,
    at: u64,
    note: String,
}

/// The same with a number for id (zero-padded in keys), as found from outside.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "ONE#<id>", sk = "ONE")]
#[index(gsi1, pk = "D#<day>", sk = "A#<id>", computed(day: NaiveDate = day_of_secs(at)))]
struct One {
    id: u32,
    at: u64,
}

fn day_of_secs(at: &u64) -> NaiveDate {
    i64::try_from(*at)
        .ok()
        .and_then(|s| DateTime::from_timestamp(s, 0))
        .map(|t| t.date_naive())
        .unwrap_or_default()
}

fn upper(id: &str) -> String {
    id.to_uppercase()
}

fn week_of(id: &str, at: &u64) -> String {
    format!("{id}/{}", at / (7 * 86_400))
}

#[tokio::test]
async fn a_computed_key_beside_key_fields_follows_the_field_it_is_computed_from()
-> Result<(), Error> {
    let db = support::db::<App>().await;
    let t0 = 1_578_614_400; // 2020-01-10T00:00:00Z
    One { id: 1, at: t0 }.create(&db).await?;
    let moved = One::update(&db, 1u32).set(One::AT, t0 + 86_400).await?;
    let raw = support::raw(&db, "ONE#0000000001", "ONE").await.expect("stored");
    assert_eq!(raw.get("gsi1pk"), Some(&s("D#2020-01-11")));
    assert_eq!(index_attrs(&raw), index_attrs(&ddb_model::entity::to_item(&moved, None)?));
    let day: NaiveDate = "2020-01-11".parse().expect("date");
    assert_eq!(One::query_gsi1(&db, day).all().await?, [moved]);
    Ok(())
}

#[tokio::test]
async fn a_computed_key_reads_its_key_field_inputs_from_the_primary_key() -> Result<(), Error> {
    let db = support::db::<App>().await;
    Shift { id: "x".into(), at: 1, note: String::new() }.create(&db).await?;
    // gsi2 (`O#<upper(id)>`, `<at>`) and gsi3 (`W#<id>/<week>`) take `id` from the key.
    let sent = db.requests().total();
    let moved = Shift::update(&db, "x").set(Shift::AT, 2 * 7 * 86_400).await?;
    assert_eq!(db.requests().total() - sent, 1, "one UpdateItem");
    let raw = support::raw(&db, "SHIFT#x", "SHIFT").await.expect("stored");
    assert_eq!(raw.get("gsi2pk"), Some(&s("O#X")));
    assert_eq!(raw.get("gsi3pk"), Some(&s("W#x%2F2")), "escaped as in keys");
    assert_eq!(index_attrs(&raw), index_attrs(&ddb_model::entity::to_item(&moved, None)?));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("DDB_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12)
    ))]

    /// Against a model, for computed keys of every shape: after every update the stored
    /// index keys are exactly those a put of the model's value writes.
    #[test]
    fn updated_computed_keys_are_the_keys_a_put_writes(
        id in "[a-zA-Z0-9#%:/~|]{1,6}",
        changes in proptest::collection::vec(
            (proptest::option::of(0u64..4_000_000_000), proptest::option::of("\\PC{0,4}")),
            1..8,
        ),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async {
            let db = support::db::<App>().await;
            let mut model = Shift { id: id.clone(), at: 0, note: String::new() };
            model.create(&db).await.expect("created");
            for (at, note) in changes {
                let mut update = Shift::update(&db, id.as_str());
                if let Some(v) = at { update = update.set(Shift::AT, v); model.at = v; }
                if let Some(v) = &note { update = update.set(Shift::NOTE, v); model.note = v.clone(); }
                match update.await {
                    Ok(shift) => prop_assert_eq!(&shift, &model),
                    Err(Error::InvalidRequest { problem: RequestProblem::EmptyUpdate, .. }) => prop_assert!(at.is_none() && note.is_none()),
                    Err(e) => prop_assert!(false, "unexpected {e:?}"),
                }
                let pk = Shift::key(id.as_str());
                let raw = support::raw(&db, pk.pk(), "SHIFT").await.expect("stored");
                prop_assert_eq!(index_attrs(&raw), index_attrs(&ddb_model::entity::to_item(&model, None).expect("converts")));
            }
            Ok(())
        })?;
    }
}

#[tokio::test]
async fn an_update_rewrites_only_the_key_attributes_made_of_what_it_sets() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut task = ticket("t1");
    task.create(&db).await?;
    let put = index_attrs(&stored_ticket(&db, "t1").await);

    // The status alone: one UpdateItem, no read, and `gsi2pk` is the only key written.
    let before = db.requests();
    let updated = Ticket::update(&db, "t1").set(Ticket::STATUS, "done").await?;
    let sent = db.requests() - before;
    assert_eq!((sent.total(), sent.get(Op::UpdateItem)), (1, 1));
    task.status = "done".into();
    assert_eq!(updated, task);
    let raw = stored_ticket(&db, "t1").await;
    assert_eq!(raw.get("gsi2pk"), Some(&s("$taskapp#status_done")));
    assert_eq!(raw.get("gsi2sk"), Some(&s("$task_1#due_2026-01-05#taskid_t1")));
    let mut expected = put.clone();
    expected
        .iter_mut()
        .filter(|(a, _)| a == "gsi2pk")
        .for_each(|(_, v)| *v = s("$taskapp#status_done"));
    assert_eq!(index_attrs(&raw), expected);
    assert_eq!(index_attrs(&raw), index_attrs(&ddb_model::entity::to_item(&task, None)?));
    assert_eq!(Ticket::query_gsi2(&db, "done").all().await?, [task.clone()]);
    assert!(Ticket::query_gsi2(&db, "open").all().await?.is_empty());

    // The due date alone rewrites gsi2's sort key, and gsi3's, although the task has no tag:
    // it stays out of gsi3 (DynamoDB indexes an item only when it has both attributes).
    let before = db.requests();
    Ticket::update(&db, "t1").set(Ticket::DUE, "2026-02-01").await?;
    assert_eq!((db.requests() - before).get(Op::UpdateItem), 1);
    task.due = "2026-02-01".into();
    let raw = stored_ticket(&db, "t1").await;
    assert_eq!(raw.get("gsi2pk"), Some(&s("$taskapp#status_done")));
    assert_eq!(raw.get("gsi2sk"), Some(&s("$task_1#due_2026-02-01#taskid_t1")));
    assert_eq!(raw.get("gsi3sk"), Some(&s("$task_1#due_2026-02-01")));
    assert!(!raw.contains_key("gsi3pk"), "{raw:?}");

    // A tag puts it into gsi3: both attributes are written (the due date set with it).
    Ticket::update(&db, "t1")
        .set(Ticket::TAG, Some("urgent".to_owned()))
        .set(Ticket::DUE, "2026-02-02")
        .await?;
    task.tag = Some("urgent".into());
    task.due = "2026-02-02".into();
    assert_eq!(Ticket::query_gsi3(&db, "urgent").all().await?, [task.clone()]);
    assert_eq!(
        index_attrs(&stored_ticket(&db, "t1").await),
        index_attrs(&ddb_model::entity::to_item(&task, None)?)
    );
    // Removing it takes both out, whatever else is set.
    Ticket::update(&db, "t1").remove(Ticket::TAG).set(Ticket::OWNER, "bo").await?;
    task.tag = None;
    task.owner = "bo".into();
    let raw = stored_ticket(&db, "t1").await;
    assert!(!raw.contains_key("gsi3pk") && !raw.contains_key("gsi3sk"), "{raw:?}");
    assert_eq!(index_attrs(&raw), index_attrs(&ddb_model::entity::to_item(&task, None)?));
    assert_eq!(Ticket::query_gsi1(&db, "bo").all().await?, [task.clone()]);

    // An upsert: the attribute given as a value is rewritten on an existing item, the
    // others are kept; a created item gets every attribute it can compute.
    let upserted = Ticket::update(&db, "t1")
        .upsert()
        .set(Ticket::STATUS, "open")
        .set_if_not_exists(Ticket::DUE, "2030-01-01")
        .set_if_not_exists(Ticket::OWNER, "x")
        .set_if_not_exists(Ticket::TEAM, "x")
        .set_if_not_exists(Ticket::RANK, 9u32)
        .set_if_not_exists(Ticket::NOTE, "")
        .await?;
    task.status = "open".into();
    assert_eq!(upserted, task);
    assert_eq!(
        index_attrs(&stored_ticket(&db, "t1").await),
        index_attrs(&ddb_model::entity::to_item(&task, None)?)
    );
    let created = Ticket::update(&db, "t2")
        .upsert()
        .set(Ticket::STATUS, "open")
        .set_if_not_exists(Ticket::DUE, "2030-01-01")
        .set_if_not_exists(Ticket::OWNER, "x")
        .set_if_not_exists(Ticket::TEAM, "x")
        .set_if_not_exists(Ticket::RANK, 9u32)
        .set_if_not_exists(Ticket::NOTE, "")
        .await?;
    assert_eq!(
        index_attrs(&stored_ticket(&db, "t2").await),
        index_attrs(&ddb_model::entity::to_item(&created, None)?)
    );
    Ok(())
}

/// One update of a random subset of a ticket's fields (`tag`: `Some(None)` removes it).
#[derive(Debug, Clone)]
struct TicketChange {
    status: Option<String>,
    due: Option<String>,
    owner: Option<String>,
    team: Option<String>,
    rank: Option<u32>,
    tag: Option<Option<String>>,
    note: Option<String>,
}

fn ticket_change() -> impl Strategy<Value = TicketChange> {
    let text = || "(\\PC{0,5}|[#%:/~|_$]{0,3})";
    (
        proptest::option::of(text()),
        proptest::option::of(text()),
        proptest::option::of(text()),
        proptest::option::of(text()),
        proptest::option::of(any::<u32>()),
        proptest::option::of(proptest::option::of(text())),
        proptest::option::of(text()),
    )
        .prop_map(|(status, due, owner, team, rank, tag, note)| TicketChange {
            status,
            due,
            owner,
            team,
            rank,
            tag,
            note,
        })
}

/// Every index-key attribute of `task` as a put writes it, with those of gsi3 computed as if
/// it had a tag (what an update writes to an item out of gsi3).
fn full_attrs(task: &Ticket) -> Vec<(String, AttributeValue)> {
    let mut tagged = task.clone();
    tagged.tag.get_or_insert_with(|| "x".to_owned());
    index_attrs(&ddb_model::entity::to_item(&tagged, None).expect("converts"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("DDB_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12)
    ))]

    /// Against a model of the stored attributes: an update rewrites exactly the key
    /// attributes made of what it sets, removes both of gsi3's when it removes the tag and
    /// writes both when it sets one; it is refused, sending nothing, exactly when an attribute
    /// it rewrites holds a field it does not set. The item is in gsi3 exactly while it has a
    /// tag.
    #[test]
    fn each_key_attribute_follows_its_own_fields(
        tag in proptest::option::of("[a-z]{1,3}"),
        changes in proptest::collection::vec(ticket_change(), 1..10),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async {
            let db = support::db::<App>().await;
            let mut model = Ticket { tag, ..ticket("p") };
            model.create(&db).await.expect("created");
            let mut attrs = index_attrs(&stored_ticket(&db, "p").await);
            for c in changes {
                let mut update = Ticket::update(&db, "p");
                let mut next = model.clone();
                if let Some(v) = &c.status { update = update.set(Ticket::STATUS, v); next.status = v.clone(); }
                if let Some(v) = &c.due { update = update.set(Ticket::DUE, v); next.due = v.clone(); }
                if let Some(v) = &c.owner { update = update.set(Ticket::OWNER, v); next.owner = v.clone(); }
                if let Some(v) = &c.team { update = update.set(Ticket::TEAM, v); next.team = v.clone(); }
                if let Some(v) = c.rank { update = update.set(Ticket::RANK, v); next.rank = v; }
                match &c.tag {
                    Some(None) => { update = update.remove(Ticket::TAG); next.tag = None; }
                    Some(Some(v)) => { update = update.set(Ticket::TAG, Some(v.clone())); next.tag = Some(v.clone()); }
                    None => {}
                }
                if let Some(v) = &c.note { update = update.set(Ticket::NOTE, v); next.note = v.clone(); }
                let any = c.status.is_some() || c.due.is_some() || c.owner.is_some() || c.team.is_some()
                    || c.rank.is_some() || c.tag.is_some() || c.note.is_some();
                let refused = c.team.is_some() != c.rank.is_some()
                    || (matches!(c.tag, Some(Some(_))) && c.due.is_none());
                let sent = db.requests().total();
                match update.await {
                    Ok(task) => {
                        prop_assert!(any && !refused, "accepted: {c:?}");
                        prop_assert_eq!(db.requests().total() - sent, 1);
                        prop_assert_eq!(&task, &next);
                        // The attributes the update rewrites, as the model computes them.
                        let full = full_attrs(&next);
                        let mut rewritten: Vec<&str> = Vec::new();
                        if c.owner.is_some() { rewritten.push("gsi1pk"); }
                        if c.team.is_some() { rewritten.push("gsi1sk"); }
                        if c.status.is_some() { rewritten.push("gsi2pk"); }
                        if c.due.is_some() { rewritten.extend(["gsi2sk", "gsi3sk"]); }
                        let mut removed: Vec<&str> = Vec::new();
                        match c.tag {
                            Some(None) => {
                                rewritten.retain(|a| !a.starts_with("gsi3"));
                                removed.extend(["gsi3pk", "gsi3sk"]);
                            }
                            Some(Some(_)) => rewritten.extend(["gsi3pk", "gsi3sk"]),
                            None => {}
                        }
                        attrs.retain(|(a, _)| !rewritten.contains(&a.as_str()) && !removed.contains(&a.as_str()));
                        attrs.extend(full.into_iter().filter(|(a, _)| rewritten.contains(&a.as_str())));
                        attrs.sort_by(|a, b| a.0.cmp(&b.0));
                        model = next;
                    }
                    Err(Error::InvalidRequest { problem: RequestProblem::IndexKeyIncomplete { .. }, .. }) => {
                        prop_assert!(refused, "refused: {c:?}");
                        prop_assert_eq!(db.requests().total(), sent);
                    }
                    Err(Error::InvalidRequest { problem: RequestProblem::EmptyUpdate, .. }) => prop_assert!(!any),
                    Err(e) => prop_assert!(false, "unexpected {e:?} for {c:?}"),
                }
                let raw = stored_ticket(&db, "p").await;
                let mut stored = index_attrs(&raw);
                stored.sort_by(|a, b| a.0.cmp(&b.0));
                prop_assert_eq!(&stored, &attrs);
                let in_gsi3 = raw.contains_key("gsi3pk") && raw.contains_key("gsi3sk");
                prop_assert_eq!(in_gsi3, model.tag.is_some());
                prop_assert_eq!(Ticket::get(&db, "p").await.expect("read"), Some(model.clone()));
            }
            Ok(())
        })?;
    }
}
