//! Trees (`#[hierarchy]`, path strategy): the seeds' examples with their exact result sets
//! and request counts, inserts, moves, renames and deletes large and small, concurrent inserts
//! and moves. What every strategy shares (refused writes, interrupted operations resumed
//! after every request, pending operations, random operations against a model) is tested
//! once for all in `tree_conformance.rs`.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use ddb_model::prelude::*;
use ddb_model::testing::{Faults, Harness};
use ddb_model::tree::{OpPhase, Progress, TreeProblem};
use ddb_model::{DefaultTable, Op, TreePath, tree::PathTree};
use futures_util::TryStreamExt;

use crate::model::{App, Category, Folder};
use crate::support::{db, raw, snapshot};

fn p(text: &str) -> TreePath {
    text.parse().expect("a valid path")
}

fn paths(nodes: &[Folder]) -> Vec<String> {
    nodes.iter().map(|f| f.path.to_string()).collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

async fn build(tree: &PathTree<'_, Folder>, drive: &str, nodes: &[&str]) {
    for path in nodes {
        tree.insert(&Folder::at(drive, path)).await.expect("insert");
    }
}

async fn all_paths(tree: &PathTree<'_, Folder>) -> BTreeSet<String> {
    tree.nodes()
        .consistent()
        .all()
        .await
        .expect("nodes")
        .iter()
        .map(|f| f.path.to_string())
        .collect()
}

fn tree_problem(err: &Error) -> &TreeProblem {
    match err {
        Error::Tree { problem, .. } => problem,
        other => panic!("expected a tree error, got {other:?}"),
    }
}

/// Seed 002: drives C and D.
const DRIVES: [&str; 15] = [
    "C",
    "C/I",
    "C/II",
    "D",
    "D/III",
    "D/III/a",
    "D/III/b",
    "D/IV",
    "D/IV/c",
    "D/V",
    "D/V/d",
    "D/V/d/i",
    "D/V/d/ii",
    "D/V/d/iii",
    "D/V/e",
];

#[tokio::test]
async fn seed_002_drive_folders() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Folder::tree(&db, "fs");
    build(&tree, "fs", &DRIVES).await;
    // A folder named "V/d" next to V, and one named "VI": neither is below V.
    build(&tree, "fs", &["D/V%2Fd", "D/VI"]).await;

    // The items directly below V: d and e, one query reading only them.
    db.reset_requests();
    let children = tree.children(&p("D/V")).all().await?;
    assert_eq!(paths(&children), ["D/V/d", "D/V/e"]);
    assert_eq!(db.requests().get(Op::Query), 1);
    assert_eq!(db.requests().total(), 1);
    assert_eq!(db.requests().items_read(), 2, "only the children are read");

    // Everything below V: d, i, ii, iii and e; one query.
    db.reset_requests();
    let below = tree.descendants(&p("D/V")).all().await?;
    assert_eq!(
        set(&["D/V/d", "D/V/d/i", "D/V/d/ii", "D/V/d/iii", "D/V/e"]),
        paths(&below).into_iter().collect()
    );
    assert_eq!(below.len(), 5);
    assert_eq!(db.requests().total(), 1);
    assert_eq!(db.requests().items_read(), 5);

    // Two levels below D: III, a, b, IV, c, V, d, e (not i, ii, iii); one query per level.
    db.reset_requests();
    let two = tree.descendants(&p("D")).depth(1..=2).all().await?;
    assert_eq!(
        paths(&two),
        [
            "D/III", "D/IV", "D/V", "D/V%2Fd", "D/VI", "D/III/a", "D/III/b", "D/IV/c", "D/V/d",
            "D/V/e"
        ]
    );
    assert_eq!(db.requests().get(Op::Query), 2);
    assert_eq!(db.requests().items_read(), 10, "exactly the two levels are read");
    assert_eq!(tree.descendants(&p("D")).depth(1..=2).count().await?, 10);

    // Skipping a level, including the node itself, open ranges.
    let from_two = tree.descendants(&p("D")).depth(2..).all().await?;
    assert_eq!(
        paths(&from_two).into_iter().collect::<BTreeSet<_>>(),
        set(&[
            "D/III/a",
            "D/III/b",
            "D/IV/c",
            "D/V/d",
            "D/V/d/i",
            "D/V/d/ii",
            "D/V/d/iii",
            "D/V/e"
        ])
    );
    let with_self = tree.descendants(&p("D/V/d")).depth(0..=1).all().await?;
    assert_eq!(paths(&with_self), ["D/V/d", "D/V/d/i", "D/V/d/ii", "D/V/d/iii"]);
    assert_eq!(tree.descendants(&p("D/V/d")).depth(0..).count().await?, 4);
    assert!(tree.descendants(&p("D")).depth(3..3).all().await?.is_empty());
    let streamed: Vec<Folder> =
        tree.descendants(&p("D")).depth(1..=3).page_size(2).stream().try_collect().await?;
    assert_eq!(streamed.len(), 13);

    // Roots and depths.
    assert_eq!(paths(&tree.roots().all().await?), ["C", "D"]);
    db.reset_requests();
    let level_two = tree.at_depth(2).all().await?;
    assert_eq!(paths(&level_two), ["C/I", "C/II", "D/III", "D/IV", "D/V", "D/V%2Fd", "D/VI"]);
    assert_eq!(db.requests().total(), 1);

    // Ancestors in one BatchGetItem, root first.
    db.reset_requests();
    let up = tree.ancestors(&p("D/V/d/ii")).await?;
    assert_eq!(paths(&up), ["D", "D/V", "D/V/d"]);
    assert_eq!(db.requests().get(Op::BatchGetItem), 1);
    assert_eq!(db.requests().total(), 1);
    assert_eq!(
        tree.parent(&p("D/V/d/ii")).await?.map(|f| f.path.to_string()),
        Some("D/V/d".into())
    );
    assert!(tree.parent(&p("D")).await?.is_none());

    // Subtree sizes.
    assert_eq!(tree.subtree_size(&p("D/V")).await?, 6);
    assert_eq!(tree.subtree_size(&p("C")).await?, 3);
    assert_eq!(tree.subtree_size(&p("D/nothing")).await?, 0);

    // Trees of other partitions are separate.
    let other = Folder::tree(&db, "other");
    assert!(other.roots().all().await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn seed_000_category_breadcrumbs() -> Result<(), Error> {
    let db = db::<App>().await;
    let tree = Category::tree(&db);
    let mut path: Option<TreePath> = None;
    for (segment, name) in [
        ("electronics", "Electronics"),
        ("computers", "Computers"),
        ("laptops", "Laptops"),
        ("gaming", "Gaming Laptops"),
    ] {
        let next = match &path {
            Some(p) => p.child(segment).expect("path"),
            None => TreePath::root(segment).expect("path"),
        };
        let mut category = Category { path: next.clone(), name: name.into(), version: 0 };
        tree.insert(&mut category).await?;
        assert_eq!(category.version, 1, "a versioned node gets its version");
        path = Some(next);
    }
    let gaming = path.expect("path");
    db.reset_requests();
    let crumbs = tree.breadcrumbs(&gaming).await?;
    assert_eq!(db.requests().total(), 1);
    let crumbs: Vec<(String, String, &str)> = crumbs
        .iter()
        .map(|c| (c.path.to_string(), c.path.name().to_owned(), c.name.as_str()))
        .collect();
    assert_eq!(
        crumbs,
        [
            ("electronics".into(), "electronics".into(), "Electronics"),
            ("electronics/computers".into(), "computers".into(), "Computers"),
            ("electronics/computers/laptops".into(), "laptops".into(), "Laptops"),
            ("electronics/computers/laptops/gaming".into(), "gaming".into(), "Gaming Laptops"),
        ]
    );
    // All laptop categories: the subtree of laptops.
    let laptops = tree.descendants(&p("electronics/computers/laptops")).all().await?;
    assert_eq!(laptops.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["Gaming Laptops"]);

    // The tree's own depth limit (6) is checked before anything is sent.
    let deep = p("electronics/computers/laptops/gaming/a/b/c");
    db.reset_requests();
    let err = tree
        .insert(&Category { path: deep, name: "too deep".into(), version: 0 })
        .await
        .unwrap_err();
    assert!(matches!(tree_problem(&err), TreeProblem::Path { .. }), "{err}");
    assert!(err.is_invalid_input());
    assert_eq!(db.requests().total(), 0);
    Ok(())
}

#[tokio::test]
async fn inserts_are_checked_in_their_transaction() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Folder::tree(&db, "d");
    build(&tree, "d", &["a", "a/b"]).await;
    let before = snapshot(&db).await;

    db.reset_requests();
    tree.insert(&Folder::at("d", "a/b/c")).await?;
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert_eq!(db.requests().total(), 1);
    // The parent's revision counts the insert.
    let parent = raw(&db, "DRIVE#d", "NODE#a%2Fb").await.expect("parent");
    assert!(parent.contains_key(ddb_model::tree::TREE_REV_ATTR), "{parent:?}");
    tree.delete_subtree(&p("a/b/c")).await?;
    assert_eq!(snapshot(&db).await.len(), before.len());

    // Refused inserts (missing parent, duplicate, another tree): `tree_conformance.rs`.

    // A folder may be called "a/b": it is a child of the root, not of "a".
    tree.insert(&Folder { drive: "d".into(), path: TreePath::root("a/b").expect("path") }).await?;
    assert_eq!(paths(&tree.roots().all().await?), ["a", "a%2Fb"]);
    assert_eq!(paths(&tree.children(&p("a")).all().await?), ["a/b"]);
    Ok(())
}

/// An insert's intent check asks only whether a large operation is under way (what costs
/// the service least); while one is, the insert is sent once more, asking whether the
/// operation involves its path.
#[tokio::test]
async fn an_insert_asks_about_its_path_only_while_an_operation_is_pending() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Folder::tree(&db, "op");
    build(&tree, "op", &["a", "a/x", "a/x/y", "b", "c"]).await;
    db.reset_requests();
    tree.insert(&Folder::at("op", "c/1")).await?;
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);

    // A large move of `a` under `b`, cut once its intent is written.
    for cut in 1.. {
        assert!(cut < 20, "the move was never left pending");
        let cut_off = Harness::on(db.clone(), Faults::default().fail_from(cut)).await?;
        let faulty = cut_off.db().clone();
        let moved = Folder::tree(&faulty, "op").move_subtree(&p("a"), &p("b/a"));
        assert!(moved.transaction_limit(0).await.is_err());
        if tree.pending().await?.is_some() {
            break;
        }
    }
    db.reset_requests();
    tree.insert(&Folder::at("op", "c/2")).await?;
    assert_eq!(db.requests().get(Op::TransactWriteItems), 2, "any operation, then this path");
    let err = tree.insert(&Folder::at("op", "a/x/z")).await.unwrap_err();
    assert!(err.is_tree_busy(), "{err}");
    tree.resume(|_| {}).await?.expect("resumed");
    assert!(tree.pending().await?.is_none());
    let nodes = all_paths(&tree).await;
    assert!(nodes.contains("c/2") && !nodes.iter().any(|n| n.ends_with("x/z")), "{nodes:?}");
    Ok(())
}

