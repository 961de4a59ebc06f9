//! Schema versions (`#[entity(schema = 3, upgrade = ..)]`): items of older versions upgraded on
//! every read path and never written back by reads, newer items and failed upgrades as typed
//! errors, partial writes refused on old items, and `Db::migrate` rewriting a table in place
//! (concurrent writers, failures, resume after a cut at every request, request counts).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::error::{CheckpointMismatch, UpgradeError};
use ddb_model::ops::{MigrateCheckpoint, MigrateProgress, SegmentPosition};
use ddb_model::prelude::*;
use ddb_model::stream::{Change, StreamEvent};
use ddb_model::{DefaultTable, Item, Op};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::support::{self, n, s};
use ddb_model::testing::{Faults, Harness};

/// A contact as version-1 code wrote it: one `name`, an optional `tag`; no schema attribute.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "ORG#<org>", sk = "CONTACT#<id>", name = "Contact")]
struct ContactV1 {
    org: String,
    id: String,
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tag: Option<String>,
    #[serde(default)]
    visits: u64,
}

/// Version 3: the name split in two (version 2), the tag a list (version 3). `history` holds
/// the steps the upgrade applied, so that an item upgraded twice would show it.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(
    pk = "ORG#<org>",
    sk = "CONTACT#<id>",
    name = "Contact",
    schema = 3,
    upgrade = upgrade_contact,
    version = rev
)]
struct Contact {
    org: String,
    id: String,
    first: String,
    last: String,
    tags: Vec<String>,
    #[serde(default)]
    history: Vec<u32>,
    #[serde(default)]
    visits: u64,
    #[serde(default)]
    rev: u64,
}

/// Another entity of the same partitions, which no migration of contacts may touch.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "ORG#<org>", sk = "NOTE#<id>")]
struct Note {
    org: String,
    id: String,
    text: String,
}

fn push_history(item: &mut Item, from: u32) {
    let mut history = match item.remove("history") {
        Some(AttributeValue::L(list)) => list,
        _ => Vec::new(),
    };
    history.push(n(from));
    item.insert("history".into(), AttributeValue::L(history));
}

fn upgrade_contact(from: u32, item: &mut Item) -> Result<(), UpgradeError> {
    match from {
        1 => {
            let Some(AttributeValue::S(name)) = item.remove("name") else {
                return Err("a version 1 contact has a `name` string".into());
            };
            let (first, last) = split_name(&name);
            item.insert("first".into(), s(&first));
            item.insert("last".into(), s(&last));
        }
        2 => {
            let tags = match item.remove("tag") {
                Some(AttributeValue::S(tag)) => vec![s(&tag)],
                _ => Vec::new(),
            };
            item.insert("tags".into(), AttributeValue::L(tags));
        }
        _ => return Err(format!("no upgrade from version {from}").into()),
    }
    push_history(item, from);
    Ok(())
}

fn split_name(name: &str) -> (String, String) {
    match name.split_once(' ') {
        Some((first, last)) => (first.to_owned(), last.to_owned()),
        None => (name.to_owned(), String::new()),
    }
}

/// An item as older code stored it, with its expected reading at version 3 (the model).
#[derive(Debug, Clone)]
struct Old {
    version: u32,
    org: String,
    id: String,
    name: String,
    tag: Option<String>,
    visits: u64,
}

impl Old {
    fn v1(org: &str, id: &str, name: &str) -> Old {
        Old { version: 1, org: org.into(), id: id.into(), name: name.into(), tag: None, visits: 0 }
    }

    /// The raw item: version 1 without a schema attribute, version 2 with one.
    fn item(&self) -> Item {
        let key = Contact::key(&self.org, &self.id);
        let mut item = Item::new();
        item.insert("pk".into(), s(key.pk()));
        item.insert("sk".into(), s(key.sk().expect("sk")));
        item.insert("_type".into(), s("Contact"));
        item.insert("org".into(), s(&self.org));
        item.insert("id".into(), s(&self.id));
        item.insert("visits".into(), n(self.visits));
        if let Some(tag) = &self.tag {
            item.insert("tag".into(), s(tag));
        }
        if self.version == 1 {
            item.insert("name".into(), s(&self.name));
        } else {
            let (first, last) = split_name(&self.name);
            item.insert("first".into(), s(&first));
            item.insert("last".into(), s(&last));
            item.insert("history".into(), AttributeValue::L(vec![n(1)]));
            item.insert("_schema".into(), n(self.version));
        }
        item
    }

