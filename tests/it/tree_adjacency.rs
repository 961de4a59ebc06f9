//! Trees with the adjacency strategy (seed 001's adjacency list): the seed's product
//! categories with its five access patterns, request counts, refused writes, moves in one
//! transaction with the cycle check, chunked and resumable deletes, and a model-based
//! property test.

use std::collections::BTreeSet;

use ddb_model::prelude::*;
use ddb_model::tree::{OpKind, TreeProblem};
use ddb_model::{AdjacencyTree, DefaultTable, Op};

use crate::faults::{fail_from, faulty_client};
use crate::model::Cat;
use crate::support::{db, snapshot};

fn ids(nodes: &[Cat]) -> Vec<String> {
    nodes.iter().map(|c| c.id.clone()).collect()
}

fn id_set(nodes: &[Cat]) -> BTreeSet<String> {
    nodes.iter().map(|c| c.id.clone()).collect()
}

fn tree_problem(err: &Error) -> &TreeProblem {
    match err {
        Error::Tree { problem, .. } => problem,
        other => panic!("expected a tree error, got {other:?}"),
    }
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
    assert_eq!(db.requests().total(), 6);

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
    // The node, then the new parent and its ancestors: phones, electronics, root.
    assert_eq!(stats.get(Op::GetItem), 4);
    assert_eq!(stats.total(), 5);
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

#[tokio::test]
async fn refused_writes_write_nothing() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Cat::tree(&db, "shop");
    build(&tree, "shop", &CATEGORIES).await;
    let before = snapshot(&db).await;

    let err = tree.insert(&Cat::new("shop", "x", Some("nothing"))).await.unwrap_err();
    assert_eq!(tree_problem(&err), &TreeProblem::NoParent { parent: "nothing".into() });
    let err = tree.insert(&Cat::new("shop", "phones", Some("root"))).await.unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    db.reset_requests();
    let err = tree.insert(&Cat::new("other", "x", None)).await.unwrap_err();
    assert!(matches!(tree_problem(&err), TreeProblem::OtherTree { .. }));
    assert_eq!(db.requests().total(), 0);

    // The cycle check walks the new parent's ancestors first.
    let err = tree.move_subtree("electronics", "laptops").await.unwrap_err();
    assert_eq!(
        tree_problem(&err),
        &TreeProblem::Cycle { node: "electronics".into(), parent: "laptops".into() }
    );
    let err = tree.move_subtree("electronics", "electronics").await.unwrap_err();
    assert!(matches!(tree_problem(&err), TreeProblem::Cycle { .. }));
    let err = tree.move_subtree("phones", "nothing").await.unwrap_err();
    assert_eq!(tree_problem(&err), &TreeProblem::NoParent { parent: "nothing".into() });
    let err = tree.move_subtree("nothing", "root").await.unwrap_err();
    assert_eq!(tree_problem(&err), &TreeProblem::NoNode { id: "nothing".into() });
    let err = tree.delete_subtree("nothing").await.unwrap_err();
    assert_eq!(tree_problem(&err), &TreeProblem::NoNode { id: "nothing".into() });
    assert_eq!(snapshot(&db).await, before);

    // To the top level and back.
    tree.move_to_top("computers").await?;
    assert_eq!(ids(&tree.roots().all().await?), ["computers", "root"]);
    tree.move_subtree("computers", "electronics").await?;
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
async fn deletes_are_chunked_and_resumable() -> Result<(), Error> {
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

    // A large delete, interrupted after every few requests and resumed: never an orphan.
    // How many requests a clean large delete sends.
    let total = {
        let clean = Cat::tree(&db, "clean");
        build(&clean, "clean", &[("w2", None)]).await;
        wide(&clean, "clean", "w2", 250).await;
        let plan = fail_from(u64::MAX);
        let faulty: Db = Db::with_table_name(faulty_client(&plan), db.table_name());
        let report = Cat::tree(&faulty, "clean").delete_subtree("w2").await?;
        assert_eq!((report.nodes, report.resumable), (250, true));
        assert!(
            faulty.requests().get(Op::TransactWriteItems) >= 3,
            "up to 98 nodes per transaction"
        );
        crate::faults::calls(&plan)
    };
    tree.insert(&Cat::new("big", "w2", None)).await?;
    let nodes = wide(&tree, "big", "w2", 250).await;
    tree.move_subtree("w2", "top").await?;
    // Interrupted after the first transaction.
    let plan = fail_from(total - 3);
    let faulty: Db = Db::with_table_name(faulty_client(&plan), db.table_name());
    Cat::tree(&faulty, "big").delete_subtree("w2").await.unwrap_err();
    let op = tree.pending().await?.expect("an interrupted delete");
    assert_eq!(op.kind, OpKind::DeleteNode { node: "w2".into() });
    let left = all_nodes(&db, "big").await;
    assert_no_orphan(&left);
    assert!(left.len() < 3 + 20 + nodes.len(), "some nodes were deleted");
    let report = tree.resume(|_| {}).await?.expect("resumed");
    assert!(report.resumable);
    assert!(tree.pending().await?.is_none());
    let left = all_nodes(&db, "big").await;
    assert_no_orphan(&left);
    assert_eq!(id_set(&left).len(), 22, "top, keep, and w with 19 nodes below it");
    assert!(tree.get("w2").await?.is_none());
    Ok(())
}

mod model_based {
    //! Random sequences of inserts, moves and deletes (small and under an intent record)
    //! against an in-memory model of the tree; after every few steps the children,
    //! descendants (with depth ranges), ancestors and levels of every node agree with it.

    use std::collections::{BTreeMap, BTreeSet};
    use std::sync::atomic::{AtomicUsize, Ordering};

    use ddb_model::tree::TreeProblem;
    use ddb_model::{AdjacencyTree, DefaultTable, Error};
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestCaseError, TestRunner};

    use crate::model::Cat;
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
        tree: &AdjacencyTree<'_, Cat>,
        owner: &str,
        model: &mut Model,
        step: &Step,
    ) -> Result<(), TestCaseError> {
        match step {
            Step::Insert { id, parent } => {
                let id = IDS[*id].to_owned();
                let parent = pick(model, *parent);
                let result = tree.insert(&Cat::new(owner, &id, parent.as_deref())).await;
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
                let mv = match &parent {
                    Some(p) => tree.move_subtree(node.as_str(), p.as_str()).await,
                    None => tree.move_to_top(node.as_str()).await,
                };
                let _ = protocol;
                let result = mv;
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
                    result.map_err(|e| fail(format!("move {node:?} under {parent:?}: {e}")))?;
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

    fn ids(nodes: &[Cat]) -> BTreeSet<String> {
        nodes.iter().map(|d| d.id.clone()).collect()
    }

    async fn check(
        tree: &AdjacencyTree<'_, Cat>,
        model: &Model,
        seed: usize,
    ) -> Result<(), TestCaseError> {
        let err = |e: Error| fail(e.to_string());
        let all = tree_nodes(tree).await.map_err(err)?;
        prop_assert_eq!(all.len(), model.len());
        prop_assert_eq!(ids(&all), model.keys().cloned().collect::<BTreeSet<_>>());
        for d in &all {
            prop_assert_eq!(&d.parent, &model[&d.id]);
        }
        for depth in 1..4 {
            let level = tree.at_depth(depth).await.map_err(err)?;
            let expected: BTreeSet<String> =
                model.keys().filter(|k| chain(model, k).len() + 1 == depth).cloned().collect();
            prop_assert_eq!(ids(&level), expected, "depth {}", depth);
        }
        for (i, id) in model.keys().enumerate() {
            let (lo, hi) = ((i + seed) % 3, (i + seed) % 3 + (i % 2));
            let ranged = tree.descendants(id.as_str()).depth(lo..=hi).all().await.map_err(err)?;
            let expected: BTreeSet<String> = model
                .keys()
                .filter(|k| {
                    let d = if *k == id { Some(0) } else { depth_below(model, k, id) };
                    d.is_some_and(|d| (lo..=hi).contains(&d))
                })
                .cloned()
                .collect();
            prop_assert_eq!(ids(&ranged), expected, "depth {}..={} below {:?}", lo, hi, id);
            let children = tree.children(id.as_str()).all().await.map_err(err)?;
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

    /// Every node of the tree: the roots and everything below them.
    async fn tree_nodes(tree: &AdjacencyTree<'_, Cat>) -> Result<Vec<Cat>, Error> {
        let mut out = Vec::new();
        for root in tree.roots().all().await? {
            out.extend(tree.descendants(root.id.as_str()).depth(0..).all().await?);
        }
        Ok(out)
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
                let tree = Cat::tree(&db, &owner);
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
