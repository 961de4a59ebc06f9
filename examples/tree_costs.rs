//! The cost table of the tree strategies, measured: for each of the four strategies (path,
//! closure, adjacency, nested set) and each tree size, the requests (counted by
//! `Db::requests`) and the wall time of every operation a user picks a strategy by: insert,
//! a subtree of 100 nodes, ancestors, children, a move of one node, a move of 1,001 nodes,
//! and loading the tree. Prints markdown tables; BENCHMARKS.md, the README's strategy
//! chooser and the `tree` module docs quote them.
//!
//!     cargo run --example tree_costs                                      # 1,000 nodes (CI)
//!     cargo run --release --example tree_costs -- --sizes 1000,10000,100000
//!     cargo run --example tree_costs -- --strategies nested_set,closure
//!
//! The shape, the same for every strategy (it is the filesystem example's models, each
//! strategy on a table of its own): a top-level folder `attic`, and one *division* per 1,000
//! nodes asked for. A division is 1,001 nodes: the division, 10 departments of 100 nodes
//! (a department, 9 teams, 10 members in each team). So a department is a subtree of exactly
//! 100 nodes, a team has 10 children, a member has 3 ancestors (its team, department and
//! division), and moving a division under `attic` moves 1,001 nodes.
//!
//! What is measured, in this order:
//!
//! - **subtree of 100**: `descendants(department).depth(0..)`; for the nested set, also
//!   `within(span)` with the department's `NestedSpan` in hand (one request).
//! - **ancestors** of a member (3 nodes), **children** of a team (10).
//! - **insert** a new member under a team; **move of 1 node**: a member to another team.
//! - **move of 1,001 nodes**: the last division under `attic` (the resumable protocol where
//!   the strategy has one).
//! - **load**: writing the whole tree, first, with one `bulk_load` of every node (batch
//!   writes of 25 items, no transaction per node; the same call on every strategy). Its
//!   requests are checked against what `BulkLoad` documents, by kind: ⌈rows / 25⌉
//!   BatchWriteItem of the rows (rows = N, or Σ(D + 2) for the closure strategy's copies),
//!   ⌈N / 100⌉ BatchGetItem, and 4 more (the intent's PutItem and UpdateItem, the journal's
//!   BatchWriteItem, the last TransactWriteItems), one more BatchWriteItem per 25 journal
//!   items of 300 KB (7.5 MB of input), and the nested set's GetItem of its top-level record.
//!
//! Reads run 10 times and writes 10 times on distinct nodes (the move of 1,001 nodes once);
//! times are medians. Runs against the embedded engine, or `DDB_ENDPOINT`. Every result is
//! checked (sizes of the sets read, nodes moved), so the table cannot quote a wrong read.

#[path = "filesystem/drive.rs"]
#[allow(dead_code)]
mod drive;

use std::time::{Duration, Instant};

use ddb_model::entity::to_item;
use ddb_model::item::item_size;
use ddb_model::prelude::*;
use ddb_model::{Op, RequestStats, TreePath, local};

use drive::{AdjacencyFolder, ClosureFolder, Drive, Folder, Named, NestedFolder};

const DRIVE: &str = "org";
const REPS: usize = 10;
const DEPARTMENTS: usize = 10;
const TEAMS: usize = 9;
const MEMBERS: usize = 10;
const STRATEGIES: [&str; 4] = ["path", "closure", "adjacency", "nested_set"];

type Failure = Box<dyn std::error::Error>;

/// One operation of one strategy on one tree: requests per call and the median time.
struct Measure {
    op: &'static str,
    stats: RequestStats,
    time: Duration,
    calls: usize,
}

/// The measures of one strategy on one tree size.
struct Run {
    strategy: &'static str,
    nodes: usize,
    measures: Vec<Measure>,
}

impl Run {
    fn cell(&self, op: &str) -> String {
        match self.measures.iter().find(|m| m.op == op) {
            Some(m) => format!("{} · {}", m.stats.total(), millis(m.time)),
            None => "—".to_owned(),
        }
    }
}

fn millis(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms >= 1000.0 { format!("{:.1} s", ms / 1000.0) } else { format!("{ms:.1} ms") }
}

fn check(ok: bool, what: impl FnOnce() -> String) -> Result<(), Failure> {
    if ok { Ok(()) } else { Err(what().into()) }
}

