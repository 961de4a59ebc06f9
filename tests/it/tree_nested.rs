//! Trees with the nested-set strategy: what is particular to it. Every node's interval is
//! checked after every write (nested in its parent's, disjoint from its siblings', the
//! index key its start); a 100-node subtree is one query; an exhausted gap renumbers only
//! the smallest region with room (the items rewritten are counted); a renumbering too large
//! for one transaction is cut after each of its requests and resumed; concurrent inserts
//! under one parent all land or fail typed; arbitrary ids (all of Unicode, separators,
//! escapes, the empty id) against an in-memory model. What every strategy shares is in
//! `tree_conformance.rs`.

use std::collections::{BTreeMap, BTreeSet};

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::prelude::*;
use ddb_model::tree::{TreeProblem, TreeProtocol};
use ddb_model::{DefaultTable, NestedTree, Op};
use proptest::prelude::*;

use crate::faults::{fail_from, faulty_client};
use crate::model::Nest;
use crate::support::{db, n, s};

/// A node's bookkeeping as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stored {
    lft: u64,
    rgt: u64,
    next: u64,
    depth: u64,
    kids: u64,
    up: String,
    parent: Option<String>,
}

fn num(item: &ddb_model::Item, attr: &str) -> u64 {
    match item.get(attr) {
        Some(AttributeValue::N(v)) => v.parse().expect("a number"),
        other => panic!("{attr}: {other:?}"),
    }
}

fn text(item: &ddb_model::Item, attr: &str) -> String {
    match item.get(attr) {
        Some(AttributeValue::S(v)) => v.clone(),
        other => panic!("{attr}: {other:?}"),
    }
}

/// The tree problem of an error.
fn problem(err: &Error) -> Option<&TreeProblem> {
    match err {
        Error::Tree { problem, .. } => Some(problem),
        _ => None,
    }
}

/// Every node of the catalog with its bookkeeping, by id, read from the table.
async fn stored(db: &Db, catalog: &str) -> BTreeMap<String, Stored> {
    let nodes = Nest::partition(db, catalog).consistent().all().await.expect("nodes");
    let items = Nest::partition(db, catalog).consistent().items().all().await.expect("items");
    let by_sk: BTreeMap<String, ddb_model::Item> =
        items.into_iter().map(|item| (text(&item, "sk"), item)).collect();
    let mut out = BTreeMap::new();
    for node in nodes {
        let sk = node.key().sk().expect("a sort key").to_owned();
        let item = &by_sk[&sk];
        let lft = num(item, "_tree_lft");
        assert_eq!(text(item, "gsi3sk"), format!("NEST#{lft:020}"), "{}: index key", node.id);
        assert_eq!(text(item, "gsi3pk"), format!("CATALOG#{catalog}"), "{}", node.id);
        let stored = Stored {
            lft,
            rgt: num(item, "_tree_rgt"),
            next: item.get("_tree_next").map_or(lft, |_| num(item, "_tree_next")),
            depth: num(item, "_tree_depth"),
            kids: item.get("_tree_kids").map_or(0, |_| num(item, "_tree_kids")),
            up: text(item, "_tree_up"),
            parent: node.parent.clone(),
        };
        out.insert(node.id, stored);
    }
    out
}

/// The nested-set invariants of a stored tree: each node inside its parent's interval and
/// after its siblings, its mark after its children, its depth, ancestors and children count
/// right. Returns the nodes.
async fn assert_nested(db: &Db, catalog: &str) -> BTreeMap<String, Stored> {
    let nodes = stored(db, catalog).await;
    let mut children: BTreeMap<Option<&str>, Vec<(&str, &Stored)>> = BTreeMap::new();
    for (id, n) in &nodes {
        children.entry(n.parent.as_deref()).or_default().push((id, n));
    }
    for (parent, kids) in &mut children {
        kids.sort_by_key(|(_, n)| n.lft);
        let (lo, hi, depth) = match parent {
            None => (0, u64::MAX, 0),
            Some(p) => {
                let pn = nodes.get(*p).unwrap_or_else(|| panic!("{p} is missing (an orphan)"));
                assert_eq!(pn.kids, kids.len() as u64, "{p}: children counter");
                (pn.lft, pn.next.saturating_add(1), pn.depth)
            }
        };
        let mut last = lo;
        for (id, n) in kids.iter() {
            assert!(
                n.lft > last && n.lft < n.rgt && n.rgt < hi,
                "{id} {n:?} in {parent:?} after {last}"
            );
            assert!(n.next >= n.lft && n.next < n.rgt, "{id}: mark {n:?}");
            assert_eq!(n.depth, depth + 1, "{id}: depth");
            last = n.rgt;
        }
    }
    for (id, n) in &nodes {
        // The ancestors, root first, as the parents say.
        let mut chain = Vec::new();
        let mut at = n.parent.clone();
        while let Some(p) = at {
            chain.push(p.clone());
            at = nodes[&p].parent.clone();
        }
        assert_eq!(chain.len() as u64 + 1, n.depth, "{id}: depth and ancestors");
        assert_eq!(n.up.matches('/').count(), chain.len(), "{id}: stored ancestors {}", n.up);
    }
    nodes
}

