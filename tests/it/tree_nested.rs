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
use ddb_model::{DefaultTable, Op, tree::NestedTree};
use proptest::prelude::*;

use crate::model::Nest;
use crate::support::{db, n, s};
use ddb_model::testing::{Faults, Harness};

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
        let cut_off = Harness::on(db.clone(), Faults::default().fail_from(k)).await?;
        let faulty = cut_off.db().clone();
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
                    // The intent says what it is: the region below the root, numbered again.
                    let kind = ddb_model::tree::OpKind::Renumber { node: Some("root".into()) };
                    assert_eq!(op.kind, kind);
                    let busy = tree.insert(&Nest::new(&catalog, "late", Some("t003"))).await;
                    assert!(busy.unwrap_err().is_tree_busy(), "k = {k}");
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

// ---------------------------------------------------------------------------------------
// Exhausted numbers: tight layouts written as raw items, renumberings of the whole tree.

/// Puts raw items, 25 per `BatchWriteItem`.
async fn put_items(db: &Db, items: Vec<ddb_model::Item>) {
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
            .request_items(db.table_name(), writes.collect())
            .send()
            .await
            .expect("batch write");
        assert!(out.unprocessed_items.is_none_or(|u| u.is_empty()), "unprocessed items");
    }
}

/// Numbers the stored nested-set tree of partition `CATALOG#<catalog>` again as tightly as
/// it goes, writing raw items: every interval holds its children and no free number, so
/// that the next insert under any node finds its gap exhausted (siblings keep their order).
/// `whole`: the top level is exhausted too (its high-water mark at the end of the numbers),
/// so that the next insert or move renumbers the whole tree; otherwise each top-level node
/// keeps a wide interval with its gap after its (tight) children, so that renumberings stay
/// inside one top-level subtree. Nothing may run on the tree meanwhile.
pub async fn squeeze(db: &Db, catalog: &str, whole: bool) {
    let items = Nest::partition(db, catalog).consistent().items().all().await.expect("items");
    let mut top = None;
    let mut nodes: BTreeMap<String, ddb_model::Item> = BTreeMap::new();
    for item in items {
        match item.get("_type") {
            Some(AttributeValue::S(t)) if t == "Nest" => {
                let id = text(&item, "sk").strip_prefix("NEST#").expect("a node key").to_owned();
                nodes.insert(id, item);
            }
            Some(AttributeValue::S(t)) if t == "Nest:tree-top" => top = Some(item),
            _ => {}
        }
    }
    // Children in interval order, by escaped id (the last ancestor `_tree_up` names).
    let mut children: BTreeMap<Option<String>, Vec<(u64, String)>> = BTreeMap::new();
    for (id, item) in &nodes {
        let up = text(item, "_tree_up");
        let parent = up.trim_end_matches('/').rsplit(['/', '^']).next().filter(|p| !p.is_empty());
        let parent = parent.map(str::to_owned);
        children.entry(parent).or_default().push((num(item, "_tree_lft"), id.clone()));
    }
    for kids in children.values_mut() {
        kids.sort();
    }
    // Subtree sizes, then intervals in preorder: `lft`, the children, `rgt`.
    let mut order = Vec::new();
    let mut stack: Vec<String> = children
        .get(&None)
        .map_or_else(Vec::new, |k| k.iter().rev().map(|(_, id)| id.clone()).collect());
    while let Some(id) = stack.pop() {
        if let Some(kids) = children.get(&Some(id.clone())) {
            stack.extend(kids.iter().rev().map(|(_, k)| k.clone()));
        }
        order.push(id);
    }
    let mut size: BTreeMap<&str, u64> = BTreeMap::new();
    for id in order.iter().rev() {
        let below: u64 = children
            .get(&Some(id.clone()))
            .map_or(0, |kids| kids.iter().map(|(_, k)| size[k.as_str()]).sum());
        size.insert(id, below + 1);
    }
    let roots = children.get(&None).map_or(0, Vec::len) as u64;
    let wide = u64::MAX / (roots + 2);
    let mut at: BTreeMap<String, u64> = BTreeMap::new();
    let mut next_free = 1u64;
    let mut root_index = 0u64;
    let mut out = Vec::new();
    for id in &order {
        let item = &nodes[id];
        let depth = num(item, "_tree_depth");
        let lft = if depth == 1 && !whole {
            root_index += 1;
            (root_index - 1) * wide + 1
        } else if depth == 1 {
            next_free
        } else {
            at[id]
        };
        let tight = lft + 2 * size[id.as_str()] - 1;
        let has_kids = children.get(&Some(id.clone())).is_some_and(|k| !k.is_empty());
        let next = if has_kids { tight - 1 } else { lft };
        let rgt = if depth == 1 && !whole { lft + wide - 2 } else { tight };
        next_free = next_free.max(tight + 1);
        // The children follow one another from `lft + 1`.
        let mut c = lft + 1;
        for (_, kid) in children.get(&Some(id.clone())).into_iter().flatten() {
            at.insert(kid.clone(), c);
            c += 2 * size[kid.as_str()];
        }
        let mut item = item.clone();
        item.insert("_tree_lft".into(), n(lft));
        item.insert("_tree_rgt".into(), n(rgt));
        item.insert("_tree_next".into(), n(next));
        item.insert("gsi3sk".into(), s(&format!("NEST#{lft:020}")));
        out.push(item);
    }
    if let Some(mut top) = top {
        let mark = if whole { u64::MAX - 1 } else { roots * wide };
        top.insert("_tree_next".into(), n(mark));
        out.push(top);
    }
    put_items(db, out).await;
}

