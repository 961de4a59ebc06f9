//! Trees: every tree operation of each strategy (path, closure, adjacency, nested set) on
//! trees of each size of `Scale::tree_sizes`, from the bulk load that builds the tree, next
//! to the naive approaches a hand-written design starts from (children by filtering the
//! whole subtree, ancestors by one get per level, a move by one put and one delete per
//! node), and a table of how each cost grows with the tree.
//!
//! The expected request counts are derived from the tree's shape, never observed: each row
//! states the formula, and the report fails when a call sends a different number.

use std::collections::HashSet;
use std::fmt::Write as _;

use ddb_model::entity::to_item;
use ddb_model::prelude::*;
use ddb_model::{Item, TreePath, item::item_size, local, tree::NestedTree};
use serde::{Deserialize, Serialize};

use crate::Scale;
use crate::measure::{Measured, Row, Section, measure};

/// A node of the path strategy: its path is its sort key.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "TREE#<tree>", sk = "NODE#<path>")]
#[hierarchy(path = path, index = gsi1)]
pub struct PathNode {
    tree: String,
    path: TreePath,
    label: String,
}

/// A node of the closure strategy: one copy per ancestor.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "TREE#<tree>", sk = "CNODE#<id>")]
#[hierarchy(strategy = closure, parent = parent)]
pub struct ClosureNode {
    tree: String,
    id: String,
    parent: Option<String>,
    label: String,
}

/// A node of the adjacency strategy: a parent link, children found on an index.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "TREE#<tree>", sk = "ANODE#<id>")]
#[hierarchy(strategy = adjacency, parent = parent, index = gsi2)]
pub struct AdjacencyNode {
    tree: String,
    id: String,
    parent: Option<String>,
    label: String,
}

/// A node of the nested-set strategy: an interval of numbers nested in its parent's,
/// subtrees found on an index ordered by the interval's start.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "TREE#<tree>", sk = "NNODE#<id>")]
#[hierarchy(strategy = nested_set, parent = parent, index = gsi1)]
pub struct NestedNode {
    tree: String,
    id: String,
    parent: Option<String>,
    label: String,
}

const TREE: &str = "t";
/// Items per BatchWriteItem.
const BATCH: usize = 25;
/// Writes per fenced TransactWriteItems of the resumable protocol (and the intent check).
const FENCED: usize = 99;
/// Nodes per step of the resumable protocol (one batch write of their items per step).
const PROTOCOL_CHUNK: usize = 100;
/// The bytes a Query or Scan reads per request.
const PAGE: usize = 1 << 20;

/// The tree of `10^height` nodes: a root `r` with 9 children (the divisions `d0`..`d8`),
/// every node below them with 10 children (`n0`..`n9`) down to the leaves at index depth
/// `height` (depth `height + 1`, counting the root as 1).
#[derive(Debug, Clone, Copy)]
struct Shape {
    height: u32,
}

impl Shape {
    fn for_size(size: usize) -> Result<Shape, Error> {
        let height = (2..=6).find(|&h| 10usize.pow(h) == size);
        let height = height.unwrap_or_else(|| {
            crate::usage(&format!("tree size {size}: use 100, 1000, 10000, .."))
        });
        Ok(Shape { height })
    }

    fn nodes(self) -> usize {
        10usize.pow(self.height)
    }

    /// Nodes in the subtree of a node at index depth `k` (1: a division), itself included.
    fn subtree(self, k: u32) -> usize {
        (10usize.pow(self.height - k + 1) - 1) / 9
    }

    /// Nodes with children in the subtree of a node at index depth `k` >= 1.
    fn inner(self, k: u32) -> usize {
        (10usize.pow(self.height - k) - 1) / 9
    }

    /// Every node as index path (`[]` the root, `[3]` division d3, `[3, 4]` its 5th child..),
    /// level by level.
    fn all(self) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new()];
        let mut level = vec![Vec::new()];
        for k in 0..self.height {
            let fanout = if k == 0 { 9 } else { 10 };
            level = level
                .iter()
                .flat_map(|ix: &Vec<usize>| {
                    (0..fanout).map(move |c| {
                        let mut child = ix.clone();
                        child.push(c);
                        child
                    })
                })
                .collect();
            out.extend(level.iter().cloned());
        }
        out
    }

    /// The `i`-th leaf (spread over the divisions).
    fn leaf(self, i: u32) -> Vec<usize> {
        let i = i as usize;
        let mut ix = vec![i % 9];
        let mut rest = i / 9;
        for _ in 1..self.height {
            ix.push(rest % 10);
            rest /= 10;
        }
        ix
    }

    /// The nodes whose children are leaves (11-node subtrees) in division `d`.
    fn leaf_parents(self) -> usize {
        10usize.pow(self.height - 2)
    }

    /// The `k`-th node of division `d` whose children are leaves.
    fn leaf_parent(self, d: usize, k: usize) -> Vec<usize> {
        let mut ix = vec![d];
        let mut rest = k;
        for _ in 2..self.height {
            ix.push(rest % 10);
            rest /= 10;
        }
        ix
    }
}

fn segments(ix: &[usize]) -> Vec<String> {
    let mut out = vec!["r".to_owned()];
    for (k, c) in ix.iter().enumerate() {
        out.push(if k == 0 { format!("d{c}") } else { format!("n{c}") });
    }
    out
}

fn path_text(ix: &[usize]) -> String {
    segments(ix).join("/")
}

fn path_of(ix: &[usize]) -> Result<TreePath, Error> {
    Ok(path_text(ix).parse()?)
}

fn id_of(ix: &[usize]) -> String {
    segments(ix).join("-")
}

fn parent_id(ix: &[usize]) -> Option<String> {
    (!ix.is_empty()).then(|| id_of(&ix[..ix.len() - 1]))
}

/// A node's payload: about 60 bytes, so that a 10k-node tree (1.5 MB) takes two Query pages
/// and a division's subtree one, far from the page boundary.
fn label(ix: &[usize]) -> String {
    format!("unit {} of the organisation, cost centre {:04}", id_of(ix), ix.len() * 1000)
}

/// `⌈n / d⌉`.
fn ceil(n: usize, d: usize) -> u64 {
    n.div_ceil(d) as u64
}

/// The requests of one step of the resumable protocol: its writes are sent `PROTOCOL_CHUNK`
/// nodes at a time, each step's writes in requests of `BATCH`. `writes` lists the writes of
/// each node, in the order the protocol visits them.
fn protocol_batches(writes: &[usize]) -> u64 {
    writes.chunks(PROTOCOL_CHUNK).map(|c| ceil(c.iter().sum(), FENCED)).sum()
}

/// The requests of a protocol step whose writes come in groups that each land whole (one
/// group per node): per step of `PROTOCOL_CHUNK` nodes, transactions of up to `FENCED` writes
/// that end before a group that does not fit.
fn grouped_batches(groups: &[usize]) -> u64 {
    groups
        .chunks(PROTOCOL_CHUNK)
        .map(|c| {
            let (mut requests, mut used) = (0u64, 0usize);
            for &g in c {
                if used > 0 && used + g > FENCED {
                    requests += 1;
                    used = 0;
                }
                used += g;
            }
            requests + u64::from(used > 0)
        })
        .sum()
}

