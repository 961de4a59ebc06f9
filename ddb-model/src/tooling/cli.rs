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
//!     // `tool migrate users-v2 --endpoint http://localhost:8000`
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
//! | `migrate [NAME] [--endpoint URL] [--table NAME]` | lists the migrations, or runs one with a progress bar |
//!
//! Without `--endpoint`, the commands that reach DynamoDB use the client given to
//! [`Cli::client`] (built from the user's AWS configuration); `--table` names the physical
//! table (the declared name by default).
//!
//! Migrations are an extension point: a [`Migration`] registered with [`Cli::migration`]
//! reports its progress, which the tool draws as a bar. [`SchemaMigration`] is the one the
//! library ships: it upgrades an entity's items to its schema version ([`Db::migrate`]).

use std::io::Write;
use std::process::ExitCode;

use aws_sdk_dynamodb::Client;

use super::workbench::workbench_date;
use super::{PolicyTarget, TableModel};
use crate::db::Db;
use crate::error::Error;
use crate::model::Entity;
use crate::ops::BoxFuture;

/// How far a migration got: items done, out of `total` when known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MigrationProgress {
    /// Items done so far.
    pub done: u64,
    /// Items in all, when the migration knows.
    pub total: Option<u64>,
}

/// A migration the tool can run (`migrate NAME`): the extension point for rewrites of a
/// table's items. The library ships [`SchemaMigration`].
pub trait Migration: Send + Sync {
    /// The name the command line uses.
    fn name(&self) -> &str;
    /// One line on what it does, for the list.
    fn description(&self) -> &str {
        ""
    }
    /// Runs it on `table` with `client`, calling `progress` as it goes.
    fn run<'a>(
        &'a self,
        client: Client,
        table: &'a str,
        progress: &'a mut (dyn FnMut(MigrationProgress) + Send),
    ) -> BoxFuture<'a, Result<(), Error>>;
}

/// The [`Migration`] of an entity's schema version: runs [`Db::migrate`] on the table the
/// tool names, the bar showing the items scanned out of the table's item count (DynamoDB's
/// estimate, from `DescribeTable`; the count alone when it has none). Items that cannot be
/// upgraded do not stop the run; at its end the first of them is the command's error
/// ([`Error::SchemaUpgrade`] naming the key), and running it again retries them. Example:
/// see the [module](crate::tooling::cli).
pub struct SchemaMigration<E> {
    name: String,
    description: String,
    segments: u32,
    _entity: std::marker::PhantomData<fn() -> E>,
}

impl<E: Entity> SchemaMigration<E> {
    /// The migration of `E` to its schema version, run as `migrate NAME`.
    pub fn new(name: impl Into<String>) -> SchemaMigration<E> {
        let version = E::SCHEMA.map_or(crate::model::UNVERSIONED, |s| s.version);
        SchemaMigration {
            name: name.into(),
            description: format!("upgrades `{}` items to schema version {version}", E::NAME),
            segments: crate::ops::DEFAULT_MIGRATE_SEGMENTS,
            _entity: std::marker::PhantomData,
        }
    }

    /// Scan segments (see [`Migrate::segments`](crate::ops::Migrate::segments)).
    #[must_use]
    pub fn segments(mut self, n: u32) -> SchemaMigration<E> {
        self.segments = n;
        self
    }
}

impl<E: Entity> Migration for SchemaMigration<E> {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn run<'a>(
        &'a self,
        client: Client,
        table: &'a str,
        progress: &'a mut (dyn FnMut(MigrationProgress) + Send),
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            let db = Db::<E::Table>::with_table_name(client, table);
            let total = db.item_count_estimate().await?.filter(|n| *n > 0);
            let report = db
                .migrate::<E>()
                .segments(self.segments)
                .on_progress(|p| progress(MigrationProgress { done: p.counts.scanned, total }))
                .await?;
            match report.failures.into_iter().next() {
                Some(first) => Err(first.error),
                None => Ok(()),
            }
        })
    }
}