/// The items of a node `id` of `catalog` as an insert writes them, numbered `lft..rgt` with
/// its mark at `next`, `kids` children, and the ancestors `up` (stored form).
#[allow(clippy::too_many_arguments)]
fn node_item(
    catalog: &str,
    id: &str,
    parent: Option<&str>,
    (lft, rgt, next): (u64, u64, u64),
    depth: u64,
    up: &str,
    kids: u64,
) -> ddb_model::Item {
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
    item.insert("_tree_next".to_owned(), n(next));
    item.insert("_tree_depth".to_owned(), n(depth));
    item.insert("_tree_up".to_owned(), s(up));
    item.insert("_tree_kids".to_owned(), n(kids));
    item.insert("_tree_rev".to_owned(), n(0));
    item
}

/// The tree of [`forest`] written as raw items, numbered as [`squeeze`] leaves it with
/// `whole`: tight, and the top level's numbers exhausted (an insert per node would cost
/// hundreds of requests per catalog of a test that builds dozens).
async fn tight_forest(db: &Db, catalog: &str, tops: usize, kids: usize) {
    let mut items = Vec::new();
    let mut at = 1u64;
    for t in 0..tops {
        let top = format!("t{t:02}");
        let width = 2 * (kids as u64 + 1);
        let (lft, rgt) = (at, at + width - 1);
        let next = if kids == 0 { lft } else { rgt - 1 };
        items.push(node_item(catalog, &top, None, (lft, rgt, next), 1, "^", kids as u64));
        for c in 0..kids as u64 {
            let l = lft + 1 + 2 * c;
            let id = format!("{top}-c{c}");
            let up = format!("^{top}/");
            items.push(node_item(catalog, &id, Some(&top), (l, l + 1, l), 2, &up, 0));
        }
        at = rgt + 1;
    }
    let mut top = std::collections::HashMap::new();
    top.insert("pk".to_owned(), s(&format!("CATALOG#{catalog}")));
    top.insert("sk".to_owned(), s("NEST#~top"));
    top.insert("_type".to_owned(), s("Nest:tree-top"));
    top.insert("_tree_next".to_owned(), n(u64::MAX - 1));
    top.insert("_tree_kids".to_owned(), n(tops));
    items.push(top);
    put_items(db, items).await;
}

/// `tops` top-level nodes `tNN`, each with `kids` children `tNN-cM`, inserted.
fn forest(tops: usize, kids: usize) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for t in 0..tops {
        let top = format!("t{t:02}");
        out.push((top.clone(), None));
        for c in 0..kids {
            out.push((format!("{top}-c{c}"), Some(top.clone())));
        }
    }
    out
}

