//! Trees with the closure strategy (seed 002's replication pattern): the seed's drives with
//! the exact result sets it states, request counts, refused writes, copies kept in sync,
//! moves and deletes large and small, interrupted moves resumed after every request, and a
//! model-based property test.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use ddb_model::prelude::*;
use ddb_model::tree::{OpKind, OpPhase, Progress, TreeProblem};
use ddb_model::{ClosureTree, DefaultTable, Op};
use futures_util::TryStreamExt;

use crate::faults::{calls, fail_from, faulty_client};
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

    let before = snapshot(&db).await;
    // Missing parent: refused, nothing written.
    let err = tree.insert(&Dir::new("d", "x", Some("nothing"))).await.unwrap_err();
    assert_eq!(tree_problem(&err), &TreeProblem::NoParent { parent: "nothing".into() });
    assert!(err.is_parent_missing() && !err.is_node_missing());
    // Duplicate id, anywhere in the tree: the entity's own error.
    let err = tree.insert(&Dir::new("d", "a", Some("b"))).await.unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    let err = tree.insert(&Dir::new("d", "b", None)).await.unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    // Its own parent.
    let err = tree.insert(&Dir::new("d", "self", Some("self"))).await.unwrap_err();
    assert!(matches!(tree_problem(&err), TreeProblem::Cycle { .. }), "{err}");
    // A node of another tree, before any request.
    db.reset_requests();
    let err = tree.insert(&Dir::new("other", "z", Some("a"))).await.unwrap_err();
    assert!(matches!(tree_problem(&err), TreeProblem::OtherTree { .. }));
    assert!(err.is_invalid_input());
    assert_eq!(db.requests().total(), 0);
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

    // Refused moves write nothing.
    let before = snapshot(&db).await;
    let err = tree.move_subtree("C", "d").await.unwrap_err();
    assert_eq!(tree_problem(&err), &TreeProblem::Cycle { node: "C".into(), parent: "d".into() });
    assert!(err.is_tree_cycle() && !err.is_tree_too_deep());
    let err = tree.move_subtree("C", "C").await.unwrap_err();
    assert!(matches!(tree_problem(&err), TreeProblem::Cycle { .. }));
    let err = tree.move_subtree("IV", "nothing").await.unwrap_err();
    assert_eq!(tree_problem(&err), &TreeProblem::NoParent { parent: "nothing".into() });
    let err = tree.move_subtree("nothing", "C").await.unwrap_err();
    assert_eq!(tree_problem(&err), &TreeProblem::NoNode { id: "nothing".into() });
    assert!(err.is_node_missing() && !err.is_parent_missing());
    assert_eq!(snapshot(&db).await, before);

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

/// The acceptance test of the protocol for the closure strategy: a large move whose
/// connection dies for good after `k` requests, for every `k` the move sends; then `resume`
/// (or, when the move had not started, the move again). Meanwhile no node is ever missing
/// from the subtree of its old or its new place, and at the end the tree is exactly the
/// moved tree.
#[tokio::test]
async fn interrupted_moves_resume_after_every_request() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let setup = |owner: String| {
        let db = db.clone();
        async move {
            let tree = Dir::tree(&db, &owner);
            build(&tree, &owner, &[("src", None), ("dst", None)]).await;
            tree.insert(&Dir::new(&owner, "w", Some("src"))).await.expect("w");
            wide(&tree, &owner, "w", 60).await
        }
    };
    // How many requests a clean move sends.
    let total = {
        let nodes = setup("clean".into()).await;
        assert_eq!(nodes.len(), 60);
        let plan = fail_from(u64::MAX);
        let faulty: Db = Db::with_table_name(faulty_client(&plan), db.table_name());
        let report =
            Dir::tree(&faulty, "clean").move_subtree("w", "dst").transaction_limit(0).await?;
        assert!(report.resumable);
        calls(&plan)
    };
    assert!(total > 10, "a 60-node move sends {total} requests");

    for k in 0..total {
        let owner = format!("k{k}");
        let nodes = setup(owner.clone()).await;
        let clean = Dir::tree(&db, &owner);
        let plan = fail_from(k);
        let faulty: Db = Db::with_table_name(faulty_client(&plan), db.table_name());
        let result = Dir::tree(&faulty, &owner).move_subtree("w", "dst").transaction_limit(0).await;
        assert!(result.is_err(), "k = {k}: the move cannot finish without its connection");

        // No node is lost: each is below src or below dst (or both).
        let below_src = id_set(&clean.descendants("src").query().consistent().all().await?);
        let below_dst = id_set(&clean.descendants("dst").query().consistent().all().await?);
        for node in &nodes {
            assert!(
                below_src.contains(node) || below_dst.contains(node),
                "k = {k}: {node} is missing"
            );
        }
        if clean.resume(|_| {}).await?.is_none()
            || clean.get("w").consistent().await?.and_then(|w| w.parent).as_deref() == Some("src")
        {
            assert_eq!(clean.pending().await?, None);
            clean.move_subtree("w", "dst").await?;
        }
        assert_eq!(clean.pending().await?, None);
        assert_eq!(clean.subtree_size("src").await?, 1, "k = {k}");
        let moved = id_set(&clean.descendants("dst").query().consistent().all().await?);
        assert_eq!(moved, nodes.iter().cloned().collect::<BTreeSet<_>>(), "k = {k}");
        assert_eq!(clean.nodes().consistent().count().await?, 62, "k = {k}: no duplicate");
        assert_eq!(ids(&clean.ancestors("w-c02-g3").await?), ["dst", "w", "w-c02"]);
    }
    Ok(())
}