#[tokio::test]
async fn small_moves_renames_and_deletes_are_one_transaction() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Folder::tree(&db, "fs");
    build(&tree, "fs", &DRIVES).await;

    db.reset_requests();
    let report = tree.move_subtree(&p("D/III"), &p("C/III")).await?;
    assert_eq!((report.nodes, report.resumable), (3, false));
    // A strongly consistent read of the subtree (the node, then a query), one transaction.
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert_eq!(db.requests().total(), 3);
    assert_eq!(
        paths(&tree.descendants(&p("C")).all().await?),
        ["C/I", "C/II", "C/III", "C/III/a", "C/III/b"]
    );
    assert!(tree.get(&p("D/III")).await?.is_none());
    assert!(tree.get(&p("D/III/a")).await?.is_none());

    let report = tree.rename(&p("D/V"), "Five").await?;
    assert_eq!(report.nodes, 6);
    assert_eq!(
        paths(&tree.descendants(&p("D/Five")).depth(1..=1).all().await?),
        ["D/Five/d", "D/Five/e"]
    );
    assert_eq!(paths(&tree.ancestors(&p("D/Five/d/iii")).await?), ["D", "D/Five", "D/Five/d"]);

    // Refused moves write nothing.
    let before = snapshot(&db).await;
    db.reset_requests();
    let err = tree.move_subtree(&p("D"), &p("D/Five/x")).await.unwrap_err();
    assert!(matches!(tree_problem(&err), TreeProblem::IntoOwnSubtree { .. }));
    let err = tree.move_subtree(&p("D"), &p("D")).await.unwrap_err();
    assert!(matches!(tree_problem(&err), TreeProblem::IntoOwnSubtree { .. }));
    assert!(err.is_tree_cycle() && !err.is_destination_exists());
    assert_eq!(db.requests().total(), 0);
    let err = tree.move_subtree(&p("D/IV"), &p("C/I")).await.unwrap_err();
    assert_eq!(tree_problem(&err), &TreeProblem::DestinationExists { path: p("C/I") });
    assert!(err.is_destination_exists() && !err.is_already_exists() && !err.is_tree_cycle());
    // Onto an ancestor: taken, and found without a request.
    let err = tree.move_subtree(&p("D/Five/d"), &p("D")).await.unwrap_err();
    assert_eq!(tree_problem(&err), &TreeProblem::DestinationExists { path: p("D") });
    // A missing parent or node: `tree_conformance.rs`.
    let err = tree.rename(&p("D/IV"), "").await.unwrap_err();
    assert!(err.is_invalid_input());
    assert_eq!(snapshot(&db).await, before);

    // A top-level move and a delete.
    tree.move_subtree(&p("D/IV"), &p("IV")).await?;
    assert_eq!(paths(&tree.roots().all().await?), ["C", "D", "IV"]);
    db.reset_requests();
    let report = tree.delete_subtree(&p("D")).await?;
    assert_eq!((report.nodes, report.resumable), (7, false));
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert_eq!(
        all_paths(&tree).await,
        set(&["C", "C/I", "C/II", "C/III", "C/III/a", "C/III/b", "IV", "IV/c"])
    );
    Ok(())
}