/// The reads of the tree against the model `(id, parent)`: the roots, and the descendants,
/// children and ancestors of every `stride`-th node of the model and of every top-level
/// node. (`assert_nested` checks every stored interval; these check what queries return.)
async fn assert_reads(
    tree: &NestedTree<'_, Nest>,
    model: &[(String, Option<String>)],
    stride: usize,
) {
    let below = |x: &str| -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut grew = true;
        while grew {
            grew = false;
            for (id, p) in model {
                if p.as_deref().is_some_and(|p| p == x || out.contains(p)) && out.insert(id.clone())
                {
                    grew = true;
                }
            }
        }
        out
    };
    let roots: BTreeSet<String> =
        model.iter().filter(|(_, p)| p.is_none()).map(|(id, _)| id.clone()).collect();
    assert_eq!(ids(&tree.roots().all().await.expect("roots")), roots);
    let sample =
        model.iter().enumerate().filter(|(i, (_, p))| i % stride.max(1) == 0 || p.is_none());
    for (_, (id, parent)) in sample {
        assert_eq!(ids(&tree.descendants(id).all().await.expect("read")), below(id), "below {id}");
        let want: BTreeSet<String> =
            model.iter().filter(|(_, p)| p.as_ref() == Some(id)).map(|(c, _)| c.clone()).collect();
        assert_eq!(ids(&tree.children(id).all().await.expect("read")), want, "children of {id}");
        let up = tree.ancestors(id).await.expect("ancestors");
        assert_eq!(up.last().map(|n| n.id.clone()), parent.clone(), "parent of {id}");
    }
}

#[tokio::test]
async fn an_exhausted_top_level_renumbers_the_whole_tree_resumably() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Nest::tree(&db, "whole");
    // 40 top-level nodes with 3 children each: 160 nodes, more than one transaction holds.
    let mut model = forest(40, 3);
    build(&tree, "whole", &model).await;
    squeeze(&db, "whole", true).await;
    assert_nested(&db, "whole").await;
    let before = stored(&db, "whole").await;

    // A top-level insert: the top level's gap and every region are exhausted.
    let start = db.requests();
    tree.insert(&Nest::new("whole", "fresh", None)).await?;
    let cost = db.requests() - start;
    model.push(("fresh".into(), None));
    let after = assert_nested(&db, "whole").await;
    assert_eq!(rewritten(&before, &after).len(), 160, "every node numbered again");
    // Through the intent record: its put and delete, 160 rewrites in 2 fenced transactions
    // (99 each), the top level's mark in a third, the insert's own transaction.
    assert_eq!(cost.get(Op::TransactWriteItems), 4, "{cost}");
    assert_eq!((cost.get(Op::PutItem), cost.get(Op::DeleteItem)), (1, 1), "{cost}");
    assert_eq!(tree.pending().await?, None);
    assert_reads(&tree, &model, 1).await;

    // The room is spread: inserts anywhere now take one transaction each.
    for (i, parent) in ["t00", "t00-c0", "t39-c2", "fresh"].into_iter().enumerate() {
        let start = db.requests();
        let id = format!("more{i}");
        tree.insert(&Nest::new("whole", &id, Some(parent))).await?;
        assert_eq!((db.requests() - start).get(Op::TransactWriteItems), 1, "under {parent}");
        model.push((id, Some(parent.to_owned())));
    }
    for i in 0..20 {
        let start = db.requests();
        let id = format!("top{i}");
        tree.insert(&Nest::new("whole", &id, None)).await?;
        assert_eq!((db.requests() - start).total(), 2, "top-level insert {i}");
        model.push((id, None));
    }
    assert_nested(&db, "whole").await;
    assert_reads(&tree, &model, 4).await;

    // A move to an exhausted top level renumbers the whole tree first, then moves.
    squeeze(&db, "whole", true).await;
    let report = tree.move_to_top("t05-c1").await?;
    assert_eq!((report.nodes, report.resumable), (1, false));
    if let Some(entry) = model.iter_mut().find(|(id, _)| id == "t05-c1") {
        entry.1 = None;
    }
    assert_nested(&db, "whole").await;
    assert_reads(&tree, &model, 4).await;
    Ok(())
}

