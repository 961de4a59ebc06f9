//! A small move while other tasks insert continuously under its old and new parents, on every
//! strategy: each move succeeds or gives up with `is_tree_contended()` after its bounded
//! tries (8 transactions at most), never hangs, and the tree stays whole: every insert that
//! succeeded is there, the node is under the parent its last successful move named.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ddb_model::prelude::*;
use ddb_model::tree::TreeProtocol;
use ddb_model::{DefaultTable, Op, TreePath};

use crate::model::{Cat, Dir, Folder};
use crate::support::db;

/// The tries a small move makes at most (`MOVE_CONFLICTS`): one transaction each.
const MOVE_TRIES: u64 = 8;
/// The most nodes the moved subtree gets (x, c and inserts below x): small enough for one
/// transaction on every strategy (closure: 14 * 5 + 3 actions), so the move stays small.
const SMALL: usize = 14;
/// The longest a small move may take: its pauses are at most about 1.5 s, its requests a
/// few dozen.
const MOVE_BOUND: Duration = Duration::from_secs(30);

/// How the test builds one strategy's nodes and addresses.
trait Shape: TreeProtocol<Address: PartialEq> + 'static {
    /// How `x` under `p` is named as a parent.
    fn x_under(p: &str) -> String;
    fn open(db: &'static Db, part: &str) -> Self;
    /// The node `name` under `parent` (a top-level name).
    fn node(part: &str, name: &str, parent: Option<&str>) -> Self::Node;
    /// The address of `name` under `parent`.
    fn at(name: &str, parent: Option<&str>) -> Self::Address;
}

impl Shape for ddb_model::tree::PathTree<'static, Folder> {
    fn x_under(p: &str) -> String {
        format!("{p}/x")
    }
    fn open(db: &'static Db, part: &str) -> Self {
        Folder::tree(db, part)
    }
    fn node(part: &str, name: &str, parent: Option<&str>) -> Folder {
        Folder::at(part, &path(name, parent).to_string())
    }
    fn at(name: &str, parent: Option<&str>) -> TreePath {
        path(name, parent)
    }
}

fn path(name: &str, parent: Option<&str>) -> TreePath {
    let text = match parent {
        Some(p) => format!("{p}/{name}"),
        None => name.to_owned(),
    };
    text.parse().expect("a valid path")
}

impl Shape for ddb_model::tree::ClosureTree<'static, Dir> {
    fn x_under(_: &str) -> String {
        "x".to_owned()
    }
    fn open(db: &'static Db, part: &str) -> Self {
        Dir::tree(db, part)
    }
    fn node(part: &str, name: &str, parent: Option<&str>) -> Dir {
        Dir::new(part, name, parent)
    }
    fn at(name: &str, _: Option<&str>) -> String {
        name.to_owned()
    }
}

impl Shape for ddb_model::tree::AdjacencyTree<'static, Cat> {
    fn x_under(_: &str) -> String {
        "x".to_owned()
    }
    fn open(db: &'static Db, part: &str) -> Self {
        Cat::tree(db, part)
    }
    fn node(part: &str, name: &str, parent: Option<&str>) -> Cat {
        Cat::new(part, name, parent)
    }
    fn at(name: &str, _: Option<&str>) -> String {
        name.to_owned()
    }
}

/// A `Db` that lives for the test (the tree handles borrow it from spawned tasks).
fn leak(db: Db) -> &'static Db {
    Box::leak(Box::new(db))
}

