//! Bulk loads, strategy by strategy: the requests they send (counted), unprocessed batch
//! items sent again, progress, loads under existing nodes. (What every strategy shares,
//! against a model and cut after every request, is in `tree_conformance.rs`.)

use std::sync::{Arc, Mutex};

use ddb_model::prelude::*;
use ddb_model::tree::{OpKind, OpPhase, OpReport, Progress, TreeProtocol};
use ddb_model::{DefaultTable, Op, TreePath};

use crate::model::{Cat, Dir, Folder, Nest};
use crate::support::db;
use ddb_model::testing::{Faults, Harness};

/// A tree below one root `r` whose nodes at depth `d + 1` have `fanout[d]` children each;
/// each node with its parent's name and its depth (the root has depth 1).
fn shape(fanout: &[usize]) -> Vec<(String, Option<String>, usize)> {
    let mut out = vec![("r".to_owned(), None, 1)];
    let mut level = vec!["r".to_owned()];
    for (d, &f) in fanout.iter().enumerate() {
        let depth = d + 2;
        let mut next = Vec::new();
        for parent in &level {
            for i in 0..f {
                let name = format!("{parent}.{i}");
                out.push((name.clone(), Some(parent.clone()), depth));
                next.push(name);
            }
        }
        level = next;
    }
    out
}

/// The requests of a load of `nodes` nodes writing `rows` rows, with one journal item and
/// `parent_reads` reads of existing parents, by operation.
fn expected(nodes: usize, rows: usize) -> [(Op, u64); 5] {
    [
        // The intent record.
        (Op::PutItem, 1),
        // No node exists already: 100 keys per request.
        (Op::BatchGetItem, nodes.div_ceil(100) as u64),
        // The journal (one item: the input is far below 300 KB), then the rows, 25 a request.
        (Op::BatchWriteItem, 1 + rows.div_ceil(25) as u64),
        // The intent's phase.
        (Op::UpdateItem, 1),
        // The parents' bookkeeping and the intent's removal.
        (Op::TransactWriteItems, 1),
    ]
}

fn assert_cost(db: &Db, before: ddb_model::RequestStats, want: [(Op, u64); 5], what: &str) {
    let cost = db.requests() - before;
    for (op, n) in want {
        assert_eq!(cost.get(op), n, "{what}: {op:?}");
    }
    let sum: u64 = want.iter().map(|(_, n)| n).sum();
    assert_eq!(cost.total(), sum, "{what}: nothing else ({cost:?})");
}

/// A 1,000-node closure tree (1 + 9 + 90 + 900) loads in ⌈rows / 25⌉ `BatchWriteItem`s
/// (rows: a node at depth D writes D + 2 items) and a handful of bookkeeping requests: no
/// transaction per node.
#[tokio::test]
async fn a_closure_tree_loads_in_rows_over_25_batch_writes() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let org = Dir::tree(&db, "bulk");
    let nodes = shape(&[9, 10, 10]);
    assert_eq!(nodes.len(), 1000); // 1 + 9 + 90 + 900
    let rows: usize = nodes.iter().map(|(_, _, depth)| depth + 2).sum();
    let dirs: Vec<Dir> =
        nodes.iter().map(|(id, p, _)| Dir::new("bulk", id, p.as_deref())).collect();
    let before = db.requests();
    let report = org.bulk_load(dirs).await?;
    assert_eq!(report, OpReport { nodes: 1000, resumable: true });
    assert_cost(&db, before, expected(1000, rows), "closure");
    assert_eq!(rows, 3 + 9 * 4 + 90 * 5 + 900 * 6);
    assert_eq!(rows.div_ceil(25), 236);

    assert_eq!(org.descendants("r").count().await?, 999);
    assert_eq!(org.children("r.3").all().await?.len(), 10);
    let up: Vec<String> = org.ancestors("r.1.2.3").await?.into_iter().map(|d| d.id).collect();
    assert_eq!(up, ["r", "r.1", "r.1.2"]);
    // A later insert and move behave as on an inserted tree.
    org.insert(&Dir::new("bulk", "late", Some("r.1.2.3"))).await?;
    org.move_under("r.1", "r.2.2").await?;
    let up: Vec<String> = org.ancestors("late").await?.into_iter().map(|d| d.id).collect();
    assert_eq!(up, ["r", "r.2", "r.2.2", "r.1", "r.1.2", "r.1.2.3"]);
    Ok(())
}

