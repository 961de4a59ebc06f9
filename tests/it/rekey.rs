//! Online re-keying (issue 29, item 1): `#[entity(rekey(pk = .., sk = ..))]`, the phases a
//! deployment's reads and writes go through (`Db::with_rekey_phase`), and the fenced,
//! resumable copy and cleanup (`Db::rekey`), checked against an in-memory model: a runner
//! killed after each of its requests and resumed, concurrent writers through the library,
//! writers that change or delete an item between the copy's read and its write, and a second
//! runner taking over.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::error::RekeyProblem;
use ddb_model::intercept::{Interceptor, Outcome, Request};
use ddb_model::ops::{RekeyCheckpoint, RekeyPhase};
use ddb_model::prelude::*;
use ddb_model::stats::Op;
use ddb_model::{Item, Key};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

use crate::model::App;
use crate::support::{db, raw};

/// A member, first stored under `MEMBER#<id>` / `ORG#<org>`, re-keyed to live in its
/// organisation's partition; with a version, a constant and an index.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(
    table = App,
    pk = "ORG#<org>",
    sk = "MEMBER#<id>",
    rekey(pk = "MEMBER#<id>", sk = "ORG#<org>"),
    version = version,
    constant(kind = "member")
)]
#[index(gsi1, pk = "EMAIL#<email>", sk = "MEMBER#<id>")]
#[index(gsi2, pk = "BYORG#<org>")]
pub(crate) struct Member {
    pub(crate) org: String,
    pub(crate) id: String,
    pub(crate) email: String,
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) visits: u64,
    #[serde(default)]
    pub(crate) version: u64,
}

pub(crate) fn member(i: u64) -> Member {
    Member {
        org: format!("o{}", i % 3),
        id: format!("m{i:04}"),
        email: format!("m{i}@example.com"),
        name: format!("member {i}"),
        visits: 0,
        version: 0,
    }
}

/// The stored item under the old layout's key of `m`, and under the new one's.
async fn copies(db: &Db<App>, org: &str, id: &str) -> (Option<Item>, Option<Item>) {
    let old = raw(db, &format!("MEMBER#{id}"), &format!("ORG#{org}")).await;
    let new = raw(db, &format!("ORG#{org}"), &format!("MEMBER#{id}")).await;
    (old, new)
}

/// `item` without its primary key.
fn body(mut item: Item) -> Item {
    item.remove("pk");
    item.remove("sk");
    item
}

/// Checks the table against `model` (id -> member as last written, org fixed per id):
/// each member has its new copy, equal to the old one apart from the key; with `old`,
/// the old copies exist too, else none is left; no other item of `Member` exists.
async fn check(db: &Db<App>, model: &BTreeMap<String, Option<Member>>, old: bool) {
    let reader = db.clone().with_rekey_phase::<Member>(RekeyPhase::ReadNew);
    for (id, want) in model {
        let org = want.as_ref().map_or_else(|| org_of(id), |m| m.org.clone());
        let (o, n) = copies(db, &org, id).await;
        match want {
            None => {
                assert!(n.is_none(), "{id}: a deleted member has a new copy: {n:?}");
                assert!(o.is_none(), "{id}: a deleted member has an old copy: {o:?}");
            }
            Some(m) => {
                let n = n.unwrap_or_else(|| panic!("{id}: no new copy"));
                assert_eq!(n.get("gsi1pk"), Some(&AttributeValue::S(format!("EMAIL#{}", m.email))));
                assert_eq!(n.get("kind"), Some(&AttributeValue::S("member".into())));
                let got = Member::get(&reader, &m.org, &m.id).await.unwrap();
                let mut m = m.clone();
                m.version = got.as_ref().map_or(0, |g| g.version);
                assert_eq!(got, Some(m), "{id}: the new copy holds another member");
                match (old, o) {
                    (true, Some(o)) => assert_eq!(body(o), body(n), "{id}: copies differ"),
                    (true, None) => panic!("{id}: no old copy"),
                    (false, o) => assert!(o.is_none(), "{id}: the cleanup left {o:?}"),
                }
            }
        }
    }
}

fn org_of(id: &str) -> String {
    let i: u64 = id.trim_start_matches('m').parse().unwrap_or(0);
    format!("o{}", i % 3)
}