/// What went wrong with a command.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// The command line is wrong; the text says how, and the usage follows.
    #[error("{0}\n\n{USAGE}")]
    Usage(String),
    /// DynamoDB or the library refused.
    #[error(transparent)]
    Ddb(#[from] Error),
    /// Writing the output failed.
    #[error("cannot write the output: {0}")]
    Io(#[from] std::io::Error),
}

/// The usage text.
pub const USAGE: &str = "usage: <tool> <command> [options]
commands:
  mermaid                       the model as a Mermaid diagram
  markdown                      the access patterns as a Markdown table
  workbench                     the model as a NoSQL Workbench data model (JSON)
  iam-policy                    the IAM policy confining a principal to its tenant (JSON)
  create-table                  create the table (idempotent)
  migrate [NAME]                list the migrations, or run NAME with a progress bar
options (create-table, migrate):
  --endpoint URL                a DynamoDB-compatible endpoint (DynamoDB Local)
  --table NAME                  the physical table name (default: the declared name)
options (iam-policy):
  --tenant-key KEY              the condition key holding the tenant id
                                (default: aws:PrincipalTag/tenant)
  --region REGION, --account ID the ARNs' Region and account (default: *)
  --table NAME                  the physical table name (default: the declared name)
options (create-table):
  --deletion-protection         the table cannot be deleted until this is turned off
  --warm READ,WRITE             warm throughput, units per second (at least 12000,4000)
  --max-on-demand READ,WRITE    on-demand maximum, request units per second (at least 1,1)";

/// The tool: a model, optionally a client and migrations.
pub struct Cli {
    model: TableModel,
    client: Option<Client>,
    migrations: Vec<Box<dyn Migration>>,
}

impl Cli {
    /// A tool over `model`.
    pub fn new(model: TableModel) -> Cli {
        Cli { model, client: None, migrations: Vec::new() }
    }

    /// The client for commands run without `--endpoint` (e.g. from `aws-config`).
    #[must_use]
    pub fn client(mut self, client: Client) -> Cli {
        self.client = Some(client);
        self
    }

    /// Registers a migration for `migrate NAME`.
    #[must_use]
    pub fn migration(mut self, migration: impl Migration + 'static) -> Cli {
        self.migrations.push(Box::new(migration));
        self
    }

    /// Runs the command of the process's arguments, printing to stdout (progress to
    /// stderr); the exit code is 0 on success, 2 for a wrong command line, 1 otherwise.
    pub async fn run(self) -> ExitCode {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let stdout = std::io::stdout();
        match self.run_with(&args, &mut stdout.lock()).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                ExitCode::from(if matches!(e, CliError::Usage(_)) { 2 } else { 1 })
            }
        }
    }

    /// Runs the command `args` (without the program name), writing its output to `out`.
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
    /// assert!(matches!(cli.run_with(&["drop".into()], &mut out).await, Err(CliError::Usage(_))));
    /// # Ok(()) }
    /// ```
    pub async fn run_with(&self, args: &[String], out: &mut dyn Write) -> Result<(), CliError> {
        let (command, rest) = match args.split_first() {
            Some((c, rest)) => (c.as_str(), rest),
            None => return Err(CliError::Usage("no command".into())),
        };
        let options = Options::parse(rest)?;
        match command {
            "mermaid" | "markdown" | "workbench" if !options.is_empty() => {
                Err(CliError::Usage(format!("`{command}` takes no options")))
            }
            "mermaid" => Ok(write!(out, "{}", self.model.mermaid())?),
            "markdown" => Ok(write!(out, "{}", self.model.markdown())?),
            "workbench" => Ok(writeln!(out, "{}", self.model.workbench_json(&workbench_date()))?),
            "iam-policy" => self.iam_policy(&options, out),
            _ if options.has_policy_options() => {
                Err(CliError::Usage(format!("`{command}` takes no IAM policy options")))
            }
            "create-table" => {
                if options.name.is_some() {
                    return Err(CliError::Usage("`create-table` takes no name".into()));
                }
                let table = options.table.as_deref().unwrap_or(self.model.name);
                let table_options = options.table_options()?;
                let client = self.client_for(&options)?;
                self.model.create_table_with(client, table, table_options).await?;
                Ok(writeln!(out, "table `{table}` is active")?)
            }
            "migrate" if options.has_table_options() => Err(CliError::Usage(
                "`migrate` takes no table options (they are for `create-table`)".into(),
            )),
            "migrate" => self.migrate(&options, out).await,
            "help" | "--help" | "-h" => Ok(writeln!(out, "{USAGE}")?),
            other => Err(CliError::Usage(format!("unknown command `{other}`"))),
        }
    }

    fn client_for(&self, options: &Options) -> Result<Client, CliError> {
        match (&options.endpoint, &self.client) {
            (Some(endpoint), _) => Ok(crate::db::endpoint_client(endpoint)),
            (None, Some(client)) => Ok(client.clone()),
            (None, None) => Err(CliError::Usage(
                "no DynamoDB to talk to: pass --endpoint, or give the tool a client (Cli::client)"
                    .into(),
            )),
        }
    }

    fn iam_policy(&self, options: &Options, out: &mut dyn Write) -> Result<(), CliError> {
        if options.endpoint.is_some() || options.name.is_some() || options.has_table_options() {
            return Err(CliError::Usage(
                "`iam-policy` takes --tenant-key, --region, --account and --table only".into(),
            ));
        }
        let mut target = PolicyTarget::new(options.table.as_deref().unwrap_or(self.model.name));
        for (value, slot) in [
            (&options.tenant_key, &mut target.tenant_key),
            (&options.region, &mut target.region),
            (&options.account, &mut target.account),
        ] {
            if let Some(value) = value {
                value.clone_into(slot);
            }
        }
        let Some(policy) = self.model.tenant_policy_json(&target) else {
            return Err(CliError::Usage(format!(
                "table `{}` has no tenants: declare them with #[table(tenant = \"ORG#\")]",
                self.model.name
            )));
        };
        Ok(writeln!(out, "{policy}")?)
    }

    async fn migrate(&self, options: &Options, out: &mut dyn Write) -> Result<(), CliError> {
        let Some(name) = &options.name else {
            if self.migrations.is_empty() {
                writeln!(out, "no migrations registered")?;
            }
            for m in &self.migrations {
                writeln!(out, "{}\t{}", m.name(), m.description())?;
            }
            return Ok(());
        };
        let Some(migration) = self.migrations.iter().find(|m| m.name() == name) else {
            return Err(CliError::Usage(format!("no migration named `{name}`")));
        };
        let client = self.client_for(options)?;
        let table = options.table.as_deref().unwrap_or(self.model.name);
        let mut last = None;
        let mut draw = |p: MigrationProgress| {
            eprint!("\r{name} {}", progress_bar(p, 30));
            last = Some(p);
        };
        migration.run(client, table, &mut draw).await?;
        eprintln!();
        let done = last.map_or(0, |p| p.done);
        Ok(writeln!(out, "migration `{name}` finished: {done} items")?)
    }
}