async fn build(tree: &NestedTree<'_, Nest>, catalog: &str, nodes: &[(String, Option<String>)]) {
    for (id, parent) in nodes {
        tree.insert(&Nest::new(catalog, id, parent.as_deref())).await.expect("insert");
    }
}

fn ids(nodes: &[Nest]) -> BTreeSet<String> {
    nodes.iter().map(|n| n.id.clone()).collect()
}

/// A root, 9 children, 90 grandchildren (10 each): 100 nodes.
fn hundred() -> Vec<(String, Option<String>)> {
    let mut out = vec![("root".to_owned(), None)];
    for c in 0..9 {
        out.push((format!("c{c}"), Some("root".to_owned())));
        for g in 0..10 {
            out.push((format!("c{c}g{g}"), Some(format!("c{c}"))));
        }
    }
    out
}

#[tokio::test]
async fn a_100_node_subtree_is_one_query() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Nest::tree(&db, "costs");
    build(&tree, "costs", &hundred()).await;
    assert_nested(&db, "costs").await;

    // The span, then the subtree: one query, 100 items.
    let span = tree.span("root").await?.expect("root");
    let before = db.requests();
    let all = tree.within(span).all().await?;
    let cost = db.requests() - before;
    assert_eq!(all.len(), 100);
    assert_eq!((cost.total(), cost.get(Op::Query), cost.items_read()), (1, 1, 100), "{cost}");

    // From the id: the span's `GetItem` and the query.
    let before = db.requests();
    assert_eq!(tree.descendants("root").all().await?.len(), 99);
    let cost = db.requests() - before;
    assert_eq!((cost.get(Op::GetItem), cost.get(Op::Query)), (1, 1), "{cost}");

    // A depth range is the same query with a depth filter.
    let before = db.requests();
    let level = tree.descendants("root").depth(2..=2).all().await?;
    assert_eq!(level.len(), 90);
    assert_eq!((db.requests() - before).total(), 2);
    // Children: the same, reading the 11-node subtree of c3 to return its 10 children.
    let before = db.requests();
    let kids = tree.children("c3").all().await?;
    let cost = db.requests() - before;
    assert_eq!(ids(&kids), (0..10).map(|g| format!("c3g{g}")).collect());
    assert_eq!((cost.total(), cost.items_read()), (2, 11), "{cost}");

    // Ancestors: the node names them; one `BatchGetItem`.
    let before = db.requests();
    let up = tree.ancestors("c3g4").await?;
    let cost = db.requests() - before;
    assert_eq!(up.iter().map(|n| n.id.as_str()).collect::<Vec<_>>(), ["root", "c3"]);
    assert_eq!((cost.get(Op::GetItem), cost.get(Op::BatchGetItem)), (1, 1), "{cost}");

    // An insert: the parent's `GetItem` and one transaction.
    let before = db.requests();
    tree.insert(&Nest::new("costs", "c3g10", Some("c3"))).await?;
    let cost = db.requests() - before;
    assert_eq!((cost.get(Op::GetItem), cost.get(Op::TransactWriteItems), cost.total()), (1, 1, 2));

    // A move of one node, and of an 11-node subtree: reads, then one transaction.
    let before = db.requests();
    let report = tree.move_under("c3g10", "c4").await?;
    let one = db.requests() - before;
    assert_eq!((report.nodes, report.resumable, one.get(Op::TransactWriteItems)), (1, false, 1));
    let before = db.requests();
    let report = tree.move_under("c3", "c4g0").await?;
    let many = db.requests() - before;
    assert_eq!((report.nodes, report.resumable, many.get(Op::TransactWriteItems)), (11, false, 1));
    assert_eq!(tree.subtree_size("c4").await?, 11 + 1 + 1 + 10);
    assert_nested(&db, "costs").await;
    // The counts the `tree` module documents.
    let counts = |c: &ddb_model::RequestStats| {
        [Op::GetItem, Op::Query, Op::BatchGetItem, Op::TransactWriteItems].map(|op| c.get(op))
    };
    assert_eq!((counts(&one), one.total()), ([2, 1, 0, 1], 4), "move of 1: {one}");
    assert_eq!((counts(&many), many.total()), ([2, 1, 1, 1], 5), "move of 11: {many}");
    Ok(())
}