#[tokio::test]
async fn a_whole_tree_renumbering_resumes_after_every_request() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let shape = forest(30, 3);
    let mut finished = false;
    for k in 0..40u64 {
        let catalog = format!("cut{k}");
        let tree = Nest::tree(&db, &catalog);
        tight_forest(&db, &catalog, 30, 3).await;
        if k == 0 {
            // As an insert and the squeeze write it.
            let reference = format!("{catalog}-built");
            build(&Nest::tree(&db, &reference), &reference, &shape).await;
            squeeze(&db, &reference, true).await;
            let strip = |nodes: BTreeMap<String, Stored>| {
                nodes
                    .into_iter()
                    .map(|(id, n)| (id, (n.lft, n.rgt, n.next, n.kids)))
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                strip(assert_nested(&db, &catalog).await),
                strip(assert_nested(&db, &reference).await)
            );
        }
        let cut_off = Harness::on(db.clone(), Faults::default().fail_from(k)).await?;
        let faulty = cut_off.db().clone();
        let node = Nest::new(&catalog, "fresh", None);
        let mut model = shape.clone();
        match Nest::tree(&faulty, &catalog).insert(&node).await {
            Ok(()) => {
                assert!(k > 10, "the renumbering took {k} requests");
                model.push(("fresh".into(), None));
                assert_nested(&db, &catalog).await;
                assert_reads(&tree, &model, 1).await;
                finished = true;
                break;
            }
            Err(err) => {
                // Whatever the cut, the tree reads: every node is there with its ancestors,
                // and the top level is exact.
                let all = Nest::partition(&db, &catalog).consistent().all().await?;
                assert_eq!(all.len(), 120, "k = {k}: {err}");
                let roots = tree.roots().all().await?;
                assert_eq!(roots.len(), 30, "k = {k}");
                assert_eq!(tree.breadcrumbs("t07-c2").await?.len(), 2);
                if let Some(op) = tree.pending().await? {
                    assert_eq!(op.kind, ddb_model::tree::OpKind::Renumber { node: None });
                    // Writes wait for it.
                    let e = tree.insert(&Nest::new(&catalog, "late", Some("t01"))).await;
                    assert!(e.unwrap_err().is_tree_busy(), "k = {k}");
                    let e = tree.move_to_top("t01-c0").await.unwrap_err();
                    assert!(e.is_tree_busy(), "k = {k}: {e}");
                    // A renumbering cannot be undone, only finished.
                    let e = tree.rollback().await.unwrap_err();
                    assert!(matches!(problem(&e), Some(TreeProblem::CannotRollBack { .. })), "{e}");
                    let report = tree.resume(|_| {}).await?.expect("resumed");
                    assert!(report.resumable, "{op}");
                    assert_eq!(tree.pending().await?, None);
                    // The room is made: the insert is one transaction.
                    let start = db.requests();
                    tree.insert(&node).await?;
                    assert_eq!((db.requests() - start).get(Op::TransactWriteItems), 1, "k = {k}");
                } else {
                    tree.insert(&node).await?;
                }
                model.push(("fresh".into(), None));
                assert_nested(&db, &catalog).await;
                assert_reads(&tree, &model, 10).await;
            }
        }
    }
    assert!(finished, "the insert finished within 40 requests");
    Ok(())
}