    /// What reading it at version 3 gives.
    fn model(&self) -> Contact {
        let (first, last) = split_name(&self.name);
        Contact {
            org: self.org.clone(),
            id: self.id.clone(),
            first,
            last,
            tags: self.tag.iter().cloned().collect(),
            history: vec![1, 2],
            visits: self.visits,
            rev: 0,
        }
    }
}

fn contact(org: &str, id: &str) -> Contact {
    Contact {
        org: org.into(),
        id: id.into(),
        first: "Cur".into(),
        last: "Rent".into(),
        tags: vec!["new".into()],
        history: vec![],
        visits: 0,
        rev: 0,
    }
}

async fn plant(db: &Db, items: &[Old]) {
    for old in items {
        support::put_raw(db, old.item()).await;
    }
}

async fn raw_of(db: &Db, org: &str, id: &str) -> Item {
    let key = Contact::key(org, id);
    support::raw(db, key.pk(), key.sk().expect("sk")).await.expect("stored")
}

fn schema_of(item: &Item) -> Option<String> {
    item.get("_schema").and_then(|v| v.as_n().ok()).cloned()
}

#[tokio::test]
async fn every_read_path_upgrades_old_items_without_writing() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let mut v2 = Old::v1("acme", "bo", "Bo Diddley");
    v2.version = 2;
    v2.tag = Some("vip".into());
    let olds = [Old::v1("acme", "al", "Al Green"), v2, Old::v1("acme", "cy", "Cy")];
    plant(&db, &olds).await;
    let mut current = contact("acme", "dee");
    current.create(&db).await?;
    Note { org: "acme".into(), id: "n1".into(), text: "hello".into() }.create(&db).await?;
    let before = support::snapshot(&db).await;
    let expected: Vec<Contact> = olds.iter().map(Old::model).collect();

    db.reset_requests();
    // get
    for (old, want) in olds.iter().zip(&expected) {
        assert_eq!(Contact::get(&db, &old.org, &old.id).await?.as_ref(), Some(want));
    }
    // batch get
    let keys = olds.iter().map(|o| Contact::key(&o.org, &o.id));
    let batch = db.batch_get(keys).consistent().await?;
    assert_eq!(batch, expected.iter().cloned().map(Some).collect::<Vec<_>>());
    // query and scan
    let mut all = expected.clone();
    all.push(current.clone());
    assert_eq!(Contact::query(&db, "acme").all().await?, all);
    let mut scanned = db.scan::<Contact>().segments(3).all().await?;
    scanned.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(scanned, all);
    // transactions' reads
    let mut read = db.transact_get();
    let slots: Vec<_> = olds.iter().map(|o| read.get(Contact::key(&o.org, &o.id))).collect();
    let out = read.await?;
    for (slot, want) in slots.iter().zip(&expected) {
        assert_eq!(out.get(slot)?.as_ref(), Some(want));
    }
    // the stored item a failed write reports
    let err = db.create(&olds[0].model()).await.unwrap_err();
    assert_eq!(err.current::<Contact>().transpose()?.as_ref(), Some(&expected[0]));
    // streams
    let raw = raw_of(&db, "acme", "al").await;
    let event = json!({ "Records": [
        crate::streams::lambda_record("MODIFY", "NEW_AND_OLD_IMAGES", Some(&raw), Some(&raw)),
    ]});
    let event: StreamEvent = serde_json::from_value(event).expect("a Lambda event");
    let changes: Vec<Change<Contacts>> = event.decode().into_iter().collect::<Result<_, _>>()?;
    assert_eq!(changes[0].new_entity(), Some(&Contacts::Contact(expected[0].clone())));

    // Reads wrote nothing: the old items are as they were.
    let spent = db.requests();
    assert!(spent.iter().all(|(op, _)| !op.is_write() || op == Op::PutItem), "{spent}");
    assert_eq!(spent.get(Op::PutItem), 1, "only the refused create: {spent}");
    assert_eq!(support::snapshot(&db).await, before);
    assert_eq!(schema_of(&raw), None);
    Ok(())
}

