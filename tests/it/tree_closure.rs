//! Trees with the closure strategy (seed 002's replication pattern): the seed's drives with
//! the exact result sets it states, request counts, copies kept in sync, moves and deletes
//! large and small. What every strategy shares (refused writes, interrupted operations
//! resumed after every request, pending operations, random operations against a model) is
//! tested once for all in `tree_conformance.rs`.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use ddb_model::prelude::*;
use ddb_model::testing::{Faults, Harness};
use ddb_model::tree::{OpPhase, Progress, TreeProblem};
use ddb_model::{DefaultTable, Op, error::RequestProblem, tree::ClosureTree};
use futures_util::TryStreamExt;
use serde::{Deserialize, Serialize};

use crate::model::{App, Dir, Staff};
use crate::support::{db, snapshot};

fn ids(nodes: &[Dir]) -> Vec<String> {
    nodes.iter().map(|d| d.id.clone()).collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn id_set(nodes: &[Dir]) -> BTreeSet<String> {
    nodes.iter().map(|d| d.id.clone()).collect()
}

fn tree_problem(err: &Error) -> &TreeProblem {
    match err {
        Error::Tree { problem, .. } => problem,
        other => panic!("expected a tree error, got {other:?}"),
    }
}

/// Seed 002: drives C and D, as (id, parent).
const DRIVES: [(&str, Option<&str>); 15] = [
    ("C", None),
    ("I", Some("C")),
    ("II", Some("C")),
    ("D", None),
    ("III", Some("D")),
    ("a", Some("III")),
    ("b", Some("III")),
    ("IV", Some("D")),
    ("c", Some("IV")),
    ("V", Some("D")),
    ("d", Some("V")),
    ("i", Some("d")),
    ("ii", Some("d")),
    ("iii", Some("d")),
    ("e", Some("V")),
];

async fn build(tree: &ClosureTree<'_, Dir>, owner: &str, nodes: &[(&str, Option<&str>)]) {
    for (id, parent) in nodes {
        tree.insert(&Dir::new(owner, id, *parent)).await.expect("insert");
    }
}

async fn all_ids(tree: &ClosureTree<'_, Dir>) -> BTreeSet<String> {
    id_set(&tree.nodes().consistent().all().await.expect("nodes"))
}

#[tokio::test]
async fn seed_002_replication_pattern() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Dir::tree(&db, "fs");
    build(&tree, "fs", &DRIVES).await;

    // The items directly below V: d and e; one query reading only them.
    db.reset_requests();
    let children = tree.children("V").all().await?;
    assert_eq!(ids(&children), ["d", "e"]);
    assert_eq!(db.requests().get(Op::Query), 1);
    assert_eq!(db.requests().total(), 1);
    assert_eq!(db.requests().items_read(), 2, "only the children are read");

    // Everything below V: d, i, ii, iii and e; one query.
    db.reset_requests();
    let below = tree.descendants("V").all().await?;
    assert_eq!(id_set(&below), set(&["d", "i", "ii", "iii", "e"]));
    assert_eq!(below.len(), 5);
    assert_eq!(db.requests().total(), 1);
    assert_eq!(db.requests().items_read(), 5);

    // Two levels below D: III, a, b, IV, c, V, d and e, not i, ii, iii; ONE query.
    db.reset_requests();
    let two = tree.descendants("D").depth(1..=2).all().await?;
    assert_eq!(ids(&two), ["III", "IV", "V", "a", "b", "c", "d", "e"], "level by level");
    assert_eq!(db.requests().get(Op::Query), 1);
    assert_eq!(db.requests().total(), 1);
    assert_eq!(db.requests().items_read(), 8, "exactly the two levels are read");
    assert_eq!(tree.descendants("D").depth(1..=2).count().await?, 8);

    // Skipping a level, the node itself, empty ranges, pages.
    db.reset_requests();
    let deep = tree.descendants("D").depth(2..).all().await?;
    assert_eq!(ids(&deep), ["a", "b", "c", "d", "e", "i", "ii", "iii"]);
    assert_eq!(db.requests().items_read(), 8, "the first level is not read");
    assert_eq!(ids(&tree.descendants("D").depth(3..=3).all().await?), ["i", "ii", "iii"]);
    let with_self = tree.descendants("d").depth(0..=1).all().await?;
    assert_eq!(ids(&with_self), ["d", "i", "ii", "iii"]);
    assert!(tree.descendants("D").depth(3..3).all().await?.is_empty());
    assert!(tree.descendants("D").depth(..0).all().await?.is_empty());
    let streamed: Vec<Dir> =
        tree.descendants("D").depth(1..).query().page_size(2).stream().try_collect().await?;
    assert_eq!(streamed.len(), 11);
    // The copies carry the node's fields.
    assert!(streamed.iter().all(|d| d.name == format!("Folder {}", d.id)));

    // Nodes at a depth: the copies under the tree.
    db.reset_requests();
    assert_eq!(ids(&tree.roots().all().await?), ["C", "D"]);
    assert_eq!(ids(&tree.at_depth(3).all().await?), ["a", "b", "c", "d", "e"]);
    assert_eq!(db.requests().get(Op::Query), 2);
    assert_eq!(db.requests().items_read(), 7);
    assert_eq!(tree.nodes().count().await?, 15);

    // Ancestors: the own copy names them, one BatchGetItem reads them.
    db.reset_requests();
    let up = tree.ancestors("ii").await?;
    assert_eq!(ids(&up), ["D", "V", "d"]);
    assert_eq!(db.requests().get(Op::GetItem), 1);
    assert_eq!(db.requests().get(Op::BatchGetItem), 1);
    assert_eq!(db.requests().total(), 2);
    assert_eq!(ids(&tree.breadcrumbs("ii").await?), ["D", "V", "d", "ii"]);
    assert!(tree.ancestors("D").await?.is_empty());
    assert!(tree.ancestors("nothing").await?.is_empty());
    assert_eq!(tree.parent("ii").await?.map(|d| d.id), Some("d".into()));
    assert!(tree.parent("D").await?.is_none());
    assert_eq!(tree.get("ii").await?.map(|d| d.name), Some("Folder ii".into()));

    // Subtree sizes: one count query.
    db.reset_requests();
    assert_eq!(tree.subtree_size("V").await?, 6);
    assert_eq!(db.requests().total(), 1);
    assert_eq!(tree.subtree_size("C").await?, 3);
    assert_eq!(tree.subtree_size("nothing").await?, 0);

    // Copies are not the entity: the entity's own queries never return them.
    assert_eq!(Dir::partition(&db, "fs").all().await?.len(), 15);
    // Other partitions are other trees.
    assert!(Dir::tree(&db, "other").roots().all().await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn inserts_are_checked_in_their_transaction() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Dir::tree(&db, "d");
    db.reset_requests();
    tree.insert(&Dir::new("d", "root", None)).await?;
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert_eq!(db.requests().total(), 1, "a top-level node needs no read");
    db.reset_requests();
    tree.insert(&Dir::new("d", "a", Some("root"))).await?;
    assert_eq!(db.requests().get(Op::GetItem), 1, "the parent's own copy names the ancestors");
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert_eq!(db.requests().total(), 2);
    tree.insert(&Dir::new("d", "b", Some("a"))).await?;

    // Refused inserts (missing parent, an id taken anywhere in the tree, another tree):
    // `tree_conformance.rs`.
    let before = snapshot(&db).await;
    // Its own parent.
    let err = tree.insert(&Dir::new("d", "self", Some("self"))).await.unwrap_err();
    assert!(matches!(tree_problem(&err), TreeProblem::Cycle { .. }), "{err}");
    // An id too long for the copies' keys: refused before the transaction.
    let long = "x".repeat(600);
    db.reset_requests();
    let err = tree.insert(&Dir::new("d", &long, Some("a"))).await.unwrap_err();
    assert!(err.is_invalid_input(), "{err}");
    assert_eq!(db.requests().get(Op::TransactWriteItems), 0);
    assert_eq!(snapshot(&db).await, before);

    // Ids with separators are escaped: "a#b" is not below "a".
    tree.insert(&Dir::new("d", "a#b", Some("root"))).await?;
    assert_eq!(ids(&tree.children("root").all().await?), ["a", "a#b"]);
    assert_eq!(ids(&tree.children("a").all().await?), ["b"]);
    Ok(())
}

#[tokio::test]
async fn depth_limit_and_versions() -> Result<(), Error> {
    let db = db::<App>().await;
    let tree = Staff::tree(&db, "acme");
    let mut parent: Option<String> = None;
    for level in 1..=8 {
        let mut s = Staff {
            org: "acme".into(),
            id: format!("s{level}"),
            manager: parent.clone(),
            title: format!("level {level}"),
            version: 0,
        };
        tree.insert(&mut s).await?;
        assert_eq!(s.version, 1, "a versioned node gets its version");
        parent = Some(s.id);
    }
    let before = snapshot(&db).await;
    let err = tree
        .insert(&Staff {
            org: "acme".into(),
            id: "s9".into(),
            manager: parent,
            title: "too deep".into(),
            version: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(tree_problem(&err), &TreeProblem::TooDeep { id: "s9".into(), depth: 9, max: 8 });
    assert!(err.is_tree_too_deep() && !err.is_tree_cycle());
    assert_eq!(snapshot(&db).await, before);

    // Copies stay out of the entity's own index: the user index has one item per node.
    assert_eq!(Staff::query_gsi1(&db, "level 3").all().await?.len(), 1);

    // `replace` rewrites the node and every copy in one transaction.
    let mut s3 = tree.get("s3").await?.expect("s3");
    s3.title = "Head of things".into();
    db.reset_requests();
    tree.replace(&mut s3).await?;
    assert_eq!(s3.version, 2);
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert_eq!(db.requests().total(), 2);
    let below_s2 = tree.children("s2").all().await?;
    assert_eq!(below_s2[0].title, "Head of things");
    assert_eq!(below_s2[0].version, 2);
    assert_eq!(tree.descendants("s1").depth(2..=2).all().await?[0].title, "Head of things");
    assert_eq!(tree.at_depth(3).all().await?[0].title, "Head of things");
    // A stale version is refused, nothing written.
    let before = snapshot(&db).await;
    let mut stale = s3.clone();
    stale.version = 1;
    let err = tree.replace(&mut stale).await.unwrap_err();
    assert!(err.is_version_conflict(), "{err}");
    // A replace that would move the node is refused.
    let mut moved = s3.clone();
    moved.manager = Some("s1".into());
    let err = tree.replace(&mut moved).await.unwrap_err();
    assert_eq!(tree_problem(&err), &TreeProblem::ParentChanged { id: "s3".into() });
    assert!(err.is_invalid_input());
    assert_eq!(snapshot(&db).await, before);

    // A plain entity write changes the entity item only (documented): the copies keep the
    // old fields until the tree's `replace`.
    let mut plain = s3.clone();
    plain.title = "plain".into();
    plain.replace(&db).await?;
    assert_eq!(tree.get("s3").await?.map(|s| s.title), Some("plain".into()));
    assert_eq!(tree.children("s2").all().await?[0].title, "Head of things");
    Ok(())
}

#[tokio::test]
async fn small_moves_and_deletes_are_one_transaction() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Dir::tree(&db, "fs");
    build(&tree, "fs", &DRIVES).await;

    // Move V (6 nodes) from D to C.
    db.reset_requests();
    let report = tree.move_subtree("V", "C").await?;
    assert_eq!((report.nodes, report.resumable), (6, false));
    let stats = db.requests();
    assert_eq!(stats.get(Op::TransactWriteItems), 1);
    // The node's and the new parent's own copies, the subtree, its own copies, a recount.
    assert_eq!(stats.get(Op::GetItem), 2);
    assert_eq!(stats.get(Op::Query), 2);
    assert_eq!(stats.get(Op::BatchGetItem), 1);
    assert_eq!(stats.total(), 6);
    assert_eq!(
        id_set(&tree.descendants("C").all().await?),
        set(&["I", "II", "V", "d", "e", "i", "ii", "iii"])
    );
    assert_eq!(id_set(&tree.descendants("D").all().await?), set(&["III", "a", "b", "IV", "c"]));
    assert_eq!(ids(&tree.descendants("C").depth(3..).all().await?), ["i", "ii", "iii"]);
    assert_eq!(ids(&tree.ancestors("ii").await?), ["C", "V", "d"]);
    assert_eq!(tree.get("V").await?.and_then(|v| v.parent), Some("C".into()));
    assert_eq!(
        tree.children("C").all().await?.iter().find(|d| d.id == "V").and_then(|v| v.parent.clone()),
        Some("C".into())
    );
    assert_eq!(ids(&tree.at_depth(2).all().await?), ["I", "II", "III", "IV", "V"]);

    // Refused moves (cycles, missing parent or node): `tree_conformance.rs`.

    // To the top level, and back under a sibling at the same depth (copies shared by the
    // old and the new place stay).
    tree.move_to_top("d").await?;
    assert_eq!(ids(&tree.roots().all().await?), ["C", "D", "d"]);
    assert_eq!(ids(&tree.descendants("d").depth(1..=1).all().await?), ["i", "ii", "iii"]);
    tree.move_subtree("d", "e").await?;
    assert_eq!(ids(&tree.ancestors("iii").await?), ["C", "V", "e", "d"]);
    tree.move_subtree("d", "III").await?;
    assert_eq!(ids(&tree.breadcrumbs("i").await?), ["D", "III", "d", "i"]);
    assert!(tree.descendants("V").depth(2..).all().await?.is_empty());

    // A delete: every item of the subtree goes, in one transaction.
    db.reset_requests();
    let report = tree.delete_subtree("III").await?;
    assert_eq!((report.nodes, report.resumable), (7, false));
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert_eq!(all_ids(&tree).await, set(&["C", "I", "II", "V", "e", "D", "IV", "c"]));
    assert!(tree.get("a").await?.is_none());
    let err = tree.delete_subtree("III").await.unwrap_err();
    assert_eq!(tree_problem(&err), &TreeProblem::NoNode { id: "III".into() });
    // Nothing is left of it: every item of the table belongs to a remaining node.
    let items = snapshot(&db).await;
    for gone in ["III", "a", "b", "d", "i", "ii", "iii"] {
        let needle = format!("S(\"DIR#{gone}\")");
        let copy = format!("#{gone}\")");
        assert!(
            !items.iter().any(|i| i.contains(&needle) || i.contains(&copy)),
            "an item of {gone} is left"
        );
    }
    Ok(())
}

/// `n` nodes under `root` (children and grandchildren), inserted one by one.
async fn wide(tree: &ClosureTree<'_, Dir>, owner: &str, root: &str, n: usize) -> Vec<String> {
    let mut nodes = vec![root.to_owned()];
    let mut i = 0;
    while nodes.len() < n {
        let child = format!("{root}-c{i:02}");
        tree.insert(&Dir::new(owner, &child, Some(root))).await.expect("child");
        nodes.push(child.clone());
        for j in 0..9 {
            if nodes.len() < n {
                let grandchild = format!("{child}-g{j}");
                tree.insert(&Dir::new(owner, &grandchild, Some(&child))).await.expect("grandchild");
                nodes.push(grandchild);
            }
        }
        i += 1;
    }
    nodes
}

#[tokio::test]
async fn large_moves_use_the_resumable_protocol() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Dir::tree(&db, "big");
    build(&tree, "big", &[("src", None), ("dst", None), ("deep", Some("dst"))]).await;
    tree.insert(&Dir::new("big", "w", Some("src"))).await?;
    let nodes = wide(&tree, "big", "w", 120).await;
    assert_eq!(tree.subtree_size("w").await?, 120);

    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let log = Arc::clone(&seen);
    db.reset_requests();
    let report = tree
        .move_subtree("w", "deep")
        .on_progress(move |p| log.lock().expect("log").push(p))
        .await?;
    assert_eq!((report.nodes, report.resumable), (120, true));
    assert_eq!(db.requests().get(Op::BatchWriteItem), 0, "fenced transactions only");
    assert!(tree.pending().await?.is_none());
    assert_eq!(tree.subtree_size("deep").await?, 121);
    assert_eq!(tree.subtree_size("src").await?, 1);
    assert_eq!(tree.descendants("dst").depth(3..=3).count().await?, 12);
    assert_eq!(ids(&tree.ancestors("w-c03-g4").await?), ["dst", "deep", "w", "w-c03"]);
    assert_eq!(tree.get("w").await?.and_then(|w| w.parent), Some("deep".into()));
    let phases: Vec<OpPhase> = seen.lock().expect("log").iter().map(|p| p.phase).collect();
    assert!(phases.contains(&OpPhase::Copy) && phases.contains(&OpPhase::Switch));
    assert_eq!(phases.last(), Some(&OpPhase::Remove));
    let mut all = set(&["src", "dst", "deep"]);
    all.extend(nodes.iter().cloned());
    assert_eq!(all_ids(&tree).await, all);

    // A large delete, then the tree is what is left.
    let report = tree.delete_subtree("dst").transaction_limit(0).await?;
    assert_eq!((report.nodes, report.resumable), (122, true));
    assert_eq!(all_ids(&tree).await, set(&["src"]));
    let items = snapshot(&db).await;
    assert_eq!(items.len(), 3, "src: its item, its own copy, its copy under the tree");
    Ok(())
}

/// A closure node with a counter, a log, a version and an index on its title (copies stay
/// out of the index).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "TEAM#<org>", sk = "EMP#<id>", version = version)]
#[index(gsi1, pk = "TITLE#<title>", sk = "EMP#<id>")]
#[hierarchy(strategy = closure, parent = manager)]
struct Emp {
    org: String,
    id: String,
    manager: Option<String>,
    title: String,
    reports: u64,
    log: Vec<String>,
    #[serde(default)]
    version: u64,
}

impl Emp {
    fn new(org: &str, id: &str, manager: Option<&str>) -> Emp {
        Emp {
            org: org.into(),
            id: id.into(),
            manager: manager.map(Into::into),
            title: "Engineer".into(),
            reports: 0,
            log: Vec::new(),
            version: 0,
        }
    }
}

/// ceo > cto > (lead > dev, qa), ceo > cfo
const TEAM: [(&str, Option<&str>); 6] = [
    ("ceo", None),
    ("cto", Some("ceo")),
    ("cfo", Some("ceo")),
    ("lead", Some("cto")),
    ("dev", Some("lead")),
    ("qa", Some("lead")),
];

async fn team<'a>(db: &'a Db, org: &str) -> ClosureTree<'a, Emp> {
    let tree = Emp::tree(db, org);
    for (id, manager) in TEAM {
        tree.insert(&Emp::new(org, id, manager)).await.expect("insert");
    }
    tree
}

