//! The cost of every tree operation on a 1,000-node tree, for each strategy (path, closure,
//! adjacency), measured with the request counter, next to the naive approaches of the seed
//! documents. Prints a markdown table; the docs quote its output.
//!
//!     cargo run --example tree_costs
//!
//! The tree: one root, 9 children, 10 grandchildren each, 10 great-grandchildren each
//! (1 + 9 + 90 + 900 = 1,000 nodes, depth 4). Runs against the embedded engine, or
//! `DDB_ENDPOINT`.

use std::time::Instant;

use ddb_model::prelude::*;
use ddb_model::{AdjacencyTree, ClosureTree, Op, PathTree, RequestStats, TreePath, local};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "ORG#<org>", sk = "UNIT#<path>")]
#[hierarchy(path = path, index = gsi1)]
struct Unit {
    org: String,
    path: TreePath,
    #[serde(default)]
    head: String,
}

/// The same organisation as a closure tree: nodes by id, one copy per ancestor.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "ORG#<org>", sk = "CUNIT#<id>")]
#[hierarchy(strategy = closure, parent = parent)]
struct ClosureUnit {
    org: String,
    id: String,
    parent: Option<String>,
    #[serde(default)]
    head: String,
}

/// The same organisation as an adjacency list: nodes by id, an index on the parent.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "ORG#<org>", sk = "AUNIT#<id>")]
#[hierarchy(strategy = adjacency, parent = parent, index = gsi2)]
struct AdjacencyUnit {
    org: String,
    id: String,
    parent: Option<String>,
    #[serde(default)]
    head: String,
}

/// The ids and parents of the 1,000 nodes: root, d0..d8, d0-t0.., d0-t0-m0...
fn id_tree() -> Vec<(String, Option<String>)> {
    let mut out = vec![("root".to_owned(), None)];
    for a in 0..9 {
        let division = format!("d{a}");
        out.push((division.clone(), Some("root".to_owned())));
        for b in 0..10 {
            let team = format!("{division}-t{b}");
            out.push((team.clone(), Some(division.clone())));
            for c in 0..10 {
                out.push((format!("{team}-m{c}"), Some(team.clone())));
            }
        }
    }
    out
}

fn p(text: &str) -> TreePath {
    text.parse().unwrap_or_else(|e| panic!("example path {text:?}: {e}"))
}

struct Row {
    strategy: &'static str,
    operation: String,
    result: String,
    stats: RequestStats,
    millis: f64,
    minimum: &'static str,
}

fn writes(stats: &RequestStats) -> u64 {
    [Op::PutItem, Op::UpdateItem, Op::DeleteItem, Op::BatchWriteItem, Op::TransactWriteItems]
        .iter()
        .map(|&op| stats.get(op))
        .sum()
}

