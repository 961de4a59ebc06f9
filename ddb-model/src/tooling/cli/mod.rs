//! A command-line tool over a [`TableModel`], for a three-line `main` in the user's crate
//! (the model is the user's code, so the binary is theirs):
//!
//! ```no_run
//! # use ddb_model::prelude::*;
//! # use ddb_model::tooling::TableModel;
//! # use ddb_model::{DefaultTable, Item, error::UpgradeError};
//! # use serde::{Deserialize, Serialize};
//! # #[derive(Entity, Serialize, Deserialize)]
//! # #[entity(pk = "USER#<id>", sk = "PROFILE", schema = 2, upgrade = upgrade_user)]
//! # struct User { id: String }
//! # fn upgrade_user(_: u32, _: &mut Item) -> Result<(), UpgradeError> { Ok(()) }
//! use ddb_model::tooling::cli::{Cli, SchemaMigration};
//!
//! #[tokio::main]
//! async fn main() -> std::process::ExitCode {
//!     let model = TableModel::of::<DefaultTable>().entity::<User>();
//!     // `tool migrate users-v2 --endpoint http://localhost:8000`, `tool --help`
//!     Cli::new(model).migration(SchemaMigration::<User>::new("users-v2").segments(8)).run().await
//! }
//! ```
//!
//! | command | does |
//! | --- | --- |
//! | `mermaid` | prints the Mermaid diagram |
//! | `markdown` | prints the access-pattern table |
//! | `workbench` | prints the NoSQL Workbench data model |
//! | `iam-policy [--tenant-key KEY] [--region R] [--account ID] [--table NAME]` | prints the IAM policy that confines a principal to its tenant ([`TableModel::tenant_policy`]) |
//! | `create-table [--endpoint URL] [--table NAME] [--deletion-protection] [--warm R,W] [--max-on-demand R,W]` | creates the table (idempotent), with those table options |
//! | `sync [--apply] [--delete-undeclared-indexes] [--json] [--endpoint URL] [--table NAME]` | compares the table with the model and the [`Cli::table_options`] ([`Db::sync_table`](crate::Db::sync_table)), prints the [`TableDiff`](crate::ops::TableDiff); `--apply` applies it |
//! | `migrate [NAME] [--endpoint URL] [--table NAME]` | lists the schema migrations, or runs one with a progress bar |
//! | `rekey [NAME] ..`, `rebuild [NAME] ..` | the same for re-keying migrations and rebuilds of derived items |
//! | `cost-report FILE` | prints a saved [`CostReport`](crate::stats::CostReport) (its JSON) as a table |
//! | `completions SHELL` | prints the completion script for `bash`, `zsh`, `fish`, `elvish` or `powershell` |
//!
//! The command line is parsed by [clap](https://docs.rs/clap): `--help` on the tool and on
//! each command, errors for bad flags with the usage, exit code 2 for a wrong command line
//! (0 for `--help`), 1 when DynamoDB or the library refuses. Without `--endpoint`, the
//! commands that reach DynamoDB use the client given to [`Cli::client`] (built from the
//! user's AWS configuration); `--table` names the physical table (the declared name by
//! default).
//!
//! Migrations are an extension point: a [`Migration`] registered with [`Cli::migration`]
//! reports its progress, which the tool draws as an [indicatif](https://docs.rs/indicatif)
//! bar on stderr (none when stderr is not a terminal); its [`kind`](Migration::kind) says
//! which command lists and runs it. [`SchemaMigration`] is the one the library ships: it
//! upgrades an entity's items to its schema version ([`Db::migrate`](crate::Db::migrate)).

mod args;
mod migration;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use aws_sdk_dynamodb::Client;
use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches};

use self::args::{Command, Create, Policy, Run, Sync, Target, ToolArgs};
use super::workbench::workbench_date;
use super::{PolicyTarget, TableModel};
use crate::error::Error;

pub use migration::{Migration, MigrationKind, MigrationProgress, SchemaMigration};

