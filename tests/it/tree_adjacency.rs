//! Trees with the adjacency strategy (seed 001's adjacency list): the seed's product
//! categories with its five access patterns and their request counts, moves in one
//! transaction, chunked deletes. What every strategy shares (refused writes, interrupted
//! operations resumed after every request, pending operations, random operations against a
//! model) is tested once for all in `tree_conformance.rs`.

use std::collections::{BTreeMap, BTreeSet};

use ddb_model::prelude::*;
use ddb_model::tree::TreeProblem;
use ddb_model::{DefaultTable, Op, tree::AdjacencyTree};
use serde::{Deserialize, Serialize};

use crate::model::Cat;
use crate::support::{self, db};

fn ids(nodes: &[Cat]) -> Vec<String> {
    nodes.iter().map(|c| c.id.clone()).collect()
}

fn id_set(nodes: &[Cat]) -> BTreeSet<String> {
    nodes.iter().map(|c| c.id.clone()).collect()
}

/// Seed 001: the product categories, as (id, parent).
const CATEGORIES: [(&str, Option<&str>); 6] = [
    ("root", None),
    ("electronics", Some("root")),
    ("computers", Some("electronics")),
    ("laptops", Some("computers")),
    ("desktops", Some("computers")),
    ("phones", Some("electronics")),
];

async fn build(tree: &AdjacencyTree<'_, Cat>, catalog: &str, nodes: &[(&str, Option<&str>)]) {
    for (id, parent) in nodes {
        tree.insert(&Cat::new(catalog, id, *parent)).await.expect("insert");
    }
}

/// Every node of the catalog, read from the table.
async fn all_nodes(db: &Db, catalog: &str) -> Vec<Cat> {
    Cat::partition(db, catalog).consistent().all().await.expect("partition")
}

/// No node names a parent that does not exist.
fn assert_no_orphan(nodes: &[Cat]) {
    let present = id_set(nodes);
    for n in nodes {
        if let Some(p) = &n.parent {
            assert!(present.contains(p), "{} is an orphan (parent {p})", n.id);
        }
    }
}

#[tokio::test]
async fn seed_001_electronics() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Cat::tree(&db, "shop");
    db.reset_requests();
    build(&tree, "shop", &CATEGORIES).await;
    assert_eq!(db.requests().get(Op::TransactWriteItems), 6, "an insert is one transaction");
    // ... after one GetItem per ancestor (0 + 1 + 2 + 3 + 3 + 2), to check `max_depth`.
    assert_eq!(db.requests().get(Op::GetItem), 11);
    assert_eq!(db.requests().total(), 17);

    // 1. An item and its children: one GetItem, one Query reading only the children.
    db.reset_requests();
    let (node, children) = futures_util::future::try_join(
        tree.get("computers").send(),
        tree.children("computers").all(),
    )
    .await?;
    assert_eq!(node.map(|c| c.name), Some("COMPUTERS".into()));
    assert_eq!(ids(&children), ["desktops", "laptops"]);
    assert_eq!(db.requests().total(), 2);
    assert_eq!(db.requests().items_read(), 3);

    // 2. An item and its ancestors: one GetItem per level, walking the parents.
    db.reset_requests();
    let crumbs = tree.breadcrumbs("laptops").await?;
    assert_eq!(ids(&crumbs), ["root", "electronics", "computers", "laptops"]);
    assert_eq!(db.requests().get(Op::GetItem), 4);
    assert_eq!(ids(&tree.ancestors("laptops").await?), ["root", "electronics", "computers"]);
    assert_eq!(tree.parent("laptops").await?.map(|c| c.id), Some("computers".into()));
    assert!(tree.parent("root").await?.is_none());

    // 3. The subtree, level by level: one children query per node with children.
    db.reset_requests();
    let below = tree.descendants("electronics").all().await?;
    assert_eq!(ids(&below), ["computers", "phones", "desktops", "laptops"]);
    // Only the nodes whose counters say they have children are asked for them.
    assert_eq!(db.requests().get(Op::Query), 2, "electronics, then computers");
    assert_eq!(db.requests().total(), 2);
    db.reset_requests();
    let two = tree.descendants("root").depth(1..=2).all().await?;
    assert_eq!(ids(&two), ["electronics", "computers", "phones"]);
    assert_eq!(db.requests().get(Op::Query), 2, "two levels: root, then electronics");
    let with_self = tree.descendants("computers").depth(0..=1).all().await?;
    assert_eq!(ids(&with_self), ["computers", "desktops", "laptops"]);
    assert_eq!(ids(&tree.descendants("root").depth(3..).all().await?), ["desktops", "laptops"]);
    assert!(tree.descendants("root").depth(..0).all().await?.is_empty());
    assert_eq!(tree.subtree_size("electronics").await?, 5);
    assert_eq!(tree.subtree_size("nothing").await?, 0);

    // 4. Move an item to another parent: one transaction, whatever the subtree.
    db.reset_requests();
    let report = tree.move_subtree("computers", "phones").await?;
    assert_eq!(report.nodes, 1);
    let stats = db.requests();
    assert_eq!(stats.get(Op::TransactWriteItems), 1);
    // The node, then the new parent and its ancestors (phones, electronics, root), then,
    // since the node has children, its old parent and its ancestors (electronics, root).
    // One level deeper: the subtree is read to check `max_depth` (the node again, then its
    // children, whose counters say they have none below).
    assert_eq!(stats.get(Op::GetItem), 7);
    assert_eq!(stats.get(Op::Query), 1);
    assert_eq!(stats.get(Op::BatchGetItem), 1);
    assert_eq!(stats.total(), 10);
    assert_eq!(ids(&tree.children("phones").all().await?), ["computers"]);
    assert_eq!(
        ids(&tree.ancestors("laptops").await?),
        ["root", "electronics", "phones", "computers"]
    );

    // 5. Items at a depth (top-level nodes have depth 1).
    assert_eq!(ids(&tree.at_depth(5).await?), ["desktops", "laptops"]);
    assert_eq!(ids(&tree.at_depth(1).await?), ["root"]);
    assert_eq!(ids(&tree.roots().all().await?), ["root"]);
    Ok(())
}