/// The requests of a Query reading `items` (in key order): a page ends before the item that
/// would take it over 1 MB.
fn query_pages<'i>(items: impl IntoIterator<Item = &'i Item>) -> u64 {
    let (mut pages, mut bytes) = (1, 0);
    for size in items.into_iter().map(item_size) {
        if bytes + size > PAGE && bytes > 0 {
            pages += 1;
            bytes = 0;
        }
        bytes += size;
    }
    pages
}

/// The string attribute `name` of `item`.
fn attr<'i>(item: &'i Item, name: &str) -> &'i str {
    item.get(name).and_then(|v| v.as_s().ok()).map_or("", String::as_str)
}

/// Every item of `db`'s table, by sort key.
async fn items_by_sk(db: &Db) -> Result<Vec<Item>, Error> {
    let mut items: Vec<Item> = db.scan_items().all().await?;
    items.sort_by(|a, b| attr(a, "sk").cmp(attr(b, "sk")));
    Ok(items)
}

/// Fails unless `items` fit one Query response: the workload's counts assume it.
fn one_page<'i>(what: &str, items: impl IntoIterator<Item = &'i Item>) -> Result<(), Error> {
    let bytes: usize = items.into_iter().map(item_size).sum();
    if bytes >= PAGE {
        panic!("{what}: {bytes} bytes, more than one Query page: the workload's counts assume one");
    }
    Ok(())
}

/// The journal items a bulk load writes next to its intent record: its nodes' items, in
/// load order (parents first, level by level: `Shape::all`'s order), packed into items of
/// at most 300 KB.
fn journal_items<E: Entity>(nodes: &[E]) -> Result<usize, Error> {
    const JOURNAL_BYTES: usize = 300_000;
    let (mut chunks, mut bytes) = (0, 0);
    for node in nodes {
        let size = item_size(&to_item(node, node.version())?) + 3;
        if bytes > 0 && bytes + size > JOURNAL_BYTES {
            chunks += 1;
            bytes = 0;
        }
        bytes += size;
    }
    Ok(chunks + usize::from(bytes > 0))
}

/// The cost of a bulk load of `nodes` into an empty tree that writes `rows` items, plus
/// `extra` reads of the strategy (`extra_why` says which).
fn load_cost<E: Entity>(
    nodes: &[E],
    rows: usize,
    extra: u64,
    extra_why: &str,
) -> Result<Cost, Error> {
    let n = nodes.len();
    let journal = journal_items(nodes)?;
    let min = ceil(rows, BATCH);
    let journal_batches = ceil(journal, BATCH);
    let expected = min + 1 + ceil(n, 100) + journal_batches + 1 + 1 + extra;
    Ok(Cost::new(
        min,
        expected,
        format!(
            "{n} nodes, {rows} items: the minimum is ⌈items / 25⌉ = {min} BatchWriteItem. \
             `bulk_load` sends them with no transaction per node, and adds the PutItem of an \
             intent record (other writes of the tree wait), ⌈{n} / 100⌉ = {} strongly \
             consistent BatchGetItem (no node exists already), {journal_batches} \
             BatchWriteItem of a journal of the input ({journal} item(s) of 300 KB, so that \
             `resume` can finish an interrupted load), an UpdateItem of the intent's phase, \
             and one TransactWriteItems that records the parents' bookkeeping and removes the \
             journal and the intent.{extra_why}",
            ceil(n, 100)
        ),
    ))
}

/// One section per strategy and tree size, then the growth table.
pub async fn sections(scale: &Scale) -> Result<(Vec<Section>, String), Error> {
    let mut sections = Vec::new();
    let mut by_size = Vec::new();
    for &size in scale.tree_sizes {
        let shape = Shape::for_size(size)?;
        for (strategy, section) in [
            ("path", path_section(shape, scale).await?),
            ("closure", closure_section(shape, scale).await?),
            ("adjacency", adjacency_section(shape, scale).await?),
            ("nested set", nested_section(shape, scale).await?),
        ] {
            by_size.push((strategy, size, sections.len()));
            sections.push(section);
        }
    }
    let growth = growth(&sections, &by_size);
    Ok((sections, growth))
}

/// How each pattern's cost grows from the smallest tree to the largest.
fn growth(sections: &[Section], by_size: &[(&str, usize, usize)]) -> String {
    let sizes: Vec<usize> = {
        let mut s: Vec<usize> = by_size.iter().map(|(_, n, _)| *n).collect();
        s.dedup();
        s
    };
    let mut out = String::new();
    if sizes.len() < 2 {
        return out;
    }
    let sizes_text: Vec<String> = sizes.iter().map(|n| format!("{n}")).collect();
    let _ = writeln!(
        out,
        "### How tree costs grow ({} nodes)\n\nPer call: requests / items read / time, for \
         each tree size. The path and closure strategies read what they return; the \
         adjacency strategy's reads grow with the subtree; the nested set reads a node's \
         whole subtree for any depth range below it; the naive rows grow with the tree.\n",
        sizes_text.join(" → ")
    );
    let _ = write!(out, "| strategy | access pattern |");
    for n in &sizes {
        let _ = write!(out, " {n} nodes |");
    }
    out.push('\n');
    out.push_str("| --- | --- |");
    for _ in &sizes {
        out.push_str(" ---: |");
    }
    out.push('\n');
    let strategies = ["path", "closure", "adjacency", "nested set"];
    for strategy in strategies {
        let mine: Vec<&Section> = by_size
            .iter()
            .filter(|(s, _, _)| *s == strategy)
            .filter_map(|(_, _, i)| sections.get(*i))
            .collect();
        let Some(first) = mine.first() else { continue };
        for row in &first.rows {
            let _ = write!(out, "| {strategy} | {} |", row.pattern);
            for section in &mine {
                match section.rows.iter().find(|r| r.pattern == row.pattern) {
                    Some(r) => {
                        let _ = write!(out, " {} |", cost(r));
                    }
                    None => out.push_str(" – |"),
                }
            }
            out.push('\n');
        }
    }
    out
}

fn cost(r: &Row) -> String {
    let runs = u64::from(r.runs.max(1));
    let ms = r.elapsed.as_secs_f64() * 1000.0 / runs as f64;
    format!(
        "{} / {} / {:.2} ms",
        crate::measure::number(r.requests.total() as f64 / runs as f64),
        crate::measure::number(r.requests.items_read() as f64 / runs as f64),
        ms
    )
}

fn intro(strategy: &str, shape: Shape, scale: &Scale, layout: &str) -> String {
    let h = shape.height;
    format!(
        "{layout} One tree of {} nodes: a root, 9 divisions, then 10 children per node down to \
         the leaves at depth {} (the root has depth 1). A division holds {} nodes; a node \
         whose children are leaves, 11. Reads of one node run {} times, other reads {} \
         times; writes run on distinct nodes ({strategy}).",
        shape.nodes(),
        h + 1,
        shape.subtree(1),
        scale.single_runs,
        scale.many_runs,
    )
}

/// The runs of a write on the `available` distinct targets there are.
fn runs_of(wanted: u32, available: usize) -> u32 {
    wanted.min(u32::try_from(available).unwrap_or(u32::MAX)).max(1)
}