/// The program name [`Cli::run_with`] writes in usage, help and completion scripts
/// ([`Cli::run`] takes the name the program was started with).
pub const TOOL_NAME: &str = "model-tool";

/// What went wrong with a command.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// The command line is wrong: clap's error, which prints what is wrong and the usage
    /// (`clap::Error::kind` says what kind of mistake; its exit code is 2).
    #[error("{0}")]
    Usage(clap::Error),
    /// DynamoDB or the library refused.
    #[error(transparent)]
    Ddb(#[from] Error),
    /// Writing the output failed.
    #[error("cannot write the output: {0}")]
    Io(#[from] std::io::Error),
    /// `cost-report FILE`: the file cannot be read.
    #[error("cannot read the cost report {}: {source}", path.display())]
    ReadReport {
        /// The file named.
        path: std::path::PathBuf,
        /// Why it cannot be read.
        source: std::io::Error,
    },
    /// `cost-report FILE`: the file is not a cost report (JSON of a
    /// [`CostReport`](crate::stats::CostReport)).
    #[error("{} is not a cost report: {source}", path.display())]
    BadReport {
        /// The file named.
        path: std::path::PathBuf,
        /// What is wrong with its JSON.
        source: serde_json::Error,
    },
}

/// The tool: a model, optionally a client and migrations.
pub struct Cli {
    model: TableModel,
    client: Option<Client>,
    migrations: Vec<Box<dyn Migration>>,
    options: crate::ops::TableOptions,
}

impl Cli {
    /// A tool over `model`.
    pub fn new(model: TableModel) -> Cli {
        Cli { model, client: None, migrations: Vec::new(), options: Default::default() }
    }

    /// The table's declared settings: what `sync` compares and applies, and what
    /// `create-table` starts from (its flags override them).
    #[must_use]
    pub fn table_options(mut self, options: crate::ops::TableOptions) -> Cli {
        self.options = options;
        self
    }

    /// The client for commands run without `--endpoint` (e.g. from `aws-config`).
    #[must_use]
    pub fn client(mut self, client: Client) -> Cli {
        self.client = Some(client);
        self
    }

    /// Registers a migration, run by the command of its [`kind`](Migration::kind)
    /// (`migrate NAME` for a [`SchemaMigration`]).
    #[must_use]
    pub fn migration(mut self, migration: impl Migration + 'static) -> Cli {
        self.migrations.push(Box::new(migration));
        self
    }

    /// Runs the command of the process's arguments, printing to stdout (progress to
    /// stderr); the exit code is 0 on success (and for `--help`), 2 for a wrong command line
    /// (clap's error, printed with the usage), 1 otherwise.
    pub async fn run(self) -> ExitCode {
        let mut args = std::env::args_os();
        let bin = args
            .next()
            .as_deref()
            .and_then(|p| std::path::Path::new(p).file_stem())
            .map_or_else(|| TOOL_NAME.to_owned(), |s| s.to_string_lossy().into_owned());
        let parsed = match self.parse(&bin, args) {
            Ok(parsed) => parsed,
            Err(e) => {
                // Help goes to stdout, mistakes to stderr, styled when it is a terminal.
                let _ = e.print();
                return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
            }
        };
        let stdout = std::io::stdout();
        match self.execute(&bin, parsed, &mut stdout.lock()).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(CliError::Usage(e)) => {
                let _ = e.print();
                ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        }
    }

    /// Runs the command `args` (without the program name), writing its output to `out`
    /// (the help too, for `--help`; the program is called [`TOOL_NAME`]).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::tooling::cli::CliError> {
    /// use ddb_model::tooling::{TableModel, cli::{Cli, CliError}};
    /// # #[derive(ddb_model::Entity, serde::Serialize, serde::Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    ///
    /// let cli = Cli::new(TableModel::of::<ddb_model::DefaultTable>().entity::<User>());
    /// let mut out = Vec::new();
    /// cli.run_with(&["markdown".into()], &mut out).await?;
    /// assert!(String::from_utf8_lossy(&out).contains("`User::get(&db, id)`"));
    /// let Err(CliError::Usage(e)) = cli.run_with(&["drop".into()], &mut out).await else { panic!() };
    /// assert_eq!(e.kind(), clap::error::ErrorKind::InvalidSubcommand);
    /// # Ok(()) }
    /// ```
    pub async fn run_with(&self, args: &[String], out: &mut dyn Write) -> Result<(), CliError> {
        match self.parse(TOOL_NAME, args) {
            Ok(parsed) => self.execute(TOOL_NAME, parsed, out).await,
            Err(e) if e.use_stderr() => Err(CliError::Usage(e)),
            Err(e) => Ok(write!(out, "{}", e.render())?),
        }
    }

    /// The clap command of the tool, named `bin`, with its subcommands' names set.
    fn command(&self, bin: &str) -> clap::Command {
        let mut command = ToolArgs::command().name(bin.to_owned()).bin_name(bin.to_owned());
        command.build();
        command
    }

    fn parse<I, T>(&self, bin: &str, args: I) -> Result<ToolArgs, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let argv = std::iter::once(OsString::from(bin)).chain(args.into_iter().map(Into::into));
        let matches = self.command(bin).try_get_matches_from(argv)?;
        ToolArgs::from_arg_matches(&matches)
    }

    /// A mistake found after parsing, reported as clap reports its own (with the usage of
    /// `subcommand`).
    fn usage(&self, bin: &str, subcommand: &str, kind: ErrorKind, message: String) -> CliError {
        let mut command = self.command(bin);
        let error = match command.find_subcommand_mut(subcommand) {
            Some(sub) => sub.error(kind, message),
            None => command.error(kind, message),
        };
        CliError::Usage(error)
    }

    async fn execute(
        &self,
        bin: &str,
        args: ToolArgs,
        out: &mut dyn Write,
    ) -> Result<(), CliError> {
        match args.command {
            Command::Mermaid => Ok(write!(out, "{}", self.model.mermaid())?),
            Command::Markdown => Ok(write!(out, "{}", self.model.markdown())?),
            Command::Workbench => {
                Ok(writeln!(out, "{}", self.model.workbench_json(&workbench_date()))?)
            }
            Command::IamPolicy(policy) => self.iam_policy(bin, policy, out),
            Command::CreateTable(create) => self.create_table(bin, create, out).await,
            Command::Sync(sync) => self.sync(bin, sync, out).await,
            Command::Migrate(run) => self.migrate(bin, MigrationKind::Schema, run, out).await,
            Command::Rekey(run) => self.migrate(bin, MigrationKind::Rekey, run, out).await,
            Command::Rebuild(run) => self.migrate(bin, MigrationKind::Rebuild, run, out).await,
            Command::CostReport { file } => {
                let text = std::fs::read_to_string(&file)
                    .map_err(|source| CliError::ReadReport { path: file.clone(), source })?;
                let report: crate::stats::CostReport = serde_json::from_str(&text)
                    .map_err(|source| CliError::BadReport { path: file, source })?;
                Ok(write!(out, "{report}")?)
            }
            Command::Completions { shell } => {
                clap_complete::generate(shell, &mut self.command(bin), bin, out);
                Ok(())
            }
        }
    }

    fn client_for(&self, bin: &str, subcommand: &str, target: &Target) -> Result<Client, CliError> {
        match (&target.endpoint, &self.client) {
            (Some(endpoint), _) => Ok(crate::db::endpoint_client(endpoint)),
            (None, Some(client)) => Ok(client.clone()),
            (None, None) => Err(self.usage(
                bin,
                subcommand,
                ErrorKind::MissingRequiredArgument,
                "no DynamoDB to talk to: pass --endpoint, or give the tool a client (Cli::client)"
                    .into(),
            )),
        }
    }

    fn iam_policy(&self, bin: &str, policy: Policy, out: &mut dyn Write) -> Result<(), CliError> {
        let mut target = PolicyTarget::new(policy.table.as_deref().unwrap_or(self.model.name));
        target.tenant_key = policy.tenant_key;
        target.region = policy.region;
        target.account = policy.account;
        let Some(json) = self.model.tenant_policy_json(&target) else {
            return Err(self.usage(
                bin,
                "iam-policy",
                ErrorKind::InvalidSubcommand,
                format!(
                    "table `{}` has no tenants: declare them with #[table(tenant = \"ORG#\")]",
                    self.model.name
                ),
            ));
        };
        Ok(writeln!(out, "{json}")?)
    }

    async fn create_table(
        &self,
        bin: &str,
        c: Create,
        out: &mut dyn Write,
    ) -> Result<(), CliError> {
        let table = c.target.table.as_deref().unwrap_or(self.model.name);
        let mut options = self.options.clone();
        if c.deletion_protection {
            options.deletion_protection = Some(true);
        }
        if let Some((r, w)) = c.warm {
            options.warm_throughput = Some(crate::ops::WarmThroughput::new(r, w));
        }
        if let Some((r, w)) = c.max_on_demand {
            options.max_on_demand = Some(crate::ops::OnDemandMax::new(r, w));
        }
        let client = self.client_for(bin, "create-table", &c.target)?;
        self.model.create_table_with(client, table, options).await?;
        Ok(writeln!(out, "table `{table}` is active")?)
    }

    /// `sync`: the report, after applying it with `--apply`.
    async fn sync(&self, bin: &str, s: Sync, out: &mut dyn Write) -> Result<(), CliError> {
        let table = s.target.table.as_deref().unwrap_or(self.model.name);
        let client = self.client_for(bin, "sync", &s.target)?;
        let request = super::SyncRequest {
            options: self.options.clone(),
            apply: s.apply,
            delete_undeclared_indexes: s.delete_undeclared_indexes,
        };
        let diff = self.model.sync_table(client, table, request).await?;
        if s.json {
            return Ok(writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&diff).unwrap_or_default()
            )?);
        }
        write!(out, "{diff}")?;
        if s.apply && !diff.is_empty() {
            writeln!(out, "applied")?;
        }
        Ok(())
    }

    /// `migrate`, `rekey` or `rebuild`: the list of the migrations of `kind`, or a run of one.
    async fn migrate(
        &self,
        bin: &str,
        kind: MigrationKind,
        run: Run,
        out: &mut dyn Write,
    ) -> Result<(), CliError> {
        let mut of_kind = self.migrations.iter().filter(|m| m.kind() == kind).peekable();
        let Some(name) = &run.name else {
            if of_kind.peek().is_none() {
                writeln!(out, "no `{}` migrations registered", kind.command())?;
            }
            for m in of_kind {
                writeln!(out, "{}\t{}", m.name(), m.description())?;
            }
            return Ok(());
        };
        let Some(migration) = of_kind.find(|m| m.name() == name) else {
            let known: Vec<&str> =
                self.migrations.iter().filter(|m| m.kind() == kind).map(|m| m.name()).collect();
            let known = if known.is_empty() { "none".to_owned() } else { known.join(", ") };
            return Err(self.usage(
                bin,
                kind.command(),
                ErrorKind::InvalidValue,
                format!("no `{}` migration named `{name}` (registered: {known})", kind.command()),
            ));
        };
        let client = self.client_for(bin, kind.command(), &run.target)?;
        let table = run.target.table.as_deref().unwrap_or(self.model.name);
        let bar = migration::bar(name);
        let mut last = None;
        let mut draw = |p: MigrationProgress| {
            migration::advance(&bar, p);
            last = Some(p);
        };
        let result = migration.run(client, table, &mut draw).await;
        bar.finish_and_clear();
        result?;
        let done = last.map_or(0, |p| p.done);
        Ok(writeln!(out, "migration `{name}` finished: {done} items")?)
    }
}