/// A wide subtree: `n` nodes under `root` (children and grandchildren).
async fn wide(tree: &AdjacencyTree<'_, Cat>, catalog: &str, root: &str, n: usize) -> Vec<String> {
    let mut nodes = vec![root.to_owned()];
    let mut i = 0;
    while nodes.len() < n {
        let child = format!("{root}-c{i:02}");
        tree.insert(&Cat::new(catalog, &child, Some(root))).await.expect("child");
        nodes.push(child.clone());
        for j in 0..9 {
            if nodes.len() < n {
                let grandchild = format!("{child}-g{j}");
                tree.insert(&Cat::new(catalog, &grandchild, Some(&child)))
                    .await
                    .expect("grandchild");
                nodes.push(grandchild);
            }
        }
        i += 1;
    }
    nodes
}

#[tokio::test]
async fn deletes_are_chunked() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Cat::tree(&db, "big");
    build(&tree, "big", &[("top", None), ("keep", Some("top")), ("w", Some("top"))]).await;
    wide(&tree, "big", "w", 30).await;

    // A small delete: the subtree's reads, then one transaction.
    db.reset_requests();
    let report = tree.delete_subtree("w-c01").await?;
    assert_eq!((report.nodes, report.resumable), (10, false));
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert_eq!(tree.children("w").all().await?.len(), 2);

    // A large delete: up to 98 nodes per transaction, under an intent record. (Interrupted
    // after each of its requests and resumed: `tree_conformance.rs`.)
    build(&tree, "big", &[("w2", None)]).await;
    wide(&tree, "big", "w2", 250).await;
    db.reset_requests();
    let report = tree.delete_subtree("w2").await?;
    assert_eq!((report.nodes, report.resumable), (250, true));
    assert!(db.requests().get(Op::TransactWriteItems) >= 3, "up to 98 nodes per transaction");
    assert!(tree.pending().await?.is_none());
    let left = all_nodes(&db, "big").await;
    assert_no_orphan(&left);
    assert_eq!(id_set(&left).len(), 22, "top, keep, and w with 19 nodes below it");
    Ok(())
}

/// An adjacency tree of at most four levels, in the default table.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "SHALLOW#<catalog>", sk = "CAT#<id>")]
#[hierarchy(strategy = adjacency, parent = parent, index = gsi2, max_depth = 4)]
struct Shallow {
    catalog: String,
    id: String,
    parent: Option<String>,
}

impl Shallow {
    fn new(catalog: &str, id: &str, parent: Option<&str>) -> Shallow {
        Shallow { catalog: catalog.into(), id: id.into(), parent: parent.map(Into::into) }
    }
}

async fn shallow_nodes(db: &Db, catalog: &str) -> BTreeMap<String, Option<String>> {
    let nodes: Vec<Shallow> =
        Shallow::partition(db, catalog).consistent().all().await.expect("partition");
    nodes.into_iter().map(|n| (n.id, n.parent)).collect()
}

/// The depth of every node of a parent map (top-level nodes have depth 1); `None` for a
/// cycle or an orphan.
fn depths(nodes: &BTreeMap<String, Option<String>>) -> Option<BTreeMap<String, usize>> {
    let mut out = BTreeMap::new();
    for id in nodes.keys() {
        let (mut depth, mut at) = (1, id.clone());
        while let Some(p) = nodes.get(&at)?.clone() {
            depth += 1;
            if depth > nodes.len() {
                return None;
            }
            at = p;
        }
        out.insert(id.clone(), depth);
    }
    Some(out)
}

