//! What fencing costs: a 1,000-node path move and delete, and a 1,000-node closure move,
//! through the resumable protocol, with the requests (per kind) and the capacity units each
//! consumed. BENCHMARKS.md ("Fencing the resumable protocol") quotes its output.
//!
//!     cargo run --example fencing_cost
//!
//! Runs against the embedded engine, or `DDB_ENDPOINT`.

use ddb_model::prelude::*;
use ddb_model::{RequestStats, TreePath, local};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "ORG#<org>", sk = "UNIT#<path>")]
#[hierarchy(path = path, index = gsi1)]
struct Unit {
    org: String,
    path: TreePath,
    head: String,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "ORG#<org>", sk = "CUNIT#<id>")]
#[hierarchy(strategy = closure, parent = parent)]
struct ClosureUnit {
    org: String,
    id: String,
    parent: Option<String>,
    head: String,
}

fn p(text: &str) -> Result<TreePath, Error> {
    Ok(text.parse()?)
}

fn line(what: &str, stats: &RequestStats) {
    let kinds: Vec<String> =
        stats.iter().filter(|(_, n)| *n > 0).map(|(op, n)| format!("{} {n}", op.name())).collect();
    println!(
        "| {what} | {} | {} | {:.1} | {:.1} |",
        stats.total(),
        kinds.join(", "),
        stats.read_units(),
        stats.write_units()
    );
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    // The capacity columns need the service's reports, which a `Db` asks for only when told.
    let db: Db = local::isolated_db().await?.with_capacity(true);
    let tree = Unit::tree(&db, "o");
    for path in ["src", "dst"] {
        tree.insert(&Unit { org: "o".into(), path: p(path)?, head: "h".into() }).await?;
    }
    // src/w and 999 nodes below it: 9 children, 10 grandchildren each, 10 below each of those.
    let mut units = vec![Unit { org: "o".into(), path: p("src/w")?, head: "h".into() }];
    'fill: for a in 0..9 {
        units.push(Unit { org: "o".into(), path: p(&format!("src/w/a{a}"))?, head: "h".into() });
        for b in 0..10 {
            let mid = format!("src/w/a{a}/b{b}");
            units.push(Unit { org: "o".into(), path: p(&mid)?, head: "h".into() });
            for c in 0..10 {
                if units.len() == 1000 {
                    break 'fill;
                }
                units.push(Unit {
                    org: "o".into(),
                    path: p(&format!("{mid}/c{c}"))?,
                    head: "h".into(),
                });
            }
        }
    }
    db.batch_put(&units).await?;
    println!("| operation | requests | by kind | RCU | WCU |");
    println!("|---|---|---|---|---|");
    db.reset_requests();
    let moved = tree.move_subtree(&p("src/w")?, &p("dst/w")?).await?;
    line(&format!("path move, {} nodes", moved.nodes), &db.requests());
    db.reset_requests();
    let deleted = tree.delete_subtree(&p("dst/w")?).await?;
    line(&format!("path delete, {} nodes", deleted.nodes), &db.requests());

    let closure = ClosureUnit::tree(&db, "c");
    let node = |id: String, parent: Option<String>| ClosureUnit {
        org: "c".into(),
        id,
        parent,
        head: "h".into(),
    };
    closure.insert(&node("src".into(), None)).await?;
    closure.insert(&node("dst".into(), None)).await?;
    closure.insert(&node("w".into(), Some("src".into()))).await?;
    let mut n = 1;
    'tree: for a in 0..9 {
        let ida = format!("a{a}");
        closure.insert(&node(ida.clone(), Some("w".into()))).await?;
        n += 1;
        for b in 0..110 {
            if n == 1000 {
                break 'tree;
            }
            closure.insert(&node(format!("{ida}b{b}"), Some(ida.clone()))).await?;
            n += 1;
        }
    }
    db.reset_requests();
    let moved = closure.move_subtree("w", "dst").await?;
    line(&format!("closure move, {} nodes", moved.nodes), &db.requests());
    Ok(())
}