/// The options after the command.
#[derive(Debug, Default)]
struct Options {
    endpoint: Option<String>,
    table: Option<String>,
    name: Option<String>,
    deletion_protection: bool,
    warm: Option<String>,
    max_on_demand: Option<String>,
    tenant_key: Option<String>,
    region: Option<String>,
    account: Option<String>,
}

impl Options {
    fn parse(args: &[String]) -> Result<Options, CliError> {
        let mut options = Options::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = |flag: &str| {
                args.next()
                    .filter(|v| !v.is_empty())
                    .cloned()
                    .ok_or_else(|| CliError::Usage(format!("{flag} needs a value")))
            };
            let slot = match arg.as_str() {
                "--endpoint" => &mut options.endpoint,
                "--table" => &mut options.table,
                "--warm" => &mut options.warm,
                "--max-on-demand" => &mut options.max_on_demand,
                "--tenant-key" => &mut options.tenant_key,
                "--region" => &mut options.region,
                "--account" => &mut options.account,
                "--deletion-protection" => {
                    if std::mem::replace(&mut options.deletion_protection, true) {
                        return Err(CliError::Usage(format!("{arg} given twice")));
                    }
                    continue;
                }
                flag if flag.starts_with("--") => {
                    return Err(CliError::Usage(format!("unknown option `{flag}`")));
                }
                _ => {
                    if options.name.replace(arg.clone()).is_some() {
                        return Err(CliError::Usage(format!("unexpected argument `{arg}`")));
                    }
                    continue;
                }
            };
            if slot.replace(value(arg)?).is_some() {
                return Err(CliError::Usage(format!("{arg} given twice")));
            }
        }
        Ok(options)
    }

    fn is_empty(&self) -> bool {
        self.endpoint.is_none()
            && self.table.is_none()
            && self.name.is_none()
            && !self.has_table_options()
            && !self.has_policy_options()
    }

    fn has_policy_options(&self) -> bool {
        self.tenant_key.is_some() || self.region.is_some() || self.account.is_some()
    }

    fn has_table_options(&self) -> bool {
        self.deletion_protection || self.warm.is_some() || self.max_on_demand.is_some()
    }

    /// The table options of the flags (checked against the service's minimums when the
    /// table is created).
    fn table_options(&self) -> Result<crate::ops::TableOptions, CliError> {
        let pair = |flag: &str, text: &Option<String>| -> Result<Option<(i64, i64)>, CliError> {
            let Some(text) = text else { return Ok(None) };
            let bad =
                || CliError::Usage(format!("{flag} takes READ,WRITE (two integers), not `{text}`"));
            let (read, write) = text.split_once(',').ok_or_else(bad)?;
            let read = read.trim().parse().map_err(|_| bad())?;
            let write = write.trim().parse().map_err(|_| bad())?;
            Ok(Some((read, write)))
        };
        Ok(crate::ops::TableOptions {
            deletion_protection: self.deletion_protection,
            warm_throughput: pair("--warm", &self.warm)?
                .map(|(r, w)| crate::ops::WarmThroughput::new(r, w)),
            max_on_demand: pair("--max-on-demand", &self.max_on_demand)?
                .map(|(r, w)| crate::ops::OnDemandMax::new(r, w)),
            indexes: Vec::new(),
        })
    }
}