fn path(text: &str) -> Result<TreePath, Failure> {
    Ok(text.parse()?)
}

/// The path of a member, a team, a department or a division (ids are the last segments).
fn division(a: usize) -> String {
    format!("d{a}")
}
fn department(a: usize, b: usize) -> String {
    format!("d{a}/d{a}p{b}")
}
fn team(a: usize, b: usize, c: usize) -> String {
    format!("d{a}/d{a}p{b}/d{a}p{b}t{c}")
}
fn member(a: usize, b: usize, c: usize, e: usize) -> String {
    format!("d{a}/d{a}p{b}/d{a}p{b}t{c}/d{a}p{b}t{c}m{e}")
}

/// Every folder of a tree of `divisions` divisions and the attic with its depth, level by
/// level: the order the bulk load writes them in (parents first, breadth first), which the
/// journal's size below depends on.
fn tree_nodes<N: Named>(divisions: usize) -> Result<Vec<(usize, N)>, Failure> {
    let folder = |depth: usize, text: &str, files: u32| -> Result<(usize, N), Failure> {
        Ok((depth, N::folder(DRIVE, &path(text)?, files)))
    };
    let mut out = vec![folder(1, "attic", 0)?];
    for a in 0..divisions {
        out.push(folder(1, &division(a), 0)?);
    }
    for a in 0..divisions {
        for b in 0..DEPARTMENTS {
            out.push(folder(2, &department(a, b), 0)?);
        }
    }
    for a in 0..divisions {
        for b in 0..DEPARTMENTS {
            for c in 0..TEAMS {
                out.push(folder(3, &team(a, b, c), 0)?);
            }
        }
    }
    for a in 0..divisions {
        for b in 0..DEPARTMENTS {
            for c in 0..TEAMS {
                for e in 0..MEMBERS {
                    out.push(folder(4, &member(a, b, c, e), 1)?);
                }
            }
        }
    }
    Ok(out)
}

/// The requests of a bulk load of `nodes` into an empty tree, by operation, as
/// [`BulkLoad`](ddb_model::tree::BulkLoad) documents them: the intent record (PutItem),
/// ⌈N / 100⌉ BatchGetItem (none of the nodes exists), the journal of the input (one
/// BatchWriteItem per 25 journal items of up to 300 KB of node items), the intent's phase
/// (UpdateItem), ⌈rows / 25⌉ BatchWriteItem of the rows, and the last TransactWriteItems.
/// Rows: one per node, except the closure strategy's D + 2 per node at depth D (the node,
/// its own copy, a copy under each ancestor and one under the tree). The nested set also
/// reads the tree's top-level record (GetItem: where its free numbers start).
fn load_requests<D: Drive>(nodes: &[(usize, D::Node)]) -> Result<Vec<(Op, u64)>, Failure> {
    const BATCH: usize = 25;
    const JOURNAL_BYTES: usize = 300_000;
    let rows: usize = if D::STRATEGY == "closure" {
        nodes.iter().map(|(depth, _)| depth + 2).sum()
    } else {
        nodes.len()
    };
    // The journal: node items packed greedily, in load order, into items of 300 KB.
    let (mut chunks, mut bytes) = (0usize, 0usize);
    for (_, node) in nodes {
        let size = item_size(&to_item(node, node.version())?) + 3;
        if bytes > 0 && bytes + size > JOURNAL_BYTES {
            chunks += 1;
            bytes = 0;
        }
        bytes += size;
    }
    chunks += usize::from(bytes > 0);
    let n = nodes.len();
    let mut out = vec![
        (Op::PutItem, 1),
        (Op::BatchGetItem, n.div_ceil(100) as u64),
        (Op::BatchWriteItem, (chunks.div_ceil(BATCH) + rows.div_ceil(BATCH)) as u64),
        (Op::UpdateItem, 1),
        (Op::TransactWriteItems, 1),
    ];
    if D::STRATEGY == "nested_set" {
        out.push((Op::GetItem, 1));
    }
    Ok(out)
}

