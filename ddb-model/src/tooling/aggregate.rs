//! [`RebuildAggregate`]: the [`Migration`] that rebuilds a stream-maintained aggregate or field
//! copy from a scan, for the model tool (`Cli::migration`).

use aws_sdk_dynamodb::Client;

use super::cli::{Migration, MigrationKind, MigrationProgress};
use crate::db::Db;
use crate::error::Error;
use crate::model::Entity;
use crate::ops::BoxFuture;
use crate::stream::aggregate::{Aggregate, FieldCopy};
use serde::Serialize;

/// Rebuilds an [`Aggregate`] or a [`FieldCopy`] on the table the tool names
/// ([`Aggregate::rebuild`]: contributions and totals set again from a scan, pause the
/// aggregate's processor while it runs; [`FieldCopy::rebuild`]: every source's value copied
/// to its targets again). Registered under the declaration's name; progress reports the items
/// written once the rebuild ends.
///
/// ```
/// use ddb_model::prelude::*;
/// use ddb_model::stream::aggregate::{Aggregate, FieldCopy};
/// use ddb_model::tooling::aggregate::RebuildAggregate;
/// use ddb_model::tooling::cli::Migration;
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[entity(pk = "ORDER#<id>", sk = "ORDER")]
/// # struct Order { id: String, customer: String, customer_name: String }
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[entity(pk = "CUSTOMER#<id>", sk = "PROFILE")]
/// # struct Customer { id: String, name: String }
///
/// let by_customer = Aggregate::new("by_customer", |o: &Order| Some(o.customer.clone())).count("orders");
/// let rebuild = RebuildAggregate::new(by_customer);
/// assert_eq!(rebuild.name(), "by_customer");
///
/// let names = FieldCopy::new(
///     "customer_names",
///     |c: &Customer| c.name.clone(),
///     Order::CUSTOMER_NAME,
///     |db, c: &Customer| Order::partition(db, &c.id),
///     |o: &Order| Some(Customer::key(&o.customer)),
/// );
/// assert_eq!(RebuildAggregate::copy(names).name(), "customer_names");
/// ```
pub struct RebuildAggregate {
    name: &'static str,
    description: String,
    rebuild: Rebuild,
}

/// Runs the rebuild on a table: the number of items written.
type Rebuild = Box<dyn Fn(Client, String) -> BoxFuture<'static, Result<u64, Error>> + Send + Sync>;

impl RebuildAggregate {
    /// The rebuild of `aggregate`, run as `rebuild <the aggregate's name>`.
    pub fn new<E: Entity + Send + Sync>(aggregate: Aggregate<E>) -> Self {
        let description =
            format!("rebuild the aggregate {} of {} from a scan", aggregate.name(), E::NAME);
        let name = aggregate.name();
        let rebuild: Rebuild = Box::new(move |client, table| {
            let aggregate = aggregate.clone();
            Box::pin(async move {
                let db = Db::<E::Table>::with_table_name(client, &table);
                let rebuilt = aggregate.rebuild(&db).await?;
                Ok((rebuilt.contributions_fixed + rebuilt.totals_fixed) as u64)
            })
        });
        RebuildAggregate { name, description, rebuild }
    }

    /// The rebuild of `copy`, run as `rebuild <the copy's name>`.
    pub fn copy<S, T, V>(copy: FieldCopy<S, T, V>) -> Self
    where
        S: Entity + Send + Sync,
        T: Entity<Table = S::Table> + Send + Sync,
        V: Serialize + 'static,
    {
        let description = format!(
            "copy {}'s value into {} again ({}), from a scan",
            S::NAME,
            T::NAME,
            copy.name()
        );
        let name = copy.name();
        let rebuild: Rebuild = Box::new(move |client, table| {
            let copy = copy.clone();
            Box::pin(async move {
                let db = Db::<S::Table>::with_table_name(client, &table);
                Ok(copy.rebuild(&db).await?.targets_written as u64)
            })
        });
        RebuildAggregate { name, description, rebuild }
    }
}

impl Migration for RebuildAggregate {
    fn name(&self) -> &str {
        self.name
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
            let written = (self.rebuild)(client, table.to_owned()).await?;
            progress(MigrationProgress { done: written, total: Some(written) });
            Ok(())
        })
    }
}