/// A stream consumer's view of the table.
#[derive(Collection, Debug, PartialEq)]
enum Contacts {
    Contact(Contact),
    Note(Note),
}

#[tokio::test]
async fn writes_store_the_version_and_partial_writes_refuse_old_items() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let mut ann = contact("acme", "ann");
    ann.create(&db).await?;
    assert_eq!(schema_of(&raw_of(&db, "acme", "ann").await).as_deref(), Some("3"));
    let updated = Contact::update(&db, "acme", "ann").set(Contact::VISITS, 5).await?;
    assert_eq!((updated.visits, updated.rev), (5, 2));
    assert_eq!(schema_of(&raw_of(&db, "acme", "ann").await).as_deref(), Some("3"));

    // An update or upsert of an old item would change fields of another shape: refused.
    plant(&db, &[Old::v1("acme", "old", "Ol D")]).await;
    let before = support::snapshot(&db).await;
    let err = Contact::update(&db, "acme", "old").set(Contact::VISITS, 1).await.unwrap_err();
    assert!(
        matches!(err, Error::SchemaOutdated { entity: "Contact", found: 1, current: 3, .. }),
        "{err:?}"
    );
    assert!(err.is_schema_error());
    assert!(err.to_string().contains("migrate"), "{err}");
    let err = Contact::update(&db, "acme", "old")
        .set(Contact::FIRST, "N")
        .set(Contact::LAST, "Ew")
        .set(Contact::TAGS, Vec::<String>::new())
        .upsert()
        .await;
    assert!(matches!(err, Err(Error::SchemaOutdated { found: 1, .. })), "{err:?}");
    // An incomplete upsert is refused before sending, whatever the stored item's version.
    let sent = db.requests().total();
    let err = Contact::update(&db, "acme", "old").set(Contact::FIRST, "N").upsert().await;
    assert!(
        matches!(
            err,
            Err(Error::InvalidRequest { problem: RequestProblem::UpsertIncomplete { .. }, .. })
        ),
        "{err:?}"
    );
    assert_eq!(db.requests().total(), sent, "nothing sent");
    let err = db
        .transaction()
        .update(Contact::key("acme", "old"), |u| u.set(Contact::VISITS, 1))
        .await
        .unwrap_err();
    assert!(err.is_schema_error(), "{err:?}");
    assert_eq!(support::snapshot(&db).await, before);
    // A condition check writes nothing: an old item passes it.
    let note = Note { org: "acme".into(), id: "n".into(), text: "on an old contact".into() };
    db.transaction().check_exists(Contact::key("acme", "old")).create(&note).await?;

    // An upsert that creates stores the version; a whole-item write over an old item is
    // the way to bring it up to date by hand.
    let created = Contact::update(&db, "acme", "new")
        .set(Contact::FIRST, "N")
        .set(Contact::LAST, "Ew")
        .set(Contact::TAGS, Vec::<String>::new())
        .upsert()
        .await?;
    assert_eq!(created.first, "N");
    assert_eq!(schema_of(&raw_of(&db, "acme", "new").await).as_deref(), Some("3"));
    let mut old = Contact::get(&db, "acme", "old").await?.expect("old");
    old.visits = 9;
    old.replace(&db).await?;
    assert_eq!(schema_of(&raw_of(&db, "acme", "old").await).as_deref(), Some("3"));
    let again = Contact::update(&db, "acme", "old").set(Contact::VISITS, 10).await?;
    assert_eq!(again.history, vec![1, 2], "upgraded once, then kept");
    Ok(())
}