async fn build(db: &Db, org: &str) -> Result<(), Error> {
    let mut units = vec![Unit { org: org.into(), path: p("root"), head: String::new() }];
    for a in 0..9 {
        let a_path = format!("root/d{a}");
        units.push(Unit { org: org.into(), path: p(&a_path), head: String::new() });
        for b in 0..10 {
            let b_path = format!("{a_path}/t{b}");
            units.push(Unit { org: org.into(), path: p(&b_path), head: String::new() });
            for c in 0..10 {
                let path = p(&format!("{b_path}/m{c}"));
                units.push(Unit { org: org.into(), path, head: format!("h{a}{b}{c}") });
            }
        }
    }
    assert_eq!(units.len(), 1000);
    db.batch_put(&units).await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let db: Db = local::isolated_db().await?;
    let org = "acme";
    build(&db, org).await?;
    let tree: PathTree<'_, Unit> = Unit::tree(&db, org);
    let mut rows: Vec<Row> = Vec::new();

    let mut strategy = "path";
    macro_rules! measure {
        ($op:expr, $minimum:expr, $body:expr) => {{
            let before = db.requests();
            let started = Instant::now();
            let result = $body;
            let millis = started.elapsed().as_secs_f64() * 1000.0;
            rows.push(Row {
                strategy,
                operation: $op.to_string(),
                result,
                stats: db.requests() - before,
                millis,
                minimum: $minimum,
            });
        }};
    }

    let team = p("root/d3/t4");
    let division = p("root/d3");
    let leaf = p("root/d3/t4/m5");

    measure!("get a node", "1 read", { format!("{}", tree.get(&leaf).await?.is_some()) });
    measure!("children of a team (10)", "1 query, 10 items", {
        format!("{} nodes", tree.children(&team).all().await?.len())
    });
    measure!("children of a division (10)", "1 query, 10 items", {
        format!("{} nodes", tree.children(&division).all().await?.len())
    });
    measure!("naive children of a division: subtree filtered by depth", "", {
        let all = tree.descendants(&division).all().await?;
        format!("{} nodes", all.iter().filter(|u| u.path.depth() == division.depth() + 1).count())
    });
    measure!("children of the root (9)", "1 query, 9 items", {
        format!("{} nodes", tree.children(&p("root")).all().await?.len())
    });
    measure!("naive children of the root: whole tree filtered", "", {
        let all = tree.descendants(&p("root")).all().await?;
        format!("{} nodes", all.iter().filter(|u| u.path.depth() == 2).count())
    });
    measure!("subtree of a division (110)", "1 query, 110 items", {
        format!("{} nodes", tree.descendants(&division).all().await?.len())
    });
    measure!("depth 1..=2 below the root (99)", "2 queries, 99 items", {
        format!("{} nodes", tree.descendants(&p("root")).depth(1..=2).all().await?.len())
    });
    measure!("nodes at depth 3 (90)", "1 query, 90 items", {
        format!("{} nodes", tree.at_depth(3).all().await?.len())
    });
    measure!("ancestors of a leaf (3)", "1 batch read, 3 items", {
        format!("{} nodes", tree.ancestors(&leaf).await?.len())
    });
    measure!("naive ancestors: one get per level", "", {
        let mut found = 0;
        let mut at = leaf.parent();
        while let Some(path) = at {
            found += usize::from(tree.get(&path).await?.is_some());
            at = path.parent();
        }
        format!("{found} nodes")
    });
    measure!("subtree size of a division", "1 count query + 1 get", {
        format!("{}", tree.subtree_size(&division).await?)
    });
    measure!("insert a node", "1 transaction", {
        tree.insert(&Unit { org: org.into(), path: p("root/d3/t4/new"), head: "n".into() }).await?;
        "ok".to_owned()
    });
    measure!("move a team to another division", "1 read of the subtree, 1 transaction", {
        let r = tree.move_subtree(&team, &p("root/d5/t4b")).await?;
        format!("{} nodes", r.nodes)
    });
    measure!("naive move: one put and one delete per node", "", {
        let nodes = tree.descendants(&p("root/d5/t4b")).depth(0..).all().await?;
        for node in &nodes {
            let mut moved = node.clone();
            let rebased = node.path.rebase(&p("root/d5/t4b"), &team).and_then(Result::ok);
            moved.path = rebased.unwrap_or_else(|| node.path.clone());
            moved.put(&db).await?;
            db.delete(node.key()).await?;
        }
        format!("{} nodes", nodes.len())
    });
    measure!("rename a division: resumable protocol", "2 x ceil(S / 99) fenced transactions", {
        let r = tree.rename(&division, "d3-renamed").await?;
        format!("{} nodes", r.nodes)
    });
    measure!("delete a team", "1 read of the subtree, 1 transaction", {
        let r = tree.delete_subtree(&p("root/d3-renamed/t5")).await?;
        format!("{} nodes", r.nodes)
    });
    measure!("delete a division: resumable protocol", "ceil(S / 99) fenced transactions", {
        let r = tree.delete_subtree(&p("root/d3-renamed")).await?;
        format!("{} nodes", r.nodes)
    });

    // The closure strategy: built with 1,000 inserts (each writes the node's copies).
    strategy = "closure";
    let ctree: ClosureTree<'_, ClosureUnit> = ClosureUnit::tree(&db, org);
    let before = db.requests();
    for (id, parent) in id_tree() {
        let head = if id.matches('-').count() == 2 { format!("h-{id}") } else { String::new() };
        ctree.insert(&ClosureUnit { org: org.into(), id, parent, head }).await?;
    }
    let built = db.requests() - before;
    println!("closure: 1,000 inserts took {built}");
    measure!("get a node", "1 read", { format!("{}", ctree.get("d3-t4-m5").await?.is_some()) });
    measure!("children of a team (10)", "1 query, 10 items", {
        format!("{} nodes", ctree.children("d3-t4").all().await?.len())
    });
    measure!("children of the root (9)", "1 query, 9 items", {
        format!("{} nodes", ctree.children("root").all().await?.len())
    });
    measure!("subtree of a division (110)", "1 query, 110 items", {
        format!("{} nodes", ctree.descendants("d3").all().await?.len())
    });
    measure!("depth 1..=2 below the root (99)", "1 query, 99 items", {
        format!("{} nodes", ctree.descendants("root").depth(1..=2).all().await?.len())
    });
    measure!("depth 2..=3 below the root (990)", "1 query, 990 items", {
        format!("{} nodes", ctree.descendants("root").depth(2..=3).all().await?.len())
    });
    measure!("nodes at depth 3 (90)", "1 query, 90 items", {
        format!("{} nodes", ctree.at_depth(3).all().await?.len())
    });
    measure!("ancestors of a leaf (3)", "1 get + 1 batch read", {
        format!("{} nodes", ctree.ancestors("d3-t4-m5").await?.len())
    });
    measure!("subtree size of a division", "1 count query", {
        format!("{}", ctree.subtree_size("d3").await?)
    });
    measure!("insert a node", "1 get + 1 transaction", {
        let unit = ClosureUnit {
            org: org.into(),
            id: "new".into(),
            parent: Some("d3-t4".into()),
            head: "n".into(),
        };
        ctree.insert(&unit).await?;
        "ok".to_owned()
    });
    measure!("update a node and its copies", "1 get + 1 transaction", {
        let mut unit = ctree.get("d3-t4-m5").await?.ok_or(Error::InvalidExpression("m5".into()))?;
        unit.head = "renamed".into();
        ctree.replace(&unit).await?;
        "ok".to_owned()
    });
    measure!("move a team to another division", "reads + 1 transaction", {
        let r = ctree.move_subtree("d3-t4", "d5").await?;
        format!("{} nodes", r.nodes)
    });
    measure!(
        "move a division under another: resumable protocol",
        "fenced transactions of up to 99 writes",
        {
            let r = ctree.move_subtree("d3", "d6").await?;
            format!("{} nodes", r.nodes)
        }
    );
    measure!("delete a team", "reads + 1 transaction", {
        let r = ctree.delete_subtree("d3-t5").await?;
        format!("{} nodes", r.nodes)
    });
    measure!("delete a division: resumable protocol", "fenced transactions of up to 99 writes", {
        let r = ctree.delete_subtree("d3").await?;
        format!("{} nodes", r.nodes)
    });

    // The adjacency strategy.
    strategy = "adjacency";
    let atree: AdjacencyTree<'_, AdjacencyUnit> = AdjacencyUnit::tree(&db, org);
    let before = db.requests();
    for (id, parent) in id_tree() {
        let head = if id.matches('-').count() == 2 { format!("h-{id}") } else { String::new() };
        atree.insert(&AdjacencyUnit { org: org.into(), id, parent, head }).await?;
    }
    let built = db.requests() - before;
    println!("adjacency: 1,000 inserts took {built}\n");
    measure!("get a node", "1 read", { format!("{}", atree.get("d3-t4-m5").await?.is_some()) });
    measure!("children of a team (10)", "1 query, 10 items", {
        format!("{} nodes", atree.children("d3-t4").all().await?.len())
    });
    measure!("children of the root (9)", "1 query, 9 items", {
        format!("{} nodes", atree.children("root").all().await?.len())
    });
    measure!("subtree of a division (110)", "1 query per node with children", {
        format!("{} nodes", atree.descendants("d3").all().await?.len())
    });
    measure!("depth 1..=2 below the root (99)", "1 + 9 queries", {
        format!("{} nodes", atree.descendants("root").depth(1..=2).all().await?.len())
    });
    measure!("nodes at depth 3 (90)", "1 + 1 + 9 queries", {
        format!("{} nodes", atree.at_depth(3).await?.len())
    });
    measure!("ancestors of a leaf (3)", "1 get per level", {
        format!("{} nodes", atree.ancestors("d3-t4-m5").await?.len())
    });
    measure!("subtree size of a division", "the subtree, level by level", {
        format!("{}", atree.subtree_size("d3").await?)
    });
    measure!("insert a node", "1 get per ancestor + 1 transaction", {
        let unit = AdjacencyUnit {
            org: org.into(),
            id: "new".into(),
            parent: Some("d3-t4".into()),
            head: "n".into(),
        };
        atree.insert(&unit).await?;
        "ok".to_owned()
    });
    measure!(
        "move a team to another division",
        "1 get per ancestor (both branches) + 1 transaction",
        {
            let r = atree.move_subtree("d3-t4", "d5").await?;
            format!("{} node", r.nodes)
        }
    );
    measure!("move a division under another", "deeper: + the subtree's reads, 1 transaction", {
        let r = atree.move_subtree("d3", "d6").await?;
        format!("{} node", r.nodes)
    });
    measure!("delete a team", "the subtree's reads + 1 transaction", {
        let r = atree.delete_subtree("d3-t5").await?;
        format!("{} nodes", r.nodes)
    });
    measure!("delete a division", "the subtree's reads + ceil(S / 98) transactions", {
        let r = atree.delete_subtree("d3").await?;
        format!("{} nodes", r.nodes)
    });

    println!("Tree operations on a 1,000-node tree, `cargo run --example tree_costs`");
    println!("(debug build, embedded engine; times are indicative only):\n");
    println!(
        "| strategy | operation | result | requests | reads/writes | items read | minimum | time (ms) |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for r in &rows {
        let requests = r.stats.to_string();
        let reads = r.stats.total() - writes(&r.stats);
        println!(
            "| {} | {} | {} | {} | {} / {} | {} | {} | {:.1} |",
            r.strategy,
            r.operation,
            r.result,
            requests,
            reads,
            writes(&r.stats),
            r.stats.items_read(),
            r.minimum,
            r.millis
        );
    }
    Ok(())
}