/// Runs `f` `reps` times (`f(i)` on the i-th run), checks each result, and records the
/// requests per call (the same on every call, or the table would be wrong) and the median.
async fn measure<F, Fut>(
    db: &Db,
    out: &mut Vec<Measure>,
    op: &'static str,
    reps: usize,
    mut f: F,
) -> Result<(), Failure>
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = Result<(), Failure>>,
{
    let mut times = Vec::with_capacity(reps);
    let mut first: Option<RequestStats> = None;
    for i in 0..reps {
        let before = db.requests();
        let started = Instant::now();
        f(i).await?;
        times.push(started.elapsed());
        let used = db.requests() - before;
        match &first {
            None => first = Some(used),
            Some(f) if f.total() != used.total() => {
                return Err(format!("{op}: {f} on the first call, {used} on call {i}").into());
            }
            Some(_) => {}
        }
    }
    times.sort();
    let stats = first.unwrap_or_default();
    out.push(Measure { op, stats, time: times[times.len() / 2], calls: reps });
    Ok(())
}

/// Builds a tree of `divisions` divisions and measures every operation on it.
async fn run<D: Drive>(
    db: &Db,
    tree: &D,
    divisions: usize,
    nested: Option<&ddb_model::tree::NestedTree<'_, NestedFolder>>,
) -> Result<Vec<Measure>, Failure> {
    let mut out = Vec::new();

    // Load: the whole tree in one bulk load, its nodes level by level.
    let nodes = tree_nodes::<D::Node>(divisions)?;
    let expected = load_requests::<D>(&nodes)?;
    let count = nodes.len();
    let before = db.requests();
    let started = Instant::now();
    let report = tree.bulk_load(nodes.into_iter().map(|(_, n)| n)).await?;
    let time = started.elapsed();
    let stats = db.requests() - before;
    check(report.nodes == count, || format!("loaded {} of {count} nodes", report.nodes))?;
    for &(op, n) in &expected {
        check(stats.get(op) == n, || format!("load: {stats}, expected {n} {op}"))?;
    }
    check(stats.total() == expected.iter().map(|(_, n)| n).sum::<u64>(), || {
        format!("load: {stats}, expected only {expected:?}")
    })?;
    out.push(Measure { op: "load", stats, time, calls: 1 });

    let last = divisions - 1;
    let dept = D::at(&path(&department(last, 1))?);
    measure(db, &mut out, "subtree of 100", REPS, |_| async {
        let n = tree.descendants(&dept).depth(0..).all().await?.len();
        check(n == 100, || format!("subtree of a department: {n} nodes"))
    })
    .await?;
    if let Some(nested) = nested {
        let span = nested.span(format!("d{last}p1")).await?.ok_or("no span")?;
        measure(db, &mut out, "subtree of 100, from a NestedSpan", REPS, |_| async {
            let n = nested.within(span).all().await?.len();
            check(n == 100, || format!("subtree within a span: {n} nodes"))
        })
        .await?;
    }
    let leaf = D::at(&path(&member(last, 2, 3, 4))?);
    measure(db, &mut out, "ancestors", REPS, |_| async {
        let n = tree.ancestors(&leaf).await?.len();
        check(n == 3, || format!("ancestors of a member: {n}"))
    })
    .await?;
    let squad = D::at(&path(&team(last, 2, 3))?);
    measure(db, &mut out, "children", REPS, |_| async {
        let n = tree.children(&squad).await?.len();
        check(n == MEMBERS, || format!("children of a team: {n}"))
    })
    .await?;
    measure(db, &mut out, "insert", REPS, |i| async move {
        let at = path(&format!("{}/new{i}", team(last, 2, 3)))?;
        tree.insert(&D::Node::folder(DRIVE, &at, 0)).await?;
        Ok(())
    })
    .await?;
    // The division moved below keeps its 1,001 nodes.
    for i in 0..REPS {
        tree.delete_subtree(&D::at(&path(&format!("{}/new{i}", team(last, 2, 3)))?)).await?;
    }
    let to = D::at(&path(&team(last, 3, 0))?);
    measure(db, &mut out, "move of 1 node", REPS, |i| {
        let to = to.clone();
        async move {
            let from = D::at(&path(&member(last, 4, 0, i))?);
            let report = tree.move_under(&from, &to).await?;
            check(report.nodes == 1, || format!("moved {} nodes", report.nodes))
        }
    })
    .await?;
    let attic = D::at(&path("attic")?);
    let head = D::at(&path(&division(last))?);
    measure(db, &mut out, "move of 1,001 nodes", 1, |_| async {
        let report = tree.move_under(&head, &attic).await?;
        // An adjacency move rewrites the node alone; its subtree follows the parent link.
        let expected = if D::STRATEGY == "adjacency" { 1 } else { 1001 };
        check(report.nodes == expected, || format!("moved {} nodes", report.nodes))
    })
    .await?;
    // Checked after the measure, so that its reads are not counted as the move's.
    let n = tree.subtree_size(&attic).await?;
    check(n == 1002, || format!("attic holds {n} nodes"))?;
    Ok(out)
}

