//! Reads of a re-keyed entity while its items have two copies (issue 29, item 1): queries of
//! an index, scans, their counts, pages and cursors, vector-free collection queries, each
//! returning every item once, from the copy the handle's phase reads; queries of the table's
//! key that would read the wrong copies refused; and the copy's "exactly as read" check on
//! changes inside a map or a list.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};

use ddb_model::error::RekeyProblem;
use ddb_model::ops::RekeyPhase;
use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};

use super::rekey::{Member, after_scan, member};
use crate::model::App;
use crate::support::{db, raw};

const PHASES: [RekeyPhase; 4] =
    [RekeyPhase::Old, RekeyPhase::WriteBoth, RekeyPhase::ReadNew, RekeyPhase::New];

/// What a read of a member shows of it.
type Seen = (String, String, u64);

fn seen(members: impl IntoIterator<Item = Member>) -> Vec<Seen> {
    let mut out: Vec<Seen> = members.into_iter().map(|m| (m.id, m.name, m.visits)).collect();
    out.sort();
    out
}

/// The members of `model` (of `org`, if given), as a read shows them.
fn expected(model: &BTreeMap<String, Option<Member>>, org: Option<&str>) -> Vec<Seen> {
    let members = model.values().flatten().filter(|m| org.is_none_or(|o| m.org == o));
    seen(members.cloned())
}

/// In each of `phases`, a scan, the index queries (whole, counted, and page by page from
/// cursors) return each member of `model` once, as the model has it.
pub(crate) async fn reads_agree(
    db: &Db<App>,
    model: &BTreeMap<String, Option<Member>>,
    phases: &[RekeyPhase],
) {
    for &phase in phases {
        let h = db.clone().with_rekey_phase::<Member>(phase);
        let all = h.scan::<Member>().segments(2).page_size(3).all().await.unwrap();
        assert_eq!(seen(all), expected(model, None), "{phase:?}: scan");
        let count = h.scan::<Member>().count().await.unwrap();
        assert_eq!(count, expected(model, None).len(), "{phase:?}: scan count");
        for org in ["o0", "o1", "o2"] {
            let want = expected(model, Some(org));
            let got = Member::query_gsi2(&h, org).page_size(2).all().await.unwrap();
            assert_eq!(seen(got), want, "{phase:?}: index query of {org}");
            let count = Member::query_gsi2(&h, org).page_size(2).count().await.unwrap();
            assert_eq!(count, want.len(), "{phase:?}: index count of {org}");
            // Pages of at most 2 items, from cursors: each member on one page.
            let (mut paged, mut cursor) = (Vec::new(), None);
            loop {
                let page =
                    Member::query_gsi2(&h, org).limit(2).page(cursor.as_ref()).await.unwrap();
                assert!(page.items.len() <= 2, "{phase:?}: a page of {}", page.items.len());
                paged.extend(page.items);
                match page.next {
                    Some(next) => cursor = Some(next),
                    None => break,
                }
            }
            assert_eq!(seen(paged), want, "{phase:?}: pages of {org}");
        }
        for m in model.values().flatten() {
            let got = Member::query_gsi1(&h, &m.email).all().await.unwrap();
            assert_eq!(got.len(), 1, "{phase:?}: {} by email", m.id);
        }
    }
}

