//! Per-placeholder key formats on a table that ElectroDB wrote: keys lower-cased whole,
//! integers unpadded, datetimes in ISO 8601 to the millisecond. Items are planted with raw
//! SDK puts in exactly ElectroDB's text, then read, queried and updated through the typed API;
//! items created through it carry the keys ElectroDB writes.

use chrono::{DateTime, TimeZone, Utc};
use ddb_model::error::KeyParseReason;
use ddb_model::prelude::*;
use ddb_model::{Item, KeyPart};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use crate::support::{self, n, s};

/// ElectroDB's table: `pk`/`sk`, two indexes, the entity's name in `__edb_e__`.
#[derive(Table)]
#[table(
    name = "taskapp",
    pk = "pk",
    sk = "sk",
    type_attr = "__edb_e__",
    gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
    gsi(name = "gsi2", pk = "gsi2pk", sk = "gsi2sk")
)]
struct TaskApp;

/// ElectroDB's `task` entity of service `taskapp`, version 1, with its keys as ElectroDB
/// composes them (lower case throughout).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = TaskApp, name = "task", pk = "$taskapp#taskid_<id:lower>", sk = "$task_1")]
#[index(gsi1, pk = "$taskapp#project_<project:lower>", sk = "$task_1#n_<n:unpadded>")]
#[index(
    gsi2,
    pk = "$taskapp#status_<status:lower>",
    sk = "$task_1#due_<due:iso8601(ms):lower>#taskid_<id:lower>"
)]
struct Task {
    id: String,
    project: String,
    n: u32,
    status: String,
    due: DateTime<Utc>,
    title: String,
}

fn due(day: u32, hour: u32, ms: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, day, hour, 0, 0).unwrap()
        + chrono::Duration::milliseconds(i64::from(ms))
}

/// The item ElectroDB 3.9 writes for `task` (its `put`): keys lower-cased, the attributes as
/// given, the two identity attributes.
fn electro(task: &Task) -> Item {
    let iso = task.due.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let id = task.id.to_lowercase();
    let text = [
        ("pk", format!("$taskapp#taskid_{id}")),
        ("sk", "$task_1".to_owned()),
        ("gsi1pk", format!("$taskapp#project_{}", task.project.to_lowercase())),
        ("gsi1sk", format!("$task_1#n_{}", task.n)),
        ("gsi2pk", format!("$taskapp#status_{}", task.status.to_lowercase())),
        ("gsi2sk", format!("$task_1#due_{}#taskid_{id}", iso.to_lowercase())),
        ("id", task.id.clone()),
        ("project", task.project.clone()),
        ("status", task.status.clone()),
        ("due", iso),
        ("title", task.title.clone()),
        ("__edb_e__", "task".to_owned()),
        ("__edb_v__", "1".to_owned()),
    ];
    let mut item: Item = text.into_iter().map(|(k, v)| (k.to_owned(), s(&v))).collect();
    item.insert("n".to_owned(), n(task.n));
    item
}

fn task(id: &str, project: &str, n: u32, status: &str, due: DateTime<Utc>) -> Task {
    Task {
        id: id.into(),
        project: project.into(),
        n,
        status: status.into(),
        due,
        title: format!("task {id}"),
    }
}

