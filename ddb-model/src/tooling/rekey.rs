//! [`RekeyMigration`]: a re-key step ([`Db::rekey`]) as a [`Migration`] the model tool runs.

use aws_sdk_dynamodb::Client;

use super::cli::{Migration, MigrationKind, MigrationProgress};
use crate::db::Db;
use crate::error::Error;
use crate::model::Entity;
use crate::ops::{BoxFuture, DEFAULT_REKEY_SEGMENTS, RekeyStep};

/// One step of the re-key of `E` (declared with `#[entity(rekey(pk = ..))]`): the copy, or
/// with [`cleanup`](RekeyMigration::cleanup) the removal of the old copies, run by
/// [`Db::rekey`] on the table the tool names, the bar showing the items scanned out of the
/// table's item count (DynamoDB's estimate). Run each step in the phase the
/// re-keying chapter of the guide (`docs/rekeying.md`) says. An interrupted step is run again from the start:
/// the items done are left as they are ([`already_new`](crate::ops::RekeyCounts::already_new)),
/// and the new run fences out any run still going. Items that cannot be read as `E` do not
/// stop the run; at its end the first of them is the command's error.
pub struct RekeyMigration<E> {
    name: String,
    description: String,
    step: RekeyStep,
    segments: u32,
    _entity: std::marker::PhantomData<fn() -> E>,
}

impl<E: Entity> RekeyMigration<E> {
    /// The copy step of the re-key of `E`, run as `migrate NAME`.
    pub fn new(name: impl Into<String>) -> RekeyMigration<E> {
        RekeyMigration {
            name: name.into(),
            description: Self::describe(RekeyStep::Copy),
            step: RekeyStep::Copy,
            segments: DEFAULT_REKEY_SEGMENTS,
            _entity: std::marker::PhantomData,
        }
    }

    fn describe(step: RekeyStep) -> String {
        let (pk, sk) = E::REKEY.map_or(("", None), |r| (r.pk, r.sk));
        let from = sk.map_or_else(|| format!("`{pk}`"), |sk| format!("`{pk}` / `{sk}`"));
        match step {
            RekeyStep::Copy => {
                format!("copies `{}` items from the key layout {from} to the new one", E::NAME)
            }
            RekeyStep::Cleanup => {
                format!("removes the `{}` items left under the key layout {from}", E::NAME)
            }
        }
    }

    /// The cleanup step instead of the copy.
    #[must_use]
    pub fn cleanup(mut self) -> RekeyMigration<E> {
        self.step = RekeyStep::Cleanup;
        self.description = Self::describe(RekeyStep::Cleanup);
        self
    }

    /// Scan segments (see [`Rekey::segments`](crate::ops::Rekey::segments)).
    #[must_use]
    pub fn segments(mut self, n: u32) -> RekeyMigration<E> {
        self.segments = n;
        self
    }
}

impl<E: Entity> Migration for RekeyMigration<E> {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    /// Listed and run by the tool's `rekey` command.
    fn kind(&self) -> MigrationKind {
        MigrationKind::Rekey
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
            let mut step = db.rekey::<E>().segments(self.segments);
            if self.step == RekeyStep::Cleanup {
                step = step.cleanup();
            }
            let report = step
                .on_progress(|p| progress(MigrationProgress { done: p.counts.scanned, total }))
                .await?;
            match report.failures.into_iter().next() {
                Some(first) => Err(first.error),
                None => Ok(()),
            }
        })
    }
}