/// Reads through `db` (a scan, the index queries) until `done` is set, each read checked to
/// return every member at most once: readers running while the copy gives items their
/// second copy.
pub(crate) async fn read_each_once_until(db: &Db<App>, done: &AtomicBool) {
    let once = |ids: Vec<String>, what: &str| {
        let unique: BTreeSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "{what} returned a member twice: {ids:?}");
    };
    loop {
        let finished = done.load(Ordering::SeqCst);
        let all = db.scan::<Member>().segments(2).page_size(4).all().await.unwrap();
        once(all.into_iter().map(|m| m.id).collect(), "a scan");
        for org in ["o0", "o1", "o2"] {
            let got = Member::query_gsi2(db, org).page_size(3).all().await.unwrap();
            once(got.into_iter().map(|m| m.id).collect(), "an index query");
        }
        if finished {
            return;
        }
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn each_phase_reads_one_copy_where_both_exist() -> Result<(), Error> {
    let db = db::<App>().await;
    let both = db.clone().with_rekey_phase::<Member>(RekeyPhase::WriteBoth);
    let mut model = BTreeMap::new();
    for i in 0..9 {
        let mut m = member(i);
        m.create(&both).await?;
        model.insert(m.id.clone(), Some(m));
    }
    // Both copies are in the index: a raw read of it finds each member twice.
    let raw_items = Member::query_gsi2(&both, "o1").items().all().await?;
    assert_eq!(raw_items.len(), 6, "{raw_items:?}");
    let raw_scan = both.scan_items().all().await?;
    assert_eq!(raw_scan.len(), 18);
    reads_agree(&db, &model, &PHASES).await;
    // A page of one request holds the copies it kept: fewer items than evaluated.
    let page = Member::query_gsi2(&both, "o1").page_size(4).page(None).await?;
    assert!(page.items.len() < 4 && page.next.is_some(), "{:?}", page.items);
    Ok(())
}

/// An org's profile, in the partition the members move into.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "ORG#<org>", sk = "PROFILE")]
#[index(gsi2, pk = "BYORG#<org>")]
struct Org {
    org: String,
    title: String,
}

#[derive(Collection, Debug)]
enum OrgItems {
    Org(Org),
    Member(Member),
}

fn members_of(items: &[OrgItems]) -> Vec<Seen> {
    seen(items.iter().filter_map(|i| match i {
        OrgItems::Member(m) => Some(m.clone()),
        OrgItems::Org(o) => {
            assert_eq!(o.title, "One");
            None
        }
    }))
}

#[tokio::test]
async fn collection_queries_read_one_copy_or_are_refused() -> Result<(), Error> {
    let db = db::<App>().await;
    let both = db.clone().with_rekey_phase::<Member>(RekeyPhase::WriteBoth);
    Org { org: "o1".into(), title: "One".into() }.create(&db).await?;
    let mut model = BTreeMap::new();
    for i in 0..7 {
        let mut m = member(i);
        m.create(&both).await?;
        model.insert(m.id.clone(), Some(m));
    }
    // One member of o1 only in the old layout (written in `Old`, not copied yet).
    let mut late = member(10);
    late.create(&db).await?;
    model.insert(late.id.clone(), Some(late.clone()));
    let old_only = expected(&model, Some("o1"));
    model.insert(late.id.clone(), None);
    let both_copies = expected(&model, Some("o1"));
    for phase in PHASES {
        let h = db.clone().with_rekey_phase::<Member>(phase);
        let reads_old = matches!(phase, RekeyPhase::Old | RekeyPhase::WriteBoth);
        let want = if reads_old { &old_only } else { &both_copies };
        // The index holds every copy: the query keeps the ones the phase reads.
        let items = Org::query_gsi2(&h, "o1").collection::<OrgItems>().all().await?;
        assert_eq!(&members_of(&items), want, "{phase:?}");
        assert_eq!(items.len(), want.len() + 1, "{phase:?}: and the org");
        let count = Org::query_gsi2(&h, "o1").collection::<OrgItems>().count().await?;
        assert_eq!(count, want.len() + 1, "{phase:?}: count");
        // The table's partition `ORG#o1` holds the new copies only: refused while the
        // phase reads the old ones (it would miss `late` and read copies not yet in step).
        let partition = Org::partition(&h, "o1").collection::<OrgItems>().all().await;
        match partition {
            Err(Error::Rekey {
                entity: "Member",
                problem: RekeyProblem::Unsupported { phase: p, .. },
            }) if reads_old => {
                assert_eq!(p, phase);
            }
            Ok(items) if !reads_old => assert_eq!(&members_of(&items), want, "{phase:?}"),
            other => panic!("{phase:?}: {other:?}"),
        }
        // A projection of the table's key is refused the same way.
        let projected = Member::query(&h, "o1").project::<serde_json::Value>([Member::NAME.path()]);
        let projected = projected.all().await;
        assert_eq!(projected.is_err(), reads_old, "{phase:?}: {projected:?}");
        if let Ok(values) = projected {
            assert_eq!(values.len(), want.len(), "{phase:?}");
        }
    }
    // An entity's collection without a re-keyed variant is not refused.
    let alone = Org::partition(&db, "o1").collection_only::<OrgOnly>().all().await?;
    assert!(matches!(&alone[..], [OrgOnly::Org(o)] if o.org == "o1"), "{alone:?}");
    Ok(())
}

#[derive(Collection, Debug)]
enum OrgOnly {
    Org(Org),
}

/// A note whose sort key changes: both copies of a note are in the same partition, so a
/// query of the table's key after the switch would find both.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(
    table = App,
    pk = "USER#<user>",
    sk = "NOTE#<id>",
    rekey(pk = "USER#<user>", sk = "NOTE#OLD#<id>")
)]
struct Note {
    user: String,
    id: String,
    text: String,
}