#[tokio::test]
async fn electrodb_keys_read_query_and_write_back() -> Result<(), Error> {
    let db = support::db::<TaskApp>().await;
    let tasks = [
        task("Task-7", "Alpha", 5, "open", due(5, 10, 0)),
        task("Task-8", "Alpha", 50, "open", due(5, 11, 250)),
        task("Task-9", "Alpha", 9, "open", due(6, 9, 999)),
        task("Task-10", "Beta", 5, "done", due(5, 10, 0)),
    ];
    for t in &tasks {
        support::put_raw(&db, electro(t)).await;
    }

    // Gets: the key is written lower case, the field keeps the case of its own attribute.
    assert_eq!(Task::get(&db, "Task-7").await?, Some(tasks[0].clone()));
    assert_eq!(Task::get(&db, "TASK-7").await?, Some(tasks[0].clone()), "one key, any case");
    // Reading the key back gives the key's text: lower case.
    assert_eq!(Task::parse_key("$taskapp#taskid_task-7", "$task_1")?, ("task-7".to_owned(),));

    // Unpadded integers: `5` is not a prefix match of `50`.
    assert_eq!(Task::query_gsi1(&db, "ALPHA").n(5u32).all().await?, [tasks[0].clone()]);
    assert_eq!(Task::query_gsi1(&db, "alpha").n(50u32).all().await?, [tasks[1].clone()]);
    let mut by_project = Task::partition_gsi1(&db, "alpha").all().await?;
    by_project.sort_by_key(|t| t.n);
    assert_eq!(by_project, [tasks[0].clone(), tasks[2].clone(), tasks[1].clone()]);

    // ISO 8601 datetimes keep their order: ranges and prefixes on the typed values.
    let open = Task::query_gsi2(&db, "open");
    assert_eq!(
        open.due_between(due(5, 10, 0), due(5, 11, 250)).all().await?,
        [tasks[0].clone(), tasks[1].clone()]
    );
    let open = Task::query_gsi2(&db, "open");
    assert_eq!(open.due_gt(due(5, 11, 250)).all().await?, [tasks[2].clone()]);
    let open = Task::query_gsi2(&db, "OPEN");
    assert_eq!(
        open.due_begins_with("2026-01-05T1").all().await?,
        [tasks[0].clone(), tasks[1].clone()],
        "a prefix is written in the placeholder's case"
    );
    let exact = Task::query_gsi2(&db, "done").due(due(5, 10, 0)).id("task-10").all().await?;
    assert_eq!(exact, [tasks[3].clone()]);

    // Created through the typed API: the item ElectroDB writes, key for key.
    let new = task("Task-11", "Beta", 12, "Open", due(7, 8, 1));
    new.create(&db).await?;
    let stored = support::raw(&db, "$taskapp#taskid_task-11", "$task_1").await.expect("created");
    let expected = electro(&new);
    for attr in ["pk", "sk", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk", "__edb_e__"] {
        assert_eq!(stored.get(attr), expected.get(attr), "{attr}");
    }
    let open = Task::query_gsi2(&db, "open").due(due(7, 8, 1)).all().await?;
    assert_eq!(open, std::slice::from_ref(&new));

    // An update that moves an index key: the id comes from the primary key's text, written
    // as every key writes it.
    let moved = due(8, 0, 5);
    Task::update(&db, "Task-7").set(Task::STATUS, "Done".to_owned()).set(Task::DUE, moved).await?;
    let stored = support::raw(&db, "$taskapp#taskid_task-7", "$task_1").await.expect("updated");
    assert_eq!(stored.get("gsi2pk"), Some(&s("$taskapp#status_done")));
    assert_eq!(
        stored.get("gsi2sk"),
        Some(&s("$task_1#due_2026-01-08t00:00:00.005z#taskid_task-7"))
    );
    assert_eq!(Task::query_gsi2(&db, "done").due(moved).all().await?.len(), 1);
    Ok(())
}

/// A text the format does not write is refused, never read as another value: an upper-case
/// key text under `:lower`, a padded or out-of-range integer, a datetime in another precision
/// or case.
#[test]
fn texts_a_format_does_not_write_are_refused() {
    let at = "at_2026-01-05T10:00:00.000000007Z|X";
    let cases = [
        Task::parse_key("$taskapp#taskid_Task-1", "$task_1").map(drop),
        Counter::parse_key("c_05#1", at).map(drop),
        Counter::parse_key("c_-0#1", at).map(drop),
        Counter::parse_key("c_1#256", at).map(drop),
        Counter::parse_key("c_1#-1", at).map(drop),
        Counter::parse_key("c_+1#1", at).map(drop),
        Counter::parse_key("c_1#1", "at_2026-01-05T10:00:00.000Z|X").map(drop),
        Counter::parse_key("c_1#1", "at_2026-01-05t10:00:00.000000007z|X").map(drop),
        Counter::parse_key("c_1#1", "at_2026-01-05T10:00:00.000000007Z|x").map(drop),
        Seconds::parse_key("t_2026-01-05T10:00:00.000Z", "x").map(drop),
    ];
    for (i, result) in cases.into_iter().enumerate() {
        match result {
            Err(Error::KeyParse { reason, .. }) => {
                assert!(matches!(*reason, KeyParseReason::Format { .. }), "case {i}: {reason:?}")
            }
            other => panic!("case {i}: {other:?}"),
        }
    }
    // The texts the formats write read back.
    assert_eq!(Counter::parse_key("c_-5#1", at).map(|k| k.0).ok(), Some(-5));
    // A date the calendar lacks has the format's layout: the type refuses it.
    let bad_date = Seconds::parse_key("t_2026-02-30T10:00:00Z", "x").unwrap_err();
    assert!(matches!(bad_date, Error::KeyParse { .. }), "{bad_date:?}");
}