/// 10,000 closure nodes (10 roots of 999 nodes, depths 1 to 3): ⌈rows / 25⌉ batch writes,
/// not 20,000 requests.
#[tokio::test]
async fn ten_thousand_closure_nodes_load_in_batches() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let org = Dir::tree(&db, "big");
    let mut dirs = Vec::new();
    let mut rows = 0;
    for r in 0..10 {
        let root = format!("r{r}");
        dirs.push(Dir::new("big", &root, None));
        rows += 3;
        for c in 0..37 {
            let child = format!("{root}.{c}");
            dirs.push(Dir::new("big", &child, Some(&root)));
            rows += 4;
            for g in 0..26 {
                dirs.push(Dir::new("big", &format!("{child}.{g}"), Some(&child)));
                rows += 5;
            }
        }
    }
    let n = dirs.len();
    assert_eq!(n, 10 * (1 + 37 + 37 * 26));
    let before = db.requests();
    org.bulk_load(dirs).await?;
    assert_cost(&db, before, expected(n, rows), "10,000 closure nodes");
    assert!((db.requests() - before).total() < 2_200, "{rows} rows");
    assert_eq!(org.nodes().count().await?, n);
    Ok(())
}

/// A load under existing nodes of each strategy: the reads of those parents, then the same
/// batches; the parents count their new children in the last transaction.
#[tokio::test]
async fn loads_under_existing_nodes_read_their_parents() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    // Path: the parents are read in one BatchGetItem (with the check that no node exists).
    let drive = Folder::tree(&db, "D");
    for p in ["a", "b"] {
        drive.insert(&Folder { drive: "D".into(), path: p.parse()? }).await?;
    }
    let folders: Vec<Folder> = (0..30)
        .map(|i| Folder {
            drive: "D".into(),
            path: format!("{}/f{i}", ["a", "b"][i % 2]).parse().unwrap(),
        })
        .collect();
    let before = db.requests();
    drive.bulk_load(folders).await?;
    let mut want = expected(30, 30);
    want[1].1 += 1;
    assert_cost(&db, before, want, "path");
    assert_eq!(drive.children(&"b".parse()?).all().await?.len(), 15);
    // A move of a parent now conditions on the revision the load left.
    drive.move_under(&"a".parse()?, &"b".parse()?).await?;
    assert_eq!(drive.descendants(&"b".parse()?).count().await?, 31);

    // Nested set: one GetItem per parent; the loaded nodes take numbers inside the parent's
    // free ones, and later inserts under them find room.
    let shop = Nest::tree(&db, "N");
    shop.insert(&Nest::new("N", "root", None)).await?;
    shop.insert(&Nest::new("N", "old", Some("root"))).await?;
    let nests: Vec<Nest> = (0..40)
        .map(|i| match i {
            0..4 => Nest::new("N", &format!("k{i}"), Some("root")),
            _ => Nest::new("N", &format!("g{i}"), Some(&format!("k{}", i % 4))),
        })
        .collect();
    let before = db.requests();
    shop.bulk_load(nests).await?;
    let want = expected(40, 40);
    let cost = db.requests() - before;
    assert_eq!(cost.get(Op::GetItem), 1, "the parent");
    want.iter().for_each(|(op, n)| assert_eq!(cost.get(*op), *n, "nested {op:?}"));
    assert_eq!(shop.children("root").all().await?.len(), 5);
    assert_eq!(shop.descendants("root").count().await?, 41);
    let span = shop.span("root").await?.expect("root");
    assert_eq!(shop.within(span).count().await?, 42);
    for i in 0..20 {
        shop.insert(&Nest::new("N", &format!("late{i}"), Some("k1"))).await?;
    }
    assert_eq!(shop.descendants("k1").depth(1..=1).count().await?, 9 + 20);

    // Adjacency: one GetItem per level above each parent; its children counter moves once.
    let cats = Cat::tree(&db, "C");
    cats.insert(&Cat::new("C", "top", None)).await?;
    cats.insert(&Cat::new("C", "mid", Some("top"))).await?;
    let kids: Vec<Cat> = (0..12).map(|i| Cat::new("C", &format!("k{i}"), Some("mid"))).collect();
    let before = db.requests();
    cats.bulk_load(kids).await?;
    assert_eq!((db.requests() - before).get(Op::GetItem), 2, "mid and top");
    assert_eq!(cats.subtree_size("top").await?, 14);
    // The delete reads the counters the load wrote: the whole subtree goes.
    assert_eq!(cats.delete_subtree("mid").await?.nodes, 13);
    Ok(())
}