/// Every stored copy of `id` (its own copy, those under its ancestors and the one under the
/// tree) read through the tree's queries, and its entity item: all equal.
async fn assert_copies_agree(tree: &ClosureTree<'_, Emp>, id: &str) -> Emp {
    let node = tree.get(id).consistent().await.expect("get").expect("the node");
    let mut copies = Vec::new();
    let ancestors = tree.ancestors(id).await.expect("ancestors");
    for a in &ancestors {
        let below =
            tree.descendants(a.id.as_str()).query().consistent().all().await.expect("below");
        copies.extend(below.into_iter().filter(|n| n.id == id));
    }
    let own = tree.descendants(id).depth(0..=0).query().consistent().all().await.expect("own copy");
    copies.extend(own);
    let depth = ancestors.len() + 1;
    let level = tree.at_depth(depth).consistent().all().await.expect("level");
    copies.extend(level.into_iter().filter(|n| n.id == id));
    assert_eq!(copies.len(), depth + 1, "{id}: one copy per ancestor, its own, the tree's");
    for copy in &copies {
        assert_eq!(copy, &node, "{id}: a copy differs from the entity item");
    }
    node
}

#[tokio::test]
async fn typed_updates_rewrite_every_copy() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = team(&db, "t").await;

    db.reset_requests();
    tree.update("lead")
        .set(Emp::TITLE, "Staff engineer")
        .add(Emp::REPORTS, 2)
        .append(Emp::LOG, ["promoted".to_owned()])
        .await?;
    assert_eq!(db.requests().get(Op::GetItem), 1, "the own copy");
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert_eq!(db.requests().total(), 2);
    let lead = assert_copies_agree(&tree, "lead").await;
    assert_eq!((lead.title.as_str(), lead.reports, lead.version), ("Staff engineer", 2, 2));
    assert_eq!(lead.log, ["promoted"]);
    // The copies the access patterns return: children, the subtree, a depth, ancestors.
    let kids = tree.children("cto").all().await?;
    assert_eq!((kids[0].id.as_str(), kids[0].title.as_str()), ("lead", "Staff engineer"));
    let crumbs = tree.ancestors("dev").await?;
    assert_eq!(crumbs.iter().map(|e| e.reports).collect::<Vec<_>>(), [0, 0, 2]);
    // The index key follows the title on the entity item only.
    let staff = Emp::query_gsi1(&db, "Staff engineer").all().await?;
    assert_eq!(staff.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), ["lead"]);
    assert!(Emp::query_gsi1(&db, "Engineer").all().await?.iter().all(|e| e.id != "lead"));

    // Guards: version, condition, a missing node, the parent field; nothing written.
    let before = snapshot(&db).await;
    let err = tree.update("lead").set(Emp::TITLE, "x").expect_version(1).await.unwrap_err();
    assert!(err.is_version_conflict(), "{err}");
    let err = tree
        .update("lead")
        .set(Emp::TITLE, "x")
        .condition(Emp::REPORTS.eq(5u64))
        .await
        .unwrap_err();
    assert!(err.is_own_condition_failed(), "{err}");
    let err = tree.update("nobody").set(Emp::TITLE, "x").await.unwrap_err();
    assert!(err.is_node_missing(), "{err}");
    let err = tree.update("lead").set(Emp::MANAGER, Some("ceo".to_owned())).await.unwrap_err();
    assert!(matches!(tree_problem(&err), TreeProblem::ParentChanged { id } if id == "lead"));
    let err = tree.update("lead").remove(Emp::MANAGER).await.unwrap_err();
    assert!(matches!(tree_problem(&err), TreeProblem::ParentChanged { .. }), "{err}");
    assert_eq!(snapshot(&db).await, before, "nothing written");
    tree.update("lead").set(Emp::TITLE, "Principal").expect_version(2).await?;
    assert_eq!(assert_copies_agree(&tree, "lead").await.version, 3);
    // A top-level node: its own copy and the tree's.
    tree.update("ceo").add(Emp::REPORTS, 1).await?;
    assert_eq!(assert_copies_agree(&tree, "ceo").await.reports, 1);
    Ok(())
}