// -------------------------------------------------------------------------------------------
// The path strategy
// -------------------------------------------------------------------------------------------

async fn path_section(shape: Shape, scale: &Scale) -> Result<Section, Error> {
    let db: Db = local::isolated_db().await?;
    let db = &db;
    let all: Vec<PathNode> = shape
        .all()
        .iter()
        .map(|ix| Ok(PathNode { tree: TREE.into(), path: path_of(ix)?, label: label(ix) }))
        .collect::<Result<_, Error>>()?;
    let load = load_cost(&all, all.len(), 0, "")?;
    let t = PathNode::tree(db, TREE);
    let tree = &t;
    let nodes = &all;
    let loaded =
        measure(db, 1, |_| async move { Ok(tree.bulk_load(nodes.iter().cloned()).await?.nodes) })
            .await?;
    let items = items_by_sk(db).await?;
    let below = |ix: &[usize]| {
        // Key parts escape `/`, so a path's descendants share the prefix `NODE#r%2Fd3%2F`.
        let prefix = format!("NODE#{}%2F", path_text(ix).replace('/', "%2F"));
        items.iter().filter(move |i| attr(i, "sk").starts_with(&prefix))
    };
    let division_pages = query_pages(below(&[0]));
    let tree_pages = query_pages(below(&[]));
    let (one, many) = (scale.single_runs, scale.many_runs);
    let h = shape.height;
    let s_div = shape.subtree(1);
    let p = |ix: &[usize]| path_of(ix);
    let mut s = Section::new(
        format!("Trees: path strategy, {} nodes", shape.nodes()),
        intro(
            "path",
            shape,
            scale,
            "`#[hierarchy(path = path, index = gsi1)]`: the path is the sort key \
             (`NODE#r%2Fd3%2Fn4`, separators escaped), and gsi1 keys each node by its depth \
             and path.",
        ),
    );
    s.push(load_row(loaded, &load));

    let m =
        measure(
            db,
            one,
            |i| async move { Ok(tree.get(&p(&shape.leaf(i))?).await?.map_or(0, |_| 1)) },
        )
        .await?;
    s.push(m.row("get a node", "tree.get(&path)", 1, "One GetItem."));

    let m = measure(db, many, |i| async move {
        let ix = shape.leaf_parent(i as usize % 9, i as usize / 9 % shape.leaf_parents());
        Ok(tree.children(&p(&ix)?).all().await?.len())
    })
    .await?;
    s.push(m.row(
        "children of a node (10)",
        "tree.children(&path)",
        1,
        "One Query on the index, whose keys put each node's children together (`<depth>#<path>`): \
         it reads exactly the children.",
    ));
    let m = measure(db, many, |i| async move {
        Ok(tree.children(&p(&[i as usize % 9])?).all().await?.len())
    })
    .await?;
    s.push(m.row(
        "children of a division (10)",
        "tree.children(&division)",
        1,
        "One Query on the index, whose keys put each node's children together (`<depth>#<path>`): \
         it reads exactly the children.",
    ));
    let m = measure(db, many, |i| async move {
        let division = p(&[i as usize % 9])?;
        let nodes = tree.descendants(&division).all().await?;
        Ok(nodes.iter().filter(|n| n.path.depth() == 3).count())
    })
    .await?;
    s.push(m.row_over(
        "naive: children of a division by filtering its subtree",
        "descendants(&division) + filter",
        1,
        division_pages,
        &format!(
            "The naive approach: one Query on the sort key prefix reads the whole \
             subtree ({} items) to keep 10; the reads grow with the subtree, not the result.",
            s_div - 1
        ),
    ));
    let m = measure(db, many, |_| async move { Ok(tree.children(&p(&[])?).all().await?.len()) })
        .await?;
    s.push(m.row(
        "children of the root (9)",
        "tree.children(&root)",
        1,
        "One Query on the index, whose keys put each node's children together (`<depth>#<path>`): \
         it reads exactly the children.",
    ));
    let m = measure(db, many, |_| async move {
        let nodes = tree.descendants(&p(&[])?).all().await?;
        Ok(nodes.iter().filter(|n| n.path.depth() == 2).count())
    })
    .await?;
    s.push(m.row_over(
        "naive: children of the root by filtering the whole tree",
        "descendants(&root) + filter",
        1,
        tree_pages,
        &format!(
            "The naive approach on the root reads the whole tree ({} items) in {tree_pages} \
             Query page(s) of at most 1 MB to keep 9.",
            shape.nodes() - 1
        ),
    ));
    let m = measure(db, many, |i| async move {
        Ok(tree.descendants(&p(&[i as usize % 9])?).all().await?.len())
    })
    .await?;
    s.push(m.row_over(
        "subtree of a division",
        "tree.descendants(&division).all()",
        division_pages,
        division_pages,
        &format!(
            "One Query on the sort key prefix of the division's path (`NODE#r%2Fd3%2F`) \
             reads exactly the {} descendants ({division_pages} page(s) of at most 1 MB).",
            s_div - 1
        ),
    ));
    let m = measure(db, many, |_| async move {
        Ok(tree.descendants(&p(&[])?).depth(1..=2).all().await?.len())
    })
    .await?;
    s.push(m.row_over(
        "depth 1..=2 below the root (99)",
        "tree.descendants(&root).depth(1..=2)",
        1,
        2,
        "The index keys nodes by depth first, so each level is its own key range: one Query \
         per level, each reading exactly that level (the closure strategy does a range of \
         depths in one Query).",
    ));
    let m = measure(db, many, |_| async move { Ok(tree.at_depth(3).all().await?.len()) }).await?;
    s.push(m.row(
        "all nodes at depth 3 (90)",
        "tree.at_depth(3)",
        1,
        "One Query on the index key range of the depth.",
    ));
    let m =
        measure(db, one, |i| async move { Ok(tree.ancestors(&p(&shape.leaf(i))?).await?.len()) })
            .await?;
    s.push(m.row(
        "ancestors of a leaf",
        "tree.ancestors(&leaf)",
        1,
        "The path names every ancestor's key: one BatchGetItem (up to 100 keys).",
    ));
    let m = measure(db, one, |i| async move {
        let leaf = p(&shape.leaf(i))?;
        let mut found = 0;
        let mut at = leaf.parent();
        while let Some(path) = at {
            found += usize::from(tree.get(&path).await?.is_some());
            at = path.parent();
        }
        Ok(found)
    })
    .await?;
    s.push(m.row_over(
        "naive: ancestors by one get per level",
        "tree.get(&parent) per level",
        1,
        u64::from(h),
        &format!(
            "The naive approach: one GetItem per level, {h} round trips one after \
             another for a leaf at depth {}.",
            h + 1
        ),
    ));
    let m = measure(db, many, |i| async move {
        Ok(usize::try_from(tree.subtree_size(&p(&[i as usize % 9])?).await?).unwrap_or(0))
    })
    .await?;
    s.push(m.row_over(
        "subtree size of a division",
        "tree.subtree_size(&division)",
        1,
        2,
        "A count Query (`Select = COUNT`) of the descendants, plus a GetItem of the node \
         itself: without it a leaf (0 descendants) and a missing node look the same.",
    ));

    // Writes, each on its own nodes: inserts under d8, moves from d0 (and d1 naively) and the
    // divisions d2.., deletes in d5 and of d6, d7; everything moves under d8.
    let m = measure(db, one, |i| async move {
        let path = p(&[8])?.child(format!("new{i}"))?;
        tree.insert(&PathNode { tree: TREE.into(), path, label: "new".into() }).await?;
        Ok(0)
    })
    .await?;
    s.push(m.row(
        "insert a node",
        "tree.insert(&node)",
        1,
        "One TransactWriteItems: the node (refused if it exists), its parent's revision \
         (which must exist) and a check that no large move or delete is under way.",
    ));
    let small = runs_of(many, shape.leaf_parents());
    let m = measure(db, small, |i| async move {
        let from = p(&shape.leaf_parent(0, i as usize))?;
        let to = p(&[8])?.child(format!("m{i}"))?;
        Ok(tree.move_subtree(&from, &to).await?.nodes)
    })
    .await?;
    s.push(m.row_over(
        "move a subtree of 11 nodes",
        "tree.move_subtree(&from, &to)",
        2,
        3,
        "Every node's key changes, so the minimum is one read of the subtree and one \
         TransactWriteItems (2 actions per node, up to 49 nodes). ddb-model reads the \
         subtree's root (GetItem) before its descendants (Query): reading them together lets \
         a node inserted meanwhile escape the revision checks (see the tree module docs).",
    ));
    let m = measure(db, small, |i| async move {
        let from = p(&shape.leaf_parent(1, i as usize))?;
        let to = p(&[8])?.child(format!("x{i}"))?;
        let nodes = tree.descendants(&from).depth(0..).all().await?;
        for node in &nodes {
            let mut moved = node.clone();
            moved.path = match node.path.rebase(&from, &to) {
                Some(path) => path?,
                None => node.path.clone(),
            };
            moved.put(db).await?;
            db.delete(node.key()).await?;
        }
        Ok(nodes.len())
    })
    .await?;
    s.push(m.row_over(
        "naive: move 11 nodes by one put and one delete per node",
        "put + delete per node",
        2,
        2 + 2 * 11,
        "The naive approach: the node (GetItem) and its subtree (Query), then one \
         PutItem and one DeleteItem per node, 22 round trips, and no atomicity: a failure \
         halfway leaves the subtree in two places.",
    ));
    let divisions = runs_of(many, 3);
    let (div_expected, div_min, div_why) = if s_div <= 49 {
        (
            3,
            2,
            "Up to 49 nodes: as for 11 nodes, one read of the root, one of its descendants and \
             one TransactWriteItems."
                .to_owned(),
        )
    } else {
        let batches = 2 * ceil(s_div, BATCH);
        let fenced = 2 * ceil(s_div, FENCED);
        (
            8 + division_pages + fenced,
            division_pages + batches,
            format!(
                "{s_div} nodes are more than a transaction holds, so the minimum is one read \
                 of the subtree and {batches} BatchWriteItem of 25 items (a put and a delete \
                 per node). ddb-model moves it through its resumable protocol: {fenced} \
                 TransactWriteItems of 99 writes and a check of the intent record's epoch \
                 (so that a writer taken over by `resume` or `rollback` cannot land a late \
                 write), and GetItem + Query to size the subtree, PutItem of the intent \
                 record, BatchGetItem of the destination and its parent, GetItem + Query of \
                 the subtree again under the intent, 2 UpdateItem for the phases, DeleteItem \
                 of the intent: 8 requests that make an interrupted move resumable \
                 (`tree.resume()`) and keep inserts out of the moving subtree."
            ),
        )
    };
    let m = measure(db, divisions, |i| async move {
        let from = p(&[2 + i as usize])?;
        let to = p(&[8])?.child(format!("D{i}"))?;
        Ok(tree.move_subtree(&from, &to).await?.nodes)
    })
    .await?;
    s.push(m.row_over(
        "move a division",
        "tree.move_subtree(&division, &to)",
        div_min,
        div_expected,
        &div_why,
    ));
    let m = measure(db, small, |i| async move {
        Ok(tree.delete_subtree(&p(&shape.leaf_parent(5, i as usize))?).await?.nodes)
    })
    .await?;
    s.push(m.row_over(
        "delete a subtree of 11 nodes",
        "tree.delete_subtree(&path)",
        2,
        3,
        "One read of the subtree and one TransactWriteItems (up to 99 nodes), each delete \
         conditioned on the revision read. ddb-model reads the root (GetItem) before its \
         descendants (Query), as for a move.",
    ));
    let (del_expected, del_min, del_why) = if s_div <= 99 {
        (
            3,
            2,
            "Up to 99 nodes: one read of the root, one of its descendants and one \
                TransactWriteItems."
                .to_owned(),
        )
    } else {
        let batches = ceil(s_div, BATCH);
        let fenced = ceil(s_div, FENCED);
        (
            6 + division_pages + fenced,
            division_pages + batches,
            format!(
                "{s_div} nodes: the minimum is one read and {batches} BatchWriteItem of 25 \
                 deletes. The resumable protocol deletes in {fenced} TransactWriteItems of 99 \
                 deletes and a check of the intent's epoch, and adds GetItem + Query to size the subtree, \
                 PutItem of the intent, GetItem of the root under it, UpdateItem of the phase \
                 and DeleteItem of the intent: 6 requests that let `tree.resume()` finish an \
                 interrupted delete (deepest nodes first, so what is left is always a tree)."
            ),
        )
    };
    let m = measure(db, runs_of(many, 2), |i| async move {
        Ok(tree.delete_subtree(&p(&[6 + i as usize])?).await?.nodes)
    })
    .await?;
    s.push(m.row_over(
        "delete a division",
        "tree.delete_subtree(&division)",
        del_min,
        del_expected,
        &del_why,
    ));
    Ok(s)
}