#[tokio::test]
async fn newer_items_and_failed_upgrades_are_typed_errors() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let mut newer = Old::v1("acme", "future", "Fu Ture");
    newer.version = 4;
    plant(&db, &[newer]).await;
    let err = Contact::get(&db, "acme", "future").await.unwrap_err();
    assert!(
        matches!(&err, Error::SchemaTooNew { entity: "Contact", found: 4, current: 3, key }
            if key.contains("ORG#acme") && key.contains("CONTACT#future")),
        "{err:?}"
    );
    assert!(err.is_schema_error());
    assert!(Contact::query(&db, "acme").all().await.is_err());

    // A version 1 item without a name: the first step fails, naming it.
    let mut broken = Old::v1("acme", "broken", "").item();
    broken.remove("name");
    support::put_raw(&db, broken).await;
    let err = Contact::get(&db, "acme", "broken").await.unwrap_err();
    let Error::SchemaUpgrade { entity, key, from, to, source } = &err else {
        panic!("{err:?}");
    };
    assert_eq!((*entity, *from, *to), ("Contact", 1, 2));
    assert!(key.contains("CONTACT#broken"), "{key}");
    assert!(source.to_string().contains("name"), "{source}");
    let text = err.to_string();
    assert!(text.contains("Contact") && text.contains("from schema version 1 to 2"), "{text}");

    // A schema attribute that is no positive integer is a corrupt item.
    for bad in [s("3"), n(0), n("-1"), n("1.5")] {
        let mut item = Old::v1("acme", "odd", "O Dd").item();
        item.insert("_schema".into(), bad.clone());
        support::put_raw(&db, item).await;
        let err = Contact::get(&db, "acme", "odd").await.unwrap_err();
        assert!(
            matches!(
                err,
                Error::CorruptItem {
                    entity: "Contact",
                    reason: CorruptReason::SchemaVersion { attribute: "_schema" },
                    ..
                }
            ),
            "{bad:?}: {err:?}"
        );
    }
    Ok(())
}

/// The items `id` of `org` after a migration: each current, read as the model says.
async fn assert_migrated(db: &Db, olds: &[Old]) -> Result<(), Error> {
    for old in olds {
        let raw = raw_of(db, &old.org, &old.id).await;
        assert_eq!(schema_of(&raw).as_deref(), Some("3"), "{}", old.id);
        let mut read = Contact::get(db, &old.org, &old.id).await?.expect("kept");
        assert!(read.rev >= 1, "written back: {read:?}");
        read.rev = 0;
        assert_eq!(read, old.model(), "{}", old.id);
    }
    Ok(())
}

#[tokio::test]
async fn the_migration_upgrades_each_old_item_once_and_reports_failures() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let olds: Vec<Old> = (0..40)
        .map(|i| {
            let mut old = Old::v1(&format!("o{}", i % 3), &format!("c{i:02}"), &format!("N {i}"));
            if i % 4 == 0 {
                old.version = 2;
                old.tag = Some(format!("t{i}"));
            }
            old
        })
        .collect();
    plant(&db, &olds).await;
    let mut broken = Old::v1("o1", "broken", "").item();
    broken.remove("name");
    support::put_raw(&db, broken.clone()).await;
    for i in 0..5 {
        contact("o0", &format!("cur{i}")).create(&db).await?;
        Note { org: "o2".into(), id: format!("n{i}"), text: "keep".into() }.create(&db).await?;
    }
    let notes_before: Vec<Note> = Note::query(&db, "o2").all().await?;

    let seen = Arc::new(Mutex::new(Vec::<MigrateProgress>::new()));
    let log = Arc::clone(&seen);
    let report = db
        .migrate::<Contact>()
        .segments(3)
        .page_size(8)
        .on_progress(move |p| log.lock().expect("log").push(p.clone()))
        .await?;
    assert_eq!(report.counts.upgraded, 40);
    assert_eq!(report.counts.failed, 1);
    assert_eq!(report.counts.already_current + report.counts.skipped, 0);
    assert_eq!(report.counts.scanned, 40 + 1 + 5 + 5);
    assert_eq!(report.failures.len(), 1);
    let failure = &report.failures[0];
    assert_eq!((failure.pk.as_str(), failure.sk.as_deref()), ("ORG#o1", Some("CONTACT#broken")));
    assert!(matches!(failure.error, Error::SchemaUpgrade { from: 1, to: 2, .. }));
    assert!(report.checkpoint.is_done());
    assert_migrated(&db, &olds).await?;
    assert_eq!(Note::query(&db, "o2").all().await?, notes_before);
    assert!(support::raw(&db, "ORG#o1", "CONTACT#broken").await == Some(broken));

    // Progress: cumulative, one call per page, the last one done.
    let seen = seen.lock().expect("log").clone();
    // Pages evaluate at most 8 items each: 51 items take 7 pages at least.
    assert!(seen.len() >= 51_usize.div_ceil(8), "{}", seen.len());
    assert!(seen.windows(2).all(|w| w[0].counts.scanned <= w[1].counts.scanned));
    let last = seen.last().expect("progress");
    assert_eq!((last.segments_done, last.segments), (3, 3));
    assert_eq!(last.counts, report.counts);

    // A second run finds nothing to do but the broken item, which fails again.
    let again = db.migrate::<Contact>().await?;
    assert_eq!((again.counts.upgraded, again.counts.failed), (0, 1));
    let err = db.migrate::<Contact>().stop_on_failure().await.unwrap_err();
    assert!(matches!(err, Error::SchemaUpgrade { .. }), "{err:?}");
    Ok(())
}

