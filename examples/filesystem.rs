//! A file system as a tree: folders keyed by path, one tree per drive. Builds the drives of
//! seed 002, prints them as a tree, lists children, reads breadcrumbs and depth ranges, then
//! moves a large folder with a progress bar, and prints the requests each step took.
//!
//!     cargo run --example filesystem
//!
//! Runs against the embedded DynamoDB-compatible engine; set `DDB_ENDPOINT` to use another
//! endpoint (AWS's DynamoDB Local, for example).

use std::collections::HashMap;
use std::io::Write;

use ddb_model::prelude::*;
use ddb_model::tree::{OpPhase, Progress};
use ddb_model::{PathTree, RequestStats, TreePath, local};
use serde::{Deserialize, Serialize};

/// A folder: the drive names the tree (the partition), the path the node (the sort key).
/// `#[hierarchy]` adds the children index (gsi1) and `Folder::tree(&db, drive)`.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "DRIVE#<drive>", sk = "FOLDER#<path>")]
#[hierarchy(path = path, index = gsi1, max_depth = 32)]
struct Folder {
    drive: String,
    path: TreePath,
    #[serde(default)]
    files: u32,
}

fn step(db: &Db, what: &str, before: RequestStats) {
    let used = db.requests() - before;
    println!("  -> {what}: {used}; {} items read", used.items_read());
}

fn path(text: &str) -> Result<TreePath, Error> {
    Ok(text.parse()?)
}

/// Prints the tree under `root` (or the whole tree) with box-drawing lines, from one query.
async fn print_tree(tree: &PathTree<'_, Folder>, root: Option<&TreePath>) -> Result<(), Error> {
    let nodes: Vec<Folder> = match root {
        Some(root) => tree.descendants(root).depth(0..).all().await?,
        None => tree.nodes().all().await?,
    };
    // Depth-first by segments (key order escapes separators, so it can differ).
    let mut paths: Vec<&TreePath> = nodes.iter().map(|f| &f.path).collect();
    paths.sort_by(|a, b| a.segments().cmp(b.segments()));
    let last: HashMap<&TreePath, bool> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| (*p, !paths[i + 1..].iter().any(|q| q.parent() == p.parent())))
        .collect();
    let top = root.map_or(1, TreePath::depth);
    for p in &paths {
        if p.depth() == top {
            println!("    {}", p.name());
            continue;
        }
        let bars: String = p
            .ancestors()
            .filter(|a| a.depth() > top)
            .map(|a| if last.get(&a).copied().unwrap_or(true) { "    " } else { "│   " })
            .collect();
        let branch = if last[p] { "└── " } else { "├── " };
        println!("    {bars}{branch}{}", p.name());
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let db: Db = local::isolated_db().await?;
    let tree = Folder::tree(&db, "seed");

    println!("1. Build drives C and D (seed 002), one transaction per folder");
    let before = db.requests();
    for p in [
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
    ] {
        tree.insert(&Folder { drive: "seed".into(), path: path(p)?, files: 0 }).await?;
    }
    step(&db, "15 inserts, each checking its parent", before);
    print_tree(&tree, None).await?;

    println!("\n2. Children of D/V: one index query that reads only the children");
    let before = db.requests();
    let children = tree.children(&path("D/V")?).all().await?;
    let names: Vec<&str> = children.iter().map(|f| f.path.name()).collect();
    println!("    {names:?}");
    step(&db, "children", before);

    println!("\n3. Everything below D/V, and two levels below D");
    let before = db.requests();
    let below = tree.descendants(&path("D/V")?).all().await?;
    println!("    below D/V: {:?}", below.iter().map(|f| f.path.to_string()).collect::<Vec<_>>());
    step(&db, "whole subtree: one query", before);
    let before = db.requests();
    let two = tree.descendants(&path("D")?).depth(1..=2).all().await?;
    println!(
        "    two levels below D: {:?}",
        two.iter().map(|f| f.path.to_string()).collect::<Vec<_>>()
    );
    step(&db, "depth 1..=2: one query per level", before);

    println!("\n4. Breadcrumbs of D/V/d/ii: one BatchGetItem");
    let before = db.requests();
    let crumbs = tree.breadcrumbs(&path("D/V/d/ii")?).await?;
    let crumbs: Vec<&str> = crumbs.iter().map(|f| f.path.name()).collect();
    println!("    {}", crumbs.join(" > "));
    step(&db, "breadcrumbs", before);

    println!("\n5. Refused writes change nothing");
    let before = db.requests();
    let orphan = tree.insert(&Folder { drive: "seed".into(), path: path("X/y")?, files: 0 }).await;
    println!("    insert X/y: {}", orphan.unwrap_err());
    let cycle = tree.move_subtree(&path("D")?, &path("D/V/inside")?).await;
    println!("    move D into D/V: {}", cycle.unwrap_err());
    step(&db, "checks", before);

    println!("\n6. Move D/III under C (3 folders): one transaction");
    let before = db.requests();
    tree.move_subtree(&path("D/III")?, &path("C/III")?).await?;
    step(&db, "small move", before);
    print_tree(&tree, Some(&path("C")?)).await?;

    println!("\n7. A large folder: D/V/archive with 600 subfolders");
    let archive = path("D/V/archive")?;
    tree.insert(&Folder { drive: "seed".into(), path: archive.clone(), files: 0 }).await?;
    let mut batch = Vec::new();
    for year in 2000..2020 {
        let y = archive.child(year.to_string())?;
        batch.push(Folder { drive: "seed".into(), path: y.clone(), files: 0 });
        for month in 1..=29 {
            let m = y
                .child(format!("{month:02}"))
                .map_err(|e| Error::InvalidExpression(e.to_string()))?;
            batch.push(Folder { drive: "seed".into(), path: m, files: month });
        }
    }
    db.batch_put(&batch).await?;
    println!("    subtree size: {}", tree.subtree_size(&archive).await?);

    println!("\n8. Move it to C/archive: too large for one transaction, so the resumable protocol");
    let before = db.requests();
    let report = tree
        .move_subtree(&archive, &path("C/archive")?)
        .on_progress(|p: Progress| {
            let phase = if p.phase == OpPhase::Copy { "copy  " } else { "remove" };
            let width = 30 * p.done / p.total.max(1);
            print!(
                "\r    {phase} [{}{}] {:>4}/{}",
                "#".repeat(width),
                ".".repeat(30 - width),
                p.done,
                p.total
            );
            if p.done == p.total {
                println!();
            }
            let _ = std::io::stdout().flush();
        })
        .await?;
    println!("    moved {} folders (resumable: {})", report.nodes, report.resumable);
    step(&db, "large move", before);

    println!("\n9. Rename C/archive/2019 to 2019-old, then delete C/I");
    let before = db.requests();
    tree.rename(&path("C/archive/2019")?, "2019-old").await?;
    tree.delete_subtree(&path("C/I")?).await?;
    step(&db, "rename (30 folders) and delete", before);
    let top: Vec<String> =
        tree.children(&path("C")?).all().await?.iter().map(|f| f.path.to_string()).collect();
    println!("    C now holds {top:?}");
    println!("    nodes at depth 3: {}", tree.at_depth(3).count().await?);
    Ok(())
}