#[test]
fn the_declaration_maps_each_key_to_the_other_layout() {
    let def = Member::REKEY.unwrap();
    assert_eq!((def.pk, def.sk), ("MEMBER#<id>", Some("ORG#<org>")));
    let new = Member::key("acme", "ann");
    let old = Member::rekey_key(&new, true).unwrap().unwrap();
    assert_eq!((old.pk(), old.sk()), ("MEMBER#ann", Some("ORG#acme")));
    let back = Member::rekey_key(&old, false).unwrap().unwrap();
    assert_eq!(back, new);
    // A key the old layout did not write.
    assert!(Member::rekey_key(&new, false).is_err());
}

#[tokio::test]
async fn each_phase_reads_and_writes_its_copies() -> Result<(), Error> {
    let db = db::<App>().await;
    let old = db.clone(); // an entity that declares `rekey` starts in `Old`
    assert_eq!(old.rekey_phase::<Member>(), RekeyPhase::Old);
    let mut ann = member(1);
    ann.create(&old).await?;
    let (o, n) = copies(&db, &ann.org, &ann.id).await;
    assert!(o.is_some() && n.is_none(), "Old writes the old copy only");
    assert_eq!(Member::get(&old, &ann.org, &ann.id).await?.map(|m| m.name), Some(ann.name.clone()));

    let both = db.clone().with_rekey_phase::<Member>(RekeyPhase::WriteBoth);
    // Not copied yet: the update keeps the old copy, and checks the new one is still absent.
    let updated = Member::update(&both, &ann.org, &ann.id).add(Member::VISITS, 1).await?;
    assert_eq!(updated.visits, 1);
    let (o, n) = copies(&db, &ann.org, &ann.id).await;
    assert!(o.is_some() && n.is_none());
    let mut bob = member(2);
    bob.create(&both).await?;
    let (o, n) = copies(&db, &bob.org, &bob.id).await;
    assert_eq!(body(o.unwrap()), body(n.unwrap()), "WriteBoth creates both copies");
    Member::update(&both, &bob.org, &bob.id).set(Member::NAME, "Bob".to_owned()).await?;
    let (o, n) = copies(&db, &bob.org, &bob.id).await;
    assert_eq!(body(o.unwrap()), body(n.unwrap()), "WriteBoth updates both copies");

    // Operations that cannot keep both copies are refused, before anything is sent.
    let batch = both.batch_write().put(&member(3)).await;
    assert!(
        matches!(batch, Err(Error::Rekey { problem: RekeyProblem::Unsupported { .. }, .. })),
        "{batch:?}"
    );
    let query = Member::query(&both, "o1").all().await;
    assert!(
        matches!(query, Err(Error::Rekey { problem: RekeyProblem::Unsupported { .. }, .. })),
        "{query:?}"
    );

    let report = both.rekey::<Member>().segments(2).await?;
    assert_eq!((report.counts.copied, report.counts.already_new), (1, 1));

    let read_new = db.clone().with_rekey_phase::<Member>(RekeyPhase::ReadNew);
    assert_eq!(Member::get(&read_new, &ann.org, &ann.id).await?.map(|m| m.visits), Some(1));
    Member::delete(&read_new, &bob.org, &bob.id).await?;
    assert_eq!(copies(&db, &bob.org, &bob.id).await, (None, None), "ReadNew deletes both");
    assert_eq!(Member::query(&read_new, "o1").all().await?.len(), 1);

    let new = db.clone().with_rekey_phase::<Member>(RekeyPhase::New);
    let report = new.rekey::<Member>().cleanup().await?;
    assert_eq!((report.counts.removed, report.counts.not_copied), (1, 0));
    let (o, n) = copies(&db, &ann.org, &ann.id).await;
    assert!(o.is_none() && n.is_some());
    ann.visits = 1;
    ann.version = 2;
    assert_eq!(Member::get(&new, &ann.org, &ann.id).await?, Some(ann));
    Ok(())
}