#[tokio::test]
async fn pending_operations_refuse_conflicting_writes_and_roll_back() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Dir::tree(&db, "busy");
    build(&tree, "busy", &[("src", None), ("dst", None), ("other", None)]).await;
    tree.insert(&Dir::new("busy", "w", Some("src"))).await?;
    let nodes = wide(&tree, "busy", "w", 40).await;
    let original = all_ids(&tree).await;
    let items = snapshot(&db).await.len();

    // Interrupt the move in its copy phase: after the intent (1), the checks (4) and the
    // phase (1); its fenced transaction of copies fails.
    let plan = fail_from(6);
    let faulty: Db = Db::with_table_name(faulty_client(&plan), db.table_name());
    Dir::tree(&faulty, "busy").move_subtree("w", "dst").transaction_limit(0).await.unwrap_err();
    let op = tree.pending().await?.expect("an interrupted move");
    assert_eq!(op.kind, OpKind::MoveNode { node: "w".into(), parent: Some("dst".into()) });
    assert_eq!(op.phase, OpPhase::Copy);

    // Inserts under the moving subtree are refused; elsewhere (the destination too) they pass.
    for parent in ["w", "w-c01"] {
        let err = tree.insert(&Dir::new("busy", "new", Some(parent))).await.unwrap_err();
        assert!(matches!(tree_problem(&err), TreeProblem::Busy { .. }), "{parent}: {err}");
    }
    tree.insert(&Dir::new("busy", "new", Some("other"))).await?;
    // Moves and deletes wait for the operation.
    let err = tree.move_subtree("new", "src").await.unwrap_err();
    assert!(matches!(tree_problem(&err), TreeProblem::Busy { .. }), "{err}");
    let err = tree.delete_subtree("new").await.unwrap_err();
    assert!(matches!(tree_problem(&err), TreeProblem::Busy { .. }), "{err}");

    // Roll back: the new copies go, the old ones stay.
    let report = tree.rollback().await?.expect("rolled back");
    assert_eq!(report.nodes, nodes.len());
    assert!(tree.resume(|_| {}).await?.is_none());
    assert!(tree.pending().await?.is_none());
    let mut expected = original.clone();
    expected.insert("new".into());
    assert_eq!(all_ids(&tree).await, expected);
    assert_eq!(tree.subtree_size("dst").await?, 1);
    assert_eq!(snapshot(&db).await.len(), items + 4, "the new node's items, no copy left over");

    // Interrupted after its copy phase, a move can only be finished.
    let plan = fail_from(8);
    let faulty: Db = Db::with_table_name(faulty_client(&plan), db.table_name());
    Dir::tree(&faulty, "busy").move_subtree("w", "dst").transaction_limit(0).await.unwrap_err();
    let op = tree.pending().await?.expect("an interrupted move");
    assert_ne!(op.phase, OpPhase::Copy);
    let err = tree.rollback().await.unwrap_err();
    assert!(matches!(tree_problem(&err), TreeProblem::CannotRollBack { .. }));
    tree.resume(|_| {}).await?.expect("resumed");
    assert_eq!(tree.subtree_size("dst").await?, 41);
    Ok(())
}