#[tokio::test]
async fn a_table_key_query_after_the_switch_reads_the_new_copies() -> Result<(), Error> {
    let db = db::<App>().await;
    let both = db.clone().with_rekey_phase::<Note>(RekeyPhase::WriteBoth);
    for id in 0..5 {
        Note { user: "u1".into(), id: format!("n{id}"), text: format!("note {id}") }
            .create(&both)
            .await?;
    }
    let copies = (raw(&db, "USER#u1", "NOTE#OLD#n3").await, raw(&db, "USER#u1", "NOTE#n3").await);
    assert!(copies.0.is_some() && copies.1.is_some(), "{copies:?}");
    // The query's range (`begins_with(sk, "NOTE#")`) holds both copies of each note.
    assert_eq!(Note::query(&both, "u1").items().all().await?.len(), 10, "both copies");
    for phase in [RekeyPhase::ReadNew, RekeyPhase::New] {
        let h = db.clone().with_rekey_phase::<Note>(phase);
        let notes = Note::query(&h, "u1").page_size(3).all().await?;
        let ids: Vec<&str> = notes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(ids, ["n0", "n1", "n2", "n3", "n4"], "{phase:?}");
        assert_eq!(Note::query(&h, "u1").count().await?, 5, "{phase:?}");
        assert_eq!(h.scan::<Note>().count().await?, 5, "{phase:?}");
    }
    for phase in [RekeyPhase::Old, RekeyPhase::WriteBoth] {
        let h = db.clone().with_rekey_phase::<Note>(phase);
        let err = Note::query(&h, "u1").count().await.unwrap_err();
        assert!(matches!(err, Error::Rekey { problem: RekeyProblem::Unsupported { .. }, .. }));
        assert_eq!(h.scan::<Note>().all().await?.len(), 5, "{phase:?}");
    }
    Ok(())
}

/// A re-keyed entity with a list and a map.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "DOC#<id>", sk = "DOC", rekey(pk = "D#<id>", sk = "DOC"))]
struct Doc {
    id: String,
    tags: Vec<String>,
    props: BTreeMap<String, String>,
}

fn doc(id: &str) -> Doc {
    let props = [("colour", "red"), ("size", "s")].map(|(k, v)| (k.to_owned(), v.to_owned()));
    Doc { id: id.into(), tags: vec!["a".into(), "b".into()], props: props.into() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_copy_sees_a_change_inside_a_map_or_a_list() -> Result<(), Error> {
    let db = db::<App>().await;
    for id in ["list", "map", "same"] {
        doc(id).create(&db).await?;
    }
    let both = db.clone().with_rekey_phase::<Doc>(RekeyPhase::WriteBoth);
    // Between the copy's scan and its transaction, a writer changes one element of a list
    // and one entry of a map: the attributes' names and sizes stay, their values do not.
    let writer = both.clone();
    let handle = tokio::runtime::Handle::current();
    let hook = after_scan(move || {
        handle.block_on(async {
            let tags = Doc::TAGS.index::<String>(1);
            Doc::update(&writer, "list").set(tags, "B".to_owned()).await.unwrap();
            let colour = Doc::PROPS.entry("colour");
            Doc::update(&writer, "map").set(colour, "blue".to_owned()).await.unwrap();
        })
    });
    let runner = both.clone().with_interceptor(hook);
    let report = runner.rekey::<Doc>().segments(1).await?;
    assert_eq!((report.counts.changed, report.counts.copied), (2, 3), "{:?}", report.counts);
    let read_new = db.clone().with_rekey_phase::<Doc>(RekeyPhase::ReadNew);
    let mut list = doc("list");
    list.tags[1] = "B".into();
    let mut map = doc("map");
    map.props.insert("colour".into(), "blue".into());
    for want in [list, map, doc("same")] {
        let got = Doc::get(&read_new, &want.id).await?;
        assert_eq!(got.as_ref(), Some(&want), "the new copy of {}", want.id);
    }
    Ok(())
}
