//! Trees with the adjacency strategy (seed 001's adjacency list): the seed's product
//! categories with its five access patterns and their request counts, moves in one
//! transaction, chunked deletes. What every strategy shares (refused writes, interrupted
//! operations resumed after every request, pending operations, random operations against a
//! model) is tested once for all in `tree_conformance.rs`.

use std::collections::BTreeSet;

use ddb_model::prelude::*;
use ddb_model::{AdjacencyTree, DefaultTable, Op};

use crate::model::Cat;
use crate::support::db;

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
