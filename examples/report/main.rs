//! The performance report: runs a fixed workload on the embedded engine and prints, per
//! access pattern, the requests sent (from the request counter), the items read and the wall
//! time, next to the fewest requests the pattern can take and why.
//!
//!     cargo run --release --example report            # the workload of BENCHMARKS.md
//!     cargo run --example report -- --quick           # a small workload (CI)
//!     cargo run --example report -- --trees 1000     # other tree sizes (powers of 10)
//!
//! Exits with an error when a pattern sends a different number of requests than expected:
//! every row states its minimum, and the few rows that exceed it say why.
//!
//! # Sections
//!
//! Each module here contributes `Section`s (one markdown table each, `measure.rs`), listed
//! in `main` below, each with its own models and table (from `local::isolated_db`):
//!
//! - `repository.rs`: single items, queries, indexes, pages, batches, scans, transactions;
//! - `tree.rs`: one section per tree strategy (path, closure, adjacency, nested set) and
//!   size (`Scale::tree_sizes`: 1k and 10k nodes), each tree built by one `bulk_load` (a
//!   row of its own), with the naive approaches a hand-written design starts from as rows
//!   of their own (children by filtering the whole subtree, ancestors by one get per level,
//!   a move by one put and one delete per node), then a table of how each cost grows with
//!   the tree;
//! - `edge.rs`: graph edges on a generated follow graph: writes (link, unlink, update,
//!   link_all), reads (edges, degrees, outgoing and incoming pages, with the naive
//!   lookup of denormalised fields as a row), merges, traversals and `remove_node`.
//!
//! A row is `measure(db, runs, |i| async move { ..; Ok(items_returned) })` followed by
//! `.row(pattern, call, min, why)`, or `.row_over(pattern, call, min, expected, why)` for a
//! pattern that deliberately sends more than the minimum.
//!
//! Runs against the embedded DynamoDB-compatible engine; set `DDB_ENDPOINT` to use another
//! endpoint (AWS's DynamoDB Local, for example).

mod edge;
mod measure;
mod repository;
mod tree;

use std::time::Instant;

use ddb_model::{Error, local};

use crate::measure::Section;

/// The size of the workload.
#[derive(Debug, Clone)]
pub struct Scale {
    /// Users in the table.
    pub users: usize,
    /// Orders in one user's partition.
    pub orders: usize,
    /// Runs of each single-item operation.
    pub single_runs: u32,
    /// Runs of each read of many items (queries, batches, scans).
    pub many_runs: u32,
    /// Members of the follow graph of the edge section.
    pub members: usize,
    /// Follows each member makes (before follow-backs).
    pub follows_each: usize,
    /// Tree sizes for the tree sections (powers of 10, at least 100).
    pub tree_sizes: &'static [usize],
}

impl Scale {
    /// The workload of BENCHMARKS.md.
    fn full() -> Self {
        Scale {
            users: 1_000,
            orders: 1_000,
            single_runs: 100,
            many_runs: 10,
            members: 2_000,
            follows_each: 10,
            tree_sizes: &[1_000, 10_000],
        }
    }

    /// A small workload with the same request counts where they do not depend on sizes.
    fn quick() -> Self {
        Scale {
            users: 100,
            orders: 100,
            single_runs: 5,
            many_runs: 2,
            members: 200,
            follows_each: 5,
            tree_sizes: &[100],
        }
    }
}

/// A bad command line: says why and exits with status 2.
pub(crate) fn usage(message: &str) -> ! {
    eprintln!("report: {message}\nusage: report [--quick] [--trees 100,1000,..]");
    std::process::exit(2)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let mut scale = if quick { Scale::quick() } else { Scale::full() };
    // `--trees 1000,10000`: other tree sizes (powers of 10).
    if let Some(sizes) = args.iter().position(|a| a == "--trees").and_then(|i| args.get(i + 1)) {
        let sizes: Result<Vec<usize>, _> = sizes.split(',').map(str::parse).collect();
        let sizes = sizes.unwrap_or_else(|e| usage(&format!("--trees: {e}")));
        scale.tree_sizes = Box::leak(sizes.into_boxed_slice());
    }
    let started = Instant::now();

    let mut sections: Vec<Section> =
        vec![repository::section(&scale).await?, edge::section(&scale).await?];
    let (trees, growth) = tree::sections(&scale).await?;
    sections.extend(trees);

    println!(
        "## Request report ({} workload, {})\n",
        if quick { "quick" } else { "full" },
        if local::is_embedded() { "embedded engine" } else { "DDB_ENDPOINT" },
    );
    println!(
        "Requests are counted by the `Db` request counter; \"minimum\" is the fewest requests \
         DynamoDB's API allows for the pattern, for the reason in the numbered note. Items \
         returned are those the call hands back; items read are those the service examined \
         (the ScannedCount of queries and scans, the items of gets). Times are wall-clock \
         means on the embedded engine (HTTP on loopback and SQLite in memory), so they show \
         relative costs, not AWS latencies.\n"
    );
    let mut unexpected = Vec::new();
    for section in &sections {
        println!("{}", section.markdown());
        for row in section.rows.iter().filter(|r| !r.as_expected()) {
            unexpected.push(format!(
                "{}: {} requests per call, expected {}",
                row.pattern,
                row.per_call(),
                row.expected
            ));
        }
    }
    println!("{growth}");
    println!("Total wall time: {:.1} s", started.elapsed().as_secs_f64());
    if !unexpected.is_empty() {
        eprintln!("unexpected request counts:\n{}", unexpected.join("\n"));
        std::process::exit(1);
    }
    Ok(())
}