/// A wide subtree: `n` nodes under `root` (children and grandchildren), written with batch
/// puts (setup only).
async fn wide(db: &Db, drive: &str, root: &str, n: usize) -> Vec<String> {
    let mut nodes = vec![root.to_owned()];
    let mut i = 0;
    while nodes.len() < n {
        let child = format!("{root}/c{i:02}");
        nodes.push(child.clone());
        for j in 0..9 {
            if nodes.len() < n {
                nodes.push(format!("{child}/g{j}"));
            }
        }
        i += 1;
    }
    let folders: Vec<Folder> = nodes.iter().map(|path| Folder::at(drive, path)).collect();
    db.batch_put(&folders).await.expect("setup");
    nodes
}

fn rebase_all(nodes: &[String], from: &str, to: &str) -> BTreeSet<String> {
    nodes.iter().map(|n| format!("{to}{}", &n[from.len()..])).collect()
}

#[tokio::test]
async fn large_moves_use_the_resumable_protocol() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Folder::tree(&db, "big");
    build(&tree, "big", &["src", "dst"]).await;
    let nodes = wide(&db, "big", "src/w", 300).await;

    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let log = Arc::clone(&seen);
    db.reset_requests();
    let report = tree
        .move_subtree(&p("src/w"), &p("dst/w"))
        .on_progress(move |p| log.lock().expect("log").push(p))
        .await?;
    assert_eq!((report.nodes, report.resumable), (300, true));
    let stats = db.requests();
    // 4 fenced transactions per phase (99 nodes and the intent check each).
    assert_eq!(stats.get(Op::BatchWriteItem), 0);
    assert_eq!(stats.get(Op::TransactWriteItems), 8);
    let mut expected = rebase_all(&nodes, "src/w", "dst/w");
    expected.extend(["src".to_owned(), "dst".to_owned()]);
    assert_eq!(all_paths(&tree).await, expected);
    assert!(tree.pending().await?.is_none());

    let seen = seen.lock().expect("log").clone();
    let copy: Vec<usize> =
        seen.iter().filter(|p| p.phase == OpPhase::Copy).map(|p| p.done).collect();
    let remove: Vec<usize> =
        seen.iter().filter(|p| p.phase == OpPhase::Remove).map(|p| p.done).collect();
    assert_eq!(copy, [99, 198, 297, 300]);
    assert_eq!(remove, [99, 198, 297, 300]);
    assert!(seen.iter().all(|p| p.total == 300));

    // A large delete.
    let report = tree.delete_subtree(&p("dst")).await?;
    assert_eq!((report.nodes, report.resumable), (301, true));
    assert_eq!(all_paths(&tree).await, set(&["src"]));
    Ok(())
}