#[tokio::test]
async fn migration_requests_one_scan_per_page_and_one_put_per_old_item() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let olds: Vec<Old> = (0..10).map(|i| Old::v1("acme", &format!("c{i}"), "A B")).collect();
    plant(&db, &olds).await;
    for i in 0..5 {
        contact("acme", &format!("cur{i}")).create(&db).await?;
    }
    db.reset_requests();
    let report = db.migrate::<Contact>().segments(1).await?;
    let spent = db.requests();
    assert_eq!(report.counts.upgraded, 10);
    assert_eq!(
        (spent.get(Op::Scan), spent.get(Op::PutItem), spent.total()),
        (1, 10, 11),
        "{spent}"
    );

    // Nothing left: one scan per segment, no write.
    db.reset_requests();
    let report = db.migrate::<Contact>().segments(4).await?;
    let spent = db.requests();
    assert_eq!(report.counts.upgraded, 0);
    assert_eq!((spent.get(Op::Scan), spent.total()), (4, 4), "{spent}");

    // Pages of 5 items: 15 items in one segment take 4 scans (the last one empty).
    plant(&db, &olds).await;
    db.reset_requests();
    db.migrate::<Contact>().segments(1).page_size(5).await?;
    let spent = db.requests();
    assert_eq!((spent.get(Op::Scan), spent.get(Op::PutItem)), (4, 10), "{spent}");

    // Refused before sending: no schema, a wrong segment count, a foreign checkpoint.
    db.reset_requests();
    assert!(db.migrate::<Note>().await.is_err());
    assert!(db.migrate::<Contact>().segments(0).await.is_err());
    let foreign: MigrateCheckpoint = serde_json::from_value(json!({
        "entity": "Note", "version": 3, "segments": ["Start"],
        "counts": { "scanned": 0, "upgraded": 0, "already_current": 0, "skipped": 0, "failed": 0 }
    }))
    .expect("checkpoint");
    let err = db.migrate::<Contact>().resume(foreign).await.unwrap_err();
    let Error::InvalidCursor { reason: CursorReason::Checkpoint { mismatch, .. } } = &err else {
        panic!("expected a foreign checkpoint, got {err:?}");
    };
    assert_eq!(*mismatch, CheckpointMismatch::Entity("Note".into()));
    assert!(err.to_string().ends_with(": it is a migration of `Note`"), "{err}");
    assert_eq!(db.requests().total(), 0);
    Ok(())
}

/// Cut after every request of a small migration, then resumed from the last checkpoint the
/// progress callback gave (serialized and read back): every old item is upgraded exactly once
/// (its history shows each step once), the other items are untouched.
#[tokio::test]
async fn an_interrupted_migration_resumes_from_its_checkpoint() -> Result<(), Error> {
    let direct = support::db::<DefaultTable>().await;
    let olds: Vec<Old> =
        (0..12).map(|i| Old::v1(&format!("o{}", i % 2), &format!("c{i:02}"), "X Y")).collect();
    for i in 0..3 {
        contact("o0", &format!("cur{i}")).create(&direct).await?;
        Note { org: "o1".into(), id: format!("n{i}"), text: "keep".into() }.create(&direct).await?;
    }
    let others = |snapshot: Vec<String>| -> Vec<String> {
        snapshot.into_iter().filter(|line| !line.contains("CONTACT#c")).collect()
    };
    let untouched = others(support::snapshot(&direct).await);
    // Without faults: 2 segments of pages of 4 items (21 items: about 8 scans) and 12 puts.
    let mut k = 0;
    loop {
        plant(&direct, &olds).await;
        let cut_off = Harness::on(direct.clone(), Faults::default().fail_from(k)).await?;
        let cut = cut_off.db().clone();
        let saved = Arc::new(Mutex::new(None::<String>));
        let keep = Arc::clone(&saved);
        let run = cut
            .migrate::<Contact>()
            .segments(2)
            .page_size(4)
            .on_progress(move |p| {
                *keep.lock().expect("saved") =
                    Some(serde_json::to_string(&p.checkpoint).expect("serializable"));
            })
            .await;
        let finished = run.is_ok();
        let saved = saved.lock().expect("saved").clone();
        let mut resumed = direct.migrate::<Contact>();
        if let Some(text) = saved {
            let checkpoint: MigrateCheckpoint = serde_json::from_str(&text).expect("checkpoint");
            assert_eq!(checkpoint.segments().len(), 2);
            resumed = resumed.resume(checkpoint);
        }
        let report = resumed.await?;
        assert!(report.failures.is_empty(), "cut after {k}: {:?}", report.failures);
        assert!(report.checkpoint.is_done());
        assert_migrated(&direct, &olds).await?;
        assert_eq!(others(support::snapshot(&direct).await), untouched, "cut after {k}");
        if finished {
            assert!(k > 12, "a run of 12 puts and its scans needs more than {k} requests");
            break;
        }
        k += 1;
    }
    Ok(())
}