/// The items whose interval changed between two reads.
fn rewritten(
    before: &BTreeMap<String, Stored>,
    after: &BTreeMap<String, Stored>,
) -> BTreeSet<String> {
    after
        .iter()
        .filter(|(id, n)| before.get(*id).is_some_and(|b| (b.lft, b.rgt) != (n.lft, n.rgt)))
        .map(|(id, _)| id.clone())
        .collect()
}

#[tokio::test]
async fn an_exhausted_gap_renumbers_only_the_smallest_region_with_room() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Nest::tree(&db, "gaps");
    // Neighbours that no renumbering may touch: 20 siblings with children.
    let mut nodes = vec![("top".to_owned(), None)];
    for i in 0..20 {
        nodes.push((format!("side{i}"), Some("top".to_owned())));
        nodes.push((format!("side{i}/kid"), Some(format!("side{i}"))));
    }
    build(&tree, "gaps", &nodes).await;
    // A chain: each link takes an eighth of its parent's free numbers, so the gaps run out
    // after a few dozen levels.
    let mut parent = "top".to_owned();
    let mut renumbered = 0;
    for depth in 0..60 {
        let before = assert_nested(&db, "gaps").await;
        let id = format!("link{depth}");
        let start = db.requests();
        tree.insert(&Nest::new("gaps", &id, Some(&parent))).await?;
        let cost = db.requests() - start;
        let after = assert_nested(&db, "gaps").await;
        let moved = rewritten(&before, &after);
        for id in &moved {
            assert!(id.starts_with("link"), "{id} is outside the region that had to change");
        }
        if !moved.is_empty() {
            renumbered += 1;
            // One transaction for the renumbering, one for the insert.
            assert_eq!(cost.get(Op::TransactWriteItems), 2, "{cost}");
            // The region is the smallest with room: at most the chain below the link whose
            // interval holds twice what it must.
            assert!(moved.len() < depth, "{} rewritten at depth {depth}", moved.len());
        } else {
            assert_eq!(cost.get(Op::TransactWriteItems), 1, "{cost}");
        }
        parent = id;
    }
    assert!(renumbered > 0, "60 levels exhaust a gap");
    assert_eq!(tree.breadcrumbs("link59").await?.len(), 61);
    Ok(())
}

/// Writes a tree numbered tightly (two numbers per node, no gap) under a wide root, as an
/// old import would have left it: the first insert under any node of it needs the whole
/// region below the root numbered again.
async fn tight_tree(db: &Db, catalog: &str, size: usize) {
    let table = db.table_name();
    let put =
        |id: &str, parent: Option<&str>, lft: u64, rgt: u64, depth: u64, up: &str, kids: u64| {
            let mut item = std::collections::HashMap::new();
            item.insert("pk".to_owned(), s(&format!("CATALOG#{catalog}")));
            item.insert("sk".to_owned(), s(&format!("NEST#{id}")));
            item.insert("_type".to_owned(), s("Nest"));
            item.insert("catalog".to_owned(), s(catalog));
            item.insert("id".to_owned(), s(id));
            item.insert("name".to_owned(), s(&id.to_uppercase()));
            item.insert("parent".to_owned(), parent.map_or(AttributeValue::Null(true), s));
            item.insert("gsi3pk".to_owned(), s(&format!("CATALOG#{catalog}")));
            item.insert("gsi3sk".to_owned(), s(&format!("NEST#{lft:020}")));
            item.insert("_tree_lft".to_owned(), n(lft));
            item.insert("_tree_rgt".to_owned(), n(rgt));
            item.insert("_tree_next".to_owned(), n(if kids == 0 { lft } else { rgt - 1 }));
            item.insert("_tree_depth".to_owned(), n(depth));
            item.insert("_tree_up".to_owned(), s(up));
            item.insert("_tree_kids".to_owned(), n(kids));
            item.insert("_tree_rev".to_owned(), n(0));
            item
        };
    let mut items = Vec::new();
    // The root: [1, 2^50], its children packed at its start.
    items.push(put("root", None, 1, 1 << 50, 1, "^", size as u64));
    for i in 0..size as u64 {
        let lft = 2 + 2 * i;
        items.push(put(&format!("t{i:03}"), Some("root"), lft, lft + 1, 2, "^root/", 0));
    }
    let mut top = std::collections::HashMap::new();
    top.insert("pk".to_owned(), s(&format!("CATALOG#{catalog}")));
    top.insert("sk".to_owned(), s("NEST#~top"));
    top.insert("_type".to_owned(), s("Nest:tree-top"));
    top.insert("_tree_next".to_owned(), n(1u64 << 50));
    top.insert("_tree_kids".to_owned(), n(1));
    items.push(top);
    for chunk in items.chunks(25) {
        let writes = chunk.iter().map(|item| {
            let put = ddb_model::aws_sdk_dynamodb::types::PutRequest::builder()
                .set_item(Some(item.clone()))
                .build()
                .expect("a put");
            ddb_model::aws_sdk_dynamodb::types::WriteRequest::builder().put_request(put).build()
        });
        let out = db
            .client()
            .batch_write_item()
            .request_items(table, writes.collect())
            .send()
            .await
            .expect("batch write");
        assert!(out.unprocessed_items.is_none_or(|u| u.is_empty()), "unprocessed items");
    }
}