/// Formats in the primary key, read back from it: unpadded integers of both signs, ISO 8601
/// datetimes at every precision.
#[derive(Table)]
#[table(name = "formats", pk = "pk", sk = "sk")]
struct Formats;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Formats, pk = "c_<a:unpadded>#<b:unpadded>", sk = "at_<at:iso8601(ns)>|<s:upper>")]
struct Counter {
    #[entity(from_key)]
    a: i64,
    #[entity(from_key)]
    b: u8,
    #[entity(from_key)]
    at: DateTime<Utc>,
    s: String,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Formats, pk = "t_<at:iso8601(s)>", sk = "x")]
struct Seconds {
    at: DateTime<Utc>,
}

fn datetime() -> impl Strategy<Value = DateTime<Utc>> {
    (0i64..253_402_300_800, 0u32..1_000_000_000)
        .prop_map(|(secs, nanos)| DateTime::from_timestamp(secs, nanos).unwrap_or_default())
}

/// Written in the peers' text, read back as the value (the upper case is the key's), on the
/// service: arbitrary integers of both signs and datetimes of years 0 to 9999.
#[test]
fn formatted_keys_round_trip_on_the_service() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let db = rt.block_on(support::db::<Formats>());
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let strategy = (any::<i64>(), any::<u8>(), datetime(), "[a-z#%é]{1,6}");
    let result = runner.run(&strategy, |(a, b, at, s)| rt.block_on(case(&db, a, b, at, s)));
    if let Err(e) = result {
        panic!("{e}");
    }
}

async fn case(
    db: &Db<Formats>,
    a: i64,
    b: u8,
    at: DateTime<Utc>,
    s: String,
) -> Result<(), TestCaseError> {
    let c = Counter { a, b, at, s: s.clone() };
    c.put(db).await.unwrap();
    let key = c.key();
    prop_assert_eq!(key.pk(), format!("c_{a}#{b}"));
    let iso = at.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true);
    let mut upper = String::new();
    ddb_model::key::escape_into(&s.to_uppercase(), &mut upper);
    let sk = format!("at_{iso}|{upper}");
    prop_assert_eq!(key.sk(), Some(sk.as_str()));
    let (pk, sk) = (key.pk(), key.sk().unwrap_or_default());
    // The upper-cased text reads back as itself: a key field's value as the key holds it.
    prop_assert_eq!(Counter::parse_key(pk, sk).unwrap(), (a, b, at, s.to_uppercase()));
    prop_assert_eq!(Counter::get(db, a, b, at, &s).await.unwrap(), Some(c.clone()));
    prop_assert_eq!(Counter::get(db, a, b, at, s.to_uppercase()).await.unwrap(), Some(c));
    // Seconds: the key holds the value cut to the second; the field keeps it whole.
    let whole = Seconds { at };
    whole.put(db).await.unwrap();
    prop_assert_eq!(Seconds::get(db, at).await.unwrap(), Some(whole.clone()));
    let cut = at.with_nanosecond_zero();
    prop_assert_eq!(Seconds::get(db, cut).await.unwrap(), Some(whole));
    let text = format!("t_{}", cut.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    prop_assert_eq!(Seconds::parse_key(&text, "x").unwrap().0, cut);
    Ok(())
}

trait NanosZero {
    fn with_nanosecond_zero(self) -> Self;
}

impl NanosZero for DateTime<Utc> {
    fn with_nanosecond_zero(self) -> Self {
        chrono::Timelike::with_nanosecond(&self, 0).unwrap_or(self)
    }
}

#[test]
fn key_texts_are_the_peers() {
    assert_eq!(Task::key("Task-7").pk(), "$taskapp#taskid_task-7");
    assert_eq!(due(5, 10, 7).key_text(), "20260105T100000.007000000Z");
}