// -------------------------------------------------------------------------------------------
// The closure and adjacency strategies: nodes by id, the same calls, different costs
// -------------------------------------------------------------------------------------------

/// The requests one call is expected to send, the minimum, and why.
struct Cost {
    min: u64,
    expected: u64,
    why: String,
}

impl Cost {
    fn new(min: u64, expected: u64, why: impl Into<String>) -> Self {
        Cost { min, expected, why: why.into() }
    }
}

/// The same cost for the children of any node.
fn same3(c: Cost) -> [Cost; 3] {
    [Cost::new(c.min, c.expected, c.why.clone()), Cost::new(c.min, c.expected, c.why.clone()), c]
}

/// The row of a bulk load of the whole tree.
fn load_row(m: Measured, c: &Cost) -> Row {
    m.row_over("bulk load the tree", "tree.bulk_load(nodes)", c.min, c.expected, &c.why)
}

/// The costs of the rows that differ between the strategies addressed by id.
struct IdCosts {
    /// The children of a node whose children are leaves, of a division, of the root.
    children: [Cost; 3],
    subtree: Cost,
    depth_range: Cost,
    at_depth: Cost,
    ancestors: Cost,
    size: Cost,
    insert: Cost,
    move_small: Cost,
    move_division: Cost,
    delete_small: Cost,
    delete_division: Cost,
}