/// Batch items the service leaves unprocessed are sent again (with backoff) until they are
/// written: about half the `BatchWriteItem`s come back with all their items unprocessed.
#[tokio::test]
async fn unprocessed_items_are_sent_again() -> Result<(), Error> {
    let harness = Harness::<DefaultTable>::start(Faults::seeded(2).unprocessed(0.5)).await?;
    let (db, clean) = (harness.db().clone(), harness.direct());
    let org = Dir::tree(&db, "u");
    let nodes = shape(&[5, 5]); // 1 + 5 + 25
    let rows: usize = nodes.iter().map(|(_, _, d)| d + 2).sum();
    let dirs: Vec<Dir> = nodes.iter().map(|(id, p, _)| Dir::new("u", id, p.as_deref())).collect();
    let before = db.requests();
    org.bulk_load(dirs).await?;
    let sent = (db.requests() - before).get(Op::BatchWriteItem);
    // Each request once (the journal's, and every chunk of rows), and items left unprocessed
    // sent again (with the next chunk's, when they fit): at most once more per such answer.
    let first = 1 + rows.div_ceil(25) as u64;
    let unprocessed = harness.proxy().counts().unprocessed;
    assert!(unprocessed >= 2, "{unprocessed} of {sent}");
    assert!(sent > first && sent <= first + unprocessed, "{rows} rows: {sent}, {unprocessed}");
    assert_eq!(Dir::tree(clean, "u").descendants("r").count().await?, 30);
    assert_eq!(Dir::tree(clean, "u").pending().await?, None);
    Ok(())
}

/// Progress after every 400 rows, the rows counted; a load through the protocol trait.
#[tokio::test]
async fn progress_counts_rows_and_generic_code_loads() -> Result<(), Error> {
    async fn load<T: TreeProtocol>(
        tree: &T,
        nodes: Vec<T::Node>,
        seen: Arc<Mutex<Vec<Progress>>>,
    ) -> Result<OpReport, Error> {
        tree.bulk_load(nodes).on_progress(move |p| seen.lock().unwrap().push(p)).await
    }
    let db = db::<DefaultTable>().await;
    let drive = Folder::tree(&db, "P");
    let mut folders = vec![Folder { drive: "P".into(), path: "top".parse()? }];
    for i in 0..999 {
        folders.push(Folder {
            drive: "P".into(),
            path: TreePath::new(["top".to_owned(), format!("{i:04}")])?,
        });
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    let report = load(&drive, folders, Arc::clone(&seen)).await?;
    assert_eq!(report.nodes, 1000);
    let seen = seen.lock().unwrap().clone();
    let done: Vec<usize> = seen.iter().map(|p| p.done).collect();
    assert_eq!(done, [400, 800, 1000]);
    assert!(seen.iter().all(|p| p.phase == OpPhase::Copy && p.total == 1000));
    assert_eq!(drive.at_depth(2).all().await?.len(), 999);
    Ok(())
}

/// A pending load is named by `pending` and refuses every other write of the tree, also
/// of a strategy without resumable moves (adjacency); other trees are not affected.
#[tokio::test]
async fn a_pending_load_blocks_only_its_tree() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    // intent, check, journal, phase: no rows
    let cut_off = Harness::on(db.clone(), Faults::default().fail_from(4)).await?;
    let faulty = cut_off.db().clone();
    let nodes: Vec<Cat> = (0..30).map(|i| Cat::new("A", &format!("c{i}"), None)).collect();
    assert!(Cat::tree(&faulty, "A").bulk_load(nodes).await.is_err());
    let cats = Cat::tree(&db, "A");
    let op = cats.pending().await?.expect("pending");
    assert_eq!((op.kind, op.phase), (OpKind::Load { nodes: 30 }, OpPhase::Copy));
    assert!(cats.insert(&Cat::new("A", "x", None)).await.unwrap_err().is_tree_busy());
    Cat::tree(&db, "B").insert(&Cat::new("B", "x", None)).await?;
    assert_eq!(cats.resume(|_| {}).await?, Some(OpReport { nodes: 30, resumable: true }));
    assert_eq!(cats.roots().all().await?.len(), 30);
    cats.insert(&Cat::new("A", "x", Some("c3"))).await?;
    Ok(())
}