#[tokio::test]
async fn concurrent_writes_during_a_whole_tree_renumbering_land_or_fail_typed() -> Result<(), Error>
{
    let db = db::<DefaultTable>().await;
    let tree = Nest::tree(&db, "rush");
    let shape = forest(30, 4);
    build(&tree, "rush", &shape).await;
    squeeze(&db, "rush", true).await;
    // 12 writers at once, each of which needs the whole tree renumbered: top-level inserts,
    // inserts under exhausted nodes, a move; and a reader of what stays exact meanwhile.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (db, stop) = (db.clone(), stop.clone());
        tokio::spawn(async move {
            let tree = Nest::tree(&db, "rush");
            let mut reads = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let roots = ids(&tree.roots().all().await.expect("roots"));
                assert!((0..30).all(|t| roots.contains(&format!("t{t:02}"))), "{roots:?}");
                let crumbs = tree.breadcrumbs("t17-c3").await.expect("breadcrumbs");
                let crumbs: Vec<&str> = crumbs.iter().map(|n| n.id.as_str()).collect();
                assert_eq!(crumbs, ["t17", "t17-c3"]);
                reads += 1;
            }
            reads
        })
    };
    let writers: Vec<_> = (0..12)
        .map(|i| {
            let db = db.clone();
            tokio::spawn(async move {
                let tree = Nest::tree(&db, "rush");
                let id = format!("w{i}");
                let parent = (i % 2 == 1).then(|| format!("t{:02}-c{}", i, i % 4));
                let result = if i == 11 {
                    tree.move_to_top("t03-c0").await.map(|_| ())
                } else {
                    tree.insert(&Nest::new("rush", &id, parent.as_deref())).await
                };
                (id, parent, result)
            })
        })
        .collect();
    let mut model = shape.clone();
    let mut landed = 0;
    for task in writers {
        let (id, parent, result) = task.await.expect("task");
        match result {
            Ok(()) if id == "w11" => {
                if let Some(entry) = model.iter_mut().find(|(n, _)| n == "t03-c0") {
                    entry.1 = None;
                }
                landed += 1;
            }
            Ok(()) => {
                model.push((id, parent));
                landed += 1;
            }
            Err(e) => assert!(e.is_tree_busy() || e.is_tree_changed(), "{id}: untyped {e}"),
        }
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(reader.await.expect("reader") > 0);
    assert!(landed > 0, "one writer renumbers and lands");
    assert_eq!(tree.pending().await?, None, "the renumbering finished");
    assert_nested(&db, "rush").await;
    assert_reads(&tree, &model, 3).await;
    Ok(())
}

#[tokio::test]
async fn a_resumed_move_under_the_empty_id_stays_under_it() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    // The empty id escapes to the empty text, which the intent's parent cannot tell from
    // the top level: the intent says where the node goes.
    for k in 1..30u64 {
        let catalog = format!("empty{k}");
        let tree = Nest::tree(&db, &catalog);
        let shape: Vec<(String, Option<String>)> = vec![
            (String::new(), None),
            ("a".into(), None),
            ("b".into(), Some("a".into())),
            ("c".into(), Some("b".into())),
        ];
        build(&tree, &catalog, &shape).await;
        let cut_off = Harness::on(db.clone(), Faults::default().fail_from(k)).await?;
        let faulty = cut_off.db().clone();
        let moved = Nest::tree(&faulty, &catalog).move_under("b", "").transaction_limit(0).await;
        if moved.is_err() && tree.pending().await?.is_some() {
            tree.resume(|_| {}).await?.expect("resumed");
        }
        let parent = tree.parent("b").await?.map(|p| p.id);
        if moved.is_ok() || parent.is_some_and(|p| p.is_empty()) {
            let model = vec![
                (String::new(), None),
                ("a".into(), None),
                ("b".into(), Some(String::new())),
                ("c".into(), Some("b".into())),
            ];
            assert_nested(&db, &catalog).await;
            assert_reads(&tree, &model, 1).await;
            if moved.is_ok() {
                return Ok(());
            }
        } else {
            // Cut before the intent was written: nothing moved.
            assert_eq!(tree.parent("b").await?.map(|p| p.id), Some("a".to_owned()), "k = {k}");
            assert_nested(&db, &catalog).await;
            assert_reads(&tree, &shape, 1).await;
        }
    }
    panic!("the move did not finish within 30 requests");
}

// ---------------------------------------------------------------------------------------
// What finding room costs: the same at every depth.

/// The requests of `stats` by operation: PutItem, UpdateItem, DeleteItem, TransactWriteItems,
/// GetItem, Query, BatchGetItem.
fn mix(stats: &ddb_model::RequestStats) -> [u64; 7] {
    [
        Op::PutItem,
        Op::UpdateItem,
        Op::DeleteItem,
        Op::TransactWriteItems,
        Op::GetItem,
        Op::Query,
        Op::BatchGetItem,
    ]
    .map(|op| stats.get(op))
}