/// The rows of a tree whose nodes are addressed by id (`ClosureTree`, `AdjacencyTree`: the
/// same method names). `$node` builds a node from its id and parent id; `$at_depth` reads the
/// nodes at depth 3 with `$tree`.
macro_rules! id_tree_rows {
    ($s:ident, $db:ident, $tree:ident, $shape:ident, $scale:ident, $costs:ident,
     node = $node:path, at_depth = $at_depth:expr) => {{
        let (one, many) = ($scale.single_runs, $scale.many_runs);
        let shape = $shape;
        let tree = $tree;
        let db = $db;
        let row = |m: Measured, pattern: &str, call: &str, c: &Cost| {
            m.row_over(pattern, call, c.min, c.expected, &c.why)
        };
        let m = measure(db, one, |i| async move {
            Ok(tree.get(id_of(&shape.leaf(i))).await?.map_or(0, |_| 1))
        })
        .await?;
        $s.push(m.row("get a node", "tree.get(id)", 1, "One GetItem."));
        let m = measure(db, many, |i| async move {
            let ix = shape.leaf_parent(i as usize % 9, i as usize / 9 % shape.leaf_parents());
            Ok(tree.children(id_of(&ix)).all().await?.len())
        })
        .await?;
        $s.push(row(m, "children of a node (10)", "tree.children(id)", &$costs.children[0]));
        let m = measure(db, many, |i| async move {
            Ok(tree.children(id_of(&[i as usize % 9])).all().await?.len())
        })
        .await?;
        $s.push(row(m, "children of a division (10)", "tree.children(id)", &$costs.children[1]));
        let m =
            measure(db, many, |_| async move { Ok(tree.children(id_of(&[])).all().await?.len()) })
                .await?;
        $s.push(row(m, "children of the root (9)", "tree.children(id)", &$costs.children[2]));
        let m = measure(db, many, |i| async move {
            Ok(tree.descendants(id_of(&[i as usize % 9])).all().await?.len())
        })
        .await?;
        $s.push(row(m, "subtree of a division", "tree.descendants(id).all()", &$costs.subtree));
        let m = measure(db, many, |_| async move {
            Ok(tree.descendants(id_of(&[])).depth(1..=2).all().await?.len())
        })
        .await?;
        $s.push(row(
            m,
            "depth 1..=2 below the root (99)",
            "tree.descendants(id).depth(1..=2)",
            &$costs.depth_range,
        ));
        let m = measure(db, many, |_| async move { Ok($at_depth.len()) }).await?;
        $s.push(row(m, "all nodes at depth 3 (90)", "tree.at_depth(3)", &$costs.at_depth));
        let m =
            measure(
                db,
                one,
                |i| async move { Ok(tree.ancestors(id_of(&shape.leaf(i))).await?.len()) },
            )
            .await?;
        $s.push(row(m, "ancestors of a leaf", "tree.ancestors(id)", &$costs.ancestors));
        let m = measure(db, many, |i| async move {
            Ok(usize::try_from(tree.subtree_size(id_of(&[i as usize % 9])).await?).unwrap_or(0))
        })
        .await?;
        $s.push(row(m, "subtree size of a division", "tree.subtree_size(id)", &$costs.size));

        // Writes, each on its own nodes: inserts under d8, moves from d0 and of the divisions
        // d2.., deletes in d5 and of d6, d7; everything moves under d8.
        let m = measure(db, one, |i| async move {
            tree.insert(&$node(format!("new{i}"), Some(id_of(&[8])))).await?;
            Ok(0)
        })
        .await?;
        $s.push(row(m, "insert a node", "tree.insert(&node)", &$costs.insert));
        let small = runs_of(many, shape.leaf_parents());
        let m = measure(db, small, |i| async move {
            let from = id_of(&shape.leaf_parent(0, i as usize));
            Ok(tree.move_subtree(from, id_of(&[8])).await?.nodes)
        })
        .await?;
        $s.push(row(
            m,
            "move a subtree of 11 nodes",
            "tree.move_subtree(id, parent)",
            &$costs.move_small,
        ));
        let m = measure(db, runs_of(many, 3), |i| async move {
            Ok(tree.move_subtree(id_of(&[2 + i as usize]), id_of(&[8])).await?.nodes)
        })
        .await?;
        $s.push(row(m, "move a division", "tree.move_subtree(id, parent)", &$costs.move_division));
        let m = measure(db, small, |i| async move {
            Ok(tree.delete_subtree(id_of(&shape.leaf_parent(5, i as usize))).await?.nodes)
        })
        .await?;
        $s.push(row(
            m,
            "delete a subtree of 11 nodes",
            "tree.delete_subtree(id)",
            &$costs.delete_small,
        ));
        let m = measure(db, runs_of(many, 2), |i| async move {
            Ok(tree.delete_subtree(id_of(&[6 + i as usize])).await?.nodes)
        })
        .await?;
        $s.push(row(m, "delete a division", "tree.delete_subtree(id)", &$costs.delete_division));
    }};
}