#[tokio::test]
async fn a_large_renumbering_resumes_after_every_request() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    // The siblings are packed at the root's start, but the root has room: inserting under
    // the last one renumbers the root's 120 children, more than one transaction holds.
    let mut finished = false;
    for k in 0..60u64 {
        let catalog = format!("tight{k}");
        tight_tree(&db, &catalog, 120).await;
        let tree = Nest::tree(&db, &catalog);
        assert_nested(&db, &catalog).await;
        let plan = fail_from(k);
        let faulty: Db = Db::with_table_name(faulty_client(&plan), db.table_name());
        let node = Nest::new(&catalog, "new", Some("t119"));
        match Nest::tree(&faulty, &catalog).insert(&node).await {
            Ok(()) => {
                assert!(k > 4, "the renumbering took {k} requests");
                assert_nested(&db, &catalog).await;
                finished = true;
                break;
            }
            Err(err) => {
                // Whatever the cut, the tree reads whole: the 121 nodes are there.
                assert_eq!(
                    tree.subtree_size("root").await? as usize,
                    tree.descendants("root").count().await? + 1
                );
                let op = tree.pending().await?;
                if let Some(op) = &op {
                    // A renumbering cannot be undone, only finished.
                    let e = tree.rollback().await.unwrap_err();
                    assert!(matches!(problem(&e), Some(TreeProblem::CannotRollBack { .. })), "{e}");
                    let report = tree.resume(|_| {}).await?.expect("resumed");
                    assert!(report.resumable, "{op}");
                }
                let nodes = assert_nested(&db, &catalog).await;
                assert_eq!(nodes.len(), 121, "k = {k}: {err}");
                // The insert goes through now.
                tree.insert(&node).await?;
                let nodes = assert_nested(&db, &catalog).await;
                assert_eq!(nodes.len(), 122);
                assert_eq!(tree.parent("new").await?.map(|p| p.id), Some("t119".to_owned()));
            }
        }
    }
    assert!(finished, "the insert finished within 60 requests");
    Ok(())
}

#[tokio::test]
async fn concurrent_inserts_under_one_parent_land_or_fail_typed() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Nest::tree(&db, "busy");
    tree.insert(&Nest::new("busy", "p", None)).await?;
    let tasks: Vec<_> = (0..24)
        .map(|i| {
            let db = db.clone();
            tokio::spawn(async move {
                let tree = Nest::tree(&db, "busy");
                tree.insert(&Nest::new("busy", &format!("k{i}"), Some("p"))).await.map(|()| i)
            })
        })
        .collect();
    let mut landed = BTreeSet::new();
    for task in tasks {
        match task.await.expect("task") {
            Ok(i) => {
                landed.insert(format!("k{i}"));
            }
            Err(e) => assert!(e.is_tree_changed(), "a concurrent insert failed untyped: {e}"),
        }
    }
    assert!(!landed.is_empty());
    assert_eq!(ids(&tree.children("p").all().await?), landed);
    let nodes = assert_nested(&db, "busy").await;
    assert_eq!(nodes.len(), landed.len() + 1);
    Ok(())
}