async fn small_moves_under_a_stream_of_inserts<T: Shape>() {
    let shared = leak(db::<DefaultTable>().await);
    // The mover has its own handle, so that its requests are counted apart.
    let mover_db = leak(Db::with_table_name(shared.client().clone(), shared.table_name()));
    let part = "p";
    let tree = T::open(shared, part);
    for (name, parent) in [("A", None), ("B", None)] {
        tree.insert(&T::node(part, name, parent)).await.expect("parent");
    }
    tree.insert(&T::node(part, "x", Some("A"))).await.expect("x");
    tree.insert(&T::node(part, "c", Some(&T::x_under("A")))).await.expect("c, below x");

    // Writers: insert under A, under B and under x itself (a path writer addresses x under
    // the parent the mover's last move named: guessing by flipping after each failure could
    // fall in step with the moves and never find x) until told to stop.
    let stop = Arc::new(AtomicBool::new(false));
    let x_in_b = Arc::new(AtomicBool::new(false));
    let inserted = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let mut writers = Vec::new();
    for w in 0..3 {
        let (stop, inserted, x_in_b) =
            (Arc::clone(&stop), Arc::clone(&inserted), Arc::clone(&x_in_b));
        writers.push(tokio::spawn(async move {
            let tree = T::open(shared, part);
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                // Below x until the subtree has SMALL nodes: the move stays one transaction.
                let below_x = inserted[1].load(Ordering::Relaxed) + 2 < SMALL;
                let x_parent = if x_in_b.load(Ordering::Relaxed) { "B" } else { "A" };
                let (parent, under_x) = match i % 3 {
                    0 => ("B".to_owned(), false),
                    2 if below_x => (T::x_under(x_parent), true),
                    _ => ("A".to_owned(), false),
                };
                let node = T::node(part, &format!("w{w}n{i}"), Some(&parent));
                match tree.insert(&node).await {
                    Ok(()) => {
                        inserted[usize::from(under_x)].fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) if under_x && (e.is_parent_missing() || e.is_tree_busy()) => {}
                    Err(e) if e.is_tree_changed() || e.is_transaction_conflict() => {}
                    Err(e) => panic!("insert under {parent}: {e}"),
                }
                i += 1;
            }
        }));
    }

    let mover = T::open(mover_db, part);
    let mut parent = "A";
    let (mut moved, mut gave_up) = (0, 0);
    for round in 0..6 {
        let to = if parent == "A" { "B" } else { "A" };
        mover_db.reset_requests();
        let started = Instant::now();
        let result = tokio::time::timeout(
            MOVE_BOUND,
            mover.move_under(&T::at("x", Some(parent)), &T::at(to, None)).send(),
        )
        .await
        .unwrap_or_else(|_| panic!("round {round}: the move did not end within {MOVE_BOUND:?}"));
        let took = started.elapsed();
        // A try is one transaction (sent again with its token only after a transport
        // failure, which the engines here do not produce).
        let transactions = mover_db.requests().get(Op::TransactWriteItems);
        assert!(
            (1..=MOVE_TRIES).contains(&transactions),
            "round {round}: {transactions} transactions"
        );
        match result {
            Ok(report) => {
                assert!(report.nodes >= 1 && !report.resumable, "round {round}: {report:?}");
                parent = to;
                x_in_b.store(to == "B", Ordering::Relaxed);
                moved += 1;
            }
            Err(e) => {
                assert!(e.is_tree_contended(), "round {round}: {e}");
                let tries = match &e {
                    Error::Tree {
                        problem: ddb_model::tree::TreeProblem::Contended { tries, .. },
                        ..
                    } => *tries,
                    _ => 0,
                };
                assert_eq!(u64::from(tries), MOVE_TRIES, "{e}");
                assert_eq!(transactions, MOVE_TRIES, "gave up only after every try");
                gave_up += 1;
            }
        }
        println!("round {round}: {transactions} transaction(s), {took:?}");
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await.expect("writer");
    }
    let [beside, below] = [0, 1].map(|i| inserted[i].load(Ordering::Relaxed));
    println!("moved {moved}, gave up {gave_up}, inserted {beside} beside x and {below} below");
    assert!(beside > 0 && below > 0, "the writers ran");

    // The tree is whole: x under the parent its last move named, every insert there.
    let (a, b) = (tree.children(&T::at("A", None)).await, tree.children(&T::at("B", None)).await);
    let (a, b) = (a.expect("children of A"), b.expect("children of B"));
    let x_at = T::at("x", Some(parent));
    let has_x = |nodes: &[T::Node]| nodes.iter().any(|n| T::address(n) == x_at);
    assert!(if parent == "A" { has_x(&a) } else { has_x(&b) }, "x under {parent}");
    assert!(!(has_x(&a) && has_x(&b)));
    assert_eq!(a.len() + b.len(), beside + 1, "every insert beside x, and x");
    let under_x = tree.children(&x_at).await.expect("children of x");
    assert_eq!(under_x.len(), below + 1, "every insert below x, and c");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn path_small_moves_under_a_stream_of_inserts() {
    small_moves_under_a_stream_of_inserts::<ddb_model::tree::PathTree<'static, Folder>>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closure_small_moves_under_a_stream_of_inserts() {
    small_moves_under_a_stream_of_inserts::<ddb_model::tree::ClosureTree<'static, Dir>>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adjacency_small_moves_under_a_stream_of_inserts() {
    small_moves_under_a_stream_of_inserts::<ddb_model::tree::AdjacencyTree<'static, Cat>>().await;
}