async fn closure_section(shape: Shape, scale: &Scale) -> Result<Section, Error> {
    let db: Db = local::isolated_db().await?;
    let db = &db;
    let t = ClosureNode::tree(db, TREE);
    let tree = &t;
    let node = |id: String, parent: Option<String>| {
        let label = format!("unit {id}");
        ClosureNode { tree: TREE.into(), id, parent, label }
    };
    let all: Vec<ClosureNode> = shape
        .all()
        .iter()
        .map(|ix| ClosureNode { label: label(ix), ..node(id_of(ix), parent_id(ix)) })
        .collect();
    // A node at depth D (the root: 1) is D + 2 items: the node, its own copy, a copy under
    // each ancestor and one keyed by its absolute depth.
    let rows = shape.all().iter().map(|ix| ix.len() + 3).sum();
    let load = load_cost(&all, rows, 0, "")?;
    let nodes = &all;
    let loaded =
        measure(db, 1, |_| async move { Ok(tree.bulk_load(nodes.iter().cloned()).await?.nodes) })
            .await?;
    let items = items_by_sk(db).await?;
    one_page(
        "the copies under a division",
        items.iter().filter(|i| attr(i, "sk").contains("#r-d0#")),
    )?;
    let h = shape.height;
    let s_div = shape.subtree(1);
    let mut s = Section::new(
        format!("Trees: closure strategy, {} nodes", shape.nodes()),
        intro(
            "closure",
            shape,
            scale,
            "`#[hierarchy(strategy = closure, parent = parent)]`: nodes by id, and a copy of \
             each node under each of its ancestors, keyed by relative depth; no index.",
        ),
    );
    s.push(load_row(loaded, &load));

    // A division moves from under r to under r/d8: every node gets 3 new copies (under r at
    // its new depth, under d8, and by absolute depth), its own copy rewritten, and 2 copies
    // deleted (under r at its old depth, by old absolute depth); the division's node item
    // is rewritten too.
    let fits = s_div - 1 < (100 - 3) / (1 + 2 + 3);
    let move_division = if fits {
        Cost::new(2, 6, "As for 11 nodes: the whole move fits one transaction.")
    } else {
        let copy = protocol_batches(&vec![3; s_div]);
        let mut own = vec![1; s_div];
        own[0] = 2;
        let switch = protocol_batches(&own);
        let remove = protocol_batches(&vec![2; s_div]);
        let min = 1 + ceil(6 * s_div + 1, BATCH);
        Cost::new(
            min,
            12 + copy + switch + remove,
            format!(
                "{s_div} nodes, {} writes (3 new copies, the own copy and 2 deletes per node, \
                 and the node item): the minimum is one read and ⌈writes / 25⌉ = {} \
                 BatchWriteItem. The resumable protocol writes them in three steps (copy \
                 {copy}, switch {switch}, remove {remove} TransactWriteItems: 100 nodes per \
                 step, 99 writes and a check of the intent's epoch per request) and adds 12: the 3 reads that find the subtree too large for a \
                 transaction, PutItem / UpdateItem x3 / DeleteItem of the intent, the own \
                 copies of node and parent, and the subtree (GetItem + Query).",
                6 * s_div + 1,
                min - 1
            ),
        )
    };
    // A division d (depth 2, ancestors [r]): each node at relative depth k below it has
    // k + 4 items (node, own copy, copy under r, copy by depth, copies under the k - 1 nodes
    // between, copy under d), deleted whole, one node per group, deepest first; then d's 3
    // items, then its own copy.
    let budget_fits = {
        let depth = 2usize;
        let cap = (99 - depth - 2) / (depth + 3);
        let actions: usize = depth
            + 2
            + (1..h as usize).map(|k| 10usize.pow(k as u32) * (depth + k + 2)).sum::<usize>();
        s_div - 1 <= cap && actions <= 99
    };
    let delete_division = if budget_fits {
        Cost::new(2, 5, "As for 11 nodes: the whole delete fits one transaction.")
    } else {
        let mut deepest_first = Vec::new();
        for k in (1..h as usize).rev() {
            deepest_first.extend(std::iter::repeat_n(k + 4, 10usize.pow(k as u32)));
        }
        let pass = grouped_batches(&deepest_first);
        let writes: usize = deepest_first.iter().sum::<usize>() + 4;
        let min = 1 + ceil(writes, BATCH);
        Cost::new(
            min,
            8 + pass + 2,
            format!(
                "{s_div} nodes, {writes} items: the minimum is one read and ⌈items / 25⌉ = {} \
                 BatchWriteItem. The resumable protocol deletes each node below whole (all its \
                 items in one transaction, so that a crash never leaves a node half deleted), \
                 deepest first ({pass} requests), then the division (2), and adds 8: the 2 \
                 reads that find the subtree too large, PutItem / UpdateItem / DeleteItem of \
                 the intent, the own copy read again, the subtree (GetItem + Query).",
                min - 1
            ),
        )
    };
    let costs = IdCosts {
        children: same3(Cost::new(
            1,
            1,
            "One Query of the copies at relative depth 1 under the node: exactly the children.",
        )),
        subtree: Cost::new(
            1,
            1,
            "One Query of the copies under the node: exactly its descendants.",
        ),
        depth_range: Cost::new(
            1,
            1,
            "The copies under a node are sorted by relative depth: one Query of a key range.",
        ),
        at_depth: Cost::new(
            1,
            1,
            "Each node also has a copy keyed by its absolute depth: one Query.",
        ),
        ancestors: Cost::new(
            1,
            2,
            "An id does not name its ancestors (a path does: 1 BatchGetItem): the node's own \
             copy lists them (GetItem), then one BatchGetItem reads them.",
        ),
        size: Cost::new(
            1,
            1,
            "One count Query of the copies under the node, its own copy included.",
        ),
        insert: Cost::new(
            1,
            2,
            format!(
                "The node and its copies must know its ancestors: a GetItem of the parent's \
                 own copy, then one TransactWriteItems of the node, its {} copies and the \
                 parent's revision. (The path strategy inserts in 1.)",
                h + 3
            ),
        ),
        move_small: Cost::new(
            2,
            6,
            "The minimum is one read and one TransactWriteItems. ddb-model reads the own copies \
             of the node and its new parent (2 GetItem, concurrently: the ancestor lists and \
             the cycle check), lists the subtree (Query), reads the own copies of its nodes \
             (BatchGetItem: their ancestor lists and revisions) and counts the subtree again \
             (Query: a node inserted during the reads cancels the move), then writes the \
             changed copies in one TransactWriteItems.",
        ),
        move_division,
        delete_small: Cost::new(
            2,
            5,
            "The minimum is one read and one TransactWriteItems. ddb-model reads the node's own \
             copy (GetItem), lists the subtree (Query), reads its nodes' own copies \
             (BatchGetItem) and counts it again (Query), then deletes every node with all its \
             copies in one TransactWriteItems.",
        ),
        delete_division,
    };
    id_tree_rows!(
        s,
        db,
        tree,
        shape,
        scale,
        costs,
        node = node,
        at_depth = tree.at_depth(3).all().await?
    );
    Ok(s)
}