#[tokio::test]
async fn refused_inputs_write_nothing() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Nest::tree(&db, "refused");
    tree.insert(&Nest::new("refused", "a", None)).await?;
    let err = tree.insert(&Nest::new("other", "b", Some("a"))).await.unwrap_err();
    assert!(matches!(problem(&err), Some(TreeProblem::OtherTree { .. })), "{err}");
    let err = tree.insert(&Nest::new("refused", "a", None)).await.unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    let err = tree.insert(&Nest::new("refused", "c", Some("c"))).await.unwrap_err();
    assert!(err.is_tree_cycle(), "{err}");
    let err = tree.insert(&Nest::new("refused", "d", Some("nope"))).await.unwrap_err();
    assert!(err.is_parent_missing(), "{err}");
    // Deeper than max_depth (96).
    let mut parent = "a".to_owned();
    for d in 2..=96 {
        let id = format!("d{d}");
        tree.insert(&Nest::new("refused", &id, Some(&parent))).await?;
        parent = id;
    }
    let err = tree.insert(&Nest::new("refused", "d97", Some(&parent))).await.unwrap_err();
    assert!(matches!(problem(&err), Some(TreeProblem::TooDeep { depth: 97, .. })), "{err}");
    let nodes = assert_nested(&db, "refused").await;
    assert_eq!(nodes.len(), 96);
    assert_eq!(tree.ancestors("d96").await?.len(), 95);
    Ok(())
}

/// An id from all of Unicode, separators, escapes, or empty.
fn any_id() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "[#/%~ ]{1,3}", "\\PC{0,6}", "[a-c][#/%]?[a-c]?",]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_ids_agree_with_a_model(
        ids in prop::collection::vec(any_id(), 1..24),
        parents in prop::collection::vec(any::<prop::sample::Index>(), 24),
        moves in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>()), 4),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
        rt.block_on(async move {
            let db = db::<DefaultTable>().await;
            let tree = Nest::tree(&db, "any");
            // The model: id -> parent.
            let mut model: Vec<(String, Option<String>)> = Vec::new();
            for (i, id) in ids.iter().enumerate() {
                if model.iter().any(|(m, _)| m == id) {
                    let err = tree.insert(&Nest::new("any", id, None)).await.unwrap_err();
                    assert!(err.is_already_exists(), "{id:?}: {err}");
                    continue;
                }
                let parent = (!model.is_empty() && i % 4 != 0)
                    .then(|| model[parents[i].index(model.len())].0.clone());
                tree.insert(&Nest::new("any", id, parent.as_deref())).await.expect("insert");
                model.push((id.clone(), parent));
            }
            let below = |model: &[(String, Option<String>)], x: &str| -> BTreeSet<String> {
                let mut out: BTreeSet<String> = BTreeSet::new();
                let mut grew = true;
                while grew {
                    grew = false;
                    for (id, p) in model {
                        if p.as_deref().is_some_and(|p| p == x || out.contains(p)) && out.insert(id.clone()) {
                            grew = true;
                        }
                    }
                }
                out
            };
            for (a, b) in &moves {
                let x = model[a.index(model.len())].0.clone();
                let p = model[b.index(model.len())].0.clone();
                let result = tree.move_under(&x, &p).await;
                if x == p || below(&model, &x).contains(&p) {
                    assert!(result.unwrap_err().is_tree_cycle());
                } else {
                    result.expect("move");
                    if let Some(entry) = model.iter_mut().find(|(id, _)| *id == x) {
                        entry.1 = Some(p);
                    }
                }
            }
            assert_nested(&db, "any").await;
            for (id, parent) in &model {
                let got: BTreeSet<String> = tree.descendants(id).all().await.expect("read").iter().map(|n| n.id.clone()).collect();
                assert_eq!(got, below(&model, id), "below {id:?}");
                let kids: BTreeSet<String> = tree.children(id).all().await.expect("read").iter().map(|n| n.id.clone()).collect();
                let want: BTreeSet<String> = model.iter().filter(|(_, p)| p.as_ref() == Some(id)).map(|(c, _)| c.clone()).collect();
                assert_eq!(kids, want, "children of {id:?}");
                let up = TreeProtocol::parent(&tree, id).await.expect("parent").map(|n| n.id);
                assert_eq!(&up, parent, "parent of {id:?}");
            }
        });
    }
}
