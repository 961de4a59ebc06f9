//! The model tool of the GitHub design: the library's command-line tool over the model of
//! `examples/github/model.rs`, in a `main` of three lines (the model is this crate's code, so
//! the binary is too).
//!
//!     cargo run --example model_tool -- markdown        # the access patterns and their requests
//!     cargo run --example model_tool -- mermaid         # the entities as a Mermaid diagram
//!     cargo run --example model_tool -- workbench > github.json   # import in NoSQL Workbench
//!     cargo run --example model_tool -- create-table --endpoint http://localhost:8000
//!     cargo run --example model_tool -- --help        # every command; `create-table --help` ..
//!     cargo run --example model_tool -- completions bash > model_tool.bash
//!
//! Without a command it prints every export in turn and creates the table on the embedded
//! engine (or on `DDB_ENDPOINT`).

#[allow(dead_code)]
#[path = "github/model.rs"]
mod model;

use ddb_model::local;
use ddb_model::tooling::TableModel;
use ddb_model::tooling::cli::Cli;

use crate::model::*;

/// The GitHub table and every entity stored in it.
fn github() -> TableModel {
    TableModel::of::<GitHub>()
        .entity::<User>()
        .entity::<Organization>()
        .entity::<Membership>()
        .entity::<Repo>()
        .entity::<Issue>()
        .entity::<PullRequest>()
        .entity::<IssueComment>()
        .entity::<PrComment>()
        .entity::<Star>()
        .entity::<Reaction>()
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    if std::env::args().len() > 1 {
        return Cli::new(github()).run().await;
    }
    // The demonstration: each command in turn, as `run` would with these arguments.
    let cli = Cli::new(github());
    let endpoint = match local::endpoint() {
        Ok(endpoint) => endpoint,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let table = format!("github-{}", std::process::id());
    let commands: [&[&str]; 5] = [
        &["--help"],
        &["markdown"],
        &["mermaid"],
        &["workbench"],
        &["create-table", "--endpoint", &endpoint, "--table", &table],
    ];
    for args in commands {
        println!("$ model_tool {}", args.join(" "));
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let mut out = Vec::new();
        if let Err(e) = cli.run_with(&args, &mut out).await {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
        let text = String::from_utf8_lossy(&out);
        // The Workbench model is long: its head is enough here.
        let shown: Vec<&str> = text.lines().take(40).collect();
        println!("{}\n", shown.join("\n"));
    }
    std::process::ExitCode::SUCCESS
}