#[tokio::test]
async fn the_copy_batches_its_writes_and_carries_every_attribute() -> Result<(), Error> {
    let db = db::<App>().await;
    let n = 120;
    let mut model = BTreeMap::new();
    for i in 0..n {
        let mut m = member(i);
        m.create(&db).await?;
        model.insert(m.id.clone(), Some(m));
    }
    let both = db.clone().with_rekey_phase::<Member>(RekeyPhase::WriteBoth);
    let before = db.requests();
    let report = both.rekey::<Member>().segments(1).await?;
    let after = db.requests();
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!(report.counts.copied, n, "{:?}", report.counts);
    // One control item written and removed, one page, ceil(120 / 49) = 3 transactions.
    let sent = |op| after.get(op) - before.get(op);
    assert_eq!(sent(Op::PutItem), 1);
    assert_eq!(sent(Op::DeleteItem), 1);
    assert_eq!(sent(Op::Scan), 1);
    assert_eq!(sent(Op::TransactWriteItems), 3);
    check(&db, &model, true).await;
    // Run again: nothing left to copy, every new copy stays.
    let again = both.rekey::<Member>().segments(1).await?;
    assert_eq!((again.counts.copied, again.counts.already_new), (0, n));
    Ok(())
}

/// Runs `step` on `db`, calling `between` (once, on the runtime, blocking the runner) after
/// the runner's first `Scan` came back.
pub(crate) struct AfterScan {
    hook: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl Interceptor for AfterScan {
    fn after(&self, request: &Request, _: Outcome<'_>) {
        if matches!(request, Request::Scan(_))
            && let Some(hook) = self.hook.lock().unwrap().take()
        {
            tokio::task::block_in_place(hook);
        }
    }
}

pub(crate) fn after_scan(f: impl FnOnce() + Send + 'static) -> Arc<AfterScan> {
    Arc::new(AfterScan { hook: Mutex::new(Some(Box::new(f))) })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_neither_brings_back_a_deleted_item_nor_copies_a_stale_one() -> Result<(), Error> {
    let db = db::<App>().await;
    let both = db.clone().with_rekey_phase::<Member>(RekeyPhase::WriteBoth);
    let mut model = BTreeMap::new();
    for i in 0..6 {
        let mut m = member(i);
        m.create(&db).await?;
        model.insert(m.id.clone(), Some(m));
    }
    // Between the copy's scan and its transaction, a writer deletes m0001 and renames m0002.
    let writer = both.clone();
    let handle = tokio::runtime::Handle::current();
    let hook = after_scan(move || {
        handle.block_on(async {
            Member::delete(&writer, "o1", "m0001").await.unwrap();
            Member::update(&writer, "o2", "m0002")
                .set(Member::NAME, "renamed".to_owned())
                .await
                .unwrap();
        })
    });
    let runner = both.clone().with_interceptor(hook);
    let report = runner.rekey::<Member>().segments(1).await?;
    assert_eq!((report.counts.gone, report.counts.changed), (1, 1), "{:?}", report.counts);
    assert_eq!(report.counts.copied, 5);
    model.insert("m0001".into(), None);
    if let Some(Some(m)) = model.get_mut("m0002") {
        m.name = "renamed".into();
    }
    check(&db, &model, true).await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_runner_fences_out_the_first() -> Result<(), Error> {
    let db = db::<App>().await;
    let both = db.clone().with_rekey_phase::<Member>(RekeyPhase::WriteBoth);
    let mut model = BTreeMap::new();
    for i in 0..10 {
        let mut m = member(i);
        m.create(&db).await?;
        model.insert(m.id.clone(), Some(m));
    }
    // The first runner stalls after its scan; a second runner does the whole copy, and a
    // writer then deletes an item the first runner read.
    let second = both.clone();
    let handle = tokio::runtime::Handle::current();
    let hook = after_scan(move || {
        handle.block_on(async {
            let report = second.rekey::<Member>().segments(1).await.unwrap();
            assert_eq!(report.counts.copied, 10);
            Member::delete(&second, "o0", "m0000").await.unwrap();
        })
    });
    let first = both.clone().with_interceptor(hook);
    let err = first.rekey::<Member>().segments(1).await.unwrap_err();
    assert!(err.is_rekey_superseded(), "{err:?}");
    model.insert("m0000".into(), None);
    check(&db, &model, true).await;
    Ok(())
}

/// Stops a runner after its `limit`-th request came back (a kill between two requests).
struct Killer {
    seen: AtomicU64,
    limit: u64,
    stop: Notify,
}

impl Interceptor for Killer {
    fn after(&self, _: &Request, _: Outcome<'_>) {
        if self.seen.fetch_add(1, Ordering::SeqCst) + 1 == self.limit {
            self.stop.notify_one();
        }
    }
}

/// Runs a step to its end, killing the runner after its 1st request, resuming from the last
/// checkpoint and killing the new runner after its 2nd, and so on: every request of a run is
/// the last of some run. Returns the runs made.
async fn crash_each_request(db: &Db<App>, cleanup: bool) -> u64 {
    let mut checkpoint: Option<RekeyCheckpoint> = None;
    for limit in 1.. {
        let killer = Arc::new(Killer { seen: AtomicU64::new(0), limit, stop: Notify::new() });
        let runner = db.clone().with_interceptor(killer.clone());
        let last = Arc::new(Mutex::new(checkpoint.clone()));
        let keep = Arc::clone(&last);
        let mut step = runner.rekey::<Member>().segments(2).page_size(7);
        if cleanup {
            step = step.cleanup();
        }
        if let Some(c) = checkpoint.clone() {
            step = step.resume(c);
        }
        let step = step.on_progress(move |p| *keep.lock().unwrap() = Some(p.checkpoint.clone()));
        let finished = tokio::select! {
            biased;
            () = killer.stop.notified() => false,
            report = step => {
                let report = report.unwrap();
                assert!(report.failures.is_empty());
                true
            }
        };
        checkpoint = last.lock().unwrap().clone();
        if finished {
            return limit;
        }
    }
    unreachable!()
}

#[tokio::test]
async fn a_runner_killed_after_each_request_and_resumed_loses_nothing() -> Result<(), Error> {
    let n: u64 = std::env::var("REKEY_CRASH_ITEMS").ok().and_then(|v| v.parse().ok()).unwrap_or(24);
    let db = db::<App>().await;
    let mut model = BTreeMap::new();
    for i in 0..n {
        let mut m = member(i);
        m.create(&db).await?;
        model.insert(m.id.clone(), Some(m));
    }
    let both = db.clone().with_rekey_phase::<Member>(RekeyPhase::WriteBoth);
    let runs = crash_each_request(&both, false).await;
    assert!(runs > 3, "{runs} runs");
    check(&db, &model, true).await;
    let new = db.clone().with_rekey_phase::<Member>(RekeyPhase::New);
    crash_each_request(&new, true).await;
    check(&db, &model, false).await;
    Ok(())
}

/// A write of the proptest's concurrent writer.
#[derive(Debug, Clone)]
enum Write {
    Create(u64),
    Rename(u64, u8),
    Visit(u64),
    Delete(u64),
}

fn writes() -> impl Strategy<Value = Vec<Write>> {
    let id = 0..12u64;
    let write = prop_oneof![
        id.clone().prop_map(Write::Create),
        (id.clone(), any::<u8>()).prop_map(|(i, n)| Write::Rename(i, n)),
        id.clone().prop_map(Write::Visit),
        id.prop_map(Write::Delete),
    ];
    proptest::collection::vec(write, 1..24)
}

/// Applies `w` through `db` and to `model` (by what the library answered).
async fn apply(db: &Db<App>, model: &Mutex<BTreeMap<String, Option<Member>>>, w: &Write) {
    let id = |i: u64| member(i).id;
    let org = |i: u64| member(i).org;
    match *w {
        Write::Create(i) => {
            let mut m = member(i);
            if m.create(db).await.is_ok() {
                model.lock().unwrap().insert(m.id.clone(), Some(m));
            }
        }
        Write::Rename(i, n) => {
            let name = format!("name {n}");
            if Member::update(db, org(i), id(i)).set(Member::NAME, name.clone()).await.is_ok()
                && let Some(Some(m)) = model.lock().unwrap().get_mut(&id(i))
            {
                m.name = name;
            }
        }
        Write::Visit(i) => {
            if Member::update(db, org(i), id(i)).add(Member::VISITS, 1).await.is_ok()
                && let Some(Some(m)) = model.lock().unwrap().get_mut(&id(i))
            {
                m.visits += 1;
            }
        }
        Write::Delete(i) => {
            if Member::delete(db, org(i), id(i)).await.is_ok() {
                model.lock().unwrap().insert(id(i), None);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("REKEY_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(6),
        ..ProptestConfig::default()
    })]

    /// Writers through the library in `WriteBoth` while the copy runs: afterwards both
    /// copies of every member equal the model; writers in `ReadNew` while the cleanup
    /// runs: afterwards only the new copies are left, equal to the model.
    #[test]
    fn concurrent_writers_and_the_copy_agree_with_the_model(
        seed in 0..8u64,
        during_copy in writes(),
        during_cleanup in writes(),
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async {
            let db = db::<App>().await;
            let model = Mutex::new(BTreeMap::new());
            for i in 0..(4 + seed) {
                let mut m = member(i);
                m.create(&db).await.unwrap();
                model.lock().unwrap().insert(m.id.clone(), Some(m));
            }
            let both = db.clone().with_rekey_phase::<Member>(RekeyPhase::WriteBoth);
            let copied = std::sync::atomic::AtomicBool::new(false);
            let writer = async {
                for w in &during_copy {
                    apply(&both, &model, w).await;
                }
            };
            let copy = async {
                let report = both.rekey::<Member>().segments(2).page_size(3).await;
                copied.store(true, Ordering::SeqCst);
                report
            };
            // Readers in `WriteBoth` while items get their second copy: each member once.
            let reader = super::rekey_reads::read_each_once_until(&both, &copied);
            let (report, (), ()) = tokio::join!(copy, writer, reader);
            report.unwrap();
            let snapshot = model.lock().unwrap().clone();
            check(&db, &snapshot, true).await;
            // Both copies of every member: every phase's queries and scans read one.
            let phases = [RekeyPhase::Old, RekeyPhase::WriteBoth, RekeyPhase::ReadNew, RekeyPhase::New];
            super::rekey_reads::reads_agree(&db, &snapshot, &phases).await;

            let read_new = db.clone().with_rekey_phase::<Member>(RekeyPhase::ReadNew);
            let new = db.clone().with_rekey_phase::<Member>(RekeyPhase::New);
            // Every process is in `New` before the cleanup: its writers write the new copies only.
            let writer = async {
                for w in &during_cleanup {
                    apply(&new, &model, w).await;
                }
            };
            let (report, ()) = tokio::join!(new.rekey::<Member>().cleanup().segments(2).page_size(3), writer);
            report.unwrap();
            let snapshot = model.lock().unwrap().clone();
            check(&db, &snapshot, false).await;
            super::rekey_reads::reads_agree(&db, &snapshot, &[RekeyPhase::ReadNew, RekeyPhase::New]).await;
            let _ = read_new;
        });
    }
}

#[tokio::test]
async fn an_entity_without_rekey_is_refused() {
    let db = db::<App>().await;
    let err = db.rekey::<crate::model::User>().await.unwrap_err();
    assert!(matches!(err, Error::Rekey { problem: RekeyProblem::NotDeclared, .. }), "{err:?}");
    let _ = Key::<Member>::from_parts(String::new(), None);
}

/// The model tool's migration runs the copy, then the cleanup.
#[tokio::test]
async fn the_tools_migration_runs_each_step() -> Result<(), Error> {
    use ddb_model::tooling::cli::Migration;
    use ddb_model::tooling::rekey::RekeyMigration;
    let db = db::<App>().await;
    let mut model = BTreeMap::new();
    for i in 0..5 {
        let mut m = member(i);
        m.create(&db).await?;
        model.insert(m.id.clone(), Some(m));
    }
    let copy = RekeyMigration::<Member>::new("members").segments(2);
    assert!(copy.description().contains("`MEMBER#<id>` / `ORG#<org>`"), "{}", copy.description());
    let mut seen = 0;
    copy.run(db.client().clone(), db.table_name(), &mut |p| seen = p.done).await?;
    assert!(seen >= 5);
    check(&db, &model, true).await;
    // The cleanup through the tool's `rekey` command, as a user's `main` runs it.
    use ddb_model::tooling::TableModel;
    use ddb_model::tooling::cli::{Cli, MigrationKind};
    let cleanup = RekeyMigration::<Member>::new("members-cleanup").cleanup();
    assert_eq!(cleanup.kind(), MigrationKind::Rekey);
    let cli =
        Cli::new(TableModel::of::<App>().entity::<Member>()).migration(copy).migration(cleanup);
    let mut out = Vec::new();
    cli.run_with(&["rekey".to_owned()], &mut out).await.expect("list");
    let listed = String::from_utf8_lossy(&out);
    assert!(listed.contains("members\t") && listed.contains("members-cleanup\t"), "{listed}");
    let endpoint = ddb_model::local::endpoint()?;
    let run = ["rekey", "members-cleanup", "--endpoint", &endpoint, "--table", db.table_name()];
    cli.run_with(&run.map(String::from), &mut Vec::new()).await.expect("cleanup");
    check(&db, &model, false).await;
    Ok(())
}
