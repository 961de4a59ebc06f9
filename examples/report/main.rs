//! The performance report: runs a fixed workload on the embedded engine and prints, per
//! access pattern, the requests sent (from the request counter), the items read and the wall
//! time, next to the fewest requests the pattern can take and why.
//!
//!     cargo run --release --example report            # the workload of BENCHMARKS.md
//!     cargo run --example report -- --quick           # a small workload (CI)
//!
//! Exits with an error when a pattern sends a different number of requests than expected:
//! every row states its minimum, and the few rows that exceed it say why.
//!
//! # Adding rows
//!
//! Each module here contributes one `Section` (one markdown table, `measure.rs`) from an
//! `async fn section(scale: &Scale) -> Result<Section, Error>`, listed in `main` below. To
//! report trees or graph edges when they land, add `tree.rs` / `edge.rs` next to
//! `repository.rs`, each with its own models and table (from `local::isolated_db`), and one
//! line in `main`:
//!
//! - trees: one section per strategy and size (`Scale::tree_sizes`, 1k and 10k nodes),
//!   rows for insert, get, children, descendants, depth range, ancestors, move and delete of
//!   a subtree, each followed by the naive approach of the seed documents as its own row
//!   (children by filtering the whole subtree, ancestors by one get per level, move by one
//!   put and one delete per node), so the table shows how each cost grows with the tree;
//! - edges: link/unlink, outgoing/incoming, counts, mutual, neighbourhood and shortest path.
//!
//! A row is `measure(db, runs, |i| async move { ..; Ok(items_read) })` followed by
//! `.row(pattern, call, min, why)`, or `.row_over(pattern, call, min, expected, why)` for a
//! pattern that deliberately sends more than the minimum.
//!
//! Runs against the embedded DynamoDB-compatible engine; set `DDB_ENDPOINT` to use another
//! endpoint (AWS's DynamoDB Local, for example).

mod edge;
mod measure;
mod repository;

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
    /// Tree sizes for the tree sections (when trees land).
    #[allow(dead_code)]
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

#[tokio::main]
async fn main() -> Result<(), Error> {
    let quick = std::env::args().skip(1).any(|a| a == "--quick");
    let scale = if quick { Scale::quick() } else { Scale::full() };
    let started = Instant::now();

    let sections: Vec<Section> = vec![
        repository::section(&scale).await?,
        // tree::section(&scale).await?,   (when trees land)
        edge::section(&scale).await?,
    ];

    println!(
        "## Request report ({} workload, {})\n",
        if quick { "quick" } else { "full" },
        if local::is_embedded() { "embedded engine" } else { "DDB_ENDPOINT" },
    );
    println!(
        "Requests are counted by the `Db` request counter; \"minimum\" is the fewest requests \
         DynamoDB's API allows for the pattern, for the reason in the numbered note. Items are \
         those returned to the caller. Times are wall-clock means on the embedded engine \
         (HTTP on loopback and SQLite in memory), so they show relative costs, not AWS \
         latencies.\n"
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
    println!("Total wall time: {:.1} s", started.elapsed().as_secs_f64());
    if !unexpected.is_empty() {
        eprintln!("unexpected request counts:\n{}", unexpected.join("\n"));
        std::process::exit(1);
    }
    Ok(())
}