/// Writers bump `visits` of some items with read-modify-write (optimistic locking) while 4
/// segments migrate a few thousand items: every bump is kept, every item is current.
#[tokio::test]
async fn a_migration_under_concurrent_writers_loses_no_update() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let olds: Vec<Old> = (0..2000)
        .map(|i| Old::v1(&format!("org{}", i % 50), &format!("c{i:04}"), &format!("F{i} L{i}")))
        .collect();
    let mut batch = db.batch_write();
    for old in &olds {
        batch = batch.put_unchecked(&ContactV1 {
            org: old.org.clone(),
            id: old.id.clone(),
            name: old.name.clone(),
            tag: None,
            visits: 0,
        });
    }
    batch.await?;
    const BUMPS: u64 = 5;
    let hot: Vec<Old> = olds.iter().step_by(97).cloned().collect();

    let writers = hot.iter().map(|old| {
        let db = db.clone();
        let (org, id) = (old.org.clone(), old.id.clone());
        tokio::spawn(async move {
            for _ in 0..BUMPS {
                loop {
                    let mut c = Contact::get(&db, &org, &id).await?.expect("exists");
                    c.visits += 1;
                    match c.replace(&db).await {
                        Ok(()) => break,
                        Err(e) if e.is_version_conflict() => continue,
                        Err(e) => return Err(e),
                    }
                }
            }
            Ok::<(), Error>(())
        })
    });
    let writers: Vec<_> = writers.collect();
    let report = db.migrate::<Contact>().segments(4).await?;
    for w in writers {
        w.await.expect("writer")?;
    }
    let c = report.counts;
    assert_eq!(c.failed, 0);
    // An item a writer brought up to date before the scan reached it is not read at all.
    assert!(c.upgraded + c.already_current + c.skipped <= 2000, "{c:?}");
    assert!(c.upgraded >= 2000 - hot.len() as u64, "{c:?}");

    // Every item current, the bumps all there.
    let mut all = db.scan::<Contact>().segments(4).all().await?;
    assert_eq!(all.len(), 2000);
    all.sort_by(|a, b| a.id.cmp(&b.id));
    let visits: BTreeMap<&str, u64> = all.iter().map(|c| (c.id.as_str(), c.visits)).collect();
    for old in &olds {
        let want = if hot.iter().any(|h| h.id == old.id) { BUMPS } else { 0 };
        assert_eq!(visits[old.id.as_str()], want, "{}", old.id);
    }
    for c in &all {
        assert_eq!(c.history, vec![1, 2], "{}: upgraded once", c.id);
    }
    let left = db.migrate::<Contact>().segments(4).await?;
    assert_eq!(left.counts.upgraded + left.counts.skipped + left.counts.already_current, 0);
    Ok(())
}

/// The read of random old items (any Unicode, separators, empty names, tags) is the model's
/// upgrade; after the migration the stored items read the same, at the current version.
mod model_check {
    use proptest::prelude::*;

    use super::*;