/// A chain `c1`..`c<depth>` written as raw items: `c1` at the top level with a wide interval,
/// the nodes below it numbered tightly, so that the gap of `c<depth>` and of every ancestor
/// below `c1` is exhausted and the region with room is `c1`'s. At depth 1, `c1`'s own gap is
/// exhausted by a wide leaf `filler`, so that its region (that leaf) has room.
async fn exhausted_chain(db: &Db, catalog: &str, depth: usize) {
    const WIDE: u64 = 1 << 40;
    let mut items = Vec::new();
    if depth == 1 {
        items.push(node_item(catalog, "c1", None, (1, WIDE, WIDE - 1), 1, "^", 1));
        items.push(node_item(catalog, "filler", Some("c1"), (2, WIDE - 1, 2), 2, "^c1/", 0));
    } else {
        // The chain below `c1`: `n` nodes nested tightly from 2.
        let n = depth as u64 - 1;
        items.push(node_item(catalog, "c1", None, (1, WIDE, 2 * n + 1), 1, "^", 1));
        let mut up = "^c1/".to_owned();
        for k in 0..n {
            let (id, parent) = (format!("c{}", k + 2), format!("c{}", k + 1));
            let (lft, rgt) = (2 + k, 2 * n + 1 - k);
            let leaf = k + 1 == n;
            let next = if leaf { lft } else { rgt - 1 };
            let kids = u64::from(!leaf);
            items.push(node_item(catalog, &id, Some(&parent), (lft, rgt, next), k + 2, &up, kids));
            up.push_str(&format!("{id}/"));
        }
    }
    let mut top = std::collections::HashMap::new();
    top.insert("pk".to_owned(), s(&format!("CATALOG#{catalog}")));
    top.insert("sk".to_owned(), s("NEST#~top"));
    top.insert("_type".to_owned(), s("Nest:tree-top"));
    top.insert("_tree_next".to_owned(), n(WIDE));
    top.insert("_tree_kids".to_owned(), n(1));
    items.push(top);
    put_items(db, items).await;
}

#[tokio::test]
async fn finding_room_costs_the_same_at_every_depth() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let mut costs = BTreeMap::new();
    for depth in [1usize, 10, 90] {
        let catalog = format!("deep{depth}");
        exhausted_chain(&db, &catalog, depth).await;
        let tree = Nest::tree(&db, &catalog);
        let before = assert_nested(&db, &catalog).await;
        let parent = format!("c{depth}");
        let start = db.requests();
        tree.insert(&Nest::new(&catalog, "new", Some(&parent))).await?;
        let cost = db.requests() - start;
        let after = assert_nested(&db, &catalog).await;
        // The region below `c1` was numbered again: the chain (the filler at depth 1).
        let want: BTreeSet<String> = match depth {
            1 => BTreeSet::from(["filler".to_owned()]),
            _ => (2..=depth).map(|k| format!("c{k}")).collect(),
        };
        assert_eq!(rewritten(&before, &after), want, "depth {depth}");
        assert_eq!(after["new"].parent.as_deref(), Some(parent.as_str()));
        assert_eq!(after["new"].depth, depth as u64 + 1);
        costs.insert(depth, (mix(&cost), cost.total()));
    }
    // [PutItem, UpdateItem, DeleteItem, TransactWriteItems, GetItem, Query, BatchGetItem]:
    // the parent's GetItem (twice: again once there is room), the ancestors' BatchGetItem,
    // a Query down from the parent's `lft` and one up, the region's BatchGetItem, the
    // renumbering's TransactWriteItems and the insert's. A top-level parent has no ancestors
    // and nothing of its region before its `lft`: no BatchGetItem of them, no Query down.
    assert_eq!(costs[&1], ([0, 0, 0, 2, 2, 1, 1], 6), "depth 1");
    assert_eq!(costs[&10], ([0, 0, 0, 2, 2, 2, 2], 8), "depth 10");
    assert_eq!(costs[&90], costs[&10], "depth 90 costs what depth 10 does");
    Ok(())
}

#[tokio::test]
async fn a_chain_of_95_renumbers_at_a_cost_that_does_not_grow_with_depth() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Nest::tree(&db, "chain");
    tree.insert(&Nest::new("chain", "n0", None)).await?;
    let mut renumbered = Vec::new();
    for depth in 1..95usize {
        let start = db.requests();
        let parent = format!("n{}", depth - 1);
        tree.insert(&Nest::new("chain", &format!("n{depth}"), Some(&parent))).await?;
        let cost = db.requests() - start;
        if cost.get(Op::TransactWriteItems) == 1 {
            assert_eq!((mix(&cost), cost.total()), ([0, 0, 0, 1, 1, 0, 0], 2), "n{depth}");
            continue;
        }
        // The parent is at depth `depth`, below the top level: the cost of finding room
        // (and of the renumbering) does not depend on it.
        assert_eq!((mix(&cost), cost.total()), ([0, 0, 0, 2, 2, 2, 2], 8), "n{depth}: {cost}");
        renumbered.push(depth);
    }
    assert!(renumbered.iter().any(|d| *d > 60), "deep gaps ran out: {renumbered:?}");
    assert_nested(&db, "chain").await;
    assert_eq!(tree.breadcrumbs("n94").await?.len(), 95);
    Ok(())
}

