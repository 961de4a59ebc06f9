//! The tool's command line, declared with clap's derive: one subcommand per command, the
//! options each takes, and the value parsers that check a value before anything is sent.

use clap::builder::NonEmptyStringValueParser;
use clap::{Args, Parser, Subcommand};

/// The command line (after the program name).
#[derive(Debug, Parser)]
#[command(
    about = "The model of a DynamoDB table: exports, table creation and sync, migrations, cost reports",
    disable_help_subcommand = true,
    arg_required_else_help = true
)]
pub(super) struct ToolArgs {
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(super) enum Command {
    /// Prints the model as a Mermaid diagram
    Mermaid,
    /// Prints the access patterns and their requests as a Markdown table
    Markdown,
    /// Prints the model as a NoSQL Workbench data model (JSON)
    Workbench,
    /// Prints the IAM policy that confines a principal to its tenant (JSON)
    IamPolicy(Policy),
    /// Creates the table as declared (idempotent)
    CreateTable(Create),
    /// Compares the table with its declaration and prints the differences; --apply applies them
    Sync(Sync),
    /// Lists the schema migrations, or runs NAME with a progress bar
    Migrate(Run),
    /// Lists the re-keying migrations, or runs NAME with a progress bar
    Rekey(Run),
    /// Lists the rebuilds of derived items, or runs NAME with a progress bar
    Rebuild(Run),
    /// Prints a saved cost report (JSON, a serialized `CostReport`) as a table
    CostReport {
        /// The file holding the report
        file: std::path::PathBuf,
    },
    /// Prints the completion script of the tool for SHELL
    Completions {
        /// The shell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// Where the commands that reach DynamoDB send their requests.
#[derive(Debug, Args)]
pub(super) struct Target {
    /// A DynamoDB-compatible endpoint, such as DynamoDB Local (default: the tool's client)
    #[arg(long, value_name = "URL", value_parser = NonEmptyStringValueParser::new())]
    pub endpoint: Option<String>,
    /// The physical table name (default: the declared name)
    #[arg(long, value_name = "NAME", value_parser = NonEmptyStringValueParser::new())]
    pub table: Option<String>,
}

/// `iam-policy`.
#[derive(Debug, Args)]
pub(super) struct Policy {
    /// The condition key holding the principal's tenant id
    #[arg(long, value_name = "KEY", default_value = "aws:PrincipalTag/tenant",
          value_parser = NonEmptyStringValueParser::new())]
    pub tenant_key: String,
    /// The Region of the ARNs
    #[arg(long, value_name = "REGION", default_value = "*",
          value_parser = NonEmptyStringValueParser::new())]
    pub region: String,
    /// The account of the ARNs
    #[arg(long, value_name = "ID", default_value = "*",
          value_parser = NonEmptyStringValueParser::new())]
    pub account: String,
    /// The physical table name (default: the declared name)
    #[arg(long, value_name = "NAME", value_parser = NonEmptyStringValueParser::new())]
    pub table: Option<String>,
}

/// `create-table`.
#[derive(Debug, Args)]
pub(super) struct Create {
    #[command(flatten)]
    pub target: Target,
    /// The table cannot be deleted until this is turned off
    #[arg(long)]
    pub deletion_protection: bool,
    /// Warm throughput, units per second (at least 12000,4000)
    #[arg(long, value_name = "READ,WRITE", value_parser = pair)]
    pub warm: Option<(i64, i64)>,
    /// On-demand maximum, request units per second (at least 1,1)
    #[arg(long, value_name = "READ,WRITE", value_parser = pair)]
    pub max_on_demand: Option<(i64, i64)>,
}

/// `sync`.
#[derive(Debug, Args)]
pub(super) struct Sync {
    #[command(flatten)]
    pub target: Target,
    /// Apply the differences (without it, only print them)
    #[arg(long)]
    pub apply: bool,
    /// Delete the global secondary indexes the declaration lacks (with --apply)
    #[arg(long, requires = "apply")]
    pub delete_undeclared_indexes: bool,
    /// Print the report as JSON
    #[arg(long)]
    pub json: bool,
}

/// `migrate`, `rekey` and `rebuild`.
#[derive(Debug, Args)]
pub(super) struct Run {
    /// The migration to run (without it, the list)
    pub name: Option<String>,
    #[command(flatten)]
    pub target: Target,
}

/// `READ,WRITE`: two integers (their minimums are checked when the table is created).
fn pair(text: &str) -> Result<(i64, i64), String> {
    let bad = || format!("expected READ,WRITE (two integers), not `{text}`");
    let (read, write) = text.split_once(',').ok_or_else(bad)?;
    let read = read.trim().parse().map_err(|_| bad())?;
    let write = write.trim().parse().map_err(|_| bad())?;
    Ok((read, write))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        ToolArgs::command().debug_assert();
    }

    #[test]
    fn pairs() {
        assert_eq!(pair("12000, 4000"), Ok((12000, 4000)));
        for bad in ["12000", "a,b", "1,", ",1", "1,2,3"] {
            assert!(pair(bad).is_err(), "{bad}");
        }
    }
}
