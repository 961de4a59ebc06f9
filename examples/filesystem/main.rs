//! A file system as a tree, on the tree strategy you name: one tree per partition, drives C
//! and D its top-level folders. Builds the drives, prints them as a tree, lists children,
//! reads breadcrumbs and depth ranges, refuses an orphan and a cycle, then moves a large
//! folder with a progress bar, and prints the requests each step took.
//!
//!     cargo run --example filesystem                # the path strategy
//!     cargo run --example filesystem -- closure     # or adjacency, or nested_set
//!
//! Every strategy prints the same trees; the requests differ, and that is the point of
//! choosing one (see the strategy chooser in the README).
//!
//! The tour below is written once, over `TreeProtocol`; the models are in `drive.rs`.
//! Switching strategy is the word in `#[hierarchy(strategy = ..)]`:
//!
//! - `path` (the default) addresses a folder by its path (`D/V/d`): the path is the sort
//!   key, so the parent is known from the key, and a move rewrites every folder it moves
//!   (their addresses change). Its model has a `path: TreePath` field where the other three
//!   have an id and a parent field.
//! - `closure`, `adjacency` and `nested_set` address a folder by an id that never changes
//!   (here its name, unique in the drive) and name the parent in a field
//!   (`parent = parent`). Adjacency and nested sets keep an index (`index = gsi1`: the
//!   children of a parent, the intervals in order); the closure strategy keeps a copy of each
//!   folder under each ancestor in the table itself and reads none (the attribute is accepted
//!   all the same, so the three `#[hierarchy]` lines differ in the strategy word only).
//!
//! Runs against the embedded DynamoDB-compatible engine; set `DDB_ENDPOINT` to use another
//! endpoint (AWS's DynamoDB Local, for example).

mod drive;

use std::io::Write;

use ddb_model::prelude::*;
use ddb_model::tree::{OpPhase, Progress};
use ddb_model::{RequestStats, local};

use drive::{
    AdjacencyFolder, ClosureFolder, Drive, Folder, Named, NestedFolder, archive, at, build_seed,
    path, render,
};

/// The drive of the example (the partition of the tree).
const DRIVE: &str = "seed";

#[tokio::main]
async fn main() -> Result<(), Error> {
    let word = std::env::args().nth(1).unwrap_or_else(|| "path".to_owned());
    let db: Db = local::isolated_db().await?;
    match word.as_str() {
        "path" => tour(&db, &Folder::tree(&db, DRIVE)).await,
        "closure" => tour(&db, &ClosureFolder::tree(&db, DRIVE)).await,
        "adjacency" => tour(&db, &AdjacencyFolder::tree(&db, DRIVE)).await,
        "nested_set" => tour(&db, &NestedFolder::tree(&db, DRIVE)).await,
        other => {
            eprintln!("unknown strategy {other:?}: use path, closure, adjacency or nested_set");
            std::process::exit(2);
        }
    }
}

fn step(db: &Db, what: &str, before: RequestStats) {
    let used = db.requests() - before;
    println!("  -> {what}: {used}; {} items read", used.items_read());
}

/// The names of `nodes`, sorted (each strategy reads them in its own key order).
fn names<N: Named>(nodes: &[N]) -> String {
    let mut names: Vec<&str> = nodes.iter().map(Named::name).collect();
    names.sort_unstable();
    names.join(", ")
}

fn print(tree: &str) {
    for line in tree.lines() {
        println!("    {line}");
    }
}

/// The example's steps, the same on every strategy.
async fn tour<D: Drive>(db: &Db, tree: &D) -> Result<(), Error> {
    println!("Strategy: {}\n", D::STRATEGY);

    println!("1. Build drives C and D, one insert per folder");
    let before = db.requests();
    build_seed(tree, DRIVE).await?;
    step(db, "15 inserts, each checking its parent", before);
    print(&render(tree, None).await?);

    println!("\n2. Children of D/V");
    let before = db.requests();
    let children = tree.children(&at::<D>("D/V")?).await?;
    println!("    {}", names(&children));
    step(db, "children", before);

    println!("\n3. Everything below D/V, and two levels below D");
    let before = db.requests();
    let below = tree.descendants(&at::<D>("D/V")?).all().await?;
    println!("    below D/V: {}", names(&below));
    step(db, "whole subtree", before);
    let before = db.requests();
    let two = tree.descendants(&at::<D>("D")?).depth(1..=2).all().await?;
    println!("    two levels below D: {}", names(&two));
    step(db, "depth 1..=2", before);

    println!("\n4. Breadcrumbs of D/V/d/ii");
    let before = db.requests();
    let crumbs = tree.breadcrumbs(&at::<D>("D/V/d/ii")?).await?;
    println!("    {}", crumbs.iter().map(Named::name).collect::<Vec<_>>().join(" > "));
    step(db, "breadcrumbs", before);

    println!("\n5. Refused writes change nothing");
    let before = db.requests();
    let orphan = tree.insert(&D::Node::folder(DRIVE, &path("X/y")?, 0)).await;
    println!("    insert X/y: {}", describe(orphan));
    let cycle = tree.move_under(&at::<D>("D")?, &at::<D>("D/V")?).await;
    println!("    move D into D/V: {}", describe(cycle));
    step(db, "checks", before);

    println!("\n6. Move D/III under C (3 folders)");
    let before = db.requests();
    tree.move_under(&at::<D>("D/III")?, &at::<D>("C")?).await?;
    step(db, "small move", before);
    print(&render(tree, Some(&at::<D>("C/III")?)).await?);

    let root = path("D/V/archive")?;
    let folders = archive(DRIVE, &root, 1980..2026)?;
    println!("\n7. A large folder: D/V/archive, a folder per year and month ({})", folders.len());
    tree.insert(&D::Node::folder(DRIVE, &root, 0)).await?;
    let before = db.requests();
    tree.load(&folders).await?;
    step(db, "folders written", before);
    println!("    subtree size: {}", tree.subtree_size(&D::at(&root)).await?);

    println!("\n8. Move it to C/archive (the resumable protocol where the strategy has one)");
    let before = db.requests();
    let report = tree.move_under(&D::at(&root), &at::<D>("C")?).on_progress(bar).await?;
    println!("    rewrote {} folders (resumable: {})", report.nodes, report.resumable);
    step(db, "large move", before);

    println!("\n9. Delete C/I, then look at C");
    let before = db.requests();
    tree.delete_subtree(&at::<D>("C/I")?).await?;
    step(db, "delete", before);
    println!("    C holds {}", names(&tree.children(&at::<D>("C")?).await?));
    println!("    folders at depth 3: {}", tree.at_depth(3).await?.len());
    print(&render(tree, Some(&at::<D>("C/archive/2025")?)).await?);
    Ok(())
}

/// A refused write's error, or a note that it was not refused.
fn describe<T>(result: Result<T, Error>) -> String {
    match result {
        Ok(_) => "accepted (unexpectedly)".to_owned(),
        Err(e) => e.to_string(),
    }
}

/// A progress bar on one line.
fn bar(p: Progress) {
    let phase = match p.phase {
        OpPhase::Check => "check ",
        OpPhase::Copy => "copy  ",
        OpPhase::Switch => "switch",
        OpPhase::Remove => "remove",
    };
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
}