#[tokio::test]
async fn a_266_node_renumbering_costs_what_the_docs_say() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    // The root's 266 children are packed at its start: an insert under the last one finds
    // no region of at most 96 nodes with room, counts further (one more Query), and numbers
    // the root's region again under the intent record.
    tight_tree(&db, "big", 266).await;
    let tree = Nest::tree(&db, "big");
    let before = assert_nested(&db, "big").await;
    let start = db.requests();
    tree.insert(&Nest::new("big", "new", Some("t265"))).await?;
    let cost = db.requests() - start;
    let after = assert_nested(&db, "big").await;
    assert_eq!(rewritten(&before, &after).len(), 266, "every child of the root");
    assert_eq!(tree.pending().await?, None);
    // [PutItem, UpdateItem, DeleteItem, TransactWriteItems, GetItem, Query, BatchGetItem]:
    // - finding room: the parent's GetItem, the ancestors' BatchGetItem, 2 Query around the
    //   parent (96 + 1 entries down: more than a transaction holds), 1 more Query down;
    // - the renumbering: 1 TransactWriteItems writing the intent (and checking the root's
    //   revision, 1 GetItem of it), the region read again under the intent (1 GetItem of its
    //   root, 1 Query, 3 BatchGetItem), 1 GetItem of its root's parent (the top level),
    //   266 rewrites in 3 fenced TransactWriteItems of 99, the switch to the Switch phase
    //   (1 UpdateItem) and the root's mark (1 TransactWriteItems), the intent's DeleteItem;
    // - the insert: the parent's GetItem and 1 TransactWriteItems.
    assert_eq!((mix(&cost), cost.total()), ([0, 1, 1, 6, 5, 4, 4], 21), "{cost}");
    Ok(())
}

#[tokio::test]
async fn a_whole_tree_renumbering_costs_what_the_docs_say() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    // 40 top-level nodes with 3 children each, numbered tightly, the top level's numbers
    // exhausted: no region has room, so an insert numbers the whole tree (160 nodes) again.
    // [PutItem, UpdateItem, DeleteItem, TransactWriteItems, GetItem, Query, BatchGetItem]:
    // - a top-level insert: the top-level record's GetItem, then the whole tree read (its
    //   record again, 1 Query, 2 BatchGetItem), the intent's PutItem, the tree read again
    //   under it (the same 4), 160 rewrites in 2 fenced TransactWriteItems of 99, the phase
    //   (1 UpdateItem), the top level's mark (1 TransactWriteItems), the intent's
    //   DeleteItem, then the insert (the record's GetItem, 1 TransactWriteItems);
    // - under a child: the same, with the parent's GetItem for the record's, and the search
    //   for a region with room before: the ancestors' BatchGetItem and 2 Query.
    for (catalog, parent, want) in [
        ("forest-top", None, ([1, 1, 1, 4, 4, 2, 4], 17)),
        ("forest-kid", Some("t05-c1"), ([1, 1, 1, 4, 4, 4, 5], 20)),
    ] {
        tight_forest(&db, catalog, 40, 3).await;
        let tree = Nest::tree(&db, catalog);
        let before = assert_nested(&db, catalog).await;
        let start = db.requests();
        tree.insert(&Nest::new(catalog, "fresh", parent)).await?;
        let cost = db.requests() - start;
        let after = assert_nested(&db, catalog).await;
        assert_eq!(rewritten(&before, &after).len(), 160, "{catalog}: every node");
        assert_eq!(tree.pending().await?, None);
        assert_eq!((mix(&cost), cost.total()), want, "{catalog}: {cost}");
    }
    Ok(())
}