#[tokio::test]
async fn inserts_honour_max_depth() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Shallow::tree(&db, "s");
    // A top-level insert is one transaction; deeper ones read the parent's branch first.
    for (depth, (id, parent)) in
        [("a", None), ("b", Some("a")), ("c", Some("b")), ("d", Some("c"))].into_iter().enumerate()
    {
        db.reset_requests();
        tree.insert(&Shallow::new("s", id, parent)).await?;
        assert_eq!(db.requests().get(Op::GetItem), depth as u64, "{id}: one read per ancestor");
        assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
        assert_eq!(db.requests().total(), depth as u64 + 1);
    }
    let before = support::snapshot(&db).await;
    db.reset_requests();
    let err = tree.insert(&Shallow::new("s", "e", Some("d"))).await.unwrap_err();
    assert!(err.is_tree_too_deep(), "{err}");
    assert!(matches!(
        &err,
        Error::Tree { problem: TreeProblem::TooDeep { id, depth: 5, max: 4 }, .. } if id == "e"
    ));
    assert_eq!(db.requests().get(Op::TransactWriteItems), 0, "refused before writing");
    assert_eq!(support::snapshot(&db).await, before, "nothing written");
    // The other refusals still come first or after as before.
    let err = tree.insert(&Shallow::new("s", "e", Some("nope"))).await.unwrap_err();
    assert!(err.is_parent_missing(), "{err}");
    let err = tree.insert(&Shallow::new("s", "b", Some("a"))).await.unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    Ok(())
}

#[tokio::test]
async fn moves_keep_the_subtree_within_max_depth() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Shallow::tree(&db, "m");
    for (id, parent) in [
        ("r1", None),
        ("a", Some("r1")),
        ("a1", Some("a")),
        ("a2", Some("a1")),
        ("r2", None),
        ("b", Some("r2")),
        ("b1", Some("b")),
    ] {
        tree.insert(&Shallow::new("m", id, parent)).await?;
    }
    let before = support::snapshot(&db).await;
    // `a` under `b`: a at depth 3, a2 at depth 5.
    let err = tree.move_subtree("a", "b").await.unwrap_err();
    assert!(
        matches!(
            &err,
            Error::Tree { problem: TreeProblem::TooDeep { id, depth: 5, max: 4 }, .. } if id == "a2"
        ),
        "{err}"
    );
    assert_eq!(support::snapshot(&db).await, before, "nothing written");
    // Under `b1` the node itself would be too deep: refused by the walk.
    assert!(tree.move_subtree("a", "b1").await.unwrap_err().is_tree_too_deep());
    // Sideways (same depth): the old branch is read and checked, not the subtree.
    db.reset_requests();
    tree.move_subtree("a", "r2").await?;
    assert_eq!(db.requests().get(Op::Query), 0, "no subtree read");
    assert_eq!(db.requests().get(Op::GetItem), 3, "the node, r2, r1");
    // Deeper by one with a shallower subtree: read, then moved.
    tree.move_subtree("a2", "r1").await?;
    db.reset_requests();
    tree.move_subtree("a", "b").await?;
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert!(db.requests().get(Op::Query) >= 1, "the subtree was read");
    let nodes = shallow_nodes(&db, "m").await;
    assert_eq!(depths(&nodes).map(|d| d["a1"]), Some(4));
    // A leaf moves without reading anything below it.
    db.reset_requests();
    tree.move_subtree("a2", "a").await?;
    assert_eq!(db.requests().get(Op::Query) + db.requests().get(Op::BatchGetItem), 0);
    Ok(())
}

/// A move that deepens the parent's branch and an insert under it, at the same time: one of
/// them is refused, and no node is ever deeper than `max_depth`. Both shapes: the insert
/// under the moved node itself (its revision conflicts), and under a node below it (the
/// move checks the revisions of the subtree it read).
#[tokio::test]
async fn concurrent_moves_and_inserts_never_exceed_max_depth() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let mut outcomes = BTreeMap::<(bool, bool), usize>::new();
    for round in 0..16 {
        let catalog = format!("c{round}");
        let tree = Shallow::tree(&db, &catalog);
        let deep = round % 2 == 1;
        let mut nodes = vec![
            ("r1", None),
            ("a", Some("r1")),
            ("r2", None),
            ("b", Some("r2")),
            ("b1", Some("b")),
        ];
        if deep {
            nodes.push(("a1", Some("a")));
        }
        for (id, parent) in nodes {
            tree.insert(&Shallow::new(&catalog, id, parent)).await?;
        }
        // Leaf `a` (depth 2) under `b1` (depth 3): a at 4, and `x` under it at 5. Or `a`
        // (depth 2, a1 at 3) under `b` (depth 2): a1 at 4, and `x` under a1 at 5.
        let (to, under) = if deep { ("b", "a1") } else { ("b1", "a") };
        let x = Shallow::new(&catalog, "x", Some(under));
        let (moved, inserted) = tokio::join!(tree.move_subtree("a", to).send(), tree.insert(&x));
        for err in [moved.as_ref().err(), inserted.as_ref().err()].into_iter().flatten() {
            assert!(err.is_tree_too_deep() || err.is_tree_changed(), "round {round}: {err}");
        }
        assert!(moved.is_err() || inserted.is_err(), "round {round}: both succeeded");
        let nodes = shallow_nodes(&db, &catalog).await;
        let depths = depths(&nodes).expect("a tree");
        assert!(depths.values().all(|d| *d <= 4), "round {round}: {depths:?}");
        *outcomes.entry((moved.is_ok(), inserted.is_ok())).or_default() += 1;
    }
    assert!(!outcomes.is_empty());
    Ok(())
}