struct Args {
    sizes: Vec<usize>,
    strategies: Vec<&'static str>,
}

fn args() -> Result<Args, Failure> {
    let mut sizes = vec![1000];
    let mut strategies = STRATEGIES.to_vec();
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => sizes = vec![1000],
            "--sizes" => {
                let list = it.next().ok_or("--sizes needs a list, as in 1000,10000")?;
                sizes = list.split(',').map(str::parse).collect::<Result<_, _>>()?;
                check(sizes.iter().all(|&s| s >= 1000), || "sizes start at 1000".into())?;
            }
            "--strategies" => {
                let list = it.next().ok_or("--strategies needs a list, as in path,closure")?;
                strategies = Vec::new();
                for word in list.split(',') {
                    let known = STRATEGIES.iter().find(|s| **s == word);
                    strategies.push(*known.ok_or_else(|| format!("unknown strategy {word:?}"))?);
                }
            }
            other => {
                return Err(format!(
                    "unknown argument {other:?}: --sizes, --strategies or --quick"
                )
                .into());
            }
        }
    }
    Ok(Args { sizes, strategies })
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let args = args()?;
    let mut runs = Vec::new();
    for &size in &args.sizes {
        let divisions = size / 1000;
        for &strategy in &args.strategies {
            let db: Db = local::isolated_db().await?;
            let started = Instant::now();
            let measures = match strategy {
                "path" => run(&db, &Folder::tree(&db, DRIVE), divisions, None).await?,
                "closure" => run(&db, &ClosureFolder::tree(&db, DRIVE), divisions, None).await?,
                "adjacency" => {
                    run(&db, &AdjacencyFolder::tree(&db, DRIVE), divisions, None).await?
                }
                _ => {
                    let tree = NestedFolder::tree(&db, DRIVE);
                    run(&db, &tree, divisions, Some(&tree)).await?
                }
            };
            let nodes = 1 + divisions * (1 + DEPARTMENTS * (1 + TEAMS * (1 + MEMBERS)));
            eprintln!("{strategy}, {nodes} nodes: {:.1} s", started.elapsed().as_secs_f64());
            runs.push(Run { strategy, nodes, measures });
        }
    }
    print(&runs);
    Ok(())
}

fn print(runs: &[Run]) {
    let profile = if cfg!(debug_assertions) { "debug" } else { "release" };
    let backend = std::env::var("DDB_ENDPOINT").map_or("the embedded engine".to_owned(), |e| e);
    println!("Requests · median wall time per operation ({profile} build, {backend}):\n");
    println!(
        "| strategy | nodes | insert | subtree of 100 | ancestors (3) | children (10) | move of 1 node | move of 1,001 nodes | load the tree |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for r in runs {
        let subtree = match r.measures.iter().find(|m| m.op == "subtree of 100, from a NestedSpan")
        {
            Some(_) => format!(
                "{} (from a span; {} from an id)",
                r.cell("subtree of 100, from a NestedSpan"),
                r.cell("subtree of 100")
            ),
            None => r.cell("subtree of 100"),
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.strategy,
            r.nodes,
            r.cell("insert"),
            subtree,
            r.cell("ancestors"),
            r.cell("children"),
            r.cell("move of 1 node"),
            r.cell("move of 1,001 nodes"),
            r.cell("load"),
        );
    }
    println!("\nThe requests of each, by kind:\n");
    println!("| strategy | nodes | operation | requests per call | items read | calls |");
    println!("| --- | ---: | --- | --- | ---: | ---: |");
    for r in runs {
        for m in &r.measures {
            println!(
                "| {} | {} | {} | {} | {} | {} |",
                r.strategy,
                r.nodes,
                m.op,
                m.stats,
                m.stats.items_read(),
                m.calls
            );
        }
    }
}