/// A text progress bar `width` characters wide: `[#######.......] 50/100 50%`, or the count
/// alone when the total is unknown.
///
/// ```
/// use ddb_model::tooling::cli::{MigrationProgress, progress_bar};
/// assert_eq!(progress_bar(MigrationProgress { done: 5, total: Some(10) }, 10), "[#####.....] 5/10 50%");
/// assert_eq!(progress_bar(MigrationProgress { done: 7, total: None }, 10), "7 items");
/// ```
pub fn progress_bar(progress: MigrationProgress, width: usize) -> String {
    match progress.total {
        Some(total) if total > 0 => {
            let done = progress.done.min(total);
            let filled = (done as u128 * width as u128 / total as u128) as usize;
            let percent = done as u128 * 100 / total as u128;
            format!(
                "[{}{}] {}/{total} {percent}%",
                "#".repeat(filled),
                ".".repeat(width - filled),
                progress.done
            )
        }
        _ => format!("{} items", progress.done),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, CliError> {
        Options::parse(&args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn options() {
        let o = parse(&["--endpoint", "http://x", "--table", "t", "m1"]).ok();
        assert_eq!(o.as_ref().and_then(|o| o.endpoint.as_deref()), Some("http://x"));
        assert_eq!(o.as_ref().and_then(|o| o.name.as_deref()), Some("m1"));
        for bad in [
            &["--endpoint"][..],
            &["--table", ""],
            &["--x"],
            &["a", "b"],
            &["--table", "a", "--table", "b"],
        ] {
            assert!(matches!(parse(bad), Err(CliError::Usage(_))), "{bad:?}");
        }
    }

    #[test]
    fn bars() {
        let p = |done, total| progress_bar(MigrationProgress { done, total }, 4);
        assert_eq!(p(0, Some(3)), "[....] 0/3 0%");
        assert_eq!(p(3, Some(3)), "[####] 3/3 100%");
        assert_eq!(p(9, Some(3)), "[####] 9/3 100%");
        assert_eq!(p(1, Some(0)), "1 items");
    }
}