#[tokio::test]
async fn plain_updates_of_closure_nodes_are_refused_before_sending() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    team(&db, "p").await;
    let before = snapshot(&db).await;
    db.reset_requests();
    let refused = |err: &Error| {
        matches!(
            err,
            Error::InvalidRequest {
                problem: RequestProblem::UpdateCopies { entity: "Emp", through }, ..
            } if through.contains("tree(&db, ..).update(id)")
        ) && err.is_invalid_input()
    };
    let err = Emp::update(&db, "p", "dev").set(Emp::TITLE, "x").await.unwrap_err();
    assert!(refused(&err), "{err}");
    assert!(err.to_string().contains("Emp::tree(&db, ..).update(id)"), "{err}");
    let err = Emp::update(&db, "p", "dev").add(Emp::REPORTS, 1).no_return().await.unwrap_err();
    assert!(refused(&err), "{err}");
    let err = Emp::update(&db, "p", "dev").add(Emp::REPORTS, 1).await.unwrap_err();
    assert!(refused(&err), "{err}");
    let err = db.update(Emp::key("p", "dev")).set(Emp::TITLE, "x").await.unwrap_err();
    assert!(refused(&err), "{err}");
    let err = db
        .transaction()
        .update(Emp::key("p", "dev"), |u| u.set(Emp::TITLE, "x"))
        .await
        .unwrap_err();
    // In a transaction: the action's error, before sending.
    assert!(err.is_invalid_input() && err.to_string().contains("update(id)"), "{err}");
    assert_eq!(db.requests().total(), 0, "nothing sent");
    assert_eq!(snapshot(&db).await, before);
    Ok(())
}

