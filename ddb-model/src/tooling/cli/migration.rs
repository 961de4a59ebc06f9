//! The tool's extension point: [`Migration`], its [`MigrationKind`] (which subcommand lists
//! and runs it), the progress it reports, and [`SchemaMigration`], the one the library ships.

use aws_sdk_dynamodb::Client;

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

/// What a [`Migration`] does to the table, and so the subcommand that lists and runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MigrationKind {
    /// Rewrites items to a new schema version (`migrate NAME`); [`SchemaMigration`].
    Schema,
    /// Moves items to a new key layout (`rekey NAME`).
    Rekey,
    /// Rebuilds derived items, such as aggregates, from a scan (`rebuild NAME`).
    Rebuild,
}

impl MigrationKind {
    /// The subcommand that lists and runs migrations of this kind.
    pub fn command(self) -> &'static str {
        match self {
            MigrationKind::Schema => "migrate",
            MigrationKind::Rekey => "rekey",
            MigrationKind::Rebuild => "rebuild",
        }
    }
}

/// A migration the tool can run (`migrate NAME`, `rekey NAME` or `rebuild NAME`, after its
/// [`kind`](Migration::kind)): the extension point for rewrites of a table's items. The
/// library ships [`SchemaMigration`].
pub trait Migration: Send + Sync {
    /// The name the command line uses.
    fn name(&self) -> &str;
    /// One line on what it does, for the list.
    fn description(&self) -> &str {
        ""
    }
    /// Its kind: the subcommand that lists and runs it ([`MigrationKind::Schema`], `migrate`,
    /// unless the migration says otherwise).
    fn kind(&self) -> MigrationKind {
        MigrationKind::Schema
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

/// The tool's progress bar for a migration named `name`, drawn on stderr: a bar with
/// `done/total` and an estimate of the time left once the total is known, a running count
/// before. Hidden when stderr is not a terminal (a log, a pipe, CI).
pub(super) fn bar(name: &str) -> indicatif::ProgressBar {
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    bar.set_prefix(name.to_owned());
    bar.set_style(count_style());
    bar
}

/// Moves `bar` to `p`, switching to the bar style when the total becomes known.
pub(super) fn advance(bar: &indicatif::ProgressBar, p: MigrationProgress) {
    if let Some(total) = p.total
        && bar.length() != Some(total)
    {
        bar.set_length(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} {percent}% (eta {eta})",
            )
            .unwrap_or_else(|_| count_style())
            .progress_chars("#>."),
        );
    }
    bar.set_position(p.done);
}

fn count_style() -> indicatif::ProgressStyle {
    indicatif::ProgressStyle::with_template("{prefix} {spinner} {pos} items ({per_sec})")
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner())
}