    fn old() -> impl Strategy<Value = Old> {
        (
            1u32..=2,
            "[a-z#%]{1,6}",
            "\\PC{1,12}",
            "\\PC{0,20}",
            proptest::option::of("\\PC{0,8}"),
            0u64..1000,
        )
            .prop_map(|(version, org, id, name, tag, visits)| Old {
                version,
                org,
                id,
                name,
                tag: if version == 2 { tag } else { None },
                visits,
            })
    }

    fn run<F: std::future::Future<Output = Result<(), Error>>>(f: F) -> Result<(), Error> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        runtime.expect("runtime").block_on(f)
    }

    async fn check(olds: Vec<Old>) -> Result<(), Error> {
        let db = support::db::<DefaultTable>().await;
        let mut by_key: BTreeMap<(String, String), Old> = BTreeMap::new();
        for old in olds {
            by_key.insert((old.org.clone(), old.id.clone()), old);
        }
        let olds: Vec<Old> = by_key.into_values().collect();
        plant(&db, &olds).await;
        for old in &olds {
            assert_eq!(Contact::get(&db, &old.org, &old.id).await?, Some(old.model()));
        }
        let report = db.migrate::<Contact>().segments(2).await?;
        assert_eq!(report.counts.upgraded, olds.len() as u64);
        assert_migrated(&db, &olds).await
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn prop_reads_and_the_migration_agree_with_the_model(olds in proptest::collection::vec(old(), 1..12)) {
            run(check(olds)).expect("schema model");
        }
    }
}

#[test]
fn a_checkpoint_round_trips_through_serde() {
    let text = json!({
        "entity": "Contact", "version": 3,
        "segments": ["Start", { "After": { "pk": "ORG#a", "sk": "CONTACT#b" } }, "Done"],
        "counts": { "scanned": 7, "upgraded": 3, "already_current": 1, "skipped": 0, "failed": 2 }
    });
    let checkpoint: MigrateCheckpoint = serde_json::from_value(text.clone()).expect("parses");
    assert_eq!(checkpoint.entity(), "Contact");
    assert_eq!(
        checkpoint.segments()[1],
        SegmentPosition::After { pk: "ORG#a".into(), sk: Some("CONTACT#b".into()) }
    );
    assert!(!checkpoint.is_done());
    assert_eq!(checkpoint.counts().failed, 2);
    assert_eq!(serde_json::to_value(&checkpoint).expect("serializes"), text);
}

/// The tool's ready-made migration: listed with its description, run as `migrate NAME`
/// against the table the command line names; an item that cannot be upgraded is the
/// command's error once the others are done.
#[tokio::test]
async fn the_tools_schema_migration_runs_migrate_name() -> Result<(), Box<dyn std::error::Error>> {
    use ddb_model::tooling::TableModel;
    use ddb_model::tooling::cli::{Cli, SchemaMigration};

    let db = support::db::<DefaultTable>().await;
    let olds: Vec<Old> = (0..30).map(|i| Old::v1("acme", &format!("c{i:02}"), "Ann Bee")).collect();
    plant(&db, &olds).await;
    let model = TableModel::of::<DefaultTable>().entity::<Contact>();
    let cli = Cli::new(model).migration(SchemaMigration::<Contact>::new("contacts-v3").segments(2));
    let mut out = Vec::new();
    cli.run_with(&["migrate".to_owned()], &mut out).await?;
    assert_eq!(
        String::from_utf8_lossy(&out),
        "contacts-v3\tupgrades `Contact` items to schema version 3\n"
    );

    let endpoint = ddb_model::local::endpoint()?;
    let run: Vec<String> =
        ["migrate", "contacts-v3", "--endpoint", &endpoint, "--table", db.table_name()]
            .into_iter()
            .map(str::to_owned)
            .collect();
    let mut out = Vec::new();
    cli.run_with(&run, &mut out).await?;
    assert_eq!(String::from_utf8_lossy(&out), "migration `contacts-v3` finished: 30 items\n");
    assert_migrated(&db, &olds).await?;

    let mut broken = Old::v1("acme", "broken", "").item();
    broken.remove("name");
    support::put_raw(&db, broken).await;
    plant(&db, &olds[..3]).await;
    let err = cli.run_with(&run, &mut Vec::new()).await.unwrap_err();
    assert!(err.to_string().contains("CONTACT#broken"), "{err}");
    assert_migrated(&db, &olds).await?;
    Ok(())
}
