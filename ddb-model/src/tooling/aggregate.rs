//! [`RebuildAggregate`]: the [`Migration`] that rebuilds a stream-maintained aggregate from a
//! scan, for the model tool (`Cli::migration`).

use aws_sdk_dynamodb::Client;

use super::cli::{Migration, MigrationKind, MigrationProgress};
use crate::db::Db;
use crate::error::Error;
use crate::model::Entity;
use crate::ops::BoxFuture;
use crate::stream::aggregate::Aggregate;

/// Rebuilds an [`Aggregate`] on the table the tool names
/// ([`Aggregate::rebuild`]: contributions and totals set again from a scan; pause the
/// aggregate's processor while it runs). Registered under the aggregate's name; progress
/// reports the contributions and totals written once the rebuild ends.
///
/// ```
/// use ddb_model::prelude::*;
/// use ddb_model::stream::aggregate::Aggregate;
/// use ddb_model::tooling::aggregate::RebuildAggregate;
/// use ddb_model::tooling::cli::Migration;
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[entity(pk = "ORDER#<id>", sk = "ORDER")]
/// # struct Order { id: String, customer: String }
///
/// let by_customer = Aggregate::new("by_customer", |o: &Order| Some(o.customer.clone())).count("orders");
/// let rebuild = RebuildAggregate::new(by_customer);
/// assert_eq!(rebuild.name(), "by_customer");
/// ```
pub struct RebuildAggregate<E> {
    aggregate: Aggregate<E>,
    description: String,
}

impl<E: Entity> RebuildAggregate<E> {
    /// The rebuild of `aggregate`, run as `migrate <the aggregate's name>`.
    pub fn new(aggregate: Aggregate<E>) -> Self {
        let description =
            format!("rebuild the aggregate {} of {} from a scan", aggregate.name(), E::NAME);
        RebuildAggregate { aggregate, description }
    }
}

impl<E: Entity + Send + Sync> Migration for RebuildAggregate<E> {
    fn name(&self) -> &str {
        self.aggregate.name()
    }

    fn description(&self) -> &str {
        &self.description
    }

    /// Listed and run by the tool's `rebuild` command.
    fn kind(&self) -> MigrationKind {
        MigrationKind::Rebuild
    }

    fn run<'a>(
        &'a self,
        client: Client,
        table: &'a str,
        progress: &'a mut (dyn FnMut(MigrationProgress) + Send),
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            let db = Db::<E::Table>::with_table_name(client, table);
            let rebuilt = self.aggregate.rebuild(&db).await?;
            let written = (rebuilt.contributions_fixed + rebuilt.totals_fixed) as u64;
            progress(MigrationProgress { done: written, total: Some(written) });
            Ok(())
        })
    }
}