async fn adjacency_section(shape: Shape, scale: &Scale) -> Result<Section, Error> {
    let db: Db = local::isolated_db().await?;
    let db = &db;
    let t = AdjacencyNode::tree(db, TREE);
    let tree = &t;
    let node = |id: String, parent: Option<String>| {
        let label = format!("unit {id}");
        AdjacencyNode { tree: TREE.into(), id, parent, label }
    };
    let all: Vec<AdjacencyNode> = shape
        .all()
        .iter()
        .map(|ix| AdjacencyNode { label: label(ix), ..node(id_of(ix), parent_id(ix)) })
        .collect();
    let load = load_cost(&all, all.len(), 0, "")?;
    let nodes = &all;
    let loaded =
        measure(db, 1, |_| async move { Ok(tree.bulk_load(nodes.iter().cloned()).await?.nodes) })
            .await?;
    let h = shape.height;
    let s_div = shape.subtree(1);
    let inner = shape.inner(1) as u64;
    let mut s = Section::new(
        format!("Trees: adjacency strategy, {} nodes", shape.nodes()),
        intro(
            "adjacency",
            shape,
            scale,
            "`#[hierarchy(strategy = adjacency, parent = parent, index = gsi2)]`: each node \
             stores its parent's id; gsi2 keys nodes by parent, and each node counts its \
             children.",
        ),
    );
    s.push(load_row(loaded, &load));
    let per_node = "The adjacency list stores only parent links: a subtree is read level by \
                    level, one children Query per node that has children (a node's children \
                    counter says which), 8 at a time. The path and closure strategies need 1.";
    let move_why = "One item changes (the node's parent link), whatever the subtree's size. \
                    The destination's ancestors must be read to refuse a cycle and keep \
                    `max_depth`: the node (GetItem), the new parent and its parent (2 \
                    GetItem, one level at a time), the old parent's ancestors (one GetItem \
                    per level, to tell whether the move makes the subtree deeper), then one \
                    TransactWriteItems that rewrites the node, moves the counters and \
                    re-checks what was walked.";
    let deeper_why = "One item changes (the node's parent link). The move makes the subtree \
                      one level deeper, so besides the node, the new parent's and the old \
                      parent's ancestors (4 GetItem), the subtree is read level by level down \
                      to `max_depth` (its GetItem, one Query per node with children, one \
                      BatchGetItem per 100 children), and the TransactWriteItems re-checks \
                      the revisions it read.";
    // The subtree is read level by level: the node, then per level one Query per node with
    // children and one BatchGetItem per 100 children found; then transactions of up to 99
    // actions, deepest first (a node, or a parent outside the transaction whose counter
    // goes down).
    let mut reads = 1u64;
    for level in 0..(h - 1) {
        reads += 10u64.pow(level) + ceil(10usize.pow(level + 1), 100);
    }
    let delete_min = 1 + ceil(s_div, BATCH);
    let delete_division = if s_div <= 99 {
        Cost::new(
            delete_min,
            reads + 2,
            "Up to 99 nodes: the subtree's reads, a GetItem checking that no large delete is \
             under way, one TransactWriteItems.",
        )
    } else {
        let txs = delete_transactions(shape);
        Cost::new(
            delete_min,
            reads + 2 + txs,
            format!(
                "{s_div} nodes: the minimum is one read and ⌈{s_div} / 25⌉ BatchWriteItem. The \
                 subtree is read level by level ({reads} requests: the node, one Query per \
                 node with children and one BatchGetItem per 100 children), then deleted \
                 deepest first in {txs} TransactWriteItems of up to 99 actions (each node \
                 conditioned on its revision, the parents outside counting down), between \
                 the PutItem and the DeleteItem of an intent record that makes it resumable."
            ),
        )
    };
    let costs = IdCosts {
        children: same3(Cost::new(
            1,
            1,
            "One Query on the index partition of the parent: exactly the children.",
        )),
        subtree: Cost::new(1, inner, per_node),
        depth_range: Cost::new(1, 1 + 9, per_node),
        at_depth: Cost::new(
            1,
            1 + 1 + 9,
            "A node does not know its depth: the levels are read from the top (the roots, then \
             one children Query per node with children of each level above).",
        ),
        ancestors: Cost::new(
            1,
            u64::from(h) + 1,
            "Each node names only its parent: one GetItem per level, the node first (the \
             naive approach is this strategy's only one).",
        ),
        size: Cost::new(
            1,
            1 + inner,
            "A GetItem of the node, then the subtree level by level (one Query per node with \
             children).",
        ),
        insert: Cost::new(
            1,
            3,
            "A node does not store its depth, so `max_depth` is kept by walking up from the \
             parent (d8 and the root: 2 GetItem), then one TransactWriteItems: the node, its \
             parent's children counter (the parent must exist) and checks that the walked \
             ancestors did not move.",
        ),
        // A division moved under d8 goes one level deeper; so does a subtree of 11 nodes in
        // a tree of 100 (it is a division). Deeper in a larger tree, it moves sideways.
        move_small: if h == 2 {
            Cost::new(2, 4 + reads + 1, deeper_why)
        } else {
            Cost::new(2, u64::from(h) + 3, move_why)
        },
        move_division: Cost::new(2, 4 + reads + 1, deeper_why),
        delete_small: Cost::new(
            2,
            5,
            "The minimum is one read and one TransactWriteItems. The subtree is read level by \
             level, strongly consistent: the node (GetItem), its children (Query on the index, \
             which is only eventually consistent) and their items (BatchGetItem, checked \
             against the children counters); a GetItem checks no large delete is under way, \
             then one TransactWriteItems deletes the nodes, each conditioned on its revision.",
        ),
        delete_division,
    };
    id_tree_rows!(
        s,
        db,
        tree,
        shape,
        scale,
        costs,
        node = node,
        at_depth = tree.at_depth(3).await?
    );
    Ok(s)
}

/// The transactions of an adjacency delete of a division: its nodes deepest first, a
/// transaction closed before its nodes and the distinct parents outside it exceed 99.
fn delete_transactions(shape: Shape) -> u64 {
    let mut order: Vec<Vec<usize>> =
        shape.all().into_iter().filter(|ix| ix.first() == Some(&6)).collect();
    order.sort_by_key(|ix| std::cmp::Reverse(ix.len()));
    let mut txs = 0;
    let mut current: Vec<&Vec<usize>> = Vec::new();
    let actions = |nodes: &[&Vec<usize>]| {
        let inside: HashSet<&[usize]> = nodes.iter().map(|ix| ix.as_slice()).collect();
        let parents: HashSet<&[usize]> =
            nodes.iter().map(|ix| &ix[..ix.len() - 1]).filter(|p| !inside.contains(p)).collect();
        nodes.len() + parents.len()
    };
    for ix in &order {
        current.push(ix);
        if actions(&current) > 99 {
            current.pop();
            txs += 1;
            current = vec![ix];
        }
    }
    txs + u64::from(!current.is_empty())
}

// -------------------------------------------------------------------------------------------
// The nested-set strategy
// -------------------------------------------------------------------------------------------

/// A number attribute of an item (0 when missing).
fn num(item: &Item, name: &str) -> u64 {
    item.get(name).and_then(|v| v.as_n().ok()).and_then(|n| n.parse().ok()).unwrap_or(0)
}