/// The futures of the writes stay small, whatever the rare paths inside them (finding room
/// reads with two concurrent queries): a caller that awaits one on a small stack, or keeps
/// many in a `join_all`, does not pay for the renumbering. Found by a stack overflow of a
/// test thread after finding room grew; the rare paths are boxed.
#[tokio::test]
async fn write_futures_stay_small() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = Nest::tree(&db, "small");
    let node = Nest::new("small", "a", None);
    let insert = tree.insert(&node);
    let size = std::mem::size_of_val(&insert);
    drop(insert);
    let moved = tree.move_to_top("a");
    let move_size = std::mem::size_of_val(&moved);
    drop(moved);
    println!("insert future: {size} bytes, move builder: {move_size} bytes");
    // 8,520 bytes in a debug build when written (rustc 1.95), finding room boxed.
    assert!(size <= 16 * 1024, "an insert future of {size} bytes");
    assert!(move_size <= 1024, "a move builder of {move_size} bytes");
    tree.insert(&node).await?;
    Ok(())
}

/// Bookkeeping that cannot be read is a typed problem naming what is wrong: a node's
/// (`TreeProblem::CorruptNode` with a `NodeReason`), or the intent record's
/// (`TreeProblem::CorruptIntent` with an `IntentReason`); never a panic or a default.
#[tokio::test]
async fn unreadable_bookkeeping_names_its_reason() -> Result<(), Error> {
    use ddb_model::error::{IntentReason, NodeReason};
    let db = db::<DefaultTable>().await;
    let tree = Nest::tree(&db, "broken");
    let fine = node_item("broken", "a", None, (10, 100, 10), 1, "^", 0);
    let mut no_interval = node_item("broken", "b", None, (200, 300, 200), 1, "^", 0);
    no_interval.remove("_tree_rgt");
    let no_depth = node_item("broken", "c", None, (400, 500, 400), 0, "^", 0);
    let bad_up = node_item("broken", "d", Some("a"), (20, 30, 20), 2, "^a", 0);
    let disagree = node_item("broken", "e", Some("a"), (40, 50, 40), 1, "^a/", 0);
    put_items(&db, vec![fine, no_interval, no_depth, bad_up, disagree]).await;
    let reason = |err: Error| match err {
        Error::Tree { problem: TreeProblem::CorruptNode { id, reason }, .. } => (id, reason),
        other => panic!("{other}"),
    };
    let cases = [
        ("b", NodeReason::NoInterval),
        ("c", NodeReason::NoDepth),
        ("d", NodeReason::Ancestors),
        ("e", NodeReason::Inconsistent),
    ];
    for (id, expected) in cases {
        let err = tree.ancestors(id).await.unwrap_err();
        assert!(err.to_string().contains(&expected.to_string()), "{err}");
        assert_eq!(reason(err), (id.to_owned(), expected));
    }

    // An intent record of an unknown kind, then one without a phase.
    let mut intent = std::collections::HashMap::new();
    intent.insert("pk".to_owned(), s("CATALOG#broken"));
    intent.insert("sk".to_owned(), s("NEST#~op"));
    intent.insert("_type".to_owned(), s("Nest:tree-op"));
    intent.insert("op".to_owned(), s("teleport"));
    intent.insert("phase".to_owned(), s("copy"));
    intent.insert("token".to_owned(), s("t"));
    put_items(&db, vec![intent.clone()]).await;
    let corrupt = |err: Error| match err {
        Error::Tree { problem: TreeProblem::CorruptIntent { reason }, .. } => reason,
        other => panic!("{other}"),
    };
    let err = tree.pending().await.unwrap_err();
    let text =
        "tree of `Nest`: the tree's intent record cannot be read: unknown operation \"teleport\"";
    assert_eq!(err.to_string(), text);
    assert_eq!(corrupt(err), IntentReason::UnknownOperation { kind: "teleport".into() });
    intent.insert("op".to_owned(), s("delete-node"));
    intent.insert("from".to_owned(), s("a"));
    intent.remove("phase");
    put_items(&db, vec![intent]).await;
    let err = tree.resume(|_| {}).await.unwrap_err();
    assert_eq!(corrupt(err), IntentReason::Missing { attribute: "phase" });
    Ok(())
}