/// Random inserts and moves in a four-level tree, ids from all of Unicode and the key
/// separators, against a model: every write is accepted or refused exactly as the model
/// says, and the stored tree is the model's after each.
#[test]
fn random_inserts_and_moves_agree_with_a_depth_model() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestCaseError, TestRunner};

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let db = rt.block_on(db::<DefaultTable>());
    let cases = std::env::var("DDB_PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(16);
    let mut runner =
        TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let id = prop_oneof![
        Just("a".to_owned()),
        Just("b#".to_owned()),
        Just("~".to_owned()),
        Just("c/d%".to_owned()),
        "\\PC{1,3}",
    ];
    let op = (any::<bool>(), id.clone(), proptest::option::weighted(0.8, id));
    let strategy = proptest::collection::vec(op, 1..24);
    let round = std::sync::atomic::AtomicUsize::new(0);
    let result = runner.run(&strategy, |ops| {
        let catalog = format!("p{}", round.fetch_add(1, std::sync::atomic::Ordering::SeqCst));
        rt.block_on(async {
            let tree = Shallow::tree(&db, &catalog);
            let mut model: BTreeMap<String, Option<String>> = BTreeMap::new();
            for (is_move, id, parent) in ops {
                let expected = expect(&model, is_move, &id, parent.as_deref());
                let got = if is_move {
                    match &parent {
                        Some(p) => tree.move_subtree(&id, p).await.map(|_| ()),
                        None => tree.move_to_top(&id).await.map(|_| ()),
                    }
                } else {
                    tree.insert(&Shallow::new(&catalog, &id, parent.as_deref())).await
                };
                let kind = match &got {
                    Ok(()) => "ok",
                    Err(e) if e.is_tree_too_deep() => "too deep",
                    Err(e) if e.is_tree_cycle() => "cycle",
                    Err(e) if e.is_parent_missing() => "no parent",
                    Err(e) if e.is_node_missing() => "no node",
                    Err(e) if e.is_already_exists() => "exists",
                    Err(e) => return Err(TestCaseError::fail(e.to_string())),
                };
                prop_assert_eq!(kind, expected, "{} {:?} under {:?}", is_move, id, parent);
                if expected == "ok" {
                    model.insert(id, parent);
                }
                prop_assert_eq!(&shallow_nodes(&db, &catalog).await, &model);
            }
            Ok(())
        })
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// What the model says a write does.
fn expect(
    model: &BTreeMap<String, Option<String>>,
    is_move: bool,
    id: &str,
    parent: Option<&str>,
) -> &'static str {
    const MAX: usize = 4;
    if parent == Some(id) {
        return "cycle";
    }
    if is_move && !model.contains_key(id) {
        return "no node";
    }
    // The walk up from the parent.
    let mut walked = 0;
    let mut next = parent.map(str::to_owned);
    while let Some(a) = next {
        if is_move && a == id {
            return "cycle";
        }
        match model.get(&a) {
            Some(p) => next = p.clone(),
            None => return "no parent",
        }
        walked += 1;
        if walked >= MAX {
            return "too deep";
        }
    }
    if !is_move {
        return if model.contains_key(id) { "exists" } else { "ok" };
    }
    if model.get(id).map(Option::as_deref) == Some(parent) {
        return "ok";
    }
    // The height of the subtree below the node.
    let mut height = 0;
    let mut level = vec![id.to_owned()];
    loop {
        let below: Vec<String> = model
            .iter()
            .filter(|(_, p)| p.as_deref().is_some_and(|p| level.iter().any(|l| l == p)))
            .map(|(c, _)| c.clone())
            .collect();
        if below.is_empty() {
            break;
        }
        height += 1;
        level = below;
    }
    if walked + 1 + height > MAX { "too deep" } else { "ok" }
}