/// Updates of a node while it moves back and forth: each update lands whole (on the item and
/// on every copy, under whichever ancestors the node has then) or is refused, and each `add`
/// counts once.
#[tokio::test]
async fn typed_updates_and_concurrent_moves() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = team(&db, "m").await;
    let updates = async {
        let mut applied = 0u64;
        for i in 0..24 {
            match tree.update("lead").add(Emp::REPORTS, 1).append(Emp::LOG, [i.to_string()]).await {
                Ok(()) => applied += 1,
                Err(e) if e.is_tree_changed() => {}
                Err(e) => panic!("update {i}: {e}"),
            }
        }
        applied
    };
    let moves = async {
        for i in 0..12 {
            let to = if i % 2 == 0 { "cfo" } else { "cto" };
            match tree.move_subtree("lead", to).await {
                Ok(_) => {}
                Err(e) if e.is_tree_changed() => {}
                Err(e) => panic!("move {i}: {e}"),
            }
        }
    };
    let (applied, ()) = tokio::join!(updates, moves);
    assert!(applied > 0, "some updates went through");
    let lead = assert_copies_agree(&tree, "lead").await;
    assert_eq!(lead.reports, applied, "each applied add once");
    assert_eq!(lead.log.len() as u64, applied);
    for id in ["dev", "qa"] {
        assert_copies_agree(&tree, id).await;
    }
    Ok(())
}

/// Lost responses: the SDK sends the update's transaction again with the same token, and the
/// service does not apply it twice.
#[tokio::test]
async fn typed_updates_are_applied_once_under_lost_responses() -> Result<(), Error> {
    let clean = db::<DefaultTable>().await;
    team(&clean, "f").await;
    let harness = Harness::on(clean.clone(), Faults::seeded(7).drop_after(0.1)).await?;
    let tree = Emp::tree(harness.db(), "f");
    for i in 0..40 {
        tree.update("dev").add(Emp::REPORTS, 1).append(Emp::LOG, [i.to_string()]).await?;
    }
    let lost = harness.proxy().counts().dropped_after;
    assert!(lost >= 5, "faults were injected: {lost}");
    let dev = assert_copies_agree(&Emp::tree(&clean, "f"), "dev").await;
    assert_eq!(dev.reports, 40);
    assert_eq!(dev.log, (0..40).map(|i| i.to_string()).collect::<Vec<_>>());
    Ok(())
}