/// Inserts racing a move of the subtree they insert into: every insert that succeeded ends
/// up in the tree (moved or not), and no node is ever without its parent.
#[tokio::test]
async fn concurrent_inserts_and_moves_never_orphan_a_node() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Folder::tree(&db, "race");
    build(&tree, "race", &["a", "a/x", "b"]).await;
    let inserted: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut tasks = Vec::new();
    for t in 0..4 {
        let db = db.clone();
        let inserted = Arc::clone(&inserted);
        tasks.push(tokio::spawn(async move {
            let tree = Folder::tree(&db, "race");
            for i in 0..10 {
                for parent in ["a/x", "b/x"] {
                    let path = format!("{parent}/t{t}-{i}");
                    if tree.insert(&Folder::at("race", &path)).await.is_ok() {
                        inserted.lock().expect("log").push(format!("t{t}-{i}"));
                    }
                }
            }
        }));
    }
    let mover = {
        let db = db.clone();
        tokio::spawn(async move {
            let tree = Folder::tree(&db, "race");
            for i in 0..10 {
                let at_a = tree.get(&p("a/x")).consistent().await.expect("get").is_some();
                let (from, to) = if at_a { ("a/x", "b/x") } else { ("b/x", "a/x") };
                // A move may lose the race a few times in a row; that is reported, not hidden.
                match tree.move_subtree(&p(from), &p(to)).await {
                    Ok(_) => {}
                    Err(Error::Tree { problem: TreeProblem::Changed { .. }, .. }) => {}
                    Err(e) => panic!("move {i}: {e}"),
                }
            }
        })
    };
    for task in tasks {
        task.await.expect("inserter");
    }
    mover.await.expect("mover");

    let nodes = all_paths(&tree).await;
    for node in &nodes {
        if let Some(parent) = p(node).parent() {
            assert!(nodes.contains(&parent.to_string()), "{node} has no parent");
        }
    }
    let x = if nodes.contains("a/x") { "a/x" } else { "b/x" };
    let children: BTreeSet<String> =
        tree.children(&p(x)).all().await?.iter().map(|f| f.path.name().to_owned()).collect();
    let inserted: BTreeSet<String> = inserted.lock().expect("log").iter().cloned().collect();
    assert_eq!(children, inserted);
    Ok(())
}