async fn nested_section(shape: Shape, scale: &Scale) -> Result<Section, Error> {
    use ddb_model::tree::{TREE_LFT_ATTR, TREE_RGT_ATTR};
    let db: Db = local::isolated_db().await?;
    let db = &db;
    let t: NestedTree<'_, NestedNode> = NestedNode::tree(db, TREE);
    let tree = &t;
    let node = |id: String, parent: Option<String>| {
        let label = format!("unit {id}");
        NestedNode { tree: TREE.into(), id, parent, label }
    };
    let all: Vec<NestedNode> = shape
        .all()
        .iter()
        .map(|ix| NestedNode { label: label(ix), ..node(id_of(ix), parent_id(ix)) })
        .collect();
    let load = load_cost(
        &all,
        all.len(),
        1,
        " The nested set also reads the tree's top-level record (GetItem: where the free \
         numbers of the top level start).",
    )?;
    let nodes = &all;
    let loaded =
        measure(db, 1, |_| async move { Ok(tree.bulk_load(nodes.iter().cloned()).await?.nodes) })
            .await?;

    // The index orders the nodes by the start of their interval: a read of the interval
    // `lo..=hi` is one Query, in as many 1 MB pages as the items whose start is in it take.
    let mut items: Vec<Item> =
        items_by_sk(db).await?.into_iter().filter(|i| i.contains_key(TREE_LFT_ATTR)).collect();
    items.sort_by_key(|i| num(i, TREE_LFT_ATTR));
    let interval = |ix: &[usize]| -> (u64, u64) {
        let sk = format!("NNODE#{}", id_of(ix));
        items
            .iter()
            .find(|i| attr(i, "sk") == sk)
            .map_or((0, 0), |i| (num(i, TREE_LFT_ATTR), num(i, TREE_RGT_ATTR)))
    };
    let pages_in = |lo: u64, hi: u64| {
        query_pages(items.iter().filter(|i| (lo..=hi).contains(&num(i, TREE_LFT_ATTR))))
    };
    // The subtree of a division without its root (descendants, children) and with it
    // (a span, a count), and the whole tree without the root and with it.
    let (d_lft, d_rgt) = interval(&[0]);
    let (r_lft, r_rgt) = interval(&[]);
    let below_division = pages_in(d_lft + 1, d_rgt);
    let division_pages = pages_in(d_lft, d_rgt);
    let below_root = pages_in(r_lft + 1, r_rgt);
    let tree_pages = pages_in(0, u64::MAX);

    let s_div = shape.subtree(1);
    let n = shape.nodes();
    let mut s = Section::new(
        format!("Trees: nested-set strategy, {} nodes", shape.nodes()),
        intro(
            "nested set",
            shape,
            scale,
            "`#[hierarchy(strategy = nested_set, parent = parent, index = gsi1)]`: nodes by \
             id, each with an interval of sparse numbers nested in its parent's, its depth \
             and its ancestors; gsi1 orders the nodes by the interval's start.",
        ),
    );
    s.push(load_row(loaded, &load));
    let from_id = "From an id, a strongly consistent GetItem of the node (its interval) comes \
                   first.";
    let subtree_why = |what: &str, pages: u64| {
        format!(
            "{what}: one Query on the index over the node's interval ({pages} page(s) of at \
             most 1 MB), with a filter on the depth when the range is narrower than the \
             subtree (the filtered nodes are read too). {from_id}"
        )
    };
    // One read, then every node rewritten (moved) or deleted: transactions of 100 writes
    // take fewer requests than batch writes of 25.
    let write_min = 1 + ceil(s_div, 100);
    let move_division = if s_div <= 96 {
        Cost::new(2, 5, "Up to 96 nodes, one TransactWriteItems: as for 11 nodes.")
    } else {
        let bgi = ceil(s_div - 1, 100);
        let fenced = ceil(s_div - 1, FENCED);
        Cost::new(
            write_min,
            4 + below_division + division_pages + 1 + 2 * bgi + 1 + fenced + 1 + 2,
            format!(
                "{s_div} nodes get new numbers: the minimum is one read and ⌈{s_div} / 100⌉ \
                 TransactWriteItems. More than 96 nodes go through the resumable protocol: the \
                 node and the new parent (2 GetItem), the subtree (Query, {bgi} \
                 BatchGetItem), one TransactWriteItems that writes the intent record and \
                 takes the interval from the new parent's free numbers; under the intent, \
                 the node and the new parent again (2 GetItem), the old and the new \
                 interval (2 Query) and the subtree's items ({bgi} BatchGetItem), {fenced} \
                 fenced TransactWriteItems of 99 rewrites and a check of the intent's epoch, \
                 the phase (UpdateItem), the node itself under its new parent (1 \
                 TransactWriteItems) and the intent's DeleteItem."
            ),
        )
    };
    let delete_division = if s_div <= 96 {
        Cost::new(2, 6, "Up to 96 nodes, one TransactWriteItems: as for 11 nodes.")
    } else {
        let bgi = ceil(s_div - 1, 100);
        let txs = ceil(s_div, 96);
        Cost::new(
            write_min,
            1 + division_pages + 1 + 1 + below_division + bgi + txs + 1,
            format!(
                "{s_div} nodes: the minimum is one read and ⌈{s_div} / 100⌉ \
                 TransactWriteItems of deletes. The node (GetItem) and a count Query size the subtree; more than 96 \
                 nodes are deleted under an intent record (PutItem, DeleteItem at the end): \
                 the node again (GetItem), the subtree (Query, {bgi} BatchGetItem), then \
                 {txs} TransactWriteItems of 96 nodes, deepest intervals first (what is left \
                 is always a tree), each with the counters of the parents that stay and a \
                 check of the intent."
            ),
        )
    };
    let costs = IdCosts {
        children: [
            Cost::new(1, 2, subtree_why("The children are the subtree's nodes one level down", 1)),
            Cost::new(
                1,
                1 + below_division,
                subtree_why(
                    &format!("The {} nodes below a division are read to keep 10", s_div - 1),
                    below_division,
                ),
            ),
            Cost::new(
                1,
                1 + below_root,
                subtree_why(
                    &format!("The {} nodes below the root are read to keep 9", n - 1),
                    below_root,
                ),
            ),
        ],
        subtree: Cost::new(
            below_division,
            1 + below_division,
            subtree_why("The subtree is one range of the index", below_division),
        ),
        depth_range: Cost::new(
            1,
            1 + below_root,
            subtree_why("A depth range is the subtree with a filter", below_root),
        ),
        at_depth: Cost::new(
            1,
            tree_pages,
            format!(
                "The index orders nodes by interval, not by depth: one Query of the whole \
                 tree ({tree_pages} page(s)) with a filter on the depth."
            ),
        ),
        ancestors: Cost::new(
            1,
            2,
            "The node names its ancestors (GetItem), then one BatchGetItem reads them.",
        ),
        size: Cost::new(
            1,
            1 + division_pages,
            format!(
                "A GetItem of the node (its interval), then a count Query of the interval \
                 ({division_pages} page(s))."
            ),
        ),
        insert: Cost::new(
            1,
            2,
            "A GetItem of the parent (its interval, depth and ancestors), then one \
             TransactWriteItems: the node in a free slot of the parent's gap (an eighth of \
             it: no renumbering until the gap runs out), the parent's counter and \
             high-water mark, and a check that no large operation covers the parent.",
        ),
        move_small: Cost::new(
            2,
            5,
            "The minimum is one read and one TransactWriteItems. ddb-model reads the node and \
             the new parent (2 GetItem: the intervals, the cycle check), the subtree (Query on \
             the index, read again strongly consistently with one BatchGetItem and checked \
             against the children counters), then rewrites every moved node's numbers, the \
             counters of both parents and the new parent's high-water mark in one \
             TransactWriteItems.",
        ),
        move_division,
        delete_small: Cost::new(
            2,
            6,
            "The minimum is one read and one TransactWriteItems. ddb-model sizes the subtree \
             (GetItem, count Query), then reads the node again and its subtree (GetItem, \
             Query, BatchGetItem: the index is only eventually consistent) and deletes every \
             node, each conditioned on its revision and interval, in one \
             TransactWriteItems.",
        ),
        delete_division,
    };
    let many = scale.many_runs;
    let m = measure(db, many, |i| async move {
        let span = tree.span(id_of(&[i as usize % 9])).await?;
        Ok(span.map_or(0, |_| 1))
    })
    .await?;
    s.push(m.row(
        "the span (interval) of a division",
        "tree.span(id)",
        1,
        "One strongly consistent GetItem.",
    ));
    let spans: Vec<_> = {
        let mut out = Vec::new();
        for d in 0..9 {
            out.push(tree.span(id_of(&[d])).await?.expect("every division has a span"));
        }
        out
    };
    let spans = &spans;
    let m =
        measure(
            db,
            many,
            |i| async move { Ok(tree.within(spans[i as usize % 9]).all().await?.len()) },
        )
        .await?;
    s.push(m.row_over(
        "subtree of a division, from its span",
        "tree.within(span).all()",
        division_pages,
        division_pages,
        &format!(
            "One Query on the index over the interval: exactly the {s_div} nodes of the \
             subtree, the division included ({division_pages} page(s) of at most 1 MB)."
        ),
    ));
    id_tree_rows!(
        s,
        db,
        tree,
        shape,
        scale,
        costs,
        node = node,
        at_depth = tree.at_depth(3).all().await?
    );
    Ok(s)
}