mod model_based {
    //! Random sequences of inserts, moves and deletes (transactional and through the
    //! protocol) against an in-memory model of the tree; after every few steps the children,
    //! descendants (with depth ranges), ancestors and levels of every node agree with it.

    use std::collections::{BTreeMap, BTreeSet};
    use std::sync::atomic::{AtomicUsize, Ordering};

    use ddb_model::tree::TreeProblem;
    use ddb_model::{ClosureTree, DefaultTable, Error};
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestCaseError, TestRunner};

    use crate::model::Dir;
    use crate::support::db;

    /// Ids that need escaping, and few enough to collide.
    const IDS: [&str; 7] = ["a", "a b", "b", "x/y", "c#d", "e", "f"];

    #[derive(Debug, Clone)]
    enum Step {
        Insert { id: usize, parent: usize },
        Move { node: usize, parent: usize, protocol: bool },
        Delete { node: usize, protocol: bool },
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => (0..IDS.len(), any::<usize>()).prop_map(|(id, parent)| Step::Insert { id, parent }),
            2 => (any::<usize>(), any::<usize>(), any::<bool>())
                .prop_map(|(node, parent, protocol)| Step::Move { node, parent, protocol }),
            1 => (any::<usize>(), any::<bool>()).prop_map(|(node, protocol)| Step::Delete { node, protocol }),
        ]
    }

    /// id -> parent.
    type Model = BTreeMap<String, Option<String>>;

    fn pick(model: &Model, i: usize) -> Option<String> {
        model.keys().nth(i % (model.len() + 1)).cloned()
    }

    fn chain(model: &Model, id: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = model.get(id).cloned().flatten();
        while let Some(c) = cur {
            cur = model.get(&c).cloned().flatten();
            out.push(c);
        }
        out.reverse();
        out
    }

    fn depth_below(model: &Model, id: &str, anc: &str) -> Option<usize> {
        let up = chain(model, id);
        up.iter().position(|a| a == anc).map(|i| up.len() - i)
    }

    fn fail(message: String) -> TestCaseError {
        TestCaseError::fail(message)
    }

    async fn apply(
        tree: &ClosureTree<'_, Dir>,
        owner: &str,
        model: &mut Model,
        step: &Step,
    ) -> Result<(), TestCaseError> {
        match step {
            Step::Insert { id, parent } => {
                let id = IDS[*id].to_owned();
                let parent = pick(model, *parent);
                let result = tree.insert(&Dir::new(owner, &id, parent.as_deref())).await;
                if parent.as_deref() == Some(id.as_str()) {
                    prop_assert!(
                        matches!(
                            &result,
                            Err(Error::Tree { problem: TreeProblem::Cycle { .. }, .. })
                        ),
                        "{result:?}"
                    );
                } else if let std::collections::btree_map::Entry::Vacant(slot) =
                    model.entry(id.clone())
                {
                    result.map_err(|e| fail(format!("insert {id:?} under {parent:?}: {e}")))?;
                    slot.insert(parent);
                } else {
                    prop_assert!(
                        result.as_ref().is_err_and(Error::is_already_exists),
                        "{result:?}"
                    );
                }
            }
            Step::Move { node, parent, protocol } => {
                let Some(node) = pick(model, *node) else { return Ok(()) };
                let parent = pick(model, *parent);
                let mut mv = match &parent {
                    Some(p) => tree.move_subtree(node.as_str(), p.as_str()),
                    None => tree.move_to_top(node.as_str()),
                };
                if *protocol {
                    mv = mv.transaction_limit(0);
                }
                let result = mv.await;
                let cycle =
                    parent.as_ref().is_some_and(|p| *p == node || chain(model, p).contains(&node));
                if cycle {
                    prop_assert!(
                        matches!(
                            &result,
                            Err(Error::Tree { problem: TreeProblem::Cycle { .. }, .. })
                        ),
                        "{result:?}"
                    );
                } else {
                    let report =
                        result.map_err(|e| fail(format!("move {node:?} under {parent:?}: {e}")))?;
                    let size = model
                        .keys()
                        .filter(|k| **k == node || chain(model, k).contains(&node))
                        .count();
                    prop_assert_eq!(report.nodes, size);
                    model.insert(node, parent);
                }
            }
            Step::Delete { node, protocol } => {
                let Some(node) = pick(model, *node) else { return Ok(()) };
                let mut delete = tree.delete_subtree(node.as_str());
                if *protocol {
                    delete = delete.transaction_limit(0);
                }
                let report = delete.await.map_err(|e| fail(format!("delete {node:?}: {e}")))?;
                let gone: Vec<String> = model
                    .keys()
                    .filter(|k| **k == node || chain(model, k).contains(&node))
                    .cloned()
                    .collect();
                prop_assert_eq!(report.nodes, gone.len());
                for g in gone {
                    model.remove(&g);
                }
            }
        }
        Ok(())
    }

    fn ids(nodes: &[Dir]) -> BTreeSet<String> {
        nodes.iter().map(|d| d.id.clone()).collect()
    }

    async fn check(
        tree: &ClosureTree<'_, Dir>,
        model: &Model,
        seed: usize,
    ) -> Result<(), TestCaseError> {
        let err = |e: Error| fail(e.to_string());
        let all = tree.nodes().consistent().all().await.map_err(err)?;
        prop_assert_eq!(all.len(), model.len(), "one copy per node under the tree");
        prop_assert_eq!(ids(&all), model.keys().cloned().collect::<BTreeSet<_>>());
        for d in &all {
            prop_assert_eq!(&d.parent, &model[&d.id]);
        }
        for depth in 1..4 {
            let level = tree.at_depth(depth).consistent().all().await.map_err(err)?;
            let expected: BTreeSet<String> =
                model.keys().filter(|k| chain(model, k).len() + 1 == depth).cloned().collect();
            prop_assert_eq!(ids(&level), expected, "depth {}", depth);
        }
        for (i, id) in model.keys().enumerate() {
            let (lo, hi) = ((i + seed) % 3, (i + seed) % 3 + (i % 2));
            let ranged = tree
                .descendants(id.as_str())
                .depth(lo..=hi)
                .query()
                .consistent()
                .all()
                .await
                .map_err(err)?;
            let expected: BTreeSet<String> = model
                .keys()
                .filter(|k| {
                    let d = if *k == id { Some(0) } else { depth_below(model, k, id) };
                    d.is_some_and(|d| (lo..=hi).contains(&d))
                })
                .cloned()
                .collect();
            prop_assert_eq!(ids(&ranged), expected, "depth {}..={} below {:?}", lo, hi, id);
            let children = tree.children(id.as_str()).consistent().all().await.map_err(err)?;
            let expected: BTreeSet<String> = model
                .iter()
                .filter(|(_, p)| p.as_deref() == Some(id))
                .map(|(k, _)| k.clone())
                .collect();
            prop_assert_eq!(ids(&children), expected);
            let up = tree.ancestors(id.as_str()).await.map_err(err)?;
            let up: Vec<String> = up.iter().map(|d| d.id.clone()).collect();
            prop_assert_eq!(up, chain(model, id));
            let size = tree.subtree_size(id.as_str()).await.map_err(err)?;
            prop_assert_eq!(
                size as usize,
                1 + model.keys().filter(|k| chain(model, k).contains(id)).count()
            );
        }
        Ok(())
    }

    #[test]
    fn random_operations_agree_with_a_model() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let db = rt.block_on(db::<DefaultTable>());
        let runs = AtomicUsize::new(0);
        let cases =
            std::env::var("TREE_MODEL_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(12);
        let mut runner =
            TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
        let result = runner.run(&prop::collection::vec(step(), 1..24), |steps| {
            let run = runs.fetch_add(1, Ordering::SeqCst);
            let owner = format!("model{run}");
            rt.block_on(async {
                let tree = Dir::tree(&db, &owner);
                let mut model = Model::new();
                for (i, step) in steps.iter().enumerate() {
                    apply(&tree, &owner, &mut model, step).await?;
                    if i % 4 == 3 || i + 1 == steps.len() {
                        check(&tree, &model, i).await?;
                    }
                }
                prop_assert!(tree.pending().await.map_err(|e| fail(e.to_string()))?.is_none());
                Ok(())
            })
        });
        if let Err(e) = result {
            panic!("{e}");
        }
    }
}
